"""The rendered book (docs/): paper numbers, a warning-free build, pages in a browser.

Three layers, each skipped only when its tool is missing:

* the label -> printed number mapping (docs/paper_labels.py) needs nothing;
* the Sphinx build (``pip install -e ".[docs]"``) is run once with ``-W`` and its HTML
  is checked as text: one page per notebook, no raw ``$$``/``\\begin{`` outside math,
  every stored figure shown by an ``<img>`` whose file exists, no CDN script;
* the pages are opened in headless Chromium (``/usr/bin/chromium``): MathJax must
  typeset every math element without error and every figure must decode to a
  nonzero size; no page scrolls sideways, cuts a box off or lets it stick out of the
  text column (desktop and phone widths); every reduced figure zooms on a click; and
  no lesson figure shows its (at least 10 pt) text below 9 CSS px (docs/README.md,
  "Figures and wide outputs").

Each checker is also run on a deliberately broken page to show it rejects it.
"""
from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb")) + sorted(
    (ROOT / "notebooks" / "exercises").glob("ex*.ipynb"))
CHROMIUM = Path("/usr/bin/chromium")

sys.path.insert(0, str(DOCS))
import paper_labels  # noqa: E402


# --------------------------------------------------------------------------- mapping
def test_counters_follow_latex_rules():
    tex = r"""\documentclass{article}\newcommand{\beq}{\begin{equation}}
\begin{document}
\section{Intro}\label{sec:a}
\beq\label{eq:one} x \eeq
\begin{equation}\nonumber\label{eq:none} y \end{equation}
\begin{equation*} z \end{equation*}
\begin{align}
a &= b \label{eq:two}\\
c &= d \nonumber\\
e &= f \label{eq:three}
\end{align}
\begin{equation}\begin{split}\label{eq:four} a\\ b \end{split}\end{equation}
\subsection{Sub}\label{sec:a1}
\begin{thm}\label{thm:x} \end{thm}
\begin{figure}\subfloat[\label{fig:a}]{}\subfloat[x\label{fig:b}]{}
\caption{c}\label{fig:whole}\end{figure}
\begin{table}\caption{t}\label{tab:t}\end{table}
% \begin{equation}\label{eq:commented}\end{equation}
\appendix
\section{Proofs}\label{app:p}
\subsection{More}\label{app:p2}
\beq\label{eq:five}\eeq
\end{document}"""
    got = paper_labels.parse(tex)
    assert got == {
        "sec:a": "Sec. 1", "eq:one": "eq. (1)", "eq:two": "eq. (2)",
        "eq:three": "eq. (3)", "eq:four": "eq. (4)", "sec:a1": "Sec. 1.1",
        "thm:x": "Theorem 1", "fig:a": "Fig. 1(a)", "fig:b": "Fig. 1(b)",
        "fig:whole": "Fig. 1", "tab:t": "Table 1", "app:p": "Appendix A",
        "app:p2": "Appendix A.1", "eq:five": "eq. (5)",
    }


def test_counting_the_preamble_would_shift_every_equation():
    # The paper defines \beq in its preamble; counting it would make eq. (1) eq. (2).
    tex = (r"\newcommand{\beq}{\begin{equation}}\newcommand{\eeq}{\end{equation}}"
           r"\begin{document}\beq\label{e}\eeq\end{document}")
    assert paper_labels.parse(tex) == {"e": "eq. (1)"}
    assert paper_labels.parse(tex.replace(r"\begin{document}", "")) == {"e": "eq. (2)"}


@pytest.mark.skipif(not paper_labels.PAPER.is_file(), reason="paper source not present")
def test_committed_json_matches_the_paper():
    tex = paper_labels.PAPER.read_text(encoding="utf-8")
    fresh = paper_labels.parse(tex)
    stored = json.loads(paper_labels.JSON.read_text(encoding="utf-8"))
    assert stored == fresh, "regenerate with: python docs/paper_labels.py"
    every = set(re.findall(r"\\label\{([^}]+)\}", re.sub(r"(?<!\\)%.*", "", tex)))
    assert every == set(fresh) | set(paper_labels.UNNUMBERED), every ^ (set(fresh) | set(paper_labels.UNNUMBERED))


# Numbers the notebooks print next to a label that differ from the paper's counters
# (reported to the notebook owners; a new disagreement fails this test).
KNOWN_DISAGREEMENTS: set[tuple[str, str]] = set()   # every printed number now agrees


def _markdown(nb: Path) -> str:
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def test_numbers_printed_next_to_labels_agree_with_the_paper():
    labels, _ = paper_labels.load()
    cited = re.compile(r"(?:\*\*)?((?:eq|Eq|Fig|Table|Algorithm|Theorem|Lemma|Proposition"
                       r"|Corollary)\.? \(?[0-9]+[a-z]?\)?)(?:\*\*)?\s*\[`([^`]+)`\]")
    checked, wrong = 0, set()
    for nb in NOTEBOOKS:
        for said, label in cited.findall(_markdown(nb)):
            assert label in labels, f"{nb.name}: unknown paper label {label!r}"
            norm = lambda t: re.sub(r"[().\s]", "", t).lower()  # noqa: E731
            checked += 1
            if norm(said) != norm(labels[label]):
                wrong.add((nb.stem, label))
    # (the lessons now print the numbers without labels: tests/test_lessons_teach.py)
    assert wrong <= KNOWN_DISAGREEMENTS, sorted(wrong - KNOWN_DISAGREEMENTS)


# Every other text a reader sees: the READMEs, the docs pages, the docstrings (and
# comments) of the package, theory_checks and benchmarks.
def _texts() -> dict[str, str]:
    paths = [ROOT / "README.md", ROOT / "notebooks" / "README.md"]
    paths += sorted(DOCS.glob("*.md")) + sorted((DOCS / "_generated").glob("*.md"))
    for pkg in ("toptwo", "theory_checks", "benchmarks"):
        paths += sorted((ROOT / pkg).rglob("*.py"))
    out = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in paths
           if p.is_file()}
    for nb in NOTEBOOKS:
        out[nb.relative_to(ROOT).as_posix()] = _markdown(nb)
    return out


def test_references_everywhere_use_the_printed_numbers():
    labels, _ = paper_labels.load()
    texts = _texts()
    assert {"README.md", "notebooks/README.md", "toptwo/softlabels.py"} <= set(texts)
    problems = [p for where, text in texts.items()
                for p in paper_labels.check_references(text, labels, where)]
    assert problems == [], "\n".join(problems)
    clashes = paper_labels.inconsistent_references(texts)
    assert clashes == [], "\n".join(clashes)


def test_the_reference_checks_reject_wrong_numbers():
    labels, _ = paper_labels.load()
    bad = ("q needs more samples, eq. (7) [`eqn:total_s_pq`].\n"
           "See Table 6 and Fig. 9(b), Appendix J, eq. (400).\n"
           "Zhang et al. (Sec. 3.1) and their eq. (12) are another paper's.\n"
           "Theorem 3(a) [`app:thm:converse`] and Table 5 [`tab:corrupt_CIFAR10`] are fine.\n"
           "An unknown [`eqn:nope`].\n"
           "README style: Thm. 2 [thm:main], Cor. 3 [cor:alg2], Prop. 1 [prop:binary].")
    found = paper_labels.check_references(bad, labels, "x.md")
    assert any("'eq. (7)' next to `eqn:total_s_pq`" in p and "'eq. (13)'" in p for p in found)
    for said in ("Table 6", "Fig. 9(b)", "Appendix J", "eq. (400)"):
        assert any(f"'{said}' is not a number the paper prints" in p for p in found), said
    assert any("unknown paper label 'eqn:nope'" in p for p in found)
    assert any("'Theorem 2' next to `thm:main`" in p for p in found)
    assert any("'Corollary 3' next to `cor:alg2`" in p for p in found)
    assert len(found) == 8, found            # nothing on lines 3 and 4, nor for Prop. 1
    clash = paper_labels.inconsistent_references(
        {"a.md": "q needs more samples, eq. (13)", "b.md": "so q needs more samples, eq. (7)",
         "c.md": "eqs. (5) and (6) on one line: eq. (5), eq. (6)"})
    assert len(clash) == 1 and "13 at a.md:1" in clash[0] and "7 at b.md:1" in clash[0]


# ----------------------------------------------------------------------------- build
def _have(mod: str) -> bool:
    try:
        __import__(mod)
    except ImportError:
        return False
    return True


needs_sphinx = pytest.mark.skipif(not (_have("sphinx") and _have("myst_nb") and _have("furo")),
                                  reason='needs the docs extra: pip install -e ".[docs]"')


@pytest.fixture(scope="module")
def book(tmp_path_factory) -> Path:
    # TOPTWO_BOOK=<folder>: a copy of the html/ of a build made with the same command
    # (CI's book stage: `python -m sphinx -W --keep-going -q -b html docs docs/_build/html`)
    # instead of a second build (the browser check adds twin pages to the copy)
    given = os.environ.get("TOPTWO_BOOK")
    if given:
        import shutil

        built = Path(given) / "html"
        assert (built / "index.html").is_file(), f"TOPTWO_BOOK={given}: no html/index.html"
        return Path(shutil.copytree(built, tmp_path_factory.mktemp("book") / "html"))
    out = tmp_path_factory.mktemp("book") / "html"
    doctrees = out.parent / "doctrees"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(doctrees), str(DOCS), str(out)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _page(out: Path, nb: Path) -> Path:
    return out / nb.relative_to(ROOT).with_suffix(".html")


def _stored_figures(nb: Path) -> int:
    if nb.parent.name == "exercises":  # rendered as nbgrader's release version: no outputs
        return 0
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    return sum("image/png" in o.get("data", {}) for c in cells if c["cell_type"] == "code"
               for o in c.get("outputs", []))


class _Prose(HTMLParser):
    """Visible article text outside math, code and scripts; <img> sources."""

    SKIP = {"script", "style", "pre", "code"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.imgs: list[str] = []
        self.script_srcs: list[str] = []
        self._stack: list[bool] = []  # per open element: inside something skipped?

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a.get("src", ""))
            return
        if tag == "script" and a.get("src"):
            self.script_srcs.append(a["src"])
        if tag in ("br", "hr", "meta", "link", "input", "source", "col", "wbr"):
            return
        inside = bool(self._stack and self._stack[-1])
        math = "math" in (a.get("class") or "").split()
        self._stack.append(inside or math or tag in self.SKIP)

    def handle_endtag(self, tag):
        if tag != "img" and self._stack:
            self._stack.pop()

    def handle_data(self, data):
        if not (self._stack and self._stack[-1]):
            self.text.append(data)


def _prose_problems(page: Path) -> list[str]:
    p = _Prose()
    p.feed(page.read_text(encoding="utf-8"))
    text = html.unescape("".join(p.text))
    problems = []
    if "$$" in text:
        problems.append("raw $$ in the text")
    if "\\begin{" in text:
        problems.append("unrendered \\begin{ in the text")
    if re.search(r"\b(eqn|fig|tab|subsec|alg|thm|lem|prop):\w", text):
        problems.append("a raw paper label in the text")
    for src in p.script_srcs:
        if re.match(r"(https?:)?//", src):
            problems.append(f"script from the network: {src}")
    for src in p.imgs:
        if not (page.parent / src).is_file():
            problems.append(f"missing image file {src}")
    return problems


def _imgs(page: Path) -> list[str]:
    p = _Prose()
    p.feed(page.read_text(encoding="utf-8"))
    return [s for s in p.imgs if "_images/" in s]


@needs_sphinx
def test_every_notebook_has_a_clean_page(book):
    assert len(NOTEBOOKS) >= 10
    for nb in NOTEBOOKS:
        page = _page(book, nb)
        assert page.is_file(), f"no page for {nb.name}"
        assert _prose_problems(page) == [], page.name
        want = _stored_figures(nb)
        got = _imgs(page)
        assert len(got) == want, f"{page.name}: {len(got)} <img> for {want} stored figures"
    assert (book / "_static" / "mathjax" / "tex-chtml.js").is_file()


@needs_sphinx
def test_the_reproduction_index_is_a_clean_page(book):
    page = book / "reproduction.html"
    assert page.is_file(), "docs/reproduction.md is not in the book"
    assert _prose_problems(page) == [], _prose_problems(page)
    p = _Prose()
    p.feed(page.read_text(encoding="utf-8"))
    text = re.sub(r"\s+", " ", html.unescape("".join(p.text)))
    assert "Table 5: test accuracy" in text and "(eq. (13))" in text   # label shown as printed
    assert 'href="reproduction.html"' in (book / "index.html").read_text(encoding="utf-8")


@needs_sphinx
def test_toc_and_previous_next_links(book):
    index = (book / "index.html").read_text(encoding="utf-8")
    order = [nb.relative_to(ROOT).with_suffix(".html").as_posix() for nb in NOTEBOOKS]
    pos = [index.find(f'href="{o}"') for o in order]
    assert all(p >= 0 for p in pos) and pos == sorted(pos), "index TOC misses or misorders pages"
    for before, after in zip(NOTEBOOKS, NOTEBOOKS[1:]):
        text = _page(book, before).read_text(encoding="utf-8")
        nxt = Path(re.search(r'<a class="next-page" href="([^"]+)"', text)[1])
        assert (_page(book, before).parent / nxt).resolve() == _page(book, after).resolve()


@needs_sphinx
def test_paper_labels_show_printed_numbers(book):
    def text(name):
        p = _Prose()
        p.feed((book / "notebooks" / name).read_text(encoding="utf-8"))
        return re.sub(r"\s+", " ", html.unescape("".join(p.text)))

    t01, t09 = text("01_top_two_model.html"), text("09_top_t.html")
    assert "eq. (1)" in t01 and "[eq. (1)]" not in t01  # repeated bracket dropped
    assert "Appendix A.2" in t09 and "subsec:top_T" not in t09
    assert "Fig. 8" in text("07_robustness.html")


@needs_sphinx
def test_prose_checker_rejects_a_broken_page(book):
    page = _page(book, NOTEBOOKS[0])
    bad = page.with_name("broken.html")
    src = page.read_text(encoding="utf-8")
    img = _imgs(page)[0]
    bad.write_text(src.replace(f'src="{img}"', f'src="{img[:-4]}-missing.png"', 1)
                   .replace("</article>", "<p>$$x$$ \\begin{cases} `eqn:A_dist`</p>"
                            '<script src="https://cdn.example/mj.js"></script></article>', 1),
                   encoding="utf-8")
    try:
        found = " | ".join(_prose_problems(bad))
    finally:
        bad.unlink()
    for what in ("raw $$", "\\begin{", "paper label", "network", "missing image"):
        assert what in found, what


# ---------------------------------------------------------------------------- browser
HARNESS = """<!doctype html><html><body><pre id="out">pending</pre><script>
const pages = %s;
async function check(url) {
  const f = document.createElement('iframe');
  f.style.width = '1200px'; f.style.height = '900px';
  document.body.appendChild(f);
  await new Promise(r => { f.onload = r; f.src = url; });
  const w = f.contentWindow, d = f.contentDocument;
  if (w.MathJax && w.MathJax.startup && w.MathJax.startup.promise) await w.MathJax.startup.promise;
  const imgs = Array.from(d.querySelectorAll('article img'));
  await Promise.all(imgs.map(i => i.complete ? 0 : new Promise(r => { i.onload = i.onerror = r; })));
  const res = {url, mathjax: !!(w.MathJax && w.MathJax.version),
    math: d.querySelectorAll('article .math').length,
    typeset: d.querySelectorAll('article .math mjx-container').length,
    errors: Array.from(d.querySelectorAll('mjx-merror')).map(e => e.textContent).slice(0, 3),
    imgs: imgs.length,
    broken: imgs.filter(i => !(i.naturalWidth > 0 && i.naturalHeight > 0)).map(i => i.src)};
  // the page never scrolls sideways; a wide box scrolls inside itself instead of cutting
  // its content off or sticking out of the text column (docs/README.md)
  const art = d.querySelector('article');
  const scrolls = e => ['auto', 'scroll'].includes(w.getComputedStyle(e).overflowX);
  const inScroller = e => { for (let a = e.parentElement; a && a !== art; a = a.parentElement)
    if (scrolls(a)) return true; return false; };
  const describe = e => ({tag: e.tagName.toLowerCase(), cls: String(e.className || '').slice(0, 60),
    text: (e.textContent || e.getAttribute('src') || '').trim().replace(/\\s+/g, ' ').slice(0, 60),
    sw: e.scrollWidth, cw: e.clientWidth, right: Math.round(e.getBoundingClientRect().right)});
  const boxes = 'pre, table, div.cell_output, div.output, div.highlight, mjx-container, img';
  const layout = () => {
    // the text column: furo's .content (the article and its padding)
    const edge = (d.querySelector('.content') || art).getBoundingClientRect().right + 1;
    const out = Array.from(art.querySelectorAll('*')).filter(e =>
      e.getBoundingClientRect().right > edge && e.getBoundingClientRect().width > 0 &&
      !e.closest('mjx-assistive-mml') && !inScroller(e));   // (MathJax's hidden screen-reader copy)
    return {overflow: d.documentElement.scrollWidth - d.documentElement.clientWidth,
      // content cut off: a box narrower than its content that neither scrolls nor sits in a scroller
      cut: Array.from(art.querySelectorAll(boxes)).filter(e =>
        e.scrollWidth > e.clientWidth + 1 && !scrolls(e) && !inScroller(e) &&
        w.getComputedStyle(e).overflowX !== 'visible').map(describe),
      // content sticking out of the text column (outermost such elements only)
      spill: out.filter(e => !out.includes(e.parentElement)).map(describe)};
  };
  res.layout = {desktop: layout()};
  res.overflow = res.layout.desktop.overflow;
  res.clipped = res.layout.desktop.cut.length + res.layout.desktop.spill.length;
  res.article = Math.round(art.getBoundingClientRect().width);
  // every figure: its stored (natural) and shown width, and its width when clicked (zoom)
  res.figures = imgs.map((i, k) => {
    const shown = i.getBoundingClientRect().width;
    i.click();
    const zoomed = i.getBoundingClientRect().width;
    i.click();
    return {k, src: i.getAttribute('src'), nw: i.naturalWidth, nh: i.naturalHeight,
            w: shown, zoom: i.naturalWidth ? Math.min(zoomed / Math.min(i.naturalWidth, w.innerWidth), 1) : null};
  });
  const small = res.figures.filter(f => f.nw > 0 && f.w < 0.95 * f.nw);
  res.small = small.length;
  res.zoom = small.length ? Math.min(...small.map(f => f.zoom)) : null;
  // the same page on a phone-sized screen
  f.style.width = '420px';
  await new Promise(r => setTimeout(r, 50));
  void d.body.offsetWidth;             // lay the page out again at the new width
  res.layout.phone = layout();
  f.remove();
  return res;
}
(async () => {
  const out = [];
  for (const p of pages) { try { out.push(await check(p)); } catch (e) { out.push({url: p, error: String(e)}); } }
  document.getElementById('out').textContent = 'RESULT:' + JSON.stringify(out);
})();
</script></body></html>"""


def _browse(root: Path, pages: list[Path], tmp: Path) -> dict[str, dict]:
    harness = root / "_browser_check.html"
    harness.write_text(HARNESS % json.dumps([p.as_uri() for p in pages]), encoding="utf-8")
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", f"--user-data-dir={tmp / 'chromium-profile'}",
           "--allow-file-access-from-files", "--virtual-time-budget=30000", "--dump-dom",
           harness.as_uri()]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    finally:
        harness.unlink()
    m = re.search(r"RESULT:(.*?)</pre>", proc.stdout, re.S)
    assert m, f"no result from Chromium (rc {proc.returncode}): {proc.stderr[-2000:]}"
    return {Path(r["url"].removeprefix("file://")).name: r
            for r in json.loads(html.unescape(m[1]))}


def _layout_problems(r: dict) -> list[str]:
    """Sideways scrolling, cut-off or protruding boxes, on a desktop and a phone screen."""
    problems = []
    for screen, lay in r.get("layout", {}).items():
        if lay["overflow"] > 1:
            problems.append(f"{screen}: the page scrolls sideways by {lay['overflow']} px")
        for e in lay["cut"]:
            problems.append(f"{screen}: <{e['tag']} class='{e['cls']}'> cut off at the right "
                            f"({e['sw']} px of content in {e['cw']} px, no scroll bar): "
                            f"{e['text']!r}")
        for e in lay["spill"]:
            problems.append(f"{screen}: <{e['tag']} class='{e['cls']}'> sticks out of the "
                            f"text column (right edge at {e['right']} px): {e['text']!r}")
    return problems


def _browser_problems(r: dict, want_imgs: int) -> list[str]:
    problems = []
    if "error" in r:
        return [r["error"]]
    if r["math"] and not r["mathjax"]:
        problems.append("MathJax did not load")
    if r["typeset"] != r["math"]:
        problems.append(f"{r['math'] - r['typeset']} of {r['math']} math elements not typeset")
    if r["errors"]:
        problems.append(f"MathJax errors: {r['errors']}")
    if r["imgs"] != want_imgs:
        problems.append(f"{r['imgs']} images for {want_imgs} figures")
    if r["broken"]:
        problems.append(f"images that do not decode: {r['broken']}")
    problems += _layout_problems(r)
    if r.get("small") and (r.get("zoom") is None or r["zoom"] < 0.97):
        problems.append(f"figures shown reduced cannot be zoomed (zoom {r.get('zoom')})")
    return problems


# ------------------------------------------------------------- legible figures
# The rule (docs/README.md, "Figures and wide outputs"): every text in a figure is at
# least FONT_FLOOR_PT points at the source (toptwo.viz.LEGIBLE; checked in
# tests/test_viz.py and, for the notebooks' own calls, by
# test_notebook_figures_use_no_font_below_the_floor), and the book shows it at least
# TEXT_FLOOR_PX CSS pixels high on a desktop screen (1200 px window, 736 px text column):
#     smallest text [CSS px] = FONT_FLOOR_PT * dpi / 72 * shown width / stored width,
# with dpi read from the PNG (matplotlib writes it in the pHYs chunk) and the two widths
# measured in Chromium. For a figure shown reduced to the column, dpi cancels: the figure
# must be at most 736 * FONT_FLOOR_PT / (72 * TEXT_FLOOR_PX) = 11.4 inches wide. Every
# reduced figure also zooms to the window when clicked (checked above).
FONT_FLOOR_PT = 10
TEXT_FLOOR_PX = 9


def png_dpi(path: Path) -> float | None:
    """The resolution a PNG records (pHYs chunk, pixels per metre), in dots per inch."""
    import struct

    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    i = 8
    while i + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[i:i + 8])
        if kind == b"pHYs":
            x, _, unit = struct.unpack(">IIB", data[i + 8:i + 17])
            return x * 0.0254 if unit == 1 else None
        if kind == b"IDAT":
            return None                     # pHYs comes before the image data
        i += 12 + n
    return None


def _figure_problems(r: dict, page: Path) -> list[str]:
    """Every figure of the page whose FONT_FLOOR_PT text is shown below TEXT_FLOOR_PX."""
    problems = []
    figures = [f for f in r.get("figures", []) if "_images/" in (f["src"] or "")]
    for n, f in enumerate(figures):
        name = Path(f["src"]).name
        where = f"{page.name} figure {n + 1} of {len(figures)} ({name if len(name) < 30 else name[:12] + '…'})"
        dpi = png_dpi(page.parent / f["src"])
        if dpi is None:
            problems.append(f"{where}: the PNG records no dpi (pHYs), its text size is unknown")
            continue
        if not f["nw"]:
            continue                        # does not decode: reported by the page check
        px = FONT_FLOOR_PT * dpi / 72 * f["w"] / f["nw"]
        if px < TEXT_FLOOR_PX - 1e-9:
            inches = f["nw"] / dpi
            most = f["w"] * FONT_FLOOR_PT / (72 * TEXT_FLOOR_PX)
            problems.append(
                f"{where}: {FONT_FLOOR_PT} pt text shown {px:.1f} px high (floor "
                f"{TEXT_FLOOR_PX} px): stored {f['nw']} px = {inches:.1f} in at {dpi:.0f} dpi, "
                f"shown {f['w']:.0f} px wide; make it at most {most:.1f} in wide "
                f"(fewer panels)")
    return problems


_SMALL = r"(?:[0-9]*\.?[0-9]+|[\"'](?:xx-small|x-small|small|smaller)[\"'])"
_FONT_SETTINGS = re.compile(
    r"\b(?:fontsize|labelsize|title_fontsize)\s*=\s*(" + _SMALL + r")"          # ax.legend(fontsize=8)
    r"|\bprop\s*=\s*\{[^}]*[\"']size[\"']\s*:\s*(" + _SMALL + r")"            # prop={"size": 8}
    r"|[\"'](?:font\.size|[a-z]+\.labelsize|legend\.(?:title_)?fontsize|[a-z]+\.titlesize)[\"']"
    r"\s*[:\],]\s*=?\s*(" + _SMALL + r")")                                    # rcParams["font.size"] = 8


def small_font_settings(code: str) -> list[str]:
    """Lines of ``code`` that set a font below FONT_FLOOR_PT points (a number below it, or a
    size name smaller than matplotlib's 10 pt "medium")."""
    found = []
    for n, line in enumerate(code.splitlines(), 1):
        for m in _FONT_SETTINGS.finditer(line.split("#")[0]):
            value = next(v for v in m.groups() if v)
            if value[0] in "\"'" or float(value) < FONT_FLOOR_PT:
                found.append(f"line {n}: {line.strip()[:100]}")
                break
    return found


def test_the_font_floor_check_finds_small_fonts():
    bad = ("ax.legend(fontsize=8)\nax.text(0, 0, 's', fontsize='small')\n"
           "plt.rcParams['font.size'] = 9\nax.legend(prop={'size': 6.5}, loc=2)\n"
           "ax.tick_params(labelsize=7)\nmatplotlib.rc('legend', fontsize=8)\n"
           "plt.rcParams.update({'axes.labelsize': 'x-small'})")
    assert len(small_font_settings(bad)) == 7, small_font_settings(bad)
    good = ("ax.legend(fontsize=10)\nax.set_title('t', fontsize=12)\nx = rng.normal(size=3)\n"
            "ax.plot(x, ms=4)  # fontsize=8 in a comment\nplt.rcParams['font.size'] = 11")
    assert small_font_settings(good) == []


def test_notebook_figures_use_no_font_below_the_floor():
    # matplotlib's defaults are 10 pt and more (font.size 10; titles 12): only explicit
    # smaller settings in the lessons' code can break the floor the browser check assumes
    problems = []
    for nb in NOTEBOOKS:
        if nb.parent.name != "notebooks":
            continue
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        for i, c in enumerate(cells):
            if c["cell_type"] == "code":
                problems += [f"{nb.name} cell {i} {p}" for p in small_font_settings("".join(c["source"]))]
    assert problems == [], (f"{len(problems)} font settings below {FONT_FLOOR_PT} pt "
                            "(toptwo.viz.small_texts(fig) lists a figure's small texts):\n"
                            + "\n".join(problems))


needs_chromium = pytest.mark.skipif(not CHROMIUM.is_file(), reason="needs /usr/bin/chromium")

# the other pages of the book: checked for overflow like the lessons
# (the instructors' pages are in the instructor book only: docs/conf.py)
OTHER_PAGES = ["index", "library", "cli", "reproducibility", "reproduction", "theory_checks",
               "theory_status", "measurements", "speed", "robustness", "design",
               "design_stage1", "api", "course/syllabus",
               "lessons_checked", "calibration"]


def _png(width: int, height: int, dpi: float | None) -> bytes:
    """A white PNG of the given size, recording ``dpi`` (pHYs) if given."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    raw = b"".join(b"\x00" + b"\xff" * width for _ in range(height))
    phys = chunk(b"pHYs", struct.pack(">IIB", round(dpi / 0.0254), round(dpi / 0.0254), 1)) \
        if dpi else b""
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + phys + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def browsed(book, tmp_path_factory) -> dict[str, dict]:
    """Every lesson, exercise and other page in Chromium, plus two twins of lesson 01:
    ``broken_in_browser.html`` (a figure that does not decode, no MathJax, no course.js,
    a cut-off <pre>, a 3000 px wide <div>, a figure 20 in wide at 150 dpi) and
    ``twin_good.html`` (a 6.7 in figure and a 400-character output that scrolls)."""
    pages = [_page(book, nb) for nb in NOTEBOOKS] + [book / f"{p}.html" for p in OTHER_PAGES]
    good = pages[0]
    img = _imgs(good)[0]
    d = book / "_images"
    (d / "not-a-png.png").write_bytes(b"not an image")
    (d / "twin-too-wide.png").write_bytes(_png(3000, 300, 150))   # 20 in at 150 dpi
    (d / "twin-ok.png").write_bytes(_png(1000, 300, 150))         # 6.7 in at 150 dpi
    (d / "twin-no-dpi.png").write_bytes(_png(700, 300, None))
    figure = '<div class="cell_output docutils container"><img alt="" src="../_images/{}"></div>'
    text = good.read_text(encoding="utf-8")
    bad = good.with_name("broken_in_browser.html")
    bad.write_text(text.replace(f'src="{img}"', 'src="../_images/not-a-png.png"', 1)
                   .replace("mathjax/tex-chtml.js", "mathjax/missing.js")
                   .replace("course.js", "missing.js")
                   .replace("</article>", '<pre style="overflow:hidden">' + "x" * 400 +
                            '</pre><div style="width:3000px">wide</div>'
                            + figure.format("twin-too-wide.png")
                            + figure.format("twin-no-dpi.png") + "</article>", 1),
                   encoding="utf-8")
    twin = good.with_name("twin_good.html")
    twin.write_text(text.replace("</article>", '<div class="cell_output docutils container">'
                                 '<div class="output stream highlight-myst-ansi notranslate">'
                                 '<div class="highlight"><pre>' + "y" * 400 + "</pre></div>"
                                 "</div></div>" + figure.format("twin-ok.png") + "</article>", 1),
                    encoding="utf-8")
    return _browse(book, pages + [bad, twin], tmp_path_factory.mktemp("chromium"))


@needs_sphinx
@needs_chromium
def test_pages_render_math_and_figures_in_chromium(book, browsed):
    for nb in NOTEBOOKS:
        page = _page(book, nb)
        r = browsed[page.name]
        assert r["math"] > 0, f"{page.name}: no math found"
        assert _browser_problems(r, _stored_figures(nb)) == [], page.name
    for name in OTHER_PAGES:
        r = browsed[Path(name).name + ".html"]
        assert "error" not in r and _layout_problems(r) == [], (name, _layout_problems(r))
    found = " | ".join(_browser_problems(browsed["broken_in_browser.html"],
                                         _stored_figures(NOTEBOOKS[0])))
    assert "MathJax did not load" in found and "do not decode" in found, found
    assert "desktop: the page scrolls sideways" in found, found
    for screen in ("desktop", "phone"):
        assert f"{screen}: <pre class=''> cut off" in found, found
        assert f"{screen}: <div class=''> sticks out of the text column" in found, found
    assert "cannot be zoomed" in found, found          # without course.js nothing zooms
    good = browsed["twin_good.html"]
    assert _layout_problems(good) == [], _layout_problems(good)
    assert good["small"] and good["zoom"] >= 0.97, good["zoom"]


@needs_sphinx
@needs_chromium
def test_the_figure_text_check_rejects_a_too_wide_figure(book, browsed):
    page = _page(book, NOTEBOOKS[0])
    bad = _figure_problems(browsed["broken_in_browser.html"], page)
    wide = [p for p in bad if "twin-too-wide" in p]
    # 3000 px at 150 dpi shown 736 px wide: 10 pt = 20.8 px stored, 5.1 px shown
    assert len(wide) == 1 and "shown 5.1 px high" in wide[0] and "20.0 in" in wide[0], bad
    assert any("twin-no-dpi" in p and "no dpi" in p for p in bad), bad
    good = _figure_problems(browsed["twin_good.html"], page)
    assert not [p for p in good if "twin-ok" in p], good     # 10 pt = 15.3 px shown
    figures = browsed["twin_good.html"]["figures"]
    assert figures[-1]["src"].endswith("twin-ok.png") and figures[-1]["w"] < 1000


@needs_sphinx
@needs_chromium
def test_figure_text_is_legible_at_page_width(book, browsed):
    problems = [p for nb in LESSONS for p in _figure_problems(browsed[_page(book, nb).name],
                                                              _page(book, nb))]
    assert problems == [], f"{len(problems)} figures too small to read:\n" + "\n".join(problems)


def test_book_is_documented():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    cmd = "python -m sphinx -W --keep-going -b html docs docs/_build/html"
    assert "as a book" in readme and cmd in readme
    assert cmd in (DOCS / "README.md").read_text(encoding="utf-8")


def test_without_the_paper_the_committed_json_is_used(tmp_path):
    labels, source = paper_labels.load(paper=tmp_path / "absent.tex")
    assert source == str(paper_labels.JSON)
    assert labels["eqn:A_dist"] == "eq. (1)" and labels["subsec:top_T"] == "Appendix A.2"


@needs_sphinx
def test_an_unknown_paper_label_fails_the_build(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(DOCS / '_ext')!r})\n"
        "extensions = ['myst_parser', 'paper_refs']\n", encoding="utf-8")
    (src / "index.md").write_text(
        "# T\n\nSee Appendix `subsec:top_T` and eq. (1) [`eqn:A_dist`].\n",
        encoding="utf-8")
    run = lambda: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(src),
         str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    ok = run()
    assert ok.returncode == 0, ok.stderr
    prose = _Prose()
    prose.feed((tmp_path / "out" / "index.html").read_text(encoding="utf-8"))
    page = re.sub(r"\s+", " ", "".join(prose.text))
    assert "Appendix A.2" in page and "eq. (1)." in page and "[eq. (1)]" not in page
    (src / "index.md").write_text("# T\n\nSee `eqn:no_such_label`.\n", encoding="utf-8")
    bad = run()
    assert bad.returncode != 0 and "eqn:no_such_label" in bad.stderr, bad.stderr


# ----------------------------------------------------------------- the course site
LESSONS = [nb for nb in NOTEBOOKS if nb.parent.name == "notebooks"]


@needs_sphinx
def test_lesson_pages_have_a_download_and_launch_buttons_only_with_an_address(book):
    # the public address is one setting (tests/test_public_address.py); until it is set,
    # no page links Colab or Binder and each lesson links how to run it locally
    sys.path.insert(0, str(ROOT / "notebooks"))
    import install_cell

    repo = install_cell.repository()
    for nb in LESSONS:
        page = _page(book, nb)
        text = page.read_text(encoding="utf-8")
        rel = nb.relative_to(ROOT).as_posix()
        if repo:
            assert f'href="https://colab.research.google.com/github/{repo}/blob/main/{rel}"' in text
            assert f'href="https://mybinder.org/v2/gh/{repo}/main?labpath={rel}"' in text
        else:
            assert 'class="toptwo-launch-howto" href="../index.html#how-to-run-the-lessons"' \
                in text, page.name
        m = re.search(r'<a class="toptwo-launch-download" href="([^"]+)" download>', text)
        assert m, f"{page.name}: no download link"
        assert (page.parent / m[1]).read_bytes() == nb.read_bytes()
    for page in ("index.html", "library.html", "measurements.html"):
        text = (book / page).read_text(encoding="utf-8")
        assert (f'href="https://mybinder.org/v2/gh/{repo}/main?labpath=notebooks"' in text) \
            == bool(repo), page
    for nb in NOTEBOOKS:
        if nb not in LESSONS:                     # exercise sources hold solutions
            assert "toptwo-launch-download" not in _page(book, nb).read_text(encoding="utf-8")
    built = [f for f in book.rglob("*") if f.suffix in (".html", ".js", ".ipynb", ".txt")]
    assert "how-to-run-the-lessons" in (book / "index.html").read_text(encoding="utf-8")
    for f in built:
        text = f.read_text(encoding="utf-8", errors="replace")
        assert "toptwo-project/toptwo" not in text, f"placeholder address in {f}"
        if not repo:
            assert not re.search(r"colab\.research\.google\.com/github|mybinder\.org/v2/gh",
                                 text), f"a launch link without an address in {f}"


@needs_sphinx
def test_lessons_link_each_other_and_their_exercises(book):
    index = (book / "index.html").read_text(encoding="utf-8")
    assert "How to run the lessons" in index and "In what order" in index
    assert 'href="notebooks/exercises/ex01_sampling.html"' in index
    links = sum(_page(book, nb).read_text(encoding="utf-8").count("toptwo-lesson-link")
                for nb in LESSONS)
    assert links >= 5, links
    assert 'class="toptwo-launch-exercise" href="exercises/ex01_sampling.html"' in \
        _page(book, LESSONS[0]).read_text(encoding="utf-8")


@needs_sphinx
def test_search_titles_have_no_raw_latex(book):
    text = (book / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1:text.rindex(")")])
    titles = list(index["titles"]) + list(index.get("alltitles", {}))
    raw = [t for t in titles if re.search(r"\\[A-Za-z(]", t)]
    assert raw == [], raw[:5]
    assert any("estimation of p and q" in t for t in titles)
    page_title = re.search(r"<title>([^<]*)", _page(book, ROOT / "notebooks" /
                                                   "07_robustness.ipynb").read_text())[1]
    assert "\\" not in page_title, page_title
    # the sidebar (built from each page's table of contents) shows titles as plain text
    for page in ("index.html", "notebooks/09_top_t.html"):
        text = (book / page).read_text(encoding="utf-8")
        tree = text[text.index('class="sidebar-tree"'):]
        tree = tree[:tree.index('role="main"')]                # the sidebar only
        assert "\\(" not in tree and "top-T model (T = 3)" in tree, page


@needs_sphinx
def test_api_reference_is_generated_from_the_docstrings(book):
    api = (book / "api.html").read_text(encoding="utf-8")
    for name in ("TopTwo1", "TopTwo2", "TopTwoEM", "Responses", "load_dataset"):
        assert name in api, name
    page = (book / "api" / "toptwo.TopTwo2.html").read_text(encoding="utf-8")
    assert "Algorithm 2" in page or "plug-in" in page


def test_latex_to_text():
    pytest.importorskip("docutils", reason='the book extension needs the docs extra: pip install -e ".[docs]"')
    sys.path.insert(0, str(DOCS / "_ext"))
    from course_site import latex_to_text

    assert latex_to_text(r"\mathbf p") == "p"
    assert latex_to_text(r"\hat g") == "g\u0302"
    assert latex_to_text(r"\|\hat{\mathbf q} - \mathbf q\|_\infty") == "‖q\u0302 - q‖∞"
    assert latex_to_text("T = 3") == "T = 3"


def test_notebook_file_links_become_page_links():
    pytest.importorskip("docutils", reason='the book extension needs the docs extra: pip install -e ".[docs]"')
    sys.path.insert(0, str(DOCS / "_ext"))
    from course_site import _notebook_links_to_pages

    src = ['see [lesson 12](12_stage_one.ipynb) and [ex 1](exercises/ex01_sampling.ipynb), '
           'not [the paper](https://x.org/a.ipynb)']
    _notebook_links_to_pages(None, "notebooks/04_algorithms", src)
    assert src[0] == ("see {doc}`lesson 12 <12_stage_one>` and {doc}`ex 1 <exercises/"
                      "ex01_sampling>`, not [the paper](https://x.org/a.ipynb)")
    other = ["[x](12_stage_one.ipynb)"]
    _notebook_links_to_pages(None, "library", other)
    assert other == ["[x](12_stage_one.ipynb)"]


def test_notebook_links_to_docs_pages_become_page_links():
    pytest.importorskip("docutils", reason='the book extension needs the docs extra: pip install -e ".[docs]"')
    sys.path.insert(0, str(DOCS / "_ext"))
    from course_site import _docs_links_to_pages

    src = ["see [the checks](../docs/lessons_checked.md), not [x](../README.md)"]
    _docs_links_to_pages(None, "notebooks/06_synthetic_scenarios", src)
    assert src[0] == "see {doc}`the checks </lessons_checked>`, not [x](../README.md)"
    other = ["[y](../docs/lessons_checked.md)"]
    _docs_links_to_pages(None, "library", other)
    assert other == ["[y](../docs/lessons_checked.md)"]


# ------------------------------------------------- self-check solutions, hidden checks
def _solution_cells(nb: Path) -> list[dict]:
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    return [c for c in cells if c["cell_type"] == "code"
            and re.match(r"#\s*Solution to exercise\s+\d+", "".join(c["source"]).lstrip())]


def test_every_solution_cell_is_tagged_to_collapse():
    # docs/lessons_checked.md: a self-check solution is a code cell tagged hide-input
    # whose first line is "# Solution to exercise N"
    for nb in LESSONS:
        for c in _solution_cells(nb):
            assert "hide-input" in c.get("metadata", {}).get("tags", []), \
                f"{nb.name}: {''.join(c['source'])[:40]!r} is not tagged hide-input"


@needs_sphinx
def test_solutions_and_long_checks_render_collapsed(tmp_path):
    import nbformat

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(DOCS / '_ext')!r})\n"
        "extensions = ['myst_nb', 'course_site']\nnb_execution_mode = 'off'\n",
        encoding="utf-8")
    (src / "index.md").write_text("# T\n\n```{toctree}\nlesson\n```\n", encoding="utf-8")
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell
    nb.cells = [nbformat.v4.new_markdown_cell("# Lesson"),
                cell("setup = 'REMOVED-SETUP'", metadata={"tags": ["remove-cell"]}),
                cell("# Solution to exercise 2\nanswer = 'SOLUTION-CODE'\nprint(answer)",
                     metadata={"tags": ["hide-input"]},
                     outputs=[nbformat.v4.new_output("stream", text="SOLUTION-OUTPUT\n")]),
                cell("check = 'CHECK-CODE'", metadata={"tags": ["hide-input"]},
                     outputs=[nbformat.v4.new_output("stream", text="CHECK-VERDICT\n")]),
                cell("visible = 'VISIBLE-CODE'")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.write(nb, src / "lesson.ipynb")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(src),
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "out" / "lesson.html").read_text(encoding="utf-8")
    assert "REMOVED-SETUP" not in page
    details = re.findall(r"<details.*?</details>", page, re.S)
    solution = [d for d in details if "SOLUTION-CODE" in d]
    assert len(solution) == 1 and "SOLUTION-OUTPUT" in solution[0]   # code and output hidden
    assert "Solution to exercise 2 (click to show)" in solution[0]
    check = [d for d in details if "CHECK-CODE" in d]
    assert len(check) == 1 and "CHECK-VERDICT" not in check[0]       # the verdict stays shown
    assert "CHECK-VERDICT" in page and "Show the code of this check" in check[0]
    assert not [d for d in details if "VISIBLE-CODE" in d]


@needs_sphinx
def test_lesson_solutions_are_collapsed_in_the_book(book):
    for nb in LESSONS:
        want = len(_solution_cells(nb))
        got = _page(book, nb).read_text(encoding="utf-8").count("Solution to exercise")
        assert got >= want, f"{nb.name}: {want} solutions, {got} collapsed"


SNIPPETS = """<!doctype html><html><head>
<script src="_static/documentation_options.js"></script><script src="_static/doctools.js"></script>
<script src="_static/course.js"></script><script src="_static/searchtools.js"></script>
</head><body><pre id="out">pending</pre><script>
document.addEventListener("DOMContentLoaded", () => {
  const pages = %s;
  const out = pages.map(([name, html]) => {
    const p = Search.makeSearchSummary(html, new Set(%s), "");
    return [name, p ? p.textContent : ""];
  });
  document.getElementById("out").textContent = "RESULT:" + JSON.stringify(out);
});
</script></body></html>"""


@needs_sphinx
@needs_chromium
def test_search_snippets_start_with_the_text_and_show_no_latex(book, tmp_path):
    # Sphinx builds a result's snippet from the page's main text: without course.js it
    # would start with the launch bar and show \\(\\mathbf p\\) as typed
    pages = [_page(book, nb) for nb in LESSONS[:3]] + [_page(book, LESSONS[-1])]
    data = [[p.name, p.read_text(encoding="utf-8")] for p in pages]
    harness = book / "_snippet_check.html"
    harness.write_text(SNIPPETS % (json.dumps(data).replace("</", "<\\/"), '["the"]'),
                       encoding="utf-8")
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", f"--user-data-dir={tmp_path / 'profile'}",
           "--allow-file-access-from-files", "--virtual-time-budget=10000", "--dump-dom",
           harness.as_uri()]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    finally:
        harness.unlink()
    m = re.search(r"RESULT:(.*?)</pre>", proc.stdout, re.S)
    assert m, proc.stderr[-2000:]
    snippets = dict(json.loads(html.unescape(m[1])))
    assert len(snippets) == len(pages)
    for name, text in snippets.items():
        assert text.strip(), name
        assert "Download" not in text and "How to run it" not in text, (name, text[:120])
        assert not re.search(r"\\[(\[]|\\mathbf|\$\$", text), (name, text[:240])
