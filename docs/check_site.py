"""Check a built documentation site the way a reader without network meets it (``make docs`` runs it last).

For every HTML page of the site:

- every relative link and resource (``href``/``src`` of ``a``, ``img``, ``script``, ``link``, ``source``,
  ``iframe``) names a file of the site, and its ``#anchor``, on a page of the site, an element of that page;
- nothing is loaded from another host (a script, a stylesheet, an image or a frame with ``http(s):`` or ``//``;
  links to other sites are fine) and no link is an absolute path (``/...``, ``file:``), which works from no
  other place;
- every formula was rendered: each ``span.math``/``div.math`` holds a MathML ``<math>`` element, and no LaTeX is
  left in the text outside code (``\\(``, ``\\[``, ``$$``, ``\\begin{``, ``\\frac``, ...).

The site's own stylesheets load nothing from another host either (``url(http...)``, ``@import``).

Usage: ``python docs/check_site.py SITE``: prints each problem and exits 1 when there is one. Standard library
only.
"""
from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: the attributes that name another file, per tag; for all but ``a`` the browser loads that file with the page
RESOURCES = {"a": "href", "img": "src", "script": "src", "link": "href", "source": "src", "iframe": "src"}
#: text outside code that only LaTeX writes
RAW_LATEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\(?:begin|end)\{|\\(?:frac|left|right|mathrm|mathbf|sum|alpha|"
                       r"kappa|epsilon|theta|cdot|dots|le|ge|text)\b")
#: elements whose text is code or not shown, where LaTeX-like text is expected
_VERBATIM = {"code", "pre", "script", "style", "kbd", "samp", "math", "textarea", "title"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_CDN_CSS = re.compile(r"""url\(\s*["']?(?:https?:)?//|@import\s+["']?(?:url\()?\s*["']?(?:https?:)?//""", re.I)


class _Page(HTMLParser):
    """What one page links to, its ids, its formulas and the text outside code."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs: list[tuple[str, str]] = []  # (tag, value)
        self.ids: set[str] = set()
        self.math_boxes = 0  # span.math / div.math
        self.math_rendered = 0  # ... holding a <math> element
        self.raw: list[str] = []  # LaTeX found in text
        self._stack: list[tuple[str, bool]] = []  # (tag, is a math box waiting for <math>)
        self._verbatim = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key):
                self.ids.add(a[key])
        if RESOURCES.get(tag) in a and a[RESOURCES[tag]] is not None:
            self.refs.append((tag, a[RESOURCES[tag]]))
        if tag == "math":
            for i in range(len(self._stack) - 1, -1, -1):
                if self._stack[i][1]:
                    self._stack[i] = (self._stack[i][0], False)
                    self.math_rendered += 1
                    break
        if tag in _VOID:
            return
        box = tag in ("span", "div") and "math" in (a.get("class") or "").split()
        self.math_boxes += box
        self._stack.append((tag, box))
        self._verbatim += tag in _VERBATIM

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in _VOID:
            return
        for i in range(len(self._stack) - 1, -1, -1):  # tolerate unclosed tags, as browsers do
            if self._stack[i][0] == tag:
                for t, _ in self._stack[i:]:
                    self._verbatim -= t in _VERBATIM
                del self._stack[i:]
                return

    def handle_data(self, data):
        if not self._verbatim:
            self.raw.extend(m.group(0) for m in RAW_LATEX.finditer(data))


def problems(site: Path) -> list[str]:
    """Every problem of the site in ``site`` (an empty list when there is none), one line each."""
    site = Path(site).resolve()
    pages = {p: _parse(p) for p in sorted(site.rglob("*.html"))}
    out = []
    for path, page in pages.items():
        name = path.relative_to(site).as_posix()
        for tag, value in page.refs:
            problem = _check_ref(site, path, tag, value, pages)
            if problem:
                out.append(f"{name}: {problem}")
        if page.math_boxes != page.math_rendered:
            out.append(f"{name}: {page.math_boxes - page.math_rendered} formula(s) not rendered as MathML")
        if page.raw:
            out.append(f"{name}: LaTeX left in the text: {', '.join(sorted(set(page.raw))[:8])}")
    for css in sorted(site.rglob("*.css")):
        if _CDN_CSS.search(css.read_text(errors="replace")):
            out.append(f"{css.relative_to(site).as_posix()}: the stylesheet loads a file from another host")
    return out


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(errors="replace"))
    page.close()
    return page


def _check_ref(site: Path, page: Path, tag: str, value: str, pages: dict) -> str | None:
    url = urlsplit(value.strip())
    if url.scheme in ("http", "https") or url.netloc or value.strip().startswith("//"):
        return None if tag == "a" else f"<{tag}> loads {value!r} from another host"
    if url.scheme in ("mailto", "data", "javascript", "tel"):
        return None
    if url.scheme:
        return f"<{tag}> points to {value!r}, which works on this machine only"
    if url.path.startswith("/"):
        return f"<{tag}> points to the absolute path {value!r}, which works from nowhere else"
    target = (page.parent / unquote(url.path)).resolve() if url.path else page
    if target != site and site not in target.parents:
        return f"<{tag}> points to {value!r}, outside the site"
    if target.is_dir():
        target = target / "index.html"
    if not target.is_file():
        return f"<{tag}> points to {value!r}, which the site does not have"
    if url.fragment and target in pages and unquote(url.fragment) not in pages[target].ids:
        return f"<{tag}> points to {value!r}, whose page has no element #{unquote(url.fragment)}"
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python docs/check_site.py SITE", file=sys.stderr)
        return 2
    site = Path(argv[0])
    if not (site / "index.html").is_file():
        print(f"check_site: error: {site} holds no built site (no index.html)", file=sys.stderr)
        return 2
    found = problems(site)
    for line in found:
        print(line)
    pages = sum(1 for _ in site.rglob("*.html"))
    print(f"check_site: {pages} pages, {len(found)} problem(s)" + ("" if found else ": every link resolves, "
          "nothing is loaded from another host, every formula is MathML"))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
