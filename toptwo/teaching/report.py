"""What a check reports: :class:`CheckResult` on success, :class:`ExerciseCheckFailed` on failure.

Shared by the exercise modules ``ex01`` .. ``ex06``: calling the student's function (a
crash becomes a report naming the input; any call from the student's code into ``toptwo``
or ``theory_checks`` is detected and refused), comparing arrays, and naming the typical
mistakes that reproduce a wrong answer.

A report never contains the expected value: it names the input (drawn afresh at every
run), what came back, the typical mistake the answer matches and the equation to re-read.
"""

from __future__ import annotations

import importlib.util
import os
import sys
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
def _package_dirs() -> tuple[str, ...]:
    dirs = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]       # toptwo/
    spec = importlib.util.find_spec("theory_checks")
    if spec is not None and spec.submodule_search_locations:
        dirs.extend(os.path.abspath(p) for p in spec.submodule_search_locations)
    return tuple(d + os.sep for d in dirs)


_LIBRARY_DIRS = _package_dirs()
_IN_LIBRARY: dict[str, bool] = {}


def _in_library(filename: str) -> bool:
    known = _IN_LIBRARY.get(filename)
    if known is None:
        known = os.path.abspath(filename).startswith(_LIBRARY_DIRS)
        _IN_LIBRARY[filename] = known
    return known


def _call(exercise: str, fn: Callable, case: str, *args: Any,
          allow: Iterable[Any] = ()) -> Any:
    """Call the student's function; turn a crash into a report naming the input.

    While the function runs, a profile hook (:func:`sys.setprofile`) records every call
    made *from the student's code* into ``toptwo`` or ``theory_checks`` (the library, the
    checks and their helpers alike, whatever name or alias it is reached by). Such a call
    fails the check: the exercise asks for the computation itself. ``allow`` lists what
    the exercise hands the student to call (functions, whose code objects are allowed, or
    module file names, all of whose functions are allowed).
    """
    if not callable(fn):
        raise ExerciseCheckFailed(exercise, case, f"expected your function, got "
                                  f"{type(fn).__name__} instead.")
    allowed_codes = {getattr(a, "__code__", None) for a in allow} - {None}
    allowed_files = {os.path.abspath(a) for a in allow if isinstance(a, str)}
    called: list[str] = []

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event != "call" or len(called) >= 4:
            return
        code = frame.f_code
        if not _in_library(code.co_filename):
            return
        caller = frame.f_back
        if caller is not None and _in_library(caller.f_code.co_filename):
            return                       # the library calling itself
        if code in allowed_codes or os.path.abspath(code.co_filename) in allowed_files:
            return
        module = frame.f_globals.get("__name__", "?")
        name = (f"import of {module}" if code.co_name == "<module>" else
                f"{module}.{getattr(code, 'co_qualname', code.co_name)}")
        if name not in called:
            called.append(name)

    own = getattr(fn, "__code__", None)
    if own is not None and _in_library(own.co_filename) and own not in allowed_codes:
        called.append(f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}")
    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        result = fn(*args)
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - any student error becomes a report
        if not called:
            raise ExerciseCheckFailed(
                exercise, case, f"your function raised {type(exc).__name__}: {exc}",
                diagnosis=("look answers up in a table of known inputs (the check draws new "
                           "inputs at every run)") if isinstance(exc, KeyError) else None
            ) from exc
        result = None
    finally:
        sys.setprofile(previous)
    if called:
        raise ExerciseCheckFailed(
            exercise, case, f"your function calls {', '.join(called)} (in the toptwo / "
            "theory_checks packages), which is not allowed here.",
            diagnosis="let the library (or the checker) do the exercise's work",
            hint="the point of the exercise is to write this computation yourself with "
            "NumPy (or SymPy); compare with the library afterwards, outside your function.")
    return result


# ------------------------------------------------------------------ comparisons
def _as_float_array(exercise: str, case: str, got: Any, shape: tuple, hint: str,
                    shape_diagnoses: dict | None = None) -> np.ndarray:
    """``got`` as a float array of ``shape``; sparse matrices, lists and tuples are
    accepted, and for a vector ``shape`` = (K,) also a (K, 1) column or (1, K) row."""
    if hasattr(got, "toarray"):
        got = got.toarray()
    try:
        arr = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseCheckFailed(exercise, case, "your function must return an array of "
                                  f"numbers; got {type(got).__name__} instead.",
                                  hint=hint) from None
    if len(shape) == 1 and arr.ndim == 2 and 1 in arr.shape and arr.size == shape[0]:
        arr = arr.reshape(shape)
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
        matches = []
        for description, value in variants:
            if description is None or value is None:
                continue
            if description not in self.variants:
                self.variants.add(description)
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
