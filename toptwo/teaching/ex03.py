"""Exercise 3: binary conversion A^(k) and the rank-one part of E[A^(k)] (Sec. 3, Prop. 1).

Inputs are drawn afresh at every run; the right answers are computed inline with NumPy.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .report import (CheckResult, ExerciseCheckFailed, _as_float_array, _call, _Grader,
                     _rng, _student)

__all__ = ["check_binary_conversion", "check_centered_binary"]


def check_binary_conversion(student_fn: Callable, *, rng: Any = None) -> CheckResult:
    """Exercise 3a: ``student_fn(A, k)`` -> A^(k), dense or scipy sparse, shape of A.

    A^(k)_ij = -1 if 1 <= A_ij <= k, +1 if A_ij > k, 0 if A_ij = 0 (Sec. 3, "Binary
    conversion"). ``A`` is a dense integer matrix drawn afresh (random shape, K and
    answer rate), every k = 1..K-1. Diagnoses: A >= k (off by one), A > k + 1, signs
    reversed, unanswered entries mapped to -1 or +1, a 0/1 indicator instead of -1/+1.
    """
    ex = "ex3 binary conversion (Sec. 3)"
    gen = _rng(rng)
    hint = ("A^(k)_ij = -1 if 1 <= A_ij <= k, +1 if k < A_ij <= K, 0 if A_ij = 0 "
            "(not answered); Sec. 3 'Binary conversion', used in Proposition 1.")
    grader = _Grader(ex, hint)

    def sign(A: np.ndarray, k: int) -> np.ndarray:
        return np.where(A == 0, 0.0, np.where(A > k, 1.0, -1.0))

    with _student(ex, student_fn) as student:
        _check_3a(ex, gen, grader, student, sign, hint)
    return grader.finish(CheckResult("ex3 binary conversion", grader.n_cases))


def _check_3a(ex: str, gen: Any, grader: _Grader, student: Any, sign: Callable,
              hint: str) -> None:
    for _ in range(2):
        n, m, K = int(gen.integers(3, 12)), int(gen.integers(3, 12)), int(gen.integers(3, 7))
        A = gen.integers(1, K + 1, (n, m)) * (gen.random((n, m)) < gen.uniform(0.4, 0.9))
        for k in range(1, K):
            case = f"A of shape {A.shape} with K={K}, k={k}"
            try:
                got = _as_float_array(ex, case, _call(ex, student, case, A.copy(), k),
                                      A.shape, hint)
            except ExerciseCheckFailed:
                if grader.failed:
                    continue
                raise
            ref = sign(A, k)
            observed = A > 0
            variants = [
                ("test A >= k instead of A > k (off by one in k)", sign(A, k - 1)),
                ("test A > k + 1 instead of A > k (off by one in k)", sign(A, k + 1)),
                ("reverse the signs (+1 must mean A > k)", -ref),
                ("map unanswered entries (A = 0) to -1 instead of 0",
                 np.where(observed, ref, -1.0)),
                ("map unanswered entries (A = 0) to +1 instead of 0",
                 np.where(observed, ref, 1.0)),
                ("return the 0/1 indicator of A > k instead of -1/+1", (A > k).astype(float)),
            ]
            grader.compare(case, got, ref, variants)


def check_centered_binary(student_fn: Callable, *, rng: Any = None) -> CheckResult:
    """Exercise 3b: ``student_fn(EA, k, s, K)`` -> EA - s (K - 2k)/K, the rank-1 part.

    Fed the exact E[A^(k)] of a model drawn afresh (random sizes, K, s, reliabilities,
    confusion probabilities and top two), the result must equal 2 s p (r^(k))^T
    (Proposition 1 [`prop:binary`]). Diagnoses: shift left out, shift without the factor
    s, sign of (K - 2k) reversed, k off by one in the shift, dividing by K - 2 (or 2)
    instead of K.
    """
    ex = "ex3 centered E[A^(k)] (Proposition 1)"
    gen = _rng(rng)
    hint = ("re-read the shift in Proposition 1 [`prop:binary`] at the top of the notebook: "
            "the same constant for every entry, depending on s, K and k; check each factor, "
            "the denominator and the sign.")
    grader = _Grader(ex, hint)
    with _student(ex, student_fn) as student:
        _check_3b(ex, gen, grader, student, hint)
    return grader.finish(CheckResult("ex3 centered binary", grader.n_cases))


def _check_3b(ex: str, gen: Any, grader: _Grader, student: Any, hint: str) -> None:
    for _ in range(2):
        n, m, K = int(gen.integers(3, 9)), int(gen.integers(3, 9)), int(gen.integers(5, 8))
        s = float(np.round(gen.uniform(0.2, 0.9), 3))
        p = gen.uniform(0.1, 0.9, n)
        q = gen.uniform(0.55, 1.0, m)
        gh = np.array([gen.choice(K, 2, replace=False) + 1 for _ in range(m)])
        for k in range(1, K):
            r = k / K - q * (gh[:, 0] <= k) - (1 - q) * (gh[:, 1] <= k)   # Proposition 1
            rank_one = 2 * s * np.outer(p, r)
            EA = rank_one + s * (K - 2 * k) / K                           # E[A^(k)]
            case = f"E[A^(k)] of a {n} x {m} model with K={K}, s={s}, k={k}"
            try:
                got = _as_float_array(ex, case, _call(ex, student, case, EA.copy(), k, s, K),
                                      EA.shape, hint)
            except ExerciseCheckFailed:
                if grader.failed:
                    continue
                raise
            variants = [
                ("leave out the shift s(K - 2k)/K", EA),
                ("subtract (K - 2k)/K without the factor s", EA - (K - 2 * k) / K),
                ("subtract s(2k - K)/K (sign of the shift reversed)", EA - s * (2 * k - K) / K),
                ("use k - 1 in the shift (off by one in k)", EA - s * (K - 2 * (k - 1)) / K),
                ("use k + 1 in the shift (off by one in k)", EA - s * (K - 2 * (k + 1)) / K),
                ("divide by K - 2 instead of K in the shift", EA - s * (K - 2 * k) / (K - 2)),
                ("divide by 2 instead of K in the shift", EA - s * (K - 2 * k) / 2),
            ]
            grader.compare(case, got, rank_one, variants)
