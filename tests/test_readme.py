"""The README is a contract: its Python examples run, and CI runs its quick-start commands."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
#: The README's former library section, now a book page: its examples stay tested here.
LIBRARY = (ROOT / "docs" / "library.md").read_text()
CI = (ROOT / ".ci" / "run").read_text()


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def quick_start_commands(readme: str) -> list[str]:
    """The shell commands of the README's first bash block under '## Quick start'."""
    section = readme.split("## Quick start", 1)[1]
    block = _blocks(section, "bash")[0]
    return [c.strip() for line in block.strip().splitlines() for c in line.split("&&")]


def missing_from_ci(readme: str, ci: str) -> list[str]:
    """Quick-start commands (after creating/activating the venv) that .ci/run does not run."""
    ci_lines = {line.strip() for line in ci.splitlines()}
    cmds = [c for c in quick_start_commands(readme)
            if not c.startswith(("python3 -m venv", ". "))]
    return [c for c in cmds if c not in ci_lines]


def test_python_examples_run(monkeypatch):
    pytest.importorskip("pandas")
    monkeypatch.chdir(ROOT)                         # the examples read examples/tiny.csv
    blocks = _blocks(README, "python")
    assert blocks, "README has no python example"
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})


def test_library_page_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    blocks = _blocks(LIBRARY, "python")
    assert blocks, "docs/library.md has no python example"
    for code in blocks:
        exec(compile(code, "docs/library.md", "exec"), {})


def test_ci_runs_the_quick_start_commands():
    cmds = quick_start_commands(README)
    assert 'pip install -e ".[test]"' in cmds and 'python -m pytest -m "not slow"' in cmds
    assert missing_from_ci(README, CI) == []
    # the README says CI runs them (on both cores there: `-n 2`)
    assert any(ln.startswith("python -m pytest -m slow") for ln in CI.splitlines())


def test_missing_command_is_detected():
    broken = README.replace("python -m pytest", "python -m pytest -x --lf", 1)
    assert missing_from_ci(broken, CI) == ['python -m pytest -x --lf -m "not slow"']


def test_readme_is_a_front_page():
    lines = README.splitlines()
    # about 150 lines of text; the two tables (lessons, the generated theory table) on top
    text = [ln for ln in lines if not ln.startswith("|")]
    assert len(text) <= 160 and len(lines) <= 200, (len(text), len(lines))
    generated = README[README.index("<!-- theory-table"):README.index("<!-- /theory-table -->")]
    prose = [ln for ln in lines if not ln.startswith(("|", "[![", "![", "http"))
             and ln not in generated.splitlines()]
    assert max(map(len, prose)) <= 100, max(prose, key=len)


def test_readme_links_exist():
    for target in re.findall(r"\]\(((?!https?:)[^)#]+)\)", README):
        assert (ROOT / target).exists(), target


def test_readme_figure_is_the_lessons_figure():
    import importlib.util

    spec = importlib.util.spec_from_file_location("readme_figure",
                                                  ROOT / "docs" / "readme_figure.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert (ROOT / "docs" / "images" / "sample_complexity.png").read_bytes() == \
        mod.figure_bytes(), "run python docs/readme_figure.py"


def test_readme_badges_point_at_the_repository():
    # badges only with a public address ([project.urls] Repository; tests/test_public_address.py)
    m = re.search(r'^Repository = "https://github.com/([^"]+)"',
                  (ROOT / "pyproject.toml").read_text(), re.M)
    urls = re.findall(r"https://(?:colab\.research\.google\.com/github|mybinder\.org/v2/gh)"
                      r"/([^/]+/[^/]+)/", README)
    assert set(urls) == ({m.group(1)} if m else set())
    for nb in re.findall(r"\]\((notebooks/[^)]+\.ipynb)\)", README):
        assert (ROOT / nb).exists(), nb


def _cli_block(readme: str) -> tuple[str, list[str]]:
    section = readme.split("## The command line", 1)[1].split("\n## ", 1)[0]
    command = _blocks(section, "bash")[0].strip()
    shown = [b for b in section.split("```")[1::2] if b.startswith("\n")][0]
    return command, [line.rstrip() for line in shown.strip().splitlines()]


def test_readme_cli_example_prints_what_it_shows():
    command, shown = _cli_block(README)
    args = shlex.split(command)
    assert args[:3] == ["python", "-m", "toptwo"]
    out = subprocess.run([sys.executable, *args[1:]], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.splitlines()
    assert shown and out[:len(shown)] == shown, (shown, out)


def _readme_demo_table(readme: str) -> list[str]:
    section = readme.split("## Quick start", 1)[1].split("## ", 1)[0]
    blocks = section.split("```")[1::2]                  # fenced blocks, in order
    plain = [b for b in blocks if b.startswith("\n")]    # the one without a language
    return [line.rstrip() for line in plain[0].strip().splitlines()]


def test_readme_shows_the_demo_output(capsys):
    from toptwo.__main__ import main

    assert main(["demo"]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    table = _readme_demo_table(README)
    assert table and all(line in printed for line in table), (table, printed)
    # negative twin: a table with one changed figure is not found in the output
    wrong = [table[0], table[1].replace("0.6", "0.7", 1)]
    assert not all(line in printed for line in wrong)


def test_readme_error_example_is_the_real_message():
    import numpy as np
    import pytest

    import toptwo

    line = [ln for ln in LIBRARY.splitlines() if ln.startswith("ValueError: `A` passed to")][0]
    A = np.ones((5, 20), int)
    A[3, 12] = -1
    with pytest.raises(ValueError) as info:
        toptwo.TopTwo2().fit(A)
    assert line == f"ValueError: {info.value}"
    A[3, 12] = -2                                   # negative twin: another value differs
    with pytest.raises(ValueError) as info2:
        toptwo.TopTwo2().fit(A)
    assert line != f"ValueError: {info2.value}"


def test_cli_example_output_is_what_the_command_prints(monkeypatch, capsys):
    """The README's `python -m toptwo infer examples/tiny.csv` output block: its header
    and rows are the first lines the command prints (issue 42's p_g, p_pair columns)."""
    from toptwo.__main__ import main

    section = README.split("## The command line", 1)[1]
    assert "python -m toptwo infer examples/tiny.csv" in _blocks(section, "bash")[0]
    shown = re.findall(r"```\n(task,.*?)```", section, flags=re.S)[0].strip().splitlines()
    assert shown[0] == "task,g,h,confusion,p_g,p_pair"
    monkeypatch.chdir(ROOT)
    assert main(["infer", "examples/tiny.csv"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[:len(shown)] == shown
