"""Exercise 2: E[A^(k)_ij] by hand, Proposition 1 [`prop:binary`] (SymPy, imported lazily).

The references are the SymPy formulas of :mod:`theory_checks.model`: eq. (1) summed
over the labels (``symbolic_expected_binary``) and r^(k) of Proposition 1's case table
(``symbolic_r``).
"""

from __future__ import annotations

from typing import Any

from .report import CheckResult, ExerciseCheckFailed, _call, _join

__all__ = ["check_expected_binary", "reference_expected_binary"]


def reference_expected_binary(g: int, h: int, k: int, K: int = 3,
                              symbols: tuple | None = None) -> Any:
    """E[A^(k)_ij] as a SymPy expression in p, q, s, straight from eq. (1).

    Sums sign(c > k) * P(A_ij = c) over the labels c (no use of Proposition 1), so a
    student's expression can be compared with the definition itself. ``symbols`` is an
    optional ``(p, q, s)`` triple (e.g. symbols with assumptions); by default plain
    ``sympy.symbols("p q s")``.
    """
    import sympy as sp
    from theory_checks.model import symbolic_expected_binary
    p, q, s = sp.symbols("p q s") if symbols is None else symbols
    return symbolic_expected_binary(K, g, h, k, p, q, s)


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
    from theory_checks.model import paper_shift, symbolic_r
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
        return sp.expand(s * (2 * p * symbolic_r(K, gg, hh, kk, q) + paper_shift(K, kk)))

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
             "E[A^(k)] - s(K-2k)/K)", 2 * s * p * symbolic_r(K, g, h, k, q)),
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
