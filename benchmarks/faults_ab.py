"""What the guards buy: the faults the runtime must survive, with and without a guard per rank.

    python -m benchmarks.faults_ab [--trials 10] [--scenarios kill freeze kill-remote] [--seed 42] [--out FILE]
    python -m benchmarks.faults_ab --render FILE docs/runtime.md

Every rank normally runs under a guard (:mod:`gclib.runtime.guard`): a process that forks and execs the rank,
turns its death by a signal into an exit, reports deaths and stops, and holds a dead worker's sockets. In the arm
without it, ``mpiexec`` starts the rank's program itself (an ``mpiexec`` that drops the guard:
:func:`benchmarks.runtime_arms.unguarded_mpiexec`). Each scenario runs
``--trials`` times in each arm, the arms taking turns:

* ``kill``: CRC, 4 workers tolerating 1, 20 iterations; one worker, drawn, killed by SIGKILL once an iteration
  drawn in [1, 8] is reported;
* ``freeze``: the same code, 40 iterations (past the ~32 after which a frozen worker used to exhaust the master's
  shared-memory send cells); one worker stopped by SIGSTOP at such an iteration, and left stopped;
* ``kill-remote``: three hosts as network namespaces (:class:`gclib.runtime.namespace_hosts.LocalHosts`, slots 3, 2, 2;
  the ranks talk over TCP), CRC with 6 workers tolerating 1, 20 iterations; a worker of the second host (MPI rank
  3 or 4) killed by SIGKILL at such an iteration. Left out, saying why, where the namespaces cannot be made.

A trial survived when the run finished every iteration with status ``ok`` and nothing of the job was left
running. Prints one JSON object (and writes it to ``--out``): per scenario and arm the trials, the faults
delivered, the runs that survived, those that left processes running, the Wilson 95% interval of the share
survived (:func:`gclib.stats.wilson`), the median number of iterations between the fault and the first record in
which the master knew the worker silent or dead (survived runs), the median seconds of a trial, the first errors,
and every trial. ``--render`` writes the table of a saved result into the block between ``<!-- guard-ab -->`` and
``<!-- /guard-ab -->`` of a Markdown file. Not part of ``python -m benchmarks`` (it takes minutes).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import signal
import statistics
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

from benchmarks.runtime_arms import rank_pids, unguarded_mpiexec
from gclib import schemes
from gclib.learning import TandonAGD, make_problem
from gclib.runtime import RuntimeFailure, RunSpec, launch, namespace_hosts
from gclib.runtime.processes import job_processes
from gclib.stats import wilson
from gclib.stragglers import ShiftedExponential

#: scenario -> (workers, stragglers tolerated, iterations, signal, ranks the fault may hit; None: any worker)
SCENARIOS = {"kill": (4, 1, 20, "SIGKILL", None), "freeze": (4, 1, 40, "SIGSTOP", None),
             "kill-remote": (6, 1, 20, "SIGKILL", (3, 4))}
#: Ranks per local host of ``kill-remote`` (the master and workers 0, 1 on h0; workers 2, 3 on h1; 4, 5 on h2).
SLOTS = (3, 2, 2)
ARMS = ("with_guard", "without_guard")
#: How the arm without guards is made (said in the output).
SWITCH = "mpiexec starts python -m gclib.runtime.rank itself (benchmarks.runtime_arms.unguarded_mpiexec)"
#: Seconds a trial's job may take (a survived one takes under 15 here): a hung job counts as not survived.
JOB_TIMEOUT = 45.0
#: The block of a Markdown file that ``--render`` fills.
BEGIN, END = "<!-- guard-ab -->", "<!-- /guard-ab -->"


def trial(scenario, arm, t, rng, base, hosts=None, unguarded=None):
    """One run of ``scenario`` in ``arm`` (trial ``t``; ``unguarded``: the ``mpiexec`` of the arm without guards):
    a dict with ``survived``, ``delivered`` and details."""
    workers, stragglers, iterations, sig, ranks = SCENARIOS[scenario]
    code = schemes.build("crc", workers=workers, stragglers=stragglers)
    problem = make_problem("tandon-logistic", parts=workers, seed=0, n_samples=400, dim=10)
    spec = RunSpec(code, problem, TandonAGD(1.0 / problem.smoothness), ShiftedExponential(10, 0.01),
                   iterations=iterations, time_scale=0.02, seed=t, timeout=5.0, stop_timeout=3.0)
    rank = rng.choice(ranks) if ranks else rng.randint(1, workers)
    at = rng.randint(1, 8)
    run_dir = Path(base) / f"{scenario}-{arm}-{t}"
    sent = []

    def progress(rec):
        if rec["iteration"] == at and not sent:
            pid = rank_pids(run_dir).get(rank)
            if pid:
                try:
                    os.kill(pid, getattr(signal, sig))
                    sent.append(pid)
                except ProcessLookupError:
                    pass

    options = dict(hosts.launch_options) if hosts is not None else {}
    if arm == "without_guard":
        options["mpiexec"] = unguarded
    t0 = time.perf_counter()
    out = {"trial": t, "rank": rank, "iteration": at}
    try:
        res = launch(spec, run_dir=run_dir, progress=progress, job_timeout=JOB_TIMEOUT, check=False, **options)
    except RuntimeFailure as e:  # (check=False: only a refused start-up raises)
        res = e.result
    out["seconds"] = round(time.perf_counter() - t0, 2)
    left = job_processes(run_dir) + ([p for ps in hosts.processes().values() for p in ps] if hosts else [])
    for pid in left:  # nothing may outlive a trial, whatever the arm did
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    out["delivered"] = bool(sent)
    out["survived"] = bool(res.ok and len(res.records) == iterations and not left)
    if left:
        out["left_running"] = len(left)
    w = rank - 1
    known = [r["iteration"] for r in res.records if w in (r.get("silent") or []) or w in (r.get("dead") or [])]
    if out["survived"] and known:
        out["known_after"] = known[0] - at
    if not out["survived"]:
        out["error"] = (f"status {res.status}, {len(res.records)} of {iterations} iterations"
                        + (f", {len(left)} processes left running" if left else "") + f": {res.error}")[:300]
    return out


def summarize(trials) -> dict:
    """Counts, the Wilson interval of the share survived, the median delay of the master's knowledge, the errors."""
    n = len(trials)
    k = sum(t["survived"] for t in trials)
    lo, hi = wilson(k, n)
    known = [t["known_after"] for t in trials if "known_after" in t]
    return {"trials": n, "delivered": sum(t["delivered"] for t in trials), "survived": k,
            "left_running": sum("left_running" in t for t in trials), "wilson95": [round(lo, 3), round(hi, 3)],
            "median_known_after": statistics.median(known) if known else None,
            "median_seconds": statistics.median(t["seconds"] for t in trials) if trials else None,
            "errors": [t["error"] for t in trials if "error" in t][:3], "runs": trials}


def run(trials=10, scenarios=tuple(SCENARIOS), seed=42) -> dict:
    rng = random.Random(seed)
    out, skipped = {}, {}
    t_all = time.perf_counter()
    with contextlib.ExitStack() as stack:
        base = stack.enter_context(tempfile.TemporaryDirectory(prefix="gclib-faults-ab-"))
        unguarded = stack.enter_context(unguarded_mpiexec())
        for scenario in scenarios:
            hosts = None
            if scenario == "kill-remote":
                why = namespace_hosts.why_not()
                if why is None:
                    try:
                        hosts = namespace_hosts.LocalHosts(SLOTS, directory=Path(base) / "hosts").__enter__()
                    except namespace_hosts.HostsUnavailable as e:
                        why = str(e)
                if why is not None:
                    skipped[scenario] = why
                    continue
            try:
                done = {arm: [] for arm in ARMS}
                for t in range(trials):
                    for arm in ARMS if t % 2 == 0 else ARMS[::-1]:  # the arms take turns going first
                        done[arm].append(trial(scenario, arm, t, rng, base, hosts, unguarded))
            finally:
                if hosts is not None:
                    hosts.close()
            out[scenario] = {arm: summarize(done[arm]) for arm in ARMS}
    return {"benchmark": "faults_ab", "switch": SWITCH, "trials_per_arm": trials, "seed": seed,
            "scenarios": out, "skipped": skipped, "machine": {"cpus": os.cpu_count(), "python":
                                                              platform.python_version(), "load": os.getloadavg()},
            "mpich": _mpich_version(), "seconds": round(time.perf_counter() - t_all, 1)}


def _mpich_version():
    try:
        return version("mpich")
    except Exception:
        return None


def table(doc) -> str:
    """The Markdown table of a saved result (one row per scenario and arm)."""
    rows = ["| fault | guards | survived | Wilson 95% | iterations until the master knew (median) | seconds a "
            "trial took (median) |", "|---|---|---|---|---|---|"]
    for scenario, arms in doc["scenarios"].items():
        for arm in ARMS:
            a = arms[arm]
            lo, hi = a["wilson95"]
            known = "-" if a["median_known_after"] is None else f"{a['median_known_after']:g}"
            rows.append(f"| {scenario} | {'with' if arm == 'with_guard' else 'without'} | {a['survived']}/"
                        f"{a['trials']} | [{lo:.2f}, {hi:.2f}] | {known} | {a['median_seconds']:.1f} |")
    note = "".join(f"\n\n{s}: not run ({why})." for s, why in doc.get("skipped", {}).items())
    return "\n".join(rows) + note + (f"\n\n{doc['trials_per_arm']} trials per arm, seed {doc['seed']}, mpich "
                                     f"{doc.get('mpich')}, {doc['machine']['cpus']} cores, {doc['seconds']:g} s "
                                     f"in all (`benchmarks/faults_ab.json`).")


def render(saved, markdown) -> None:
    """Write the table of the result saved in ``saved`` into ``markdown``, between :data:`BEGIN` and :data:`END`."""
    doc = json.loads(Path(saved).read_text())
    path = Path(markdown)
    text = path.read_text()
    i, j = text.index(BEGIN) + len(BEGIN), text.index(END)
    path.write_text(text[:i] + "\n" + table(doc) + "\n" + text[j:])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=10, help="trials of each scenario in each arm")
    p.add_argument("--scenarios", nargs="+", choices=list(SCENARIOS), default=list(SCENARIOS))
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", help="also write the JSON object to this file")
    p.add_argument("--render", nargs=2, metavar=("SAVED", "MARKDOWN"),
                   help="write the table of a saved result into a Markdown file's guard-ab block, and stop")
    a = p.parse_args(argv)
    if a.render:
        render(*a.render)
        return
    doc = run(a.trials, a.scenarios, a.seed)
    text = json.dumps(doc)
    if a.out:
        Path(a.out).write_text(json.dumps(doc, indent=1) + "\n")
    print(text)


if __name__ == "__main__":
    main()
