"""The reproduction index (docs/reproduction.md): a row for every figure and table of the
paper, generated from the stored results and the notebooks' stored outputs."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs"))
import paper_labels  # noqa: E402
import reproduction_index as ri  # noqa: E402


def test_every_figure_and_table_of_the_paper_has_a_row():
    labels, _ = paper_labels.load()
    floats = ri.floats(labels)
    assert sum(v.startswith("Fig.") for v in floats.values()) == 8
    assert sum(v.startswith("Table") for v in floats.values()) == 5
    assert ri.missing_rows(labels, ri.rows()) == []


def test_a_missing_row_is_reported():
    labels, _ = paper_labels.load()
    table = [r for r in ri.rows() if r.label != "tab:corrupt_CIFAR10"]
    assert ri.missing_rows(labels, table) == ["Table 5 (`tab:corrupt_CIFAR10`)"]


def test_the_committed_pages_are_the_generated_ones():
    page, summary = ri.generate()
    assert ri.PAGE.read_text(encoding="utf-8") == page, \
        "docs/reproduction.md is stale: run python docs/reproduction_index.py"
    assert ri.SUMMARY.read_text(encoding="utf-8") == summary, \
        "docs/_generated/reproduction_summary.md is stale: run python docs/reproduction_index.py"
    for v in ri.VERDICTS[:3]:
        assert f"**{v}**" in page


def test_quotes_and_sections_must_exist():
    with pytest.raises(LookupError, match="no stored output line"):
        ri.quote("08_real_data.ipynb", "a line no notebook prints")
    with pytest.raises(LookupError, match="no heading containing"):
        ri.section("08_real_data.ipynb", "No such section")
    with pytest.raises(AssertionError, match="no longer holds"):
        ri.require(False, "a verdict's condition")
