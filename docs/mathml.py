"""A Sphinx math renderer that writes every formula into the page as MathML when the site is built.

The pages then need no script and no network to show a formula: browsers draw MathML themselves (Chromium and
Edge since 2023, Firefox and Safari for longer). The conversion from LaTeX is done by the pure-Python package
``latex2mathml`` (the ``docs`` extra). A formula it cannot convert, or converts only in part (a command it does not
know stays as ``\\name`` in the output), is a build warning naming the formula, so ``make docs`` (warnings are
errors) fails instead of showing raw LaTeX.

Used by ``docs/conf.py`` (``html_math_renderer = "mathml"``); inline math becomes ``<span class="math">`` around a
``<math>`` element, display math a ``<div class="math">`` around one ``<math display="block">`` per equation (parts
separated by a blank line, as Sphinx splits them), with its number and permalink when it has one.
"""
from __future__ import annotations

import re

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

#: a LaTeX command latex2mathml did not know: it is left as an identifier or text that starts with a backslash
_UNCONVERTED = re.compile(r">\\[A-Za-z]+<")
#: an alignment tab outside an environment that uses it, which latex2mathml shows as a literal "&"
_STRAY_AMPERSAND = re.compile(r"<m[io]>&(?:amp;)?</m[io]>")


def to_mathml(tex: str, display: bool) -> str:
    """``tex`` as one MathML ``<math>`` element. Raises ValueError, naming what is wrong, when the conversion
    fails or leaves LaTeX in its output."""
    source = tex.strip()
    if display and "\\\\" in source and "\\begin" not in source:
        source = "\\begin{split}" + source + "\\end{split}"  # several lines: aligned at "&", as Sphinx does
    try:
        mathml = convert(source, display="block" if display else "inline")
    except Exception as exc:  # latex2mathml raises its own exception types, and IndexError on some input
        raise ValueError(f"cannot convert {tex!r} to MathML ({type(exc).__name__}: {exc})") from exc
    unknown = _UNCONVERTED.findall(mathml)
    if unknown:
        raise ValueError(f"{tex!r} has commands the MathML converter does not know: "
                         + ", ".join(sorted({u[1:-1] for u in unknown})))
    if _STRAY_AMPERSAND.search(mathml):
        raise ValueError(f"{tex!r} has an alignment '&' outside an environment that aligns")
    return mathml


def _render(self, node: nodes.Element, tex: str, display: bool) -> str:
    """``tex`` (the formula of ``node``, or one part of it) as MathML; on failure a warning at ``node``'s place
    and the formula shown as code."""
    try:
        return to_mathml(tex, display)
    except ValueError as exc:
        logger.warning("%s", exc, location=node, type="mathml", subtype="convert")
        return f'<code class="math-unconverted">{self.encode(tex)}</code>'


def visit_math(self, node: nodes.math) -> None:
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(_render(self, node, node.astext(), display=False))
    self.body.append("</span>")
    raise nodes.SkipNode


def visit_displaymath(self, node: nodes.math_block) -> None:
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node["number"]:
        self.body.append(f'<span class="eqno">({get_node_equation_number(self, node)})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    for part in (p for p in node.astext().split("\n\n") if p.strip()):
        self.body.append(_render(self, node, part, display=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", inline_renderers=(visit_math, None),
                               block_renderers=(visit_displaymath, None))
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
