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


# both run every check and claim mutant (~35-60 s of CPU, what `python -m theory_checks`
# proves in the README's quick start): CI's slow stage regenerates them
@pytest.mark.slow
@pytest.mark.parametrize("path, make", [("docs/theory_status.md", status_page),
                                        ("docs/_generated/theory_graph.svg", lambda root: dependency_svg())])
def test_committed_page_is_generated(path: str, make) -> None:
    fresh = make(ROOT)
    committed = (ROOT / path).read_text(encoding="utf-8")
    assert committed == fresh, (f"{path} is stale: regenerate with python -m theory_checks --status-page "
                                "docs/theory_status.md --readme-table README.md")


@pytest.mark.slow                  # runs every check (as the page above): CI's slow stage
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


@pytest.mark.slow                  # runs every check (as the page above): CI's slow stage
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


@pytest.mark.slow                  # runs every check (as the page above): CI's slow stage
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


def _bezier_points(piece, n: int = 64) -> list[tuple[float, float]]:
    """n + 1 points along a cubic Bezier piece (p0, p1, p2, p3)."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = piece
    out = []
    for k in range(n + 1):
        t = k / n
        a, b, c, d = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t * t, t ** 3
        out.append((a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3))
    return out


def _curve_hits(pieces, rects, skip) -> list[str]:
    """The boxes (other than those named in skip) that a chain of Bezier pieces passes through, sampled densely."""
    pts = [p for piece in pieces for p in _bezier_points(piece)]
    return sorted({n for n, box in rects.items() if n not in skip
                   for a, b in zip(pts, pts[1:]) if _segment_hits_box(a, b, box)})


def test_graph_edges_go_around_the_boxes() -> None:
    """No edge of the dependency graph passes through a box other than its two ends (every Bezier piece sampled
    at 65 points, the chords clipped against every box); each edge leaves the top of the used statement's box and
    enters the bottom of the user's box; the pieces join; one edge per proof dependency."""
    from theory_checks.status import graph_geometry

    rects, edges, (width, height) = graph_geometry()
    assert len(rects) == 18 and len(edges) == sum(len(st.uses) for st in STATEMENTS)
    for u, v, pieces in edges:
        start, end = pieces[0][0], pieces[-1][-1]
        assert start[1] == rects[u][1] and rects[u][0] < start[0] < rects[u][2], (u, v)
        assert end[1] == rects[v][3] and rects[v][0] < end[0] < rects[v][2], (u, v)
        assert all(p[-1] == q[0] for p, q in zip(pieces, pieces[1:])), (u, v)
        for piece in pieces:
            assert all(0 <= x <= width and 0 <= y <= height for x, y in piece), (u, v)
        hit = _curve_hits(pieces, rects, (u, v))
        assert not hit, f"the edge {u} -> {v} passes through {hit}"
    # the twin: drawn as one S-curve from port to port (no dummy nodes), a long edge passes through a box
    twins = [(u, v) for u, v, pieces in edges if len(pieces) > 1 and _curve_hits(
        [(pieces[0][0], (pieces[0][0][0], (pieces[0][0][1] + pieces[-1][-1][1]) / 2),
          (pieces[-1][-1][0], (pieces[0][0][1] + pieces[-1][-1][1]) / 2), pieces[-1][-1])], rects, (u, v))]
    assert twins


def test_graph_order_removes_crossings() -> None:
    """The crossing minimisation never does worse than the initial order (statements by name): 11 crossings
    become 2 (:func:`crossings`), and no swap of two neighbours in a row lowers that further (the twin: some swap
    raises it, so the count sees a swap); the drawn curves cross exactly as often (counted on the sampled
    curves: the ports add no crossing)."""
    from theory_checks.status import _graph, _ordered, crossings, graph_geometry

    rows, below, above, _ = _graph()
    initial = crossings(rows, above)
    best = _ordered(rows, below, above)
    final = crossings(best, above)
    assert final <= initial and (initial, final) == (11, 2)
    swaps = []
    for r, names in best.items():
        for i in range(len(names) - 1):
            order = {k: list(ns) for k, ns in best.items()}
            order[r][i], order[r][i + 1] = order[r][i + 1], order[r][i]
            swaps.append(crossings(order, above))
    assert min(swaps) >= final and max(swaps) > final

    def proper(p, q, r, s) -> bool:
        def o(a, b, c):
            return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
        return o(r, s, p) * o(r, s, q) < 0 and o(p, q, r) * o(p, q, s) < 0

    _, edges, _ = graph_geometry()
    curves = [[p for piece in pieces for p in _bezier_points(piece, 24)] for *_, pieces in edges]
    drawn = sum(proper(a, b, c, d) for i, e in enumerate(curves) for f in curves[i + 1:]
                for a, b in zip(e, e[1:]) for c, d in zip(f, f[1:]))
    assert drawn == final


def test_graph_layout_is_deterministic(monkeypatch) -> None:
    """The drawing depends on the statements and their uses only, not on the order they are listed in."""
    from theory_checks import status

    first = status.graph_geometry()
    assert status.graph_geometry() == first
    monkeypatch.setattr(status, "STATEMENTS", tuple(reversed(STATEMENTS)))
    assert status.graph_geometry() == first
