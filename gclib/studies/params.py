"""Checking a notebook's parameters before anything runs.

A notebook's ``parameters`` cell holds the values of the ``full`` profile. Setting ``profile = "quick"`` there
(by hand, in JupyterLab) makes :func:`notebook` take the values of ``notebooks/profiles.toml``'s quick table and
send the figures to ``build/figures/quick`` instead of the committed ``figures/``; ``papermill -p name value`` (and
``gclib reproduce``) override any of them. A wrong value should fail at once, in the first code cell, with a message
that names the parameter, the value and what is allowed, not deep inside a simulation. The first code cell of every
notebook therefore calls :func:`notebook` on the notebook's globals::

    from gclib.studies.params import notebook
    notebook("01_gradient_coding", globals())

which checks every parameter of that notebook with its function in :data:`NOTEBOOKS`. Those functions use the
library's own checks (:mod:`gclib.checks`, the ones behind every entry point and option of the command line)
through :class:`Parameters`, which reads each value from the namespace by name::

    p = Parameters(globals())
    n = p.integer("n", low=2)                       # gclib.checks.integer("parameter n", n, low=2)
    p.integer("s", low=0, high=n - 1)               # a bound that depends on n, after n is checked
    p.real("mu", above=0)
    p.integers("cond_n", low=2)                     # a list of integers, each >= 2
    p.choices("models", ["exp", "pareto"])          # a list, every item one of these

Every error is a ``ValueError`` (a value of the wrong type a :class:`gclib.checks.ParameterTypeError`, which is one
too), e.g. ``parameter trials must be a positive integer, got 100000.0``.
"""
from __future__ import annotations

import ast
import json
from math import factorial
from pathlib import Path
from typing import Any, Mapping, MutableMapping

from gclib import checks
from gclib.learning.problems import DATASETS
from gclib.reproduce import FIGURES, PROFILES, load_profiles
from gclib.reproduce import NOTEBOOKS as NOTEBOOK_FOLDER
from gclib.runtime.namespace_hosts import rate_bits
from gclib.schemes import SCHEMES
from gclib.studies.mpi_runs.study import MODELS, build
from gclib.studies.reed_solomon.study import divisor_stragglers
from gclib.studies.your_model.perceptron import FRAMEWORKS
from gclib.timings import shipped

__all__ = ["Parameters", "apply_profile", "notebook", "NOTEBOOKS"]


class Parameters:
    """The parameters of a notebook (its globals, or any mapping), each checked by name with :mod:`gclib.checks`.

    Every method takes the parameter's name and the keywords of the check it stands for, reads the value (a name
    that is not defined is refused) and returns what the check returns; the check's messages name the parameter
    as ``parameter NAME`` (an item of a list as ``parameter NAME[i]``).
    """

    def __init__(self, namespace: Mapping[str, Any]):
        self.namespace = namespace

    def value(self, name: str):
        """The value of ``name``; a ``ValueError`` when the parameters cell does not set it."""
        if name not in self.namespace:
            raise ValueError(f"parameter {name} is not defined (the parameters cell must set it)")
        return self.namespace[name]

    def integer(self, name: str, **kw) -> int:
        """:func:`gclib.checks.integer` (``low``, ``high``)."""
        return checks.integer(f"parameter {name}", self.value(name), **kw)

    def real(self, name: str, **kw) -> float:
        """:func:`gclib.checks.real` (``low``, ``high``, ``above``, ``below``)."""
        return checks.real(f"parameter {name}", self.value(name), **kw)

    def choice(self, name: str, choices):
        """:func:`gclib.checks.choice`."""
        return checks.choice(f"parameter {name}", self.value(name), choices)

    def text(self, name: str, **kw) -> str:
        """:func:`gclib.checks.text` (``choices``)."""
        return checks.text(f"parameter {name}", self.value(name), **kw)

    def integers(self, name: str, *, min_len: int = 1, max_len: int | None = None, distinct: bool = False,
                 **kw) -> tuple:
        """A list of integers: :func:`gclib.checks.items` of :func:`gclib.checks.integer`."""
        return checks.items(f"parameter {name}", self.value(name), checks.integer, min_len=min_len, max_len=max_len,
                            distinct=distinct, **kw)

    def reals(self, name: str, *, min_len: int = 1, **kw) -> tuple:
        """A list of numbers: :func:`gclib.checks.items` of :func:`gclib.checks.real`."""
        return checks.items(f"parameter {name}", self.value(name), checks.real, min_len=min_len, **kw)

    def choices(self, name: str, choices, *, min_len: int = 1, distinct: bool = False) -> tuple:
        """A list whose every item is one of ``choices``: :func:`gclib.checks.items` of :func:`gclib.checks.choice`."""
        return checks.items(f"parameter {name}", self.value(name), checks.choice, min_len=min_len, distinct=distinct,
                            choices=choices)


# ------------------------------------------------------------------------------------------------------------
# What each notebook accepts. The first code cell of notebook NN_name is ``notebook("NN_name", globals())``.
# Each function checks every parameter of its notebook's parameters cell (a test replaces each one by a bad value
# and expects a ValueError naming it), in the order of the cell, cross-parameter rules after the values they use.

def _model_parameters(p: Parameters) -> None:
    """The compute-time models' parameters that several notebooks share: the shifted exponential's ``mu`` and
    ``alpha``, the Pareto's ``pareto_scale`` and ``pareto_shape``."""
    p.real("mu", above=0)
    p.real("alpha", low=0)
    p.real("pareto_scale", above=0)
    p.real("pareto_shape", above=0)


def _gradient_coding(p: Parameters):
    p.integer("seed", low=0)
    n_small = p.integer("n_small", low=2, high=12)
    p.integer("s_small", low=0, high=n_small - 1)
    p.integer("n", low=2)
    p.integer("trials", low=10)
    _model_parameters(p)
    p.integers("cond_n", low=2)
    p.integer("cond_seeds", low=1)
    p.integer("cond_patterns", low=1)


def _reed_solomon(p: Parameters):
    p.integer("seed", low=0)
    small_n = p.integer("small_n", low=1)
    p.integer("small_s", low=0, high=small_n - 1)
    ns = p.integers("ns", low=2)
    fracs = p.reals("s_fracs", above=0, below=1)
    if not any(max(1, int(round(f * n))) < n for n in ns for f in fracs):  # pairs with s >= n are skipped
        raise ValueError(f"parameters ns and s_fracs leave no code to study: s = max(1, round(frac * n)) >= n for "
                         f"every pair, got ns = {list(ns)!r}, s_fracs = {list(fracs)!r}")
    p.integer("max_patterns", low=1)
    p.integer("trials", low=1)


def _communication_efficient(p: Parameters):
    p.integer("seed", low=0)
    verify_n = p.integer("verify_n", low=1)
    verify_s = p.integer("verify_s", low=0, high=verify_n - 1)
    p.integer("verify_m", low=1, high=verify_n - verify_s)  # d = s + m <= n
    n = p.integer("n", low=2)
    s = p.integer("s", low=0, high=n - 2)
    ms = p.integers("ms", low=1)
    if not any(n % (s + m) == 0 for m in ms):  # Kadhe needs (s + m) | n; values of m where it does not are skipped
        raise ValueError(f"parameter ms must hold at least one m with (s + m) dividing n = {n} (s = {s}), "
                         f"got {p.value('ms')!r}")
    p.integer("trials", low=1)
    p.real("mu", above=0)
    p.real("alpha", low=0)
    p.real("latency", low=0)
    p.real("bandwidth", above=0)
    m = p.integer("stab_m", low=1)
    for i, n_ in enumerate(p.integers("stab_ns", low=m + 1)):
        if not divisor_stragglers(n_, m, 2):  # the study needs an s with 1 <= s <= n/2 and (s + m) | n
            raise ValueError(f"parameter stab_ns[{i}] must have a divisor s + stab_m with 1 <= s <= n/2 "
                             f"(stab_m = {m}), got {n_!r}")
    p.integer("max_patterns", low=1)


def _gc_mmc(p: Parameters):
    p.integer("seed", low=0)
    p.integer("trials", low=1)
    K = p.integer("K", low=1)
    r = p.integer("r", low=min(2, K), high=K)  # LCC needs 2 ceil(K / r) - 1 <= K: r >= 2 once K >= 2
    p.real("mu", above=0)
    p.real("alpha", low=0)
    p.integer("clusters", low=1, high=K // r)  # every cluster holds at least r workers
    p.integer("order", low=1, high=r)
    p.integers("orders", low=1, high=r, distinct=True)  # a repeated order would send the same message twice
    p.integer("sweep_trials", low=1)
    p.integer("exact_trials", low=1)


def _mmc_design(p: Parameters):
    p.integer("seed", low=0)
    K = p.integer("K", low=1)
    r = p.integer("r", low=1, high=K)
    p.integer("trials", low=1)
    p.integer("max_orders", low=1, high=r)  # an order vector holds distinct orders <= r
    p.reals("budgets", above=0)
    _model_parameters(p)
    p.integer("exact_trials", low=1)
    checks.items("parameter exact_designs", p.value("exact_designs"), _exact_design, min_len=0, K=K, r=r)


def _exact_design(name: str, value, *, K: int, r: int):
    """One of notebook 05's exact designs: ``[orders, clusters]``, distinct orders in ``[1, r]`` and clusters of at
    least ``r`` workers each."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise checks.ParameterTypeError(f"{name} must be a pair [orders, clusters], got {value!r}")
    checks.items(f"{name}[0]", value[0], checks.integer, low=1, high=r, distinct=True)
    checks.integer(f"{name}[1]", value[1], low=1, high=K // r)
    return value


def _lazy_aggregation(p: Parameters):
    p.integer("seed", low=0)
    workers = p.integer("workers", low=1)
    p.choice("groups", [g for g in range(1, workers + 1) if workers % g == 0])
    p.integer("dim", low=9)  # the LAG check has 9 workers, each one column of a dim x dim basis
    p.real("target", above=0)
    # every model has mean 1, which a Pareto tail has only for a shape above 1
    shapes = p.reals("shapes", above=1)
    p.choice("fig_shape", shapes)  # Fig. 2's analogue is one of the shapes
    p.real("shift", low=0, below=1)
    p.integer("seeds", low=1)
    p.integer("max_iter", low=1)
    p.real("lag_target", above=0)
    p.text("warmup", choices=["silent", "upload"])
    if isinstance(p.value("lagc_units"), str):
        p.text("lagc_units", choices=["decoding-mean", "decoding-max", "count"])
    else:
        p.real("lagc_units", above=0)
    p.choices("family_kinds", ["linreg", "logistic"])
    p.choices("family_designs", ["gaussian", "correlated"])
    p.reals("family_conds", low=1)
    p.integers("family_data_seeds", low=0)
    p.integer("family_seeds", low=1)
    p.real("family_target", above=0, below=1)


def _mpi_runs(p: Parameters):
    p.integer("seed", low=0)
    workers = p.integer("workers", low=1)
    stragglers = p.integer("stragglers", low=0, high=workers - 1)
    p.integer("iterations", low=1)
    p.real("time_scale", above=0)
    p.integer("dim", low=1)
    datasets = p.choices("datasets", sorted(DATASETS))
    p.integer("samples", low=workers if "tandon-logistic" in datasets else 1)  # a part each
    p.choices("models", sorted(MODELS))
    names = p.choices("schemes", sorted({"uc-mmc", *SCHEMES}))
    seed = p.value("seed")
    for i, name in enumerate(names):  # each must build from (workers, stragglers, seed): FRC needs (s + 1) | n
        try:
            build(name, workers, stragglers, seed)
        except ValueError as e:
            raise ValueError(f"parameter schemes[{i}] = {name!r} cannot run with workers = {workers} and "
                             f"stragglers = {stragglers}: {e}") from None


def _scale(p: Parameters):
    p.integer("seed", low=0)
    Ks = p.integers("Ks", min_len=2, low=2, distinct=True)  # each K is one point of the curves
    p.integer("trials", low=2)  # a confidence interval needs two trials
    p.real("load_fraction", above=0, high=1)
    load = p.integer("load", low=1)
    c = p.integer("cluster_size", low=load)  # a worker holds load parts of its cluster
    for i, K in enumerate(Ks):  # GC-MMC runs in K / cluster_size clusters
        if K % c:
            raise ValueError(f"parameter Ks[{i}] must be a multiple of cluster_size = {c}, got {K!r}")
    p.real("order_fraction", above=0, high=1)
    p.integer("max_messages", low=1)
    _model_parameters(p)


def _advise(p: Parameters):
    p.integer("seed", low=0)
    p.integer("fit_workers", low=2)
    p.integer("fit_iterations", low=1)
    p.integer("fit_tasks", low=1)
    p.integer("repeats", low=2)  # a coverage needs more than one repetition
    p.integer("bootstrap", low=20)  # the intervals are bootstrap quantiles
    p.integer("processes", low=1)
    for name in ("mu", "rate", "pareto_scale", "time_scale"):
        p.real(name, above=0)
    p.real("alpha", low=0)
    p.real("pareto_shape", above=1)  # a finite mean task time to recover
    workers = p.integer("workers", low=2)
    p.integer("tasks", low=1)
    p.integer("profile_iterations", low=2)
    p.integer("run_iterations", low=2)  # an interval needs two iterations
    p.integer("max_load", low=1, high=workers)
    p.integer("trials", low=2)
    p.integer("net_dim", low=1)
    p.integer("net_tasks", low=1)
    p.real("net_time_scale", above=0)
    p.integer("net_profile_iterations", low=2)
    p.integer("net_run_iterations", low=2)  # an interval needs two iterations
    if p.value("net_rate") is not None:
        try:
            rate_bits(p.text("net_rate"))
        except checks.ParameterTypeError:
            raise
        except ValueError as e:
            raise ValueError(f"parameter net_rate: {e}") from None
    p.integer("net_worker_hosts", low=1, high=workers)


def _real_traces(p: Parameters):
    p.integer("seed", low=0)
    p.choices("traces", sorted(shipped()), distinct=True)  # each trace is studied once
    p.real("holdout", above=0, below=1)
    p.integer("trials", low=2)
    p.integer("bootstrap", low=20)  # the intervals are bootstrap quantiles


def _partial_stragglers(p: Parameters):
    p.integer("seed", low=0)
    q_load = p.integer("q_load", low=2)
    p.integers("q_ns", low=q_load + 1, distinct=True)  # each n is one point of the curves
    p.integer("q_draws", low=1)
    ns = p.integers("exhaustive_ns", low=3, high=8, distinct=True)
    loads = p.integers("exhaustive_loads", low=2, distinct=True)
    for n in ns:  # every ordering is tried: (l!)^n of them
        for l in loads:
            if l < n and factorial(l) ** n > 2_000_000:
                raise ValueError(f"parameters exhaustive_ns and exhaustive_loads: n = {n}, l = {l} has "
                                 f"{factorial(l) ** n} orderings, above 2,000,000; choose smaller ones")
    p.integers("exact_ns", low=3, high=6, distinct=True)  # (l + 1)^n progress states in exact arithmetic
    p.integers("exact_loads", low=2, high=4, distinct=True)
    workers = p.integer("workers", low=3)
    load = p.integer("load", low=2, high=workers - 1)
    p.integer("mmc_order", low=1, high=load)
    p.integer("trials", low=2)
    p.integer("mse_trials", low=2)
    p.reals("fractions", above=0)
    p.real("latency", low=0)
    p.real("bandwidth", above=0)
    _model_parameters(p)
    p.integer("mpi_iterations", low=0)
    if p.value("mpi_iterations") == 1:  # a paired interval over iterations needs two
        raise ValueError("parameter mpi_iterations must be 0 (no MPI run) or at least 2, got 1")


def _head_to_head(p: Parameters):
    p.integer("seed", low=0)
    K = p.integer("K", low=4, high=256)  # every family needs a few workers; the largest a code's matrix allows
    p.integer("max_load", low=2, high=K)
    p.integer("trials", low=2)  # a confidence interval needs two trials
    p.choices("traces", sorted(shipped()), min_len=0, distinct=True)  # each trace is one model
    _model_parameters(p)
def _approximate(p: Parameters):
    p.integer("seed", low=0)
    n = p.integer("n", low=2)
    d = p.integer("d", low=2, high=n - 1)  # load 1 is ignore-stragglers; the CRC of the same load needs d - 1 >= 1
    if (n * d) % 2:
        raise ValueError(f"parameters n and d must have an even product (a d-regular graph on n vertices), got "
                         f"n = {n}, d = {d}")
    fractions = p.reals("fractions", above=0, below=1)
    bad = [f for f in fractions if not 0 < round(f * n) < n]
    if bad:
        raise ValueError(f"parameter fractions must give between 1 and n - 1 = {n - 1} stragglers of n = {n}, got "
                         f"{bad}")
    p.integer("graphs", low=1)
    p.integer("draws", low=1)
    p.integers("bench_stragglers", low=1, high=49)
    p.integer("bench_graphs", low=1)
    p.integer("bench_draws", low=1)
    workers = p.integer("train_workers", low=3)
    if (workers * d) % 2 or d >= workers:
        raise ValueError(f"parameter train_workers must exceed d = {d} and have an even product with it, got "
                         f"{workers}")
    p.integer("train_stragglers", low=1, high=workers - 1)
    p.text("train_kind", choices=["linreg", "logistic"])
    p.real("train_cond", low=1)
    p.real("shape", above=1)
    p.integer("seeds", low=1)
    p.integer("max_iter", low=1)
    p.real("rel_target", above=0, below=1)
def _sequential(p: Parameters):
    p.integer("seed", low=0)
    p.integer("n", low=2)
    md = p.integer("max_delay", low=1)
    p.integer("probe", low=md + 2)  # the jobs of a probe are its rounds less the largest delay
    p.integer("held", low=md + 2)
    p.integer("seeds", low=2)  # a paired interval needs two seeds
    p.real("mu", low=0)
    p.reals("mus", low=0)
    p.integer("processes", low=1)
    p.integer("lambda_step", low=1)
    p.choices("models", ["Lambda-like", "shifted-exp", "Pareto"], distinct=True)
    p.choices("load_models", ["proportional", "shift"], distinct=True)
    p.choices("traces", sorted(shipped()), min_len=0, distinct=True)
    p.integer("mpi_iterations", low=0)
    if 0 < p.value("mpi_iterations") < 4:
        raise ValueError(f"parameter mpi_iterations must be 0 (no MPI run) or at least 4, got "
                         f"{p.value('mpi_iterations')!r}")
    live = p.integer("live_workers", low=0)
    if live == 1 or live == 2:  # (live_runs: at least 3 workers)
        raise ValueError(f"parameter live_workers must be 0 (no live run) or at least 3, got {live}")
    p.real("live_seconds", above=0)
    probe = p.integer("live_probe", low=4)  # the probe's jobs: its rounds less the largest delay swept (2)
    held = p.integer("live_held", low=4)
    p.integer("live_kill_round", low=0, high=min(probe, held) - 1)


def _your_model(p: Parameters):
    p.integer("seed", low=0)
    p.choice("trace", sorted(shipped()))
    p.integer("workers", low=2)  # at most the trace's recorded workers: the study says so, naming workers
    p.integer("hidden", low=1)
    p.choice("framework", FRAMEWORKS)
    p.real("lr", above=0)
    iterations = p.integer("iterations", low=2)
    p.real("target", above=0, high=1)  # a test accuracy
    p.integer("seeds", low=1)
    p.real("time_scale", above=0)
    p.integer("kill_iteration", low=0, high=iterations - 1)
    p.integer("bootstrap", low=20)  # the fits' intervals are bootstrap quantiles


def _index(p: Parameters):
    pass  # the index has only the driver's parameters


#: The parameter check of every notebook, by stem.
NOTEBOOKS = {
    "00_index": _index,
    "01_gradient_coding": _gradient_coding,
    "02_reed_solomon": _reed_solomon,
    "03_communication_efficient": _communication_efficient,
    "04_gc_mmc": _gc_mmc,
    "05_mmc_design": _mmc_design,
    "06_lazy_aggregation": _lazy_aggregation,
    "07_mpi_runs": _mpi_runs,
    "08_scale": _scale,
    "09_advise": _advise,
    "10_real_traces": _real_traces,
    "11_partial_stragglers": _partial_stragglers,
    "12_sequential": _sequential,
    "13_approximate": _approximate,
    "14_head_to_head": _head_to_head,
    "15_your_model": _your_model,
}


def notebook(stem: str, namespace: MutableMapping[str, Any], /) -> None:
    """Apply the notebook's profile, then check its parameters (its first code cell passes ``globals()``).

    1. ``profile`` must name a table of ``profiles.toml`` (the one in the working directory, i.e. beside the
       notebook, else the repository's ``notebooks/profiles.toml``). The values of ``[PROFILE."STEM"]`` replace
       those of the parameters cell, except the ones papermill injected (``papermill -p`` and ``gclib reproduce``
       win over the profile) and the ones edited by hand (a value that differs from the committed parameters
       cell wins, and a line in capitals says which were kept). The parameters cell holds the ``full`` values,
       so ``profile = "quick"`` set by hand is enough to run the quick profile.
    2. ``figures_dir`` not injected and relative (the cell's ``../figures``) is relative to the notebook's folder
       (:func:`notebook_folder`), whatever the working directory: from the repository's root, papermill writes
       into the repository's folders, never beside the checkout; without a known notebook folder a relative path
       that leaves the working directory is refused.
    3. A run of any profile but ``full`` never writes into the committed figures: when ``figures_dir`` was not
       injected and names a folder called ``figures``, it becomes ``build/figures/PROFILE`` beside it
       (``../build/figures/quick``; relative stays relative when run from the notebook's folder, so the index's
       links still resolve); an injected ``figures_dir`` that is the repository's ``figures/`` is refused.
    4. ``profile``, ``figures_dir`` (a folder that exists and can be written, or can be created) and every
       parameter of the notebook's parameters cell are checked.

    Prints one line saying what the profile changed, when it changed anything, and one saying which values set by
    hand it kept.

    Raises:
        ValueError: naming the first bad parameter, its value and what is allowed.
    """
    if stem not in NOTEBOOKS:
        raise ValueError(f"no parameter checks for notebook {stem!r}; known: {sorted(NOTEBOOKS)}")
    applied = apply_profile(stem, namespace)
    kept = applied.pop(None, {})
    p = Parameters(namespace)
    checks.output_dir("parameter figures_dir", p.text("figures_dir"))  # a folder that is, or can be made, writable
    if applied:
        print(f"profile {namespace['profile']!r}: " + ", ".join(f"{k} = {v!r}" for k, v in applied.items()))
    if kept:
        print(f"KEPT YOUR VALUES (set by hand in the parameters cell, so the {namespace['profile']!r} profile does not "
              f"replace them): " + ", ".join(f"{k} = {v!r} (the profile has {q!r})" for k, (v, q) in kept.items()))
    NOTEBOOKS[stem](p)


def injected_names(namespace: Mapping[str, Any]) -> set[str]:
    """The names papermill injected in this run: the assignments of the cell run just before the current one
    when that cell is papermill's (it starts with ``# Parameters``), read from IPython's input history ``In``.
    Empty outside IPython and when the cells were run by hand."""
    history = namespace.get("In")
    if not isinstance(history, list) or len(history) < 2 or not isinstance(history[-2], str):
        return set()
    previous = history[-2]
    if not previous.lstrip().startswith("# Parameters"):
        return set()
    try:
        tree = ast.parse(previous)
    except SyntaxError:
        return set()
    return {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
            if isinstance(t, ast.Name)}


def profiles_file():
    """The ``profiles.toml`` a notebook reads: the one in the working directory (the notebook's folder when run
    by Jupyter or papermill), else the repository's ``notebooks/profiles.toml``."""
    here = Path.cwd() / "profiles.toml"
    return here if here.is_file() else PROFILES


def committed_defaults(stem: str) -> dict | None:
    """The literal values of the parameters cell of the repository's ``notebooks/STEM.ipynb`` (the ``full``
    profile as committed), or ``None`` when there is no such notebook (an installed package without a
    checkout) or its cell cannot be read."""
    path = NOTEBOOK_FOLDER / f"{stem}.ipynb"
    try:
        cells = json.loads(path.read_text())["cells"]
        src = next("".join(c["source"]) for c in cells if "parameters" in c.get("metadata", {}).get("tags", []))
        tree = ast.parse(src)
    except (OSError, ValueError, KeyError, StopIteration, SyntaxError, TypeError):
        return None
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return out


def notebook_folder():
    """The folder a notebook's relative paths (its ``figures_dir = "../figures"``) are relative to: the working
    directory when it holds a ``profiles.toml`` (the notebooks folder, where Jupyter and ``gclib reproduce`` run a
    notebook), else the repository's ``notebooks/`` when gclib runs from a checkout, else ``None`` (no
    notebook folder is known)."""
    if (Path.cwd() / "profiles.toml").is_file():
        return Path.cwd()
    return PROFILES.parent if PROFILES.is_file() else None


def apply_profile(stem: str, namespace: MutableMapping[str, Any]) -> dict:
    """Steps 1 and 2 of :func:`notebook`: set the profile's values and the figures folder in ``namespace``;
    return what changed, ``{name: new value}``, and under the key ``None`` the values set by hand that were kept
    (``{name: (kept value, the profile's value)}``)."""
    p = Parameters(namespace)
    profiles = load_profiles(profiles_file())
    profile = p.text("profile", choices=sorted(profiles))
    injected = injected_names(namespace)
    changed, kept = {}, {}
    if profile != "full":
        committed = committed_defaults(stem)
        for name, value in profiles[profile].get(stem, {}).items():
            now = namespace.get(name, _MISSING)
            if name in injected or now == value:
                continue
            if committed is not None and name in committed and now is not _MISSING and now != committed[name]:
                kept[name] = (now, value)  # edited by hand in the parameters cell: the explicit knob wins
                continue
            namespace[name] = changed[name] = value
    fig = p.text("figures_dir")
    if "figures_dir" not in injected and not Path(fig).is_absolute():
        folder = notebook_folder()
        if folder is None:
            if ".." in Path(fig).parts:
                raise ValueError(f"parameter figures_dir = {fig!r} is relative to the notebook's folder, which is "
                                 f"not known here (no profiles.toml in {Path.cwd()} and no gclib checkout): run the "
                                 f"notebook from its folder, or pass figures_dir (papermill -p figures_dir DIR)")
        elif folder.resolve() != Path.cwd().resolve():
            fig = namespace["figures_dir"] = changed["figures_dir"] = str((folder / fig).resolve())
    if profile != "full":
        if "figures_dir" in injected:
            if Path(fig).resolve() == FIGURES.resolve():
                raise ValueError(f"parameter figures_dir must not be the committed figures folder when profile is "
                                 f"{profile!r} (only the full profile writes there), got {fig!r} (str)")
        elif Path(fig).name == "figures":
            namespace["figures_dir"] = changed["figures_dir"] = str(Path(fig).parent / "build" / "figures" / profile)
    if kept:
        changed[None] = kept
    return changed


_MISSING = object()
