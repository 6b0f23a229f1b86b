"""Sphinx extension: show the paper's printed numbers instead of its LaTeX labels.

Markdown cells cite the paper as inline code, e.g. ``eq. (1) [`eqn:A_dist`]``,
``Fig. `fig:estm_pq` `` or ``Appendix `subsec:top_T` ``.  A docutils transform
replaces each inline literal that is a known label by its printed reference:

* after a word that already names the kind ("eq. ", "Fig. ", "Appendix ", "Sec. ",
  "Theorem ", ...) only the number is inserted: "Appendix `subsec:top_T`" ->
  "Appendix A.2";
* a bracketed citation that repeats the reference printed just before it is dropped:
  "eq. (1) [`eqn:A_dist`]" -> "eq. (1)";
* anything else becomes the full reference: "[`fig:estm_pq`]" -> "[Fig. 8]".

Inline literals that look like paper labels (``eqn:``, ``fig:`` ...) but are unknown
raise a warning, so a typo in a notebook fails the ``-W`` build.  Code cells are
literal blocks and are never touched.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import paper_labels  # noqa: E402

logger = logging.getLogger(__name__)
LABEL_LIKE = re.compile(r"^(eqn|fig|tab|sec|subsec|app|alg|thm|lem|cor|prop|rem):[\w:.\-]+$")
# printed prefix -> words a sentence may already end with before the bare number
KIND_WORDS = {
    "eq.": ("eq. ", "eqs. ", "Eq. ", "equation "),
    "Fig.": ("Fig. ", "Figs. ", "Figure ", "fig. "),
    "Appendix": ("Appendix ", "appendix ", "Appendix §", "§"),
    "Sec.": ("Sec. ", "Section ", "§"),
    "Table": ("Table ", "table "),
    "Algorithm": ("Algorithm ", "Alg. "),
    "Theorem": ("Theorem ",),
    "Corollary": ("Corollary ",),
    "Lemma": ("Lemma ",),
    "Proposition": ("Proposition ",),
    "Remark": ("Remark ",),
}


def _split(printed: str) -> tuple[str, str]:
    kind, _, number = printed.partition(" ")
    return kind, number


def _merge_text(parent: nodes.Element) -> None:
    """Join adjacent Text children (the Markdown parser splits text at "[" and "]")."""
    i = 0
    while i + 1 < len(parent.children):
        a, b = parent.children[i], parent.children[i + 1]
        if isinstance(a, nodes.Text) and isinstance(b, nodes.Text):
            parent.replace(a, nodes.Text(a.astext() + b.astext()))
            parent.remove(b)
        else:
            i += 1


class PaperRefs(SphinxTransform):
    default_priority = 700

    def apply(self) -> None:
        labels = self.env.app.config.paper_labels_map
        for lit in list(self.document.findall(nodes.literal)):
            text = lit.astext().strip()
            if not LABEL_LIKE.match(text):
                continue
            if text not in labels:
                logger.warning("paper label %r not found in the paper's source", text,
                               location=lit, type="paper_refs", subtype="unknown")
                continue
            printed = labels[text]
            kind, number = _split(printed)
            parent = lit.parent
            _merge_text(parent)
            idx = parent.index(lit)
            prev = parent[idx - 1] if idx > 0 else None
            nxt = parent[idx + 1] if idx + 1 < len(parent) else None
            prev_text = prev.astext() if isinstance(prev, nodes.Text) else ""
            # what a reader sees before the label (bold, line breaks included)
            before = re.sub(r"\s+", " ", "".join(n.astext() for n in parent[:idx]))
            next_text = nxt.astext() if isinstance(nxt, nodes.Text) else ""
            bare = number.strip("()")  # "(1)" -> "1"
            compact = bare.replace("(", "").replace(")", "")  # "2(a)" -> "2a"
            words = KIND_WORDS.get(kind, ())
            # "eq. (1) [`eqn:A_dist`]", "Fig. 2a [`fig:color_error`]": the bracket
            # repeats what is printed just before it -> drop the bracket.
            said = (printed, number, bare, compact, f"{kind} {compact}")
            if next_text.startswith("]") and any(before.endswith(x + " [") for x in said):
                parent.replace(prev, nodes.Text(prev_text.rstrip()[:-1].rstrip()))
                parent.replace(nxt, nodes.Text(next_text[1:]))
                parent.remove(lit)
                continue
            # "Lemma [`lem:x`]" -> "Lemma 3";  "eq. (`eqn:x`)" -> "eq. (23)".
            for opener, closer in (("[", "]"), ("(", ")")):
                if next_text.startswith(closer) and any(
                        before.endswith(w + opener) for w in words):
                    if opener == "[":
                        parent.replace(prev, nodes.Text(prev_text.rstrip()[:-1]))
                        parent.replace(nxt, nodes.Text(next_text[1:]))
                        shown = number
                    else:
                        shown = bare
                    break
            else:
                shown = number if any(before.endswith(w) for w in words) else printed
            parent.replace(lit, nodes.inline(text, shown, classes=["paper-ref"],
                                             title=f"paper label {text}"))


def setup(app):
    labels, source = paper_labels.load()
    app.add_config_value("paper_labels_map", labels, "env")
    app.add_transform(PaperRefs)
    logger.info("paper labels: %d from %s", len(labels), source)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
