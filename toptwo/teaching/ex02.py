"""Exercise 2: E[A^(k)_ij] by hand and r^(k) of Proposition 1 [`prop:binary`] (SymPy).

SymPy is imported lazily. The configurations (K, (g, h), k) are drawn at grading time;
the right answers are computed inline from eq. (1) (a sum of +-P(A_ij = c) over the
labels) and the student's expression is compared *exactly* (``sympy.expand(student -
reference) == 0``), i.e. for every p, q, s at once. The student's function runs in a
separate process that refuses imports of ``toptwo`` and ``theory_checks`` (which hold
SymPy versions of these formulas).
"""

from __future__ import annotations

from typing import Any, Callable

from .report import (IGNORES_INPUT, CheckResult, ExerciseCheckFailed, _call, _join, _rng,
                     _student)

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


def _draw_configuration(gen: Any, case_one: bool) -> tuple[int, int, int]:
    """K in 3..6 and distinct labels (g, h) (with g > h for Case I)."""
    K = int(gen.integers(3, 7))
    g, h = (int(x) + 1 for x in gen.choice(K, 2, replace=False))
    if case_one and g < h:
        g, h = h, g
    return K, g, h


def check_expected_binary(student: Callable, *, rng: Any = None) -> CheckResult:
    """Exercise 2a: ``student(k, g, h, K)`` -> E[A^(k)_ij] from eq. (1), exactly.

    Parameters
    ----------
    student : callable
        ``student(k, g, h, K)``: a SymPy expression in the symbols named ``p``, ``q``,
        ``s`` (any assumptions; matched by name) for labels g != h in 1..K, 1 <= k < K.
    rng : None, int or numpy.random.Generator
        The configurations: K in 3..6, (g, h) and every k are drawn at grading time
        (fresh entropy by default), three configurations with K = 3's (3, 1) among them
        only by chance.

    Diagnoses: the -s(K-2k)/K shift left out (the student wrote 2 s p r^(k)), q and
    1 - q swapped, k off by one, the sign convention of A^(k) reversed, the factor s
    left out, g and h swapped, floats instead of exact fractions.
    """
    import sympy as sp
    gen = _rng(rng)
    ex0 = "ex2 E[A^(k)]"
    p, q, s = sp.symbols("p q s")
    configs = [_draw_configuration(gen, case_one=False) for _ in range(3)]
    with _student(ex0, student) as run:
        for K, g, h in configs:
            ex = f"ex2 E[A^(k)] for K={K}, (g, h)=({g}, {h})"
            hint = ("write P(A_ij = c) for c = 1..K from eq. (1) for the given (g, h), then "
                    "E[A^(k)_ij] = sum of P(c) over c > k minus sum over c <= k (A^(k) = +1 "
                    "exactly when A > k).")

            def ref(kk: int, gg: int = g, hh: int = h, K: int = K) -> Any:
                prob = [s * (p * q * int(c == gg) + p * (1 - q) * int(c == hh)
                             + (1 - p) / sp.Integer(K)) for c in range(1, K + 1)]   # eq. (1)
                return sp.expand(sum(pc if c > kk else -pc
                                     for c, pc in zip(range(1, K + 1), prob)))

            for k in range(1, K):
                case = f"k={k}, g={g}, h={h}, K={K}"
                expr = _read(ex, _call(ex, run, case, k, g, h, K), case, hint)
                expected = ref(k)
                _float_report(ex, case, expr, expected, hint)
                if sp.expand(expr - expected) == 0:
                    continue
                shift = s * sp.Rational(K - 2 * k, K)
                variants = [
                    ("leave out the shift s(K - 2k)/K (you wrote 2 s p r^(k), i.e. "
                     "E[A^(k)] - s(K-2k)/K)", expected - shift),
                    ("swap q and 1 - q", expected.subs(q, 1 - q)),
                    ("use k + 1 instead of k (off by one in k: A^(k) = +1 iff A > k, not "
                     "A >= k)", ref(k + 1)),
                    ("use k - 1 instead of k (off by one in k)", ref(k - 1)),
                    ("reverse the sign convention (A^(k) = +1 must mean A > k)", -expected),
                    ("leave out the factor s (probability of being asked)", expected / s),
                    ("swap g and h", ref(k, h, g)),
                ]
                diag = _join([d for d, v in variants
                              if d is not None and sp.expand(expr - sp.expand(v)) == 0])
                if diag is None and not expr.free_symbols:
                    diag = IGNORES_INPUT
                raise ExerciseCheckFailed(ex, case, "your expression differs from "
                                          "E[A^(k)_ij] computed from eq. (1).", got=expr,
                                          hint=hint, diagnosis=diag)
    n = sum(K - 1 for K, _, _ in configs)
    return CheckResult("ex2 E[A^(k)]", n)


def check_r_case_one(student: Callable, *, rng: Any = None) -> CheckResult:
    """Exercise 2b: ``student(k, g, h, K)`` -> r^(k) of Proposition 1, Case I (g > h).

    Graded against E[A^(k)] computed here from eq. (1), not against the student's 2a, so
    a mistake in 2a costs only 2a: the check confirms E[A^(k)] - s(K-2k)/K = 2 s p r^(k)
    exactly for every k = 1..K-1 of three configurations drawn at grading time (K in
    3..6, g > h). Diagnoses: r^(k) off by the factor 2 (the rank-one part written
    s p r^T instead of 2 s p r^T), the formula of another case of the proposition
    (k < h, g <= k, or Case II's k/K - q), the sign reversed, q and 1 - q swapped, and a
    float k/K.
    """
    import sympy as sp
    gen = _rng(rng)
    p, q, s = sp.symbols("p q s")
    configs = [_draw_configuration(gen, case_one=True) for _ in range(3)]
    with _student("ex2 r^(k) of Proposition 1", student) as run:
        for K, g, h in configs:
            ex = f"ex2 r^(k) of Proposition 1, K={K}, (g, h)=({g}, {h})"
            hint = ("Proposition 1: E[A^(k)] - s(K-2k)/K = 2 s p r^(k); Case I (g > h) has "
                    "three lines (k < h, h <= k < g, g <= k): check which one applies to "
                    "each k, and the factor 2.")
            for k in range(1, K):
                case = f"k={k}, g={g}, h={h}, K={K}"
                expr = _read(ex, _call(ex, run, case, k, g, h, K), case, hint)
                prob = [s * (p * q * int(c == g) + p * (1 - q) * int(c == h)
                             + (1 - p) / sp.Integer(K)) for c in range(1, K + 1)]   # eq. (1)
                E = sum(pc if c > k else -pc for c, pc in zip(range(1, K + 1), prob))
                right = sp.expand((E - s * sp.Rational(K - 2 * k, K)) / (2 * s * p))
                _float_report(ex, case, expr, right, hint)
                if sp.expand(expr - right) == 0:
                    continue
                kk = sp.Rational(k, K)
                where = ("k < h" if k < h else "h <= k < g" if k < g else "g <= k")
                variants = [
                    ("write the rank-one part as s p r^T instead of 2 s p r^T (factor-2 "
                     "slip: your r^(k) is twice Proposition 1's)", 2 * right),
                    ("divide by 4 s p instead of 2 s p (your r^(k) is half of Proposition "
                     "1's)", right / 2),
                    (f"use the case k < h (r = k/K); here {where}", kk),
                    (f"use the case h <= k < g (r = k/K - (1 - q)); here {where}",
                     kk - (1 - q)),
                    (f"use the case g <= k (r = k/K - 1); here {where}", kk - 1),
                    ("use Case II's formula k/K - q (Case I has g > h)", kk - q),
                    ("reverse the sign of r^(k)", -right),
                    ("swap q and 1 - q", right.subs(q, 1 - q)),
                ]
                diag = _join([d for d, v in variants if sp.expand(expr - sp.expand(v)) == 0])
                if diag is None and expr == sp.expand(sp.Integer(0)):
                    diag = IGNORES_INPUT
                raise ExerciseCheckFailed(ex, case, "with your r^(k), E[A^(k)] - s(K-2k)/K "
                                          "- 2 s p r^(k) does not expand to 0.", got=expr,
                                          hint=hint, diagnosis=diag)
    return CheckResult("ex2 r^(k) of Proposition 1", sum(K - 1 for K, _, _ in configs))
