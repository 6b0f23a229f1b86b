"""Cheap checks (no execution) of every committed notebook under notebooks/.

nbval re-executes the notebooks and compares outputs; this test catches, in well under a
second, the mistakes that make nbval's comparison meaningless or flaky: a notebook stored
without outputs (nbval then compares nothing), cells executed out of order, a stored error,
a memory address or a kernel temp path in an output, a non-python3 kernelspec, a figure
without alt text (myst-nb's ``mystnb.image.alt`` cell metadata, which the book puts on the
``<img>``), and a notebook missing from notebooks/README.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
MEMORY_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]+|0x[0-9a-fA-F]{8,}")
IPYKERNEL_PATH = re.compile(r"/tmp/ipykernel_")


def is_student_copy(path: Path) -> bool:
    """Generated student copies (solutions removed, outputs cleared) are not checked."""
    parts = {part.lower() for part in path.parts}
    return bool(parts & {"student", "students"}) or path.name.endswith("_student.ipynb")


def committed_notebooks() -> list[Path]:
    return sorted(
        p for p in NOTEBOOKS.rglob("*.ipynb")
        if ".ipynb_checkpoints" not in p.parts and not is_student_copy(p.relative_to(NOTEBOOKS))
    )


def _output_text(output: dict) -> str:
    if output.get("output_type") == "stream":
        text = output.get("text", "")
        return "".join(text) if isinstance(text, list) else text
    if output.get("output_type") == "error":
        return "\n".join(output.get("traceback", []))
    data = output.get("data", {})
    chunks = []
    for mime, value in data.items():
        if mime.startswith("text/") or mime.endswith("json") or mime == "image/svg+xml":
            chunks.append("".join(value) if isinstance(value, list) else str(value))
    return "\n".join(chunks)


def notebook_problems(nb: dict) -> list[str]:
    """Every problem found in a notebook (a dict as read by nbformat); [] if none."""
    problems = []
    kernel = nb.get("metadata", {}).get("kernelspec", {}).get("name")
    if kernel != "python3":
        problems.append(f"kernelspec name must be 'python3'; got {kernel!r} instead")
    code = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    counts = [c.get("execution_count") for c in code]
    if counts != list(range(1, len(code) + 1)):
        problems.append(f"execution counts must be 1..{len(code)} in order (run top to bottom); "
                        f"got {counts} instead")
    if not any(c.get("outputs") for c in code):
        problems.append("no code cell has stored outputs (nbval would compare nothing)")
    for index, cell in enumerate(nb.get("cells", [])):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            tags = cell.get("metadata", {}).get("tags", [])
            if output.get("output_type") == "error" and "raises-exception" not in tags:
                problems.append(f"cell {index} stores an error output "
                                f"({output.get('ename')}: {output.get('evalue')})")
            text = _output_text(output)
            if MEMORY_ADDRESS.search(text):
                problems.append(f"cell {index} output contains a memory address: "
                                f"{MEMORY_ADDRESS.search(text).group(0)!r}")
            if IPYKERNEL_PATH.search(text):
                problems.append(f"cell {index} output contains a /tmp/ipykernel path")
        shows_figure = cell.get("cell_type") == "code" and any(
            "image/png" in o.get("data", {}) for o in cell.get("outputs", []))
        alt = cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt", "")
        if shows_figure and len(alt.strip()) < 40:
            problems.append(f"cell {index} shows a figure without alt text (set the cell metadata "
                            f"mystnb.image.alt to a sentence that says what the figure shows)")
    return problems


def readme_problems(paths: list[Path], readme_text: str) -> list[str]:
    """Notebooks (paths relative to notebooks/) not mentioned in notebooks/README.md."""
    return [f"{p} is not listed in notebooks/README.md" for p in paths
            if str(p.as_posix()) not in readme_text]


@pytest.mark.parametrize("path", committed_notebooks(), ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_notebook_metadata(path):
    nb = nbformat.read(path, as_version=4)
    assert notebook_problems(nb) == []


def test_every_notebook_is_listed_in_readme():
    readme = (NOTEBOOKS / "README.md").read_text(encoding="utf-8")
    rel = [p.relative_to(NOTEBOOKS) for p in committed_notebooks()]
    assert readme_problems(rel, readme) == []


def _good_notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    c1 = nbformat.v4.new_code_cell("print(1)", execution_count=1)
    c1.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    c2 = nbformat.v4.new_code_cell("x = 2", execution_count=2)
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), c1, c2]
    return nb


def test_checker_accepts_a_good_notebook():
    assert notebook_problems(_good_notebook()) == []


def test_checker_rejects_a_broken_notebook():
    nb = _good_notebook()
    nb.metadata["kernelspec"]["name"] = "python3-venv"
    nb.cells[2].execution_count = 5
    nb.cells[2].outputs = [
        nbformat.v4.new_output("execute_result", data={"text/plain": "<Line2D at 0x7f3a2b1c>"},
                               execution_count=5),
        nbformat.v4.new_output("error", ename="ValueError", evalue="bad", traceback=[
            'File /tmp/ipykernel_1234/567.py:1']),
    ]
    problems = notebook_problems(nb)
    joined = "\n".join(problems)
    assert "kernelspec name must be 'python3'; got 'python3-venv'" in joined
    assert "execution counts must be 1..2 in order" in joined
    assert "cell 2 stores an error output (ValueError: bad)" in joined
    assert "memory address: 'at 0x7f3a2b1c'" in joined
    assert "/tmp/ipykernel path" in joined
    assert len(problems) == 5


def test_checker_rejects_a_notebook_without_outputs():
    nb = _good_notebook()
    nb.cells[1].outputs = []
    assert notebook_problems(nb) == ["no code cell has stored outputs (nbval would compare nothing)"]


def test_checker_rejects_a_figure_without_alt_text():
    nb = _good_notebook()
    nb.cells[2].outputs = [nbformat.v4.new_output("display_data", data={
        "image/png": "iVBORw0KGgo=", "text/plain": "<Figure size 640x480 with 1 Axes>"})]
    assert notebook_problems(nb) == [
        "cell 2 shows a figure without alt text (set the cell metadata mystnb.image.alt to a "
        "sentence that says what the figure shows)"]
    nb.cells[2].metadata["mystnb"] = {"image": {"alt": "A line rising from 0 to 1 over ten steps."}}
    assert notebook_problems(nb) == []


def test_checker_allows_tagged_exception_demo():
    nb = _good_notebook()
    nb.cells[2].metadata["tags"] = ["raises-exception"]
    nb.cells[2].outputs = [nbformat.v4.new_output("error", ename="ValueError", evalue="x",
                                                  traceback=["ValueError: x"])]
    assert notebook_problems(nb) == []


def test_readme_check():
    paths = [Path("01_a.ipynb"), Path("exercises/02_b.ipynb")]
    assert readme_problems(paths, "| 01_a.ipynb | x |\n| exercises/02_b.ipynb | y |") == []
    assert readme_problems(paths, "| 01_a.ipynb |") == [
        "exercises/02_b.ipynb is not listed in notebooks/README.md"]


def bare_asserts(nb: dict) -> list[str]:
    """Asserts without a message in a lesson's code cells (a reader who changes a parameter
    would get a bare AssertionError instead of the measured value and the bound)."""
    import ast
    found = []
    for index, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        try:
            tree = ast.parse(source)
        except SyntaxError:        # IPython magics: not a lesson's style, nothing to check
            continue
        found += [f"cell {index}, line {node.lineno}: assert without a message"
                  for node in ast.walk(tree) if isinstance(node, ast.Assert) and node.msg is None]
    return found


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_lessons_have_no_bare_asserts(path):
    assert bare_asserts(nbformat.read(path, as_version=4)) == []


def test_bare_assert_check_rejects_a_bare_assert():
    nb = _good_notebook()
    nb.cells[2].source = "x = 2\nassert x == 2, 'x is 2'\nassert x > 1"
    assert bare_asserts(nb) == ["cell 2, line 3: assert without a message"]
