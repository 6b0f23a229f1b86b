"""Exercise 2: E[A^(k)_ij] by hand and r^(k) of Proposition 1 [`prop:binary`] (SymPy).

SymPy is imported lazily. The right answers are computed inline from eq. (1) (a sum of
+-P(A_ij = c) over the labels); the student's expression is compared *exactly*
(``sympy.expand(student - reference) == 0``), i.e. for every p, q, s at once, so there
is no input to look up. Any call from the student's function into ``toptwo`` or
``theory_checks`` (which hold SymPy versions of these formulas) fails the check.
"""

from __future__ import annotations

from typing import Any, Callable

from .report import CheckResult, ExerciseCheckFailed, _call, _join

__all__ = ["check_expected_binary", "check_r_case_one"]


def _read(ex: str, raw: Any, case: str, hint: str) -> Any:
    """The student's answer as a SymPy expression in the symbols p, q, s (by name)."""
    import sympy as sp
    p, q, s = sp.symbols("p q s")
    by_name = {"p": p, "q": q, "s": s}
    try:
        expr = sp.sympify(raw)
    except (sp.SympifyError, TypeError) as exc:
        raise ExerciseCheckFailed(ex, case, f"could not read your answer as a SymPy "
                                  f"expression ({exc}).", hint=hint) from None
    unknown = sorted(str(x) for x in expr.free_symbols if str(x) not in by_name)
    if unknown:
        raise ExerciseCheckFailed(ex, case, f"your expression uses symbols {unknown}; "
                                  "use only p, q and s.", got=expr, hint=hint)
    return sp.expand(expr.xreplace({x: by_name[str(x)] for x in expr.free_symbols}))


def _float_report(ex: str, case: str, expr: Any, right: Any, hint: str) -> None:
    import sympy as sp
    floats = sorted(expr.atoms(sp.Float), key=float)
    if floats:
        exact = sp.expand(sp.nsimplify(expr, rational=True))
        ok = sp.expand(exact - right) == 0
        raise ExerciseCheckFailed(
            ex, case, f"your expression contains the float {floats[0]}"
            + (" (otherwise it is right)." if ok else "."), got=expr, hint=hint,
            diagnosis="write a fraction such as 1/3 or k/K with Python's `/` between two "
            "numbers, which gives a float; use sp.Rational(1, 3) (or divide a SymPy "
            "expression by 3) so that SymPy keeps exact fractions")


def check_expected_binary(student: Callable, g: int, h: int, K: int = 3) -> CheckResult:
    """Exercise 2a: E[A^(k)_ij] for every k = 1..K-1, one (g, h) configuration.

    Parameters
    ----------
    student : callable
        ``student(k)``: a SymPy expression in the symbols named ``p``, ``q``, ``s`` (any
        assumptions; matched by name).
    g, h : int
        The configuration the student derived (distinct labels in 1..K).
    K : int, default=3
        The number of choices used in the check.

    Diagnoses: the -s(K-2k)/K shift left out (the student wrote 2 s p r^(k)), q and
    1 - q swapped, k off by one, the sign convention of A^(k) reversed, the factor s
    left out, g and h swapped, floats instead of exact fractions.
    """
    import sympy as sp
    ex = f"ex2 E[A^(k)] for K={K}, (g, h)=({g}, {h})"
    if not (1 <= g <= K and 1 <= h <= K and g != h):
        raise ValueError(f"check_expected_binary: (g, h) must be distinct labels in 1..{K}; "
                         f"got ({g}, {h}) instead.")
    p, q, s = sp.symbols("p q s")
    hint = (f"write P(A_ij = c) for c = 1..{K} from eq. (1) for (g, h) = ({g}, {h}), then "
            "E[A^(k)_ij] = sum of P(c) over c > k minus sum over c <= k (A^(k) = +1 "
            "exactly when A > k).")

    def ref(kk: int, gg: int = g, hh: int = h) -> Any:
        prob = [s * (p * q * int(c == gg) + p * (1 - q) * int(c == hh) + (1 - p) / sp.Integer(K))
                for c in range(1, K + 1)]                                     # eq. (1)
        return sp.expand(sum(pc if c > kk else -pc for c, pc in zip(range(1, K + 1), prob)))

    for k in range(1, K):
        case = f"k={k}"
        expr = _read(ex, _call(ex, student, case, k), case, hint)
        expected = ref(k)
        _float_report(ex, case, expr, expected, hint)
        if sp.expand(expr - expected) == 0:
            continue
        shift = s * sp.Rational(K - 2 * k, K)
        variants = [
            ("leave out the shift s(K - 2k)/K (you wrote 2 s p r^(k), i.e. "
             "E[A^(k)] - s(K-2k)/K)", expected - shift),
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
                                  "computed from eq. (1).", got=expr, hint=hint,
                                  diagnosis=diag)
    return CheckResult(f"ex2 E[A^(k)] K={K} (g, h)=({g}, {h})", K - 1)


def check_r_case_one(student: Callable) -> CheckResult:
    """Exercise 2b: ``student(k)`` -> r^(k) of Proposition 1 for K = 3, (g, h) = (3, 1).

    Graded against E[A^(k)] computed here from eq. (1), not against the student's 2a, so
    a mistake in 2a costs only 2a: the check confirms E[A^(k)] - s(K-2k)/K = 2 s p r^(k)
    for k = 1, 2 exactly. Diagnoses: r^(k) off by the factor 2 (the rank-one part written
    s p r^T instead of 2 s p r^T), the formula of another case of the proposition
    (k < h, g <= k, or Case II's k/K - q), the sign reversed, q and 1 - q swapped, and a
    float k/K.
    """
    import sympy as sp
    K, g, h = 3, 3, 1
    ex = "ex2 r^(k) of Proposition 1, K=3, (g, h)=(3, 1)"
    p, q, s = sp.symbols("p q s")
    hint = ("Proposition 1: E[A^(k)] - s(K-2k)/K = 2 s p r^(k); for (g, h) = (3, 1) both "
            "k = 1 and k = 2 satisfy h <= k < g, so Case I's middle line applies. Check the "
            "factor 2 and which case of the proposition you used.")
    for k in (1, 2):
        case = f"k={k}"
        expr = _read(ex, _call(ex, student, case, k), case, hint)
        prob = [s * (p * q * int(c == g) + p * (1 - q) * int(c == h) + (1 - p) / sp.Integer(K))
                for c in range(1, K + 1)]                                      # eq. (1)
        E = sum(pc if c > k else -pc for c, pc in zip(range(1, K + 1), prob))
        right = sp.expand((E - s * sp.Rational(K - 2 * k, K)) / (2 * s * p))
        _float_report(ex, case, expr, right, hint)
        if sp.expand(expr - right) == 0:
            continue
        kk = sp.Rational(k, K)
        variants = [
            ("write the rank-one part as s p r^T instead of 2 s p r^T (factor-2 slip: "
             "your r^(k) is twice Proposition 1's)", 2 * right),
            ("divide by 4 s p instead of 2 s p (your r^(k) is half of Proposition 1's)",
             right / 2),
            ("use the case k < h (r = k/K); here h = 1 <= k", kk),
            ("use the case g <= k (r = k/K - 1); here k < g = 3", kk - 1),
            ("use Case II's formula k/K - q (Case I has g > h: here g = 3 > h = 1)", kk - q),
            ("reverse the sign of r^(k)", -right),
            ("swap q and 1 - q", right.subs(q, 1 - q)),
        ]
        diag = _join([d for d, v in variants if sp.expand(expr - sp.expand(v)) == 0])
        raise ExerciseCheckFailed(ex, case, "with your r^(k), E[A^(k)] - s(K-2k)/K - "
                                  "2 s p r^(k) does not expand to 0.", got=expr, hint=hint,
                                  diagnosis=diag)
    return CheckResult("ex2 r^(k) of Proposition 1", 2)
