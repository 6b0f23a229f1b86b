"""The package data is what the installed package reads: every stored run under
``toptwo/experiments/results/`` is read by a lesson (``toptwo.paper.load("name")`` or
``results_dir() / "name.json"`` in a notebook), and the runs nothing installed reads
live in ``benchmarks/results/``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from toptwo.experiments import paper

ROOT = Path(__file__).resolve().parent.parent


def _read_by_lessons() -> set[str]:
    names = set()
    for nb in (ROOT / "notebooks").rglob("*.ipynb"):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        src = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        names |= set(re.findall(r'\.load\(["\'](\w+)["\']\)', src))
        names |= set(re.findall(r'results_dir\(\) / ["\'](\w+)\.json', src))
    return names


def test_shipped_runs_are_the_ones_the_lessons_read():
    shipped = {p.stem for p in (ROOT / "toptwo/experiments/results").glob("*.json")}
    assert shipped == _read_by_lessons(), (
        f"shipped but read by no lesson: {sorted(shipped - _read_by_lessons())}; "
        f"read but not shipped: {sorted(_read_by_lessons() - shipped)}")


def test_benchmark_runs_stay_in_the_repository_and_load():
    kept = {p.stem for p in (ROOT / "benchmarks/results").glob("*.json")}
    assert paper.BENCHMARK_RESULTS <= kept
    assert not paper.BENCHMARK_RESULTS & _read_by_lessons()
    for name in paper.BENCHMARK_RESULTS:
        assert len(paper.load(name)) > 0
