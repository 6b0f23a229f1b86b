"""Exercise 3: binary conversion A^(k) and the rank-one part of E[A^(k)] (Sec. 3, Prop. 1)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from .report import CheckResult, ExerciseCheckFailed, _as_float_array, _call, _Grader

__all__ = ["check_binary_conversion", "check_centered_binary"]


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
                                                  forbidden=("to_binary", "binary_stack",
                                                             "reference.binary")),
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
