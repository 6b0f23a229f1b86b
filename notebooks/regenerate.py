"""Regenerate the stored outputs of the teaching notebooks, reproducibly.

Usage (from anywhere)::

    /work/venv/bin/python notebooks/regenerate.py                       # every notebook
    /work/venv/bin/python notebooks/regenerate.py notebooks/01_top_two_model.ipynb

Each notebook is executed top to bottom in a fresh ``python3`` kernel (nbclient,
``record_timing=False``, 120 s per cell) with the notebook's own folder as working
directory, exactly as ``pytest --nbval`` re-executes it. Volatile metadata (per-cell
timings, widget state, collapsed/scrolled flags) is stripped, the kernelspec is set to
``python3`` and the notebook is written back in place with ``nbformat`` (indent 1,
trailing newline), so two regenerations on the same machine are byte-identical and
``git diff`` only shows real changes.

By default every ``notebooks/**/*.ipynb`` is regenerated except student copies
(any path with a folder named ``student`` / ``students`` or a file name ending in
``_student.ipynb``: they raise ``NotImplementedError`` by design) and checkpoints.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS_DIR = Path(__file__).resolve().parent
KERNELSPEC = {
    "display_name": "Python 3 (ipykernel)",
    "language": "python",
    "name": "python3",
}
# Cell-level metadata keys that change from run to run or from one editor to another.
VOLATILE_CELL_METADATA = ("execution", "collapsed", "scrolled", "ExecuteTime", "jupyter")
# Notebook-level metadata keys that carry editor or widget state.
VOLATILE_NOTEBOOK_METADATA = ("widgets", "toc", "varInspector", "vscode")


def is_student_copy(path: Path) -> bool:
    """Return True for generated student copies (never executed, never regenerated)."""
    parts = {part.lower() for part in path.parts}
    return bool(parts & {"student", "students"}) or path.name.endswith("_student.ipynb")


def default_notebooks(root: Path = NOTEBOOKS_DIR) -> list[Path]:
    """Every notebook under ``root`` (recursively), sorted, without student copies."""
    return sorted(
        p
        for p in root.rglob("*.ipynb")
        if ".ipynb_checkpoints" not in p.parts and not is_student_copy(p.relative_to(root))
    )


def clean_metadata(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Strip volatile metadata, set the kernelspec, give cells deterministic ids."""
    nb.metadata["kernelspec"] = nbformat.from_dict(dict(KERNELSPEC))
    for key in VOLATILE_NOTEBOOK_METADATA:
        nb.metadata.pop(key, None)
    seen: set[str] = set()
    for index, cell in enumerate(nb.cells):
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
        cell_id = cell.get("id")
        if not cell_id or cell_id in seen:
            cell_id = f"cell-{index:03d}"
            cell["id"] = cell_id
        seen.add(cell_id)
        if cell.cell_type == "code":
            for output in cell.get("outputs", []):
                if "metadata" in output:
                    output["metadata"].pop("execution", None)
    return nb


def write_notebook(nb: nbformat.NotebookNode, path: Path) -> None:
    """Write ``nb`` with nbformat's canonical layout (indent 1) and a trailing newline."""
    text = nbformat.writes(nb, version=4, indent=1)
    if not text.endswith("\n"):
        text += "\n"
    path.write_text(text, encoding="utf-8")


def regenerate(path: Path, timeout: int = 120) -> None:
    """Execute the notebook at ``path`` top to bottom and store its outputs in place."""
    path = Path(path).resolve()
    nb = nbformat.read(path, as_version=4)
    clean_metadata(nb)
    client = NotebookClient(
        nb,
        kernel_name="python3",
        record_timing=False,
        timeout=timeout,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    clean_metadata(nb)
    nbformat.validate(nb)
    write_notebook(nb, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: all)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per cell")
    args = parser.parse_args(argv)
    paths = args.paths or default_notebooks()
    for path in paths:
        if path.suffix != ".ipynb" or not path.is_file():
            parser.error(f"path must be an existing .ipynb file; got {str(path)!r} instead")
        print(f"regenerating {path}", flush=True)
        regenerate(path, timeout=args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
