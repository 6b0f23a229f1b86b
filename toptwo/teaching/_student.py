"""Generate student handouts from instructor notebooks (nbgrader's convention).

An instructor notebook holds solutions between two marker lines::

    ### BEGIN SOLUTION
    ...
    ### END SOLUTION

In a code cell the region (markers included) becomes a stub at the indentation of the
``### BEGIN SOLUTION`` line::

    # YOUR CODE HERE
    raise NotImplementedError()

and in a markdown cell it becomes ``YOUR ANSWER HERE``. Lines before and after the
markers are kept, so ``def f(x):`` stays and only its body is replaced. Every output and
execution count is cleared; the check cells (which call :mod:`toptwo.teaching`) are
kept. Student copies fail by design: they are build artefacts, never committed and
never executed in CI.

Only :mod:`nbformat` is needed (it ships with nbclient/nbval/jupyter); it is imported
when the generator runs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["SolutionMarkerError", "strip_solutions", "make_student_versions",
           "BEGIN", "END", "CODE_STUB", "MARKDOWN_STUB"]

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
CODE_STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")
MARKDOWN_STUB = "YOUR ANSWER HERE"
_INDENT = re.compile(r"^(\s*)")


class SolutionMarkerError(ValueError):
    """Markers that do not pair up (names the notebook and the cell)."""


def _strip_source(source: str, cell_type: str, where: str) -> tuple[str, int]:
    """Replace each marked region of one cell's source; return (new source, n regions)."""
    out: list[str] = []
    inside_since: int | None = None
    n_regions = 0
    for lineno, line in enumerate(source.split("\n"), start=1):
        marker = line.strip()
        if marker == BEGIN:
            if inside_since is not None:
                raise SolutionMarkerError(
                    f"{where}: '{BEGIN}' on line {lineno} but the region opened on line "
                    f"{inside_since} is not closed (add '{END}' before it).")
            inside_since = lineno
            indent = _INDENT.match(line).group(1)
            if cell_type == "code":
                out.extend(indent + stub for stub in CODE_STUB)
            else:
                out.append(indent + MARKDOWN_STUB)
            n_regions += 1
        elif marker == END:
            if inside_since is None:
                raise SolutionMarkerError(
                    f"{where}: '{END}' on line {lineno} has no matching '{BEGIN}' above it.")
            inside_since = None
        elif inside_since is None:
            out.append(line)
    if inside_since is not None:
        raise SolutionMarkerError(
            f"{where}: '{BEGIN}' on line {inside_since} is never closed (add '{END}').")
    return "\n".join(out), n_regions


def strip_solutions(nb: Any, name: str = "<notebook>") -> tuple[Any, int]:
    """Return a student copy of the notebook node ``nb`` and the number of regions replaced.

    Raises :class:`SolutionMarkerError` naming ``name`` and the cell (index and id) for
    an unbalanced ``### BEGIN SOLUTION`` / ``### END SOLUTION`` pair. The input is not
    modified.
    """
    import copy

    student = copy.deepcopy(nb)
    total = 0
    for index, cell in enumerate(student.cells):
        where = f"{name}, cell {index} (id {cell.get('id', '?')!r})"
        if cell.cell_type in ("code", "markdown"):
            cell.source, n = _strip_source(cell.source, cell.cell_type, where)
            total += n
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            cell.metadata.pop("execution", None)
    return student, total


def _is_inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
        return True
    except ValueError:
        return False


def make_student_versions(source_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Write a student copy of every ``*.ipynb`` in ``source_dir`` into ``out_dir``.

    Refuses to write into ``source_dir`` or a folder inside it (student copies there
    would overwrite the instructor notebooks or be collected by ``pytest --nbval``).
    Every notebook is checked before anything is written, so an unbalanced marker leaves
    ``out_dir`` untouched. ``out_dir`` is created if missing, but not its parents (a
    typo must not create folders elsewhere); an existing file of that name is refused.
    Other files (README, data) are not copied. Returns the paths written, sorted.
    """
    import nbformat

    src = Path(source_dir)
    if not src.is_dir():
        raise FileNotFoundError(f"source folder of instructor notebooks {str(src)!r} does not "
                                "exist or is not a folder.")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"output folder {str(out)!r} exists and is not a folder (it is a "
                         f"file); give a folder name.")
    if not out.exists() and not out.parent.is_dir():
        raise FileNotFoundError(f"the parent of the output folder {str(out)!r}, "
                                f"{str(out.parent)!r}, does not exist; only the output folder "
                                f"itself is created, never its parents.")
    src_r, out_r = src.resolve(), out.resolve()
    if _is_inside(out_r, src_r):
        raise ValueError(f"output folder {str(out)!r} must be outside the source folder "
                         f"{str(src)!r}; student versions must never overwrite or sit beside "
                         "the instructor notebooks.")
    paths = sorted(p for p in src.glob("*.ipynb") if p.is_file())
    if not paths:
        raise FileNotFoundError(f"no .ipynb notebooks in {str(src)!r}.")
    converted = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        student, n = strip_solutions(nb, name=path.name)
        nbformat.validate(student)
        converted.append((path.name, student))
    out.mkdir(exist_ok=True)
    written = []
    for name, student in converted:
        target = out / name
        text = nbformat.writes(student, version=4, indent=1)
        target.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        written.append(target)
    return written
