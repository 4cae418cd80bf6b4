"""Property tests of the command line: every invocation, valid or not, ends in exit 0, 1 or 2, without a traceback,
within a time bound; an exit 2 prints exactly one line on stderr, ``gclib: error: ...``, and no warning.

Each example runs in-process through :func:`gclib.cli.main`. Nothing heavy starts: valid sizes are small, absurd
ones must be refused at once; ``reproduce`` stops where the first notebook would run, and ``run`` where MPI would
start (``gclib.runtime.launcher.launch``, and any subprocess, raise :class:`Started` instead), so that every
check made before a run starts is exercised and no process is ever launched.
"""
from __future__ import annotations

import contextlib
import glob
import io
import os
import signal
import subprocess
import sys
import tempfile
import warnings

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

import gclib.reproduce
from gclib import schemes
from gclib.cli import main
from gclib.learning.optim import SCHEME_NAMES as TRAIN_SCHEMES
from gclib.cli.options import problem_names
from gclib.stragglers import MODELS

#: seconds one example may take before it counts as a hang (not a speed assertion: valid examples take well
#: under a second)
EXAMPLE_LIMIT = 60
#: examples per test (``GCLIB_PROPERTY_EXAMPLES=2000`` for a longer search)
EXAMPLES = int(os.environ.get("GCLIB_PROPERTY_EXAMPLES", "150"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


class Started(BaseException):
    """A process or a notebook would start here; the arguments were accepted."""


class Hang(BaseException):
    pass


def invoke(argv) -> tuple:
    """``(exit code or "started", stdout, stderr, warnings)`` of ``gclib argv``, in-process."""
    out, err = io.StringIO(), io.StringIO()

    def alarm(*_):
        raise Hang(f"gclib {argv} ran for more than {EXAMPLE_LIMIT} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(EXAMPLE_LIMIT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                rc = main(argv)
            except SystemExit as e:  # argparse: --help, or a usage error
                rc = e.code
            except Started:
                rc = "started"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return rc, out.getvalue(), err.getvalue(), [f"{w.category.__name__}: {w.message}" for w in caught]


def check(argv):
    rc, out, err, warned = invoke(argv)
    if currently_in_test_context():
        event(f"exit {rc}")  # pytest --hypothesis-show-statistics: how the examples ended
    assert rc in (0, 1, 2, "started"), (argv, rc, err)
    assert "Traceback" not in err and "Traceback" not in out, (argv, err)
    if rc == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("gclib: error: "), (argv, err)
        assert not warned, (argv, warned)
    return rc, out, err


@pytest.fixture(scope="module", autouse=True)
def guarded(tmp_path_factory):
    """For the whole module: a small memory budget, no notebook and no process ever started, and no run folder
    (``gclib-run-*`` in the temporary folder, here a private one) left behind."""
    import gclib.runtime.launcher as launcher

    def refuse(*a, **k):
        raise Started

    tmp = tmp_path_factory.mktemp("tmpdir")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GCLIB_MEMORY_LIMIT", "2G")
        mp.setattr(tempfile, "tempdir", str(tmp))
        mp.setattr(gclib.reproduce, "run_notebook", refuse)
        mp.setattr(launcher, "launch", refuse)
        mp.setattr(subprocess.Popen, "_execute_child", refuse)  # any process at all, mpiexec included
        yield
    assert glob.glob(str(tmp / "gclib-run-*")) == []


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Paths for options that take one: a folder, a file, bad generator files and manifests."""
    d = tmp_path_factory.mktemp("cli-paths")
    (d / "text.txt").write_text("not a matrix\n")
    (d / "ragged.txt").write_text("1 2\n3\n")
    (d / "binary.npy").write_bytes(b"\x93NUMPY garbage")
    (d / "good.txt").write_text("1 0 1\n0 1 1\n")
    (d / "nan.txt").write_text("1 nan\n0 1\n")
    for name, content in [("ok", '{"notebooks": {"01_x": {"figures": {"01_a.png": "sha256:0"}, "started": "t"}}}'),
                          ("bad-json", "{"), ("list", "[1]"), ("bad-figures", '{"notebooks": {"a": {"figures": 1}}}')]:
        (d / "executed" / name).mkdir(parents=True)
        (d / "executed" / name / "manifest.json").write_text(content)
    # hostile files: a FIFO, a file that is no trace (its first line a secret), a trace with a duration of
    # 100,000 nines, a trace, and a hostfile whose host is a shell command
    os.mkfifo(d / "fifo")
    (d / "shadow").write_text("root:$6$secretsalt$hash:19000:0:99999:7:::\n")
    rows = "".join(f"{i},{w},1,0.{i + w + 1}\n" for i in range(10) for w in range(4))
    (d / "trace.csv").write_text("iteration,worker,task,seconds\n" + rows)
    (d / "nines.csv").write_text("iteration,worker,task,seconds\n0,0,1," + "9" * 100_000 + "\n"
                                 + rows[rows.index("\n") + 1:])
    (d / "hosts").write_text("localhost; touch X\n")
    return {"dir": str(d), "file": str(d / "text.txt"), "executed": str(d / "executed"),
            "generators": [str(d / n) for n in ("text.txt", "ragged.txt", "binary.npy", "good.txt", "nan.txt")],
            **{k: str(d / n) for k, n in (("fifo", "fifo"), ("shadow", "shadow"), ("trace", "trace.csv"),
                                          ("nines", "nines.csv"), ("hosts", "hosts"))}}


# ------------------------------------------------------------------------------------------------- values
BAD_INTS = ["0", "-1", "-0", "99999999999999999999", "-99999999999999999999", "1e5", "1.5", "nan", "inf", "",
            " ", "x", "0x10", "1_0", "٣"]
BAD_REALS = ["0", "-0", "-1", "nan", "-nan", "inf", "-inf", "1e400", "1e-320", "1e308", "5e-324", "", "x", "1,5"]
BAD_PATHS = ["", " ", "/proc/gclib-x/y", "/etc/passwd/x", "/nonexistent-gclib/a/b", "x" * 300, "/", "."]
BAD_NAMES = ["nope", "", " ", "CRC", "-"]


def ints(lo, hi):
    return st.integers(lo, hi).map(str)


def reals(*values):
    return st.sampled_from([str(v) for v in values])


def int_lists(lo, hi):
    return st.lists(st.integers(lo, hi), min_size=1, max_size=3, unique=True).map(lambda v: ",".join(map(str, v)))


BAD_LIST = st.lists(st.sampled_from(["", " ", "0", "-1", "x", "2", "99999999999999999999"]), max_size=4).map(
    ",".join)


def bad_for(strat_or_kind):
    """The bad values of an option: numbers of every kind that mean nothing, empty list items, bad names."""
    return {"int": st.sampled_from(BAD_INTS), "real": st.sampled_from(BAD_REALS), "list": BAD_LIST,
            "name": st.sampled_from(BAD_NAMES), "path": st.sampled_from(BAD_PATHS)}[strat_or_kind]


@st.composite
def options(draw, pool, required=()):
    """An argument list from ``pool`` (``{flag: (valid values or None for a switch, kind of its bad values)}``):
    the flags of ``required`` and about a third of the others with valid values, then (in two examples of five)
    one or two options given a bad value; written ``--opt VALUE`` or ``--opt=VALUE``."""
    values = {}
    for flag, (valid, _) in pool.items():
        if flag in required or draw(st.integers(0, 2)) == 0:
            values[flag] = None if valid is None else draw(valid)
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        flag = draw(st.sampled_from(sorted(f for f, (v, kind) in pool.items() if kind)))
        values[flag] = draw(bad_for(pool[flag][1]))
    argv = []
    for flag, value in values.items():
        if value is None:
            argv.append(flag)
        elif value.startswith("-") or draw(st.booleans()):
            argv.append(f"{flag}={value}")  # a value starting with '-' would read as an option otherwise
        else:
            argv += [flag, value]
    return argv


SCHEME_OPTIONS = {
    "--workers": (ints(1, 12), "int"), "--stragglers": (ints(0, 3), "int"), "--seed": (ints(0, 3), "int"),
    "--pieces": (ints(2, 5), "int"), "--points": (st.sampled_from(["chebyshev", "equispaced", "roots-of-unity"]),
                                                  "name"),
    "--exact": (None, None), "--comm": (ints(0, 3), "int"), "--load": (ints(1, 4), "int"),
    "--order": (ints(1, 4), "int"), "--orders": (int_lists(1, 4), "list"), "--clusters": (ints(1, 2), "int"),
}
MODEL_OPTIONS = {
    "--model": (st.sampled_from(sorted(MODELS)), "name"), "--mu": (reals(10, 0.5), "real"),
    "--alpha": (reals(0.01, 0, 1e300), "real"), "--rate": (reals(1, 3), "real"),
    "--scale": (reals(1, 0.1, 1e300), "real"),
    "--shape": (reals(2, 1.5), "real"), "--per-task": (None, None), "--persistent": (ints(0, 2), "int"),
}


@st.composite
def scheme_options(draw, pool, schemes_=None):
    """``--scheme NAME`` (a bad name now and then) and the scheme's own parameters always given."""
    names = sorted(schemes_ or schemes.SCHEMES)
    name = draw(st.sampled_from(BAD_NAMES) if draw(st.integers(0, 9)) == 0 else st.sampled_from(names))
    needs = [f"--{p}" for p in schemes.SCHEMES[name].params] if name in schemes.SCHEMES else []
    return ["--scheme", name, *draw(options(pool, required=[f for f in needs if f in pool]))]


# ------------------------------------------------------------------------------------------------ commands
@SETTINGS
@given(st.data())
def test_simulate(files, data):
    pool = {**SCHEME_OPTIONS, **MODEL_OPTIONS, "--trials": (ints(1, 300), "int"),
            "--network": (st.sampled_from(["latency=0.01,bandwidth=100", "latency=0,bandwidth=inf,queue=no",
                                           "latency=1e308,bandwidth=1,overhead=0.5", "none"]), "name"),
            "--json": (None, None),
            "--generator": (st.sampled_from(["gaussian", "repetition", *files["generators"]]), "path")}
    argv = ["simulate", *data.draw(scheme_options(pool))]
    if "--trials" not in argv and not any(a.startswith("--trials=") for a in argv):
        argv += ["--trials", "100"]
    rc, out, err = check(argv)
    assert rc in (0, 2), (argv, err)


@SETTINGS
@given(st.data())
def test_verify(data):
    pool = {**SCHEME_OPTIONS, "--workers": (ints(1, 6), "int"), "--load": (ints(1, 3), "int"),
            "--stragglers": (ints(0, 2), "int"), "--messages": (ints(1, 2), "int"), "--drop": (ints(0, 2), "int")}
    check(["verify", *data.draw(scheme_options(pool))])


@SETTINGS
@given(st.data())
def test_train(data):
    pool = {"--algorithm": (st.sampled_from(TRAIN_SCHEMES), "name"),
            "--problem": (st.sampled_from(problem_names()), "name"),
            "--workers": (ints(1, 12), "int"), "--groups": (ints(1, 4), "int"), "--stragglers": (ints(0, 3), "int"),
            "--scheme": (st.sampled_from(["crc", "frc", "rs", "gc"]), "name"),
            "--trigger": (st.sampled_from(["default", "none", "wk", "ps"]), "name"),
            "--units": (st.sampled_from(["count", "decoding-max", "decoding-mean", "2"]), "real"),
            "--lazy-window": (ints(1, 5), "int"), "--xi": (reals(0.1, 0), "real"),
            "--warmup": (st.sampled_from(["silent", "upload"]), "name"), "--lr": (reals(0.01, 1e300), "real"),
            "--target": (reals(1e-3, 1e300), "real"), "--iterations": (ints(1, 30), "int"),
            "--computation": (st.sampled_from(["assigned", "finished"]), "name"),
            "--duplicates": (st.sampled_from(["cancel", "count"]), "name"), "--seed": (ints(0, 3), "int"),
            "--json": (None, None), **MODEL_OPTIONS}
    check(["train", *data.draw(options(pool, required=("--algorithm", "--iterations")))])


@SETTINGS
@given(st.data())
def test_reproduce_up_to_the_first_notebook(files, data):
    folder = st.sampled_from([os.path.join(files["dir"], "figs"), files["dir"]])
    pool = {"--profile": (st.sampled_from(["full", "quick"]), "name"), "--figures-dir": (folder, "path"),
            "--out-dir": (folder, "path")}
    argv = ["reproduce", *data.draw(options(pool))]
    if data.draw(st.booleans()):
        argv += ["--only", *data.draw(st.lists(st.sampled_from(["01_gradient_coding", "00_index", "nope"]),
                                               max_size=2))]
    rc, out, err = check(argv)
    assert rc in ("started", 2), (argv, err)


@SETTINGS
@given(st.data())
def test_trace_and_gallery(files, data):
    executed = st.sampled_from([files["executed"], *(os.path.join(files["executed"], n) for n in ("ok", "list"))])
    figure = st.sampled_from(["01_a", "01_a.png", "figures/01_a.csv", "nope", files["file"], files["dir"], "",
                              "x" * 300])
    if data.draw(st.booleans()):
        pool = {"--executed": (executed, "path"), "--figures-dir": (st.just(files["dir"]), "path"),
                "--json": (None, None)}
        argv = ["trace", data.draw(figure), *data.draw(options(pool))]
    else:
        argv = ["gallery", *data.draw(options({"--figures-dir": (st.just(files["dir"]), "path")}))]
    check(argv)


@SETTINGS
@given(st.data())
def test_run_up_to_the_start_of_mpi(data):
    # the shared scheme and model options of `gclib run`, the run's own options at their defaults
    pool = {**SCHEME_OPTIONS, **MODEL_OPTIONS, "--workers": (ints(1, 8), "int"), "--iterations": (st.just("2"), None),
            "--json": (None, None)}
    rc, out, err = check(["run", *data.draw(scheme_options(pool))])
    assert rc in ("started", 2), (err,)


@SETTINGS
@given(st.data())
def test_run_own_options_up_to_the_start_of_mpi(files, data):
    kills = st.sampled_from(["0:1", "1:2", "0:1,1:2"])
    pool = {"--workers": (ints(2, 6), "int"), "--stragglers": (ints(0, 1), "int"),
            "--problem": (st.sampled_from(["logistic", "tandon-logistic", "breast-cancer"]), "name"),
            "--samples": (ints(50, 400), "int"), "--dim": (ints(1, 20), "int"), "--data-seed": (ints(0, 3), "int"),
            "--iterations": (ints(1, 5), "int"), "--step": (st.sampled_from(["agd", "gd"]), "name"),
            "--lr": (reals(0.1, 1), "real"), "--time-scale": (reals(0.01, 1), "real"),
            "--persistent-workers": (int_lists(0, 1), "list"), "--kill": (kills, "list"),
            "--timeout": (reals(1, 10), "real"), "--job-timeout": (reals(5, 60), "real"),
            "--hosts": (st.just(files["file"]), "path"),
            "--run-dir": (st.just(os.path.join(files["dir"], "run")), "path"),
            "--state": (st.just(os.path.join(files["dir"], "state.json")), "path"), "--json": (None, None)}
    argv = ["run", "--scheme", data.draw(st.sampled_from(["crc", "frc", "uncoded", "lcc"])),
            *data.draw(options(pool, required=("--workers",)))]
    rc, out, err = check(argv)
    assert rc in ("started", 2), (argv, err)


TOKENS = ["list", "simulate", "verify", "train", "reproduce", "trace", "gallery", "run", "--help", "--json",
          "--scheme", "crc", "frc", "--workers", "--stragglers", "--trials", "--mu", "--only", "-", "--", "3", "0",
          "-1", "nan", "6,,8"]


@SETTINGS
@given(st.lists(st.one_of(st.sampled_from(TOKENS),
                          st.text(st.characters(blacklist_categories=("Nd", "Cs")), max_size=6)), max_size=8))
def test_any_argument_list(argv):
    check(argv)


#: Hostile inputs that once made a traceback, a hang, or a wrong answer without a word: each is now refused at
#: once with one line naming what is wrong (``{NAME}`` is a path of the ``files`` fixture).
HOSTILE = [
    (["verify", "--scheme", "crc", "--workers", "200", "--stragglers", "50"], "patterns to check exceeds"),
    (["verify", "--scheme", "crc", "--workers", "5", "--stragglers", "1", "--messages", "4", "--drop", "2"],
     "argument --drop: cannot be given with --messages"),
    (["run", "--scheme", "crc", "--workers", "5000", "--stragglers", "1"], "a run on this host with 5001 MPI ranks"),
    (["profile", "--workers", "5000", "--out", "{dir}/p.csv"], "a run on this host with 5001 MPI ranks"),
    (["profile", "--workers", "2", "--out", "{dir}/p.csv", "--time-scale", "0.1"],
     "argument --time-scale: read only with --model NAME"),
    (["profile", "--workers", "2", "--out", "{dir}/p.csv", "--seed", "0"], "argument --seed: read only with --model"),
    (["advise", "--trace", "{fifo}", "--workers", "8"], "is not a regular file"),
    (["advise", "--trace", "{shadow}", "--workers", "8"], "its first line is not the header of a timing trace"),
    (["advise", "--trace", "{nines}", "--workers", "8"], "holds a number too large for a float at line 2"),
    (["advise", "--trace", "{trace}", "--workers", "100000"], "argument --workers: must be an integer in [2, 10000]"),
    (["advise", "--trace", "{trace}", "--workers", "1000000000"], "argument --workers: must be an integer in"),
    (["advise", "--trace", "{trace}", "--workers", "8", "--trials", "1000000000000"], "would simulate about"),
    (["advise", "--trace", "{trace}", "--workers", "8", "--figure", "{fifo}"], "is not a regular file"),
    (["reproduce", "--only"], "argument --only: expected at least one argument"),
    (["train", "--algorithm", "gd", "--lr", "1e-12", "--iterations", "1000000000000"],
     "lower max_iter (gclib train --iterations)"),
    (["train", "--algorithm", "gd", "--lazy-window", "5"], "argument --lazy-window: read by a lazy rule only"),
    (["train", "--algorithm", "gd", "--xi", "0.5"], "argument --xi: read by a lazy rule only"),
    (["train", "--algorithm", "gc", "--groups", "3", "--stragglers", "1"],
     "argument --groups: --algorithm gc has no groups"),
    (["train", "--algorithm", "lagc", "--groups", "3", "--stragglers", "1"],
     "argument --groups: --algorithm lagc reads it"),
    (["gallery", "--figures-dir", "/nonexistent-gclib"], "does not exist"),
    (["gallery", "--figures-dir", "{dir}"], "figures the gallery links to"),
    (["run", "--scheme", "crc", "--workers", "4", "--stragglers", "1", "--hosts", "{hosts}"],
     "line 1 must start with a host name"),
]


@pytest.mark.parametrize("argv, says", HOSTILE, ids=[" ".join(a[:2]) + f" #{i}" for i, (a, _) in
                                                      enumerate(HOSTILE)])
def test_the_hostile_inputs_are_refused_at_once_in_one_line(files, argv, says):
    rc, out, err = check([a.format(**files) for a in argv])
    assert rc == 2 and says in err, err
    assert "secretsalt" not in err and "touch" not in err  # what the files hold stays out of the message


def test_list():
    for argv in (["list"], ["list", "--json"], ["list", "--json", "x"], ["list", "--nope"]):
        check(argv)
