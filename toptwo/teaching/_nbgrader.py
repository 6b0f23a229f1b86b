"""nbgrader support for the exercise notebooks: cell metadata and student versions.

The instructor notebooks in ``notebooks/exercises/`` are nbgrader source notebooks. Their
cell metadata is written by :func:`write_metadata` from the table :data:`GRADED` (run
``python -m toptwo.teaching metadata notebooks/exercises`` after editing an exercise;
``--check`` only reports notebooks whose metadata is out of date, for CI):

* a cell holding ``### BEGIN SOLUTION`` is a *solution* cell (autograded answer), or,
  for a markdown cell listed in :data:`GRADED`, a *manually graded answer*;
* a cell listed in :data:`GRADED` (found by a piece of its source) is a locked *grade*
  cell worth the points given there; ``### BEGIN HIDDEN TESTS`` regions in it are removed
  from the release version by nbgrader;
* every other cell is *read-only* (locked): nbgrader's autograde restores its source, so a
  student cannot turn a check into ``pass``.

Student versions are made by nbgrader itself: ``nbgrader generate_assignment`` in a
course, or, without a course directory, :func:`make_student_versions` (``python -m
toptwo.teaching student SRC OUTDIR``), a thin wrapper that runs nbgrader's own
preprocessors (LockCells, ClearSolutions, ClearOutput, ClearHiddenTests,
ClearMarkScheme) on each notebook. nbgrader is only needed for the latter (the
``teaching`` extra); the metadata writer needs nbformat only.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

__all__ = ["GRADED", "SCHEMA_VERSION", "nbgrader_metadata", "write_metadata",
           "make_student_versions", "release_notebook", "total_points"]

SCHEMA_VERSION = 3
BEGIN_SOLUTION = "### BEGIN SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"

#: Graded cells of each notebook: (a piece of the cell's source, grade id, points).
#: Markdown entries are manually graded answers; code entries are autograded checks.
GRADED: dict[str, list[tuple[str, str, int]]] = {
    "ex01_sampling": [
        ("checks.check_answer_distribution(answer_distribution)", "ex01-1a-check", 2),
        ("checks.check_ex1_empirical_distribution(empirical_distribution)",
         "ex01-1b-check", 3),
    ],
    "ex02_proposition1": [
        ("checks.check_expected_binary(expected_binary_by_hand", "ex02-2a-check", 3),
        ("checks.check_r_case_one(r_case_one)", "ex02-2b-check", 2),
    ],
    "ex03_binary_rank_one": [
        ("checks.check_binary_conversion(binary_conversion)", "ex03-3a-check", 3),
        ("checks.check_centered_binary(center)", "ex03-3b-check", 2),
    ],
    "ex04_reliability": [
        ("checks.check_reliability_estimator(reliability_estimate)", "ex04-4a-check", 3),
        ("checks.check_unbiased_simulation(simulate_mean_p_hat)", "ex04-4b-check", 2),
    ],
    "ex05_plugin_mle": [
        ("checks.check_plugin_mle(plugin_mle_one_task)", "ex05-5a-check", 4),
        ("**Your answer.**", "ex05-5b-explanation", 2),
        ("checks.check_mle_differs_from_majority(", "ex05-5b-check", 1),
    ],
    "ex06_scaling": [
        ("checks.check_fit_exponent(fit_exponent)", "ex06-6a-check", 2),
        ("checks.check_ns_needed(ns_needed)", "ex06-6b-scan-check", 3),
    ],
}

#: A code cell that calls a check (``checks.check_...(`` or ``teaching.check_...(``).
_CALLS_CHECK = re.compile(r"\bcheck_\w+\(")

_PART = re.compile(r"^##\s+(\d+[a-z])\.", re.MULTILINE)


def total_points(name: str) -> int:
    """Total points of the notebook ``name`` (file stem)."""
    return sum(points for _, _, points in GRADED[name])


def _has_line(source: str, marker: str) -> bool:
    return any(line.strip() == marker for line in source.split("\n"))


def nbgrader_metadata(nb: Any, name: str) -> Any:
    """Return a copy of ``nb`` with nbgrader cell metadata (schema 3) on every cell.

    ``name`` is the notebook's file stem, a key of :data:`GRADED`. Raises ValueError if
    an entry of the table matches no cell or several cells, or if a cell calls a
    ``teaching.check_`` function without being listed (an ungraded check).
    """
    if name not in GRADED:
        raise ValueError(f"nbgrader_metadata: notebook {name!r} has no entry in GRADED; "
                         f"known: {sorted(GRADED)}.")
    nb = copy.deepcopy(nb)
    short = name.split("_")[0]
    graded: dict[int, tuple[str, int]] = {}
    for needle, grade_id, points in GRADED[name]:
        hits = [i for i, cell in enumerate(nb.cells) if needle in cell.source]
        if len(hits) != 1:
            raise ValueError(f"{name}: GRADED entry {grade_id!r} ({needle!r}) matches "
                             f"{len(hits)} cells; it must match exactly one.")
        graded[hits[0]] = (grade_id, points)
    part = "intro"
    solution_ids: dict[str, int] = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            found = _PART.search(cell.source)
            if found:
                part = found.group(1)
        is_solution = _has_line(cell.source, BEGIN_SOLUTION)
        if index in graded:
            grade_id, points = graded[index]
            meta = {"grade": True, "grade_id": grade_id, "locked": not is_solution,
                    "points": points, "schema_version": SCHEMA_VERSION,
                    "solution": is_solution}
            if cell.cell_type == "markdown" and not is_solution:
                raise ValueError(f"{name}: graded markdown cell {grade_id!r} needs a "
                                 f"'{BEGIN_SOLUTION}' region (the answer).")
        elif is_solution:
            base = f"{short}-{part}-solution"
            solution_ids[base] = solution_ids.get(base, 0) + 1
            suffix = f"-{solution_ids[base]}" if solution_ids[base] > 1 else ""
            meta = {"grade": False, "grade_id": base + suffix, "locked": False,
                    "schema_version": SCHEMA_VERSION, "solution": True}
        else:
            if cell.cell_type == "code" and (_CALLS_CHECK.search(cell.source)
                                             or _has_line(cell.source, BEGIN_HIDDEN)):
                raise ValueError(f"{name}, cell {index}: calls a check but is not listed in "
                                 "GRADED; add it with its points.")
            meta = {"grade": False, "grade_id": f"{short}-{cell.get('id') or index}",
                    "locked": True, "schema_version": SCHEMA_VERSION, "solution": False}
        cell.metadata["nbgrader"] = meta
    return nb


def _write(nb: Any, path: Path) -> None:
    import nbformat
    text = nbformat.writes(nb, version=4, indent=1)
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")


def write_metadata(folder: str | Path, *, check: bool = False) -> list[Path]:
    """Write nbgrader metadata into every notebook of ``folder`` listed in :data:`GRADED`.

    With ``check=True`` nothing is written. Returns the notebooks whose metadata was (or,
    with ``check``, would be) changed.
    """
    import nbformat
    folder = Path(folder)
    changed = []
    for name in sorted(GRADED):
        path = folder / f"{name}.ipynb"
        if not path.is_file():
            raise FileNotFoundError(f"write_metadata: {str(path)!r} does not exist.")
        nb = nbformat.read(path, as_version=4)
        new = nbgrader_metadata(nb, name)
        if new != nb:
            changed.append(path)
            if not check:
                _write(new, path)
    return changed


def _is_inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
        return True
    except ValueError:
        return False


def release_notebook(nb: Any) -> Any:
    """nbgrader's release version of one instructor notebook (a new notebook object).

    Runs nbgrader's preprocessors LockCells, ClearSolutions (metadata enforced),
    ClearOutput, ClearHiddenTests and ClearMarkScheme, the release steps of ``nbgrader
    generate_assignment`` that change a notebook, then refuses the result if any solution
    or hidden-test marker is left. Used for the student versions and by the book
    (``docs/conf.py`` renders only this version of the exercises). Requires nbgrader.
    """
    import nbformat
    try:
        from nbgrader.preprocessors import (ClearHiddenTests, ClearMarkScheme, ClearOutput,
                                            ClearSolutions, LockCells)
    except ImportError as exc:
        raise ImportError("student versions are made by nbgrader: install it with "
                          "pip install \"toptwo[teaching]\".") from exc
    nb = copy.deepcopy(nb)
    resources: dict = {}
    for step in (LockCells(), ClearSolutions(enforce_metadata=True), ClearOutput(),
                 ClearHiddenTests(enforce_metadata=True), ClearMarkScheme(enforce_metadata=True)):
        try:
            nb, resources = step.preprocess(nb, resources)
        except RuntimeError as exc:          # nbgrader reports bad metadata this way
            raise ValueError(f"nbgrader {type(step).__name__} refused the notebook: "
                             f"{exc}") from exc
    nbformat.validate(nb)
    for cell in nb.cells:
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS",
                       "END HIDDEN TESTS", "BEGIN MARK SCHEME"):
            if marker in cell.source:
                raise ValueError(f"the release version still holds {marker!r}.")
    return nb


def make_student_versions(source_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Write nbgrader's release version of every notebook of ``source_dir`` to ``out_dir``.

    Runs nbgrader's preprocessors LockCells, ClearSolutions (metadata enforced),
    ClearOutput, ClearHiddenTests and ClearMarkScheme, the release steps of ``nbgrader
    generate_assignment`` that change a notebook (without the database and checksums,
    which only a course directory needs). ``out_dir`` must lie outside ``source_dir``.
    Requires nbgrader (``pip install "toptwo[teaching]"``).
    """
    import nbformat
    src, out = Path(source_dir), Path(out_dir)
    if not src.is_dir():
        raise FileNotFoundError(f"source folder of instructor notebooks {str(src)!r} does not "
                                "exist or is not a folder.")
    if _is_inside(out.resolve(), src.resolve()):
        raise ValueError(f"output folder {str(out)!r} must be outside the source folder "
                         f"{str(src)!r}; student versions must never overwrite or sit beside "
                         "the instructor notebooks.")
    paths = sorted(p for p in src.glob("*.ipynb") if p.is_file())
    if not paths:
        raise FileNotFoundError(f"no .ipynb notebooks in {str(src)!r}.")
    converted = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        try:
            converted.append((path.name, release_notebook(nb)))
        except ValueError as exc:
            raise ValueError(f"{path.name}: {exc} (run `python -m toptwo.teaching metadata "
                             f"{src}`)") from exc
    if out.exists() and not out.is_dir():
        raise ValueError(f"output folder {str(out)!r} exists and is not a folder (it is a file).")
    if not out.parent.is_dir():
        raise FileNotFoundError(f"the parent folder {str(out.parent)!r} of the output folder "
                                "does not exist; only the output folder itself is created, "
                                "never its parents.")
    out.mkdir(exist_ok=True)
    written = []
    for name, nb in converted:
        _write(nb, out / name)
        written.append(out / name)
    return written
