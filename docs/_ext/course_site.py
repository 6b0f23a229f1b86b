"""Sphinx extension: what makes the book read like a course site.

* **A download (and launch buttons) on every lesson page** (``notebooks/NN_*``):
  "Download .ipynb" at the top of the page, with "Open in Colab" and "Launch Binder" only
  once the project has a public address (``pyproject.toml``, ``[project.urls]
  Repository``; until then a link to how to run a lesson locally). The notebook is copied
  beside its page so the download works offline and from any host.
  Exercise pages get no download or launch button here (their sources hold solutions).
* **Titles without raw LaTeX** in the search index, the browser tab and the navigation:
  math in a page title (``$\\mathbf p$``) becomes plain text ("p"); the page itself keeps
  the typeset math.
* **Cross-references**: "notebook 06" or "lesson 6" in the prose becomes a link to that
  lesson; each lesson's bar links the exercises that go with it.
* **Self-check solutions and long checks collapsed**: a code cell tagged ``hide-input``
  whose first line is ``# Solution to exercise N`` is shown as a closed "Solution to
  exercise N" toggle (code and output); any other ``hide-input`` cell shows its output
  with its code behind a toggle (myst-nb's ``<details>``; see docs/lessons_checked.md).
* **Legible figures and outputs**: stored figures can be clicked to zoom to the full
  window (again, or Escape, to close), and wide code and outputs scroll inside their box
  instead of running off the page (``course.css``).
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
STATIC = HERE / "static"
BRANCH = "main"
LESSON = re.compile(r"^notebooks/[0-9][0-9][a-z]?_[^/]+$")

_COMMANDS = {r"\mathbf", r"\boldsymbol", r"\mathrm", r"\mathit", r"\operatorname", r"\text",
             r"\left", r"\right", r"\,", r"\;", r"\!"}
_SYMBOLS = {r"\alpha": "α", r"\beta": "β", r"\gamma": "γ", r"\delta": "δ",
            r"\Delta": "Δ", r"\epsilon": "ε", r"\varepsilon": "ε", r"\eta": "η",
            r"\theta": "θ", r"\lambda": "λ", r"\mu": "μ", r"\pi": "π", r"\sigma": "σ",
            r"\tau": "τ", r"\ell": "ℓ", r"\le": "≤", r"\leq": "≤", r"\ge": "≥",
            r"\geq": "≥", r"\times": "×", r"\cdot": "·", r"\to": "→", r"\infty": "∞",
            r"\approx": "≈", r"\neq": "≠", r"\sqrt": "√", r"\log": "log", r"\|": "‖"}


def repository(pyproject: Path = ROOT / "pyproject.toml") -> str | None:
    """``owner/name`` from ``[project.urls] Repository`` in pyproject.toml, or None when
    the project has no public address yet (then no page links Colab or Binder). The same
    rule as notebooks/install_cell.py: a malformed address or a placeholder is an error."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "toptwo_install_cell", ROOT / "notebooks" / "install_cell.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        return module.repository(pyproject)
    except SystemExit as exc:                      # the script's way to report; here an error
        raise ValueError(str(exc)) from None


def latex_to_text(tex: str) -> str:
    """A plain-text rendering of a short LaTeX formula for titles: ``\\mathbf p`` -> p,
    ``\\hat g`` -> ĝ, ``T = 3`` stays."""
    out = tex
    for cmd in sorted(_COMMANDS, key=len, reverse=True):
        stop = r"(?![A-Za-z])" if cmd[-1].isalpha() else ""
        out = re.sub(re.escape(cmd) + stop, "", out)
    out = re.sub(r"\\(?:hat|widehat)\s*\{?\s*([A-Za-z])\s*\}?", lambda m: m[1] + "\u0302", out)
    out = re.sub(r"\\(?:bar|overline)\s*\{?\s*([A-Za-z])\s*\}?", lambda m: m[1] + "\u0304", out)
    for cmd, sym in sorted(_SYMBOLS.items(), key=lambda kv: -len(kv[0])):
        stop = r"(?![A-Za-z])" if cmd[-1].isalpha() else ""
        out = re.sub(re.escape(cmd) + stop, sym, out)
    out = out.replace("{", "").replace("}", "").replace("^", "").replace("_", "")
    out = re.sub(r"\\([A-Za-z]+)", r"\1", out)          # any other command: its name
    return re.sub(r"\s+", " ", out).strip()


def _plain_title(title: nodes.Node) -> nodes.Node:
    """A copy of a title node with every math node replaced by plain text."""
    new = title.deepcopy()
    for math in list(new.findall(nodes.math)):
        math.parent.replace(math, nodes.Text(latex_to_text(math.astext())))
    return new


def _clean_titles(app: Any, doctree: nodes.document) -> None:
    env = app.env
    for store in (env.titles, env.longtitles):
        if env.docname in store:
            store[env.docname] = _plain_title(store[env.docname])
    # the sidebar and the page's contents are built from env.tocs: plain text there too
    toc = env.tocs.get(env.docname)
    if toc is not None:
        for math in list(toc.findall(nodes.math)):
            math.parent.replace(math, nodes.Text(latex_to_text(math.astext())))


def _clean_search_index(outdir: Path) -> None:
    """Replace ``\\(...\\)`` math left in the search index's titles by plain text."""
    path = outdir / "searchindex.js"
    if not path.is_file():
        return
    text = path.read_text(encoding="utf-8")
    m = re.match(r"^(Search\.setIndex\()(.*)(\))\s*$", text, re.S)
    if not m:
        return
    index = json.loads(m[2])
    fix = lambda s: re.sub(r"\\\((.*?)\\\)", lambda mm: latex_to_text(mm[1]), s)  # noqa: E731
    index["titles"] = [fix(t) for t in index.get("titles", [])]
    if "alltitles" in index:               # section titles: math as bare LaTeX source
        index["alltitles"] = {
            (latex_to_text(fix(k)) if re.search(r"\\[A-Za-z|]|[_^]\{", k) else k): v
            for k, v in index["alltitles"].items()}
    path.write_text(m[1] + json.dumps(index, ensure_ascii=False, separators=(",", ":"))
                    + m[3], encoding="utf-8")


def launch_bar(docname: str, repo: str | None, howto: str = "") -> str:
    """The HTML of the launch/download bar of lesson ``docname`` (``notebooks/NN_x``):
    Colab and Binder only if the project has a public address (``repo``), else a link
    ``howto`` to how to run a lesson locally; always the notebook's download."""
    rel = f"{docname}.ipynb"
    name = Path(rel).name
    links = []
    if repo:
        colab = f"https://colab.research.google.com/github/{repo}/blob/{BRANCH}/{rel}"
        binder = f"https://mybinder.org/v2/gh/{repo}/{BRANCH}?labpath={rel}"
        links += [f'<a class="toptwo-launch-colab" href="{colab}">Open in Colab</a>',
                  f'<a class="toptwo-launch-binder" href="{binder}">Launch Binder</a>']
    links.append(f'<a class="toptwo-launch-download" href="{name}" download>Download {name}</a>')
    if not repo and howto:
        links.append(f'<a class="toptwo-launch-howto" href="{howto}">How to run it</a>')
    return (f'<div class="toptwo-launch" role="navigation" aria-label="Run this lesson">'
            + "".join(links) + '</div>')


#: The exercises that go with each lesson (lesson number -> exercise notebook stems).
EXERCISES = {1: ["ex01_sampling"], 2: ["ex02_proposition1"], 3: ["ex03_binary_rank_one"],
             4: ["ex04_reliability", "ex05_plugin_mle"], 5: ["ex06_scaling"]}


def _exercise_links(app: Any, pagename: str) -> str:
    number = int(Path(pagename).name[:2])
    links = []
    for stem in EXERCISES.get(number, []):
        doc = f"notebooks/exercises/{stem}"
        if doc in app.env.found_docs:
            uri = app.builder.get_relative_uri(pagename, doc)
            links.append(f'<a class="toptwo-launch-exercise" href="{uri}">Exercise '
                         f'{stem[2:4].lstrip("0")}</a>')
    return "".join(links)


def _page_context(app: Any, pagename: str, templatename: str, context: dict,
                  doctree: Any) -> None:
    if "body" not in context:
        return
    repo = app.config.course_repository
    if LESSON.match(pagename):
        howto = app.builder.get_relative_uri(pagename, "index") + "#how-to-run-the-lessons"
        bar = launch_bar(pagename, repo, howto)
        bar = bar.replace("</div>", _exercise_links(app, pagename) + "</div>", 1)
        context["body"] = bar + context["body"]
    elif repo and not pagename.startswith(("notebooks/", "api/", "genindex", "search")):
        # the other pages: the lessons on Binder (each lesson page has its own buttons)
        context["body"] = (f'<div class="toptwo-launch" role="navigation" aria-label="Run '
                           f'the lessons"><a class="toptwo-launch-binder" href="https://'
                           f'mybinder.org/v2/gh/{repo}/{BRANCH}?labpath=notebooks">Launch '
                           f'the lessons on Binder</a></div>') + context["body"]


class LessonLinks(SphinxPostTransform):
    """Turn "notebook 06" / "lesson 6" / "notebooks 04 and 06" in prose into links."""

    default_priority = 900
    formats = ("html",)
    PATTERN = re.compile(r"\b([Nn]otebook|[Ll]esson)(s?)\s+(\d{1,2})\b")

    def run(self, **kwargs: Any) -> None:
        lessons = {int(Path(d).name[:2]): d for d in self.env.found_docs if LESSON.match(d)}
        skip = (nodes.reference, nodes.literal, nodes.literal_block, nodes.math,
                nodes.math_block, nodes.title, nodes.raw)
        for text in list(self.document.findall(nodes.Text)):
            parent = text.parent
            if parent is None or any(isinstance(a, skip) for a in _ancestors(text)):
                continue
            source = str(text)
            pieces, last = [], 0
            for m in self.PATTERN.finditer(source):
                doc = lessons.get(int(m[3]))
                if doc is None or doc == self.env.docname:
                    continue
                pieces.append(nodes.Text(source[last:m.start()]))
                uri = self.app.builder.get_relative_uri(self.env.docname, doc)
                ref = nodes.reference("", "", internal=True, refuri=uri,
                                      classes=["toptwo-lesson-link"])
                ref += nodes.Text(m[0])
                pieces.append(ref)
                last = m.end()
            if pieces:
                pieces.append(nodes.Text(source[last:]))
                parent.replace(text, pieces)


_NOTEBOOK_LINK = re.compile(r"\[([^\]\n]+)\]\(((?:\.\./|exercises/)?[0-9a-z][\w]*)\.ipynb\)")


_DOCS_LINK = re.compile(r"\[([^\]\n]+)\]\(\.\./docs/([\w/]+)\.md\)")


def _notebook_links_to_pages(app: Any, docname: str, source: list[str]) -> None:
    """``[lesson 12](12_stage_one.ipynb)`` in a notebook (a link that works in Jupyter and
    on Colab) becomes a link to that lesson's page: a ``{doc}`` role, which Sphinx resolves
    by document name. (As a file link it would be resolved through the ``docs/notebooks``
    symlink's target, outside the source tree, and fail the build.)"""
    if docname.startswith("notebooks/"):
        source[0] = _NOTEBOOK_LINK.sub(lambda m: f"{{doc}}`{m[1]} <{m[2]}>`", source[0])
        # a link from a lesson to a book page, ``[text](../docs/page.md)`` (works in Jupyter)
        source[0] = _DOCS_LINK.sub(lambda m: f"{{doc}}`{m[1]} </{m[2]}>`", source[0])


SOLUTION = re.compile(r"^#\s*Solution to exercise\s+(\d+)\b")


class CollapsedSolutions(SphinxPostTransform):
    """Self-check solutions and hidden checks, collapsed (docs/lessons_checked.md).

    The lessons' convention: a code cell tagged ``hide-input`` is shown collapsed
    (myst-nb's own ``<details>``; no extension needed). If its first line is
    ``# Solution to exercise N`` it is a self-check solution: its code *and* its output
    are collapsed together under one "Solution to exercise N" toggle, so the answer it
    prints is not in view either. Any other ``hide-input`` cell is a check whose code
    needs more than a line: its code is collapsed ("Show the code of this check"), its
    one-line verdict stays in view. Runs just before myst-nb's ``HideInputCells``."""

    default_priority = 198
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        for node in self.document.findall(nodes.container):
            if node.get("nb_element") != "cell_code" or node.get("hide_mode") != "input":
                continue
            if not node.children or node.children[0].get("nb_element") != "cell_code_source":
                continue
            m = SOLUTION.match(node.children[0].astext().lstrip())
            if m:
                node["hide_mode"] = "all"
                node["prompt_show"] = f"Solution to exercise {m[1]} (click to show)"
                node["prompt_hide"] = f"Solution to exercise {m[1]} (click to hide)"
                node["classes"].append("toptwo-solution")
            else:
                node["prompt_show"] = "Show the code of this check"
                node["prompt_hide"] = "Hide the code of this check"
                node["classes"].append("toptwo-hidden-check")


def _ancestors(node: nodes.Node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def _copy_notebooks(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for docname in app.env.found_docs:
        if LESSON.match(docname):
            src = Path(app.srcdir) / f"{docname}.ipynb"
            if src.is_file():
                dest = outdir / f"{docname}.ipynb"
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest)
    _clean_search_index(outdir)


def _add_static(app: Any) -> None:
    app.config.html_static_path.append(str(STATIC))


_DOCS_LINK = re.compile(r"\[([^\]\n]+)\]\(\.\./docs/([0-9a-z][\w/]*)\.md\)")


def _docs_links_to_pages(app: Any, docname: str, source: list[str]) -> None:
    """``[How the lessons are checked](../docs/lessons_checked.md)`` in a notebook (a file
    link that works in Jupyter and on GitHub) becomes a ``{doc}`` link to that book page."""
    if docname.startswith("notebooks/"):
        source[0] = _DOCS_LINK.sub(lambda m: f"{{doc}}`{m[1]} </{m[2]}>`", source[0])


def setup(app: Any) -> dict[str, Any]:
    app.add_config_value("course_repository", repository(), "html")
    app.connect("builder-inited", _add_static)
    app.connect("source-read", _notebook_links_to_pages)
    app.connect("source-read", _docs_links_to_pages)
    app.connect("doctree-read", _clean_titles)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _copy_notebooks)
    app.add_post_transform(LessonLinks)
    app.add_post_transform(CollapsedSolutions)
    app.add_css_file("course.css")
    app.add_js_file("course.js")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
