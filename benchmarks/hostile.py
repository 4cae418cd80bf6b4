"""Hostile and careless inputs to every command that reads a user's file or loops on a user's number, each run in a
fresh process with a time and a memory limit; prints one JSON object: every case's outcome and the counts.

``python -m benchmarks.hostile [--only NAME ...] [--skip-mpi] [--timeout S] [--max-mb MB] [--gclib DIR ...]``

Before and after a change, paired under the same load: ``git archive REF gclib | tar -x -C /tmp/before`` and
``--gclib /tmp/before --gclib .`` (every case runs with each in turn; one summary per gclib).

A case names the command line (or the Python code) it runs, the files it makes first, and what a careful command
does with it: refuse it (one line ``gclib: error: ...`` on stderr, exit 2), run it (exit 0), fail (exit 1) or stop
on Ctrl-C (exit 130), with optional checks of what it leaves behind. Each outcome is one of:

* ``traceback``: a Python traceback on stderr, or a death by a signal (a C++ ``bad_alloc`` aborts); those whose
  frames are all outside gclib (Python's own start-up, the console script finding the package, where a Ctrl-C
  cannot be gclib's to report) are counted apart too;
* ``hang``: still running at the time limit; ``memory``: resident memory above the limit (the process is killed);
* ``echo``: the output quotes the file (a marker the file holds appears in stdout or stderr);
* ``silent_wrong``: an exit code other than the one asked for, or a check of what it left failed;
* ``noisy``: the refusal came, but after other lines on stderr (progress bars, warnings: a late refusal);
* ``ok``.

The counts and the largest time and peak memory (``VmHWM`` of the command's process, read every 0.05 s) are the
measure of the hostile-input pass; the machine is shared, so times are noisy. ``hwloc_left``: Hydra's topology
files (``/tmp/hydra_hwloc_xmlfile_*``) a case made and nobody holds after it (counted, then removed).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
#: A value the environment of every case holds: the output of a command that reads /proc/self/environ must not show it.
SECRET = "hostile-secret-7f3a9c"
#: Lines of a shadow-like file the cases write (the output must quote none of them).
SHADOW = "root:*:20228:0:99999:7:::\ndaemon:*:20228:0:99999:7:::\nbin:*:20228:0:99999:7:::\n"
SHADOW_MARKS = ("root:*", "daemon:*", "20228")
HEADER = "iteration,worker,task,seconds\n"


@dataclass
class Case:
    name: str
    argv: list  # a gclib command line, or ["-c", code] for Python code
    expect: int = 2  # the exit code of a careful command
    marks: tuple = ()  # text the output must not contain (the file's content)
    check: Optional[Callable] = None  # after the run: None when fine, else why not
    setup: Optional[Callable] = None  # before each run (with the gclib it runs): files it needs
    mpi: bool = False
    interrupt_after: Optional[float] = None  # seconds, then SIGINT
    kill_proxy_after: Optional[float] = None  # seconds after the job's proxy wrote its topology file, then SIGKILL
    # to the job's Hydra proxies (a proxy lost while the run goes on)
    env: dict = field(default_factory=dict)


# ------------------------------------------------------------------------------------------------ the files
def _trace(path: Path, iterations=20, workers=8, scale=0.01, seed=1, const=None):
    import numpy as np

    rng = np.random.default_rng(seed)
    d = (scale + rng.exponential(scale, (iterations, workers))) if const is None else np.full((iterations, workers),
                                                                                              const)
    with open(path, "w") as fh:
        fh.write(HEADER)
        for i in range(iterations):
            for w in range(workers):
                fh.write(f"{i},{w},1,{float(d[i, w])!r}\n")


def _gzip_bomb(path: Path, rows: int):
    """A gzip of a trace of ``rows`` rows (each ``0,0,1,1``), written from one compressed block repeated."""
    line = b"0,0,1,1\n"
    block = line * (1 << 17)
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as fh:
        fh.write(comp.compress(HEADER.encode()))
        for _ in range(rows // (1 << 17)):
            fh.write(comp.compress(block))
        fh.write(comp.flush())


def make_files(d: Path) -> dict:
    import numpy as np

    f = {}
    f["good"] = d / "good.csv"
    _trace(f["good"])
    f["sparse"] = d / "sparse.csv"
    with open(f["sparse"], "wb") as fh:
        fh.truncate(2 << 30)
    f["header_sparse"] = d / "header-sparse.csv"
    with open(f["header_sparse"], "wb") as fh:
        fh.write(HEADER.encode())
        fh.truncate(1 << 30)
    f["bomb"] = d / "bomb.csv.gz"
    _gzip_bomb(f["bomb"], 100_000_000)
    f["bomb_delays"] = d / "bomb-delays.csv.gz"
    with gzip.open(f["bomb_delays"], "wb", compresslevel=9) as fh:
        row = b",".join([b"1"] * 1000) + b"\n"
        fh.write(row * 100_000)
    f["fifo"] = d / "fifo.csv"
    os.mkfifo(f["fifo"])
    f["shadow"] = d / "shadow"
    f["shadow"].write_text(SHADOW)
    os.chmod(f["shadow"], 0o600)
    f["denormal"] = d / "denormal.csv"
    _trace(f["denormal"], scale=1e-320)
    f["huge"] = d / "huge.csv"
    _trace(f["huge"], scale=1e300)
    f["zeros"] = d / "zeros.csv"
    _trace(f["zeros"], const=0.0)
    f["constant"] = d / "constant.csv"
    _trace(f["constant"], const=0.5)
    rng = np.random.default_rng(2)
    delays = 1 + rng.exponential(1.0, (4, 12))
    f["delays"] = d / "delays.npy"
    np.save(f["delays"], delays)
    f["delays_overflow"] = d / "overflow.csv"
    f["delays_overflow"].write_text("\n".join(",".join(["1", "2", "1e400", "1"]) for _ in range(4)) + "\n")
    f["delays_complex"] = d / "complex.npy"
    np.save(f["delays_complex"], delays + 1j)
    f["delays_bool"] = d / "bool.npy"
    np.save(f["delays_bool"], delays > 1.5)
    f["npy_huge_header"] = d / "huge-header.npy"
    with open(f["npy_huge_header"], "wb") as fh:  # a header that says 100000 x 100000 doubles, and no data
        np.lib.format.write_array_header_1_0(fh, {"descr": "<f8", "fortran_order": False, "shape": (100000, 100000)})
    f["wide_many_columns"] = d / "wide-columns.csv"
    f["wide_many_columns"].write_text(",".join(str(i) for i in range(2_000_000)) + "\n" +
                                      ",".join("1" for _ in range(2_000_000)) + "\n")
    f["existing_out"] = d / "existing.csv"
    shutil.copy(f["good"], f["existing_out"])
    return f


def _run_state(d: Path, name: str, extra: list) -> Optional[Path]:
    """A state file of a run over MPI that stopped early (two workers killed, beyond the code's tolerance), written
    by the gclib the case runs with."""
    state = d / f"{name}.json"
    state.unlink(missing_ok=True)
    cmd = [PY, "-m", "gclib", "run", "--workers", "4", "--iterations", "6", "--kill", "0:2,1:2", "--state",
           str(state), "--json", *extra]
    subprocess.run(cmd, capture_output=True, text=True, env=_env(d), cwd=str(d), timeout=300)  # (not this folder:
    # python -m would import its gclib first)
    return state if state.exists() else None


def _old_layout(state: Path, d: Path) -> Path:
    """The state file as an earlier gclib wrote it: its spec without the fields added since (the exchange, the
    step's description), with the layout version of the time."""
    doc = json.loads(state.read_text())
    doc["spec"].pop("exchange", None)
    doc["spec"].pop("step", None)
    doc["version"] = 2
    out = d / "old-state.json"
    out.write_text(json.dumps(doc))
    return out


# ------------------------------------------------------------------------------------------------ the cases
def cases(f: dict, d: Path, mpi: bool) -> list:
    """Every case: files that take memory, FIFOs and files of the system against every reader, then the rest."""
    g = str(f["good"])
    out = str(d / "out.csv")
    c = []
    # memory taken by tiny inputs
    for key in ("sparse", "header_sparse", "bomb"):
        p = str(f[key])
        c += [Case(f"{key}: trace convert csv", ["trace", "convert", p, "--format", "csv", "--out", out]),
              Case(f"{key}: trace convert wide", ["trace", "convert", p, "--format", "wide", "--out", out]),
              Case(f"{key}: trace convert auto", ["trace", "convert", p, "--out", out]),
              Case(f"{key}: advise --trace", ["advise", "--trace", p, "--workers", "4"]),
              Case(f"{key}: sequential --delays", ["sequential", "--delays", p, "--scheme", "gc", "--s", "1"])]
    c += [Case("bomb of delays: sequential --delays", ["sequential", "--delays", str(f["bomb_delays"]), "--scheme",
                                                       "gc", "--s", "1"]),
          Case("npy header of 80 GB: sequential --delays", ["sequential", "--delays", str(f["npy_huge_header"]),
                                                            "--scheme", "gc", "--s", "1"]),
          Case("2 million columns: trace convert wide", ["trace", "convert", str(f["wide_many_columns"]), "--format",
                                                         "wide", "--out", out])]
    # FIFOs and files of the system
    for key, p, marks in (("fifo", str(f["fifo"]), ()), ("environ", "/proc/self/environ", (SECRET,)),
                          ("shadow", str(f["shadow"]), SHADOW_MARKS)):
        c += [Case(f"{key}: trace convert csv", ["trace", "convert", p, "--format", "csv", "--out", out], marks=marks),
              Case(f"{key}: trace convert wide", ["trace", "convert", p, "--format", "wide", "--out", out],
                   marks=marks),
              Case(f"{key}: advise --trace", ["advise", "--trace", p, "--workers", "4"], marks=marks),
              Case(f"{key}: sequential --delays", ["sequential", "--delays", p, "--scheme", "gc", "--s", "1"],
                   marks=marks),
              Case(f"{key}: advise --network FILE", ["advise", "--trace", g, "--workers", "4", "--network", p],
                   marks=marks),
              Case(f"{key}: run --resume", ["run", "--resume", p], marks=marks),
              Case(f"{key}: run --hosts", ["run", "--scheme", "crc", "--workers", "4", "--stragglers", "1",
                                           "--hosts", p], marks=marks)]
    return c + _other_cases(f, d, mpi)


def _other_cases(f: dict, d: Path, mpi: bool) -> list:
    """Loops driven by a user's number, tracebacks, late refusals, options accepted and wrong, an early Ctrl-C, and
    (``mpi``) the cases that start MPI jobs."""
    g = str(f["good"])
    out = str(d / "out.csv")
    # loops without a bound
    c = [Case("advise --holdout 1e-300", ["advise", "--trace", g, "--holdout", "1e-300"]),
          Case("advise --workers 10000 --sequential", ["advise", "--trace", g, "--workers", "10000", "--sequential",
                                                       "--json"]),
          Case("sequential.advice(K = 10**6)", ["-c", "import gclib.sequential as s; from gclib.stragglers import "
                                                      "ShiftedExponential as M; s.advice(M(10, .01), 10**6, 3)"],
               expect=1),
          Case("sequential.run limit=-1", ["-c", "import numpy as np, gclib.sequential as s; "
                                                 "r = s.run('gc', np.ones((4, 6)), s=1, limit=-1); print(r)"],
               expect=1)]
    # tracebacks and late refusals
    c += [Case("advise on denormal times", ["advise", "--trace", str(f["denormal"]), "--workers", "4"]),
          Case("advise on times near 1e300", ["advise", "--trace", str(f["huge"]), "--workers", "4"]),
          Case("advise on all-zero times", ["advise", "--trace", str(f["zeros"]), "--workers", "4"]),
          Case("advise on constant times", ["advise", "--trace", str(f["constant"]), "--workers", "4"]),
          Case("advise --figure fig.txt", ["advise", "--trace", g, "--workers", "4", "--figure", str(d / "fig.txt")]),
          Case("advise --network latency=1e308,bandwidth=1e-308",
               ["advise", "--trace", g, "--workers", "4", "--network", "latency=1e308,bandwidth=1e-308"])]
    # accepted and wrong
    c += [Case("trace convert --stages max on a CSV", ["trace", "convert", g, "--stages", "max", "--out", out]),
          Case("sequential --delays overflowing to inf", ["sequential", "--delays", str(f["delays_overflow"]),
                                                          "--scheme", "gc", "--s", "1"]),
          Case("sequential --delays complex", ["sequential", "--delays", str(f["delays_complex"]), "--scheme", "gc",
                                               "--s", "1"]),
          Case("sequential --delays boolean", ["sequential", "--delays", str(f["delays_bool"]), "--scheme", "gc",
                                               "--s", "1"]),
          Case("sequential --max-delay without --sweep", ["sequential", "--delays", str(f["delays"]), "--scheme",
                                                          "gc", "--s", "1", "--max-delay", "3"]),
          Case("train --scheme gc --groups 3", ["train", "--scheme", "gc", "--groups", "3"])]
    c.append(Case("Ctrl-C in the first 0.1 s of gclib list", ["list"], expect=130, interrupt_after=-0.1))
    if mpi:
        c += _mpi_cases(f, d)
    return c


def _no_run_dirs(r: dict):
    """None when every run directory left in TMPDIR is named on stderr (to be resumed or read), else why not."""
    left = sorted(p.name for p in r["tmp"].glob("gclib-run-*") if p.name not in r["stderr"])
    return f"left {len(left)} run directories in TMPDIR that no error names: {left}" if left else None


def _json_status_not_ok(stdout: str):
    try:
        doc = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return "no JSON on stdout"
    s = doc.get("summary", doc)
    if doc.get("status") == "ok" and s.get("final_loss") is None:
        return "a diverged run reports status ok and no final loss"
    return None


def _mpi_cases(f: dict, d: Path) -> list:
    c = []
    delays = str(f["delays"])
    existing = f["existing_out"]
    before = existing.read_bytes()
    c.append(Case("run --lr 1e308", ["run", "--scheme", "crc", "--workers", "4", "--stragglers", "1", "--step", "gd",
                                     "--lr", "1e308", "--iterations", "3"], expect=1, mpi=True))
    c.append(Case("run --lr 1e308 --json", ["run", "--scheme", "crc", "--workers", "4", "--stragglers", "1", "--step",
                                            "gd", "--lr", "1e308", "--iterations", "3", "--json"], expect=1, mpi=True,
                  check=lambda r: _json_status_not_ok(r["stdout"])))
    c.append(Case("sequential --mpi --json, the run fails", ["sequential", "--delays", delays, "--scheme", "gc",
                                                             "--s", "1", "--mpi", "--kill", "0:1,1:1", "--json"],
                  expect=1, mpi=True, check=_no_run_dirs))
    c.append(Case("sequential --mpi, the run fails", ["sequential", "--delays", delays, "--scheme", "gc", "--s", "1",
                                                      "--mpi", "--kill", "0:1,1:1"], expect=1, mpi=True,
                  check=_no_run_dirs))
    c.append(Case("sequential --mpi, Ctrl-C", ["sequential", "--delays", delays, "--scheme", "gc", "--s", "1",
                                               "--mpi"], expect=130, mpi=True, interrupt_after=4.0,
                  check=_no_run_dirs))
    c.append(Case("profile that fails at once keeps --out", ["profile", "--workers", "2", "--iterations", "3",
                                                             "--job-timeout", "0.5", "--no-network", "--quiet",
                                                             "--out", str(existing)], expect=1, mpi=True,
                  setup=lambda: existing.write_bytes(before),
                  check=lambda r: None if existing.read_bytes() == before else "--out was overwritten"))
    c.append(Case("run whose Hydra proxy is killed", ["run", "--scheme", "crc", "--workers", "4", "--stragglers", "1",
                                                      "--iterations", "5000", "--time-scale", "0.02"],
                  expect=1, mpi=True, kill_proxy_after=1.0))
    two, old = d / "two-phase.json", d / "old-state.json"
    c.append(Case("run --resume TWO-PHASE --exchange messages", ["run", "--resume", str(two), "--exchange",
                                                                 "messages"], mpi=True,
                  setup=lambda: _run_state(d, "two-phase", ["--scheme", "rmg", "--load", "2", "--exchange",
                                                            "two-phase"])))
    c.append(Case("run --resume of an older layout", ["run", "--resume", str(old)], mpi=True,
                  setup=lambda: _old_layout(_run_state(d, "plain", ["--scheme", "crc", "--stragglers", "1"]), d),
                  check=lambda r: None if "older" in r["stderr"] else "the error does not say the file is older"))
    return c


# ------------------------------------------------------------------------------------------------ running
#: The folder whose gclib the cases import (``--gclib``: another checkout, e.g. an earlier commit's).
GCLIB = [ROOT]


def _env(d: Path) -> dict:
    tmp = d / "tmpdir"
    tmp.mkdir(exist_ok=True)
    return dict(os.environ, PYTHONPATH=str(GCLIB[0]), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg",
                TMPDIR=str(tmp), HOSTILE_SECRET=SECRET)


def _children(pid: int) -> list:
    """Every process descended from ``pid`` (Linux ``/proc``)."""
    parent = {}
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                with open(f"/proc/{e}/stat") as fh:
                    parent[int(e)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def _holds_topology(pid: int) -> bool:
    """Whether a process under ``pid`` holds one of Hydra's topology files open."""
    for c in _children(pid):
        try:
            if any(os.readlink(f"/proc/{c}/fd/{fd}").startswith(HWLOC) for fd in os.listdir(f"/proc/{c}/fd")):
                return True
        except OSError:
            continue
    return False


def _kill_proxies(pid: int) -> int:
    """SIGKILL the Hydra proxies under ``pid``; returns how many."""
    n = 0
    for c in _children(pid):
        try:
            with open(f"/proc/{c}/comm") as fh:
                if fh.read().strip() != "hydra_pmi_proxy":
                    continue
            os.kill(c, signal.SIGKILL)
            n += 1
        except OSError:
            pass
    return n


HWLOC = "/tmp/hydra_hwloc_xmlfile_"


def _hwloc_files() -> set:
    return {str(p) for p in Path("/tmp").glob("hydra_hwloc_xmlfile_*")}


def _hwloc_held() -> set:
    """The topology files some process holds open (a job still running, ours or another's)."""
    held = set()
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            for fd in os.listdir(f"/proc/{e}/fd"):
                try:
                    t = os.readlink(f"/proc/{e}/fd/{fd}")
                except OSError:
                    continue
                if t.startswith(HWLOC):
                    held.add(t)
        except OSError:
            pass
    return held


def _kb(pid: int, key: str) -> int:
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _command(case: Case) -> list:
    if case.argv[0] == "-c":  # library code: a ValueError is its refusal (exit 1)
        return [PY, "-c", "import sys\ntry:\n" + "".join(f"    {ln}\n" for ln in case.argv[1].split("\n"))
                + "except ValueError as e:\n    print('ValueError:', e, file=sys.stderr); sys.exit(1)\n"]
    if case.interrupt_after is not None and case.interrupt_after < 0:
        return [str(Path(PY).parent / "gclib"), *case.argv]  # the console script, as a user starts it
    return [PY, "-m", "gclib", *case.argv]


def _watch(proc, case: Case, timeout: float, max_mb: float) -> dict:
    """Follow ``proc`` to its end: its peak memory, the signal and the proxy kill the case asks for, and a stop at
    the time or memory limit."""
    t0 = time.perf_counter()
    w = {"peak": 0, "stopped": None, "sent": False, "proxies": 0}
    delay = case.interrupt_after
    if delay is not None and delay < 0:
        delay = random.uniform(0.0, -delay)
    while proc.poll() is None:
        w["peak"] = max(w["peak"], _kb(proc.pid, "VmHWM"))
        now = time.perf_counter() - t0
        if delay is not None and not w["sent"] and now >= delay:
            proc.send_signal(signal.SIGINT)
            w["sent"] = True
        if case.kill_proxy_after is not None and not w["proxies"]:  # once the proxy wrote its file, and later
            if w.get("held") is None and _holds_topology(proc.pid):
                w["held"] = now
            if w.get("held") is not None and now - w["held"] >= case.kill_proxy_after:
                w["proxies"] = _kill_proxies(proc.pid)
        w["stopped"] = "hang" if now > timeout else "memory" if _kb(proc.pid, "VmRSS") / 1024 > max_mb else None
        if w["stopped"]:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            break
        time.sleep(0.05 if delay is None or w["sent"] else 0.002)
    return w


def _outcome(case: Case, rc, stdout: str, stderr: str, stopped, tmp: Path) -> dict:
    """The outcome of a case that ran (see the module's docstring), with where a traceback came from."""
    if stopped:
        return {"outcome": stopped}
    if "Traceback" in stderr or (rc is not None and rc < 0) or "bad_alloc" in stderr:
        frames = [ln.strip() for ln in stderr.splitlines() if ln.strip().startswith("File ")]
        # before gclib's first line ran: Python's own start-up (site), or the console script finding the package
        return {"outcome": "traceback", "where": frames[-1][:200] if frames else "",
                "before_gclib": not any("/gclib/" in f for f in frames)}
    if any(m in stdout + stderr for m in case.marks):
        return {"outcome": "echo"}
    if rc != case.expect:
        return {"outcome": "silent_wrong", "why": f"exit {rc}, expected {case.expect}"}
    if case.expect == 2 and not (len(stderr.strip().splitlines()) == 1 and stderr.startswith("gclib: error: ")):
        return {"outcome": "noisy"}
    why = case.check({"stdout": stdout, "stderr": stderr, "tmp": tmp}) if case.check else None
    return {"outcome": "silent_wrong", "why": why} if why else {"outcome": "ok"}


def _hwloc_left(before: set) -> int:
    """Hydra's topology files made since ``before`` that nobody holds: counted, then removed (the next cases start
    from a clean /tmp)."""
    left = (_hwloc_files() - before) - _hwloc_held()
    for p in left:
        try:
            os.unlink(p)
        except OSError:
            pass
    return len(left)


def run_case(case: Case, d: Path, timeout: float, max_mb: float) -> dict:
    tmp = d / "tmpdir"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    if case.setup is not None:
        case.setup()
    hw_before = _hwloc_files()
    t0 = time.perf_counter()
    proc = subprocess.Popen(_command(case), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env={**_env(d), **case.env}, text=True, errors="replace", cwd=str(d),
                            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    w = _watch(proc, case, timeout, max_mb)
    stdout, stderr = proc.communicate()
    rc = proc.returncode
    if rc == -signal.SIGINT and w["sent"]:  # died of the signal before Python took it: quiet, as 130
        rc = 130
    tail = stderr.strip().splitlines()[-1][:300] if stderr.strip() else ""
    res = {"name": case.name, "rc": rc, "seconds": round(time.perf_counter() - t0, 2),
           "peak_mb": round(w["peak"] / 1024, 1), "stderr_lines": len(stderr.strip().splitlines()),
           "last_line": "".join(ch if ch.isprintable() else "?" for ch in tail),
           **_outcome(case, rc, stdout, stderr, w["stopped"], tmp)}
    if case.kill_proxy_after is not None:
        res["proxies_killed"] = w["proxies"]
    time.sleep(0.2 if case.mpi else 0)
    res["hwloc_left"] = _hwloc_left(hw_before)
    return res


def summary(gclib: Path, results: list) -> dict:
    """The counts of outcomes of ``results`` (one gclib's), the largest time and peak memory."""
    kinds = ("traceback", "hang", "memory", "echo", "silent_wrong", "noisy", "ok")
    counts = {k: sum(r["outcome"] == k for r in results) for k in kinds}
    counts["traceback_before_gclib_ran"] = sum(bool(r.get("before_gclib")) for r in results)
    finished = [r for r in results if r["outcome"] not in ("hang", "memory")]
    return {"gclib": str(gclib), "cases": len(results), "counts": counts,
            "slower_than_10s": sum(r["seconds"] > 10 for r in results),
            "max_seconds": max((r["seconds"] for r in finished), default=0.0),
            "max_peak_mb": max((r["peak_mb"] for r in results), default=0.0),
            "hwloc_files_left": sum(r.get("hwloc_left", 0) for r in results), "results": results}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="run the cases whose name contains one of these")
    ap.add_argument("--skip-mpi", action="store_true", help="leave out the cases that start MPI jobs")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds before a case counts as a hang")
    ap.add_argument("--max-mb", type=float, default=2000.0, help="resident memory that stops a case")
    ap.add_argument("--repeat-interrupt", type=int, default=20, help="tries of the early Ctrl-C case")
    ap.add_argument("--gclib", type=Path, action="append", default=None,
                    help="a folder holding the gclib to try (default: this one); given twice (an earlier commit's "
                         "`git archive REF gclib`, then this one), every case runs with each in turn, paired under "
                         "the same load")
    a = ap.parse_args(argv)
    gclibs = [g.resolve() for g in (a.gclib or [ROOT])]
    GCLIB[0] = gclibs[-1]  # (the state files of the MPI cases are written by the last)
    d = Path(tempfile.mkdtemp(prefix="gclib-hostile-"))
    try:
        f = make_files(d)
        todo = cases(f, d, mpi=not a.skip_mpi)
        if a.only:
            todo = [c for c in todo if any(s in c.name for s in a.only)]
        results = {g: [] for g in gclibs}
        for c in todo:
            n = a.repeat_interrupt if (c.interrupt_after is not None and c.interrupt_after < 0) else 1
            for _ in range(n):
                for g in gclibs:
                    GCLIB[0] = g
                    results[g].append(run_case(c, d, a.timeout, a.max_mb))
                    print(json.dumps({"gclib": str(g), **results[g][-1]}), file=sys.stderr, flush=True)
        print(json.dumps({"runs": [summary(g, results[g]) for g in gclibs]}, indent=1))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
