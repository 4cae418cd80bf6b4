"""``gclib reproduce``: run the notebooks through papermill and write the figures (:func:`gclib.reproduce.main`)."""
from __future__ import annotations

import textwrap

from gclib import checks
from gclib.cli import options

#: The command, and its line in ``gclib --help``.
NAME = "reproduce"
HELP = "run every notebook through papermill and write figures/"
#: The examples of ``gclib reproduce --help`` (the tests run each).
EXAMPLES = (
    ("gclib reproduce --profile quick --only 10_real_traces --figures-dir quick-figures --out-dir quick-run",
     "one notebook with its small parameters; its figures in quick-figures/, the executed notebook and the "
     "manifest in quick-run/"),)


def add_parser(sub):
    p = sub.add_parser(NAME, help=HELP,
                       description="Run the notebooks of a clone of the repository through papermill (a pip install "
                                   "has none), each with the parameters of the profile (notebooks/profiles.toml), "
                                   "one line per notebook with its time. They write their figures (PNG with the CSV "
                                   "of its data) into --figures-dir, and the executed notebooks and a manifest of "
                                   "every run (parameters, seed, duration, versions, commit, figure hashes) into "
                                   "--out-dir. `make reproduce` runs them all in the full profile.",
                       epilog=options.examples(EXAMPLES) + "\n\n" + _notebooks_text())
    p.add_argument("--profile", default="full",
                   help="parameter profile: full (the committed figures) or quick (small parameters, seconds each)")
    p.add_argument("--only", nargs="+", default=None, metavar="NAME", help="notebook names (stems) to run")
    p.add_argument("--figures-dir", type=checks.option(checks.output_dir), default=None,
                   help="where figures go (default figures/ for the full profile, build/figures/PROFILE for another)")
    p.add_argument("--out-dir", type=checks.option(checks.output_dir), default=None, metavar="DIR",
                   help="where executed notebooks and manifest.json go (default build/executed/PROFILE)")
    p.add_argument("--jobs", type=checks.option(checks.integer, low=1), default=1, metavar="N",
                   help="notebooks run at a time (make reproduce: 2); those that start MPI jobs run alone, named "
                        "per profile in profiles.toml's [alone] table, and the index runs last (default 1)")
    p.set_defaults(fn=run)


def run(a) -> int:
    from gclib.reproduce import main

    return main(profile=a.profile, only=a.only, figures_dir=a.figures_dir, out_dir=a.out_dir, jobs=a.jobs)


def _notebooks_text(indent: int = 2) -> str:
    """The profiles and notebooks, for the help (from a pip install, where they are not, a line saying so)."""
    from gclib.reproduce import in_clone, load_profiles, notebook_paths

    if not in_clone():
        return "notebooks: none in this installed package; they are in a clone of the repository"
    try:
        names = [p.stem for p in notebook_paths()]
        profiles = sorted(load_profiles())
    except ValueError as e:  # a broken profiles file must not break --help
        return f"notebooks: unreadable ({e})"
    pad = " " * indent
    return (f"profiles: {', '.join(profiles)}\nnotebooks (--only NAME ...):\n"
            + textwrap.fill(", ".join(names), 100, initial_indent=pad, subsequent_indent=pad, break_on_hyphens=False))
