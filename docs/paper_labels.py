"""Map the paper's LaTeX labels to the numbers printed in the PDF.

The notebooks cite the paper by its LaTeX labels (``eqn:A_dist``, ``fig:estm_pq``,
``subsec:top_T``).  Readers of the book see the PDF, so the book shows the printed
numbers instead ("eq. (1)", "Fig. 7", "Appendix A.2").  This module computes them by
replaying LaTeX's counters over the source, in order:

* ``equation`` (and the paper's ``\\beq``/``\\eeq`` shorthand): one number per
  environment unless it is starred or contains ``\\nonumber``/``\\notag``; a ``split``
  inside does not add numbers.  ``align``/``gather``/``eqnarray``/``multline``: one
  number per row (rows end at a top-level ``\\\\``) unless the row has ``\\nonumber``.
  Numbering runs through the whole document (``article`` class; the appendix does not
  reset it).
* ``figure``/``figure*``: the counter steps at ``\\caption``; ``\\subfloat`` labels get
  the figure's number plus a letter, "Fig. 3(b)".  ``table``: own counter at ``\\caption``.
  ``algorithm``: own counter at ``\\caption``.
* ``thm``/``cor``/``lem``/``prop``/``rem``: one counter each (``\\newtheorem`` without a
  parent counter), stepped at ``\\begin``.
* ``\\section``/``\\subsection``: arabic before ``\\appendix``, letters after (A, A.1, ...);
  starred forms are unnumbered.

A ``\\label`` takes the innermost numbered thing open at that point, as in LaTeX.
The result is a small ``{label: printed reference}`` dictionary; ``paper_labels.json``
next to this file is a committed copy for builds without the paper's source.
"""
from __future__ import annotations

import json
import os
import re
import string
from pathlib import Path

_MATH_ROWS = {"align", "gather", "eqnarray", "multline", "flalign", "alignat"}
_THEOREMS = {"thm": "Theorem", "cor": "Corollary", "lem": "Lemma", "prop": "Proposition",
             "rem": "Remark"}
_TOKEN = re.compile(
    r"\\begin\{(?P<begin>[A-Za-z*]+)\}"
    r"|\\end\{(?P<end>[A-Za-z*]+)\}"
    r"|\\label\{(?P<label>[^}]+)\}"
    r"|\\(?P<sec>section|subsection|subsubsection)(?P<secstar>\*?)\s*[\[{]"
    r"|\\(?P<appendix>appendix)\b"
    r"|\\(?P<nonumber>nonumber|notag)\b"
    r"|\\(?P<caption>caption)\b"
    r"|\\(?P<subfloat>subfloat)\b"
    r"|(?P<newline>\\\\)"
)


def _strip_comments(tex: str) -> str:
    return re.sub(r"(?<!\\)%.*", "", tex)


def parse(tex: str) -> dict[str, str]:
    """Return ``{label: printed reference}`` for every numbered label in ``tex``."""
    tex = _strip_comments(tex)
    # The preamble defines \beq as \begin{equation}: count only the document body.
    start = tex.find("\\begin{document}")
    tex = tex[start:] if start >= 0 else tex
    tex = re.sub(r"\\beq\b", r"\\begin{equation}", tex)
    tex = re.sub(r"\\eeq\b", r"\\end{equation}", tex)
    counters = {"equation": 0, "figure": 0, "table": 0, "algorithm": 0, "section": 0,
                "subsection": 0, "subsubsection": 0, **{k: 0 for k in _THEOREMS}}
    appendix = False
    out: dict[str, str] = {}
    stack: list[dict] = []  # open environments that own labels
    current: str | None = None  # printed reference of the last stepped counter

    def section_number(level: str) -> str:
        top = counters["section"]
        head = string.ascii_uppercase[top - 1] if appendix else str(top)
        parts = [head]
        if level in ("subsection", "subsubsection"):
            parts.append(str(counters["subsection"]))
        if level == "subsubsection":
            parts.append(str(counters["subsubsection"]))
        return ".".join(parts)

    def finish_row(frame: dict) -> None:
        if not frame["nonumber"]:
            counters["equation"] += 1
            for lab in frame["labels"]:
                out[lab] = f"eq. ({counters['equation']})"
        frame["labels"], frame["nonumber"] = [], False

    for m in _TOKEN.finditer(tex):
        if m["begin"]:
            env = m["begin"]
            base = env.rstrip("*")
            starred = env.endswith("*")
            if base == "equation" and not any(f["kind"] == "math" for f in stack):
                stack.append({"kind": "math", "env": env, "rows": False,
                              "nonumber": starred, "labels": []})
            elif base in _MATH_ROWS:
                stack.append({"kind": "math", "env": env, "rows": True,
                              "nonumber": starred, "starred": starred, "labels": []})
            elif base in ("figure", "table", "algorithm"):
                stack.append({"kind": "float", "env": env, "counter": base,
                              "number": None, "sub": 0, "pending": [], "last_sub": None})
            elif base in _THEOREMS:
                counters[base] += 1
                current = f"{_THEOREMS[base]} {counters[base]}"
        elif m["end"]:
            env = m["end"]
            if stack and stack[-1]["env"] == env:
                frame = stack.pop()
                if frame["kind"] == "math":
                    if frame["rows"] and frame.get("starred"):
                        frame["nonumber"] = True
                    finish_row(frame)
                elif frame["kind"] == "float" and frame["number"] is not None:
                    for lab, letter in frame["pending"]:
                        out[lab] = f"Fig. {frame['number']}({letter})"
        elif m["label"]:
            lab = m["label"].strip()
            frame = stack[-1] if stack else None
            if frame and frame["kind"] == "math":
                frame["labels"].append(lab)
            elif frame and frame["kind"] == "float":
                if frame["last_sub"] is not None and frame["number"] is None:
                    frame["pending"].append((lab, frame["last_sub"]))
                    frame["last_sub"] = None
                elif frame["number"] is not None:
                    word = {"figure": "Fig.", "table": "Table", "algorithm": "Algorithm"}
                    out[lab] = f"{word[frame['counter']]} {frame['number']}"
            elif current is not None:
                out[lab] = current
        elif m["sec"]:
            level = m["sec"]
            if m["secstar"]:
                current = None
                continue
            counters[level] += 1
            if level == "section":
                counters["subsection"] = counters["subsubsection"] = 0
            elif level == "subsection":
                counters["subsubsection"] = 0
            number = section_number(level)
            current = f"Appendix {number}" if appendix else f"Sec. {number}"
        elif m["appendix"]:
            appendix = True
            counters["section"] = counters["subsection"] = counters["subsubsection"] = 0
        elif m["nonumber"]:
            if stack and stack[-1]["kind"] == "math":
                stack[-1]["nonumber"] = True
        elif m["newline"]:
            if stack and stack[-1]["kind"] == "math" and stack[-1]["rows"]:
                finish_row(stack[-1])
        elif m["caption"]:
            frame = next((f for f in reversed(stack) if f["kind"] == "float"), None)
            if frame is not None and frame["number"] is None:
                counters[frame["counter"]] += 1
                frame["number"] = counters[frame["counter"]]
        elif m["subfloat"]:
            frame = next((f for f in reversed(stack) if f["kind"] == "float"), None)
            if frame is not None:
                frame["last_sub"] = string.ascii_lowercase[frame["sub"]]
                frame["sub"] += 1
    return out


HERE = Path(__file__).resolve().parent
# The paper's source sits beside the project checkout (not committed); a git worktree
# elsewhere finds it through TOPTWO_PAPER or the machine's shared folder.
PAPER = next((p for p in (Path(os.environ.get("TOPTWO_PAPER", "")),
                          HERE.parent.parent / "shared" / "paper" / "jeong-chung-2023-top-two.tex",
                          Path("/work/shared/paper/jeong-chung-2023-top-two.tex"))
              if str(p) not in ("", ".") and p.is_file()),
             HERE.parent.parent / "shared" / "paper" / "jeong-chung-2023-top-two.tex")
JSON = HERE / "paper_labels.json"


def load(paper: Path = PAPER, fallback: Path = JSON) -> tuple[dict[str, str], str]:
    """Labels from the paper's source if present, else from the committed JSON copy."""
    if paper.is_file():
        return parse(paper.read_text(encoding="utf-8")), str(paper)
    return json.loads(fallback.read_text(encoding="utf-8")), str(fallback)


# ------------------------------------------------------------- references in plain text
#: A reference as printed, optionally followed by its LaTeX label in brackets:
#: "eq. (13) [`eqn:total_s_pq`]", "Fig. 2a", "Table 5", "Appendix B.4", "Sec. 6.3".
_KINDS = (r"eqs?\.|Eqs?\.|equation|Fig\.|Figs\.|Figure|Table|Algorithm|Alg\.|Theorem|Thm\.|Lemma"
          r"|Proposition|Prop\.|Corollary|Cor\.|Appendix|App\.|Sec\.|Section")
REFERENCE = re.compile(
    r"(?<![\w`])(?P<kind>" + _KINDS + r")\s?"
    r"(?P<number>\(\d+\)|\d+(?:\.\d+)?(?:\([a-z]\)|[a-z]\b)?|[A-Z](?:\.\d+)?\b)"
    r"(?:\*\*)?(?:\s*\[`?(?P<label>(?:eqn|fig|tab|sec|subsec|app|alg|thm|lem|cor|prop|rem|defn)"
    r":[\w:.\-]+)`?\])?")
#: Labels of the paper's source that print no number (checked with the source present:
#: every \\label of the paper is in the map or here).
UNNUMBERED = {"eqn:defr": "the unnumbered display defining r^(k) (Sec. 3)"}
_LABEL_CODE = re.compile(
    r"(?:`|\[)((?:eqn|fig|tab|sec|subsec|app|alg|thm|lem|cor|prop|rem|defn):[\w:.\-]*\w)(?:`|\])")
_WORD = {"eq.": "eq.", "eqs.": "eq.", "Eq.": "eq.", "Eqs.": "eq.", "equation": "eq.",
         "Fig.": "Fig.", "Figs.": "Fig.", "Figure": "Fig.", "Table": "Table",
         "Algorithm": "Algorithm", "Alg.": "Algorithm", "Theorem": "Theorem",
         "Thm.": "Theorem", "Lemma": "Lemma", "Proposition": "Proposition",
         "Prop.": "Proposition", "Corollary": "Corollary", "Cor.": "Corollary",
         "Appendix": "Appendix", "App.": "Appendix",
         "Sec.": "Sec.", "Section": "Sec."}


def _norm(ref: str) -> str:
    return re.sub(r"[().\s]", "", ref).lower()


def printed_references(labels: dict[str, str]) -> set[str]:
    """Every reference the paper prints, normalised: the labelled ones, every equation
    number up to the largest labelled one (some equations have no label, e.g. App. B.4's
    eq. (25)), likewise theorems, lemmas and corollaries, and each figure's number alone
    ("Fig. 2" for "Fig. 2(a)")."""
    out = {_norm(v) for v in labels.values()}
    eqs = [int(v[5:-1]) for v in labels.values() if v.startswith("eq. (")]
    out |= {_norm(f"eq. ({k})") for k in range(1, max(eqs) + 1)}
    out |= {_norm(v.split("(")[0]) for v in labels.values() if v.startswith("Fig.")}
    # numbered environments without a label (App. K's Hoeffding is Theorem 6, between the
    # labelled Theorems 5 and 7): every number up to the largest labelled one exists
    for kind in ("Theorem", "Lemma", "Corollary", "Proposition", "Remark"):
        nums = [int(v.split()[1]) for v in labels.values()
                if v.startswith(kind + " ") and v.split()[1].isdigit()]
        out |= {_norm(f"{kind} {k}") for k in range(1, max(nums, default=0) + 1)}
    return out


def check_references(text: str, labels: dict[str, str], where: str) -> list[str]:
    """Problems with the paper references in ``text``.

    * a reference followed by its label, "eq. (7) [`eqn:total_s_pq`]", must print the
      label's number (here eq. (13));
    * a label must exist (any label-like inline code, "`eqn:...`", is looked up);
    * a bare reference ("Table 6", "eq. (130)", "Appendix J") must be something the paper
      prints.

    A line that cites another paper's numbering says so ("their Sec. 4, eq. (12)", "Zhang
    et al. (Sec. 3.1)"); lines with "their" or "et al." are skipped. A label of another kind
    than the reference is a pointer ("Theorem 3(a) [`app:thm:converse`]": its proof is in
    Appendix I) and is only checked to exist.
    """
    known = printed_references(labels)
    problems = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if re.search(r"\btheir\b|\bet al\.", line):
            continue
        for m in REFERENCE.finditer(line):
            kind = _WORD[m["kind"]]
            number = m["number"]
            if kind == "Appendix" and not re.fullmatch(r"[A-Z](?:\.\d+)?", number):
                continue
            if kind != "Appendix" and re.fullmatch(r"[A-Z](?:\.\d+)?", number):
                continue  # "Table A" etc. is not this paper's style: not a reference
            if kind == "eq." and not number.startswith("("):
                continue  # "equation 3" in prose about something else
            said = f"{kind} {number}"
            if kind == "Theorem":  # "Theorem 3(b)": the part is prose, not a number
                said = re.sub(r"\(?[a-z]\)?$", "", said)
            if m["label"]:
                label = m["label"].strip()
                if label in UNNUMBERED:
                    problems.append(f"{where}:{lineno}: {said!r} next to `{label}`, which "
                                    f"has no number ({UNNUMBERED[label]})")
                elif label not in labels:
                    problems.append(f"{where}:{lineno}: unknown paper label {label!r}")
                elif labels[label].split(" ")[0] != kind:
                    pass
                elif _norm(said) != _norm(labels[label]) and _norm(said) != _norm(
                        labels[label].replace("(", "").replace(")", "")):
                    problems.append(f"{where}:{lineno}: {said!r} next to `{label}`, which the "
                                    f"paper prints as {labels[label]!r}")
            elif _norm(said) not in known:
                problems.append(f"{where}:{lineno}: {said!r} is not a number the paper prints")
        for m in _LABEL_CODE.finditer(line):
            if m[1] not in labels and m[1] not in UNNUMBERED and not any(
                    m[1] in p for p in problems[-3:]):
                problems.append(f"{where}:{lineno}: unknown paper label {m[1]!r}")
    return problems


_STOP = set("""a an and are as at be by for from in is it its of on or s see so the their
this to with which paper paper's printed proof eq eqs eqn equation fig table appendix sec
algorithm theorem lemma corollary proposition icml 2023 jeong chung""".split())


def inconsistent_references(texts: dict[str, str], words: int = 3) -> list[str]:
    """Equation references that follow the same ``words`` content words (case,
    punctuation, numbers, inline math and the words of ``_STOP`` ignored) but carry different numbers, across all ``texts`` ({where: text}): the same
    phrase cannot cite two equations. This is how a stale number next to a current one is
    found ("q needs more samples, eq. (7)" in one file, "... eq. (13)" in another)."""
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for where, text in texts.items():
        for lineno, line in enumerate(text.splitlines(), 1):
            if re.search(r"\btheir\b|\bet al\.", line):
                continue
            for m in REFERENCE.finditer(line):
                if _WORD[m["kind"]] != "eq.":
                    continue
                # the phrase is in the clause the reference ends: cut at a table cell or
                # ';' ("changed tie rule | eq. (3) ..." is not a phrase), and other
                # references and [labels] before it are not words of the phrase
                clause = re.split(r"[|;]", line[:m.start()])[-1]
                clause = REFERENCE.sub(" ", re.sub(r"\[[^\]]*\]", " ", clause))
                prefix = re.sub(r":math:`[^`]*`|\$[^$]*\$|\\[A-Za-z]+", " ", clause)
                before = [w for w in re.findall(r"[a-z0-9]+", prefix.lower())
                          if w not in _STOP and not w.isdigit() and len(w) > 1][-words:]
                if len(before) < words:
                    continue
                key = ("eq.", " ".join(before))
                seen.setdefault(key, {}).setdefault(_norm(m["number"]), f"{where}:{lineno}")
    # several numbers after one phrase on one line ("eqs. (5) and (6)") are a list
    return [f"{kind} after '{phrase}': " + ", ".join(f"{n} at {w}" for n, w in sorted(d.items()))
            for (kind, phrase), d in sorted(seen.items())
            if len(d) > 1 and len(set(d.values())) > 1]


if __name__ == "__main__":  # regenerate the committed copy: python docs/paper_labels.py
    labels = parse(PAPER.read_text(encoding="utf-8"))
    JSON.write_text(json.dumps(labels, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {len(labels)} labels to {JSON}")
