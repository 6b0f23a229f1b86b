r"""Theory quantities and Monte-Carlo checks of the paper's probabilistic statements.

Jeong & Chung (ICML 2023), Sec. 5 and the appendix. The exact (SymPy) proofs of the
arithmetic behind these functions live in the separate package ``theory_checks``; this
module holds the numerical side that notebooks and ``benchmarks/`` call:

* :data:`THEOREM3A_MAX_SAMPLING_RATE` -- the largest s with -log(1 - s) <= 2 s (about
  0.797): Theorem 3(a)'s bound ((K-1)/K) exp(-2 p-bar n s) is valid for s up to it (the
  paper's "p-bar <= 2/3" is the wrong variable; s <= 2/3 is sufficient, not needed).
* :func:`spammer_hammer_error_g` -- the exact error floor ((K-1)/K)(1 - s)^(n_hammers)
  of the spammer-hammer construction in the proof of Theorem 3(a) [`app:thm:converse`].
* :func:`theorem3b_counterexample` -- Monte-Carlo evidence that Theorem 3(b)
  [`thm:converse`] as printed (average error >= c whenever s <= 1/(4 n D-bar), with
  D-bar = min_j D-bar^(j)) fails when the tasks have different q_j.
* :func:`theorem3b_corrected_bound` -- what does hold: the Le Cam + Pinsker bound per
  task, averaged over tasks.
* :func:`binomial_ci` -- Clopper-Pearson intervals (scipy.stats) for the Monte-Carlo checks.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._validation import check_int, check_rng
from .metrics import top_two_errors
from .model import TopTwoModel

__all__ = ["THEOREM3A_MAX_SAMPLING_RATE", "theorem3a_max_sampling_rate", "spammer_hammer_error_g",
           "theorem3b_corrected_bound", "theorem3b_counterexample", "LE_CAM_PINSKER_CONSTANT",
           "binomial_ci"]

#: c = 1/2 - sqrt(2)/8: Le Cam + Pinsker, 1/2 - sqrt(s n D/8), at s n D = 1/4 (Theorem 3(b)
#: with Pinsker's constant; the paper's 3/8 rests on the invalid step TV <= sqrt(KL)/2).
LE_CAM_PINSKER_CONSTANT = 0.5 - math.sqrt(2.0) / 8.0


def theorem3a_max_sampling_rate() -> float:
    """The root s* in (1/2, 1) of -log(1 - s) = 2 s (about 0.79681).

    (1 - s)^l >= exp(-2 s l) for every l >= 0 exactly when s <= s*: h(s) = log(1 - s) + 2s
    has h(0) = 0, h' = (1 - 2s)/(1 - s), so h rises on [0, 1/2], falls after, and crosses 0
    once. ``theory_checks`` (check ``theorem3a_rate_threshold``) certifies a rational bracket.
    """
    from scipy.optimize import brentq  # lazy: scipy.optimize is a heavy import

    return float(brentq(lambda s: math.log1p(-s) + 2.0 * s, 0.6, 0.9, xtol=1e-15, rtol=1e-15))


#: s* = 0.79681...: the largest sampling rate for which Theorem 3(a)'s exponential bound holds.
THEOREM3A_MAX_SAMPLING_RATE = 0.79681213002002


def spammer_hammer_error_g(n_labels: int, n_hammers: int, sampling_rate: Any) -> np.ndarray:
    """Exact Bayes error of g under the spammer-hammer crowd of Theorem 3(a)'s proof.

    Hammers have p_i = 1 (and q = 1), spammers p_i = 0; each worker answers a task w.p. s
    independently (eq. (1)). A task no hammer answered carries no information about g
    and is guessed, wrong w.p. (K-1)/K; otherwise a hammer's answer is g. So the error is
    ((K-1)/K)(1 - s)^(n_hammers) for every task (``theory_checks`` check
    ``theorem3a_spammer_hammer`` proves it by exact enumeration).

    Parameters
    ----------
    n_labels : int >= 2
    n_hammers : int >= 0
    sampling_rate : float or array of s in [0, 1]
    """
    owner = "spammer_hammer_error_g"
    K = check_int(n_labels, "n_labels", owner=owner, minimum=2)
    nh = check_int(n_hammers, "n_hammers", owner=owner, minimum=0)
    s = np.asarray(sampling_rate, dtype=float)
    if not np.all(np.isfinite(s)) or np.any((s < 0) | (s > 1)):
        raise ValueError(f"{owner}: `sampling_rate` must lie in [0, 1]; got {sampling_rate!r} instead.")
    return (K - 1) / K * (1.0 - s) ** nh


def theorem3b_corrected_bound(n_workers: int, sampling_rate: float, d_bar_per_task: Any) -> float:
    """Average over tasks of the Le Cam + Pinsker bound max(0, 1/2 - sqrt(s n D-bar^(j)/8)).

    Per task j, the two-point argument of the proof of Theorem 3(b) with task j's own
    closest pair gives a Bayes (hence minimax) error >= 1/2 - sqrt(s n D-bar^(j)/8); the
    average over tasks is a lower bound on the minimax average pair error. It is
    >= c = 1/2 - sqrt(2)/8 when s <= 1/(4 n max_j D-bar^(j)) (every task hard), and
    >= c/m only when s <= 1/(4 n min_j D-bar^(j)) as printed.
    """
    owner = "theorem3b_corrected_bound"
    n = check_int(n_workers, "n_workers", owner=owner, minimum=1)
    s = float(sampling_rate)
    if not 0.0 <= s <= 1.0:
        raise ValueError(f"{owner}: `sampling_rate` must lie in [0, 1]; got {sampling_rate!r} instead.")
    d = np.asarray(d_bar_per_task, dtype=float)
    if d.ndim != 1 or d.size == 0 or np.any(~(d >= 0)):
        raise ValueError(f"{owner}: `d_bar_per_task` must be a non-empty 1-d array of values >= 0 "
                         f"(inf allowed); got {d_bar_per_task!r} instead.")
    with np.errstate(invalid="ignore"):
        per_task = np.where(np.isinf(d), 0.0, 0.5 - np.sqrt(s * n * np.where(np.isinf(d), 0.0, d) / 8.0))
    return float(np.mean(np.maximum(per_task, 0.0)))


def theorem3b_counterexample(n_workers: int = 80, n_tasks: int = 400, n_labels: int = 3, *,
                             reliability_range: tuple[float, float] = (0.6, 0.95),
                             easy_confusion: float = 0.75, hard_confusion: float = 0.5 + 1e-4,
                             sampling_rate: float = 1.0, n_draws: int = 30,
                             rng: Any = None) -> dict[str, Any]:
    """Theorem 3(b) as printed fails for heterogeneous q: the oracle MLE beats c at s = 1.

    One instance: p_i ~ Uniform(reliability_range), (g_j, h_j) uniform over ordered pairs,
    q_j = ``easy_confusion`` except q_0 = ``hard_confusion``. Task 0 makes
    D-bar = min_j D-bar^(j) tiny, so 1/(4 n D-bar) >= 1 and *every* s <= 1, s = 1
    included, satisfies the printed hypothesis; yet the oracle MLE (eq. (6) with the true
    p, q; ``toptwo.OracleMLE``) recovers almost every pair. ``n_draws`` response matrices
    are drawn from the instance at ``sampling_rate``.

    Returns
    -------
    dict with ``d_bar`` (= min_j D-bar^(j)), ``d_bar_max`` (max_j), ``threshold_printed``
    = 1/(4 n d_bar) (the printed hypothesis allows s up to it), ``threshold_corrected`` =
    1/(4 n d_bar_max), ``hypothesis_holds`` (sampling_rate <= threshold_printed),
    ``pair_errors`` (array, one average pair error per draw), ``mean``, ``max``,
    ``constant`` (c = 1/2 - sqrt(2)/8, what the printed theorem promises with Pinsker's
    constant), ``corrected_bound`` (:func:`theorem3b_corrected_bound`, about c/m here).
    """
    from .experiments import kl_divergence_per_task  # lazy: experiments imports this module
    from .mle import OracleMLE

    owner = "theorem3b_counterexample"
    n = check_int(n_workers, "n_workers", owner=owner, minimum=1)
    m = check_int(n_tasks, "n_tasks", owner=owner, minimum=1)
    K = check_int(n_labels, "n_labels", owner=owner, minimum=3)
    R = check_int(n_draws, "n_draws", owner=owner, minimum=1)
    lo, hi = (float(v) for v in reliability_range)
    if not 0.0 <= lo <= hi <= 1.0:
        raise ValueError(f"{owner}: `reliability_range` must satisfy 0 <= low <= high <= 1; "
                         f"got {reliability_range!r} instead.")
    gen = check_rng(rng, owner=owner)
    p = gen.uniform(lo, hi, size=n)
    g = gen.integers(1, K + 1, size=m)
    h = (g - 1 + gen.integers(1, K, size=m)) % K + 1          # uniform over labels != g
    q = np.full(m, float(easy_confusion))
    q[0] = float(hard_confusion)
    model = TopTwoModel(p, q, np.column_stack([g, h]), K)
    d_task = kl_divergence_per_task(model)
    d_bar, d_max = float(d_task.min()), float(d_task.max())
    errors = np.empty(R)
    for r in range(R):
        A = model.sample(sampling_rate, rng=gen)
        est = OracleMLE(p, q).fit(A, K)
        errors[r] = top_two_errors(est.top_two_, model.top_two)["pair"]
    return {
        "d_bar": d_bar,
        "d_bar_max": d_max,
        "threshold_printed": 1.0 / (4.0 * n * d_bar),
        "threshold_corrected": 1.0 / (4.0 * n * d_max),
        "hypothesis_holds": bool(sampling_rate <= 1.0 / (4.0 * n * d_bar)),
        "pair_errors": errors,
        "mean": float(errors.mean()),
        "max": float(errors.max()),
        "constant": LE_CAM_PINSKER_CONSTANT,
        "corrected_bound": theorem3b_corrected_bound(n, sampling_rate, d_task),
    }


def binomial_ci(successes: Any, trials: Any, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson (exact) two-sided interval for a binomial proportion, via scipy.stats.

    Parameters
    ----------
    successes, trials : int or arrays of int, 0 <= successes <= trials, trials >= 1
    confidence : float in (0, 1)
    """
    from scipy.stats import binomtest

    k = np.atleast_1d(np.asarray(successes))
    t = np.broadcast_to(np.atleast_1d(np.asarray(trials)), k.shape)
    if not (np.issubdtype(k.dtype, np.integer) and np.issubdtype(t.dtype, np.integer)):
        raise TypeError(f"binomial_ci: `successes` and `trials` must be integers; got dtypes "
                        f"{k.dtype} and {t.dtype}.")
    if np.any(t < 1) or np.any(k < 0) or np.any(k > t):
        raise ValueError("binomial_ci: need trials >= 1 and 0 <= successes <= trials.")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"binomial_ci: `confidence` must lie in (0, 1); got {confidence!r}.")
    lo = np.empty(k.shape)
    hi = np.empty(k.shape)
    for i, (kk, tt) in enumerate(zip(k.ravel(), t.ravel())):
        ci = binomtest(int(kk), int(tt)).proportion_ci(confidence_level=confidence, method="exact")
        lo.ravel()[i], hi.ravel()[i] = ci.low, ci.high
    return lo, hi
