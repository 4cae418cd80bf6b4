"""``gclib trace``: which recorded run made a figure file, matched by its content's SHA-256 in the manifests
``gclib reproduce`` writes (:func:`gclib.reproduce.trace`)."""
from __future__ import annotations

import json

from .options import EXIT_FAIL


def add_parser(sub):
    from .. import checks
    from ..reproduce import EXECUTED

    p = sub.add_parser("trace", help="which recorded run made a figure file (matched by content hash)")
    p.add_argument("figure", type=checks.option(checks.input_path, kind="file"),
                   help="a figure file, e.g. figures/04_fig1.png, or a name in the figures folder (04_fig1)")
    p.add_argument("--executed", type=checks.option(checks.input_path), default=str(EXECUTED),
                   help="where the per-profile manifests of local runs are (default build/executed)")
    p.add_argument("--figures-dir", type=checks.option(checks.input_path), default=None,
                   help="the folder whose manifest.json holds the committed record (default figures/)")
    p.add_argument("--json", action="store_true", help="print the matching runs as a JSON list")
    p.set_defaults(fn=run)


def run(a) -> int:
    """Exit 0 when a recorded run wrote these bytes, 1 when none did (in text and JSON alike)."""
    from ..reproduce import figure_file, sha256, trace

    recs = trace(a.figure, executed=a.executed, figures_dir=a.figures_dir)
    if a.json:
        print(json.dumps(recs, indent=1, default=str))
        return 0 if recs else EXIT_FAIL
    if not recs:
        path = figure_file(a.figure, a.figures_dir)
        print(f"{path}: matches no recorded run (its content, {sha256(path)[:19]}..., is in no manifest: made or "
              f"changed after the last recorded run, or not a figure of gclib reproduce)")
        return EXIT_FAIL
    for r in recs:
        named = "" if r["recorded_as"] == _name(r["file"]) else f" (written as {r['recorded_as']})"
        print(f"{r['file']}{named}: notebook {r['notebook']}, profile {r['profile']}, started {r['started']}, "
              f"{r['duration_s']} s, {r['status']}")
        print(f"  gclib {r['gclib_version']}, git commit {r['git_commit']}"
              f"{' (with uncommitted changes)' if r['git_dirty'] else ''}, seed {r['seed']}")
        print(f"  parameters: {json.dumps(r['parameters'], default=str)}")
        print(f"  recorded in {r['manifest']}")
    return 0


def _name(path: str) -> str:
    from pathlib import Path

    return Path(path).name
