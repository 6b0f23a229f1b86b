"""Exercise 4: the reliability estimator of eq. (5) [`eqn:hatpi`] and its unbiasedness."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .report import (CheckResult, ExerciseCheckFailed, _as_float_array, _call, _close,
                     _Grader)

__all__ = ["check_reliability_estimator", "check_unbiased_simulation"]


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
