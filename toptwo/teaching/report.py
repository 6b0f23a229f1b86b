"""What a check reports: :class:`CheckResult` on success, :class:`ExerciseCheckFailed` on failure.

Shared by the exercise modules ``ex01`` .. ``ex06``: calling the student's function (a
crash becomes a report naming the input; calls to the library function that does the
exercise are detected and refused), comparing arrays, and naming the typical mistakes
that reproduce a wrong answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np

__all__ = ["CheckResult", "ExerciseCheckFailed"]


class ExerciseCheckFailed(AssertionError):
    """A check found a wrong answer. ``str(err)`` is the full, readable report.

    Attributes
    ----------
    exercise : str
        Which exercise and part failed (e.g. ``"ex4 reliability estimator"``).
    case : str
        The input on which the answer was wrong.
    diagnosis : str or None
        The typical mistake the answer matches, if any.
    """

    def __init__(self, exercise: str, case: str, problem: str, *, expected: Any = None,
                 got: Any = None, hint: str = "", diagnosis: str | None = None):
        self.exercise = exercise
        self.case = case
        self.diagnosis = diagnosis
        lines = [f"{exercise}: {problem}", f"  input:     {case}"]
        if expected is not None:
            lines.append(f"  expected:  {_fmt(expected)}")
        if got is not None:
            lines.append(f"  got:       {_fmt(got)}")
        if diagnosis:
            lines.append(f"  diagnosis: this matches what you get if you {diagnosis}.")
        if hint:
            lines.append(f"  hint:      {hint}")
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class CheckResult:
    """Returned by a check that passed (truthy); ``n_cases`` inputs were compared."""

    exercise: str
    n_cases: int

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"CheckResult(exercise={self.exercise!r}, passed=True, n_cases={self.n_cases})"

    def __str__(self) -> str:
        """One line for check cells (``print(check(...))``): nbgrader reads a cell's last
        *value* as a partial score, so check cells print the result instead."""
        return f"passed: {self.exercise} ({self.n_cases} input{'s' if self.n_cases != 1 else ''})"


def _fmt(value: Any) -> str:
    if isinstance(value, (np.ndarray, list, tuple)) and not isinstance(value, str):
        arr = np.asarray(value)
        if arr.dtype.kind in "fc" or arr.dtype.kind in "iub":
            text = np.array2string(arr, precision=4, suppress_small=True, separator=", ",
                                   threshold=40, max_line_width=88)
            return text.replace("\n", "\n" + " " * 13)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


#: Library functions that do an exercise's work: a check fails when the student's function
#: calls one of them (detected at run time with :func:`sys.setprofile`, so aliases,
#: ``getattr`` and wrappers are caught too). Values are (public name, import path).
_FORBIDDEN = {
    "label_distribution": ("toptwo.label_distribution", "toptwo.model:label_distribution"),
    "label_probabilities": ("TopTwoModel.label_probabilities",
                            "toptwo.model:TopTwoModel.label_probabilities"),
    "task_label_counts": ("Responses.task_label_counts",
                          "toptwo.responses:Responses.task_label_counts"),
    "to_binary": ("toptwo.to_binary", "toptwo.binary:to_binary"),
    "binary_stack": ("toptwo.binary_stack", "toptwo.binary:binary_stack"),
    "expected_binary": ("TopTwoModel.expected_binary", "toptwo.model:TopTwoModel.expected_binary"),
    "estimate_reliability": ("toptwo.estimate_reliability", "toptwo.mle:estimate_reliability"),
    "plugin_mle": ("toptwo.plugin_mle", "toptwo.mle:plugin_mle"),
    "best_pairs": ("toptwo.best_pairs", "toptwo.mle:best_pairs"),
    "reference_expected_binary": ("teaching.reference_expected_binary",
                                  "toptwo.teaching.ex02:reference_expected_binary"),
    # toptwo.reference (the paper's algorithms as printed) is out of reach as an answer
    "reference.binary": ("toptwo.reference.binary", "toptwo.reference:binary"),
    "reference.plugin_mle": ("toptwo.reference.plugin_mle", "toptwo.reference:plugin_mle"),
}


def _forbidden_codes(names: Iterable[str]) -> dict:
    """Code objects of the forbidden library functions ``names`` -> public name."""
    import importlib
    codes = {}
    for name in names:
        public, where = _FORBIDDEN[name]
        module, _, attr = where.partition(":")
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
        codes[obj.__code__] = public
    return codes


def _call(exercise: str, fn: Callable, case: str, *args: Any,
          forbidden: Iterable[str] = ()) -> Any:
    """Call the student's function; turn a crash into a report naming the input.

    While the function runs, a profile hook records calls to the library functions named
    in ``forbidden`` (keys of ``_FORBIDDEN``); if any was called the check fails: the
    exercise asks for the computation itself, not a look-up.
    """
    import sys

    codes = _forbidden_codes(forbidden)
    called: list[str] = []

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in codes:
            called.append(codes[frame.f_code])

    previous = sys.getprofile()
    if codes:
        sys.setprofile(hook)
    try:
        result = fn(*args)
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - any student error becomes a report
        if called:
            result = None
        else:
            raise ExerciseCheckFailed(
                exercise, case, f"your function raised {type(exc).__name__}: {exc}") from exc
    finally:
        if codes:
            sys.setprofile(previous)
    if called:
        raise ExerciseCheckFailed(
            exercise, case, f"your function calls {called[0]}, which does this exercise "
            "for you.", hint="the point of the exercise is to write this computation "
            "yourself with NumPy (or SymPy); compare with the library afterwards, outside "
            "your function.")
    return result


def _as_float_array(exercise: str, case: str, got: Any, shape: tuple, hint: str,
                    shape_diagnoses: dict | None = None) -> np.ndarray:
    if hasattr(got, "toarray"):
        got = got.toarray()
    try:
        arr = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseCheckFailed(exercise, case, "your function must return an array of "
                                  f"numbers; got {type(got).__name__} instead.",
                                  hint=hint) from None
    if arr.shape != shape:
        diag = (shape_diagnoses or {}).get(arr.shape)
        raise ExerciseCheckFailed(exercise, case, f"wrong shape: expected {shape}, got "
                                  f"{arr.shape}.", hint=hint, diagnosis=diag)
    return arr


def _close(a: Any, b: Any, rtol: float = 1e-9, atol: float = 1e-9) -> bool:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol,
                                                   equal_nan=True))


def _diagnose(got: Any, variants: Iterable[tuple[str, Any]], **tol: float) -> str | None:
    """The description of the first wrong variant that ``got`` reproduces."""
    found = []
    for description, value in variants:
        if value is None:
            continue
        try:
            if _close(got, value, **tol):
                found.append(description)
        except (TypeError, ValueError):
            continue
    return _join(found)


def _join(found: list[str]) -> str | None:
    """Several typical mistakes can give the same answer on one input: name them all."""
    if not found:
        return None
    return found[0] + "".join(f" (or if you {d})" for d in found[1:])


class _Grader:
    """Compare answers on several inputs; diagnose with the mistakes consistent with all.

    One input can make two typical mistakes give the same numbers. The grader therefore
    keeps evaluating the remaining inputs after the first wrong answer, and the diagnosis
    names only the mistakes whose values matched the student's answers on *every* input
    (falling back to the matches on the failing input when none fits them all). The
    report shows the first failing input.
    """

    def __init__(self, exercise: str, hint: str):
        self.exercise = exercise
        self.hint = hint
        self.failure: tuple | None = None
        self.mismatched: set[str] = set()
        self.n_cases = 0

    @property
    def failed(self) -> bool:
        return self.failure is not None

    def compare(self, case: str, got: Any, expected: Any,
                variants: Iterable[tuple[str | None, Any]], note: str = "",
                **tol: float) -> None:
        self.n_cases += 1
        matches = []
        for description, value in variants:
            if description is None or value is None:
                continue
            try:
                same = _close(got, value, **tol)
            except (TypeError, ValueError):
                same = False
            if same:
                matches.append(description)
            else:
                self.mismatched.add(description)
        if self.failure is None and not _close(got, expected, **tol):
            self.failure = (case, got, expected, matches, note)

    def finish(self, result: "CheckResult") -> "CheckResult":
        if self.failure is None:
            return result
        case, got, expected, matches, note = self.failure
        consistent = [d for d in matches if d not in self.mismatched]
        problem = "wrong values." + (f" {note}" if note else "")
        raise ExerciseCheckFailed(self.exercise, case, problem, expected=expected, got=got,
                                  hint=self.hint, diagnosis=_join(consistent or matches))
