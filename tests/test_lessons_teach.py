"""Every lesson is a page a student finishes in one sitting (docs/lessons_checked.md).

Without executing anything: at most 16,000 characters of source (markdown + code, outputs
excluded); "You will learn" at the top, a "Try this" cell, a "Summary" and 2-4 "Self-check
exercises" whose solutions are code cells tagged ``hide-input`` starting with
``# Solution to exercise N`` and ending in a ``claim``; no body text (markdown, or code the
book shows) names tests/, benchmarks/, an issue number, SET_FOR, OPENBLAS_*/OMP_NUM_THREADS
or a paper label in backticks (cells tagged ``remove-cell`` may hold a thread setting).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
MAX_CHARS = 16_000
#: Lessons not yet meeting every rule; each is checked once removed from here.
NOT_YET: set[str] = set()
FORBIDDEN = re.compile(r"tests/|benchmarks/|\bissue \d+|\bSET_FOR\b|OPENBLAS_|OMP_NUM_THREADS"
                       r"|`(?:eqn?|fig|tab|subsec|sec|alg|thm|lem|prop|cor|app|def|rem):[^`]*`")


def _cells(nb: Path) -> list[dict]:
    return json.loads(nb.read_text(encoding="utf-8"))["cells"]


def _src(c: dict) -> str:
    return "".join(c["source"])


def _tags(c: dict) -> list[str]:
    return c.get("metadata", {}).get("tags", [])


def _ends_in_claim(src: str) -> bool:
    """The cell's last statement is a call of ``claim`` (a claim may span several lines)."""
    body = ast.parse("\n".join(l for l in src.splitlines()
                               if not l.lstrip().startswith(("%", "!")))).body
    last = body[-1] if body else None
    return (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
            and getattr(last.value.func, "id", getattr(last.value.func, "attr", "")) == "claim")


def lesson_problems(nb: Path) -> list[str]:
    cells = _cells(nb)
    problems = []
    size = sum(len(_src(c)) for c in cells)
    if size > MAX_CHARS:
        problems.append(f"{size} characters of source (at most {MAX_CHARS})")
    md = [_src(c) for c in cells if c["cell_type"] == "markdown"]
    heads = [re.findall(r"^##\s+(.+?)\s*$", m, re.M) for m in md]
    flat = [h for hs in heads for h in hs]
    first = next((i for i, hs in enumerate(heads) if hs), None)
    if not flat or flat[0] != "You will learn" or first != 0:
        problems.append('no "## You will learn" in the first markdown cell')
    for want in ("Try this", "Summary", "Self-check exercises"):
        if want not in flat:
            problems.append(f'no "## {want}"')
    solutions = [c for c in cells if c["cell_type"] == "code"
                 and re.match(r"#\s*Solution to exercise\s+\d+", _src(c))]
    if not 2 <= len(solutions) <= 4:
        problems.append(f"{len(solutions)} self-check solutions (2-4)")
    for c in solutions:
        if "hide-input" not in _tags(c):
            problems.append(f"solution not collapsed (tag hide-input): {_src(c)[:30]!r}")
        if "claim(" not in _src(c):
            problems.append(f"solution without a claim: {_src(c)[:30]!r}")
        elif not _ends_in_claim(_src(c)):
            problems.append(f"solution does not end in a claim: {_src(c)[:30]!r}")
    numbers = [int(re.match(r"#\s*Solution to exercise\s+(\d+)", _src(c))[1]) for c in solutions]
    if numbers != list(range(1, len(numbers) + 1)):
        problems.append(f"solutions numbered {numbers}")
    for i, c in enumerate(cells):
        if "remove-cell" in _tags(c):
            continue
        for m in FORBIDDEN.finditer(_src(c)):
            problems.append(f"cell {i} names {m[0]!r}")
    return problems


def test_the_rule_checker_finds_what_a_lesson_lacks(tmp_path):
    bad = tmp_path / "99_bad.ipynb"
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "# T\n\nSee `eqn:A_dist`."},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": "# Solution to exercise 1\nx = 1  # tests/test_x.py\nclaim(x, '==', 1)"},
             {"cell_type": "code", "metadata": {"tags": ["remove-cell"]}, "outputs": [],
              "execution_count": None, "source": "import os\nos.environ['OMP_NUM_THREADS'] = '1'"},
             {"cell_type": "markdown", "metadata": {}, "source": "x" * MAX_CHARS}]
    bad.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    found = " | ".join(lesson_problems(bad))
    for what in ("characters of source", "You will learn", "## Try this", "## Summary",
                 "1 self-check solutions", "not collapsed", "'tests/'", "`eqn:A_dist`"):
        assert what in found, what
    assert "OMP_NUM_THREADS" not in found                    # a remove-cell setup cell may


@pytest.mark.parametrize("nb", [nb for nb in LESSONS
                                if not any(nb.stem.startswith(k) for k in NOT_YET)],
                         ids=lambda p: p.stem)
def test_lesson_teaches_in_one_sitting(nb):
    assert lesson_problems(nb) == []


def test_a_solution_must_end_in_its_claim():
    assert _ends_in_claim("x = 1\nclaim(x, '==', 1,\n      why='one')")
    assert not _ends_in_claim("claim(1, '==', 1)\nprint('done')")
    assert not _ends_in_claim("x = 1  # claim(x) in a comment")
