"""Launch a run (:func:`launch`): check everything the caller passes, make the run directory, run the MPI job
(:mod:`gclib.runtime.job`), and return its :class:`~gclib.runtime.result.RunResult`
(:mod:`gclib.runtime.result`), saving the state when the run failed or was interrupted.

The job is ``mpiexec`` (the venv's, next to ``sys.executable``; or ``srun``: :mod:`gclib.runtime.hosts`) with
``-disable-auto-cleanup``, so that a worker that *exits* does not take the job down with it, and every rank runs
under a guard that turns a death by a signal into an exit (Hydra kills the whole host when a process it started
dies by a signal); see :mod:`gclib.runtime.guard`. The pickled spec reaches rank 0 on its standard input, and the
master's progress and the guards' reports come back on ``mpiexec``'s output: no rank reads a file the launcher
wrote, the run directory (the ranks' stderr, the state file) stays on the launching host, and runs across hosts
need no shared file system. The master treats a dead worker as a straggler that never answers (the code tolerates
it, or the master stops with a clear error). See ``docs/runtime.md``.

Everything the caller passes is checked before anything is created or started. A run directory the launcher
made itself (under the temporary directory) is removed after a successful run and kept, with the state file in
it, after a failed or interrupted one (and named in the error); a run of sequential rounds cannot be resumed, so
its temporary run directory is removed whatever the outcome. Ctrl-C (SIGINT), SIGTERM and SIGHUP stop the job,
leave no rank behind, and save a resumable state (:mod:`gclib.runtime.signals`).
"""
from __future__ import annotations

import pickle
import shutil
import tempfile
from pathlib import Path

from gclib import checks
from gclib.learning.model import ModelError
from gclib.runtime.command import mpiexec_options
from gclib.runtime.hosts import check_hostfile, choose_launcher
from gclib.runtime.job import END_GRACE, STARTUP_TIMEOUT, run_job
from gclib.runtime.preflight import check_host_memory, os_reason
from gclib.runtime.result import RunResult, RuntimeFailure, failure_text, job_result, note_restarts
from gclib.runtime.resume import continued, save_state
from gclib.runtime.spec import RunSpec


def default_job_timeout(spec: RunSpec) -> float:
    """A backstop for the whole job: start-up, every iteration left at its straggler timeout, and the stop."""
    return 60.0 + (spec.iterations - spec.start) * spec.timeout + 2 * spec.stop_timeout + END_GRACE


def launch(spec: RunSpec, *, hosts=None, job_timeout: float | None = None, state_file=None, run_dir=None,
           check: bool = True, progress=None, mpiexec=None, launcher: str = "auto", resume=None, args=None,
           mpiexec_args=None, startup_timeout: float | None = None) -> RunResult:
    """Run ``spec`` over MPI and return what it measured.

    Args:
        spec: the run.
        hosts: optional MPICH hostfile. No file system needs to be shared: the spec reaches rank 0 on its
            standard input, and everything the ranks report comes back through ``mpiexec``.
        job_timeout: seconds after which the whole job is killed (default :func:`default_job_timeout`).
        state_file: where to write the state (always written when the run fails or is interrupted; default
            ``run_dir/state.json``); ``launch(spec, resume=state_file)`` continues from it.
        run_dir: directory for the logs (the ranks' stderr) and the state file, on this host (no rank reads
            it); default a new temporary directory, removed after a successful run (a given one is kept).
        check: raise :class:`~gclib.runtime.result.RuntimeFailure` (carrying the result) when the run stops early.
        progress: optional callback ``progress(record)`` called after every iteration.
        mpiexec: the path of a Hydra ``mpiexec`` (the site's); default the ``mpich`` wheel's, else the first on
            ``PATH``.
        launcher: ``"auto"``, ``"mpiexec"`` or ``"srun"`` (SLURM); see :func:`choose_launcher`.
        resume: a state file (or its loaded document) of an earlier run of the same ``spec``: continue from its
            last completed iteration, with its update state and the same injected delays.
        args: the command line's parameters, stored in the state file so that ``gclib run --resume`` can rebuild
            the run (the library leaves it ``None``).
        mpiexec_args: more options of ``mpiexec`` (a list, or one string split as a shell would), e.g.
            ``"-launcher ssh -launcher-exec PROGRAM -iface eth1"`` (see ``docs/runtime.md``).
        startup_timeout: seconds from the job's start until every rank must be through ``MPI_Init`` (a
            collective: a rank that never gets there, frozen or on a host that does not answer, holds every other
            rank in it); past it the job is killed and started again, twice at most, then the run fails with a
            one-line error (default :data:`~gclib.runtime.job.STARTUP_TIMEOUT`). A rank stopped by a signal during
            the start-up (its guard says so) does not wait for it: the job is started again after
            :data:`~gclib.runtime.job.STOPPED_AT_START`.
    Returns:
        :class:`~gclib.runtime.result.RunResult`.
    Raises:
        gclib.learning.model.ModelError: (a ``ValueError``) a rank could not build the model named by its import
            path (nothing ran; the run directory is kept with the ranks' output).
    """
    # ---- every check first: nothing is created or started for a refused run
    spec, prior, hosts, run_dir, state_file, job_timeout, pickled = _check_launch(
        spec, hosts=hosts, job_timeout=job_timeout, state_file=state_file, run_dir=run_dir, resume=resume)
    exe, extra, startup_timeout = _starter(launcher, mpiexec, hosts, spec.ranks, mpiexec_args, startup_timeout)
    job_timeout = default_job_timeout(spec) if job_timeout is None else job_timeout
    # ---- the run directory, then the job
    own = run_dir is None
    run_dir = _make_run_dir(run_dir)
    job, restarts = run_job(spec, pickled, run_dir, hosts, exe, job_timeout, progress, prior, args, extra,
                            startup_timeout=startup_timeout)
    # ---- what it measured, and the state file when asked or when the run failed
    res = _measured(job, restarts, prior, run_dir)
    _keep(res, spec, run_dir, own, state_file, args)
    if check and not res.ok:
        raise RuntimeFailure(f"{res.error}{_where(res)}", res)
    return res


def launch_series(specs, *, hosts=None, job_timeout: float | None = None, check: bool = True, progress=None,
                  mpiexec=None, launcher: str = "auto", mpiexec_args=None,
                  startup_timeout: float | None = None) -> list[RunResult]:
    """Run ``specs`` one after the other over MPI, in as few jobs as it takes: the ranks start once (Python, the
    model's framework, ``MPI_Init``) and run spec after spec, each from its own warm-up, as :func:`launch` would
    run it alone. The next spec starts in the same job only after a run that ended cleanly (status ``ok``, no
    worker dead or stopped); after any other end, the specs left start in a new job. Worth it when the start-up
    is a large part of a run (a framework such as PyTorch imported by every rank; short runs).

    Args:
        specs: the runs, each a :class:`~gclib.runtime.spec.RunSpec`, all with the same number of ranks.
        job_timeout: seconds allowed per run (default :func:`default_job_timeout` of each); a job is killed past
            the sum over its runs.
        check: raise :class:`~gclib.runtime.result.RuntimeFailure` at the first run that stops early (carrying
            its result, and in ``results`` those of the runs before it).
        progress: optional callback ``progress(record)`` after every iteration of every run.
        hosts, mpiexec, launcher, mpiexec_args, startup_timeout: as for :func:`launch`.
    Returns:
        One :class:`~gclib.runtime.result.RunResult` per spec, in order. A failed run keeps its run directory
        (the ranks' stderr, its state file, from which ``launch(spec, resume=...)`` continues it); the others'
        are removed.
    Raises:
        gclib.learning.model.ModelError: a rank could not build a spec's model (``results``: the runs before it).
    """
    specs = list(specs)
    if not specs:
        raise ValueError("specs must name at least one run, got none")
    checked = [_check_launch(s, hosts=hosts, job_timeout=job_timeout, state_file=None, run_dir=None, resume=None)
               for s in specs]
    ranks = {s.ranks for s in specs}
    if len(ranks) > 1:
        raise ValueError(f"the specs of a series must have the same number of ranks, got {sorted(ranks)}")
    hosts = checked[0][2]
    exe, extra, startup_timeout = _starter(launcher, mpiexec, hosts, specs[0].ranks, mpiexec_args, startup_timeout)
    results = []
    while len(results) < len(specs):
        left = checked[len(results):]
        timeout = sum(default_job_timeout(c[0]) if c[5] is None else c[5] for c in left)
        run_dir = _make_run_dir(None)
        job, restarts = run_job([c[0] for c in left], [c[6] for c in left], run_dir, hosts, exe, timeout,
                                progress, ([], []), None, extra, startup_timeout=startup_timeout)
        _series_results(job, restarts, run_dir, results)
        failed = next((r for r in results if not r.ok), None)
        if check and failed is not None:
            raise RuntimeFailure(f"{failed.error}{_where(failed)}", failed, results=results[:results.index(failed)])
        if job.interrupted is not None:  # a stop signal ends the series, with what ran so far
            break
    return results


def _series_results(job, restarts, run_dir, results: list) -> None:
    """Append to ``results`` those of the runs ``job`` finished, and of the one under way at its end unless it never
    began (then the next job's); removes the run directory when all of them ended ok."""
    began = job.index == 0 or any(job.events[k] is not None for k in ("start", "end", "failed"))
    ran = job.finished + ([job] if began else [])
    for i, run in enumerate(ran):
        try:
            res = _measured(run, restarts if i == 0 else [], ([], []), run_dir)
        except ModelError as e:
            e.results = results
            raise
        if not res.ok and run.spec.sequential is None:
            save_state(res, run_dir / "state.json", run_dir, None)
        results.append(res)
    if all(r.ok for r in results[-len(ran):]):
        shutil.rmtree(run_dir, ignore_errors=True)
        for r in results[-len(ran):]:
            r.run_dir = None


def _starter(launcher, mpiexec, hosts, ranks: int, mpiexec_args, startup_timeout) -> tuple:
    """What starts a job of ``ranks`` ranks, checked: ``(executable, more mpiexec options, start-up timeout)``."""
    startup_timeout = STARTUP_TIMEOUT if startup_timeout is None else checks.seconds("startup_timeout",
                                                                                      startup_timeout)
    extra = mpiexec_options("mpiexec_args", mpiexec_args)
    return choose_launcher(launcher, mpiexec, hosts, ranks), extra, startup_timeout


def _measured(job, restarts, prior, run_dir) -> RunResult:
    """The result of the job that ran (:func:`gclib.runtime.result.job_result`), with the start-ups started again
    (``restarts``) said in its error; raises :class:`~gclib.learning.model.ModelError` when a rank could not build
    the model (nothing ran: a bad model, not a failed run)."""
    res = job_result(job, *prior)
    res.run_dir = str(run_dir)
    failed = job.events["failed"]
    if failed is not None and failed.get("stage") == "build":
        raise ModelError(f"{failure_text(failed, 0, job.spec.iterations)} (the ranks' output is in "
                         f"{run_dir / 'stderr.txt'})")
    if restarts:
        note_restarts(res, restarts)
    return res


def _where(res) -> str:
    """Where a failed run's state and run directory are, for its error (`` (state saved to ...)``)."""
    if res.spec.get("state_file") and res.run_dir:
        return f" (state saved to {res.spec['state_file']}; run directory {res.run_dir})"
    return f" (run directory {res.run_dir})" if res.run_dir else ""


def _keep(res, spec, run_dir, own: bool, state_file, args) -> None:
    """What a run leaves: the state file when it failed or was asked for, the run directory the launcher made
    removed after a success; sequential rounds cannot be resumed, so a failed one keeps no state and its temporary
    run directory goes too."""
    resumable = spec.sequential is None
    if (not res.ok and resumable) or state_file is not None:
        save_state(res, state_file or run_dir / "state.json", run_dir, args)
    if own and (res.ok or not resumable):
        shutil.rmtree(run_dir, ignore_errors=True)
        res.run_dir = None


def _check_launch(spec, *, hosts, job_timeout, state_file, run_dir, resume):
    """The arguments of :func:`launch` checked, before anything is created: ``(spec, (prior records, prior task
    reports), hosts, run_dir, state_file, job_timeout, pickled spec)``; a resumed run's spec starts where the state
    file ends."""
    if not isinstance(spec, RunSpec):
        raise TypeError(f"spec must be a RunSpec, got {type(spec).__name__}")
    if job_timeout is not None:
        job_timeout = checks.seconds("job_timeout", job_timeout)
    if hosts is not None:  # absolute: mpiexec runs in the package's folder (it exists on every host)
        hosts = check_hostfile("hosts", hosts).absolute()
    if run_dir is not None:
        run_dir = checks.output_dir("run_dir", run_dir).absolute()
    if state_file is not None:
        state_file = checks.output_file("state_file", state_file)
    prior = ([], [])
    if resume is not None:  # (the records and task reports of the run it continues)
        spec, prior = continued(spec, resume)
    if hosts is None:
        check_host_memory(spec)
    try:  # the ranks get the spec pickled: a code or problem that does not pickle fails here, not in the job
        pickled = pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:
        raise ValueError(f"spec must pickle (decoders and rules must be module-level functions or classes; a model "
                         f"that does not pickle goes to the ranks by name: gclib.learning.load('package.module:"
                         f"function', ...)): {type(e).__name__}: {e}") from None
    return spec, prior, hosts, run_dir, state_file, job_timeout, pickled


def _make_run_dir(run_dir) -> Path:
    """The given run directory (created if missing), or a new temporary one when ``None``."""
    if run_dir is None:
        return Path(tempfile.mkdtemp(prefix="gclib-run-")).absolute()
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"run_dir {str(run_dir)!r} cannot be created: {os_reason(e)}") from None
    return run_dir
