"""The README is a contract: its Python examples run, and CI runs its quick-start commands."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
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


def test_python_examples_run():
    blocks = _blocks(README, "python")
    assert blocks, "README has no python example"
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})


def test_ci_runs_the_quick_start_commands():
    cmds = quick_start_commands(README)
    assert 'pip install -e ".[test]"' in cmds and "python -m pytest" in cmds
    assert missing_from_ci(README, CI) == []


def test_missing_command_is_detected():
    broken = README.replace("python -m pytest", "python -m pytest -x --lf", 1)
    assert missing_from_ci(broken, CI) == ["python -m pytest -x --lf"]


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

    line = [ln for ln in README.splitlines() if ln.startswith("ValueError: `A` passed to")][0]
    A = np.ones((5, 20), int)
    A[3, 12] = -1
    with pytest.raises(ValueError) as info:
        toptwo.TopTwo2().fit(A)
    assert line == f"ValueError: {info.value}"
    A[3, 12] = -2                                   # negative twin: another value differs
    with pytest.raises(ValueError) as info2:
        toptwo.TopTwo2().fit(A)
    assert line != f"ValueError: {info2.value}"
