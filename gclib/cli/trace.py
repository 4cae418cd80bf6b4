"""``gclib trace``: which run made a figure, from the manifests ``gclib reproduce`` writes
(:func:`gclib.reproduce.trace`)."""
from __future__ import annotations

import json

from .options import EXIT_FAIL


def add_parser(sub):
    from .. import checks
    from ..reproduce import EXECUTED, FIGURES

    p = sub.add_parser("trace",
                       help="which run made a figure: notebook, parameters, seed, commit (from the manifests)")
    p.add_argument("figure", type=checks.option(checks.input_path, kind="file"),
                   help="a figure file or name, e.g. figures/01_completion_time.png or 01_completion_time")
    p.add_argument("--executed", type=checks.option(checks.input_path), default=str(EXECUTED),
                   help="where the per-profile manifests are")
    p.add_argument("--figures-dir", type=checks.option(checks.input_path), default=None,
                   help=f"where the figure files are (default: the figure's own directory, else the one the run "
                        f"wrote to, e.g. {FIGURES})")
    p.add_argument("--json", action="store_true", help="print the records as JSON")
    p.set_defaults(fn=run)


def run(a) -> int:
    from ..reproduce import trace

    recs = trace(a.figure, executed=a.executed, figures_dir=a.figures_dir)
    if a.json:
        print(json.dumps(recs, indent=1, default=str))
    elif not recs:
        print(f"no run recorded for {a.figure!r} in {a.executed}/*/manifest.json (run gclib reproduce first)")
    for r in recs:
        match = {True: "matches the recorded run", False: "DIFFERS from the recorded run (rewritten since?)",
                 None: "not present"}[r["current_file_matches"]]
        print(f"{r['figure']}: notebook {r['notebook']}, profile {r['profile']}, started {r['started']}, "
              f"{r['duration_s']} s, {r['status']}")
        print(f"  git commit {r['git_commit']}{' (with uncommitted changes)' if r['git_dirty'] else ''}, "
              f"seed {r['seed']}")
        print(f"  parameters: {json.dumps(r['parameters'], default=str)}")
        print(f"  file in {r['figures_dir']}: {match}")
    return 0 if recs else EXIT_FAIL
