"""Hostile and careless inputs: files that are not what a command expects (a sparse file of 2 GiB, a gzip bomb, a
FIFO, /proc/self/environ, a shadow-like file, binary bytes, a .npy whose header announces 80 GB), loops driven by a
user's number, late refusals, dishonest exit codes and old state files. Every refusal is one line on stderr and exit
2, names the file and what was expected, and quotes nothing the file holds. (Their time and memory are measured by
``python -m benchmarks.hostile``, not here.)"""
from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gclib import advise, files, sequential, timing_trace, timings, trace_convert
from gclib.cli import build_parser, main
from gclib.cli.options import given
from gclib.runtime import RunResult
from gclib.runtime.processes import HYDRA_TOPOLOGY, hydra_files, remove_files
from gclib.runtime.protocol import pack_step_state
from gclib.runtime.resume import SPEC_KEYS, SPEC_OPTIONAL, VERSION
from gclib.stragglers import ShiftedExponential

ROOT = Path(__file__).resolve().parents[1]
HEADER = "iteration,worker,task,seconds\n"
SHADOW = "root:$6$salt$hashhash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"


def _refused(capsys, argv, marks=(), needle=""):
    """Run ``gclib argv`` in-process: exit 2, one line ``gclib: error: ...`` on stderr naming ``needle``, nothing on
    stdout, none of ``marks`` (what the file holds) anywhere. Returns the line."""
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:  # argparse
        rc = e.code
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("gclib: error: "), (rc, err)
    assert "Traceback" not in err and not out.strip(), (out, err)
    for m in marks:
        assert m not in err, (m, err)
    assert needle in lines[0], lines[0]
    return lines[0]


# ------------------------------------------------------------------------------------------------ the files
def _sparse(d: Path) -> Path:
    p = d / "sparse.csv"
    with open(p, "wb") as fh:
        fh.truncate(2 << 30)  # 2 GiB of holes: nothing on disk
    return p


def _header_sparse(d: Path) -> Path:
    p = d / "header-sparse.csv"
    with open(p, "wb") as fh:
        fh.write(HEADER.encode())
        fh.truncate(1 << 30)
    return p


def _bomb(d: Path) -> Path:
    """A gzip that decompresses to 4 MiB of rows (the budget is lowered to 1 MiB for it)."""
    p = d / "bomb.csv.gz"
    with gzip.open(p, "wb", compresslevel=9) as fh:
        fh.write(HEADER.encode() + b"0,0,1,1\n" * (4 << 17))
    return p


def _fifo(d: Path) -> Path:
    p = d / "fifo.csv"
    os.mkfifo(p)
    return p


def _environ(d: Path) -> Path:
    p = Path("/proc/self/environ")
    if not p.exists():
        pytest.skip("no /proc/self/environ here")
    return p


def _shadow(d: Path) -> Path:
    p = d / "shadow"
    p.write_text(SHADOW)
    p.chmod(0o600)
    return p


def _binary(d: Path) -> Path:
    p = d / "binary.csv"
    p.write_bytes(bytes(range(256)) * 4)
    return p


def _zip(d: Path) -> Path:
    p = d / "trace.csv"
    p.write_bytes(b"PK\x03\x04" + b"\x00" * 60)
    return p


def _huge_npy(d: Path) -> Path:
    p = d / "huge.npy"
    with open(p, "wb") as fh:  # a header announcing 100000 x 100000 doubles (80 GB), and no data
        np.lib.format.write_array_header_1_0(fh, {"descr": "<f8", "fortran_order": False, "shape": (100000, 100000)})
    return p


def _columns(d: Path) -> Path:
    p = d / "columns.csv"
    p.write_text(",".join(str(i) for i in range(20_000)) + "\n" + ",".join("1" for _ in range(20_000)) + "\n")
    return p


FILES = {"sparse": _sparse, "header-sparse": _header_sparse, "bomb": _bomb, "fifo": _fifo, "environ": _environ,
         "shadow": _shadow, "binary": _binary, "zip": _zip, "huge-npy": _huge_npy, "columns": _columns}
#: Every command that reads a user's file, ``{}`` the file.
COMMANDS = {
    "convert csv": ["trace", "convert", "{}", "--format", "csv", "--out", "{out}"],
    "convert wide": ["trace", "convert", "{}", "--format", "wide", "--out", "{out}"],
    "convert auto": ["trace", "convert", "{}", "--out", "{out}"],
    "advise": ["advise", "--trace", "{}", "--workers", "4"],
    "sequential": ["sequential", "--delays", "{}", "--scheme", "gc", "--stragglers", "1"],
    "resume": ["run", "--resume", "{}"],
    "hosts": ["run", "--scheme", "crc", "--workers", "4", "--stragglers", "1", "--hosts", "{}"],
    "network": ["advise", "--trace", "{trace}", "--workers", "4", "--network", "{}"],
}


def _marks(kind: str, path: Path) -> tuple:
    """Text the file holds that no message may quote."""
    if kind == "shadow":
        return ("root:", "salt", "19000", "daemon")
    if kind == "environ":
        entries = path.read_bytes().split(b"\0")
        return tuple(e.decode(errors="replace") for e in entries if len(e) >= 12)[:20]
    return ()


@pytest.fixture
def small_budgets(monkeypatch):
    """Budgets lowered so that the gzip bomb (4 MiB once decompressed) is beyond them; the sizes are those of a
    real bomb against the real budgets (``python -m benchmarks.hostile``)."""
    budget = files.Budget("a timing trace", files.MIB, lines=10_001, fields=timings.MAX_COLUMNS,
                          constant="gclib.timings.TRACE_BUDGET")
    for module in (timing_trace, trace_convert):  # the modules that read traces (gclib.timings re-exports them)
        monkeypatch.setattr(module, "TRACE_BUDGET", budget)
    monkeypatch.setattr(sequential, "DELAYS_BUDGET", files.Budget("a delay matrix", files.MIB,
                                                                  constant="gclib.sequential.DELAYS_BUDGET"))


#: The pairs where the file is what the command reads: two lines of integers are a delay matrix.
VALID = {("columns", "sequential")}


@pytest.mark.parametrize("kind, command", [(k, c) for k in sorted(FILES) for c in sorted(COMMANDS)
                                           if (k, c) not in VALID])
def test_a_hostile_file_is_one_line_exit_2_and_quotes_nothing(kind, command, tmp_path, capsys, small_budgets):
    path = FILES[kind](tmp_path)
    trace = tmp_path / "good.csv"
    timings.write(trace, 0.01 + np.random.default_rng(1).exponential(0.01, (20, 4, 1)))
    argv = [a.replace("{}", str(path)).replace("{out}", str(tmp_path / "out.csv")).replace("{trace}", str(trace))
            for a in COMMANDS[command]]
    line = _refused(capsys, argv, marks=_marks(kind, path))
    assert not (tmp_path / "out.csv").exists()
    if kind in ("sparse", "header-sparse") and command not in ("hosts", "resume", "network"):
        assert "on disk, more than" in line  # refused by its size, before a byte is read


@pytest.mark.parametrize("kind, says", [
    ("sparse", "2 GiB on disk, more than the 128 MiB a timing trace may hold (gclib.timings.TRACE_BUDGET)"),
    ("bomb", "decompresses (gzip) to more than the 1 MiB a timing trace may hold (gclib.timings.TRACE_BUDGET)"),
    ("fifo", "is not a regular file"),
    ("binary", "line 1 holds a NUL byte: not text"),
    ("zip", "a zip archive; decompress it first"),
    ("columns", "line 1 has 20,000 fields, more than the 10,001 columns a timing trace may hold"),
])
def test_the_reader_names_the_budget_or_what_was_expected(kind, says, tmp_path, small_budgets):
    if kind == "sparse":  # the real budget
        budget = files.Budget("a timing trace", 128 * files.MIB, constant="gclib.timings.TRACE_BUDGET")
        with pytest.raises(ValueError) as e:
            files.read_text("trace", _sparse(tmp_path), budget)
        assert says in str(e.value), str(e.value)
        return
    with pytest.raises(ValueError) as e:
        timings.convert(FILES[kind](tmp_path), "csv")
    assert says in str(e.value), str(e.value)


def test_npy_headers_and_dtypes_are_checked_before_the_data(tmp_path):
    bad = {"complex.npy": np.ones((3, 4)) + 1j, "bool.npy": np.ones((3, 4), bool), "three.npy": np.ones((2, 3, 4)),
           "text.npy": np.array([["a", "b"]])}
    says = {"complex.npy": "holds complex numbers", "bool.npy": "holds booleans", "three.npy": "3-dimensional",
            "text.npy": "holds text"}
    for name, a in bad.items():
        np.save(tmp_path / name, a)
        with pytest.raises(ValueError, match=says[name]):
            sequential.read_delays(tmp_path / name)
    with pytest.raises(ValueError, match="100,000 x 100,000 entries, more than the 10,000,000"):
        sequential.read_delays(_huge_npy(tmp_path))
    cut = tmp_path / "cut.npy"
    np.save(cut, np.ones((30, 40)))
    cut.write_bytes(cut.read_bytes()[:-8])
    with pytest.raises(ValueError, match="announces 30 x 40 entries of 8 bytes, but the file holds 9,592 bytes"):
        sequential.read_delays(cut)


@pytest.mark.parametrize("text, says", [
    ("1,2,3\n1,x,3\n", "line 2, column 2 is not a number"),
    ("1,2,1e400\n1,2,3\n", "line 1, column 3 holds a number too large for a float"),
    ("1,2,3\n1,2\n", "line 2 has 2 columns"),
    ("root:x:0:0\n", "line 1, column 1 is not a number"),
])
def test_a_delay_csv_is_named_by_line_and_column_not_quoted(text, says, tmp_path):
    p = tmp_path / "d.csv"
    p.write_text(text)
    with pytest.raises(ValueError) as e:
        sequential.read_delays(p)
    msg = str(e.value).split(": ", 1)[1]  # (the path may hold any word)
    assert says in msg and "root" not in msg and "1e400" not in msg, msg
    p.write_text("1,inf,2\n3,INF,4\n")  # inf spelled out: a worker that never answers
    assert np.isinf(sequential.read_delays(p)).sum() == 2


def test_booleans_and_complex_delays_are_refused_not_converted():
    for bad, says in ((np.ones((3, 4), bool), "booleans"), (np.ones((3, 4)) + 1j, "complex numbers"),
                      ([["a", "b"]], "text")):
        with pytest.raises(TypeError, match=f"delays must be an array of seconds .*got an array of {says}"):
            sequential.run("gc", bad, s=1)


# ------------------------------------------------------------------------------------------------ bounded loops
def test_the_iterations_a_backtest_needs_come_from_a_closed_form():
    def counted(h):  # the loop this replaces
        n = advise.MIN_PART
        while not (n - round(h * n) >= advise.MIN_PART and round(h * n) >= advise.MIN_PART):
            n += 1
        return n

    rng = np.random.default_rng(0)
    for h in [0.5, 0.1, 0.01, 0.9, 0.99, 1 / 3, 2 / 3, *rng.uniform(0.002, 0.998, 300)]:
        assert advise.iterations_needed(float(h)) == counted(float(h)), h
    assert advise.iterations_needed(1e-300) > 10 ** 300  # at once, not counted up to


def test_advise_holdout_of_1e_300_is_refused_naming_the_iterations(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    timings.write(trace, 0.01 + np.random.default_rng(1).exponential(0.01, (20, 4, 1)))
    _refused(capsys, ["advise", "--trace", trace, "--holdout", "1e-300"], needle="needs at least about 4.5e+300 "
                                                                                 "iterations")


class _NoDraws(ShiftedExponential):
    def sample(self, *a, **k):  # the refusals below come before any draw
        raise AssertionError("drew before checking the work")


@pytest.mark.parametrize("K, R, says", [(10 ** 6, 3, r"K must be an integer in \[2, 10000\]"),
                                        (10_000, 100, "would replay"), (2_000, 45, "would replay")])
def test_the_advice_across_iterations_bounds_its_work_before_drawing(K, R, says):
    with pytest.raises(ValueError, match=says):
        sequential.advice(_NoDraws(10, 0.01), K, R, seeds=3)


def test_a_sweep_counts_its_candidates_first():
    d = np.ones((6, 20))
    with pytest.raises(ValueError, match="candidates, more than 1,000,000"):
        sequential.sweep(lambda load: d, "sr-sgc", jobs=10, max_delay=10 ** 9)
    with pytest.raises(ValueError, match="limit must be a non-negative number"):
        sequential.run("gc", d, s=1, limit=-1)


def test_advise_sequential_for_many_workers_is_refused_before_the_trace_is_read(tmp_path, capsys, monkeypatch):
    trace = tmp_path / "t.csv"
    timings.write(trace, 0.01 + np.random.default_rng(1).exponential(0.01, (20, 4, 1)))
    monkeypatch.setattr(timings, "load", lambda *a, **k: pytest.fail("read the trace before refusing"))
    _refused(capsys, ["advise", "--trace", trace, "--workers", "10000", "--sequential"],
             needle="argument --sequential: the advice across iterations for 10000 workers")
    _refused(capsys, ["advise", "--trace", trace, "--workers", "4", "--figure", tmp_path / "fig.txt"],
             needle="argument --figure:")
    _refused(capsys, ["advise", "--trace", trace, "--workers", "4", "--network", "latency=1e308,bandwidth=1e-308"],
             needle="a message of one gradient would take")


# ------------------------------------------------------------------------------------------------ late refusals
@pytest.mark.parametrize("times, says", [
    (np.zeros((20, 4, 1)), "every finite task time is 0 s"),
    (np.full((20, 4, 1), 0.5), "every finite task time is the same (0.5 s)"),
    (1e300 * (1 + np.random.default_rng(2).exponential(1, (20, 4, 1))), "must lie within 1e-100 to 1e+100 s"),
    (1e-320 * (1 + np.random.default_rng(2).integers(1, 5, (20, 4, 1))), "must lie within 1e-100 to 1e+100 s"),
])
def test_a_trace_advise_cannot_fit_is_refused_before_any_fit(times, says, tmp_path, capsys, monkeypatch):
    trace = tmp_path / "t.csv"
    timings.write(trace, times)
    from gclib import fit

    monkeypatch.setattr(fit, "fit", lambda *a, **k: pytest.fail("fitted before refusing"))
    for extra in ([], ["--holdout", "0.5"]):
        _refused(capsys, ["advise", "--trace", trace, *([] if extra else ["--workers", "4"]), *extra], needle=says)


# ------------------------------------------------------------------------------------------------ accepted and wrong
def test_options_a_command_does_not_read_are_refused(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    timings.write(trace, 0.01 + np.random.default_rng(1).exponential(0.01, (20, 4, 1)))
    _refused(capsys, ["trace", "convert", trace, "--stages", "max", "--out", tmp_path / "o.csv"],
             needle="stages applies to a per-operation trace")
    np.save(tmp_path / "d.npy", np.ones((4, 12)))
    _refused(capsys, ["sequential", "--delays", tmp_path / "d.npy", "--scheme", "gc", "--stragglers", "1", "--max-delay",
                      "4"], needle="argument --max-delay: read by --sweep only")
    _refused(capsys, ["sequential", "--delays", tmp_path / "d.npy", "--scheme", "sr-sgc", "--sweep", "--max-delay",
                      "12"], needle="argument --max-delay: must be below the matrix's 12 rounds")
    _refused(capsys, ["train", "--algorithm", "gc", "--groups", "3"], needle="--groups 3 would mean --stragglers 3")


def test_the_parser_records_the_options_given_even_at_their_default():
    a = build_parser("sequential").parse_args(["sequential", "--delays", "x", "--scheme", "gc", "--max-delay", "4"])
    assert {"max_delay", "delays", "scheme"} <= given(a) and "mu" not in given(a) and a.max_delay == 4


# ------------------------------------------------------------------------------------------------ state files
def _state(tmp_path, **doc_changes) -> Path:
    from gclib import schemes
    from gclib.learning import TandonAGD, make_problem
    from gclib.runtime import RunSpec

    problem = make_problem("tandon-logistic", parts=4, seed=0, n_samples=400, dim=10)
    spec = RunSpec(schemes.build("crc", workers=4, stragglers=1), problem, TandonAGD(0.1), ShiftedExponential(10, .01),
                   iterations=4)
    rec = {"iteration": 0, "time": 0.01, "predicted": 0.01, "messages": 3, "stale": 0, "bcast": 0.0, "wait": 0.0,
           "decode": 0.0, "step": 0.0, "drain": 0.0, "checks": 0.0, "workers": [0, 1, 2], "amplification": 2.0,
           "grad_error": 0.0, "wall": 0.01, "loss": 0.5, "test_loss": 0.5, "auc": 0.9}
    res = RunResult(records=[rec], theta=np.zeros(10), status="error", spec=spec.describe(),
                    step_state=pack_step_state(TandonAGD(0.1).init(np.zeros(10))))
    p = tmp_path / "state.json"
    res.save(p, args={"scheme": "crc", "workers": 4, "stragglers": 1, "exchange": "two-phase"})
    doc = json.loads(p.read_text())
    for k, v in doc_changes.items():
        if v is None:
            doc["spec"].pop(k)
        else:
            doc[k] = v
    p.write_text(json.dumps(doc))
    return p


def test_the_spec_layout_is_the_state_files_layout():
    # what RunSpec.describe writes is the layout of a state file: a change of its keys is a new VERSION (and
    # SPEC_KEYS), so that an older file is told apart from another run's
    from gclib.learning import GD, make_problem
    from gclib.runtime import RunSpec
    from gclib import schemes

    spec = RunSpec(schemes.build("crc", workers=4, stragglers=1), make_problem("tandon-logistic", parts=4, seed=0,
                                                                               n_samples=400, dim=10), GD(0.1),
                   ShiftedExponential(10, .01), iterations=4)
    assert set(spec.describe()) == set(SPEC_KEYS) and not set(SPEC_OPTIONAL) & set(SPEC_KEYS)


def test_an_older_state_file_says_so(tmp_path, capsys):
    old = _state(tmp_path, version=VERSION - 1, exchange=None)
    _refused(capsys, ["run", "--resume", old], needle=f"was saved by an older gclib (layout {VERSION - 1}); rerun "
                                                      f"without --resume")
    newer = _state(tmp_path, version=VERSION + 1)
    _refused(capsys, ["run", "--resume", newer], needle=f"saved by a newer gclib (layout {VERSION + 1})")


def test_a_parameter_given_at_its_default_beside_resume_is_refused(tmp_path, capsys):
    state = _state(tmp_path)
    _refused(capsys, ["run", "--resume", state, "--exchange", "messages"],
             needle="--exchange cannot be given with --resume")


# ------------------------------------------------------------------------------------------------ processes
def test_hydras_topology_files_are_found_by_who_holds_them(tmp_path):
    # a job's proxy (a grandchild of mpiexec here: a child of the child) holds the file; another process does not
    name = f"{HYDRA_TOPOLOGY}gclibtest{os.getpid()}"
    hold = f"f = open({name!r}, 'w'); print('open', flush=True); import time; time.sleep(60)"
    job = subprocess.Popen([sys.executable, "-c", f"import subprocess, sys; subprocess.run([sys.executable, '-c', "
                                                  f"{hold!r}])"], stdout=subprocess.PIPE, text=True,
                           start_new_session=True)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        assert job.stdout.readline() == "open\n"
        assert name in hydra_files(job.pid) and name not in hydra_files(other.pid)
    finally:
        for p in (job, other):
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    remove_files([name])
    assert not os.path.exists(name)


_WAIT_AT_NUMPY = """\
import sys, time
class WaitAt:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            sys.meta_path.remove(self)
            print("importing numpy", flush=True)
            time.sleep(60)
        return None
sys.meta_path.insert(0, WaitAt())
sys.argv[0] = "/usr/bin/gclib"  # the console script, as a user starts it
from gclib.cli import main
sys.exit(main())
"""


def test_ctrl_c_while_the_command_line_loads_numpy_is_one_line_and_exit_130():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.Popen([sys.executable, "-c", _WAIT_AT_NUMPY, "list"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert p.stdout.readline() == "importing numpy\n"
        time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:  # pragma: no cover
            p.kill()
            p.wait()
    assert p.returncode == 130 and err == "gclib: interrupted\n", (p.returncode, err)


# ------------------------------------------------------------------------------------------------ honest exit codes
def _gclib(args, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp_path))
    return subprocess.run([sys.executable, "-m", "gclib", *map(str, args)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)


def test_a_diverged_run_says_so_and_exits_1(tmp_path):
    p = _gclib(["run", "--scheme", "crc", "--workers", "4", "--stragglers", "1", "--step", "gd", "--lr", "1e308",
                "--iterations", "3", "--json"], tmp_path)
    doc = json.loads(p.stdout.strip().splitlines()[-1])
    assert p.returncode == 1 and doc["summary"]["status"] == "diverged", (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr and "the loss is not finite after iteration 0" in p.stderr
    assert "--resume" not in p.stderr  # nothing to continue from parameters that are not finite
    p = _gclib(["run", "--scheme", "crc", "--workers", "4", "--stragglers", "1", "--step", "gd", "--lr", "1e308",
                "--iterations", "3"], tmp_path)
    assert p.returncode == 1 and "Traceback" not in p.stderr and p.stderr.startswith("gclib: error: the loss is not")


def test_sequential_over_mpi_that_stops_exits_1_and_leaves_no_run_directory(tmp_path):
    np.save(tmp_path / "d.npy", 0.05 * (1 + np.random.default_rng(2).exponential(1.0, (4, 12))))  # rounds of 0.1 s
    for json_out in (True, False):
        p = _gclib(["sequential", "--delays", tmp_path / "d.npy", "--scheme", "gc", "--stragglers", "1", "--mpi", "--kill",
                    "0:1,1:1", *(["--json"] if json_out else [])], tmp_path)
        assert p.returncode == 1 and "Traceback" not in p.stderr, (p.returncode, p.stderr)
        assert p.stderr.strip().splitlines()[-1].startswith("gclib: error: the run over MPI stopped after")
        assert not list(tmp_path.glob("gclib-run-*"))  # not resumable: its temporary run directory is removed
        if json_out:  # the replay is printed all the same, with the run's status
            assert json.loads(p.stdout)["mpi"]["status"] == "error"


def test_a_profile_that_measured_nothing_leaves_out_as_it_was(tmp_path):
    out = tmp_path / "times.csv"
    out.write_text("kept\n")
    p = _gclib(["profile", "--workers", "2", "--iterations", "3", "--job-timeout", "0.5", "--no-network", "--quiet",
                "--out", out], tmp_path)
    assert p.returncode == 1 and out.read_text() == "kept\n", (p.returncode, p.stderr)
    assert "nothing measured" in p.stderr and "median nan" not in p.stdout
