"""Faults at random moments of real runs, many times over, and what became of each run.

    python -m benchmarks.faults_runtime [--trials 5] [--kinds signal stop-start ...] [--seed 42] [--dim 10]

Every trial runs CRC with 4 workers (20 iterations; 60 when a worker is frozen, so that the run lasts well past the
~32 iterations after which a frozen worker used to exhaust the master's MPI send buffers) at time scale 0.02, and
does one of these to it (``--trials`` trials of each kind):

* ``signal``: a signal drawn among SIGKILL, SIGSEGV, SIGTERM, SIGINT and SIGHUP to one worker's rank, a delay
  drawn in [0, 3] s after the launch (start-up, iterations and the stop all fall in it; a moment before the rank
  exists waits for it); code tolerating 1;
* ``stop-start``, ``stop-start-2``: SIGSTOP to one (two) workers a delay drawn in [0, 2.5] s after the launch (or
  as soon as they exist, if later), which falls in the start-up (before ``MPI_Init``, in it, or in the hand-over of
  the spec) or the first iterations; the workers stay stopped; code tolerating 1 (2);
* ``stop-mid``, ``stop-mid-2``: SIGSTOP to one (two) workers once an iteration drawn in [1, 10] is reported; code
  tolerating 1 (2);
* ``stop-kill``: one worker stopped and another killed (SIGKILL) at such an iteration; code tolerating 2;
* ``stop-beyond``: two workers stopped at such an iteration, code tolerating 1: beyond tolerance;
* ``proxy``: Hydra's proxy (``hydra_pmi_proxy``, the parent of the ranks' guards) killed by SIGKILL at such an
  iteration: the job is lost.

Each trial ends as one of: ``survived`` (every iteration done, the job started again if a start-up was held),
``failed_resumable`` (the run stopped with an error, nothing of the job is left running, the state file loads,
and ``launch(spec, resume=STATE)`` finishes the run), or ``other`` (anything else: a hang to the job timeout,
processes left, a state that does not resume; its error is listed). Within tolerance (every kind but
``stop-beyond`` and ``proxy``) the expected outcome is ``survived``, beyond it ``failed_resumable``. Prints one
JSON object: per kind the expected outcome, the trials whose fault was delivered (one drawn for a moment after
the run's end is not), the surviving trials whose job was started again (the fault fell before every rank was
through ``MPI_Init``), the count of each outcome, the slowest trial's seconds and the unexpected trials with their
errors; ``all_as_expected``; the total seconds. Not part of ``python -m benchmarks`` (it takes several
minutes).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

SIGNALS = ("SIGKILL", "SIGSEGV", "SIGTERM", "SIGINT", "SIGHUP")
#: kind -> (stragglers the code tolerates, iterations, expected outcome)
KINDS = {"signal": (1, 20, "survived"), "stop-start": (1, 60, "survived"), "stop-start-2": (2, 60, "survived"),
         "stop-mid": (1, 60, "survived"), "stop-mid-2": (2, 60, "survived"), "stop-kill": (2, 60, "survived"),
         "stop-beyond": (1, 60, "failed_resumable"), "proxy": (1, 60, "failed_resumable")}


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[1])


def _plan(kind, rng):
    """What to do and when: ``(delay in seconds after the launch or None, iteration or None, [(rank, signal)])``;
    a rank ``-1`` is the proxy."""
    workers = rng.sample(range(4), 2)
    if kind == "signal":
        return rng.uniform(0.0, 3.0), None, [(workers[0] + 1, rng.choice(SIGNALS))]
    if kind in ("stop-start", "stop-start-2"):
        n = 2 if kind.endswith("-2") else 1
        return rng.uniform(0.0, 2.5), None, [(w + 1, "SIGSTOP") for w in workers[:n]]
    at = rng.randint(1, 10)
    if kind == "stop-mid":
        return None, at, [(workers[0] + 1, "SIGSTOP")]
    if kind in ("stop-mid-2", "stop-beyond"):
        return None, at, [(w + 1, "SIGSTOP") for w in workers]
    if kind == "stop-kill":
        return None, at, [(workers[0] + 1, "SIGSTOP"), (workers[1] + 1, "SIGKILL")]
    if kind == "proxy":
        return None, at, [(-1, "SIGKILL")]
    raise ValueError(f"unknown kind {kind!r}")


def trial(kind, t, rng, base, dim):
    """One trial of ``kind``: ``(outcome, details)``."""
    from gclib import schemes
    from gclib.learning import TandonAGD, make_problem
    from gclib.runtime import RunSpec, RuntimeFailure, launch
    from gclib.runtime.processes import job_processes, rank_processes
    from gclib.runtime.resume import load_state
    from gclib.stragglers import ShiftedExponential

    stragglers, iterations, _ = KINDS[kind]
    code = schemes.build("crc", workers=4, stragglers=stragglers)
    problem = make_problem("tandon-logistic", parts=4, seed=0, n_samples=400, dim=dim)
    spec = RunSpec(code, problem, TandonAGD(1.0 / problem.smoothness), ShiftedExponential(10, 0.01),
                   iterations=iterations, time_scale=0.02, seed=t, timeout=3.0, stop_timeout=3.0)
    run_dir = Path(base) / f"{kind}-{t}"
    delay, at, what = _plan(kind, rng)
    sent = []
    over = threading.Event()  # the run returned: nothing left to wait for

    def fire(wait=0.0):
        """Send the signals; with ``wait``, wait up to that long for a target rank that does not exist yet (a
        start-up fault drawn for a moment before the ranks are started falls on them as they start)."""
        end = time.monotonic() + wait
        while True:
            found = rank_processes(run_dir)
            if (all((0 if rank < 0 else rank) in found for rank, _ in what) or time.monotonic() >= end
                    or over.is_set()):
                break
            time.sleep(0.002)
        for rank, name in what:
            try:
                pid = _parent(_parent(found[0])) if rank < 0 and 0 in found else found.get(rank)
                if pid:
                    os.kill(pid, getattr(signal, name))
                    sent.append((rank, name))
            except (ProcessLookupError, OSError):  # the rank (or its guard) ended meanwhile
                pass

    def later():
        time.sleep(delay)
        fire(wait=30.0)

    def progress(rec):
        if at is not None and rec["iteration"] == at and not sent:
            fire()

    timer = threading.Thread(target=later) if delay is not None else None
    if timer:
        timer.start()
    t0 = time.perf_counter()
    details = {"trial": t, "delay": None if delay is None else round(delay, 3), "iteration": at, "what": what}
    state = run_dir / "state.json"
    try:
        res = launch(spec, run_dir=run_dir, progress=progress, job_timeout=120)
        outcome = "survived" if len(res.records) == iterations else "other"
        details["note"] = res.error[:200]
        details["started_again"] = len(res.restarts)
    except RuntimeFailure as e:
        outcome = "failed"
        details["error"] = str(e)[:300]
    over.set()
    if timer:
        timer.join()
    details["sent"] = sent
    details["seconds"] = round(time.perf_counter() - t0, 2)
    if job_processes(run_dir):
        details["left_running"] = job_processes(run_dir)
        outcome = "other"
    if outcome == "failed":
        try:
            done = load_state(state)["next_iteration"]
            again = launch(spec, resume=state, run_dir=run_dir / "resumed", job_timeout=120)
            outcome = "failed_resumable" if again.ok and len(again.records) == iterations else "other"
            details["resumed_at"] = done
        except (RuntimeFailure, ValueError, OSError) as e:
            details["resume_error"] = str(e)[:300]
            outcome = "other"
    return outcome, details


def run(trials=5, kinds=tuple(KINDS), seed=42, dim=10):
    rng = random.Random(seed)
    out = {}
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gclib-faults-") as base:
        for kind in kinds:
            expected = KINDS[kind][2]
            counts, unexpected, slowest, delivered, again = Counter(), [], 0.0, 0, 0
            for t in range(trials):
                outcome, details = trial(kind, t, rng, base, dim)
                counts[outcome] += 1
                delivered += bool(details["sent"])
                again += bool(details.get("started_again"))
                slowest = max(slowest, details["seconds"])
                if outcome != expected:
                    unexpected.append({"outcome": outcome, **details})
            out[kind] = {"expected": expected, "trials": trials, "delivered": delivered, "started_again": again,
                         "outcomes": dict(counts),
                         "slowest_seconds": slowest, "unexpected": unexpected}
    return {"benchmark": "faults_runtime", "trials_per_kind": trials, "trials": trials * len(kinds), "seed": seed,
            "dim": dim, "kinds": out, "all_as_expected": all(not k["unexpected"] for k in out.values()),
            "seconds": round(time.perf_counter() - t_all, 1)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=5, help="trials of each kind")
    p.add_argument("--kinds", nargs="+", choices=list(KINDS), default=list(KINDS))
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--dim", type=int, default=10)
    a = p.parse_args(argv)
    print(json.dumps(run(a.trials, a.kinds, a.seed, a.dim)))


if __name__ == "__main__":
    main()
