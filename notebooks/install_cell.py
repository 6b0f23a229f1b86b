"""Give a lesson notebook its first cell (how toptwo gets installed) and, when the project
has a public address, its launch badges (idempotent).

Usage::

    python notebooks/install_cell.py notebooks/05_sample_complexity.ipynb [...]
    python notebooks/install_cell.py --check notebooks/*.ipynb    # exit 1 if one lacks them

The project's public address is one setting: ``Repository`` under ``[project.urls]`` in
``pyproject.toml``. It is set only once the repository is public; the former placeholder
(the ``toptwo-project`` organisation on GitHub, which does not exist) is refused. The cells put at the
top of each notebook (or brought up to date, found by their ``toptwo`` metadata, so running
this twice changes nothing) depend on it:

* **no public address** (today): one code cell that looks ``toptwo`` up (without importing
  it, nor numpy: a lesson's later thread setting must still apply) and, if it is missing,
  stops with the install line that works from a clone or a built wheel. No badge, no link.
* **a public address**: a code cell that, **on Colab only**, pip-installs toptwo from the
  repository (the package brings numpy and scipy; Colab already has matplotlib, sympy,
  scikit-learn and pandas), and a markdown cell with "Open in Colab" and "Launch Binder"
  badges for this notebook.

Either code cell prints nothing where toptwo is installed, so the stored outputs and nbval
are unaffected, and the book removes both cells (tag ``remove-cell``). The code cell keeps
its place (the first code cell), so switching between the two changes no execution count.
Execution counts of the executed code cells are renumbered 1, 2, ... in order, as a
fresh run would number them.
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
#: Addresses that were written down but do not exist: never linked.
PLACEHOLDERS = frozenset({"/".join(("toptwo-project", "toptwo"))})  # spelled apart: no file names it


def repository(pyproject: Path = ROOT / "pyproject.toml") -> str | None:
    """``owner/name`` of the public GitHub repository, from ``[project.urls] Repository``
    in pyproject.toml, or None when the project has no public address yet.

    A ``Repository`` that is not ``https://github.com/<owner>/<name>``, or is a known
    placeholder, is an error (it would produce links that lead nowhere)."""
    import tomllib

    urls = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"].get("urls", {})
    url = urls.get("Repository")
    if url is None:
        return None
    match = re.fullmatch(r"https://github\.com/([^/\s]+/[^/\s]+?)/?", url)
    if not match:
        raise SystemExit(f"{pyproject}: [project.urls] Repository = {url!r} is not "
                         f"\"https://github.com/<owner>/<name>\".")
    if match.group(1) in PLACEHOLDERS:
        raise SystemExit(f"{pyproject}: [project.urls] Repository = {url!r} is a placeholder, "
                         f"not a repository; remove the line until the repository is public.")
    return match.group(1)


def version(pyproject: Path = ROOT / "pyproject.toml") -> str:
    import tomllib

    return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]


def local_source() -> str:
    """The first cell when the project has no public address: if toptwo is missing, stop
    and say how to install it (from a clone, or from a built wheel)."""
    return (
        "# This lesson needs toptwo (\"How to run the lessons\" in the README or the book).\n"
        "# (find_spec: nothing is imported here, so a later thread setting still applies)\n"
        "import importlib.util\n"
        "\n"
        "if importlib.util.find_spec(\"toptwo\") is None:\n"
        "    raise ImportError(\n"
        "        \"toptwo is not installed; in a terminal, from a clone of the repository:\\n\"\n"
        "        '    pip install -e \".[notebooks]\"\\n'\n"
        "        \"or, from a built wheel:\\n\"\n"
        f"        '    pip install \"dist/toptwo-{version()}-py3-none-any.whl[notebooks]\"'\n"
        "    )"
    )


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


def apply(nb: nbformat.NotebookNode, rel_path: str, repo: str | None) -> nbformat.NotebookNode:
    """Insert (or update) the install cell, and the badge cell if ``repo`` is an address,
    at the top of ``nb``; a badge cell left from an earlier address is removed."""
    old = _find(nb, INSTALL_KEY)
    count = nb.cells[old].get("execution_count") if old is not None else None
    for key in (INSTALL_KEY, BADGES_KEY):
        i = _find(nb, key)
        if i is not None:
            del nb.cells[i]
    install = nbformat.v4.new_code_cell(install_source(repo) if repo else local_source())
    install.metadata = nbformat.from_dict({"toptwo": INSTALL_KEY, "tags": ["remove-cell"]})
    install["id"] = "toptwo-install"
    install["execution_count"] = count
    top = [install]
    if repo:
        badges = nbformat.v4.new_markdown_cell(badges_source(repo, rel_path))
        badges.metadata = nbformat.from_dict({"toptwo": BADGES_KEY, "tags": ["remove-cell"]})
        badges["id"] = "toptwo-badges"
        top.append(badges)
    nb.cells[0:0] = top
    code = [c for c in nb.cells if c.cell_type == "code"]
    if any(c.get("execution_count") is not None for c in code[1:]):
        for n, cell in enumerate(code, start=1):
            cell["execution_count"] = n
            for out in cell.get("outputs", []):
                if out.get("output_type") == "execute_result":
                    out["execution_count"] = n
    return nb


def has_cells(nb: nbformat.NotebookNode, repo: str | None = None) -> bool:
    """Whether ``nb`` starts with the cells :func:`apply` puts there for ``repo``."""
    if _find(nb, INSTALL_KEY) != 0:
        return False
    want = install_source(repo) if repo else local_source()
    if nb.cells[0].source != want:
        return False
    return _find(nb, BADGES_KEY) == (1 if repo else None)


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
            if not has_cells(nb, repo):
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
