"""``gclib gallery``: the figure gallery of the README, in Markdown (:func:`gclib.gallery.markdown`)."""
from __future__ import annotations


def add_parser(sub):
    from .. import checks

    p = sub.add_parser("gallery", help="print the figure gallery of the README (Markdown)")
    p.add_argument("--figures-dir", type=checks.option(checks.input_path), default="figures",
                   help="figure folder the links point into")
    p.set_defaults(fn=run)


def run(a) -> int:
    from ..gallery import markdown

    print(markdown(a.figures_dir), end="")
    return 0
