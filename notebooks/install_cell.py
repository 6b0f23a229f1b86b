"""Give a lesson notebook its Colab install cell and its launch badges (idempotent).

Usage::

    python notebooks/install_cell.py notebooks/05_sample_complexity.ipynb [...]
    python notebooks/install_cell.py --check notebooks/*.ipynb    # exit 1 if one lacks them

Two cells are put at the top of each notebook (or brought up to date if they are there,
found by their ``toptwo`` metadata, so running this twice changes nothing):

1. a code cell that, **on Colab only**, pip-installs toptwo from the repository (the
   package brings numpy and scipy; Colab already has matplotlib, sympy, scikit-learn and
   pandas). Anywhere else it does nothing and prints nothing, so the stored outputs and
   nbval are unaffected. The book hides it (tag ``remove-cell``).
2. a markdown cell with "Open in Colab" and "Launch Binder" badges for this notebook
   (for Jupyter and GitHub; the book hides it and shows its own launch bar).

Execution counts of the executed code cells are renumbered 1, 2, ... in order, as a
fresh run would number them. The repository's address is read from ``pyproject.toml``
(``[project.urls] Repository``), the one place to change it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
INSTALL_KEY = "toptwo-install"
BADGES_KEY = "toptwo-badges"
BRANCH = "main"


def repository(pyproject: Path = ROOT / "pyproject.toml") -> str:
    """``owner/name`` of the GitHub repository, from ``[project.urls] Repository``."""
    text = pyproject.read_text(encoding="utf-8")
    match = re.search(r'^Repository\s*=\s*"https://github\.com/([^/"]+/[^/"]+?)/?"', text, re.M)
    if not match:
        raise SystemExit(f"{pyproject}: no [project.urls] Repository = "
                         f"\"https://github.com/<owner>/<name>\" line.")
    return match.group(1)


def install_source(repo: str) -> str:
    return (
        "# On Colab: install toptwo (numpy and scipy come with it). Elsewhere: nothing.\n"
        "import sys\n"
        "\n"
        "if \"google.colab\" in sys.modules:\n"
        "    import subprocess\n"
        "\n"
        "    subprocess.run([sys.executable, \"-m\", \"pip\", \"install\", \"-q\",\n"
        f"                    \"toptwo @ git+https://github.com/{repo}\"], check=True)"
    )


def badges_source(repo: str, rel_path: str) -> str:
    colab = f"https://colab.research.google.com/github/{repo}/blob/{BRANCH}/{rel_path}"
    binder = f"https://mybinder.org/v2/gh/{repo}/{BRANCH}?labpath={rel_path}"
    return (f"[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
            f"({colab}) "
            f"[![Launch Binder](https://mybinder.org/badge_logo.svg)]({binder})")


def _find(nb: nbformat.NotebookNode, key: str) -> int | None:
    for i, cell in enumerate(nb.cells):
        if cell.metadata.get("toptwo") == key:
            return i
    return None


def apply(nb: nbformat.NotebookNode, rel_path: str, repo: str) -> nbformat.NotebookNode:
    """Insert (or update) the install and badge cells at the top of ``nb``."""
    for key in (INSTALL_KEY, BADGES_KEY):
        i = _find(nb, key)
        if i is not None:
            del nb.cells[i]
    install = nbformat.v4.new_code_cell(install_source(repo))
    install.metadata = nbformat.from_dict({"toptwo": INSTALL_KEY, "tags": ["remove-cell"]})
    install["id"] = "toptwo-install"
    badges = nbformat.v4.new_markdown_cell(badges_source(repo, rel_path))
    badges.metadata = nbformat.from_dict({"toptwo": BADGES_KEY, "tags": ["remove-cell"]})
    badges["id"] = "toptwo-badges"
    nb.cells[0:0] = [install, badges]
    code = [c for c in nb.cells if c.cell_type == "code"]
    if any(c.get("execution_count") is not None for c in code[1:]):
        for n, cell in enumerate(code, start=1):
            cell["execution_count"] = n
            for out in cell.get("outputs", []):
                if out.get("output_type") == "execute_result":
                    out["execution_count"] = n
    return nb


def has_cells(nb: nbformat.NotebookNode) -> bool:
    return _find(nb, INSTALL_KEY) == 0 and _find(nb, BADGES_KEY) == 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true",
                        help="only report notebooks without the cells (exit status 1)")
    args = parser.parse_args(argv)
    repo = repository()
    missing = []
    for path in args.notebooks:
        nb = nbformat.read(path, as_version=4)
        if args.check:
            if not has_cells(nb):
                missing.append(str(path))
            continue
        rel = path.resolve().relative_to(ROOT).as_posix()
        apply(nb, rel, repo)
        text = nbformat.writes(nb, version=4, indent=1)
        path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    if missing:
        print("without the install/badge cells: " + ", ".join(missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
