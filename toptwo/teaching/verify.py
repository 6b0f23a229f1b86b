"""Re-run every passed check outside the notebook's kernel (nbgrader autograde preprocessors).

Code at the top level of a solution cell runs in the kernel that also runs the grade cells,
so it can rebind what a grade cell uses (``importlib.reload``, a check module, ``print``)
and make the cell print "passed" without checking anything. No code inside the kernel can
rule that out. These two preprocessors move the verdict out of the kernel's reach:

* :class:`ExportAnswers` (before nbgrader's ``Execute``) appends one cell to the
  notebook that, after every other cell has run, hands over each graded function pickled
  by value (cloudpickle) and each graded value as JSON (5b's example);
* :class:`VerifyChecks` (after ``Execute``) removes that cell and, for every autograded
  cell whose output says it passed, runs the same check again **in the nbgrader process**
  (which never ran student code), on the handed-over function: the check's inputs are
  drawn there, the function runs in its own child process (:mod:`toptwo.teaching._sandbox`;
  the pickle is never loaded in the nbgrader process) and the verdict is the check's. If
  it fails, or nothing was handed over, the cell's outputs are replaced by the failure
  (with a note saying what happened), so nbgrader scores the part 0 and the feedback
  shows why.

A tampered kernel can only choose which function it hands over; that function must then
pass the check under the child process's rules, i.e. be a right answer. Enable them in
the course's ``nbgrader_config.py``::

    from toptwo.teaching.verify import configure
    configure(c)

The verification runs the check a second time for each passed part (about a second per
part; ex02's SymPy checks a few seconds).
"""

from __future__ import annotations

import ast
import base64
import binascii
import json
import os
from typing import Any


__all__ = ["configure", "MARKER"]   # and ExportAnswers, VerifyChecks (made on first use)

MARKER = "TOPTWO-ANSWER"
_EXPORT_TAG = "toptwo-teaching-export"
#: Globals of a graded function that name what the check hands over (run by the check).
_HANDED_OVER = {"check_ns_needed": ("pair_error",)}


def _grade_calls(nb: Any) -> dict[str, tuple[str, list[str], dict]]:
    """grade id -> (check name, argument names, keyword constants) of each autograded
    code cell that calls a check (``checks.check_x(a, b, key=1)``)."""
    found = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("grade") or meta.get("solution"):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr.startswith("check_")
                    and all(isinstance(a, ast.Name) for a in node.args)):
                kwargs = {}
                for kw in node.keywords:
                    if kw.arg and isinstance(kw.value, ast.Constant):
                        kwargs[kw.arg] = kw.value.value
                names = [a.id for a in node.args if isinstance(a, ast.Name)]
                found[meta["grade_id"]] = (node.func.attr, names, kwargs)
    return found


_EXPORT_SOURCE = '''\
def _toptwo_hand_over(spec):
    import base64, json
    import numpy
    try:
        import cloudpickle
    except ImportError as exc:
        print("{marker} error cloudpickle", exc)
        return
    g = globals()
    for grade_id, names, handed in spec:
        for index, name in enumerate(names):
            value = g.get(name)
            try:
                if callable(value):
                    saved = {{k: g.get(k) for k in handed}}
                    g.update({{k: ("toptwo-rpc", k) for k in handed}})
                    try:
                        data = cloudpickle.dumps(value)
                    finally:
                        g.update(saved)
                    kind = "function"
                else:
                    data = json.dumps(numpy.asarray(value).tolist()).encode()
                    kind = "json"
                print(" ".join(["{marker}", grade_id, str(index), kind,
                                base64.b64encode(data).decode()]), flush=True)
            except Exception as exc:
                print("{marker} error", grade_id, type(exc).__name__)
_toptwo_hand_over({spec!r})
del _toptwo_hand_over
'''


def _nbgrader_base() -> Any:
    from nbgrader.preprocessors import NbGraderPreprocessor
    return NbGraderPreprocessor


class _Handed:
    """A function handed over by the kernel: pickled bytes, never loaded here."""

    __globals__: dict = {}

    def __init__(self, payload: bytes, cwd: str | None):
        self.payload = payload
        self.cwd = cwd

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a handed-over function runs only in the child process")


def _export_cell(nb: Any) -> Any:
    import nbformat
    calls = _grade_calls(nb)
    spec = [(gid, names, list(_HANDED_OVER.get(check, ())))
            for gid, (check, names, _) in sorted(calls.items())]
    cell = nbformat.v4.new_code_cell(_EXPORT_SOURCE.format(marker=MARKER, spec=spec))
    cell.metadata["tags"] = [_EXPORT_TAG]
    return cell


def _read_hand_over(cell: Any) -> dict[tuple[str, int], tuple[str, bytes]]:
    """{(grade_id, argument index): (kind, bytes)} from the export cell's stdout. The kernel
    may flush one printed line in several stream messages, so the texts are joined first."""
    text = "".join(str(out.get("text", "")) for out in cell.get("outputs", [])
                   if out.get("output_type") == "stream" and out.get("name") == "stdout")
    handed = {}
    for line in text.split("\n"):
        parts = line.split()
        if len(parts) == 5 and parts[0] == MARKER and parts[2].isdigit():
            try:
                handed[(parts[1], int(parts[2]))] = (
                    parts[3], base64.b64decode(parts[4], validate=True))
            except (binascii.Error, ValueError):
                pass
    return handed


def _verify(nb: Any, cwd: str | None) -> list[str]:  # noqa: C901
    """Re-run the passed checks of ``nb`` (executed, with the export cell last); return a
    line per part whose verdict changed. Removes the export cell."""
    import nbformat

    from . import ExerciseCheckFailed
    from .. import teaching
    checks = vars(teaching)
    handed: dict[tuple[str, int], tuple[str, bytes]] = {}
    keep = []
    for cell in nb.cells:
        if _EXPORT_TAG in cell.get("metadata", {}).get("tags", []):
            handed.update(_read_hand_over(cell))
        else:
            keep.append(cell)
    nb.cells = keep
    calls = _grade_calls(nb)
    changed = []
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        gid = meta.get("grade_id")
        if gid not in calls:
            continue
        if any(o.get("output_type") == "error" or (o.get("output_type") == "stream"
                                                   and o.get("name") == "stderr")
               for o in cell.get("outputs", [])):
            continue                                     # failed in the kernel already
        check_name, names, kwargs = calls[gid]
        check = checks.get(check_name)
        problem = None
        args = []
        for index, name in enumerate(names):
            kind, data = handed.get((gid, index), ("", b""))
            if kind == "function":
                args.append(_Handed(data, cwd))
            elif kind == "json":
                try:
                    args.append(json.loads(data))
                except ValueError:
                    problem = f"the kernel handed over an unreadable value for {name}"
            else:
                problem = f"the notebook's kernel did not hand over {name}"
        text = None
        if check is None:
            problem = f"no check {check_name} in toptwo.teaching"
        if problem is None and check is not None:
            try:
                check(*args, **kwargs)
            except ExerciseCheckFailed as err:
                text = str(err)
            except Exception as err:  # noqa: BLE001 - any failure of the re-run counts
                text = f"the check could not be re-run: {type(err).__name__}: {err}"
        else:
            text = problem
        if text is None:
            continue
        note = ("\n  note:      the grade cell printed that this part passed, but the same "
                "check, run outside the notebook's kernel on the function the kernel "
                "handed over, fails: code in a solution cell changed what the grade cell "
                "runs (or the kernel handed nothing over).")
        cell.outputs = [nbformat.v4.new_output(
            "error", ename="ExerciseCheckFailed", evalue=text + note,
            traceback=[f"ExerciseCheckFailed: {text}{note}"])]
        changed.append(f"{gid}: {text.splitlines()[0]}")
    return changed


def _make_classes() -> tuple[type, type]:
    base = _nbgrader_base()

    class ExportAnswers(base):  # type: ignore[misc, valid-type]
        """Append the cell that hands each graded function over (run last by Execute)."""

        def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
            if _grade_calls(nb):
                nb.cells.append(_export_cell(nb))
            return nb, resources

    class VerifyChecks(base):  # type: ignore[misc, valid-type]
        """Re-run each passed check outside the kernel; a failure replaces the cell's
        outputs (the part then scores 0, and the feedback says why)."""

        def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
            path = (resources.get("metadata") or {}).get("path") or None
            for line in _verify(nb, path if path and os.path.isdir(path) else None):
                self.log.warning("toptwo.teaching.verify: %s", line)
            return nb, resources

    return ExportAnswers, VerifyChecks


def __getattr__(name: str) -> Any:
    if name in ("ExportAnswers", "VerifyChecks"):
        export, verify = _make_classes()
        globals().update(ExportAnswers=export, VerifyChecks=verify)
        return globals()[name]
    raise AttributeError(name)


def configure(c: Any, *, cell_timeout: float = 120) -> None:
    """Put the two preprocessors around nbgrader's ``Execute`` in ``c.Autograde`` (call
    it from ``nbgrader_config.py``: ``configure(c)``), and give each cell ``cell_timeout``
    seconds of wall-clock time (nbgrader's default, 30 s, is tight for ex02's SymPy
    checks on a busy machine; the checks' own limits count CPU time)."""
    c.Execute.timeout = cell_timeout
    from nbgrader.converters.autograde import Autograde
    from nbgrader.preprocessors import Execute
    export = __getattr__("ExportAnswers")
    verify = __getattr__("VerifyChecks")
    steps = list(Autograde().autograde_preprocessors)
    at = steps.index(Execute)
    c.Autograde.autograde_preprocessors = steps[:at] + [export, Execute, verify] + steps[at + 1:]
