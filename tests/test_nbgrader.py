"""The exercises in a real nbgrader course: generate_assignment, then autograde a correct
and a typically wrong submission of every exercise and compare the scores.

Runs nbgrader's own command line (``python -m nbgrader``) in a temporary course
directory and reads the scores from its gradebook. Skipped when nbgrader is not installed
(``pip install -e ".[test,teaching]"``). About a minute on one core: every submitted
notebook is executed by autograde, ex06's real simulation included.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

nbgrader_api = pytest.importorskip("nbgrader.api")
nbformat = pytest.importorskip("nbformat")

EXERCISES = Path(__file__).resolve().parents[1] / "notebooks" / "exercises"
ASSIGNMENT = "exercises"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"

#: One typical wrong answer per exercise: (piece of the solution cell, new solution code).
WRONG = {
    "ex01_sampling": (
        "def answer_distribution",
        "    mu = np.full(K, (1.0 - p) / K)\n    mu[g - 1] += p * (1 - q)\n"
        "    mu[h - 1] += p * q\n    return mu"),
    "ex02_proposition1": (
        "def expected_binary_by_hand",
        "    prob_1 = s * (p * (1 - q) + (1 - p) * (1 / 3))\n    prob_2 = s * (1 - p) * (1 / 3)\n"
        "    prob_3 = s * (p * q + (1 - p) * (1 / 3))\n"
        "    return -prob_1 + prob_2 + prob_3 if k == 1 else -prob_1 - prob_2 + prob_3"),
    "ex03_binary_rank_one": (
        "def center",
        "    return EA - s * (K - 2 * k) / (K - 2)"),
    "ex04_reliability": (
        "estimates = []",
        "estimates = []\nfor _ in range(R):\n    A_rep = model.sample(s, rng=rng)\n"
        "    A1_rep, _ = toptwo.split_entries(A_rep, s1, rng)\n"
        "    estimates.append(reliability_estimate(A1_rep.toarray(), model.top_two, "
        "s * (1 - s1), model.n_labels))\np_hat_mean = np.mean(estimates, axis=0)"),
    "ex05_plugin_mle": (
        "def plugin_mle_one_task",
        "    return tuple(toptwo.plugin_mle(toptwo.as_responses(answers[:, None], K), p,\n"
        "                                   np.array([q]))[0])"),
    "ex06_scaling": (
        "def ns_needed",
        "    for ns in NS_GRID:\n"
        "        err = np.mean([pair_error(method, alpha, ns, rng) for _ in range(REPS)])\n"
        "        if err <= TARGET:\n            return float(ns)\n    return float('nan')"),
}

#: Expected autograded scores (points earned, out of the notebook's autograded points).
#: ex05's prose answer (2 points) is graded by hand: it is not in the automatic score;
#: the correct submission needs manual grading, the untouched wrong one scores 0 there.
EXPECTED = {
    #                        correct  wrong   (why the wrong one loses points)
    "ex01_sampling": (5, 3),          # 1a: q and 1 - q swapped
    "ex02_proposition1": (5, 0),      # 2a float fraction; 2b's residual is then not 0
    "ex03_binary_rank_one": (5, 2),   # 3b: K - 2 in the shift; 3c uses center too
    "ex04_reliability": (5, 3),       # 4b: stage-1 half A^1
    "ex05_plugin_mle": (5, 2),        # 5a: calls toptwo.plugin_mle (refused; the
    #                                   comparison with the package and 5b still pass)
    "ex06_scaling": (5, 3),           # 6b: no interpolation (the exponents still pass)
}
MAX_AUTO = {"ex01_sampling": 5, "ex02_proposition1": 5, "ex03_binary_rank_one": 5,
            "ex04_reliability": 5, "ex05_plugin_mle": 5, "ex06_scaling": 5}


def _replace_solution(source: str, new_body: str) -> str:
    """Replace the lines between the solution markers (markers dropped, as a student would)."""
    lines = source.split("\n")
    begin = next(i for i, line in enumerate(lines) if line.strip() == BEGIN)
    end = next(i for i, line in enumerate(lines) if line.strip() == END)
    return "\n".join(lines[:begin] + new_body.split("\n") + lines[end + 1:])


def _submission(source_nb, name: str, wrong: bool):
    nb = nbformat.from_dict(source_nb)
    if not wrong:
        return nb
    needle, body = WRONG[name]
    cells = [c for c in nb.cells if c.cell_type == "code" and needle in c.source
             and c.metadata["nbgrader"]["solution"]]
    assert len(cells) == 1, (name, needle)
    cells[0].source = _replace_solution(cells[0].source, body)
    if name == "ex05_plugin_mle":          # prose answer left as released: scored 0
        for cell in nb.cells:
            if cell.cell_type == "markdown" and cell.metadata["nbgrader"]["solution"]:
                cell.source = "**Your answer.**\n\nYOUR ANSWER HERE"
    return nb


def _nbgrader(root: Path, *args: str) -> subprocess.CompletedProcess:
    out = subprocess.run([sys.executable, "-m", "nbgrader", *args,
                          f"--CourseDirectory.root={root}", "--CourseDirectory.course_id=toptwo"],
                         capture_output=True, text=True, timeout=900, cwd=root)
    assert out.returncode == 0, f"nbgrader {args[0]} failed:\n{out.stdout}\n{out.stderr}"
    return out


@pytest.mark.slow
def test_generate_and_autograde_every_exercise(tmp_path):
    root = tmp_path / "course"
    (root / "source" / ASSIGNMENT).mkdir(parents=True)
    for path in sorted(EXERCISES.glob("ex*.ipynb")):
        shutil.copy(path, root / "source" / ASSIGNMENT / path.name)
    _nbgrader(root, "generate_assignment", ASSIGNMENT, "--force")

    release = root / "release" / ASSIGNMENT
    for path in sorted(EXERCISES.glob("ex*.ipynb")):
        text = (release / path.name).read_text()
        assert BEGIN not in text and "BEGIN HIDDEN TESTS" not in text
        assert "raise NotImplementedError()" in text

    for student, wrong in (("correct", False), ("wrong", True)):
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        for path in sorted(EXERCISES.glob("ex*.ipynb")):
            nb = _submission(nbformat.read(path, as_version=4), path.stem, wrong)
            nbformat.write(nb, folder / path.name)
    _nbgrader(root, "autograde", ASSIGNMENT, "--force")

    scores = {}
    with nbgrader_api.Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for name in EXPECTED:
            for student in ("correct", "wrong"):
                sub = gb.find_submission_notebook(name, ASSIGNMENT, student)
                auto = sum(g.score for g in sub.grades if g.auto_score is not None)
                scores[name, student] = auto
                manual = [g for g in sub.grades if g.auto_score is None]
                if name == "ex05_plugin_mle":
                    assert sub.max_score == 7
                    assert sub.needs_manual_grade == (student == "correct")
                else:
                    assert not manual and sub.max_score == MAX_AUTO[name]
    got = {name: (scores[name, "correct"], scores[name, "wrong"]) for name in EXPECTED}
    assert got == EXPECTED
