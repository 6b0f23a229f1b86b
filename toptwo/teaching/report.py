"""What a check reports: :class:`CheckResult` on success, :class:`ExerciseCheckFailed` on failure.

Shared by the exercise modules ``ex01`` .. ``ex06``: calling the student's function (a
crash becomes a report naming the input; any call from the student's code into ``toptwo``
or ``theory_checks`` is detected and refused), comparing arrays, and naming the typical
mistakes that reproduce a wrong answer.

A report never contains the expected value: it names the input (drawn afresh at every
run), what came back, the typical mistake the answer matches and the equation to re-read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from ._sandbox import SandboxError, Student

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

    def __init__(self, exercise: str, case: str, problem: str, *, got: Any = None,
                 hint: str = "", diagnosis: str | None = None):
        self.exercise = exercise
        self.case = case
        self.diagnosis = diagnosis
        lines = [f"{exercise}: {problem}", f"  input:     {case}"]
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
        *value* as a partial score, so check cells print the result instead. The number of
        inputs is left out: it varies from run to run (inputs are drawn until every typical
        mistake is told apart), and the stored outputs of the notebooks must not."""
        return f"passed: {self.exercise}"


def _fmt(value: Any) -> str:
    if isinstance(value, (np.ndarray, list, tuple)) and not isinstance(value, str):
        try:
            arr = np.asarray(value)
        except ValueError:
            return str(value)
        if arr.dtype.kind in "fciub":
            if arr.size > 24:
                return f"an array of shape {arr.shape} (too large to show)"
            text = np.array2string(arr, precision=4, suppress_small=True, separator=", ",
                                   threshold=40, max_line_width=88)
            return text.replace("\n", "\n" + " " * 13)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _rng(rng: Any) -> np.random.Generator:
    """The checks' randomness: ``None`` draws fresh entropy (a new input at every run)."""
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


# ------------------------------------------------------------------ process rules
def _student(exercise: str, fn: Any, **options: Any) -> Student:
    """The student's function ``fn`` wrapped for running in a separate process (see
    :mod:`toptwo.teaching._sandbox`); use it as a context manager."""
    if not callable(fn):
        raise ExerciseCheckFailed(exercise, "your answer", f"expected your function, got "
                                  f"{type(fn).__name__} instead.")
    return Student(exercise, fn, **options)


_RULES_HINT = ("the point of the exercise is to write this computation yourself with NumPy "
               "(or SymPy), in your function, without threads, processes or the library; "
               "compare with the library afterwards, outside your function.")


def _call(exercise: str, student: Student, case: str, *args: Any) -> Any:
    """Call the student's function in its separate process; turn anything but a returned
    value into a report naming the input.

    The child process refuses imports of ``toptwo`` and ``theory_checks`` (the library,
    the checks and their helpers alike), threads, processes and copied library code; a
    refusal fails the check as a process mistake, a crash names the exception, a call over
    the time limit says so, and a process that dies says how.
    """
    try:
        return student.call(*args)
    except SandboxError as err:
        diagnosis = None
        if err.kind == "refused":
            diagnosis = ("let the library (or the checker) do the exercise's work, or reach "
                         "around the grading rules")
        elif err.key_error:
            diagnosis = ("look answers up in a table of known inputs (the check draws new "
                         "inputs at every run)")
        raise ExerciseCheckFailed(exercise, case, err.message, diagnosis=diagnosis,
                                  hint=_RULES_HINT if err.kind == "refused" else "") from None


# ------------------------------------------------------------------ comparisons
class _Got(np.ndarray):
    """An answer as a float64 array that remembers the precision it was computed in
    (``eps``: machine epsilon of its float type; float64's for integers and Python floats)."""

    eps: float = float(np.finfo(float).eps)


def _eps_of(value: Any) -> float:
    """Machine epsilon of the float type of ``value`` (float64's unless it is a lower
    precision float array, scalar or list of those)."""
    try:
        dtype = np.asarray(value).dtype
    except (TypeError, ValueError):
        return float(np.finfo(float).eps)
    if dtype.kind in "fc":
        return max(float(np.finfo(dtype).eps), float(np.finfo(float).eps))
    return float(np.finfo(float).eps)


def _as_float_array(exercise: str, case: str, got: Any, shape: tuple, hint: str,
                    shape_diagnoses: dict | None = None) -> np.ndarray:
    """``got`` as a float array of ``shape``; sparse matrices, lists, tuples, pandas
    objects (their values) and any float dtype are accepted (the comparison tolerance is
    scaled to the dtype's precision), and for a vector ``shape`` = (K,) also a (K, 1)
    column or (1, K) row."""
    if hasattr(got, "toarray"):
        got = got.toarray()
    eps = _eps_of(got)
    try:
        arr = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseCheckFailed(exercise, case, "your function must return an array of "
                                  f"numbers; got {type(got).__name__} {got!r:.80} instead.",
                                  hint=hint) from None
    if len(shape) == 1 and arr.ndim == 2 and 1 in arr.shape and arr.size == shape[0]:
        arr = arr.reshape(shape)
    if arr.shape != shape:
        diag = (shape_diagnoses or {}).get(arr.shape)
        raise ExerciseCheckFailed(exercise, case, f"wrong shape: expected {shape}, got "
                                  f"{arr.shape}.", hint=hint, diagnosis=diag)
    out = arr.view(_Got)
    out.eps = eps
    return out


def _as_float_scalar(exercise: str, case: str, got: Any, what: str, hint: str) -> np.ndarray:
    """``got`` as one number (any float dtype, a 1-element array or list)."""
    eps = _eps_of(got)
    try:
        arr = np.asarray(got, dtype=float).reshape(())
    except (TypeError, ValueError):
        raise ExerciseCheckFailed(exercise, case, f"return one number ({what}); got "
                                  f"{got!r:.80}.", hint=hint) from None
    out = arr.view(_Got)
    out.eps = eps
    return out


def _tolerance(got: Any, rtol: float = 1e-9, atol: float = 1e-9) -> dict:
    """Comparison tolerance for an answer computed in ``got``'s precision: 32 machine
    epsilons of its float type, never tighter than the check's own ``rtol``/``atol``."""
    eps = getattr(got, "eps", float(np.finfo(float).eps))
    return {"rtol": max(rtol, 32 * eps), "atol": max(atol, 32 * eps)}


def _close(a: Any, b: Any, rtol: float = 1e-9, atol: float = 1e-9) -> bool:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol,
                                                   equal_nan=True))


IGNORES_INPUT = ("ignore the input (your function ignores its input: it returns the same "
                 "value in every entry, or the same answer for every input)")


def _join(found: list[str]) -> str | None:
    """Several typical mistakes can give the same answer on one input: name them all."""
    if not found:
        return None
    return found[0] + "".join(f" (or if you {d})" for d in found[1:])


class _Grader:
    """Compare answers on several inputs; diagnose with the mistakes consistent with all.

    One input can make two typical mistakes give the same numbers. The grader keeps
    evaluating the remaining inputs after the first wrong answer, and the diagnosis names
    only the mistakes whose values matched the student's answers on *every* input
    (falling back to the matches on the failing input when none fits them all). The
    checks draw inputs until every typical mistake has differed from the right answer on
    at least one of them (:attr:`separated`), so each mistake is caught and told apart.
    """

    def __init__(self, exercise: str, hint: str):
        self.exercise = exercise
        self.hint = hint
        self.failure: tuple | None = None
        self.mismatched: set[str] = set()
        self.variants: set[str] = set()
        self.unseparated: set[str] = set()
        self.history: list[tuple[np.ndarray, np.ndarray]] = []
        self.n_cases = 0

    @property
    def failed(self) -> bool:
        return self.failure is not None

    @property
    def separated(self) -> bool:
        """Every typical mistake seen so far differed from the right answer somewhere."""
        return not self.unseparated

    def compare(self, case: str, got: Any, expected: Any,
                variants: Iterable[tuple[str | None, Any]], note: str = "",
                **tol: float) -> None:
        self.n_cases += 1
        tol = _tolerance(got, **tol)
        matches = []
        variants = list(variants)
        arr = np.asarray(got, dtype=float)
        ref = np.asarray(expected, dtype=float)
        # a constant answer: the same number everywhere (ignoring p, q, A, ...) or the
        # same answer as on the previous inputs while the right answer moved
        same_entries = arr.size > 1 and bool(np.all(arr == arr.ravel()[0])) and not bool(
            np.all(ref == ref.ravel()[0]))
        repeated = any(prev.shape == arr.shape and bool(np.array_equal(prev, arr))
                       and not _close(pref, ref, **tol) for prev, pref in self.history)
        changed = any(prev.shape == arr.shape and not bool(np.array_equal(prev, arr))
                      for prev, _ in self.history)
        self.history.append((arr.copy(), ref.copy()))
        if same_entries or repeated:
            variants.append((IGNORES_INPUT, arr))
        elif changed:                     # the answer moved with the input
            self.mismatched.add(IGNORES_INPUT)
        for description, value in variants:
            if description is None or value is None:
                continue
            if description not in self.variants:
                self.variants.add(description)
                if description != IGNORES_INPUT:
                    self.unseparated.add(description)
            try:
                if not _close(value, expected, **tol):
                    self.unseparated.discard(description)
                same = _close(got, value, **tol)
            except (TypeError, ValueError):
                same = False
            if same:
                matches.append(description)
            else:
                self.mismatched.add(description)
        if self.failure is None and not _close(got, expected, **tol):
            self.failure = (case, got, matches, note)
        elif self.failure is not None and repeated and IGNORES_INPUT not in self.failure[2]:
            self.failure = (self.failure[0], self.failure[1],
                            [*self.failure[2], IGNORES_INPUT], *self.failure[3:])

    def fail(self, case: str, problem: str, got: Any = None, diagnosis: str | None = None):
        """Record a failure that is not a wrong value (first one wins)."""
        self.n_cases += 1
        if self.failure is None:
            self.failure = (case, got, [diagnosis] if diagnosis else [], "", problem)

    def finish(self, result: "CheckResult") -> "CheckResult":
        if self.failure is None:
            return result
        case, got, matches, note, *problem = self.failure
        consistent = [d for d in matches if d not in self.mismatched]
        text = problem[0] if problem else "wrong values." + (f" {note}" if note else "")
        raise ExerciseCheckFailed(self.exercise, case, text, got=got, hint=self.hint,
                                  diagnosis=_join(consistent or matches))
