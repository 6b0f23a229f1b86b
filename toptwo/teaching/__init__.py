r"""Autograded checks for the course exercises in ``notebooks/exercises/``.

Each check compares a student's function (or numbers) with the reference computed by
:mod:`toptwo` (or SymPy) on specific inputs. On success it returns a truthy
:class:`CheckResult`; on failure it raises :class:`ExerciseCheckFailed` (a subclass of
``AssertionError``, so nbgrader-style grading cells and plain ``pytest`` treat it as a
failed assertion) whose message says

* which input was used,
* what was expected and what came back,
* a *diagnosis* when the answer matches a typical mistake ("this matches what you get
  if you swap q and 1 - q"), computed by evaluating the wrong variants on the same
  input, and
* a hint tied to the paper's equation.

Exercises and checks (Jeong & Chung, ICML 2023):

=====  ==========================================  ======================================
ex     topic                                       checks
=====  ==========================================  ======================================
1      model, eq. (1) [`eqn:A_dist`]               :func:`check_answer_distribution`,
                                                   :func:`check_ex1_empirical_distribution`
2      Proposition 1 [`prop:binary`] by hand       :func:`check_expected_binary`
3      binary conversion, rank-1 structure         :func:`check_binary_conversion`,
                                                   :func:`check_centered_binary`
4      reliability estimator, eq. (5) [`eqn:hatpi`] :func:`check_reliability_estimator`,
                                                   :func:`check_unbiased_simulation`
5      plug-in MLE, eq. (6) [`eqn:plug-in-mle`]    :func:`check_plugin_mle`,
                                                   :func:`check_mle_differs_from_majority`
6      spammer-hammer scaling (Sec. 5)             :func:`check_fit_exponent`,
                                                   :func:`check_ns_needed`,
                                                   :func:`check_scaling_exponents`
=====  ==========================================  ======================================

The notebooks are nbgrader source notebooks: their cell metadata comes from
:data:`GRADED` (``python -m toptwo.teaching metadata notebooks/exercises``), and student
versions are made by nbgrader (``nbgrader generate_assignment``, or
``python -m toptwo.teaching student SRC OUTDIR``, which runs nbgrader's preprocessors; see
:mod:`toptwo.teaching._nbgrader`). Checks called inside the student's function detect
calls to the library function that does the exercise (``toptwo.label_distribution``,
``toptwo.to_binary``, ``toptwo.plugin_mle``, ...) and fail. SymPy is imported lazily, only by
:func:`check_expected_binary`, so ``import toptwo.teaching`` needs numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np

from ..mle import plugin_mle
from ..model import label_distribution
from ..responses import as_responses
from ._nbgrader import GRADED, make_student_versions, nbgrader_metadata, write_metadata

__all__ = [
    "ExerciseCheckFailed", "CheckResult", "GRADED", "nbgrader_metadata", "write_metadata",
    "check_answer_distribution", "check_ex1_empirical_distribution",
    "check_empirical_distribution", "check_expected_binary", "reference_expected_binary",
    "check_binary_conversion", "check_centered_binary", "check_reliability_estimator",
    "check_unbiased_simulation", "check_plugin_mle", "check_mle_differs_from_majority",
    "check_fit_exponent", "check_ns_needed", "check_scaling_exponents", "make_student_versions",
]


# ----------------------------------------------------------------- reporting
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
                                  "toptwo.teaching:reference_expected_binary"),
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


def _compare(exercise: str, case: str, got: Any, expected: Any,
             variants: Iterable[tuple[str, Any]], hint: str, **tol: float) -> None:
    if not _close(got, expected, **tol):
        variants = list(variants)
        raise ExerciseCheckFailed(exercise, case, "wrong values.", expected=expected, got=got,
                                  hint=hint, diagnosis=_diagnose(got, variants, **tol))


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


# ------------------------------------------------------------- exercise 1
_HINT_EQ1 = ("re-read eq. (1) [`eqn:A_dist`] at the top of the notebook and divide it by s; "
             "a worker is reliable with probability p and guesses among all K labels "
             "otherwise; label c is stored at index c - 1.")


def _mu(p: float, q: float, g: int, h: int, K: int) -> np.ndarray:
    return label_distribution(p, q, g, h, K)


def check_answer_distribution(student_fn: Callable) -> CheckResult:
    """Exercise 1a: ``student_fn(p, q, g, h, K)`` -> the K probabilities of eq. (1).

    The vector holds P(A_ij = c | answered) for c = 1..K at index c - 1 (eq. (1)
    divided by s). Diagnoses: q and 1 - q swapped, labels shifted by one (0-based
    labels), spammer mass (1-p)/K left off g and h, spammer mass spread over the K - 2
    wrong labels only, and g and h swapped.
    """
    ex = "ex1 answer distribution (eq. (1))"
    cases = [(0.8, 0.7, 2, 4, 5), (0.5, 0.9, 3, 1, 3), (0.3, 0.6, 1, 2, 4),
             (1.0, 0.75, 4, 2, 4), (0.0, 0.8, 2, 3, 3)]
    grader = _Grader(ex, _HINT_EQ1)
    for p, q, g, h, K in cases:
        case = f"p={p}, q={q}, (g, h)=({g}, {h}), K={K}"
        try:
            got = _as_float_array(
                ex, case, _call(ex, student_fn, case, p, q, g, h, K,
                                forbidden=("label_distribution", "label_probabilities")),
                (K,), _HINT_EQ1, {(K + 1,): "add an entry for label 0 ('not answered'); "
                                  "the vector covers labels 1..K only"})
        except ExerciseCheckFailed:
            if grader.failed:
                continue
            raise
        ref = _mu(p, q, g, h, K)
        c = np.arange(1, K + 1)
        no_spam_top = p * (q * (c == g) + (1 - q) * (c == h)) + (1 - p) / K * ((c != g) & (c != h))
        spread = p * (q * (c == g) + (1 - q) * (c == h)) + (1 - p) / (K - 2) * ((c != g) & (c != h))
        variants = [
            ("swap q and 1 - q (q is the weight of the ground truth g)", _mu(p, 1 - q, g, h, K)),
            ("swap g and h", _mu(p, q, h, g, K)),
            ("store label c at index c instead of c - 1 (labels are 1..K)", np.roll(ref, 1)),
            ("store label c at index c - 2 (off by one in the label index)", np.roll(ref, -1)),
            ("leave the spammer share (1-p)/K off the labels g and h", no_spam_top),
            ("spread the spammer share over the K - 2 wrong labels only (a spammer "
             "guesses uniformly among all K labels)", spread),
            ("give every label the spammer share 1 - p instead of (1 - p)/K (a spammer "
             "picks each of the K labels with probability 1/K)",
             ref - (1 - p) / K + (1 - p)),
        ]
        total = float(np.sum(got))
        note = (f"Your probabilities sum to {total:.4g}, not 1."
                if abs(total - 1) > 1e-9 else "")
        grader.compare(case, got, ref, variants, note=note)
    return grader.finish(CheckResult("ex1 answer distribution", len(cases)))


def _empirical_reference(A: np.ndarray, K: int) -> np.ndarray:
    R = as_responses(A, K, owner="teaching")
    counts = R.task_label_counts()
    return counts / counts.sum(axis=1, keepdims=True)


_EX1_A = np.array([
    [1, 3, 2, 4, 0],
    [1, 3, 0, 4, 2],
    [2, 3, 2, 3, 2],
    [1, 0, 3, 4, 2],
    [2, 4, 2, 0, 1],
    [1, 3, 1, 4, 2],
])


def check_ex1_empirical_distribution(student_fn_or_values: Any, A: Any = None,
                                     n_labels: int | None = None) -> CheckResult:
    """Exercise 1b: each task's empirical answer distribution, shape (n_tasks, K).

    Pass either the student's function ``f(A, K)`` (called on a literal 6 x 5 matrix and
    on a sample of the model) or the values it returned for ``A`` together with ``A``
    and ``n_labels``. Row j holds the fraction of task j's *answers* (entries != 0)
    equal to each label 1..K. Diagnoses: dividing by the number of workers (counting
    unanswered entries), raw counts, workers in rows, a column for label 0, labels
    shifted by one.
    """
    ex = "ex1 empirical answer distribution"
    if callable(student_fn_or_values):
        from ..model import TopTwoModel
        model = TopTwoModel.scenario("easy", n_workers=20, n_tasks=8, n_labels=4, rng=3)
        inputs = [(_EX1_A, 4), (model.sample(0.7, rng=4).toarray(), 4)]
    else:
        if A is None or n_labels is None:
            raise TypeError("check_ex1_empirical_distribution: pass the student's function, "
                            "or the values together with A=... and n_labels=....")
        inputs = [(np.asarray(A), int(n_labels))]
    hint = ("row j is the histogram of task j's answers (column j of A, zeros left out) "
            "divided by the number of answers, so each row sums to 1; compare it with the "
            "average of eq. (1) over the workers who answered.")
    grader = _Grader(ex, hint)
    for A_case, K in inputs:
        n, m = A_case.shape
        case = f"A of shape {A_case.shape} (workers x tasks), K={K}"
        if grader.failed:
            try:
                got = _as_float_array(ex, case, _call(ex, student_fn_or_values, case,
                                                      A_case.copy(), K), (m, K), hint)
            except ExerciseCheckFailed:
                continue
        elif callable(student_fn_or_values):
            got = _call(ex, student_fn_or_values, case, A_case.copy(), K,
                        forbidden=("task_label_counts", "label_distribution"))
        else:
            got = student_fn_or_values
        if not grader.failed:
            got = _as_float_array(ex, case, got, (m, K), hint, {
                (K, m): "put labels in rows and tasks in columns (return shape (n_tasks, K))",
                (n, K): "compute one histogram per worker (row of A) instead of per task "
                        "(column of A)",
                (m, K + 1): "keep a column for label 0 ('not answered'); leave zeros out",
            })
        ref = _empirical_reference(A_case, K)
        counts = ref * (A_case > 0).sum(axis=0)[:, None]
        variants = [
            ("divide by the number of workers n (unanswered entries counted) instead of "
             "the number of answers", counts / n),
            ("return raw counts instead of fractions", counts),
            ("store label c at index c instead of c - 1 (labels are 1..K)", np.roll(ref, 1, axis=1)),
            ("store label c at index c - 2 (off by one in the label index)", np.roll(ref, -1, axis=1)),
        ]
        grader.compare(case, got, ref, variants)
    return grader.finish(CheckResult("ex1 empirical distribution", len(inputs)))


check_empirical_distribution = check_ex1_empirical_distribution


# ------------------------------------------------------------- exercise 2
def _r_symbolic(K: int, g: int, h: int, k: int, q: Any) -> Any:
    """r_j^(k) of Proposition 1: k/K - q 1(g <= k) - (1 - q) 1(h <= k) (k = 0..K)."""
    import sympy as sp
    return sp.Rational(k, K) - q * (1 if g <= k else 0) - (1 - q) * (1 if h <= k else 0)


def reference_expected_binary(g: int, h: int, k: int, K: int = 3,
                              symbols: tuple | None = None) -> Any:
    """E[A^(k)_ij] as a SymPy expression in p, q, s, straight from eq. (1).

    Sums sign(c > k) * P(A_ij = c) over the labels c (no use of Proposition 1), so a
    student's expression can be compared with the definition itself. ``symbols`` is an
    optional ``(p, q, s)`` triple (e.g. symbols with assumptions); by default plain
    ``sympy.symbols("p q s")``.
    """
    import sympy as sp
    p, q, s = sp.symbols("p q s") if symbols is None else symbols
    total = 0
    for c in range(1, K + 1):
        prob = s * ((1 - p) / sp.Integer(K) + p * (q * int(c == g) + (1 - q) * int(c == h)))
        total += (1 if c > k else -1) * prob
    return sp.expand(total)


def check_expected_binary(student: Any, g: int, h: int, K: int = 3) -> CheckResult:
    """Exercise 2: E[A^(k)_ij] for every k = 1..K-1, one (g, h) configuration.

    Parameters
    ----------
    student : callable or dict
        ``student(k)`` or ``student[k]``: a SymPy expression in the symbols named
        ``p``, ``q``, ``s`` (any assumptions; matched by name).
    g, h : int
        The configuration the student derived (distinct labels in 1..K).
    K : int, default=3
        The number of choices used in the check.

    The reference is computed from eq. (1) directly and compared with
    ``sympy.expand(student - reference) == 0``. Diagnoses: the -s(K-2k)/K shift left out
    (the student wrote 2 s p r^(k)), q and 1 - q swapped, k off by one, the sign
    convention of A^(k) reversed, the factor s left out, g and h swapped.
    """
    import sympy as sp
    ex = f"ex2 E[A^(k)] for K={K}, (g, h)=({g}, {h})"
    if not (1 <= g <= K and 1 <= h <= K and g != h):
        raise ValueError(f"check_expected_binary: (g, h) must be distinct labels in 1..{K}; "
                         f"got ({g}, {h}) instead.")
    p, q, s = sp.symbols("p q s")
    by_name = {"p": p, "q": q, "s": s}
    hint = (f"write P(A_ij = c) for c = 1..{K} from eq. (1) for (g, h) = ({g}, {h}), then "
            "E[A^(k)_ij] = sum of P(c) over c > k minus sum over c <= k (A^(k) = +1 "
            "exactly when A > k).")

    def ref(kk: int, gg: int = g, hh: int = h) -> Any:
        return sp.expand(s * (2 * p * _r_symbolic(K, gg, hh, kk, q)
                              + sp.Rational(K - 2 * kk, K)))

    for k in range(1, K):
        case = f"k={k}"
        raw = (student[k] if isinstance(student, dict) else
               _call(ex, student, case, k, forbidden=("reference_expected_binary",)))
        try:
            expr = sp.sympify(raw)
        except (sp.SympifyError, TypeError) as exc:
            raise ExerciseCheckFailed(ex, case, f"could not read your answer as a SymPy "
                                      f"expression ({exc}).", hint=hint) from None
        unknown = sorted(str(x) for x in expr.free_symbols if str(x) not in by_name)
        if unknown:
            raise ExerciseCheckFailed(ex, case, f"your expression uses symbols {unknown}; "
                                      "use only p, q and s.", got=expr, hint=hint)
        expr = sp.expand(expr.xreplace({x: by_name[str(x)] for x in expr.free_symbols}))
        expected = ref(k)
        assert sp.expand(expected - reference_expected_binary(g, h, k, K)) == 0
        floats = sorted(expr.atoms(sp.Float), key=float)
        if floats:
            exact = sp.expand(sp.nsimplify(expr, rational=True))
            right = sp.expand(exact - expected) == 0
            raise ExerciseCheckFailed(
                ex, case, f"your expression contains the float {floats[0]}"
                + (" (otherwise it is right)." if right else "."), expected=expected, got=expr,
                hint=hint, diagnosis="write a fraction such as 1/3 with Python's `/` "
                "between two numbers, which gives a float; use sp.Rational(1, 3) (or divide "
                "a SymPy expression by 3) so that SymPy keeps exact fractions")
        if sp.expand(expr - expected) == 0:
            continue
        variants = [
            ("leave out the shift s(K - 2k)/K (you wrote 2 s p r^(k), i.e. "
             "E[A^(k)] - s(K-2k)/K)", 2 * s * p * _r_symbolic(K, g, h, k, q)),
            ("swap q and 1 - q", expected.subs(q, 1 - q)),
            ("use k + 1 instead of k (off by one in k: A^(k) = +1 iff A > k, not A >= k)"
             if k + 1 <= K else None, ref(k + 1) if k + 1 <= K else None),
            ("use k - 1 instead of k (off by one in k)", ref(k - 1)),
            ("reverse the sign convention (A^(k) = +1 must mean A > k)", -expected),
            ("leave out the factor s (probability of being asked)", expected / s),
            ("swap g and h", ref(k, h, g)),
        ]
        diag = _join([d for d, v in variants
                      if d is not None and sp.expand(expr - sp.expand(v)) == 0])
        raise ExerciseCheckFailed(ex, case, "your expression differs from E[A^(k)_ij] "
                                  "computed from eq. (1).", expected=expected, got=expr,
                                  hint=hint, diagnosis=diag)
    return CheckResult(f"ex2 E[A^(k)] K={K} (g, h)=({g}, {h})", K - 1)


# ------------------------------------------------------------- exercise 3
def _binary_dense(A: np.ndarray, k: int) -> np.ndarray:
    A = np.asarray(A)
    return np.where(A == 0, 0.0, np.where(A > k, 1.0, -1.0))


_EX3_A = np.array([
    [1, 4, 0, 2, 3],
    [3, 0, 2, 2, 4],
    [0, 1, 4, 3, 3],
    [2, 2, 1, 0, 1],
])


def check_binary_conversion(student_fn: Callable) -> CheckResult:
    """Exercise 3a: ``student_fn(A, k)`` -> A^(k) (dense or sparse, shape of A).

    A^(k)_ij = -1 if 1 <= A_ij <= k, +1 if A_ij > k, 0 if A_ij = 0 (Sec. 3, "Binary
    conversion"). Checked on a literal 4 x 5 matrix (K = 4) for every k = 1..3 and on a
    sample with K = 5. Diagnoses: A >= k (off by one), A > k + 1, signs reversed,
    unanswered entries mapped to -1 or +1, a 0/1 indicator instead of -1/+1.
    """
    ex = "ex3 binary conversion (Sec. 3)"
    from ..model import TopTwoModel
    sample = TopTwoModel.scenario("hard", n_workers=7, n_tasks=9, n_labels=5, rng=5)
    B = sample.sample(0.6, rng=6).toarray()
    inputs = [(_EX3_A, k, 4) for k in (1, 2, 3)] + [(B, k, 5) for k in (1, 2, 3, 4)]
    hint = ("A^(k)_ij = -1 if 1 <= A_ij <= k, +1 if k < A_ij <= K, 0 if A_ij = 0 "
            "(not answered); Sec. 3 'Binary conversion', used in Proposition 1.")
    grader = _Grader(ex, hint)
    for A_case, k, K in inputs:
        case = f"A of shape {A_case.shape} with K={K}, k={k}"
        try:
            got = _as_float_array(ex, case, _call(ex, student_fn, case, A_case.copy(), k,
                                                  forbidden=("to_binary", "binary_stack")),
                                  A_case.shape, hint)
        except ExerciseCheckFailed:
            if grader.failed:
                continue
            raise
        ref = _binary_dense(A_case, k)
        observed = A_case > 0
        variants = [
            ("test A >= k instead of A > k (off by one in k)", _binary_dense(A_case, k - 1)),
            ("test A > k + 1 instead of A > k (off by one in k)", _binary_dense(A_case, k + 1)),
            ("reverse the signs (+1 must mean A > k)", -ref),
            ("map unanswered entries (A = 0) to -1 instead of 0", np.where(observed, ref, -1.0)),
            ("map unanswered entries (A = 0) to +1 instead of 0", np.where(observed, ref, 1.0)),
            ("return the 0/1 indicator of A > k instead of -1/+1", (A_case > k).astype(float)),
        ]
        grader.compare(case, got, ref, variants)
    return grader.finish(CheckResult("ex3 binary conversion", len(inputs)))


def check_centered_binary(student_fn: Callable) -> CheckResult:
    """Exercise 3b: ``student_fn(EA, k, s, K)`` -> EA - s (K - 2k)/K, the rank-1 part.

    Fed the exact E[A^(k)] of a small model, the result must equal 2 s p (r^(k))^T
    (Proposition 1 [`prop:binary`]) and have rank 1. Diagnoses: shift left out, shift
    without the factor s, sign of (K - 2k) reversed, k off by one in the shift,
    dividing by K - 2 (or 2) instead of K.
    """
    ex = "ex3 centered E[A^(k)] (Proposition 1)"
    from ..model import TopTwoModel
    model = TopTwoModel.random(6, 8, 5, reliability_range=(0.1, 0.9), rng=7)
    s = 0.4
    K = model.n_labels
    hint = ("re-read the shift in Proposition 1 [`prop:binary`] at the top of the notebook: "
            "the same constant for every entry, depending on s, K and k; check each factor, "
            "the denominator and the sign.")
    n_cases = 0
    grader = _Grader(ex, hint)
    for k in range(1, K):
        EA = model.expected_binary(k, s)
        case = f"E[A^(k)] of a 6 x 8 model with K={K}, s={s}, k={k}"
        try:
            got = _as_float_array(ex, case, _call(ex, student_fn, case, EA.copy(), k, s, K),
                                  EA.shape, hint)
        except ExerciseCheckFailed:
            if grader.failed:
                continue
            raise
        ref = 2 * s * np.outer(model.reliability, model.r(k))
        variants = [
            ("leave out the shift s(K - 2k)/K", EA),
            ("subtract (K - 2k)/K without the factor s", EA - (K - 2 * k) / K),
            ("subtract s(2k - K)/K (sign of the shift reversed)", EA - s * (2 * k - K) / K),
            ("use k - 1 in the shift (off by one in k)", EA - s * (K - 2 * (k - 1)) / K),
            ("use k + 1 in the shift (off by one in k)", EA - s * (K - 2 * (k + 1)) / K),
            ("divide by K - 2 instead of K in the shift", EA - s * (K - 2 * k) / (K - 2)),
            ("divide by 2 instead of K in the shift", EA - s * (K - 2 * k) / 2),
        ]
        grader.compare(case, got, ref, variants)
        n_cases += 1
    return grader.finish(CheckResult("ex3 centered binary", n_cases))


# ------------------------------------------------------------- exercise 4
_HINT_EQ5 = ("compare your code with eq. (5) [`eqn:hatpi`] in the handout term by term: "
             "a hit is an answer equal to g_j or h_j, `rate` is s (1 - s_1), and the "
             "denominator is m s (1 - s_1), the expected number of answers in A2.")


def _hits(A2: np.ndarray, top: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hit_g = (A2 == top[None, :, 0]) & (A2 > 0)
    hit_h = (A2 == top[None, :, 1]) & (A2 > 0)
    return hit_g.sum(axis=1).astype(float), (hit_g | hit_h).sum(axis=1).astype(float)


def check_reliability_estimator(student_fn: Callable) -> CheckResult:
    """Exercise 4a: ``student_fn(A2, top_two, rate, K)`` -> p_hat (n_workers,), eq. (5).

    ``A2`` is a dense (n_workers, n_tasks) response matrix, ``top_two`` the (n_tasks, 2)
    array of (g_j, h_j) and ``rate`` = s (1 - s_1). Diagnoses: dividing by K instead of
    K - 2 (factor K/K), factor 1/(K-2) or K/(K-1), the -2/K left out or written -1/K,
    only hits on g counted, not dividing by the rate, dividing by n instead of m,
    dividing by each worker's own number of answers.
    """
    ex = "ex4 reliability estimator (eq. (5))"
    from ..model import TopTwoModel
    cases = []
    for K, rate, seed in ((4, 0.5, 8), (5, 0.3, 9), (3, 0.6, 10)):
        model = TopTwoModel.random(6, 30, K, reliability_range=(0.0, 1.0), rng=seed)
        cases.append((model.sample(rate, rng=seed + 100).toarray(), model.top_two, rate, K))
    grader = _Grader(ex, _HINT_EQ5)
    for A2, top, rate, K in cases:
        n, m = A2.shape
        case = f"A2 of shape {A2.shape}, K={K}, rate=s(1-s_1)={rate}"
        try:
            got = _as_float_array(ex, case, _call(ex, student_fn, case, A2.copy(), top.copy(),
                                                    rate, K, forbidden=("estimate_reliability",)),
                                  (n,), _HINT_EQ5)
        except ExerciseCheckFailed:
            if grader.failed:
                continue
            raise
        hits_g, hits = _hits(A2, top)
        answered = (A2 > 0).sum(axis=1).astype(float)
        frac = hits / (m * rate)
        ref = K / (K - 2) * (frac - 2 / K)
        with np.errstate(divide="ignore", invalid="ignore"):
            per_worker = K / (K - 2) * (hits / answered - 2 / K)
        variants = [
            ("divide by K instead of K - 2 (factor K/K = 1)", frac - 2 / K),
            ("use the factor 1/(K - 2) instead of K/(K - 2)", (frac - 2 / K) / (K - 2)),
            ("use the factor K/(K - 1) instead of K/(K - 2)", K / (K - 1) * (frac - 2 / K)),
            ("leave out the -2/K (the spammers' chance of hitting the top two)",
             K / (K - 2) * frac),
            ("subtract 1/K instead of 2/K (two labels can be hit by chance)",
             K / (K - 2) * (frac - 1 / K)),
            ("count only answers equal to g_j (h_j counts as a hit too)",
             K / (K - 2) * (hits_g / (m * rate) - 2 / K)),
            ("divide the hits by m instead of m s (1 - s_1)", K / (K - 2) * (hits / m - 2 / K)),
            ("divide the hits by n s (1 - s_1) instead of m s (1 - s_1)",
             K / (K - 2) * (hits / (n * rate) - 2 / K)),
            ("divide by each worker's own number of answers (a fine estimator, but eq. (5) "
             "divides by m s (1 - s_1))", per_worker),
        ]
        grader.compare(case, got, ref, variants)
    return grader.finish(CheckResult("ex4 reliability estimator", len(cases)))


def check_unbiased_simulation(p_hat_mean: Any, p_true: Any, *, n_tasks: int, rate: float,
                              n_labels: int, n_replicates: int,
                              stage1_rate: float | None = None) -> CheckResult:
    """Exercise 4b: the average of eq. (5) over replicates is within noise of p.

    Given the true top two, hits_i ~ Binomial(m, sigma_i) with sigma_i = rate (p_i +
    2 (1 - p_i)/K), so one p_hat_i has standard deviation K/(K-2) sqrt(sigma_i (1 -
    sigma_i)/m) / rate; the mean of R replicates must lie within 5 of those over sqrt(R)
    of p_i (normal tail 6e-7 per worker). Diagnoses: averages matching K/(K-2) (p +
    2(1-p)/K) (the -2/K left out), (K-2)/K p (divided by K instead of K - 2), and, when
    ``stage1_rate`` = s s_1 is given, the estimator applied to the stage-1 half A^1
    (answer rate ``stage1_rate``) with the rate of A^2 (pick s_1 != 1/2 so that the two
    halves differ).
    """
    ex = "ex4 unbiasedness by simulation (Lemma 1)"
    mean = np.asarray(p_hat_mean, dtype=float)
    p = np.asarray(p_true, dtype=float)
    K, m, R = int(n_labels), int(n_tasks), int(n_replicates)
    case = f"{p.shape[0]} workers, m={m}, rate={rate}, K={K}, {R} replicates"
    if mean.shape != p.shape:
        raise ExerciseCheckFailed(ex, case, f"wrong shape: expected {p.shape}, got "
                                  f"{mean.shape}.", hint="average p_hat over replicates, "
                                  "one value per worker")
    sigma = rate * (p + 2 * (1 - p) / K)
    sd = K / (K - 2) * np.sqrt(sigma * (1 - sigma) / m) / rate
    bound = 5 * sd / np.sqrt(R)
    bad = np.abs(mean - p) > bound
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        diag = None
        if _close(mean, K / (K - 2) * (sigma / rate), atol=6 * bound.max()):
            diag = "leave out the -2/K in eq. (5)"
        elif _close(mean, (K - 2) / K * p, atol=6 * bound.max()):
            diag = "divide by K instead of K - 2 in eq. (5)"
        elif stage1_rate is not None and _close(
                mean, K / (K - 2) * (stage1_rate * (p + 2 * (1 - p) / K) / rate - 2 / K),
                atol=6 * bound.max()):
            diag = ("apply eq. (5) to the stage-1 half A^1 instead of the held-out half A^2 "
                    "(toptwo.split_entries returns (A^1, A^2); A^1 has answer rate s s_1)")
        raise ExerciseCheckFailed(
            ex, case, f"the average p_hat of worker {i} is {mean[i]:.4g}, but p_{i} = "
            f"{p[i]:.4g}; with {R} replicates the average should be within {bound[i]:.3g} "
            "(5 standard errors).", expected=p, got=mean, diagnosis=diag,
            hint="use the true (g, h), fresh responses in each replicate, and the held-out "
            "half A^2 with rate s (1 - s_1).")
    return CheckResult("ex4 unbiased simulation", int(p.shape[0]))


# ------------------------------------------------------------- exercise 5
_HINT_EQ6 = ("compare your weights with eq. (6) [`eqn:plug-in-mle`] in the handout: which "
             "one carries q and which 1 - q, the factor K and the '+ 1' inside the log; "
             "return (g_hat, h_hat) as labels 1..K.")

#: (answers, p, q, K): literal one-task inputs. Unanswered = 0.
_EX5_CASES = [
    # one near-hammer answers 3 (x2), three spammers answer 1
    (np.array([3, 1, 1, 1, 3, 0, 2]), np.array([0.95, 0.0, 0.05, 0.0, 0.9, 0.3, 0.2]), 0.7, 4),
    # reliable workers split 2/4, noisy majority on 4
    (np.array([2, 2, 4, 4, 4, 4, 1]), np.array([0.9, 0.85, 0.8, 0.1, 0.1, 0.1, 0.2]), 0.8, 5),
    (np.array([1, 3, 3, 2, 2, 2, 0, 3]), np.array([0.6, 0.9, 0.9, 0.2, 0.3, 0.25, 0.5, 0.1]),
     0.6, 3),
    (np.array([5, 5, 1, 1, 1, 4, 4, 4, 4]),
     np.array([0.97, 0.97, 0.7, 0.6, 0.65, 0.05, 0.1, 0.02, 0.04]), 0.55, 5),
]


def _mle_pair(answers: np.ndarray, p: np.ndarray, q: float, K: int, *,
              weight: Callable | None = None) -> tuple[int, int]:
    """Brute force over ordered pairs (a, b), a != b (ties: smallest a, then b)."""
    if weight is None:
        def weight(pp: np.ndarray, qq: float) -> np.ndarray:
            return np.log1p(K * pp * qq / (1.0 - pp))
    best, arg = -np.inf, (0, 0)
    wa, wb = weight(p, q), weight(p, 1 - q)
    for a in range(1, K + 1):
        for b in range(1, K + 1):
            if a == b:
                continue
            score = wa[answers == a].sum() + wb[answers == b].sum()
            if score > best + 1e-12:
                best, arg = score, (a, b)
    return arg


def _majority_pair(answers: np.ndarray, K: int) -> tuple[int, int] | None:
    counts = np.bincount(answers[answers > 0], minlength=K + 1)[1:]
    order = np.argsort(-counts, kind="stable")
    if counts[order[1]] == counts[order[2]] or counts[order[0]] == counts[order[1]]:
        return None       # ambiguous majority vote
    return int(order[0]) + 1, int(order[1]) + 1


def check_plugin_mle(student_fn: Callable) -> CheckResult:
    """Exercise 5a: ``student_fn(answers, p, q, K)`` -> (g_hat, h_hat) of eq. (6).

    ``answers`` holds one task's column of A (0 = not answered), ``p`` the workers'
    reliabilities (all < 1), ``q`` the task's confusion probability. Diagnoses:
    majority vote, q and 1 - q swapped, the pair returned as (h, g), 0-based labels,
    the "+ 1" inside the log left out, the factor K left out, weights log p.
    """
    ex = "ex5 plug-in MLE (eq. (6))"
    # consistency of the literal cases with the package's eq. (6)
    for answers, p, q, K in _EX5_CASES:
        R = as_responses(answers[:, None], K, owner="teaching")
        assert tuple(plugin_mle(R, p, np.array([q]))[0]) == _mle_pair(answers, p, q, K)
    failure: tuple | None = None
    mismatched: set[str] = set()
    for answers, p, q, K in _EX5_CASES:
        case = f"answers={answers.tolist()}, p={p.tolist()}, q={q}, K={K}"
        try:
            got = _call(ex, student_fn, case, answers.copy(), p.copy(), q, K,
                        forbidden=("plugin_mle", "best_pairs"))
        except ExerciseCheckFailed:
            if failure is not None:
                continue
            raise
        try:
            got_pair = tuple(int(v) for v in np.asarray(got).ravel())
        except (TypeError, ValueError):
            got_pair = None
        if got_pair is None or len(got_pair) != 2:
            if failure is not None:
                continue
            raise ExerciseCheckFailed(ex, case, "your function must return a pair (a, b) of "
                                      f"labels; got {got!r} instead.", hint=_HINT_EQ6)
        ref = _mle_pair(answers, p, q, K)
        with np.errstate(divide="ignore"):
            variants = [
                ("use majority vote (most and second most frequent answers) instead of "
                 "weighting each answer by the worker's reliability",
                 _majority_pair(answers, K)),
                ("swap q and 1 - q (the weight with q belongs to a = g)",
                 _mle_pair(answers, p, 1 - q, K)),
                ("return (h, g) instead of (g, h)", ref[::-1]),
                ("return 0-based labels (labels are 1..K)", (ref[0] - 1, ref[1] - 1)),
                ("leave out the '+ 1' inside the log (spammers then get weight -inf "
                 "instead of 0)",
                 _mle_pair(answers, p, q, K, weight=lambda pp, qq: np.log(K * pp * qq / (1 - pp)))),
                ("leave out the factor K inside the log",
                 _mle_pair(answers, p, q, K, weight=lambda pp, qq: np.log1p(pp * qq / (1 - pp)))),
                ("weight answers by log(p_i) or p_i alone (the weight must depend on q too)",
                 _mle_pair(answers, p, q, K, weight=lambda pp, qq: pp + 0 * qq)),
            ]
        matches = [d for d, v in variants if v is not None and tuple(v) == got_pair]
        mismatched |= {d for d, v in variants if v is not None and tuple(v) != got_pair}
        if failure is None and got_pair != ref:
            failure = (case, ref, got_pair, matches)
    if failure is not None:
        case, ref, got_pair, matches = failure
        consistent = [d for d in matches if d not in mismatched]
        raise ExerciseCheckFailed(ex, case, "wrong pair.", expected=ref, got=got_pair,
                                  hint=_HINT_EQ6, diagnosis=_join(consistent or matches))
    return CheckResult("ex5 plug-in MLE", len(_EX5_CASES))


def check_mle_differs_from_majority(answers: Any, p: Any, q: float, K: int) -> CheckResult:
    """Exercise 5b: a concrete task where eq. (6) and majority vote disagree.

    ``answers`` is one task's column of A (labels 1..K, 0 = not answered), ``p`` the
    reliabilities (in [0, 1)), ``q`` in (1/2, 1]. The majority vote must be unambiguous
    (no ties among the top three counts) and differ from the plug-in MLE pair.
    """
    ex = "ex5 MLE is not majority vote"
    answers = np.asarray(answers)
    p = np.asarray(p, dtype=float)
    case = f"answers={answers.tolist()}, p={np.round(p, 4).tolist()}, q={q}, K={K}"
    if answers.ndim != 1 or p.shape != answers.shape:
        raise ExerciseCheckFailed(ex, case, "answers and p must be 1-D arrays of the same "
                                  "length (one entry per worker).")
    if not ((answers >= 0) & (answers <= K)).all():
        raise ExerciseCheckFailed(ex, case, f"answers must be labels in 1..{K} or 0.")
    if not ((p >= 0) & (p < 1)).all() or not 0.5 < q <= 1:
        raise ExerciseCheckFailed(ex, case, "p must lie in [0, 1) and q in (1/2, 1].")
    mv = _majority_pair(answers, K)
    if mv is None:
        raise ExerciseCheckFailed(ex, case, "the majority vote of this task has a tie "
                                  "among its top three counts; pick an example where "
                                  "majority vote is unambiguous.", hint=_HINT_EQ6)
    mle = _mle_pair(answers, p, q, K)
    if mle == mv:
        raise ExerciseCheckFailed(ex, case, "majority vote and eq. (6) agree here.",
                                  expected="a different pair", got=mle, hint=(
                                      "give the minority answers to workers with p close "
                                      "to 1 and the majority answers to spammers (p = 0): "
                                      "eq. (6) gives a spammer's answer weight log(1) = 0."))
    return CheckResult(f"ex5 MLE {mle} vs majority {mv}", 1)


# ------------------------------------------------------------- exercise 6
def check_fit_exponent(student_fn: Callable) -> CheckResult:
    """Exercise 6a: ``student_fn(alphas, ns)`` -> b in the power law ns = c alpha^b.

    The least-squares slope of log(ns) against log(alpha). Diagnoses: the intercept
    returned, the sign flipped, logs left out on one axis, the regression reversed
    (log alpha on log ns).
    """
    ex = "ex6 scaling exponent fit"
    rng = np.random.default_rng(12)
    alphas = np.array([0.1, 0.2, 0.3, 0.5, 0.8])
    cases = [(alphas, 3.0 * alphas ** -2.0), (alphas, 7.0 * alphas ** -1.0),
             (alphas, 5.0 * alphas ** -1.5 * np.exp(0.1 * rng.standard_normal(5)))]
    hint = ("a power law ns = c alpha^b is a straight line on log-log axes; b is the slope "
            "of that line, fitted by least squares.")
    grader = _Grader(ex, hint)
    for a, ns in cases:
        case = f"alphas={a.tolist()}, ns={np.round(ns, 3).tolist()}"
        try:
            got = _call(ex, student_fn, case, a.copy(), ns.copy())
        except ExerciseCheckFailed:
            if grader.failed:
                continue
            raise
        try:
            got = float(np.asarray(got).reshape(()))
        except (TypeError, ValueError):
            if grader.failed:
                continue
            raise ExerciseCheckFailed(ex, case, "return one number (the exponent b); got "
                                      f"{got!r}.", hint=hint) from None
        slope, icpt = np.polyfit(np.log(a), np.log(ns), 1)
        variants = [
            ("return the intercept log(c) instead of the slope", icpt),
            ("flip the sign (report b, not -b: ns grows as alpha shrinks, so b < 0)", -slope),
            ("fit ns (without log) against log(alpha)", np.polyfit(np.log(a), ns, 1)[0]),
            ("fit log(ns) against alpha (without log)", np.polyfit(a, np.log(ns), 1)[0]),
            ("regress log(alpha) on log(ns) (the reversed regression)",
             np.polyfit(np.log(ns), np.log(a), 1)[0]),
            ("fit the slope of 1/alpha^... against 1/alpha; use logs on both axes",
             np.polyfit(1 / a, ns, 1)[0]),
        ]
        grader.compare(case, got, slope, variants, rtol=1e-6, atol=1e-6)
    return grader.finish(CheckResult("ex6 exponent fit", len(cases)))


#: The scan of exercise 6b: geometric grid of n s, error target, replicates, workers.
NS_GRID = np.geomspace(8, 600, 15)
NS_TARGET, NS_REPS, NS_WORKERS = 0.1, 2, 600
#: Test curves for :func:`check_ns_needed`: (method, alpha) -> n s at which the error
#: would be 1 (the error falls like (ns0/ns)^1.5), and the replicate offsets.
_NS_CASES = {("mv", 0.3): 6 / 0.3 ** 2, ("tt2", 0.3): 12 / 0.3, ("mv", 0.7): 6 / 0.7 ** 2}
_NS_OFFSETS = (0.03, -0.03)


def _fake_error(method: str, alpha: float, ns: float, rep: int) -> float:
    ns0 = _NS_CASES[(method, alpha)]
    return float(min(1.0, (ns0 / ns) ** 1.5) + _NS_OFFSETS[rep % len(_NS_OFFSETS)])


def _ns_reference(method: str, alpha: float, *, target: float = NS_TARGET,
                  reps: tuple = (0, 1), interpolate: str = "log") -> float:
    """Reference scan on the test curve (and its typical wrong variants)."""
    previous = None
    for ns in NS_GRID:
        err = float(np.mean([_fake_error(method, alpha, ns, r) for r in reps]))
        if err <= target:
            if previous is None or interpolate == "none":
                return float(ns)
            ns0, err0 = previous
            if interpolate == "previous":
                return float(ns0)
            t = (err0 - target) / (err0 - err)
            if interpolate == "linear":
                return float(ns0 + t * (ns - ns0))
            return float(np.exp(np.log(ns0) + t * np.log(ns / ns0)))
        previous = (ns, err)
    return float("nan")


def check_ns_needed(student_fn: Callable) -> CheckResult:
    """Exercise 6b: ``ns_needed(method, alpha, rng)`` scans n s and interpolates.

    The student's function is run with the notebook's ``pair_error`` replaced (in the
    function's globals, restored afterwards) by deterministic error curves whose
    replicates differ, so the exact answer is known: the average over ``REPS``
    replicates on ``NS_GRID`` first falls to ``TARGET`` = 10% between two grid points,
    and the answer interpolates linearly in log(n s). Diagnoses: no interpolation (the
    first grid point at or below the target, or the last one above it), linear instead
    of log-linear interpolation, s = ns / n returned instead of n s, a 20% or 5% target,
    one replicate instead of the average, numbers returned without calling
    ``pair_error`` (hard-coded).
    """
    ex = "ex6 queries per task for 10% error"
    hint = ("scan NS_GRID in order, average REPS calls of pair_error at each point, stop at "
            "the first average <= TARGET and interpolate between that point and the one "
            "before it on a log scale of n s; return n s itself.")
    g = getattr(student_fn, "__globals__", None)
    if g is None:
        raise TypeError("check_ns_needed: pass your Python function ns_needed itself; got "
                        f"{type(student_fn).__name__} instead.")
    calls: dict = {}

    def fake_pair_error(method: str, alpha: float, ns: float, rng: Any = None) -> float:
        key = (method, float(alpha), float(ns))
        rep = calls.get(key, 0)
        calls[key] = rep + 1
        return _fake_error(method, float(alpha), float(ns), rep)

    patch = {"pair_error": fake_pair_error, "NS_GRID": NS_GRID.copy(), "TARGET": NS_TARGET,
             "REPS": NS_REPS, "N_WORKERS": NS_WORKERS}
    missing = object()
    saved = {name: g.get(name, missing) for name in patch}
    failure: tuple | None = None
    mismatched: set[str] = set()
    try:
        g.update(patch)
        for (method, alpha) in _NS_CASES:
            case = f"ns_needed({method!r}, {alpha}, rng) on a test error curve"
            calls.clear()
            try:
                got = _call(ex, student_fn, case, method, alpha, np.random.default_rng(0))
                got = float(np.asarray(got, dtype=float).reshape(()))
            except (ExerciseCheckFailed, TypeError, ValueError) as exc:
                if failure is not None:
                    continue
                if isinstance(exc, ExerciseCheckFailed):
                    raise
                raise ExerciseCheckFailed(ex, case, "return one number (the n s needed); "
                                          f"got {got!r}.", hint=hint) from None
            ref = _ns_reference(method, alpha)
            variants = [
                ("return a value without calling pair_error (hard-coded numbers cannot "
                 "follow the error curve)", got if not calls else None),
                ("return the first grid point at or below the target without interpolating",
                 _ns_reference(method, alpha, interpolate="none")),
                ("return the last grid point above the target without interpolating",
                 _ns_reference(method, alpha, interpolate="previous")),
                ("interpolate linearly in n s instead of in log(n s)",
                 _ns_reference(method, alpha, interpolate="linear")),
                ("return s = ns / n instead of the queries per task n s",
                 ref / NS_WORKERS),
                ("use a 20% target instead of TARGET = 10%",
                 _ns_reference(method, alpha, target=0.2)),
                ("use a 5% target instead of TARGET = 10%",
                 _ns_reference(method, alpha, target=0.05)),
                ("use one replicate per grid point instead of the average of REPS",
                 _ns_reference(method, alpha, reps=(0,))),
            ]
            matches = [d for d, v in variants if v is not None and _close(got, v, rtol=1e-6)]
            mismatched |= {d for d, v in variants
                           if v is not None and not _close(got, v, rtol=1e-6)}
            if failure is None and not _close(got, ref, rtol=1e-6):
                failure = (case, ref, got, matches)
    finally:
        for name, value in saved.items():
            if value is missing:
                g.pop(name, None)
            else:
                g[name] = value
    if failure is not None:
        case, ref, got, matches = failure
        consistent = [d for d in matches if d not in mismatched]
        raise ExerciseCheckFailed(ex, case, "wrong n s.", expected=ref, got=got, hint=hint,
                                  diagnosis=_join(consistent or matches))
    return CheckResult("ex6 queries per task", len(_NS_CASES))


#: Ranges for the two exponents at the notebook's size (n = 600 workers, m = 150 tasks,
#: K = 3, q in (0.65, 0.75], alpha in {0.2, 0.3, 0.45, 0.7}, 2 replicates per point).
#: Seeds 0-19 gave b_MV in [-2.24, -1.98] and b_TopTwo2 in [-1.04, -0.80]; the ranges
#: leave a wide margin around those. Sec. 5 predicts -2 and -1.
MV_EXPONENT_RANGE = (-2.8, -1.4)
TT2_EXPONENT_RANGE = (-1.4, -0.5)
MIN_EXPONENT_GAP = 0.5


def check_scaling_exponents(mv_exponent: float, tt2_exponent: float) -> CheckResult:
    """Exercise 6b: exponents b of n s ~ alpha^b for majority vote and TopTwo2 (Sec. 5).

    Sec. 5: in the spammer-hammer model majority vote needs n s = Theta(alpha^-2 log(1/eps))
    and the spectral algorithm n s = Theta(alpha^-1 log(1/eps)). At classroom sizes only
    coarse statements are robust, so the check asks: majority vote's exponent lies in
    ``MV_EXPONENT_RANGE``, TopTwo2's in ``TT2_EXPONENT_RANGE``, and majority vote's is
    steeper by at least ``MIN_EXPONENT_GAP``.
    """
    ex = "ex6 scaling exponents (Sec. 5)"
    mv, tt = float(mv_exponent), float(tt2_exponent)
    case = f"majority vote b={mv:.3g}, TopTwo2 b={tt:.3g}"
    hint = ("Sec. 5: majority vote needs n s ~ 1/alpha^2, TopTwo ~ 1/alpha, so b_MV ~ -2 "
            "and b_TopTwo2 ~ -1 (b is the slope of log(ns) against log(alpha)).")
    lo, hi = MV_EXPONENT_RANGE
    tlo, thi = TT2_EXPONENT_RANGE
    if mv > 0 or tt > 0:
        raise ExerciseCheckFailed(ex, case, "an exponent is positive: fewer hammers cannot "
                                  "need fewer queries.", hint=hint, diagnosis=(
                                      "report 2 and 1 for 1/alpha^2 and 1/alpha (b is the "
                                      "exponent of alpha itself, so it is negative), or fit "
                                      "against 1/alpha"))
    if lo <= tt <= hi and tlo <= mv <= thi:
        raise ExerciseCheckFailed(ex, case, "the exponents look swapped.", hint=hint,
                                  diagnosis="pass the two methods' exponents in the wrong order")
    if not lo <= mv <= hi:
        raise ExerciseCheckFailed(ex, case, f"majority vote's exponent should lie in "
                                  f"[{lo}, {hi}].", hint=hint + " Check the error target "
                                  "(10%) and that n s covers the crossing for every alpha.")
    if not tlo <= tt <= thi:
        raise ExerciseCheckFailed(ex, case, f"TopTwo2's exponent should lie in [{tlo}, {thi}].",
                                  hint=hint + " Check the error target (10%) and that n s "
                                  "covers the crossing for every alpha.")
    if not mv <= tt - MIN_EXPONENT_GAP:
        raise ExerciseCheckFailed(ex, case, f"majority vote's exponent should be steeper by at "
                                  f"least {MIN_EXPONENT_GAP}.", hint=hint)
    return CheckResult("ex6 scaling exponents", 1)
