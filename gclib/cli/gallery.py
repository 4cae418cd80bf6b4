"""``gclib gallery``: the figure gallery of the README, in Markdown (:func:`gclib.studies.gallery.markdown`)."""
from __future__ import annotations

from pathlib import Path

from gclib import checks
from gclib.cli import options

#: The command, and its line in ``gclib --help``.
NAME = "gallery"
HELP = "print the figure gallery of the README (Markdown)"
#: The examples of ``gclib gallery --help`` (the tests run each).
EXAMPLES = (("gclib gallery", "the gallery of the committed figures/ (in a clone of the repository)"),
            ("gclib gallery --figures-dir figures", "the same, the folder named"))


def add_parser(sub):
    p = sub.add_parser(NAME, help=HELP,
                       description="Print the README's gallery: every figure with what it shows and the claims it "
                                   "tests, read from the notebooks' claims tables; the figures are those of a clone "
                                   "of the repository (gclib reproduce writes them).",
                       epilog=options.examples(EXAMPLES))
    p.add_argument("--figures-dir", type=checks.option(checks.input_path), default=None,
                   help="figure folder the links point into (it must hold every figure of the gallery; default "
                        "figures/)")
    p.add_argument("--reproduction", action="store_true",
                   help="print the papers' reproduction tables of docs/papers.md instead (read from --figures-dir)")
    p.set_defaults(fn=run)


def run(a) -> int:
    from gclib.reproduce import ROOT, in_clone
    from gclib.studies.gallery import FIGURES, markdown, missing, reproduction_page

    if a.figures_dir is None and not Path("figures").is_dir():  # the links are relative to the folder it runs in
        where = (f"run it in the clone's folder, {ROOT}" if in_clone() else "this gclib is an installed package "
                 "without them: clone the repository and run it there")
        raise ValueError(f"gclib gallery renders the figures of a clone of the repository, and there is no figures/ "
                         f"here ({where}, or give --figures-dir DIR)")
    figures_dir = checks.option_check("--figures-dir", checks.input_path, a.figures_dir or "figures",
                                      must_exist=True)
    if a.reproduction:
        print(reproduction_page(figures_dir), end="")
        return 0
    not_made = missing(figures_dir)[1]
    if not_made:  # the gallery would link to files that are not there
        raise ValueError(f"argument --figures-dir: {str(figures_dir)!r} lacks {len(not_made)} of the "
                         f"{len(FIGURES)} figures the gallery links to (the first: {not_made[0]}.png); make them "
                         f"with gclib reproduce --figures-dir {figures_dir}")
    print(markdown(figures_dir), end="")
    return 0
