"""The Colab install cell and launch badges of the lessons (notebooks/install_cell.py)."""

from __future__ import annotations

import contextlib
import copy
import io
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "notebooks"))
import install_cell  # noqa: E402

#: Lessons that carry the cells (the lead applies the script to the others at merge:
#: then this becomes every ``notebooks/[0-9][0-9]*_*.ipynb``).
WITH_CELLS = sorted(ROOT.glob("notebooks/[0-9][0-9]*_*.ipynb"))


def test_the_lessons_carry_the_cells():
    assert WITH_CELLS
    for path in WITH_CELLS:
        nb = nbformat.read(path, as_version=4)
        assert install_cell.has_cells(nb), path.name
        assert "remove-cell" in nb.cells[0].metadata["tags"]       # hidden in the book
        rel = path.relative_to(ROOT).as_posix()
        assert f"blob/main/{rel}" in nb.cells[1].source and f"labpath={rel}" in nb.cells[1].source
        counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
        assert counts == list(range(1, len(counts) + 1)), path.name


def test_apply_is_idempotent_and_renumbers():
    nb = nbformat.read(WITH_CELLS[0], as_version=4)
    again = install_cell.apply(copy.deepcopy(nb), "notebooks/x.ipynb", "o/r")
    twice = install_cell.apply(copy.deepcopy(again), "notebooks/x.ipynb", "o/r")
    assert nbformat.writes(again) == nbformat.writes(twice)
    fresh = nbformat.v4.new_notebook()
    fresh.cells = [nbformat.v4.new_markdown_cell("# T"), nbformat.v4.new_code_cell("1")]
    fresh.cells[1].execution_count = 1
    out = install_cell.apply(fresh, "notebooks/t.ipynb", "o/r")
    assert [c.cell_type for c in out.cells] == ["code", "markdown", "markdown", "code"]
    assert [c.execution_count for c in out.cells if c.cell_type == "code"] == [1, 2]
    assert not install_cell.has_cells(nbformat.v4.new_notebook())


def test_the_install_cell_does_nothing_outside_colab(monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a))
    source = install_cell.install_source("o/r")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "install", "exec"), {})
    assert calls == [] and out.getvalue() == ""
    monkeypatch.setitem(sys.modules, "google.colab", type(sys)("google.colab"))
    exec(compile(source, "install", "exec"), {})             # on Colab: pip installs
    assert calls and calls[0][0][1:4] == ["-m", "pip", "install"]
    assert "toptwo @ git+https://github.com/o/r" in calls[0][0]


def test_check_mode_reports_missing_cells(tmp_path, capsys):
    bare = tmp_path / "bare.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), bare)
    assert install_cell.main(["--check", str(bare)]) == 1
    assert "bare.ipynb" in capsys.readouterr().err
    assert install_cell.main(["--check", *map(str, WITH_CELLS)]) == 0
