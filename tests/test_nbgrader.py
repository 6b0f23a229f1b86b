"""The exercises in real nbgrader courses: six assignments (one per exercise), run by
nbgrader's own command line (``python -m nbgrader``) in a temporary course directory.

* ``test_course_flow`` (quick, about 12 notebooks): generate_assignment for ex01 .. ex06,
  release versions checked clean, autograde of the instructor solution and one typical
  mistake per exercise, no checksum warning, generate_feedback, and the per-part grade
  export (``toptwo.teaching.export.PartsExportPlugin``).
* ``test_mistake_corpus`` (about 70 notebooks; runs only with ``TOPTWO_EXERCISE_CORPUS=1``,
  the instructors stage of ``.ci/run``): every answer set of
  ``tests/exercise_corpus/answers.py`` is autograded; a wrong one must lose exactly the
  points of the part it breaks and its feedback must name its mistake, a correct one must
  score full marks. The table is written to ``tests/exercise_corpus/REPORT.md``.

Skipped when nbgrader is not installed (``pip install -e ".[test,teaching]"``). nbgrader
runs its database migrations with the ``alembic`` command: the subprocesses get the
interpreter's own bin folder first on PATH, so the tests pass however pytest is invoked.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

# CI's instructors stage (`-m nbgrader`, after installing the teaching extra)
pytestmark = pytest.mark.nbgrader

nbgrader_api = pytest.importorskip("nbgrader.api")
nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ROOT / "notebooks" / "exercises"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from exercise_corpus.answers import ANSWERS, Answer  # noqa: E402

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
NOTEBOOKS = {p.stem.split("_")[0]: p for p in sorted(EXERCISES.glob("ex*.ipynb"))}
REPORT = Path(__file__).resolve().parent / "exercise_corpus" / "REPORT.md"


def _env() -> dict:
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _nbgrader(root: Path, *args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "nbgrader", *args,
                          f"--CourseDirectory.root={root}", "--CourseDirectory.course_id=toptwo"],
                         capture_output=True, text=True, timeout=1800, cwd=root, env=_env())
    assert out.returncode == 0, f"nbgrader {args[0]} failed:\n{out.stdout}\n{out.stderr}"
    return out.stdout + out.stderr


def _body(source: str, new: str) -> str:
    """``source`` with its solution region replaced by ``new`` (markers dropped)."""
    lines = source.split("\n")
    begin = next(i for i, line in enumerate(lines) if line.strip() == BEGIN)
    end = next(i for i, line in enumerate(lines) if line.strip() == END)
    indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
    body = [indent + line if line else line for line in new.strip("\n").split("\n")]
    return "\n".join(lines[:begin] + body + lines[end + 1:])


def _strip_markers(source: str) -> str:
    return "\n".join(line for line in source.split("\n") if line.strip() not in (BEGIN, END))


def _submission(release_nb, source_nb, answer: Answer):
    """The release notebook with its solution cells filled in as ``answer`` says."""
    nb = nbformat.from_dict(release_nb)
    by_id = {c.metadata["nbgrader"]["grade_id"]: c for c in source_nb.cells}
    used = set()
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("solution"):
            continue
        src = by_id[meta["grade_id"]].source
        cell.source = _strip_markers(src)
        for needle, new in answer.edits.items():
            whole = needle.startswith("cell:")
            if needle.removeprefix("cell:") in src:
                cell.source = new.strip("\n") if whole else _body(src, new)
                used.add(needle)
    assert used == set(answer.edits), (answer.name, set(answer.edits) - used)
    return nb


def _course(tmp: Path, answers: list[Answer]) -> tuple[Path, dict, str]:
    """Generate every assignment, submit ``answers``, autograde; return the root, the
    per-student results and nbgrader's logs."""
    root = tmp / "course"
    root.mkdir(parents=True)
    # as instructors.md says: passed checks are re-run outside the kernel
    (root / "nbgrader_config.py").write_text(
        "from toptwo.teaching.verify import configure\nconfigure(c)\n", encoding="utf-8")
    logs = []
    assignments = sorted({a.assignment for a in answers})
    for name in assignments:
        (root / "source" / name).mkdir(parents=True)
        shutil.copy(NOTEBOOKS[name], root / "source" / name / NOTEBOOKS[name].name)
        logs.append(_nbgrader(root, "generate_assignment", name, "--force"))
    for answer in answers:
        path = NOTEBOOKS[answer.assignment]
        release = nbformat.read(root / "release" / answer.assignment / path.name, as_version=4)
        nb = _submission(release, nbformat.read(path, as_version=4), answer)
        folder = root / "submitted" / answer.name / answer.assignment
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / path.name)
    for name in assignments:
        logs.append(_nbgrader(root, "autograde", name, "--force"))
    results = {}
    with nbgrader_api.Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for answer in answers:
            path = NOTEBOOKS[answer.assignment]
            sub = gb.find_submission_notebook(path.stem, answer.assignment, answer.name)
            parts = {g.name: (g.auto_score, g.max_score) for g in sub.grades
                     if g.auto_score is not None}
            graded = nbformat.read(root / "autograded" / answer.name / answer.assignment
                                   / path.name, as_version=4)
            feedback = {}
            for cell in graded.cells:
                gid = cell.metadata.get("nbgrader", {}).get("grade_id")
                errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
                if gid in parts and errors:
                    feedback[gid] = f"{errors[0].ename}: {errors[0].evalue}"
            results[answer.name] = dict(parts=parts, feedback=feedback,
                                        manual=sub.needs_manual_grade)
    return root, results, "\n".join(logs)


def _judge(answer: Answer, result: dict) -> list[str]:
    """Problems with one graded answer set (empty: as specified)."""
    problems = []
    for gid, (score, max_score) in result["parts"].items():
        want = 0.0 if gid in answer.fails else max_score
        if score != want:
            problems.append(f"{gid} scored {score} of {max_score}, expected {want}")
    for gid, pattern in answer.fails.items():
        if gid not in result["parts"]:
            problems.append(f"{gid} is not a graded part")
            continue
        text = result["feedback"].get(gid, "")
        if "ExerciseCheckFailed" not in text or not re.search(pattern, text):
            problems.append(f"{gid} feedback lacks {pattern!r}: {text[:200]!r}")
        if "expected:" in text:
            problems.append(f"{gid} feedback prints an expected value")
    return problems


def _diagnosis(text: str) -> str:
    call = re.search(r"your function (.*?), which is not allowed", text)
    if call:
        return f"{call.group(1)} (refused)"
    found = re.search(r"diagnosis: this matches what you get if you (.*?)\.(\n|$)", text)
    if found:
        return found.group(1)
    return text.split("\n")[0].split(": ", 2)[-1][:90]


def _no_checksum_warnings(logs: str) -> None:
    assert "checksum" not in logs.lower(), [l for l in logs.split("\n") if "hecksum" in l]


def _release_is_clean(root: Path) -> None:
    for name, path in NOTEBOOKS.items():
        release = root / "release" / name / path.name
        if release.is_file():
            text = release.read_text()
            assert BEGIN not in text and "BEGIN HIDDEN TESTS" not in text
            assert "raise NotImplementedError()" in text


FLOW = [a for a in ANSWERS if a.kind == "solution"] + [
    next(a for a in ANSWERS if a.assignment == ex and a.kind == "math")
    for ex in sorted(NOTEBOOKS)]


@pytest.mark.slow
def test_course_flow(tmp_path):
    root, results, logs = _course(tmp_path, FLOW)
    _release_is_clean(root)
    _no_checksum_warnings(logs)
    problems = {a.name: _judge(a, results[a.name]) for a in FLOW}
    assert not any(problems.values()), problems
    assert results["ex05-solution"]["manual"]               # 5b's prose is graded by hand
    for name in NOTEBOOKS:
        _nbgrader(root, "generate_feedback", name, "--force")
    wrong = next(a for a in FLOW if a.assignment == "ex01" and a.kind == "math")
    html = next((root / "feedback" / wrong.name / "ex01").glob("*.html")).read_text()
    assert re.search(wrong.fails["ex01-1a-check"], html)
    _nbgrader(root, "export", "--exporter=toptwo.teaching.export.PartsExportPlugin",
              f"--to={root / 'grades.csv'}")
    with open(root / "grades.csv", encoding="utf-8") as fh:
        rows = {row["student_id"]: row for row in csv.DictReader(fh)}
    assert {"ex01", "ex01/ex01-1a-check", "ex06/ex06-6b-scan-check", "total"} <= set(
        next(iter(rows.values())))
    row = rows[wrong.name]
    assert float(row["ex01/ex01-1a-check"]) == 0 and float(row["ex01/ex01-1b-check"]) == 3
    assert float(row["ex01"]) == 3 and float(row["ex02"]) == 0
    assert rows["ex05-solution"]["ex05/ex05-5b-explanation"] == ""   # awaits the hand grade
    assert float(rows["ex05-solution"]["ex05/ex05-5a-check"]) == 4


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("TOPTWO_EXERCISE_CORPUS") != "1",
                    reason="the mistake corpus (~70 autograded notebooks) runs in CI's "
                           "instructors stage: TOPTWO_EXERCISE_CORPUS=1")
def test_mistake_corpus(tmp_path):
    assert len(ANSWERS) >= 60 and len({a.name for a in ANSWERS}) == len(ANSWERS)
    start = time.perf_counter()
    # one course per exercise (each with its own gradebook), autograded side by side
    by_ex = {ex: [a for a in ANSWERS if a.assignment == ex] for ex in sorted(NOTEBOOKS)}
    jobs = max(1, min(len(by_ex), int(os.environ.get("TOPTWO_CORPUS_JOBS", os.cpu_count() or 1))))
    with ThreadPoolExecutor(jobs) as pool:
        done = list(pool.map(lambda ex: _course(tmp_path / ex, by_ex[ex]), by_ex))
    seconds = time.perf_counter() - start
    results = {name: r for _, res, _ in done for name, r in res.items()}
    for root, _, logs in done:
        _no_checksum_warnings(logs)
        _release_is_clean(root)
    lines = ["# Mistake corpus: nbgrader autograde of every answer set",
             "",
             "Generated by `TOPTWO_EXERCISE_CORPUS=1 python -m pytest tests/test_nbgrader.py "
             "-k corpus -m slow` (answer sets: `tests/exercise_corpus/answers.py`; inputs are drawn "
             f"afresh at every run). {len(ANSWERS)} answer sets, autograded in {seconds:.0f} s "
             f"({jobs} courses at a time).",
             "",
             "| answer set | kind | autograded score | failed parts | feedback (diagnosis) | as specified |",
             "|---|---|---|---|---|---|"]
    failures = {}
    for answer in ANSWERS:
        result = results[answer.name]
        problems = _judge(answer, result)
        if problems:
            failures[answer.name] = problems
        got = sum(s for s, _ in result["parts"].values())
        top = sum(m for _, m in result["parts"].values())
        failed = [gid for gid, (s, m) in result["parts"].items() if s < m]
        diag = "; ".join(_diagnosis(result["feedback"].get(g, "")) for g in failed)
        lines.append(f"| {answer.name} | {answer.kind} | {got:g}/{top:g} | "
                     f"{', '.join(failed) or '-'} | {diag.replace('|', '/') or '-'} | "
                     f"{'yes' if not problems else 'NO: ' + '; '.join(problems)} |")
    kinds = {k: sum(a.kind == k for a in ANSWERS) for k in ("solution", "unusual", "math",
                                                              "process", "limit")}
    lines += ["", f"Kinds: {kinds}. Answer sets not as specified: {len(failures)}."]
    REPORT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"mistake corpus: {len(ANSWERS)} answer sets in {seconds:.0f} s ({jobs} at a time)")
    assert not failures, failures


# ------------------------------------------------------ the documented instructor install
def _documented_block() -> list[str]:
    """The bash block of docs/course/instructors.md, "Running the course", line by line."""
    text = (ROOT / "docs" / "course" / "instructors.md").read_text(encoding="utf-8")
    found = re.search(r"```bash\n(.*?)```", text, re.S)
    assert found, "instructors.md has no bash block"
    return found.group(1).rstrip("\n").split("\n")


def _copy_repository(dest: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if listed.returncode == 0 and listed.stdout:
        for name in listed.stdout.decode().split("\0"):
            if name and (ROOT / name).is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, dest / name)
    else:
        shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(
            ".git", ".ci-venv", "_build", "*.egg-info", "__pycache__", ".pytest_cache"))


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("TOPTWO_INSTRUCTOR_VENV") != "1",
                    reason="builds a fresh venv and installs the teaching extra (network or a "
                           "pip cache): CI's instructors stage sets TOPTWO_INSTRUCTOR_VENV=1")
def test_documented_install_grades_the_six_solutions(tmp_path):
    """instructors.md's block, verbatim, in a venv with only ``pip install -e
    ".[teaching]"``: the six instructor solutions score full marks. Commands that need a
    shared exchange or a server (release_assignment, formgrader) are left out, the
    students' submissions are the six solutions, and the per-assignment commands run for
    every assignment."""
    repo = tmp_path / "toptwo"
    repo.mkdir()
    _copy_repository(repo)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP")}
    env["PATH"] = str(venv / "bin") + os.pathsep + env.get("PATH", "")
    env["VIRTUAL_ENV"] = str(venv)
    lines = [line for line in _documented_block()
             if "release_assignment" not in line and "formgrader" not in line]
    cut = next(i for i, line in enumerate(lines) if line.startswith("# ... students submit"))
    setup = "\n".join(lines[:cut]).replace("/path/to/toptwo", str(repo))
    assert setup.startswith('pip install -e ".[teaching]"'), setup

    def bash(script: str, cwd: Path) -> None:
        out = subprocess.run(["bash", "-c", "set -euo pipefail\n" + script], cwd=cwd, env=env,
                             capture_output=True, text=True, timeout=3600)
        assert out.returncode == 0, f"{script}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"

    bash(setup, repo)
    course = repo / "mycourse"
    check = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import toptwo, matplotlib, sympy, cloudpickle; print(toptwo.__file__)"],
                           env=env, capture_output=True, text=True, cwd=venv)
    assert check.returncode == 0 and str(repo) in check.stdout, check.stdout + check.stderr
    solutions = [a for a in ANSWERS if a.kind == "solution"]
    assert len(solutions) == 6
    for answer in solutions:
        path = NOTEBOOKS[answer.assignment]
        release = nbformat.read(course / "release" / answer.assignment / path.name,
                                as_version=4)
        nb = _submission(release, nbformat.read(path, as_version=4), answer)
        folder = course / "submitted" / answer.name / answer.assignment
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / path.name)
    per_assignment = [line for line in lines[cut + 1:] if "ex01" in line]
    once = [line for line in lines[cut + 1:] if "ex01" not in line]
    script = "\n".join(line.replace("ex01", a.assignment) for a in solutions
                       for line in per_assignment)
    bash(script + "\n" + "\n".join(once), course)
    with nbgrader_api.Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for answer in solutions:
            path = NOTEBOOKS[answer.assignment]
            sub = gb.find_submission_notebook(path.stem, answer.assignment, answer.name)
            parts = {g.name: (g.auto_score, g.max_score) for g in sub.grades
                     if g.auto_score is not None}
            assert parts and all(s == m for s, m in parts.values()), (answer.name, parts)
    with open(course / "grades.csv", encoding="utf-8") as fh:
        rows = {row["student_id"]: row for row in csv.DictReader(fh)}
    assert float(rows["ex06-solution"]["ex06"]) == 5

