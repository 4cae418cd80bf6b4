"""The ranking of the advice: every candidate design for ``K`` workers (:mod:`gclib.advise.designs`), raced when
there are many (:mod:`gclib.advise.race`), simulated under every model (:mod:`gclib.advise.simulation`) and ranked
under the ``primary`` model. The result, :class:`Advice`, holds:

* ``ranked``: one row per design (:data:`COLUMNS`): expected iteration time with its 95% interval, the speed-up
  over uncoded with its paired 95% interval, messages and gradient-length units received per iteration, the
  computation load, the numerical-stability margin (digits of float64 left after the worst decode over sampled
  straggler patterns, for the first :data:`~gclib.advise.designs.STABILITY_ROWS` runnable rows), how robust the
  design is across the models, whether it fits the message ``budget``, and ``command``: the ``gclib run`` options
  that run it;
* ``table``: every design under every model (the numbers behind the robustness columns and the figure);
* ``best``: the first row that fits the budget and can run over MPI (``None`` when none does).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd

from gclib import checks
from gclib.advise import report
from gclib.advise.designs import (FAMILIES, MAX_WORKERS, PRECISION, RACE_ALPHA, SCREEN_ABOVE, SCREEN_KEEP,
                                  SCREEN_ROUNDS, SCREEN_TRIALS, STABILITY_BYTES, STABILITY_ROWS, TRIALS, candidates,
                                  check_workload, code_bytes, default_max_load, stability_patterns)
from gclib.advise.race import screen as race_screen
from gclib.advise.simulation import simulate, stability_margin
from gclib.jsonable import jsonable
from gclib.progress import bar as _bar
from gclib.simulator import Communication
from gclib.stragglers import ComputeModel

#: Rows :meth:`Advice.text` shows.
TEXT_ROWS = 8
#: Columns of :attr:`Advice.ranked`.
COLUMNS = ["rank", "label", "scheme", "family", "load", "mean_time", "ci95_time", "speedup", "speedup_lo",
           "speedup_hi", "messages", "gradient_units", "computations", "failed", "digits", "worst_ratio",
           "best_under", "feasible", "runnable", "command"]


def network_text(net: dict | None) -> str:
    """What the advice charges for communication, in words (:meth:`gclib.simulator.Communication.describe`)."""
    if not net:
        return "communication not charged (messages cost nothing)"
    bw = "no bandwidth limit" if math.isinf(net["bandwidth"]) else f"{net['bandwidth']:.4g} gradients per unit"
    where = "the master takes messages in one at a time" if net.get("queue") else "independent delays"
    return (f"communication charged: latency {net['latency']:.3g}, {net.get('overhead', 0.0):.3g} per message and "
            f"{bw} ({where})")


@dataclass
class Advice:
    """The outcome of :func:`advise`.

    Attributes:
        ranked: one row per design (:data:`COLUMNS`), best first under ``primary``: designs within the budget
            before the others, then by expected time (a design that fails to decode in some trial last), fewer
            messages, lower load.
        table: one row per design and model: ``model, label, family, load, mean_time, ci95_time, speedup,
            speedup_lo, speedup_hi, messages, gradient_units, computations, failed, ratio`` (to the model's best)
            and ``tied`` (best or statistically tied with it).
        best: the recommended row (a dict), ``None`` when no runnable design fits the budget.
        settings: ``K, max_load, budget, trials`` (the most per model), ``trials_by_model``, ``precision`` (of
            the default trials; ``None`` when ``trials`` was given), ``seed, primary, models`` (their descriptions),
            ``candidates``, ``screened`` (designs given the full trials), ``screen`` (the race's rounds, level and
            keep; ``None`` without a race), ``network`` (:meth:`gclib.simulator.Communication.describe`, ``None``:
            messages cost nothing), ``stability_rows``, ``stability_patterns``.
    """

    ranked: pd.DataFrame
    table: pd.DataFrame
    best: dict | None
    settings: dict = field(default_factory=dict)

    def sentence(self) -> str:
        """One sentence naming the recommendation and its saving, with the model and the intervals."""
        s = self.settings
        if self.best is None:
            why = f" within a budget of {s['budget']:g} messages per iteration" if s.get("budget") else ""
            return f"No design that runs over MPI completes{why} under '{s['primary']}'."
        b = self.best
        sp = b["speedup"]
        if math.isfinite(sp):
            save = (f"{sp:.3g}x the speed of uncoded (95% CI {b['speedup_lo']:.3g}-{b['speedup_hi']:.3g}), "
                    f"saving {100 * (1 - 1 / sp):.1f}% of the iteration time")
        else:
            save = "where uncoded never completes (a worker never answers)"
        return (f"Recommended: {b['label']} (gclib run {b['command']}): expected iteration time "
                f"{b['mean_time']:.4g} +/- {b['ci95_time']:.2g} under '{s['primary']}', {save}; "
                f"{b['messages']:.3g} messages and {b['gradient_units']:.3g} gradients received per iteration, "
                f"best or tied under {b['best_under']} of {len(s['models'])} models.")

    def text(self, rows: int = TEXT_ROWS) -> str:
        """A short table of the first ``rows`` designs (and uncoded's row, when it ranks lower) and the
        recommendation, for a person."""
        s = self.settings
        raced = " (the others dropped by a screening race)" if s.get("screen") else ""
        head = (f"gclib advise: K = {s['K']} workers, load <= {s['max_load']}, {s['screened']} of {s['candidates']} "
                f"designs simulated{raced} with {s['trials']} trials under each of {len(s['models'])} models; ranked "
                f"under '{s['primary']}' (times in the models' unit: seconds for a measured trace)")
        if s.get("budget") is not None:
            head += f"; budget {s['budget']:g} messages per iteration"
        head += "; " + network_text(s.get("network"))
        lines = [head, "", *report.table_text(self.ranked, len(s["models"]), rows)]
        lines += ["", f"digits: float64 digits left after the worst decode over {s['stability_patterns']} sampled "
                      f"iterations (first {s['stability_rows']} runnable rows); worst: largest ratio of its time to "
                      f"the best design's over the models; best: models under which it is best or tied.",
                  self.sentence()]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready: ``settings``, ``ranked`` (rows), ``best``, ``recommendation`` (:meth:`sentence`),
        ``warnings`` (:meth:`warnings`) and ``models`` (every design under every model)."""
        return jsonable({"settings": self.settings, "best": self.best, "recommendation": self.sentence(),
                         "warnings": self.warnings(),
                         "ranked": self.ranked.to_dict(orient="records"),
                         "models": self.table.to_dict(orient="records")})

    def to_json(self) -> str:
        """:meth:`to_dict` as one line of JSON."""
        return json.dumps(self.to_dict())

    def plot(self, path=None):
        """The front of expected time against communication per model, uncoded marked and the recommendation
        circled (:func:`gclib.advise.report.plot`); writes ``path`` (PNG) when given, and returns the figure."""
        return report.plot(self, path)

    def warnings(self) -> list:
        """What the ranking calls for a warning about: messages that cost nothing deciding it
        (:func:`gclib.advise.report.free_messages_text`)."""
        free = report.free_messages_text(self)
        return [] if free is None else [free]


def advise(models: Mapping[str, ComputeModel], K: int, *, max_load: int | None = None, budget: float | None = None,
           trials: int | None = None, seed=0, primary: str | None = None, progress: bool = False,
           max_orders: int = 2, network=None, screen: bool | None = None) -> Advice:
    """Rank every candidate design (:func:`~gclib.advise.designs.candidates`) for ``K`` workers under compute-time
    ``models``.

    With many candidates (more than :data:`~gclib.advise.designs.SCREEN_ABOVE`) the screening race of
    :mod:`gclib.advise.race` comes first; the designs it keeps are simulated in full
    (:mod:`gclib.advise.simulation`). ``screen=False`` simulates every candidate in full (the exhaustive search).

    Args:
        models: ``{name: ComputeModel}`` (e.g. ``gclib.fit.fit(trace).models()``), at least one.
        K: workers. max_load: largest computation load (default :func:`~gclib.advise.designs.default_max_load`).
        budget: largest mean number of messages received per iteration (under ``primary``); ``None``: no limit.
        trials: simulated iterations per model (and per design, on common random numbers); ``None``: until every
            kept design's mean time is known within :data:`~gclib.advise.designs.PRECISION` (at least
            :data:`~gclib.advise.designs.MIN_TRIALS`, at most :data:`~gclib.advise.designs.TRIALS`).
        seed: seed of the sampled times (the same for every model). primary: the model that ranks (default
            ``"replay"`` when present, else the first). progress: a progress bar on stderr, with the time left.
        max_orders: longest order vector of the uncorrelated GC-MMC and hybrid designs.
        network: a :class:`gclib.simulator.Communication` (e.g. :func:`gclib.message_cost.read` of a measured network,
            in the models' time unit): every message is charged; ``None``: messages cost nothing.
        screen: race the candidates before the full simulation; ``None``: when there are more than
            :data:`~gclib.advise.designs.SCREEN_ABOVE`; ``False``: simulate every candidate with ``trials`` (the
            exhaustive search).
    Returns:
        :class:`Advice`.
    """
    K, R, budget, trials, seed, network, primary = _checked(models, K, max_load, budget, trials, seed, network,
                                                            primary)
    most = TRIALS if trials is None else trials
    designs = candidates(K, R, max_orders=max_orders, network=network)
    n_all = len(designs)
    race = n_all > SCREEN_ABOVE if screen is None else bool(screen)
    # before the work: a request of hours, or beyond the memory, is refused
    check_workload(K, R, trials, len(models), queue=network is not None and network.queue, screen=race,
                   designs=designs)
    M = len(models)
    with _bar(_guess(n_all, M, race, most), "advise", progress, unit=" design-trials", unit_scale=True) as b:
        if race:
            keep = race_screen(designs, models, K, R, seed + 1, network, b)
            designs = [designs[i] for i in keep]
            b.total = b.n + M * len(designs) * most  # what is left is known now (at most)
            b.refresh()
        stats, used = simulate(designs, models, K, trials, seed, network, b)
    ranked = _ranked(stats, designs, primary, budget)
    patterns = stability_patterns(K)
    _stability(ranked, designs, models[primary], patterns, seed)
    ranked = ranked[COLUMNS]
    settings = {"K": K, "max_load": R, "budget": budget, "trials": max(used.values()), "trials_by_model": used,
                "precision": PRECISION if trials is None else None, "seed": seed, "primary": primary,
                "models": {n: m.describe() for n, m in models.items()}, "candidates": n_all,
                "screened": len(designs), "screen": {"rounds": list(SCREEN_ROUNDS), "alpha": RACE_ALPHA,
                                                     "keep": SCREEN_KEEP} if race else None,
                "network": None if network is None else network.describe(),
                "stability_rows": STABILITY_ROWS, "stability_patterns": patterns}
    return Advice(ranked, _table(stats, designs), _best(ranked), settings)


def _checked(models, K, max_load, budget, trials, seed, network, primary) -> tuple:
    """The arguments of :func:`advise`, checked: ``(K, R, budget, trials, seed, network, primary)`` (``R`` the
    largest load; ``network`` ``None`` when messages cost nothing)."""
    if not isinstance(models, Mapping) or not models:
        raise ValueError(f"models must be a non-empty mapping of names to compute-time models, got {models!r}")
    for name, m in models.items():
        if not isinstance(m, ComputeModel):
            raise checks.ParameterTypeError(f"models[{name!r}] must be a gclib.stragglers.ComputeModel, got "
                                            f"{type(m).__name__}")
    K = checks.integer("K", K, low=2, high=MAX_WORKERS, why=" (advise lists every candidate design for K workers)")
    R = default_max_load(K) if max_load is None else checks.integer("max_load", max_load, low=1, high=K)
    if budget is not None:
        budget = checks.real("budget", budget, above=0)
    if trials is not None:
        trials = checks.integer("trials", trials, low=2)
    seed = checks.integer("seed", seed, low=0)
    if network is not None and not isinstance(network, Communication):
        raise checks.ParameterTypeError(f"network must be a gclib.simulator.Communication or None, got "
                                        f"{type(network).__name__}")
    if network is not None and network.free:
        network = None
    if primary is None:
        primary = "replay" if "replay" in models else next(iter(models))
    elif primary not in models:
        raise ValueError(f"primary must be one of the models {list(models)}, got {primary!r}")
    return K, R, budget, trials, seed, network, primary


def _guess(n_all: int, M: int, race: bool, most: int) -> int:
    """The design-trials :func:`advise` expects to simulate, for its progress bar, before the race."""
    return M * ((n_all * SCREEN_ROUNDS[0] + min(n_all, 4 * SCREEN_KEEP) * (SCREEN_TRIALS - SCREEN_ROUNDS[0]))
                if race else 0) + M * min(n_all, 2 * SCREEN_KEEP if race else n_all) * most


def _table(stats: dict, designs: list) -> pd.DataFrame:
    """Every design under every model (:attr:`Advice.table`)."""
    frames = []
    for name, df in stats.items():
        frames.append(df.assign(model=name, family=[d.family for d in designs], load=[d.load for d in designs]))
    return pd.concat(frames, ignore_index=True)[["model", "label", "family", "load", "mean_time", "ci95_time",
                                                 "speedup", "speedup_lo", "speedup_hi", "messages",
                                                 "gradient_units", "computations", "failed", "ratio", "tied"]]


def _ranked(stats: dict, designs: list, primary: str, budget) -> pd.DataFrame:
    """The designs under ``primary`` with the robustness columns, ranked: those within the budget first, then by
    expected time, messages, load and the order of :data:`~gclib.advise.designs.FAMILIES`; ``digits`` not known
    yet."""
    p = stats[primary].copy()
    p["family"] = [d.family for d in designs]
    p["scheme"] = [d.scheme or "" for d in designs]
    p["load"] = [d.load for d in designs]
    p["command"] = [d.command for d in designs]
    p["runnable"] = [d.scheme is not None for d in designs]
    p["worst_ratio"] = np.max(np.vstack([df["ratio"].to_numpy() for df in stats.values()]), axis=0)
    p["best_under"] = np.sum(np.vstack([df["tied"].to_numpy() for df in stats.values()]), axis=0)
    p["feasible"] = True if budget is None else (p["messages"] <= budget) & np.isfinite(p["mean_time"])
    p["_family"] = [FAMILIES.index(d.family) for d in designs]
    p["_infeasible"] = ~p["feasible"].astype(bool)
    p = p.sort_values(["_infeasible", "mean_time", "messages", "load", "_family"], kind="stable")
    p = p.reset_index(drop=True)
    p["rank"] = np.arange(1, len(p) + 1)
    p["digits"] = math.nan
    return p


def _stability(p: pd.DataFrame, designs: list, model: ComputeModel, patterns: int, seed: int) -> None:
    """Fill ``digits`` (:func:`~gclib.advise.simulation.stability_margin` under ``model``) of the first
    :data:`~gclib.advise.designs.STABILITY_ROWS` runnable rows of ``p`` whose time is finite, in place."""
    by_label = {d.label: d for d in designs}
    done = 0
    for i in p.index:
        if done >= STABILITY_ROWS:
            break
        d = by_label[p.at[i, "label"]]
        if d.scheme is None or not math.isfinite(p.at[i, "mean_time"]):
            continue
        if code_bytes(d) <= STABILITY_BYTES:  # else the code's matrix is too large to build: digits unknown
            p.at[i, "digits"] = stability_margin(d.build(), model, patterns, seed)["digits"]
        done += 1


def _best(ranked: pd.DataFrame) -> dict | None:
    """The recommended row: the first within the budget that runs and completes (``None`` when none does)."""
    ok = ranked[ranked["feasible"].astype(bool) & ranked["runnable"] & np.isfinite(ranked["mean_time"])]
    best = None if ok.empty else jsonable(ok.iloc[0].to_dict())
    if best is not None:  # keep the numbers finite-typed for the sentence
        best = {k: (math.nan if v is None and k in ("digits", "speedup_lo", "speedup_hi", "ci95_time") else v)
                for k, v in best.items()}
        best["speedup"] = float(ok.iloc[0]["speedup"])
    return best
