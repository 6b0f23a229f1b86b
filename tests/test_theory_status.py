"""The theory status page and the README's theory table are generated from the checks: the
committed files must equal a fresh generation (so they cannot go stale)."""

from __future__ import annotations

from pathlib import Path

import pytest

from theory_checks import CHECKS
from theory_checks.status import STATEMENTS, dependency_svg, readme_table, status_page

ROOT = Path(__file__).resolve().parent.parent


def test_every_statement_check_is_registered_and_can_fail() -> None:
    from theory_checks.checks_code import CODE_CHECKS
    from theory_checks.mutants import MUTANTS

    assert len(STATEMENTS) == 18
    for st in STATEMENTS:
        assert (st.checks or st.untestable) and set(st.checks) <= set(CHECKS), st.number
        # every check can fail: it has claim mutants, or (code checks) source mutants and a pytest twin
        assert all(c in MUTANTS or c in CODE_CHECKS for c in st.checks), st.number


@pytest.mark.parametrize("path, make", [("docs/theory_status.md", status_page),
                                        ("docs/_generated/theory_graph.svg", lambda root: dependency_svg())])
def test_committed_page_is_generated(path: str, make) -> None:
    fresh = make(ROOT)
    committed = (ROOT / path).read_text(encoding="utf-8")
    assert committed == fresh, (f"{path} is stale: regenerate with python -m theory_checks --status-page "
                                "docs/theory_status.md --readme-table README.md")


def test_every_label_is_earned_by_a_passing_check() -> None:
    """A statement's status is the strongest level among its passing checks; untouched ones say why."""
    from theory_checks.status import LEVELS, check_record, statement_status

    for st in STATEMENTS:
        level, earned = statement_status(st)
        if level == "untouched":
            assert st.untestable, st.number
            continue
        assert earned and all(st.checks[c] == level for c in earned), st.number
        stronger = [c for c, lv in st.checks.items() if LEVELS.index(lv) < LEVELS.index(level)]
        assert all(not hasattr(check_record(c), "name") for c in stronger), st.number


def test_a_failing_check_lowers_the_label(monkeypatch) -> None:
    from theory_checks import status

    st = next(s for s in STATEMENTS if s.number == "Theorem 5")
    assert status.statement_status(st)[0] == "instances"
    monkeypatch.setattr(status, "check_record", lambda name: "FAILED: twin")
    assert status.statement_status(st) == ("untouched", [])


def test_status_cli_writes_both(tmp_path, capsys) -> None:
    from theory_checks.__main__ import main

    page, table = tmp_path / "s.md", tmp_path / "t.md"
    assert main(["--status-page", str(page), "--readme-table", str(table)]) == 0
    assert page.read_text(encoding="utf-8") == status_page(ROOT)
    assert (tmp_path / "_generated" / "theory_graph.svg").read_text(encoding="utf-8") == dependency_svg()
    assert "| Lemma 1 |" in table.read_text(encoding="utf-8")
    readme = tmp_path / "README.md"       # a file with the markers gets the table between them
    readme.write_text("intro\n<!-- theory-table: x -->\nSTALE ROW\n<!-- /theory-table -->\nend\n", encoding="utf-8")
    assert main(["--readme-table", str(readme)]) == 0
    text = readme.read_text(encoding="utf-8")
    assert "STALE ROW" not in text and "| Lemma 1 |" in text and text.endswith("<!-- /theory-table -->\nend\n")


def test_source_mutants_are_found_once_and_survivors_have_reasons() -> None:
    import json

    from theory_checks.mutate import FAST_SUBSET, SOURCE_MUTANTS, find_snippet
    from theory_checks.status import SOURCE_MUTANTS_JSON

    kinds = {m.kind for m in SOURCE_MUTANTS}
    assert len(SOURCE_MUTANTS) >= 30 and len(kinds) >= 10
    for m in SOURCE_MUTANTS:       # the snippets follow the source (a restructure must keep them unique)
        assert len(find_snippet(ROOT, m.old)) == 1, m.name
    assert set(FAST_SUBSET) <= {m.name for m in SOURCE_MUTANTS}
    stored = json.loads((ROOT / SOURCE_MUTANTS_JSON).read_text(encoding="utf-8"))
    assert {r["name"] for r in stored["rows"]} == {m.name for m in SOURCE_MUTANTS}
    for r in stored["rows"]:
        assert r["killed_by"] or r["reason"], f"{r['name']} survived without a written reason"


def test_mutate_applies_and_restores(tmp_path) -> None:
    import shutil

    from theory_checks.mutate import SOURCE_MUTANTS, apply_mutant, format_table, main

    shutil.copytree(ROOT / "toptwo", tmp_path / "toptwo")
    mt = SOURCE_MUTANTS[0]
    path, text = apply_mutant(tmp_path, mt)
    assert mt.new in path.read_text(encoding="utf-8") and mt.old not in path.read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    row = {"name": "x", "kind": "k", "paper": "eq. (1)", "layers": {"symbolic": {"killed": True}}, "killed_by": "symbolic",
           "reason": ""}
    assert "killed by symbolic" in format_table([row], ["symbolic"])
    assert main(["--list"]) == 0
    with pytest.raises(SystemExit):
        main(["--only", "no such mutant"])


def test_readme_shows_the_generated_table() -> None:
    """The README's theory table is the generated one, verbatim (it cannot go stale)."""
    root = Path(__file__).resolve().parent.parent
    table = readme_table(root)
    body = "\n".join(l for l in table.strip().splitlines() if not l.startswith("<!--"))
    readme = (root / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- theory-table")
    start = readme.index("\n", start) + 1
    end = readme.index("<!-- /theory-table -->")
    assert readme[start:end].strip() == body.strip(), (
        "README's theory table is stale: regenerate with python -m theory_checks --readme-table README.md")


def _segment_hits_box(a: tuple[float, float], b: tuple[float, float], box: tuple[float, float, float, float]) -> bool:
    """Does the closed segment a-b meet the closed rectangle box (Liang-Barsky clipping)?"""
    (x0, y0, x1, y1), t0, t1 = box, 0.0, 1.0
    dx, dy = b[0] - a[0], b[1] - a[1]
    for p, q in ((-dx, a[0] - x0), (dx, x1 - a[0]), (-dy, a[1] - y0), (dy, y1 - a[1])):
        if p == 0:
            if q < 0:
                return False
        elif p < 0:
            t0 = max(t0, q / p)
        else:
            t1 = min(t1, q / p)
    return t0 <= t1


def test_graph_edges_go_around_the_boxes() -> None:
    """No edge of the dependency graph passes through a box other than its two ends; each edge leaves the top of
    the used statement's box and enters the bottom of the user's box; one edge per proof dependency."""
    from theory_checks.status import graph_geometry

    rects, edges, (width, height) = graph_geometry()
    assert len(rects) == 18 and len(edges) == sum(len(st.uses) for st in STATEMENTS)
    for u, v, pts in edges:
        assert pts[0][1] == rects[u][1] and rects[u][0] < pts[0][0] < rects[u][2], (u, v)
        assert pts[-1][1] == rects[v][3] and rects[v][0] < pts[-1][0] < rects[v][2], (u, v)
        for a, b in zip(pts, pts[1:]):
            assert 0 <= min(a[0], b[0]) and max(a[0], b[0]) <= width and max(a[1], b[1]) <= height
            hit = [n for n, box in rects.items() if n not in (u, v) and _segment_hits_box(a, b, box)]
            assert not hit, f"the edge {u} -> {v} passes through {hit} ({a} -> {b})"
    # the twin: the straight line from Proposition 1 to Corollary 1 (the old drawing) crosses the boxes between
    centre = {n: ((x0 + x1) / 2, (y0 + y1) / 2) for n, (x0, y0, x1, y1) in rects.items()}
    a, b = centre["Proposition 1"], centre["Corollary 1"]
    assert any(_segment_hits_box(a, b, box) for n, box in rects.items() if n not in ("Proposition 1", "Corollary 1"))
