"""Test-session settings shared by every test module."""
import os
import shutil
import tempfile

import pytest

_HYPOTHESIS_HOME = None


def pytest_configure(config):
    """Hypothesis keeps caches (constants, unicode data) in a folder of its own: a temporary one for the session,
    removed at the end, so that the tests leave nothing in the checkout (a folder the caller chose is kept)."""
    global _HYPOTHESIS_HOME
    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        _HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="gclib-hypothesis-")
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = _HYPOTHESIS_HOME


def pytest_unconfigure(config):
    if _HYPOTHESIS_HOME is not None:
        shutil.rmtree(_HYPOTHESIS_HOME, ignore_errors=True)
        os.environ.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)


@pytest.fixture(scope="session")
def docs_site(tmp_path_factory):
    """The documentation site, staged and built once per session (tests/docs_site.py): its folder."""
    import docs_site as site

    return site.build(tmp_path_factory.mktemp("docs"))
