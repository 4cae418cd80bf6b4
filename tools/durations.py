"""Where the time of `make test` went, and the README's sentence about it (never typed by hand).

    python tools/durations.py           # keep the last full run (build/test-durations.json, written by the test
                                        # session of `make test`) in tests/durations.json and render the README
    python tools/durations.py --check   # write nothing; exit 1 when the README's sentence is not the saved run's

tests/conftest.py times every test file and, at the end of a run of the whole suite that passed, writes
build/test-durations.json: the session's wall-clock seconds, the workers, the tests, the seconds of each group of
files (the notebooks in the quick profile, the MPI runs, the documentation site, the rest) and of each notebook's
quick profile, with the machine's load. This tool copies it to tests/durations.json, the committed record the
README's sentence (between `<!-- test-duration -->` markers) is rendered from.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEASURED = ROOT / "build" / "test-durations.json"
SAVED = ROOT / "tests" / "durations.json"
README = ROOT / "README.md"
MARK = "<!-- test-duration -->", "<!-- /test-duration -->"


def _minutes(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m} min {s:02d} s" if m else f"{s} s"


def text(d: dict | None) -> str:
    """The README's sentence from a record of a full run (tests/durations.json; ``None``: none kept yet)."""
    if d is None:
        return ("No full run of `make test` is recorded yet (after one: `python tools/durations.py`, which keeps it in "
                "`tests/durations.json`).")
    g = d["groups"]
    nb = d["notebooks_quick"]
    load = d["load_average_1min"]
    parts = ", ".join(f"{name} {g[name]:.0f} s" for name in g if g[name])
    quick = "no notebook ran"
    if nb:
        longest = max(nb, key=nb.get)
        quick = (f"its quick profile of the {len(nb)} notebooks took {sum(nb.values()):.0f} s in all, the longest "
                 f"`{longest}` {nb[longest]:.0f} s")
    return (f"The last full `make test` took {_minutes(d['wall_seconds'])} for its {d['tests']:,} tests on "
            f"{d['workers']} worker{'s' if d['workers'] != 1 else ''} (the machine's 1-minute load "
            f"{load['start']:.1f} at the start, {load['end']:.1f} at the end; seconds of the tests by group: {parts}); "
            f"{quick} (recorded in `tests/durations.json`).")


def render(check: bool = False) -> int:
    readme = README.read_text()
    a, b = readme.index(MARK[0]) + len(MARK[0]), readme.index(MARK[1])
    want = text(json.loads(SAVED.read_text()) if SAVED.exists() else None)
    if readme[a:b] == want:
        return 0
    if check:
        print("the README's test-duration sentence is not tests/durations.json's: python tools/durations.py",
              file=sys.stderr)
        return 1
    README.write_text(readme[:a] + want + readme[b:])
    return 0


def main(argv: list[str]) -> int:
    if argv not in ([], ["--check"]):
        print(__doc__, file=sys.stderr)
        return 2
    if not argv:
        if not MEASURED.exists():
            print(f"no {MEASURED.relative_to(ROOT)}: run the whole suite first (make test)", file=sys.stderr)
            return 1
        SAVED.write_text(json.dumps(json.loads(MEASURED.read_text()), indent=1, sort_keys=True) + "\n")
    return render(check=bool(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
