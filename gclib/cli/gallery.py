"""``gclib gallery``: the figure gallery of the README, in Markdown (:func:`gclib.studies.gallery.markdown`)."""
from __future__ import annotations


#: The command, and its line in ``gclib --help``.
NAME = "gallery"
HELP = "print the figure gallery of the README (Markdown)"


def add_parser(sub):
    from gclib import checks

    p = sub.add_parser(NAME, help=HELP)
    p.add_argument("--figures-dir", type=checks.option(checks.input_path, must_exist=True), default="figures",
                   help="figure folder the links point into (it must hold every figure of the gallery)")
    p.add_argument("--reproduction", action="store_true",
                   help="print the papers' reproduction tables of docs/papers.md instead (read from --figures-dir)")
    p.set_defaults(fn=run)


def run(a) -> int:
    from gclib.studies.gallery import FIGURES, markdown, missing, reproduction_page

    if a.reproduction:
        print(reproduction_page(a.figures_dir), end="")
        return 0
    not_made = missing(a.figures_dir)[1]
    if not_made:  # the gallery would link to files that are not there
        raise ValueError(f"argument --figures-dir: {str(a.figures_dir)!r} lacks {len(not_made)} of the "
                         f"{len(FIGURES)} figures the gallery links to (the first: {not_made[0]}.png); make them "
                         f"with gclib reproduce --figures-dir {a.figures_dir}")
    print(markdown(a.figures_dir), end="")
    return 0
