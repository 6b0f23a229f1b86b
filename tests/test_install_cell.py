"""The lessons' first cell and launch badges (notebooks/install_cell.py).

The project's public address is one setting (``[project.urls] Repository``); until it is
set, a lesson's first cell only checks that toptwo is installed and says how, and no
notebook carries a badge (tests/test_public_address.py: no placeholder anywhere).
"""

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

WITH_CELLS = sorted(ROOT.glob("notebooks/[0-9][0-9]*_*.ipynb"))
REPO = install_cell.repository()


def test_the_lessons_carry_the_cells():
    assert WITH_CELLS
    for path in WITH_CELLS:
        nb = nbformat.read(path, as_version=4)
        assert install_cell.has_cells(nb, REPO), \
            f"{path.name}: run python notebooks/install_cell.py {path.relative_to(ROOT)}"
        assert "remove-cell" in nb.cells[0].metadata["tags"]       # hidden in the book
        if REPO:
            rel = path.relative_to(ROOT).as_posix()
            assert f"blob/main/{rel}" in nb.cells[1].source and f"labpath={rel}" in nb.cells[1].source
        else:
            assert all("colab" not in c.source and "mybinder" not in c.source for c in nb.cells)
        counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
        assert counts == list(range(1, len(counts) + 1)), path.name


def test_apply_is_idempotent_and_renumbers():
    nb = nbformat.read(WITH_CELLS[0], as_version=4)
    for repo in ("o/r", None):
        again = install_cell.apply(copy.deepcopy(nb), "notebooks/x.ipynb", repo)
        twice = install_cell.apply(copy.deepcopy(again), "notebooks/x.ipynb", repo)
        assert nbformat.writes(again) == nbformat.writes(twice)
        assert install_cell.has_cells(again, repo) and not install_cell.has_cells(
            again, None if repo else "o/r")
    fresh = nbformat.v4.new_notebook()
    fresh.cells = [nbformat.v4.new_markdown_cell("# T"), nbformat.v4.new_code_cell("1")]
    fresh.cells[1].execution_count = 1
    out = install_cell.apply(fresh, "notebooks/t.ipynb", "o/r")
    assert [c.cell_type for c in out.cells] == ["code", "markdown", "markdown", "code"]
    assert [c.execution_count for c in out.cells if c.cell_type == "code"] == [1, 2]
    # without an address: the badges go, the code cell keeps its place and count
    local = install_cell.apply(copy.deepcopy(out), "notebooks/t.ipynb", None)
    assert [c.cell_type for c in local.cells] == ["code", "markdown", "code"]
    assert [c.execution_count for c in local.cells if c.cell_type == "code"] == [1, 2]
    assert "colab" not in nbformat.writes(local) and "mybinder" not in nbformat.writes(local)
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


def test_the_local_cell_is_silent_with_toptwo_and_says_how_to_install_without(monkeypatch):
    source = install_cell.local_source()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "first", "exec"), {})
    assert out.getvalue() == ""
    monkeypatch.setitem(sys.modules, "toptwo", None)          # import toptwo fails
    with pytest.raises(ImportError) as err:
        exec(compile(source, "first", "exec"), {})
    assert 'pip install -e ".[notebooks]"' in str(err.value)
    version = install_cell.version()
    assert f'pip install "dist/toptwo-{version}-py3-none-any.whl[notebooks]"' in str(err.value)


def test_the_address_setting(tmp_path):
    def pyproject(urls: str) -> Path:
        p = tmp_path / "pyproject.toml"
        p.write_text(f'[project]\nname = "toptwo"\nversion = "0"\n\n[project.urls]\n{urls}\n')
        return p
    assert install_cell.repository(pyproject("")) is None
    assert install_cell.repository(pyproject('Repository = "https://github.com/o/r"')) == "o/r"
    for bad in ("https://github.com/toptwo-project/toptwo", "https://gitlab.com/o/r", "o/r"):
        with pytest.raises(SystemExit):
            install_cell.repository(pyproject(f'Repository = "{bad}"'))


def test_check_mode_reports_missing_cells(tmp_path, capsys):
    bare = tmp_path / "bare.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), bare)
    assert install_cell.main(["--check", str(bare)]) == 1
    assert "bare.ipynb" in capsys.readouterr().err
    assert install_cell.main(["--check", *map(str, WITH_CELLS)]) == 0
