"""gclib.checks: the argument checks the library and the CLI share, the memory budget and the folder check."""
import argparse
import math
import os
import re

import numpy as np
import pytest

from gclib import checks
from gclib.checks import ParameterTypeError


@pytest.mark.parametrize("value,kw,message", [
    (0, dict(low=1), "workers must be a positive integer, got 0"),
    (-1, dict(low=0), "workers must be a non-negative integer, got -1"),
    (11, dict(low=1, high=10), r"workers must be an integer in \[1, 10\], got 11"),
    (3, dict(low=5), "workers must be an integer >= 5, got 3"),
])
def test_integer_out_of_range_is_a_value_error_naming_the_argument(value, kw, message):
    with pytest.raises(ValueError, match=message):
        checks.integer("workers", value, **kw)


@pytest.mark.parametrize("value", [4.0, True, "4", None, float("nan"), [4]])
def test_integer_of_the_wrong_type_is_a_type_error_and_a_value_error(value):
    with pytest.raises(TypeError, match="workers must be"):
        checks.integer("workers", value, low=1)
    with pytest.raises(ValueError):
        checks.integer("workers", value, low=1)


def test_integer_takes_numpy_integers_and_huge_python_integers():
    assert checks.integer("n", np.int64(5), low=1) == 5 and type(checks.integer("n", np.int64(5))) is int
    assert checks.integer("n", 10 ** 30, low=1) == 10 ** 30


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 10 ** 400])
def test_real_refuses_nan_inf_and_integers_beyond_float(value):
    with pytest.raises(ValueError, match="mu must be a positive finite number"):
        checks.real("mu", value, above=0)


def test_real_bounds_and_inf_when_allowed():
    assert checks.real("bandwidth", math.inf, above=0, finite=False) == math.inf
    with pytest.raises(ValueError, match=r"bandwidth must be a positive number \(inf allowed\), got 0"):
        checks.real("bandwidth", 0, above=0, finite=False)
    with pytest.raises(ValueError, match="latency must be a non-negative finite number, got -1"):
        checks.real("latency", -1, low=0)
    with pytest.raises(ValueError, match=r"x must be a finite number >= 1 and < 2, got 2"):
        checks.real("x", 2, low=1, below=2)
    with pytest.raises(TypeError, match="mu must be"):
        checks.real("mu", "1", above=0)


@pytest.mark.parametrize("text,item", [("6,,8", 1), ("6,8,", 2), (",6", 0), ("", 0), (" ", 0)])
def test_int_list_refuses_empty_items_instead_of_dropping_them(text, item):
    with pytest.raises(ValueError, match=rf"orders must be a comma-separated list of integers without empty items, "
                                         rf".*\(item {item} is empty\)"):
        checks.int_list("orders", text, low=1)


def test_int_list_items_are_checked_and_named():
    assert checks.int_list("orders", " 6, 8,10", low=1) == (6, 8, 10)
    assert checks.int_list("orders", [6, np.int64(8)], low=1) == (6, 8)
    with pytest.raises(ValueError, match=r"orders\[1\] must be a positive integer, got 0"):
        checks.int_list("orders", "6,0", low=1)
    with pytest.raises(ValueError, match=r"item 1 is '8.5'"):
        checks.int_list("orders", "6,8.5")
    with pytest.raises(ValueError, match="orders must list at least 1 integer"):
        checks.int_list("orders", [])


def test_generator_refuses_negative_and_non_integer_seeds():
    g = np.random.default_rng(1)
    assert checks.generator(g) is g
    assert checks.generator(3).integers(1000) == np.random.default_rng(3).integers(1000)
    with pytest.raises(ValueError, match="seed must be a non-negative integer or a numpy.random.Generator, got -1"):
        checks.generator(-1)
    with pytest.raises(TypeError, match="seed must be"):
        checks.generator(1.5)


def test_finite_array_names_the_first_bad_entry():
    with pytest.raises(ValueError, match=r"B must hold finite numbers, got nan at index \(1, 0\)"):
        checks.finite_array("B", [[1.0, 2.0], [np.nan, 0.0]])
    with pytest.raises(ValueError, match="points must hold finite numbers, got inf at index 2"):
        checks.finite_array("points", [0, 1, np.inf])
    with pytest.raises(TypeError, match="B must hold real or complex numbers"):
        checks.finite_array("B", [["a", "b"]])
    with pytest.raises(ValueError, match="must hold real numbers, got complex"):
        checks.finite_array("x", [1j], complex_ok=False)
    assert checks.finite_array("x", [1, 2]).dtype == float


def test_output_dir_refuses_before_anything_is_created(tmp_path):
    f = tmp_path / "a-file"
    f.write_text("x")
    with pytest.raises(ValueError, match="figures_dir must be a path, got an empty string"):
        checks.output_dir("figures_dir", "")
    with pytest.raises(ValueError, match="is a file"):
        checks.output_dir("figures_dir", f)
    with pytest.raises(ValueError, match="cannot be a folder: .* is a file"):
        checks.output_dir("figures_dir", f / "sub" / "dir")
    with pytest.raises(ValueError, match="(longer than|too long)"):
        checks.output_dir("figures_dir", tmp_path / ("x" * 300))
    ok = checks.output_dir("figures_dir", tmp_path / "new" / "deeper")
    assert ok == tmp_path / "new" / "deeper" and not (tmp_path / "new").exists()  # nothing created
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # the write test left nothing


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_output_dir_refuses_a_read_only_folder(tmp_path):  # pragma: no cover - the test machine runs as root
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(ValueError, match="cannot be created in"):
            checks.output_dir("out_dir", ro / "x")
    finally:
        ro.chmod(0o700)


def test_output_dir_refuses_a_folder_of_a_file_system_that_cannot_hold_it():
    # /proc refuses new folders even to root: the write test finds it before anything runs
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc")
    with pytest.raises(ValueError, match=r"out_dir '/proc/gclib-test/x' cannot be created in '/proc'"):
        checks.output_dir("out_dir", "/proc/gclib-test/x")


def test_memory_budget_from_the_environment(monkeypatch):
    monkeypatch.setenv(checks.MEMORY_ENV, "2G")
    assert checks.memory_budget() == (2 << 30, f"set by {checks.MEMORY_ENV}")
    monkeypatch.setenv(checks.MEMORY_ENV, "512MiB")
    assert checks.memory_budget()[0] == 512 << 20
    monkeypatch.setenv(checks.MEMORY_ENV, "none")
    assert checks.memory_budget()[0] is None
    checks.need_memory("x", 10 ** 30, sizes="n = 1", lower="n")  # no limit: nothing refused
    monkeypatch.setenv(checks.MEMORY_ENV, "lots")
    with pytest.raises(ValueError, match="GCLIB_MEMORY_LIMIT must be a positive size such as 8G"):
        checks.memory_budget()


def test_memory_budget_defaults_to_half_the_available_memory(monkeypatch):
    monkeypatch.delenv(checks.MEMORY_ENV, raising=False)
    avail = checks.available_memory()
    assert avail is not None and avail > 0
    budget, how = checks.memory_budget()
    assert abs(budget - avail // 2) <= avail // 100 and "50% of the" in how  # memory moves between the reads


def test_need_memory_names_the_sizes_the_estimate_and_what_to_lower(monkeypatch):
    monkeypatch.setenv(checks.MEMORY_ENV, "1M")
    checks.need_memory("crc", 1 << 20, sizes="workers = 10", lower="workers")  # at the budget: accepted
    with pytest.raises(ValueError) as e:
        checks.need_memory("crc", 3 << 30, sizes="workers = 20000", lower="workers")
    assert str(e.value) == ("crc with workers = 20000 needs about 3 GiB of memory, more than the budget of 1 MiB "
                            "(set by GCLIB_MEMORY_LIMIT); lower workers")


def test_format_bytes():
    assert [checks.format_bytes(x) for x in (0, 1023, 1536, 3 << 30, 8 * 10 ** 40)] == [
        "0 B", "1023 B", "1.5 KiB", "3 GiB", "8e+40 B"]


def test_option_turns_a_check_into_an_argparse_type_naming_the_option(capsys):
    p = argparse.ArgumentParser(prog="x")
    p.add_argument("--workers", type=checks.option(checks.integer, low=1))
    p.add_argument("--mu", type=checks.option(checks.real, above=0))
    p.add_argument("--orders", type=checks.option(checks.int_list, low=1))
    assert p.parse_args(["--workers", "3", "--mu", "0.5", "--orders", "6,8"]).orders == (6, 8)
    for argv, msg in [(["--workers", "0"], "argument --workers: must be a positive integer, got '0'"),
                      (["--workers", "1e5"], "argument --workers: must be a positive integer, got '1e5'"),
                      (["--mu", "nan"], "argument --mu: must be a positive finite number, got 'nan'"),
                      (["--orders", "6,,8"], "argument --orders: must be a comma-separated list of integers "
                                             "without empty items, got '6,,8' (item 1 is empty)")]:
        with pytest.raises(SystemExit):
            p.parse_args(argv)
        assert msg in capsys.readouterr().err


def test_seconds_is_a_positive_finite_duration():
    assert checks.seconds("timeout", 2) == 2.0 and checks.seconds("timeout", 1e-3) == 1e-3
    for bad in (0, -5, math.nan, math.inf):
        with pytest.raises(ValueError, match=f"timeout must be a positive finite number of seconds, got {bad!r}"):
            checks.seconds("timeout", bad)
    with pytest.raises(ParameterTypeError, match="timeout must be a positive finite number of seconds, got '3'"):
        checks.seconds("timeout", "3")


def test_int_list_can_require_distinct_items_and_say_why_an_item_is_out_of_range():
    assert checks.int_list("workers", "0, 3", low=0, high=3, distinct=True) == (0, 3)
    with pytest.raises(ValueError, match=r"workers must be a list of distinct integers, got '1,2,1' \(1 is given twice\)"):
        checks.int_list("workers", "1,2,1", distinct=True)
    with pytest.raises(ValueError, match=r"workers\[1\] must be an integer in \[0, 3\] \(4 workers\), got 4"):
        checks.int_list("workers", [0, 4], low=0, high=3, why=" (4 workers)")
    with pytest.raises(ValueError, match=r"^item 1 must be a non-negative integer, got -1$"):  # an option's check
        checks.int_list(None, "0,-1", low=0)
    with pytest.raises(ValueError, match=r"must be a comma-separated list of integers without empty items, got "
                                         r"' , ' \(item 0 is empty\)"):
        checks.int_list(None, " , ", min_len=0)  # blanks are empty items, not an empty list


def test_output_file_refuses_before_anything_is_created(tmp_path):
    f = tmp_path / "state.json"
    f.write_text("{}")
    assert checks.output_file("state", f) == f  # an existing file is replaced
    deeper = tmp_path / "new" / "deeper" / "s.json"
    assert checks.output_file("state", deeper) == deeper and not (tmp_path / "new").exists()
    for bad, message in [("", "state must be a path, got an empty string"),
                         (tmp_path, f"state '{tmp_path}' is a folder, not a file"),
                         (f / "x.json", f"state '.*/x.json' cannot be created: '{re.escape(str(f))}' is a file"),
                         (tmp_path / ("x" * 300) / "s.json", "state '.*' cannot be (used|created)"),
                         ("/proc/gclib-test/s.json", "state '/proc/gclib-test/s.json' cannot be created in '/proc'")]:
        with pytest.raises(ValueError, match=message):
            checks.output_file("state", bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]  # nothing created, the write test included


def test_option_check_names_an_option_whose_check_needs_other_options():
    with pytest.raises(ValueError, match=r"^argument --persistent: must be an integer in \[0, 4\] \(at most the "
                                         r"code's 4 workers\), got 9$"):
        checks.option_check("--persistent", checks.integer, 9, low=0, high=4, why=" (at most the code's 4 workers)")
    with pytest.raises(ParameterTypeError, match=r"^argument --kill: a worker must be a non-negative integer"):
        checks.option_check("--kill", checks.integer, "x", subject="a worker", low=0)
    assert checks.option_check("--kill", checks.integer, 3, subject="a worker", low=0) == 3


def test_a_long_path_in_a_message_keeps_its_start_and_its_file_name():
    deep = "/" + "/".join(["folder-of-a-deep-tree"] * 12) + "/missing.json"
    shown = checks.short_path(deep)
    assert len(shown) <= 100 and shown.startswith("/folder-of-a-deep-tree/") and shown.endswith(".../missing.json")
    assert checks.short_path("/tmp/a.json") == "/tmp/a.json"
    name = "n" * 300
    assert checks.short_path("/tmp/" + name).endswith("/" + "n" * 50) and len(checks.short_path("/tmp/" + name)) <= 100
    with pytest.raises(ValueError, match=r"\.\.\./missing\.json' does not exist"):
        checks.input_path("trace", deep, kind="file", must_exist=True)
