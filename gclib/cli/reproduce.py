"""``gclib reproduce``: run the notebooks through papermill and write the figures (:func:`gclib.reproduce.main`)."""
from __future__ import annotations


#: The command, and its line in ``gclib --help``.
NAME = "reproduce"
HELP = "run every notebook through papermill and write figures/"


def add_parser(sub):
    from gclib import checks

    p = sub.add_parser(NAME, help=HELP,
                       epilog=_notebooks_text() or None)
    p.add_argument("--profile", default="full", help="parameter profile (full or quick)")
    p.add_argument("--only", nargs="+", default=None, metavar="NAME", help="notebook names (stems) to run")
    p.add_argument("--figures-dir", type=checks.option(checks.output_dir), default=None,
                   help="where figures go (default figures/)")
    p.add_argument("--out-dir", type=checks.option(checks.output_dir), default=None,
                   help="where executed notebooks and manifest.json go (default build/executed/PROFILE)")
    p.set_defaults(fn=run)


def run(a) -> int:
    from gclib.reproduce import main

    return main(profile=a.profile, only=a.only, figures_dir=a.figures_dir, out_dir=a.out_dir)


def _notebooks_text(indent: int = 2) -> str:
    """The profiles and notebooks, for the help (best effort: empty when unreadable)."""
    try:
        from gclib.reproduce import load_profiles, notebook_paths

        names = [p.stem for p in notebook_paths()]
        profiles = sorted(load_profiles())
    except Exception:  # a broken profiles file must not break --help
        return ""
    pad = " " * indent
    return (f"profiles: {', '.join(profiles)}\nnotebooks (--only NAME ...):\n"
            + ("\n".join(pad + n for n in names) if names else pad + "(none yet)"))
