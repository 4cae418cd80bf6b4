"""Test-session settings shared by every test module: the hypothesis cache, the fixtures several modules read
(the documentation site, the notebooks run in the quick profile), the groups that keep tests together under
pytest-xdist (`make test` runs two workers), and one line saying where the session's time went."""
import json
import os
import shutil
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pytest

_HYPOTHESIS_HOME = None
_CLOCK = {}  # the session's start and the machine's load then


#: Where a run of the whole suite builds the documentation site in the background (tests/docs_site.py's start):
#: set by the session's first process, read by every worker's ``docs_site`` fixture.
DOCS_BUILD = "GCLIB_TEST_DOCS_BUILD"
_DOCS = {}  # the background build's process and folder, in the process that started it


def pytest_configure(config):
    """Hypothesis keeps caches (constants, unicode data) in a folder of its own: a temporary one for the session,
    removed at the end, so that the tests leave nothing in the checkout (a folder the caller chose is kept). The
    session's clock starts here (:func:`pytest_terminal_summary`). A run of the whole suite starts building the
    documentation site now, in the background (tests/docs_site.py)."""
    global _HYPOTHESIS_HOME
    _CLOCK.update(start=time.perf_counter(), load=_load())
    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        _HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="gclib-hypothesis-")
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = _HYPOTHESIS_HOME
    if not os.environ.get(DOCS_BUILD) and _runs_the_docs_site(config):
        import docs_site as site

        work = Path(tempfile.mkdtemp(prefix="gclib-docs-site-"))
        _DOCS.update(proc=site.start(work), work=work)
        os.environ[DOCS_BUILD] = str(work)


def _runs_the_docs_site(config) -> bool:
    """Whether the session names the tests folder itself or a file whose tests read the site (not a subset of
    other files, for which the build would be wasted)."""
    here = Path(__file__).resolve().parent
    for arg in config.args:
        path = Path(arg.split("::", 1)[0]).resolve()
        if path == here or path.name in SHARED and SHARED[path.name] == "docs site":
            return True
    return False


def pytest_unconfigure(config):
    if _HYPOTHESIS_HOME is not None:
        shutil.rmtree(_HYPOTHESIS_HOME, ignore_errors=True)
        os.environ.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    if _DOCS:
        if _DOCS["proc"].poll() is None:  # a session that ended before the site was built
            _DOCS["proc"].kill()
            _DOCS["proc"].wait()
        shutil.rmtree(_DOCS.pop("work"), ignore_errors=True)
        os.environ.pop(DOCS_BUILD, None)


@pytest.fixture(scope="session")
def docs_site(tmp_path_factory):
    """The documentation site, staged and built once per session (tests/docs_site.py): its folder; built in the
    background since the session's start when the whole suite runs."""
    import docs_site as site

    if os.environ.get(DOCS_BUILD):
        return site.wait(Path(os.environ[DOCS_BUILD]))
    return site.build(tmp_path_factory.mktemp("docs"))


@pytest.fixture(scope="session")
def quick_runs(tmp_path_factory):
    """Run a notebook in the quick profile at most once per session (per worker under xdist: the tests that read
    one notebook's run share a group below), on demand: ``quick_runs(path) -> (NotebookRun, figures folder)``."""
    from gclib import reproduce

    cache = {}

    def run(path):
        if path.stem not in cache:
            d = tmp_path_factory.mktemp(path.stem)
            r = reproduce.run_notebook(path, "quick", out_dir=d / "executed", figures_dir=d / "figures")
            cache[path.stem] = (r, d / "figures")
        return cache[path.stem]

    return run


# ------------------------------------------------------------------------------------- groups under xdist
#: Files whose tests start MPI jobs (or ranks across network namespaces): one worker runs them all, one job at a
#: time, as a session without xdist does.
MPI_FILES = ("test_runtime.py", "test_runtime_faults.py", "test_multihost.py", "test_sequential_mpi.py",
             "test_measure.py", "test_wakeup.py", "test_mpi_runs.py", "test_partial_work.py", "test_sequential.py",
             "test_cli_examples.py", "test_hostile_inputs.py", "test_runtime_models.py", "test_your_model_guide.py")
#: Notebooks whose quick profile runs MPI jobs: with the MPI tests.
MPI_NOTEBOOKS = ("07_mpi_runs", "09_advise", "15_your_model")
#: Files whose tests share a session fixture (one run of a notebook, one build of the site, one JupyterLab): each
#: group on one worker, so that the fixture is made once.
SHARED = {"test_notebooks.py": "notebooks", "test_reproducible.py": "notebooks", "test_docs.py": "docs site",
          "test_browser.py": "docs site"}


def scope_of(nodeid: str) -> str:
    """The unit of work a test belongs to under ``--dist loadgroup``: ``"mpi"``, a shared fixture's group, or the
    test alone (any worker, as soon as one is free)."""
    name = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    if name in MPI_FILES or any(f"[{nb}]" in nodeid for nb in MPI_NOTEBOOKS):
        return "mpi"
    return SHARED.get(name, nodeid)


def pytest_collection_modifyitems(config, items):
    """A test marked ``mpi`` or ``multihost`` outside :data:`MPI_FILES` would start its jobs beside the MPI group's
    under xdist: refused at collection, naming the file to list."""
    stray = sorted({item.path.name for item in items if (item.get_closest_marker("mpi") or
                                                         item.get_closest_marker("multihost"))
                    and item.path.name not in MPI_FILES})
    if stray:
        raise pytest.UsageError(f"tests marked mpi or multihost in {', '.join(stray)}: add the file to MPI_FILES in "
                                f"tests/conftest.py (under xdist they must share the MPI tests' worker)")


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """Under ``--dist loadgroup`` (``make test``), the units of :func:`scope_of`, largest first (the MPI tests on
    one worker, the notebooks on the other, the rest wherever a worker is free). pytest-xdist's own groups
    (``xdist_group`` marks) are not used: they rename the tests' ids, which pytest 9 keeps elsewhere."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Groups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return Groups(config, log)


# ------------------------------------------------------------------------------ where the session's time went
#: Groups of test files in the one-line summary of a session (the rest: every other file).
GROUPS = {"notebooks": ("test_notebooks.py", "test_reproducible.py"), "MPI runs": MPI_FILES,
          "docs site": ("test_docs.py",)}
_SECONDS = defaultdict(float)
_NOTEBOOKS = {}
_TESTS = set()


def pytest_runtest_logreport(report):
    """Every phase of every test (from every worker under xdist) counts for its file."""
    _SECONDS[report.nodeid.split("::")[0].rsplit("/", 1)[-1]] += report.duration
    _TESTS.add(report.nodeid)
    for key, value in getattr(report, "user_properties", ()):
        if key == "notebook_seconds" and report.when == "call":
            _NOTEBOOKS[report.nodeid.rsplit("[", 1)[-1].rstrip("]")] = round(float(value), 1)


def _load():
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def _groups() -> dict:
    out = {name: sum(v for f, v in _SECONDS.items() if f in files) for name, files in GROUPS.items()}
    out["the rest"] = sum(_SECONDS.values()) - sum(out.values())
    return {k: round(v, 1) for k, v in out.items()}


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """One line: the session's wall-clock time and the seconds of its tests per group of files and in its slowest
    files; after a run of the whole suite that passed, the same in build/test-durations.json, with each notebook's
    quick profile (``python tools/durations.py`` keeps it in tests/durations.json, which the README's sentence is
    rendered from)."""
    if hasattr(config, "workerinput") or "start" not in _CLOCK or not _SECONDS:
        return
    wall = time.perf_counter() - _CLOCK["start"]
    workers = int(getattr(config.option, "numprocesses", 0) or 0) or 1
    slow = sorted(_SECONDS.items(), key=lambda kv: -kv[1])[:3]
    terminalreporter.write_line(
        f"time: {wall:.0f} s on {workers} worker{'s' if workers > 1 else ''}; seconds of the tests by group: "
        + ", ".join(f"{k} {v:.0f}" for k, v in _groups().items() if v)
        + "; slowest files: " + ", ".join(f"{f} {v:.0f}" for f, v in slow))
    whole = (config.args_source == pytest.Config.ArgsSource.TESTPATHS and not config.option.keyword
             and not config.option.markexpr and not getattr(config.option, "lf", False))
    if whole and exitstatus == 0:
        out = {"wall_seconds": round(wall, 1), "workers": workers, "tests": len(_TESTS),
               "groups": _groups(), "files": {f: round(v, 1) for f, v in sorted(_SECONDS.items())},
               "notebooks_quick": dict(sorted(_NOTEBOOKS.items())),
               "load_average_1min": {"start": _CLOCK["load"], "end": _load()}, "date": time.strftime("%Y-%m-%d")}
        path = Path(config.rootpath) / "build" / "test-durations.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(out, indent=1) + "\n")
