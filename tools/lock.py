"""Write requirements.lock: the exact versions of every package of gclib's `all` extra, for `make setup`.

    python tools/lock.py              # the newest versions pyproject.toml's ranges allow (pip-compile, pip-tools)
    python tools/lock.py --from-env   # the versions installed in this environment (after testing them)

The lock holds third-party packages only: `make setup` installs it, then gclib itself with `pip install -e .
--no-deps`. pip and setuptools are left to the venv. Needs pip-tools (the `dev` extra).
"""
from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
HEADER = """\
# Exact versions of gclib's dependencies with every extra (pyproject.toml's `all`), installed by `make setup`
# before gclib itself (`pip install -e . --no-deps`). Written by `python tools/lock.py` (pip-compile of
# pyproject.toml); `pip install .` uses pyproject.toml's ranges instead.
"""


def clean(text: str) -> str:
    """Drop pip-compile's header, gclib's own entry and annotations that name files outside the repository; name
    pyproject.toml by its path in the repository; drop a local build's label from a pin (``torch==2.13.0+cpu``, the
    CPU build installed here, becomes ``torch==2.13.0``, which that build and PyPI's release of the version both
    match)."""
    out, skip = [], False
    for line in text.splitlines():
        if line.startswith("#") and not line.startswith("#   ") and not out:
            continue  # pip-compile's header (its command line names temporary files)
        if re.match(r"^[A-Za-z0-9]", line):
            skip = line.split()[0].lower().startswith("gclib")
            line = re.sub(r"^([A-Za-z0-9._-]+==[^+\s]+)\+\S+", r"\1", line)
        if skip or re.match(r"^\s+#\s+(-c|-r)\s", line):
            continue
        out.append(line.replace(f"({ROOT / 'pyproject.toml'})", "(pyproject.toml)"))
    return HEADER + "\n".join(out).strip("\n") + "\n"


def main(argv: list[str]) -> int:
    if argv not in ([], ["--from-env"]):
        print(__doc__, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "piptools", "compile", "--quiet", "--all-extras", "--strip-extras",
               "--no-allow-unsafe", "--no-emit-index-url", "--no-emit-find-links", "--no-header",
               "-o", str(Path(tmp) / "lock.txt"), str(ROOT / "pyproject.toml")]
        if argv:
            freeze = subprocess.run([sys.executable, "-m", "pip", "freeze", "--exclude-editable"], check=True,
                                    capture_output=True, text=True).stdout
            pins = [ln for ln in freeze.splitlines() if "==" in ln and not ln.lower().startswith("gclib")]
            (Path(tmp) / "constraints.txt").write_text("\n".join(pins) + "\n")
            cmd += ["-c", str(Path(tmp) / "constraints.txt")]
        subprocess.run(cmd, check=True, cwd=ROOT)
        LOCK.write_text(clean((Path(tmp) / "lock.txt").read_text()))
    print(f"wrote {LOCK.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
