"""What a run measured (:class:`RunResult`, and :class:`RuntimeFailure` when it stopped early), and what a job
comes to: the result built from what the master and the guards said (:func:`job_result`), why a run stopped in
words (a dead master, a held start-up, a timeout, ``mpiexec``'s own report: :func:`stop_reason`; the workers that
died, stopped or never said goodbye: :func:`deaths_text`), and the start-ups that were started again.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from gclib.codes import conditioning
from gclib.jsonable import jsonable
from gclib.runtime.protocol import unpack_step_state
from gclib.runtime.resume import write_state
from gclib.runtime.signals import signal_name


class RuntimeFailure(RuntimeError):
    """A distributed run stopped before its last iteration; ``result`` holds the state saved so far, and
    ``results`` the runs of a series that finished before it (:func:`gclib.runtime.launcher.launch_series`)."""

    def __init__(self, message, result=None, results=()):
        super().__init__(message)
        self.result = result
        self.results = list(results)


@dataclass
class RunResult:
    """What a run measured.

    Attributes:
        records: one dict per finished iteration: ``iteration``, ``time`` (measured seconds), ``predicted``
            (the simulator's time for the same delays), ``messages`` (of this iteration received when it
            decoded), ``stale`` (late messages of earlier iterations drained during it), ``bcast``, ``wait``,
            ``decode``, ``step``, ``drain`` (seconds spent in each part on the critical path: ``decode`` runs from
            the arrival of the message that made the set decodable to the combined gradient; ``checks`` is the
            total time of the decodability checks, most of it overlapped with waiting), ``loss``, the model's test
            metrics under their names (``spec["metrics"]``: a ``Problem``'s are ``test_loss`` and ``auc``),
            ``grad_error`` (relative error of the decoded gradient against the full gradient), ``wall``
            (seconds since the first iteration started, metrics excluded), ``workers`` (whose messages decoded),
            ``amplification`` (the decode's error amplification,
            :func:`gclib.codes.conditioning.decoding_amplification`; ``None`` for an infinite one), ``dead``
            (workers known dead when the iteration ended) and ``silent`` (workers the master sent nothing to when the
            iteration ended: stopped by a signal, or owing it :data:`gclib.runtime.master.SILENT_AFTER` answers;
            sent to again once they answer).
        theta: ``(dim,)`` final parameters.
        status: ``"ok"``, ``"error"``, ``"interrupted"`` or ``"diverged"`` (the loss was not finite after an
            iteration: the master stopped there); ``error`` says why.
        predicted: ``(iterations,)`` predicted times of every planned iteration.
        dead_workers: workers whose process died, or that never said goodbye at the end (a stopped or frozen
            process).
        messages_sent: gradient messages the workers that said goodbye sent; ``messages_received``: gradient
            messages the master received (used or drained); equal when nothing was lost.
        abandoned: ``{worker: iterations it abandoned because the master decoded them or newer parameters
            arrived}``.
        drained: late messages drained in total (during the iterations, between them and at the stop).
        spec: :meth:`RunSpec.describe`, and ``metrics``: the names of the model's test metrics in the records.
        deaths: ``{worker: {"signal": 9, "name": "SIGKILL", "code": None, "pid": ..., "host": ...,
            "iteration": ...}}``: how each dead worker's process ended, as its guard reported it (``signal`` for
            a death by signal, ``code`` for an exit; ``iteration``: iterations finished when the launcher heard); a
            worker that never said goodbye has ``signal`` and ``code`` ``None``, ``stopped`` (``"SIGSTOP"``, ...)
            when its guard saw it stopped, and a ``cause`` in words.
        pids: ``{worker: process id}`` of the worker ranks (as they told the master at start-up).
        start: first iteration this job ran (greater than 0 for a resumed run; ``records`` holds every
            iteration from 0 all the same).
        step_state: the update's state after the last finished iteration (what a resume needs), packed by
            :func:`gclib.runtime.protocol.pack_step_state`.
        run_dir: the run directory (kept on failure, removed after a success in a temporary one).
        restarts: one ``{worker: what}`` per start-up that did not get through ``MPI_Init`` (the job was
            started again; nothing had run): the workers killed by a signal, or stopped (``stopped``), before every
            rank was through it; ``{}`` for a start-up past ``startup_timeout`` that no rank explained.
        hosts: ``{worker: host name}`` (as the workers told the master at start-up).
        bells: the workers that shared the master's bell (:mod:`gclib.runtime.wakeup`: those of its host), as
            they told it at start-up; the others were polled.
        tasks: the workers' task reports, ``[worker, iteration, [t_1, ..., t_n]]``: the finish times (seconds on
            the worker's clock, from receiving the iteration's parameters) of the ``n`` partial gradients it
            computed in that iteration before it finished them all, the master decoded it, or newer parameters
            arrived (``inf``, or ``None`` in JSON, for a task that never finishes); :meth:`task_durations` makes
            the table of them.
        network: what the master measured of the messages' cost after the last iteration
            (:func:`gclib.runtime.message_probe.probe`; ``None`` when the spec asked for none or the run stopped early).
    """

    records: list
    theta: np.ndarray
    status: str = "ok"
    error: str = ""
    predicted: Optional[np.ndarray] = None
    dead_workers: list = field(default_factory=list)
    messages_sent: int = 0
    messages_received: int = 0
    abandoned: dict = field(default_factory=dict)
    drained: int = 0
    spec: dict = field(default_factory=dict)
    returncode: int = 0
    seconds: float = math.nan
    deaths: dict = field(default_factory=dict)
    pids: dict = field(default_factory=dict)
    start: int = 0
    step_state: Optional[dict] = None
    run_dir: Optional[str] = None
    restarts: list = field(default_factory=list)
    hosts: dict = field(default_factory=dict)
    tasks: list = field(default_factory=list)
    bells: list = field(default_factory=list)
    network: Optional[dict] = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def task_durations(self) -> np.ndarray:
        """``(iterations, workers, load)`` seconds each partial gradient took, iterations of :attr:`records`:
        task ``j``'s finish time minus task ``j - 1``'s on the worker's clock (the first from the arrival of the
        parameters). ``nan``: not observed (the worker abandoned the iteration before that task, or skipped the
        iteration); ``inf``: never (an injected "never", or a dead worker from the iteration it died in, which
        is the injected kill's iteration or the one the launcher heard of the death in)."""
        code = self.spec.get("code") or {}
        K = int(code.get("workers") or 1 + max([t[0] for t in self.tasks], default=0))
        load = int(code.get("load") or max([len(t[2]) for t in self.tasks], default=1))
        n = len(self.records)
        out = np.full((n, K, load), np.nan)
        seen = np.zeros((n, K), dtype=bool)
        for w, it, times in self.tasks:
            if 0 <= it < n and 0 <= w < K:
                t = np.array([math.inf if x is None else x for x in times], dtype=float)
                d = np.diff(np.concatenate([[0.0], t]))
                d[np.isinf(t)] = math.inf  # (inf - inf: still never)
                out[it, w, :t.size] = d
                seen[it, w] = True
        kill = {int(w): int(it) for w, it in (self.spec.get("kill") or {}).items()}
        for w in self.dead_workers:
            died = [kill.get(w), (self.deaths.get(w) or {}).get("iteration")]
            died = min([d for d in died if d is not None], default=None)
            if died is None:  # no word of when: after its last report
                died = 1 + max([it for v, it, _ in self.tasks if v == w], default=-1)
            if 0 <= w < K:
                for it in range(max(died, 0), n):
                    if not seen[it, w]:
                        out[it, w] = math.inf
        return out

    def frame(self):
        """The per-iteration records as a ``pandas.DataFrame``."""
        import pandas as pd  # here: pandas would lengthen the start of every command that launches a run

        return pd.DataFrame(self.records)

    def summary(self) -> dict:
        """Totals and means over the finished iterations (JSON-ready): ``final_loss``, ``final_auc`` (``None`` for
        a model without one) and ``final_metrics`` (every test metric of the last iteration) among them."""
        r = self.records
        out = {"label": self.spec.get("label"), "status": self.status, "error": self.error,
               "iterations": len(r), "dead_workers": self.dead_workers, "messages_sent": self.messages_sent,
               "messages_received": self.messages_received,
               "abandoned": int(sum(self.abandoned.values())), "drained": self.drained}
        if r:
            t = np.array([x["time"] for x in r])
            p = np.array([x["predicted"] for x in r])
            out.update({"total_time": float(t.sum()), "total_predicted": float(p.sum()),
                        "mean_time": float(t.mean()), "mean_predicted": float(p.mean()),
                        "relative_error": float(t.mean() / p.mean() - 1) if p.mean() > 0 else math.nan,
                        "mean_overhead": float((t - p).mean()),
                        "overhead_fraction": float((t - p).mean() / t.mean()),
                        "mean_messages": float(np.mean([x["messages"] for x in r])),
                        "stale_messages": int(sum(x["stale"] for x in r))})
            if any("vectors" in x for x in r):  # the two-phase exchange: full-size vectors uploaded
                out["mean_vectors"] = float(np.mean([x.get("vectors", x["messages"]) for x in r]))
            for part in ("bcast", "decode", "step", "drain"):
                out[f"mean_{part}"] = float(np.mean([x[part] for x in r]))
            # what the four timed parts do not account for (the messages' way, the wake-ups); it can be below 0
            # when a part overlaps the workers' computing (decoding ahead while the master waits)
            out["mean_rest"] = out["mean_overhead"] - sum(out[f"mean_{k}"] for k in
                                                          ("bcast", "decode", "step", "drain"))
            last = r[-1]
            errors = [x["grad_error"] for x in r if x["grad_error"] is not None and not math.isnan(x["grad_error"])]
            out.update({"final_loss": last["loss"], "final_auc": last.get("auc"),  # (nan: a round decoded nothing)
                        "final_metrics": {k: last.get(k) for k in self.spec.get("metrics") or []},
                        "max_grad_error": float(max(errors)) if errors else math.nan})
            amp = np.array([math.inf if x.get("amplification") is None else x["amplification"] for x in r])
            limit = trust_limit()
            out.update({"max_amplification": float(amp.max()), "amplification_limit": limit,
                        "untrusted_iterations": [x["iteration"] for x, a in zip(r, amp) if not a <= limit]})
        out["deaths"] = self.deaths
        out["warnings"] = self.warnings()
        return jsonable(out)

    def warnings(self) -> list:
        """One line per thing the user should know although the run finished: decodes that could not be trusted
        (error amplification above :func:`gclib.codes.conditioning.amplification_threshold` for float64, the runtime's
        working precision; a missing amplification is an infinite one)."""
        limit = trust_limit()
        bad = [(x["iteration"], math.inf if x.get("amplification") is None else x["amplification"])
               for x in self.records]
        bad = [(i, a) for i, a in bad if not a <= limit]
        if not bad:
            return []
        its = [i for i, _ in bad]
        shown = ", ".join(map(str, its[:10])) + (", ..." if len(its) > 10 else "")
        return [f"{len(bad)} of {len(self.records)} decodes could not be trusted: their error amplification (up to "
                f"{max(a for _, a in bad):.3g}) exceeds {limit:.3g}, so the decoded gradient may be inaccurate in "
                f"float64 (iterations {shown})"]

    def to_dict(self) -> dict:
        return jsonable({"summary": self.summary(), "records": self.records, "theta": self.theta,
                          "predicted": self.predicted, "spec": self.spec, "returncode": self.returncode,
                          "seconds": self.seconds, "deaths": self.deaths, "pids": self.pids, "start": self.start,
                          "run_dir": self.run_dir, "restarts": self.restarts, "hosts": self.hosts,
                          "bells": self.bells, "tasks": self.tasks})

    def save(self, path, args=None) -> None:
        """Write the state file: the parameters, the log so far, the summary, and what ``--resume`` needs (the
        update's state, the command line's parameters ``args`` if any); see :mod:`gclib.runtime.resume`."""
        write_state(self, path, args)


def trust_limit() -> float:
    """Error amplification above which the runtime does not trust a decode: the decoder's own threshold for
    float64 (:func:`gclib.codes.conditioning.amplification_threshold`)."""
    return float(conditioning.amplification_threshold(np.float64))


def job_result(job, prior, prior_tasks=()) -> RunResult:
    """The result of ``job`` (a :class:`gclib.runtime.job.Job` that ran), after the records ``prior`` and task
    reports ``prior_tasks`` of the run it resumed."""
    ev, spec = job.events, job.spec
    end = ev["end"] or {}
    start = ev["start"] or {}
    # the update's state after the last iteration finished: this job's, else the one it resumed from
    step_state = ev["state"] if ev["state"] is not None else spec.state0
    theta = end.get("theta")
    if theta is None:  # the master ended without a word: the parameters of that state, or where the run began
        if step_state is not None:
            theta = unpack_step_state(step_state)["theta"]
        else:
            theta = np.zeros(spec.problem.dim) if spec.theta0 is None else spec.theta0
    status, error = stop_reason(job, spec.start + len(ev["records"]))
    deaths = {w: dict(info) for w, info in job.deaths.items()}
    dead = sorted(set(end.get("dead_workers", [])) | set(deaths))
    _silent_deaths(job, deaths, dead, {int(k): v for k, v in (end.get("silent") or {}).items()})
    res = RunResult(records=list(prior) + ev["records"], theta=np.asarray(theta, dtype=float), status=status,
                    error=error, predicted=None if start.get("predicted") is None else
                    np.array([math.inf if p is None else p for p in start["predicted"]]),
                    dead_workers=dead, messages_sent=end.get("messages_sent", 0),
                    messages_received=end.get("messages_received", 0),
                    abandoned={int(k): v for k, v in (end.get("abandoned") or {}).items()},
                    drained=end.get("stale", 0), spec=start.get("spec", spec.describe()),
                    returncode=job.proc.returncode if job.proc is not None else None, seconds=job.seconds,
                    deaths=deaths, pids={int(k): v for k, v in (start.get("pids") or {}).items()}, start=spec.start,
                    hosts={int(k): v for k, v in (start.get("hosts") or {}).items()},
                    bells=[int(w) for w in start.get("bells") or []],
                    tasks=[t for t in prior_tasks if t[1] < spec.start] + ev["tasks"],
                    step_state=step_state, network=(ev.get("network") or {}).get("measured"))
    if dead:
        res.error = (res.error + "; " if res.error else "") + deaths_text(deaths) + (
            "; the run treated them as stragglers that never answer" if status == "ok" else "")
    return res


def stop_reason(job, done: int) -> tuple:
    """``(status, error)`` of ``job`` after ``done`` iterations in all: the master's word (its ``end`` line), unless
    the launcher knows better (a stop signal, a rank's failed model, a dead master, a held start-up, the job
    timeout) or the master said nothing at all (:func:`no_result_text`)."""
    spec, end = job.spec, job.events["end"] or {}
    status, error = end.get("status", "error"), end.get("error", "")
    if job.interrupted is not None:
        return "interrupted", (f"interrupted by {signal_name(job.interrupted)} after {done} of {spec.iterations} "
                               f"iterations")
    if job.events.get("failed") is not None:  # a rank's model failed: the run failed, even if the others went on
        return "error", failure_text(job.events["failed"], done, spec.iterations)
    if job.killed == "master":
        d = job.master_death
        how = d["name"] or f"exit code {d['code']}"
        return "error", (f"the master (MPI rank 0, pid {d['pid']} on {d['host']}) died ({how}) after {done} of "
                         f"{spec.iterations} iterations")
    if job.killed == "startup":
        return "error", ("the run could not start: a worker died before every rank was through MPI_Init, where the "
                         "others wait for it")
    if job.killed == "startup-stopped":
        which = ", ".join(f"MPI rank {r} ({i['stopped']}, pid {i['pid']} on {i['host']})"
                          for r, (i, _) in sorted(job.stopped.items()))
        return "error", (f"the run could not start: {which} was stopped before every rank was through MPI_Init, "
                         f"where the others wait for it")
    if job.killed == "startup-timeout":
        return "error", (f"the run could not start: not every rank was through MPI_Init {job.startup_timeout:g} s "
                         f"after the job started (a rank that is frozen, or a host that does not answer, holds the "
                         f"others there; --startup-timeout sets the limit)")
    if job.killed == "timeout":
        return "error", (f"job killed after the job timeout of {job.job_timeout:g} s ({done} of {spec.iterations} "
                         f"iterations finished)")
    if not end:
        return "error", no_result_text(job, done)
    return status, error


def _silent_deaths(job, deaths: dict, dead: list, silent: dict) -> None:
    """Add to ``deaths`` the workers of ``dead`` whose guard reported no death: stopped by a signal (their guard
    said so), or never said goodbye (``silent``: why the master stopped sending to them)."""
    for w in dead:
        if w in deaths:
            continue
        stop = job.stopped.get(w + 1)
        if stop is not None:
            deaths[w] = {"signal": None, "name": None, "code": None, **stop[0],
                         "cause": f"stopped ({stop[0]['stopped']}) and never said goodbye"}
        else:
            deaths[w] = {"signal": None, "name": None, "code": None,
                         "cause": "never said goodbye, and its guard reported no death"
                                  + (f" (silent: {silent[w]})" if w in silent else "")}


def failure_text(ev: dict, done: int, iterations: int) -> str:
    """Why a run stopped when a rank's model failed (its report, :func:`gclib.runtime.protocol.report_failure`),
    naming the rank and the iteration."""
    who = "the master" if ev.get("worker") is None else f"worker {ev['worker']}"
    if ev.get("stage") == "build":
        return f"{who} could not build the model: {ev.get('error')}"
    it = ev.get("iteration")
    when = (f"in iteration {it}" if it is not None else "before its first iteration (its warm-up gradient)")
    after = (f"{done} of {iterations} iterations finished; the run stopped there" if done < iterations else
             f"the others finished the run's {iterations} iterations without it")
    return f"{who} failed {when}: {ev.get('error')} ({after})"


def no_result_text(job, done) -> str:
    """Why a job ended without the master's last word: what ``mpiexec`` reported, how it ended, the end of the
    ranks' stderr."""
    text = "".join(job.other)
    said = re.search(r"EXIT STRING:\s*(.+?)\s*$", text, re.M) or re.search(r"EXIT CODE:\s*(\d+)", text)
    log = (job.run_dir / "stderr.txt").read_text(errors="replace")[-4000:]
    tail = " ".join(log[-600:].split())
    rc = job.proc.returncode
    lost = re.search(r"control_cb .*assert \(!closed\) failed", log)  # Hydra's words for a lost proxy
    why = (f"mpiexec reports '{said.group(1)}' (a process it started died: a rank's guard)" if said else
           f"mpiexec was killed by {signal_name(-rc)}" if rc is not None and rc < 0 else
           f"mpiexec exited with code {rc}" + (" after it lost the connection to the proxy of a host "
                                               "(hydra_pmi_proxy ended, or its host is gone)" if lost else ""))
    return (f"the job ended without a result after {done} of {job.spec.iterations} iterations: {why}"
            + (f"; stderr ends: {tail[-300:]}" if tail else ""))


def deaths_text(deaths: dict) -> str:
    """``"worker processes died: 2 (SIGKILL, MPI rank 3, pid 1234)"``, the worker processes stopped by a signal
    (``"worker processes stopped: 1 (SIGSTOP, MPI rank 2, pid 1233)"``), and the workers that never said goodbye
    although their guard reported nothing (a process frozen without a signal, or unreachable)."""
    died, stopped, silent = [], [], []
    for w in sorted(deaths):
        d = deaths[w]
        how = d.get("name") or (f"exit code {d['code']}" if d.get("code") is not None else None)
        pid = f", pid {d['pid']})" if d.get("pid") else ")"
        if how is not None:
            died.append(f"{w} ({how}, MPI rank {w + 1}{pid}")
        elif d.get("stopped"):
            stopped.append(f"{w} ({d['stopped']}, MPI rank {w + 1}{pid}")
        else:
            silent.append(f"{w} (MPI rank {w + 1})")
    parts = ([f"worker processes died: {', '.join(died)}"] if died else []) + (
        [f"worker processes stopped: {', '.join(stopped)}"] if stopped else []) + (
        [f"workers never said goodbye (alive but frozen, or unreachable): {', '.join(silent)}"] if silent else [])
    return "; ".join(parts)


def note_restarts(res: RunResult, restarts: list) -> None:
    """Say in the result's error which start-ups were killed and that the job was started again."""
    res.restarts = restarts
    note = "; ".join(("before MPI_Init, " + deaths_text(r)) if r else
                     "a start-up did not get through MPI_Init in time (no rank of it said why)" for r in restarts)
    res.error = note + f"; the job was started again ({len(restarts)}x)" + ("; " + res.error if res.error else "")
