"""Bad input, as a new user types it: one line and exit 2 naming the option on the command line, a ValueError or
TypeError naming the argument in the library, 0 accepted where it is a value, nothing silently wrong."""
import importlib
import json
import math
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import gclib
from gclib import checks, codes
from gclib.cli import build_parser, main
from gclib.cli.options import code_from_args
from gclib.simulator import CHUNK, simulate_bytes
from gclib.sweeps import sweep
from gclib.stragglers import Pareto, ShiftedExponential

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def usage_error(capsys, argv, needle):
    """Run ``gclib argv`` in-process; assert exit 2 and one line on stderr naming ``needle``; return the line."""
    try:
        rc = main(argv)
    except SystemExit as e:  # argparse
        rc = e.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc == 2, err
    assert len(lines) == 1 and lines[0].startswith("gclib: error: ") and "Traceback" not in err, err
    assert needle in lines[0], lines[0]
    return lines[0]


# ------------------------------------------------------------------------------------------- zero is a value
@pytest.mark.parametrize("scheme", ["crc", "frc", "kadhe", "rs", "ignore", "ye-abbe"])
def test_zero_stragglers_is_a_value(scheme, capsys):
    assert main(["simulate", "--scheme", scheme, "--workers", "8", "--stragglers", "0", "--trials", "50",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["code"]["stragglers"] == 0 and out["failed"] == 0


def test_zero_stragglers_verifies(capsys):
    assert main(["verify", "--scheme", "crc", "--workers", "4", "--stragglers", "0"]) == 0
    assert "1 straggler patterns checked" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["simulate", "verify", "run"])
def test_zero_reaches_the_code_of_every_subcommand(command):
    a = build_parser().parse_args([command, "--scheme", "crc", "--workers", "5", "--stragglers", "0"])
    assert code_from_args(a).stragglers == 0


@pytest.mark.parametrize("option,scheme", [("--clusters", "gc"), ("--workers", "crc"), ("--load", "gc"),
                                           ("--order", "gc-mmc-correlated"), ("--pieces", "partial")])
def test_zero_where_it_is_not_a_value_names_the_option(option, scheme, capsys):
    argv = ["simulate", "--scheme", scheme, "--workers", "8", "--stragglers", "1", "--load", "2", "--order", "1",
            "--pieces", "4", option, "0", "--trials", "10"]
    usage_error(capsys, argv, f"argument {option}: must be a positive integer, got '0'")


def test_api_zero_is_a_value_and_clusters_zero_is_refused():
    assert gclib.build("crc", workers=4, stragglers=0).stragglers == 0
    with pytest.raises(ValueError, match="clusters must be a positive integer, got 0"):
        gclib.build("gc", workers=8, load=2, clusters=0)


# ---------------------------------------------------------------------------------- values that mean nothing
@pytest.mark.parametrize("argv,needle", [
    (["--network", "latency=0,bandwidth=0"], "--network: bandwidth must be a positive number (inf allowed), got 0"),
    (["--network", "latency=0,bandwidth=nan"], "--network: bandwidth must be a positive number"),
    (["--network", "latency=inf,bandwidth=1"], "--network: latency must be a non-negative finite number, got inf"),
    (["--network", "latency=1,bandwidth=1,queue=maybe"], "--network: queue must be yes or no, got 'maybe'"),
    (["--seed", "-1"], "argument --seed: must be a non-negative integer, got '-1'"),
    (["--mu", "1e-320"], "argument --mu: must be at least 5.56e-309"),
    (["--mu", "nan"], "argument --mu: must be a positive finite number, got 'nan'"),
    (["--alpha=-inf"], "argument --alpha: must be a non-negative finite number, got '-inf'"),
    (["--persistent", "-2"], "argument --persistent: must be a non-negative integer, got '-2'"),
    (["--trials", "1e5"], "argument --trials: must be a positive integer, got '1e5'"),
])
def test_simulate_refuses_meaningless_values_naming_the_option(argv, needle, capsys):
    usage_error(capsys, ["simulate", "--scheme", "crc", "--workers", "8", "--stragglers", "1", *argv], needle)


def test_empty_list_items_are_refused(capsys):
    usage_error(capsys, ["simulate", "--scheme", "gc-mmc-uncorrelated", "--workers", "8", "--load", "8",
                         "--orders", "6,,8"], "argument --orders: must be a comma-separated list of integers "
                                              "without empty items, got '6,,8' (item 1 is empty)")
    with pytest.raises(ValueError, match="item 1 is empty"):
        codes.mmc.gc_mmc_uncorrelated(8, 8, "6,,8")


def test_a_model_whose_times_overflow_is_refused_not_reported_as_never_decoding(capsys):
    usage_error(capsys, ["simulate", "--scheme", "crc", "--workers", "8", "--stragglers", "1", "--model", "pareto",
                         "--shape", "1e-300", "--trials", "10"], "beyond the float64 range")


def test_options_that_depend_on_the_code_are_refused_naming_the_option(capsys):
    # --persistent counts workers of the code: more than it has is refused before anything is drawn
    for command in (["simulate", "--scheme", "crc", "--workers", "4", "--stragglers", "1", "--trials", "10"],
                    ["train", "--algorithm", "gd", "--workers", "4", "--iterations", "1"]):
        usage_error(capsys, [*command, "--persistent", "9"],
                    "argument --persistent: must be an integer in [0, 4] (at most the code's 4 workers), got 9")
    # train's --scheme: the codes gc can build from --workers, --stragglers and --seed, and only for --algorithm gc
    line = usage_error(capsys, ["train", "--algorithm", "gc", "--scheme", "uc-mmc"],
                       "argument --scheme: must be one of crc, ")
    assert "frc" in line and "--load" not in line
    usage_error(capsys, ["train", "--algorithm", "lag-wk", "--scheme", "frc"],
                "argument --scheme: only --algorithm gc takes a code (algorithm 'lag-wk' has its own), got 'frc'")


def test_make_scheme_names_the_codes_gc_can_take():
    from gclib.learning.optim import code_names, make_scheme

    assert {"crc", "frc", "rs"} <= set(code_names()) and not {"gc", "partial", "lcc"} & set(code_names())
    with pytest.raises(ValueError, match=r"code must be a GradientCode or one of \[.*'crc'.*\] .*got 'gc'"):
        make_scheme("gc", 4, code="gc")
    with pytest.raises(ValueError, match="code is for scheme 'gc' only"):
        make_scheme("lag-wk", 4, code="frc")
    assert make_scheme("gc", 4, groups=2, code="frc").code.name.startswith("frc")


def test_a_summary_without_a_finite_mean_prints_na(capsys):
    # more persistent stragglers than the code tolerates: no trial decodes, and the line says so
    assert main(["simulate", "--scheme", "crc", "--workers", "8", "--stragglers", "1", "--persistent", "2",
                 "--trials", "10"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-2:] == [
        "  mean time n/a +/- n/a (model time units)",
        "  median time n/a (95% CI n/a to n/a), messages n/a, computations n/a, volume n/a (10 trials, 10 never "
        "decoded)"]


def test_an_infinite_mean_is_said_infinite_and_the_median_given(capsys):
    """A Pareto of shape 1/2 has no mean, nor has uncoded's completion time (the slowest worker): the sample
    mean of the trials, finite, estimates nothing. CRC tolerating 2 waits for the third slowest at worst: a tail
    index of 1.5, a finite mean of infinite variance (no interval)."""
    args = ["simulate", "--workers", "8", "--model", "pareto", "--shape", "0.5", "--trials", "2000"]
    assert main(args + ["--scheme", "uncoded"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("  mean time infinite (the completion time's tail index is 0.5: 0.5 per worker, and "
                               "an iteration may wait for its slowest worker); the mean of these trials, ")
    assert lines[2].startswith("  median time ")
    assert main(args + ["--scheme", "uncoded", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mean_time"] is None and out["mean_time_finite"] is False and out["sample_mean_time"] > 0
    lo, hi = out["median_time_ci95"]
    assert 0 < lo <= out["median_time"] <= hi
    assert main(args + ["--scheme", "crc", "--stragglers", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mean_time_finite"] and not out["variance_time_finite"] and out["ci95_time"] is None
    assert main(args + ["--scheme", "crc", "--stragglers", "4", "--json"]) == 0  # tail index 2.5
    out = json.loads(capsys.readouterr().out)
    assert out["variance_time_finite"] and out["ci95_time"] > 0


# ----------------------------------------------------------------------------------------------- memory
@pytest.mark.parametrize("argv,needle", [
    (["--scheme", "crc", "--workers", "99999999999999999999", "--stragglers", "1"],
     "the schedule of 'crc' with workers = 99999999999999999999: 99,999,999,999,999,999,999 messages needs about"),
    # uncoded's schedule: 128 bytes a message (its dense code would need 4 PiB)
    (["--scheme", "uncoded", "--workers", "200000000"],
     "the schedule of 'uncoded' with workers = 200000000: 200,000,000 messages needs about 23.8 GiB"),
    (["--scheme", "crc", "--workers", "8", "--stragglers", "1", "--trials", "99999999999999"],
     "simulate of 'crc' with trials = 99999999999999, 8 workers, load 2, 8 messages needs about"),
    (["--scheme", "partial", "--workers", "8", "--stragglers", "1", "--pieces", "10000000000"],
     "partial with workers = 8, pieces = 10000000000 needs about"),
    (["--scheme", "gc", "--workers", "99999999999999999999", "--load", "2", "--clusters", "9999999999999999999"],
     "the schedule of 'gc' with workers = 99999999999999999999, load = 2: at least"),
])
def test_sizes_too_large_for_memory_are_refused_at_once(argv, needle, capsys, monkeypatch):
    monkeypatch.setenv(checks.MEMORY_ENV, "4G")
    line = usage_error(capsys, ["simulate", *argv], needle)
    assert "more than the budget of 4 GiB (set by GCLIB_MEMORY_LIMIT); lower" in line


def test_simulate_memory_estimate_is_the_budget_line(monkeypatch):
    code = codes.crc(8, 1)
    model = ShiftedExponential()
    monkeypatch.setenv(checks.MEMORY_ENV, str(simulate_bytes(code, 500, model)))
    assert gclib.simulate(code, model, trials=500).trials == 500
    with pytest.raises(ValueError, match=r"lower trials \(about 500 fit\)"):
        gclib.simulate(code, model, trials=501)
    big = simulate_bytes(code, 3 * CHUNK, model)  # beyond a chunk, every further trial costs its results alone
    monkeypatch.setenv(checks.MEMORY_ENV, str(big))
    assert gclib.simulate(code, model, trials=3 * CHUNK).trials == 3 * CHUNK
    with pytest.raises(ValueError, match=rf"lower trials \(about {3 * CHUNK:,} fit\)"):
        gclib.simulate(code, model, trials=3 * CHUNK + 1)
    monkeypatch.setenv(checks.MEMORY_ENV, "100")  # not even one trial fits: the code is what to lower
    with pytest.raises(ValueError, match=r"lower the code's size \(one trial alone needs"):
        gclib.simulate(code, model, trials=10)


def test_code_constructors_refuse_before_building(monkeypatch):
    monkeypatch.setenv(checks.MEMORY_ENV, "1G")
    for build, needle in [(lambda: codes.crc(20000, 1), "crc with workers = 20000"),
                          (lambda: codes.rs(10 ** 12, 3), "rs with workers = 1000000000000"),
                          (lambda: codes.ye_abbe(10 ** 6, 1, 10), "ye-abbe with workers = 1000000, comm = 10"),
                          (lambda: codes.kadhe(10 ** 6, 1, 1), "kadhe with workers = 1000000, comm = 1"),
                          (lambda: codes.mmc.uc_mmc(10 ** 5, 10), "uc-mmc with workers = 100000, load = 10"),
                          (lambda: codes.lcc.lcc_code(10 ** 15, 4), "lcc with workers = 1000000000000000")]:
        with pytest.raises(ValueError, match=needle + ".* needs about"):
            build()
    assert codes.crc(100, 1).n_workers == 100


def test_verify_and_sweep_refuse_before_working(capsys, monkeypatch):
    monkeypatch.setenv(checks.MEMORY_ENV, "10M")
    usage_error(capsys, ["verify", "--scheme", "frc", "--workers", "400", "--stragglers", "0"],
                "exact verification of 'frc' with 400 messages x 400 columns needs about")
    built = []

    def build(s):  # pragma: no cover - the sweep must refuse before building a code
        built.append(s)
        return codes.crc(8, s)

    with pytest.raises(ValueError, match="sweep with trials = 1000000 needs about"):
        sweep({"crc": build}, [1, 2], ShiftedExponential(), trials=10 ** 6)
    assert built == []


def test_train_refuses_a_problem_too_large_for_memory(capsys, monkeypatch):
    monkeypatch.setenv(checks.MEMORY_ENV, "1G")
    usage_error(capsys, ["train", "--algorithm", "gd", "--problem", "linreg", "--workers", "3000", "--iterations", "1"],
                "the linreg problem with workers = 3000 (dim = 3000) needs about")


# -------------------------------------------------------------------------------------- folders and files
def test_reproduce_checks_its_folders_before_running_anything(capsys, tmp_path, monkeypatch):
    import gclib.reproduce as rep

    def never(*a, **k):  # pragma: no cover - the test fails if a notebook starts
        raise AssertionError("a notebook ran")

    monkeypatch.setattr(rep, "run_notebook", never)
    a_file = tmp_path / "f"
    a_file.write_text("")
    usage_error(capsys, ["reproduce", "--figures-dir", ""],
                "argument --figures-dir: must be a path, got an empty string")
    usage_error(capsys, ["reproduce", "--out-dir", str(a_file / "x")], "argument --out-dir:")
    usage_error(capsys, ["reproduce", "--figures-dir", "/proc/gclib-figures"], "cannot be created in '/proc'")
    assert rep.main(figures_dir="") == 2
    assert "figures_dir must be a path, got an empty string" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


@pytest.mark.parametrize("content,needle", [
    ("{not json", "is not valid JSON"),
    ("[1, 2]", "must hold a JSON object, got list"),
    ('{"notebooks": [1]}', "'notebooks' must map notebook names to entries"),
    ('{"notebooks": {"a": 3}}', "the entry of 'a' must be an object"),
    ('{"notebooks": {"a": {"figures": ["x.png"]}}}', "'figures' of 'a' must map file names to digests"),
])
def test_trace_refuses_a_malformed_manifest_naming_it(content, needle, capsys, tmp_path):
    (tmp_path / "quick").mkdir()
    (tmp_path / "quick" / "manifest.json").write_text(content)
    line = usage_error(capsys, ["trace", "x", "--executed", str(tmp_path)], needle)
    assert str(tmp_path / "quick" / "manifest.json") in line


# ------------------------------------------------------------------------------------------------- Ctrl-C
def test_ctrl_c_in_a_command_is_one_line_and_exit_130(capsys, monkeypatch):
    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib.import_module("gclib.cli.simulate"), "simulate", interrupted)  # where it is looked up
    assert main(["simulate", "--scheme", "crc", "--workers", "4", "--stragglers", "1"]) == 130
    assert capsys.readouterr().err == "gclib: interrupted\n"


def _sigint_default():  # in the child: a suite started in the background (nohup, `&`) passes SIGINT on ignored
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_after(p: subprocess.Popen, line: str) -> tuple[str, str]:
    """Wait for the child ``p`` to print ``line``, send it SIGINT, and return its ``(stdout, stderr)`` once it
    ends (killed if the test fails before)."""
    try:
        assert p.stdout.readline() == line
        p.send_signal(signal.SIGINT)
        return p.communicate(timeout=120)
    finally:
        if p.poll() is None:  # pragma: no cover
            p.kill()
            p.wait()


def test_ctrl_c_from_outside_is_one_line_and_exit_130():
    # a long simulation interrupted by a real SIGINT, as Ctrl-C sends it, once the command is running
    # the child says 'ready' from inside the simulation, so the signal reaches a running command
    code = ("import importlib, sys; from gclib.cli import main; sim = importlib.import_module('gclib.simulator'); "
            "run = sim.simulate\n"
            "def announced(*a, **k):\n    print('ready', flush=True)\n    return run(*a, **k)\n"
            "sim.simulate = announced\n"
            "sys.exit(main(['simulate', '--scheme', 'crc', '--workers', '40', '--stragglers', '4', '--trials', "
            "'20000000', '--json']))")
    env = dict(os.environ, PYTHONPATH=ROOT, GCLIB_MEMORY_LIMIT="none")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, preexec_fn=_sigint_default)
    out, err = _interrupt_after(p, "ready\n")
    assert p.returncode == 130 and err == "gclib: interrupted\n", err


#: Run in the child before gclib: an import hook that says when the module MODULE starts to load and waits there
#: (for the signal), so that the SIGINT arrives exactly while ``gclib`` is still starting, as an early Ctrl-C does.
_WAIT_FOR = """\
import sys, time
class WaitAt:
    def find_spec(self, name, path=None, target=None):
        if name == "MODULE":
            sys.meta_path.remove(self)
            print("importing MODULE", flush=True)
            time.sleep(60)
        return None
sys.meta_path.insert(0, WaitAt())
"""


@pytest.mark.parametrize("entry", [
    "import re, sys\nfrom gclib.cli import main\nsys.exit(main())\n",  # what the console script `gclib` runs
    "import runpy\nrunpy.run_module('gclib', run_name='__main__', alter_sys=True)\n",  # python -m gclib
])
# the command line's own modules, which main imports (importing gclib loads the core: NumPy and the codes)
@pytest.mark.parametrize("module", ["gclib.cli.registries", "gclib.cli.options"])
def test_ctrl_c_while_gclib_starts_is_one_line_and_exit_130(entry, module):
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.Popen([sys.executable, "-c", _WAIT_FOR.replace("MODULE", module) + entry, "list"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                         preexec_fn=_sigint_default)
    out, err = _interrupt_after(p, f"importing {module}\n")
    assert p.returncode == 130 and err == "gclib: interrupted\n" and out == "", err


def test_the_package_imports_the_core_and_no_heavy_package():
    # import gclib is eager but cheap: the codes, the simulator and the models, with NumPy and nothing heavier
    code = ("import sys, gclib, gclib.cli\n"
            "print(sorted(m for m in ('scipy', 'pandas', 'sympy', 'matplotlib', 'mpi4py', 'gclib.runtime', "
            "'gclib.cli.options') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr + out.stdout


@pytest.mark.parametrize("argv", [["--help"], ["simulate", "--scheme", "crc", "--workers", "0"]])
def test_the_help_and_a_bad_option_start_without_the_heavy_packages(argv):
    # main builds the options of the command its arguments name only: the help and a bad option stay quick
    code = ("import sys\nfrom gclib.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('scipy', 'pandas', 'sympy', 'matplotlib', 'mpi4py') if m in sys.modules), "
            "file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.stderr.strip().splitlines()[-1] == "[]", out.stderr


def test_the_package_api_is_imported_with_the_package():
    code = ("import sys, gclib\n"
            "import gclib.simulator\n"  # the simulator's module: gclib.simulate is its function, no module's name
            "from gclib import *\n"
            "from gclib import simulate, codes as c, build\n"
            "assert gclib.simulate is simulate and callable(simulate) and c is gclib.codes\n"
            "assert gclib.simulator.simulate is simulate and 'gclib.simulate' not in sys.modules\n"
            "res = gclib.simulate(gclib.codes.crc(4, 1, seed=0), ShiftedExponential(mu=10, alpha=0.01), trials=20, "
            "seed=1)\n"
            "assert res.summary()['trials'] == 20 and isinstance(res, SimResult)\n"
            "assert gclib.checks.integer('n', 3) == 3 and gclib.SCHEMES is sys.modules['gclib.schemes'].SCHEMES\n"
            "assert set(gclib.__all__) <= set(dir(gclib))\n"
            "try:\n    gclib.no_such_thing\nexcept AttributeError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0 and out.stdout == "module 'gclib' has no attribute 'no_such_thing'\n", out.stderr


# ---------------------------------------------------------------------------------------------- the library
def test_rs_refuses_nan_points_instead_of_simulating_a_code_that_never_decodes():
    with pytest.raises(ValueError, match="points must hold finite numbers, got nan at index 1"):
        codes.rs(4, 1, points=[0, np.nan, 1, 2])
    with pytest.raises(ValueError, match="points must hold finite numbers, got inf at index 3"):
        codes.rs(4, 1, points=[0, 0.5, 1, np.inf])
    with pytest.raises(TypeError, match="points must hold real or complex numbers"):
        codes.rs(4, 1, points=["a", "b", "c", "d"])
    # finite but useless: a code whose rule would claim decoding where not even every message decodes
    with pytest.raises(ValueError, match=r"points are too close together .* \(closest pair 1e-300 apart\)"):
        codes.rs(5, 0, points=[0.0, 1.0, 0.5, 0.25, 1e-300])
    with pytest.raises(ValueError, match="make the encoding matrix overflow float64"):
        codes.rs(5, 0, points=[0, 1e200, 2, 3, 4])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_gradient_code_refuses_non_finite_B(bad):
    B = np.eye(2)
    B[1, 1] = bad
    with pytest.raises(ValueError, match=rf"B must hold finite numbers, got {bad} at index \(1, 1\)"):
        codes.GradientCode("x", 2, 2, [(0,), (1,)], B, [0, 1], [1, 1], codes.threshold(2, 2), 0)


@pytest.mark.parametrize("kw,needle", [
    (dict(sender=[0.5, 1]), "sender must be integer worker ids"),
    (dict(order=[(0,), (5,)]), r"order\[1\] must hold part ids in \[0, 2\), got \[5\]"),
    (dict(order=[(0, 0), (1,)]), r"order\[0\] must hold distinct part ids"),
    (dict(n_pieces=0), "n_pieces must be a positive integer, got 0"),
    (dict(n_workers=-1), "n_workers must be a positive integer, got -1"),
    (dict(stragglers=-1), "stragglers must be a non-negative integer, got -1"),
])
def test_gradient_code_names_the_bad_field(kw, needle):
    args = dict(name="x", n_workers=2, n_parts=2, order=[(0,), (1,)], B=np.eye(2), sender=[0, 1], ready=[1, 1],
                rule=codes.threshold(2, 2), stragglers=0)
    args.update(kw)
    with pytest.raises(ValueError, match=needle):
        codes.GradientCode(**args)


@pytest.mark.parametrize("call,exc,needle", [
    (lambda c, m: gclib.simulate(c, m, trials=True), TypeError, "trials must be a positive integer, got True"),
    (lambda c, m: gclib.simulate(c, m, trials=10, seed=-1), ValueError, "seed must be a non-negative integer"),
    (lambda c, m: gclib.simulate(c, m, trials=10, seed=1.5), TypeError, "seed must be a non-negative integer"),
    (lambda c, m: gclib.simulate(c, None, trials=10), TypeError, "model must be a compute-time model"),
    (lambda c, m: gclib.simulate(None, m, trials=10), TypeError, "code must be a GradientCode"),
    (lambda c, m: gclib.simulate(c, m, trials=10, comm=3), TypeError, "comm must be a Communication"),
    (lambda c, m: gclib.Communication(latency="1"), TypeError, "latency must be a non-negative finite number"),
    (lambda c, m: ShiftedExponential(mu=True), TypeError, "mu must be a positive finite number, got True"),
    (lambda c, m: Pareto(shape=math.nan), ValueError, "shape must be a positive finite number, got nan"),
    (lambda c, m: codes.crc(4, 1, seed=-1), ValueError, "seed must be a non-negative integer"),
    (lambda c, m: codes.crc(4.0, 1), TypeError, "workers must be a positive integer, got 4.0"),
])
def test_library_errors_name_the_argument(call, exc, needle):
    with pytest.raises(exc, match=needle):
        call(codes.crc(6, 2), ShiftedExponential())


# ---------------------------------------------------------------------------------------------- a full disk
def _disk_full(*args, **kwargs):
    import errno

    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_names_the_file_it_could_not_write(tmp_path, capsys, monkeypatch):
    """What the disk refuses (here: every write fails with ENOSPC) is named by its path, in one line; the results
    computed before are kept (a run's are printed all the same)."""
    import pandas as pd

    from gclib import timings
    from gclib.advise import Advice
    from gclib.cli.run import write_measured
    from gclib.runtime import RunResult

    d = 0.01 + np.random.default_rng(0).exponential(0.1, size=(10, 4, 1))
    trace = tmp_path / "t.csv"
    timings.write(trace, d)
    monkeypatch.setattr(pd.DataFrame, "to_csv", _disk_full)
    with pytest.raises(OSError) as e:
        timings.write(tmp_path / "out.csv", d)
    assert e.value.filename == str(tmp_path / "out.csv") and "No space left" in e.value.strerror
    res = RunResult(records=[{"iteration": 0}], theta=np.zeros(2), spec={"code": {"workers": 2, "load": 1}},
                    tasks=[[0, 0, [0.1]], [1, 0, [0.2]]])
    said = write_measured(tmp_path / "m.csv", res)
    assert said == f"could not write the timing trace to {str(tmp_path / 'm.csv')!r}: No space left on device"
    monkeypatch.setattr(Advice, "plot", _disk_full)
    figure = tmp_path / "front.png"
    assert main(["advise", "--trace", str(trace), "--workers", "4", "--trials", "50", "--json", "--figure",
                 str(figure)]) == 1
    err = capsys.readouterr().err
    assert err == f"gclib: error: No space left on device: {figure}\n", err
