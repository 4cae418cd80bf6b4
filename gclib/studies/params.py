"""Checking a notebook's parameters before anything runs.

A notebook's ``parameters`` cell holds the values of the ``full`` profile. Setting ``profile = "quick"`` there
(by hand, in JupyterLab) makes :func:`notebook` take the values of ``notebooks/profiles.toml``'s quick table and
send the figures to ``build/figures/quick`` instead of the committed ``figures/``; ``papermill -p name value`` (and
``gclib reproduce``) override any of them. A wrong value should fail at once, in the first code cell, with a message that names
the parameter, the value and what is allowed, not deep inside a simulation. The first code cell of every notebook
therefore calls :func:`validate` on the notebook's globals::

    from gclib.studies.params import validate
    validate(globals(),
             profile=dict(choices=["full", "quick"]),
             figures_dir=dict(type=str),
             seed=dict(type=int, low=0),
             trials=dict(type=int, low=1),
             mu=dict(type=float, above=0),
             cond_n=dict(type=list, min_len=1, items=dict(type=int, low=2)))

or :func:`check` on one value (it returns the value, so it can be used inline)::

    from gclib.studies.params import check
    check("trials", trials, int, low=1)
    check("mu", mu, float, low=0, low_open=True)
    check("cond_n", cond_n, list, low=2)          # bounds and choices apply to every element of a list

Both raise :class:`ValueError`, e.g. ``parameter trials must be an integer >= 1, got -5 (int)``.

Rules:

* The type is given as ``type=`` or as the third positional argument (``kind``).
* ``type=int`` accepts Python and NumPy integers but not ``bool`` nor floats (``-p trials 1e5`` is a float and is
  refused with a message saying so); ``type=float`` accepts any real number except ``bool`` and rejects NaN;
  ``type=list`` accepts lists and tuples; other types are checked with ``isinstance``. A tuple of types allows any.
* ``low`` / ``high`` are inclusive bounds, ``above`` / ``below`` exclusive ones; ``low_open=True`` makes ``low``
  exclusive.
* ``choices``: the value must be one of them.
* For a list value without ``items``, the bounds and ``choices`` apply to every element (named ``name[i]``).
* ``items``: a spec (a dict of these keywords) applied to every element of a list, named ``name[i]``.
* ``min_len`` / ``max_len``: bounds on the length of a list or string.
* ``none=True`` also allows ``None``.
"""
from __future__ import annotations

from typing import Any, Mapping, MutableMapping

from gclib.checks import is_integer, is_real

__all__ = ["apply_profile", "check", "notebook", "validate"]


def _error(name: str, value: Any, allowed: str) -> ValueError:
    """The error for a bad parameter: a plain :class:`ValueError` naming the parameter, the value and what is
    allowed."""
    return ValueError(f"parameter {name} must be {allowed}, got {value!r} ({type(value).__name__})")


_TYPE_WORDS = {int: "an integer", float: "a number", str: "a string", list: "a list", bool: "True or False",
               dict: "a dict"}


def _type_ok(v, t) -> bool:
    if t is int:
        return is_integer(v)
    if t is float:
        return is_real(v) and not _is_nan(v)
    if t is list:
        return isinstance(v, (list, tuple))
    if t is bool:
        return isinstance(v, bool)
    return isinstance(v, t)


def _is_nan(v) -> bool:
    try:
        return bool(v != v)
    except Exception:  # pragma: no cover - exotic objects
        return False


def _type_word(t) -> str:
    if isinstance(t, tuple):
        return " or ".join(_type_word(x) for x in t)
    return _TYPE_WORDS.get(t, f"a {getattr(t, '__name__', t)}")


def _range_words(low, high, above, below) -> str:
    parts = []
    if low is not None:
        parts.append(f">= {low}")
    if above is not None:
        parts.append(f"> {above}")
    if high is not None:
        parts.append(f"<= {high}")
    if below is not None:
        parts.append(f"< {below}")
    return " and ".join(parts)


def _allowed(type, low, high, above, below, choices, min_len, max_len, none) -> str:
    """The human description of what a spec allows, e.g. ``an integer >= 1 and <= 100``."""
    if choices is not None:
        words = "one of " + ", ".join(repr(c) for c in choices)
    else:
        words = _type_word(type) if type is not None else "a value"
        rng = _range_words(low, high, above, below)
        if rng:
            words += " " + rng
        if min_len is not None or max_len is not None:
            lo = "" if min_len is None else f"at least {min_len}"
            hi = "" if max_len is None else f"at most {max_len}"
            words += " of length " + " and ".join(x for x in (lo, hi) if x)
    return words + (" (or None)" if none else "")


def check(name: str, value: Any, kind=None, *, type=None, low=None, high=None, low_open: bool = False,
          above=None, below=None, choices=None, items: Mapping | None = None, min_len: int | None = None,
          max_len: int | None = None, none: bool = False) -> Any:
    """Check one parameter; return ``value`` unchanged or raise a ``ValueError`` whose message names the
    parameter, the value and what is allowed (see the module docstring for the keywords)."""
    if kind is not None:
        if type is not None and type is not kind:
            raise TypeError("give the type once: as the third argument or as type=")
        type = kind
    if low_open and low is not None:
        above, low = low, None
    elementwise = dict(low=low, high=high, above=above, below=below, choices=choices)
    if items is None and isinstance(value, (list, tuple)) and any(v is not None for v in elementwise.values()):
        # bounds and choices of a list apply to its elements
        check(name, value, type=type, min_len=min_len, max_len=max_len, none=none)
        for i, v in enumerate(value):
            check(f"{name}[{i}]", v, **elementwise)
        return value
    allowed = _allowed(type, low, high, above, below, choices, min_len, max_len, none)
    if value is None and none:
        return value
    if choices is not None:
        try:
            ok = value in choices
        except TypeError:
            ok = False
        if not ok:
            raise _error(name, value, allowed)
    if type is not None:
        types = type if isinstance(type, tuple) else (type,)
        if not any(_type_ok(value, t) for t in types):
            raise _error(name, value, allowed)
    if any(b is not None for b in (low, high, above, below)):
        if not is_real(value) or _is_nan(value):
            raise _error(name, value, allowed)
        if ((low is not None and value < low) or (high is not None and value > high)
                or (above is not None and value <= above) or (below is not None and value >= below)):
            raise _error(name, value, allowed)
    if min_len is not None or max_len is not None:
        try:
            n = len(value)
        except TypeError:
            raise _error(name, value, allowed) from None
        if (min_len is not None and n < min_len) or (max_len is not None and n > max_len):
            raise _error(name, value, allowed)
    if items is not None:
        if not isinstance(value, (list, tuple)):
            raise _error(name, value, "a list")
        for i, v in enumerate(value):
            check(f"{name}[{i}]", v, **items)
    return value


def validate(namespace: Mapping[str, Any], /, **specs: Mapping) -> None:
    """Check every parameter named in ``specs`` (``name=dict(type=..., low=..., ...)``, the keywords of
    :func:`check`) against its value in ``namespace`` (a notebook passes ``globals()``).

    Raises ``ValueError`` for the first bad value (in the order given), and also when a named parameter
    is not defined at all.
    """
    for name, spec in specs.items():
        if not isinstance(spec, Mapping):
            raise TypeError(f"the spec of {name} must be a dict of check() keywords, got {spec!r}")
        if name not in namespace:
            raise ValueError(f"parameter {name} is not defined (the parameters cell must set it)")
        check(name, namespace[name], **spec)


# ------------------------------------------------------------------------------------------------------------
# What each notebook accepts. The first code cell of notebook NN_name is ``notebook("NN_name", globals())``.
# Each function checks every parameter of its notebook's parameters cell (a test replaces each one by a bad value
# and expects a ValueError naming it), in the order of the cell, cross-parameter rules after the values they use.

def _n(ns, name):
    if name not in ns:
        raise ValueError(f"parameter {name} is not defined (the parameters cell must set it)")
    return ns[name]


def _distinct(name: str, values, why: str) -> None:
    if len(set(values)) != len(values):
        raise ValueError(f"parameter {name} must hold distinct values ({why}), got {values!r} (list)")


def _gradient_coding(ns):
    check("seed", _n(ns, "seed"), int, low=0)
    check("n_small", _n(ns, "n_small"), int, low=2, high=12)
    check("s_small", _n(ns, "s_small"), int, low=0, high=ns["n_small"] - 1)
    check("n", _n(ns, "n"), int, low=2)
    check("trials", _n(ns, "trials"), int, low=10)
    check("mu", _n(ns, "mu"), float, low=0, low_open=True)
    check("alpha", _n(ns, "alpha"), float, low=0)
    check("pareto_scale", _n(ns, "pareto_scale"), float, low=0, low_open=True)
    check("pareto_shape", _n(ns, "pareto_shape"), float, low=0, low_open=True)
    check("cond_n", _n(ns, "cond_n"), list, min_len=1, items=dict(type=int, low=2))
    check("cond_seeds", _n(ns, "cond_seeds"), int, low=1)
    check("cond_patterns", _n(ns, "cond_patterns"), int, low=1)


def _reed_solomon(ns):
    check("seed", _n(ns, "seed"), int, low=0)
    check("small_n", _n(ns, "small_n"), int, low=1)
    check("small_s", _n(ns, "small_s"), int, low=0, high=ns["small_n"] - 1)
    ns_ = check("ns", _n(ns, "ns"), list, min_len=1, items=dict(type=int, low=2))
    fracs = check("s_fracs", _n(ns, "s_fracs"), list, min_len=1, items=dict(type=float, above=0, below=1))
    if not any(max(1, int(round(f * n_))) < n_ for n_ in ns_ for f in fracs):  # pairs with s >= n are skipped
        raise ValueError(f"parameters ns and s_fracs leave no code to study: s = max(1, round(frac * n)) >= n for "
                         f"every pair, got ns = {ns_!r}, s_fracs = {fracs!r}")
    check("max_patterns", _n(ns, "max_patterns"), int, low=1)
    check("trials", _n(ns, "trials"), int, low=1)


def _communication_efficient(ns):
    from gclib.studies.reed_solomon.stability import divisor_stragglers

    check("seed", _n(ns, "seed"), int, low=0)
    check("verify_n", _n(ns, "verify_n"), int, low=1)
    check("verify_s", _n(ns, "verify_s"), int, low=0, high=ns["verify_n"] - 1)
    check("verify_m", _n(ns, "verify_m"), int, low=1, high=ns["verify_n"] - ns["verify_s"])  # d = s + m <= n
    n = check("n", _n(ns, "n"), int, low=2)
    s = check("s", _n(ns, "s"), int, low=0, high=n - 2)
    ms = check("ms", _n(ns, "ms"), list, min_len=1, items=dict(type=int, low=1))
    if not any(n % (s + m) == 0 for m in ms):  # Kadhe needs (s + m) | n; values of m where it does not are skipped
        raise ValueError(f"parameter ms must hold at least one m with (s + m) dividing n = {n} (s = {s}), "
                         f"got {ms!r} (list)")
    check("trials", _n(ns, "trials"), int, low=1)
    check("mu", _n(ns, "mu"), float, low=0, low_open=True)
    check("alpha", _n(ns, "alpha"), float, low=0)
    check("latency", _n(ns, "latency"), float, low=0)
    check("bandwidth", _n(ns, "bandwidth"), float, low=0, low_open=True)
    m = check("stab_m", _n(ns, "stab_m"), int, low=1)
    for i, n_ in enumerate(check("stab_ns", _n(ns, "stab_ns"), list, min_len=1, items=dict(type=int, low=m + 1))):
        if not divisor_stragglers(n_, m, 2):  # the study needs an s with 1 <= s <= n/2 and (s + m) | n
            raise ValueError(f"parameter stab_ns[{i}] must have a divisor s + stab_m with 1 <= s <= n/2 "
                             f"(stab_m = {m}), got {n_!r} (int)")
    check("max_patterns", _n(ns, "max_patterns"), int, low=1)


def _gc_mmc(ns):
    check("seed", _n(ns, "seed"), int, low=0)
    check("trials", _n(ns, "trials"), int, low=1)
    K = check("K", _n(ns, "K"), int, low=1)
    r = check("r", _n(ns, "r"), int, low=min(2, K), high=K)  # LCC needs 2 ceil(K / r) - 1 <= K: r >= 2 once K >= 2
    check("mu", _n(ns, "mu"), float, low=0, low_open=True)
    check("alpha", _n(ns, "alpha"), float, low=0)
    check("clusters", _n(ns, "clusters"), int, low=1, high=K // r)  # every cluster holds at least r workers
    check("order", _n(ns, "order"), int, low=1, high=r)
    orders = check("orders", _n(ns, "orders"), list, min_len=1, items=dict(type=int, low=1, high=r))
    _distinct("orders", orders, "a repeated order sends the same message twice")
    check("sweep_trials", _n(ns, "sweep_trials"), int, low=1)
    check("exact_trials", _n(ns, "exact_trials"), int, low=1)


def _mmc_design(ns):
    check("seed", _n(ns, "seed"), int, low=0)
    K = check("K", _n(ns, "K"), int, low=1)
    r = check("r", _n(ns, "r"), int, low=1, high=K)
    check("trials", _n(ns, "trials"), int, low=1)
    check("max_orders", _n(ns, "max_orders"), int, low=1, high=r)  # an order vector holds distinct orders <= r
    check("budgets", _n(ns, "budgets"), list, min_len=1, items=dict(type=float, above=0))
    check("mu", _n(ns, "mu"), float, low=0, low_open=True)
    check("alpha", _n(ns, "alpha"), float, low=0)
    check("pareto_scale", _n(ns, "pareto_scale"), float, low=0, low_open=True)
    check("pareto_shape", _n(ns, "pareto_shape"), float, low=0, low_open=True)
    check("exact_trials", _n(ns, "exact_trials"), int, low=1)
    designs = check("exact_designs", _n(ns, "exact_designs"), list, items=dict(type=list, min_len=2, max_len=2))
    for i, (o, P) in enumerate(designs):  # (orders, clusters)
        check(f"exact_designs[{i}][0]", o, list, min_len=1, items=dict(type=int, low=1, high=r))
        _distinct(f"exact_designs[{i}][0]", o, "an order vector holds distinct orders")
        check(f"exact_designs[{i}][1]", P, int, low=1, high=K // r)  # every cluster holds at least r workers


def _lazy_aggregation(ns):
    check("seed", _n(ns, "seed"), int, low=0)
    workers = check("workers", _n(ns, "workers"), int, low=1)
    check("groups", _n(ns, "groups"), int, choices=[g for g in range(1, workers + 1) if workers % g == 0])
    check("dim", _n(ns, "dim"), int, low=9)  # the LAG check has 9 workers, each one column of a dim x dim basis
    check("target", _n(ns, "target"), float, low=0, low_open=True)
    # every model has mean 1, which a Pareto tail has only for a shape above 1
    shapes = check("shapes", _n(ns, "shapes"), list, min_len=1, items=dict(type=float, above=1))
    check("fig_shape", _n(ns, "fig_shape"), float, choices=shapes)  # Fig. 2's analogue is one of the shapes
    check("shift", _n(ns, "shift"), float, low=0, below=1)
    check("seeds", _n(ns, "seeds"), int, low=1)
    check("max_iter", _n(ns, "max_iter"), int, low=1)
    check("lag_target", _n(ns, "lag_target"), float, low=0, low_open=True)
    check("warmup", _n(ns, "warmup"), str, choices=["silent", "upload"])
    units = _n(ns, "lagc_units")
    if isinstance(units, str):
        check("lagc_units", units, choices=["decoding-mean", "decoding-max", "count"])
    else:
        check("lagc_units", units, float, low=0, low_open=True)
    check("family_kinds", _n(ns, "family_kinds"), list, min_len=1, items=dict(type=str, choices=["linreg", "logistic"]))
    check("family_designs", _n(ns, "family_designs"), list, min_len=1,
          items=dict(type=str, choices=["gaussian", "correlated"]))
    check("family_conds", _n(ns, "family_conds"), list, min_len=1, items=dict(type=float, low=1))
    check("family_data_seeds", _n(ns, "family_data_seeds"), list, min_len=1, items=dict(type=int, low=0))
    check("family_seeds", _n(ns, "family_seeds"), int, low=1)
    check("family_target", _n(ns, "family_target"), float, low=0, low_open=True, below=1)


def _mpi_runs(ns):
    from gclib import schemes as registry
    from gclib.learning.problems import DATASETS
    from gclib.studies.mpi_runs.experiments import MODELS, build

    seed = check("seed", _n(ns, "seed"), int, low=0)
    workers = check("workers", _n(ns, "workers"), int, low=1)
    stragglers = check("stragglers", _n(ns, "stragglers"), int, low=0, high=workers - 1)
    check("iterations", _n(ns, "iterations"), int, low=1)
    check("time_scale", _n(ns, "time_scale"), float, low=0, low_open=True)
    check("dim", _n(ns, "dim"), int, low=1)
    datasets = check("datasets", _n(ns, "datasets"), list, min_len=1, choices=sorted(DATASETS))
    check("samples", _n(ns, "samples"), int, low=workers if "tandon-logistic" in datasets else 1)  # a part each
    check("models", _n(ns, "models"), list, min_len=1, choices=sorted(MODELS))
    names = check("schemes", _n(ns, "schemes"), list, min_len=1, choices=sorted({"uc-mmc", *registry.SCHEMES}))
    for i, name in enumerate(names):  # each must build from (workers, stragglers, seed): FRC needs (s + 1) | n
        try:
            build(name, workers, stragglers, seed)
        except ValueError as e:
            raise ValueError(f"parameter schemes[{i}] = {name!r} cannot run with workers = {workers} and "
                             f"stragglers = {stragglers}: {e}") from None


def _scale(ns):
    check("seed", _n(ns, "seed"), int, low=0)
    Ks = check("Ks", _n(ns, "Ks"), list, min_len=2, items=dict(type=int, low=2))
    _distinct("Ks", Ks, "each K is one point of the curves")
    check("trials", _n(ns, "trials"), int, low=2)  # a confidence interval needs two trials
    check("load_fraction", _n(ns, "load_fraction"), float, above=0, high=1)
    load = check("load", _n(ns, "load"), int, low=1)
    c = check("cluster_size", _n(ns, "cluster_size"), int, low=load)  # a worker holds load parts of its cluster
    for i, K in enumerate(Ks):  # GC-MMC runs in K / cluster_size clusters
        if K % c:
            raise ValueError(f"parameter Ks[{i}] must be a multiple of cluster_size = {c}, got {K!r} (int)")
    check("order_fraction", _n(ns, "order_fraction"), float, above=0, high=1)
    check("max_messages", _n(ns, "max_messages"), int, low=1)
    check("mu", _n(ns, "mu"), float, low=0, low_open=True)
    check("alpha", _n(ns, "alpha"), float, low=0)
    check("pareto_scale", _n(ns, "pareto_scale"), float, low=0, low_open=True)
    check("pareto_shape", _n(ns, "pareto_shape"), float, low=0, low_open=True)


def _advise(ns):
    check("seed", _n(ns, "seed"), int, low=0)
    check("fit_workers", _n(ns, "fit_workers"), int, low=2)
    check("fit_iterations", _n(ns, "fit_iterations"), int, low=1)
    check("fit_tasks", _n(ns, "fit_tasks"), int, low=1)
    check("repeats", _n(ns, "repeats"), int, low=2)  # a coverage needs more than one repetition
    check("bootstrap", _n(ns, "bootstrap"), int, low=20)  # the intervals are bootstrap quantiles
    for name in ("mu", "rate", "pareto_scale", "time_scale"):
        check(name, _n(ns, name), float, low=0, low_open=True)
    check("alpha", _n(ns, "alpha"), float, low=0)
    check("pareto_shape", _n(ns, "pareto_shape"), float, above=1)  # a finite mean task time to recover
    workers = check("workers", _n(ns, "workers"), int, low=2)
    check("tasks", _n(ns, "tasks"), int, low=1)
    check("profile_iterations", _n(ns, "profile_iterations"), int, low=2)
    check("run_iterations", _n(ns, "run_iterations"), int, low=2)  # an interval needs two iterations
    check("max_load", _n(ns, "max_load"), int, low=1, high=workers)
    check("trials", _n(ns, "trials"), int, low=2)
    check("net_dim", _n(ns, "net_dim"), int, low=1)
    check("net_tasks", _n(ns, "net_tasks"), int, low=1)
    check("net_time_scale", _n(ns, "net_time_scale"), float, low=0, low_open=True)
    check("net_profile_iterations", _n(ns, "net_profile_iterations"), int, low=2)
    check("net_run_iterations", _n(ns, "net_run_iterations"), int, low=2)  # an interval needs two iterations
    rate = check("net_rate", _n(ns, "net_rate"), str, none=True)
    if rate is not None:
        from gclib.runtime.localhosts import rate_bits

        try:
            rate_bits(rate)
        except ValueError as e:
            raise ValueError(f"net_rate: {e}") from None
    check("net_worker_hosts", _n(ns, "net_worker_hosts"), int, low=1, high=workers)


def _real_traces(ns):
    from gclib.timings import shipped

    check("seed", _n(ns, "seed"), int, low=0)
    have = sorted(shipped())
    names = check("traces", _n(ns, "traces"), list, min_len=1, items=dict(type=str, choices=have))
    _distinct("traces", names, "each trace is studied once")
    check("holdout", _n(ns, "holdout"), float, above=0, below=1)
    check("trials", _n(ns, "trials"), int, low=2)
    check("bootstrap", _n(ns, "bootstrap"), int, low=20)  # the intervals are bootstrap quantiles


def _index(ns):
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
    check("figures_dir", _n(namespace, "figures_dir"), str, min_len=1)
    from gclib.checks import output_dir

    output_dir("parameter figures_dir", namespace["figures_dir"])  # a folder that is, or can be made, writable
    if applied:
        print(f"profile {namespace['profile']!r}: " + ", ".join(f"{k} = {v!r}" for k, v in applied.items()))
    if kept:
        print(f"KEPT YOUR VALUES (set by hand in the parameters cell, so the {namespace['profile']!r} profile does not "
              f"replace them): " + ", ".join(f"{k} = {v!r} (the profile has {p!r})" for k, (v, p) in kept.items()))
    NOTEBOOKS[stem](namespace)


def injected_names(namespace: Mapping[str, Any]) -> set[str]:
    """The names papermill injected in this run: the assignments of the cell run just before the current one
    when that cell is papermill's (it starts with ``# Parameters``), read from IPython's input history ``In``.
    Empty outside IPython and when the cells were run by hand."""
    import ast

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
    from pathlib import Path

    from gclib.reproduce import PROFILES

    here = Path.cwd() / "profiles.toml"
    return here if here.is_file() else PROFILES


def committed_defaults(stem: str) -> dict | None:
    """The literal values of the parameters cell of the repository's ``notebooks/STEM.ipynb`` (the ``full``
    profile as committed), or ``None`` when there is no such notebook (an installed package without a
    checkout) or its cell cannot be read."""
    import ast
    import json

    from gclib.reproduce import NOTEBOOKS as FOLDER

    path = FOLDER / f"{stem}.ipynb"
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
    from pathlib import Path

    from gclib.reproduce import PROFILES

    if (Path.cwd() / "profiles.toml").is_file():
        return Path.cwd()
    return PROFILES.parent if PROFILES.is_file() else None


def apply_profile(stem: str, namespace: MutableMapping[str, Any]) -> dict:
    """Steps 1 and 2 of :func:`notebook`: set the profile's values and the figures folder in ``namespace``;
    return what changed, ``{name: new value}``, and under the key ``None`` the values set by hand that were kept
    (``{name: (kept value, the profile's value)}``)."""
    from pathlib import Path

    from gclib.reproduce import FIGURES, load_profiles

    profile = check("profile", _n(namespace, "profile"), str, min_len=1)
    profiles = load_profiles(profiles_file())
    check("profile", profile, choices=sorted(profiles))
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
    fig = check("figures_dir", _n(namespace, "figures_dir"), str, min_len=1)
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
