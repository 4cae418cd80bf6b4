"""``gclib trace``: two forms that read differently.

* ``gclib trace FIGURE``: which recorded run made a figure file, matched by its content's SHA-256 in the manifests
  ``gclib reproduce`` writes (:func:`gclib.reproduce.trace`);
* ``gclib trace convert TRACE --out CSV``: a timing trace in another shape (a tidy CSV with other column names, a
  wide CSV, a per-operation parquet trace) written as gclib's timing-trace CSV (:func:`gclib.timings.convert`).

The first word after ``trace`` says which: ``convert`` (a figure file named ``convert`` is ``./convert``).
"""
from __future__ import annotations

import json
from pathlib import Path

from gclib import checks
from gclib.cli.options import EXIT_FAIL, examples

USAGE = ("gclib trace FIGURE [--executed DIR] [--figures-dir DIR] [--json]\n"
         "       gclib trace convert TRACE --out CSV [--format {auto,csv,wide,ops}] [--columns NAME=COLUMN,...]\n"
         "                           [--stages {sum,max}] [--json]")
#: the options of each form (the other form refuses them)
FIGURE_OPTIONS = ("executed", "figures_dir")
CONVERT_OPTIONS = ("out", "format", "columns", "stages")


#: The examples of ``gclib trace --help`` (the tests run each, with the files of EXAMPLE_FILES).
EXAMPLES = (
    ("gclib trace figures/04_fig1.png", "the notebook, parameters, commit and versions of the run that made it"),
    ("gclib trace convert data/straggler-analysis/trace-SE.parquet --out se.csv",
     "a real job's per-operation trace as gclib's timing trace (what was kept and dropped is printed)"),
    ("gclib trace convert log.csv --columns iteration=step,worker=rank,seconds=duration --out times.csv",
     "a tidy CSV with other column names"),
    ("gclib trace convert wide.csv --format wide --out times.csv", "one row per iteration, a column per worker"))
EXAMPLE_FILES = ("(log.csv: columns step, rank, duration; wide.csv: a column iteration, then one per worker, "
                 "seconds)")

#: The command, and its line in ``gclib --help``.
NAME = "trace"
HELP = "which recorded run made a figure file; `trace convert`: a timing trace from another shape"


def add_parser(sub):
    from gclib.timings import FORMATS, STAGE_RULES

    p = sub.add_parser("trace", usage=USAGE,
                       help=HELP,
                       description="Two forms, told apart by the first word after `trace`:\n"
                                   "  gclib trace FIGURE           which recorded run made a figure file (matched by "
                                   "content hash; exit 1: none)\n"
                                   "  gclib trace convert TRACE    a timing trace in another shape (a tidy CSV with "
                                   "other column names,\n"
                                   "                               a wide CSV, a per-operation parquet trace) "
                                   "written as gclib's timing-trace\n"
                                   "                               CSV for gclib advise (docs/advise.md, \"Real "
                                   "traces in\")",
                       epilog=examples(EXAMPLES, note=EXAMPLE_FILES))
    p.add_argument("target", nargs="+", metavar="FIGURE | convert TRACE",
                   help="a figure file (figures/04_fig1.png, or a name in the figures folder: 04_fig1); or the "
                        "word convert and the trace file to convert")
    f = p.add_argument_group("gclib trace FIGURE")
    f.add_argument("--executed", type=checks.option(checks.input_path), default=None, metavar="DIR",
                   help="where the per-profile manifests of local runs are (default: build/executed of the clone of "
                        "the repository this gclib runs from, where gclib reproduce writes them; of the current "
                        "folder for an installed gclib)")
    f.add_argument("--figures-dir", type=checks.option(checks.input_path), default=None, metavar="DIR",
                   help="the folder whose manifest.json holds the committed record (default: figures/ of the clone, "
                        "or of the current folder for an installed gclib)")
    c = p.add_argument_group("gclib trace convert TRACE")
    c.add_argument("--out", type=checks.option(checks.output_file), default=None, metavar="CSV",
                   help="the timing-trace CSV to write (required)")
    c.add_argument("--format", choices=FORMATS, default=None,
                   help="csv: one row per task or per (iteration, worker); wide: one row per iteration, a column per "
                        "worker; ops: a per-operation parquet trace (step, dp_rank, stage, optype, mb_id, duration); "
                        "auto: by the file's first bytes and header (default auto)")
    c.add_argument("--columns", default=None, metavar="NAME=COLUMN,...",
                   help="which column of the file holds each trace column, e.g. "
                        "iteration=step,worker=rank,seconds=duration (csv; wide: iteration only)")
    c.add_argument("--stages", choices=STAGE_RULES, default=None,
                   help="ops: a replica's task time is the sum of its pipeline stages' compute, or the slowest "
                        "stage's (default sum)")
    p.add_argument("--json", action="store_true",
                   help="print the matching runs as a JSON list (FIGURE), or what was kept and dropped (convert)")
    p.set_defaults(fn=run)


def run(a) -> int:
    if a.target[0] == "convert":
        return _convert(a)
    given = [o for o in CONVERT_OPTIONS if getattr(a, o) is not None]
    if given:
        raise ValueError(f"argument --{given[0].replace('_', '-')}: an option of gclib trace convert, not of gclib "
                         f"trace FIGURE")
    if len(a.target) > 1:
        raise ValueError(f"gclib trace takes one figure file, got {len(a.target)}: {' '.join(a.target)} (to convert a "
                         f"trace: gclib trace convert TRACE --out CSV)")
    return _figure(a)


def _figure(a) -> int:
    """Exit 0 when a recorded run wrote these bytes, 1 when none did (in text and JSON alike)."""
    from gclib.reproduce import EXECUTED, figure_file, in_clone, sha256, trace

    fig = checks.option_check("figure", checks.input_path, a.target[0], kind="file")
    clone = in_clone()  # an installed gclib has no folders of its own: the current folder's
    executed = a.executed if a.executed is not None else EXECUTED if clone else Path("build", "executed")
    figures_dir = a.figures_dir if a.figures_dir is not None or clone else Path("figures")
    recs = trace(fig, executed=executed, figures_dir=figures_dir)
    if a.json:
        print(json.dumps(recs, indent=1, default=str))
        return 0 if recs else EXIT_FAIL
    if not recs:
        path = figure_file(fig, figures_dir)
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


def _convert(a) -> int:
    """Convert, check and write; print what was kept and dropped."""
    from gclib import timings

    given = [o for o in FIGURE_OPTIONS if getattr(a, o) is not None]
    if given:
        raise ValueError(f"argument --{given[0].replace('_', '-')}: an option of gclib trace FIGURE, not of gclib "
                         f"trace convert")
    if len(a.target) != 2:
        raise ValueError(f"gclib trace convert takes one trace file, got {len(a.target) - 1}"
                         + (f": {' '.join(a.target[1:])}" if len(a.target) > 2 else "")
                         + " (gclib trace convert TRACE --out CSV)")
    if a.out is None:
        raise ValueError("argument --out: gclib trace convert needs the CSV to write (--out CSV)")
    src = checks.option_check("TRACE", checks.input_path, a.target[1], kind="file", must_exist=True)
    columns = None
    if a.columns is not None:
        try:
            columns = timings.parse_columns(a.columns)
        except ValueError as e:
            raise ValueError(f"argument --columns: {e}") from None
    try:
        conv = timings.convert(src, a.format or "auto", columns=columns, stages=a.stages)
    except ValueError as e:
        raise ValueError(f"argument --stages: {e}" if "stages applies" in str(e) else e) from None
    conv.write(a.out)
    if a.json:
        print(json.dumps({**conv.to_dict(), "out": str(a.out)}))
    else:
        print(conv.text())
        print(f"wrote {a.out}")
    return 0


def _name(path: str) -> str:
    return Path(path).name
