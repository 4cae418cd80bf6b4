"""What a job comes to: the :class:`~gclib.runtime.spec.RunResult` built from what the master and the guards said
(:func:`job_result`), why a run stopped in words (a dead master, a held start-up, a timeout, ``mpiexec``'s own
report, the workers that died, stopped or never said goodbye: :func:`deaths_text`), the start-ups that were
started again, and the state file saved (:func:`save_state`).
"""
from __future__ import annotations

import math
import re

import numpy as np

from gclib.runtime.preflight import os_reason
from gclib.runtime.signals import signal_name
from gclib.runtime.spec import RunResult
from gclib.runtime.state import unpack_step_state


def job_result(job, prior, prior_tasks=()) -> RunResult:
    """The result of ``job`` (a :class:`gclib.runtime.job.Job` that ran), after the records ``prior`` and task
    reports ``prior_tasks`` of the run it resumed."""
    ev, spec = job.events, job.spec
    end = ev["end"] or {}
    start = ev["start"] or {}
    records = list(prior) + ev["records"]
    n_new = len(ev["records"])
    status, error = end.get("status", "error"), end.get("error", "")
    # the update's state after the last iteration finished: this job's, else the one it resumed from
    step_state = ev["state"] if ev["state"] is not None else spec.state0
    theta = end.get("theta")
    if theta is None:  # the master ended without a word: the parameters of that state, or where the run began
        if step_state is not None:
            theta = _unpacked_theta(step_state)
        else:
            theta = np.zeros(spec.problem.dim) if spec.theta0 is None else spec.theta0
    done = spec.start + n_new
    returncode = job.proc.returncode if job.proc is not None else None
    if job.interrupted is not None:
        status, error = "interrupted", (f"interrupted by {signal_name(job.interrupted)} after {done} of "
                                        f"{spec.iterations} iterations")
    elif job.events.get("failed") is not None:  # a rank's model failed: the run failed, even if the others went on
        status, error = "error", failure_text(job.events["failed"], done, spec.iterations)
    elif job.killed == "master":
        d = job.master_death
        how = d["name"] or f"exit code {d['code']}"
        status, error = "error", (f"the master (MPI rank 0, pid {d['pid']} on {d['host']}) died ({how}) after "
                                  f"{done} of {spec.iterations} iterations")
    elif job.killed == "startup":
        status, error = "error", ("the run could not start: a worker died before every rank was through "
                                  "MPI_Init, where the others wait for it")
    elif job.killed == "startup-stopped":
        which = ", ".join(f"MPI rank {r} ({i['stopped']}, pid {i['pid']} on {i['host']})"
                          for r, (i, _) in sorted(job.stopped.items()))
        status, error = "error", (f"the run could not start: {which} was stopped before every rank was through "
                                  f"MPI_Init, where the others wait for it")
    elif job.killed == "startup-timeout":
        status, error = "error", (f"the run could not start: not every rank was through MPI_Init "
                                  f"{job.startup_timeout:g} s after the job started (a rank that is frozen, "
                                  f"or a host that does not answer, holds the others there; --startup-timeout "
                                  f"sets the limit)")
    elif job.killed == "timeout":
        status, error = "error", (f"job killed after the job timeout of {job.job_timeout:g} s "
                                  f"({done} of {spec.iterations} iterations finished)")
    elif not end:
        status, error = "error", no_result_text(job, done)
    deaths = {w: dict(info) for w, info in job.deaths.items()}
    dead = sorted(set(end.get("dead_workers", [])) | set(deaths))
    silent = {int(k): v for k, v in (end.get("silent") or {}).items()}
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
    res = RunResult(records=records, theta=np.asarray(theta, dtype=float), status=status, error=error,
                    predicted=None if start.get("predicted") is None else
                    np.array([math.inf if p is None else p for p in start["predicted"]]),
                    dead_workers=dead, messages_sent=end.get("messages_sent", 0),
                    messages_received=end.get("messages_received", 0),
                    abandoned={int(k): v for k, v in (end.get("abandoned") or {}).items()},
                    drained=end.get("stale", 0), spec=start.get("spec", spec.describe()),
                    returncode=returncode, seconds=job.seconds, deaths=deaths,
                    pids={int(k): v for k, v in (start.get("pids") or {}).items()}, start=spec.start,
                    hosts={int(k): v for k, v in (start.get("hosts") or {}).items()},
                    bells=[int(w) for w in start.get("bells") or []],
                    tasks=[t for t in prior_tasks if t[1] < spec.start] + ev["tasks"],
                    step_state=step_state, network=(ev.get("network") or {}).get("measured"))
    if dead:
        res.error = (res.error + "; " if res.error else "") + deaths_text(deaths) + (
            "; the run treated them as stragglers that never answer" if status == "ok" else "")
    return res


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


def _unpacked_theta(packed):
    return unpack_step_state(packed)["theta"]


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


def save_state(res: RunResult, path, run_dir, args) -> None:
    """Write the state file to ``path``; when that fails, to the run directory, saying so in the error."""
    try:
        res.save(path, args=args)
        res.spec["state_file"] = str(path)
    except OSError as e:  # the state cannot be written where asked: keep it in the run directory
        fallback = run_dir / "state.json"
        res.save(fallback, args=args)
        res.spec["state_file"] = str(fallback)
        res.error = (res.error + "; " if res.error else "") + (
            f"could not write the state to {str(path)!r} ({os_reason(e)}), wrote {str(fallback)!r}")
