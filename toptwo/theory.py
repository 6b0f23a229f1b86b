r"""Theory quantities and Monte-Carlo checks of the paper's probabilistic statements.

Jeong & Chung (ICML 2023), Sec. 5 and the appendix. The exact (SymPy) proofs of the
arithmetic behind these functions live in the separate package ``theory_checks``; this
module holds the numerical side that notebooks and ``benchmarks/`` call:

* :data:`THEOREM3A_MAX_SAMPLING_RATE` -- the largest s with -log(1 - s) <= 2 s (about
  0.797): Theorem 3(a)'s bound ((K-1)/K) exp(-2 p-bar n s) is valid for s up to it (the
  paper's "p-bar <= 2/3" is the wrong variable; s <= 2/3 is sufficient, not needed).
* :func:`minimax_lower_bound_g` -- Theorem 1 / Theorem 3(a) [`thm:converse`]:
  ((K-1)/K) exp(-2 p-bar n s), valid for s <= s*.
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
           "minimax_lower_bound_g",
           "theorem3b_corrected_bound", "theorem3b_counterexample", "LE_CAM_PINSKER_CONSTANT",
           "binomial_ci", "theorem1_decay", "lemma1_bound", "lemma1_tail", "every_task_recovery",
           "sign_rule_flips", "sign_flip_probability", "minimax_gap_curves", "minimax_sample_complexity",
           "le_cam_queries", "loglog_slope", "first_crossing", "scaling_summary", "scaling_checks",
           "scaling_report"]

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
        K.
    n_hammers : int >= 0
        Number of workers with p_i = 1.
    sampling_rate : float or array of s in [0, 1]
        S, scalar or array in [0, 1].
    """
    owner = "spammer_hammer_error_g"
    K = check_int(n_labels, "n_labels", owner=owner, minimum=2)
    nh = check_int(n_hammers, "n_hammers", owner=owner, minimum=0)
    s = np.asarray(sampling_rate, dtype=float)
    if not np.all(np.isfinite(s)) or np.any((s < 0) | (s > 1)):
        raise ValueError(f"{owner}: `sampling_rate` must lie in [0, 1]; got {sampling_rate!r} instead.")
    return (K - 1) / K * (1.0 - s) ** nh


def minimax_lower_bound_g(n_labels: int, p_bar: float, queries_per_task: Any, *,
                          n_workers: int) -> np.ndarray:
    """Minimax lower bound on the error of g_hat, Theorem 3(a) [`thm:converse`].

    ((K-1)/K) exp(-2 p-bar n s), with p-bar = ||p||_2^2 / n and n s the average number
    of queries per task. The proof's spammer-hammer crowd (p-bar n hammers) has the exact
    error ((K-1)/K)(1 - s)^(n p-bar) under eq. (1)'s sampling
    (:func:`toptwo.theory.spammer_hammer_error_g`), and (1 - s) >= exp(-2 s) holds exactly
    for s <= s* = 0.7968... (:data:`toptwo.theory.THEOREM3A_MAX_SAMPLING_RATE`; s <= 2/3 is
    sufficient, not needed). The condition is on the sampling rate s = (n s)/n, not on
    p-bar as the paper states ("p-bar <= 2/3"), so the number of workers is required.

    Parameters
    ----------
    n_labels : int >= 2
        K, the number of choices.
    p_bar : float in [0, 1]
        ||p||_2^2 / n, in [0, 1].
    queries_per_task : float or array of n s, 0 <= n s <= s* n
        n s, scalar or array.
    n_workers : int >= 1, keyword-only
        n, to turn n s into the sampling rate s.

    Raises
    ------
    ValueError
        When some s = queries_per_task / n_workers exceeds s* (the bound is then not
        implied by the proof: e.g. at s = 0.9, (1 - s) = 0.1 < exp(-1.8) = 0.165).
    """
    S_STAR = THEOREM3A_MAX_SAMPLING_RATE
    owner = "minimax_lower_bound_g"
    K = check_int(n_labels, "n_labels", owner=owner, minimum=2)
    n = check_int(n_workers, "n_workers", owner=owner, minimum=1)
    pb = float(p_bar)
    if not 0.0 <= pb <= 1.0:
        raise ValueError(f"{owner}: `p_bar` must be in [0, 1] (p-bar = ||p||^2/n with p in "
                         f"[0, 1]^n); got {p_bar!r} instead.")
    ns = np.asarray(queries_per_task, dtype=float)
    if np.any(ns < 0) or not np.all(np.isfinite(ns)):
        raise ValueError(f"{owner}: `queries_per_task` must be finite and >= 0.")
    s = ns / n
    if np.any(s > S_STAR):
        bad = float(np.max(s))
        raise ValueError(f"{owner}: the sampling rate s = queries_per_task / n_workers must be "
                         f"<= s* = {S_STAR:.5f} (the root of -log(1-s) = 2s; Theorem 3(a)'s "
                         f"bound needs (1-s) >= exp(-2s)); got s = {bad!r} "
                         f"(n s = {bad * n!r}, n_workers = {n}).")
    return (K - 1) / K * np.exp(-2.0 * pb * ns)


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
    from .model import kl_divergence_per_task
    from .mle import OracleMLE

    owner = "theorem3b_counterexample"
    n = check_int(n_workers, "n_workers", owner=owner, minimum=1)
    m = check_int(n_tasks, "n_tasks", owner=owner, minimum=1)
    K = check_int(n_labels, "n_labels", owner=owner, minimum=3)
    R = check_int(n_draws, "n_draws", owner=owner, minimum=1)
    lo, hi = _check_unit_range(reliability_range, "reliability_range", owner)
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
        Number of successes (array-like).
    confidence : float in (0, 1)
        Confidence level of the Clopper-Pearson interval.
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


# ---------------------------------------------------------------------------------------------
# Monte-Carlo checks of the probabilistic statements (benchmarks/theorems_mc.py, notebooks)
# ---------------------------------------------------------------------------------------------
def _check_mc_sizes(owner: str, n_workers: Any, n_tasks: Any, n_labels: Any, n_reps: Any,
                    rng: Any) -> tuple[int, int, int, int, np.random.Generator]:
    """The sizes every Monte-Carlo function takes, checked: n >= 2, m >= 1, K >= 3,
    replicates >= 1, and the random generator."""
    n = check_int(n_workers, "n_workers", owner=owner, minimum=2)
    m = check_int(n_tasks, "n_tasks", owner=owner, minimum=1)
    K = check_int(n_labels, "n_labels", owner=owner, minimum=3)
    R = check_int(n_reps, "n_reps", owner=owner, minimum=1)
    return n, m, K, R, check_rng(rng, owner=owner)


def _check_unit_range(rng_pair: Any, name: str, owner: str) -> tuple[float, float]:
    """(low, high) with 0 <= low <= high <= 1, or ValueError naming the parameter."""
    try:
        lo, hi = (float(v) for v in rng_pair)
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: `{name}` must be a pair (low, high); got {rng_pair!r} instead.") from None
    if not 0.0 <= lo <= hi <= 1.0:
        raise ValueError(f"{owner}: `{name}` must satisfy 0 <= low <= high <= 1; got {rng_pair!r} instead.")
    return lo, hi


def _fixed_q_model(gen: np.random.Generator, n: int, m: int, K: int, p_range: tuple[float, float],
                   q: float, owner: str = "toptwo.theory") -> TopTwoModel:
    """p_i ~ Uniform(p_range), (g_j, h_j) uniform over ordered pairs, q_j = q for every task."""
    lo, hi = _check_unit_range(p_range, "reliability_range", owner)
    if not 0.5 < float(q) <= 1.0:
        raise ValueError(f"{owner}: the confusion q must lie in (1/2, 1]; got {q!r} instead.")
    p = gen.uniform(lo, hi, size=n)
    g = gen.integers(1, K + 1, size=m)
    h = (g - 1 + gen.integers(1, K, size=m)) % K + 1
    return TopTwoModel(p, np.full(m, float(q)), np.column_stack([g, h]), K)


def _fit_decay(x: np.ndarray, wrong: np.ndarray, trials: np.ndarray) -> tuple[float, float]:
    """Slope b (and its standard error) of log(rate) = a - b x, weighted by binomial counts.

    Points with no error (rate 0) or all wrong are left out; the weights are the inverse
    delta-method variances (1 - r)/(r N) of log(rate).
    """
    r = wrong / trials
    keep = (wrong > 0) & (wrong < trials)
    if keep.sum() < 2:
        return float("nan"), float("nan")
    X = np.column_stack([np.ones(keep.sum()), x[keep]])
    w = (r[keep] * trials[keep]) / (1.0 - r[keep])
    W = np.sqrt(w)
    coef, *_ = np.linalg.lstsq(X * W[:, None], np.log(r[keep]) * W, rcond=None)
    cov = np.linalg.inv((X * w[:, None]).T @ X)
    return float(-coef[1]), float(np.sqrt(cov[1, 1]))


def theorem1_decay(n_workers: int = 400, n_tasks: int = 300, n_labels: int = 4, *,
                   reliability_ranges: tuple[tuple[float, float], ...] = ((0.1, 0.5), (0.5, 1.0)),
                   confusions: tuple[float, ...] = (0.6, 2 / 3, 0.75),
                   x_grid: tuple[float, ...] = (1.0, 2.0, 3.0, 4.0),
                   n_reps: int = 4, rng: Any = None) -> list[dict[str, Any]]:
    """Theorem 1 [`thm:main`]: per-task error of Algorithm 1 against x = s ||p||^2 gap(q)^2.

    Theorem 1 with delta_1 < gap/4 (``theory_checks`` check ``theorem1_delta1_gap``) says
    P((g_hat_j, h_hat_j) != (g_j, h_j)) <= exp(-Theta(s ||p||^2 gap(q)^2)), gap(q) =
    min{2q - 1, 1 - q}: on x = s ||p||^2 gap^2 the error decays exponentially with a slope
    that does not depend on ||p|| (nor, up to the constant, on q). For every reliability
    range and confusion q (all tasks share q, so gap is fixed) the sampling rate is set to
    s = x / (||p||^2 gap^2) (points with s > 1 are skipped) and Algorithm 1 as written
    (``TopTwo1(sample_splitting=True, centering="paper")``) is run ``n_reps`` times.

    Returns
    -------
    list of dicts, one per (reliability range, q): ``reliability_range``, ``confusion``,
    ``gap``, ``norm_p2``, ``x``, ``sampling_rate`` (NaN where s > 1), ``wrong`` and ``trials``
    (pair errors and task outcomes pooled over replicates), ``rate``, ``ci_low``/``ci_high``
    (Clopper-Pearson 95%; task outcomes within a replicate share u^(k), so these intervals
    are optimistic), ``slope``/``slope_se`` (weighted fit of log rate = a - slope * x).
    """
    from .spectral import TopTwo1

    owner = "theorem1_decay"
    n, m, K, R, gen = _check_mc_sizes(owner, n_workers, n_tasks, n_labels, n_reps, rng)
    xs = np.asarray(x_grid, dtype=float)
    out = []
    for pr in reliability_ranges:
        for qv in confusions:
            if not 0.5 < qv < 1.0:
                raise ValueError(f"{owner}: every confusion must lie in (1/2, 1); got {qv!r}.")
            model = _fixed_q_model(gen, n, m, K, pr, qv, owner)
            gap = min(2 * qv - 1, 1 - qv)
            P2 = model.norm_p ** 2
            rates = xs / (P2 * gap**2)
            wrong = np.zeros(xs.size, dtype=np.int64)
            trials = np.zeros(xs.size, dtype=np.int64)
            for a, s in enumerate(rates):
                if s > 1:
                    continue
                for _ in range(R):
                    est = TopTwo1(sample_splitting=True, centering="paper", rng=gen).fit(model.sample(s, rng=gen), K)
                    wrong[a] += int(np.sum(np.any(est.top_two_ != model.top_two, axis=1)))
                    trials[a] += m
            ok = trials > 0
            lo = np.full(xs.size, np.nan)
            hi = np.full(xs.size, np.nan)
            if ok.any():
                lo[ok], hi[ok] = binomial_ci(wrong[ok], trials[ok])
            slope, se = _fit_decay(xs[ok], wrong[ok], trials[ok])
            out.append({
                "reliability_range": tuple(pr), "confusion": float(qv), "gap": float(gap),
                "norm_p2": float(P2), "x": xs, "sampling_rate": np.where(rates <= 1, rates, np.nan),
                "wrong": wrong, "trials": trials,
                "rate": np.where(ok, wrong / np.maximum(trials, 1), np.nan),
                "ci_low": lo, "ci_high": hi, "slope": slope, "slope_se": se,
            })
    return out


def lemma1_bound(n_labels: int, n_tasks: int, rate: float, delta: Any, *, n_workers: int = 1,
                 form: str = "bernstein") -> np.ndarray:
    """Lemma 1's bound on P(|p_hat_i - p_i| >= delta) (``n_workers = 1``) or on the sup norm.

    ``form="bernstein"``: n 2 exp(-(t^2/2)/(m sigma + t/3)), t = c m sigma delta, c = (K-2)/K,
    sigma = s(1 - s_1) = ``rate`` (the two-sided Bernstein bound of the proof, with its factor
    2). ``form="kappa"``: n 2 exp(-(3c^2/8) m sigma delta^2), its simplification for
    c delta <= 1 (``theory_checks`` check ``lemma1_bernstein``). Capped at 1.
    """
    owner = "lemma1_bound"
    K = check_int(n_labels, "n_labels", owner=owner, minimum=3)
    m = check_int(n_tasks, "n_tasks", owner=owner, minimum=1)
    n = check_int(n_workers, "n_workers", owner=owner, minimum=1)
    if form not in ("bernstein", "kappa"):
        raise ValueError(f"{owner}: `form` must be 'bernstein' or 'kappa'; got {form!r}.")
    sg = float(rate)
    if not 0.0 < sg <= 1.0:
        raise ValueError(f"{owner}: `rate` must lie in (0, 1]; got {rate!r}.")
    d = np.asarray(delta, dtype=float)
    c = (K - 2) / K
    if form == "bernstein":
        t = c * m * sg * d
        expo = (t**2 / 2) / (m * sg + t / 3)
    else:
        expo = 3 * c**2 / 8 * m * sg * d**2
    return np.minimum(1.0, n * 2.0 * np.exp(-expo))


def lemma1_tail(n_workers: int = 50, n_tasks: int = 400, n_labels: int = 4, *,
                rate: float = 0.3, reliability_range: tuple[float, float] = (0.0, 1.0),
                deltas: tuple[float, ...] = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3),
                n_reps: int = 300, rng: Any = None) -> dict[str, Any]:
    """Lemma 1 [`lem:rec_p`]: P(||p_hat - p||_inf >= delta) against its Bernstein bound.

    Given the true pairs (Lemma 1 conditions on them), A^2 is drawn from eq. (1) at sampling
    rate sigma = ``rate`` (= s(1 - s_1)) and p_hat is eq. (5) with the paper's normalisation
    m sigma (sigma known). Returns per delta: ``sup_exceed`` (replicates with
    max_i |p_hat_i - p_i| >= delta), ``worker_exceed`` (worker-replicates with
    |p_hat_i - p_i| >= delta), their trials and Clopper-Pearson intervals, and the bounds
    ``bound_sup`` / ``bound_worker`` (:func:`lemma1_bound`, Bernstein form) and
    ``bound_sup_kappa``.
    """
    owner = "lemma1_tail"
    n = check_int(n_workers, "n_workers", owner=owner, minimum=1)
    m = check_int(n_tasks, "n_tasks", owner=owner, minimum=1)
    K = check_int(n_labels, "n_labels", owner=owner, minimum=3)
    R = check_int(n_reps, "n_reps", owner=owner, minimum=1)
    gen = check_rng(rng, owner=owner)
    sg = float(rate)
    model = _fixed_q_model(gen, n, m, K, reliability_range, 0.75, owner)
    ds = np.asarray(deltas, dtype=float)
    sup_exceed = np.zeros(ds.size, dtype=np.int64)
    worker_exceed = np.zeros(ds.size, dtype=np.int64)
    top = model.top_two
    for _ in range(R):
        A = model.sample(sg, rng=gen)
        hit = (A.labels == top[A.tasks, 0]) | (A.labels == top[A.tasks, 1])
        hits = np.bincount(A.workers[hit], minlength=n)
        p_hat = K / (K - 2) * (hits / (m * sg) - 2 / K)
        err = np.abs(p_hat - model.reliability)
        sup_exceed += err.max() >= ds
        worker_exceed += (err[:, None] >= ds[None, :]).sum(axis=0)
    s_lo, s_hi = binomial_ci(sup_exceed, R)
    w_lo, w_hi = binomial_ci(worker_exceed, R * n)
    return {
        "deltas": ds, "n_reps": R, "n_workers": n, "n_tasks": m, "rate": sg,
        "sup_exceed": sup_exceed, "sup_ci": (s_lo, s_hi),
        "worker_exceed": worker_exceed, "worker_trials": R * n, "worker_ci": (w_lo, w_hi),
        "bound_sup": lemma1_bound(K, m, sg, ds, n_workers=n),
        "bound_worker": lemma1_bound(K, m, sg, ds),
        "bound_sup_kappa": lemma1_bound(K, m, sg, ds, n_workers=n, form="kappa"),
    }


def every_task_recovery(n_workers: int = 60, n_tasks_list: tuple[int, ...] = (20, 400), n_labels: int = 4, *,
                        confusion: float = 0.7, reliability_range: tuple[float, float] = (0.3, 0.9),
                        x_grid: tuple[float, ...] = (1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 11.0),
                        n_reps: int = 40, rng: Any = None) -> dict[str, Any]:
    """Theorem 2 [`thm:plugmin_mle`]: P(every pair recovered) against x = s n D-bar, for two m.

    All tasks share q (so D-bar^(j) = D-bar) and the oracle MLE (eq. (6) with the true p, q:
    Theorem 2 with delta = 0) is run ``n_reps`` times per x for each m in ``n_tasks_list``
    (the first m tasks of one instance). Theorem 2 puts the threshold for the every-task event
    at s n D-bar ~ log(m / eps): the x at which P(all) crosses 1/2 should grow by about
    log(m2/m1)/b, b the decay rate of the per-task error on x (both returned).

    Returns
    -------
    dict with ``d_bar``, ``x``, per m (key = m): ``all_ok`` (replicates with every pair right),
    ``ci`` (Clopper-Pearson), ``task_wrong``/``task_trials`` (pooled per-task errors),
    ``x_half`` (interpolated crossing of 1/2, NaN if none); and ``slope`` (b, fitted on the
    pooled per-task errors of the largest m where they are <= 0.1, the tail that decides the
    every-task event) with ``slope_se``, ``predicted_shift`` =
    log(m_last/m_first)/b and ``measured_shift``.
    """
    from .model import kl_divergence_per_task
    from .mle import OracleMLE

    owner = "every_task_recovery"
    n = check_int(n_workers, "n_workers", owner=owner, minimum=2)
    K = check_int(n_labels, "n_labels", owner=owner, minimum=3)
    R = check_int(n_reps, "n_reps", owner=owner, minimum=1)
    ms = [check_int(v, "n_tasks_list", owner=owner, minimum=1) for v in n_tasks_list]
    gen = check_rng(rng, owner=owner)
    base = _fixed_q_model(gen, n, max(ms), K, reliability_range, confusion, owner)
    d_bar = float(kl_divergence_per_task(base).min())
    xs = np.asarray(x_grid, dtype=float)
    res: dict[Any, Any] = {"d_bar": d_bar, "x": xs, "n_workers": n}
    for m in ms:
        model = TopTwoModel(base.reliability, base.confusion[:m], base.top_two[:m], K)
        all_ok = np.zeros(xs.size, dtype=np.int64)
        task_wrong = np.zeros(xs.size, dtype=np.int64)
        for a, x in enumerate(xs):
            s = min(1.0, x / (n * d_bar))
            for _ in range(R):
                est = OracleMLE(model.reliability, model.confusion).fit(model.sample(s, rng=gen), K)
                wrong = int(np.sum(np.any(est.top_two_ != model.top_two, axis=1)))
                task_wrong[a] += wrong
                all_ok[a] += wrong == 0
        frac = all_ok / R
        above = np.flatnonzero(frac >= 0.5)
        x_half = float("nan")
        if above.size and above[0] > 0:
            i = above[0]
            x_half = float(xs[i - 1] + (0.5 - frac[i - 1]) / (frac[i] - frac[i - 1]) * (xs[i] - xs[i - 1]))
        elif above.size:
            x_half = float(xs[0])
        res[m] = {"all_ok": all_ok, "ci": binomial_ci(all_ok, R), "task_wrong": task_wrong,
                  "task_trials": R * m, "x_half": x_half}
    last = res[ms[-1]]
    trials = np.full(xs.size, last["task_trials"])
    tail = last["task_wrong"] / trials <= 0.1  # the tail that decides the every-task event
    slope, se = _fit_decay(xs[tail], last["task_wrong"][tail], trials[tail])
    res["slope"], res["slope_se"] = slope, se
    res["predicted_shift"] = float(np.log(ms[-1] / ms[0]) / slope) if slope > 0 else float("nan")
    res["measured_shift"] = res[ms[-1]]["x_half"] - res[ms[0]]["x_half"]
    res["n_tasks_list"] = ms
    return res


def sign_rule_flips(n_workers: int = 100, n_tasks: int = 300, n_labels: int = 5, *,
                    hammer_fractions: tuple[float, ...] = (0.6, 0.4, 0.2, 0.1),
                    queries_per_task: float = 20.0, confusion_range: tuple[float, float] = (0.9, 1.0),
                    n_reps: int = 30, rng: Any = None) -> dict[str, Any]:
    """How often Algorithm 1's sign rule flips some u^(k) as the spammer fraction grows.

    The paper fixes the sign of u^(k) by "at least half of the entries positive" and relies on
    the footnote of Sec. 3 (eta sqrt(n) <= ||p||_2) for it; that assumption allows a majority
    of spammers (p_i = 0, ``theory_checks`` check ``footnote_spammers``), whose entries of u^(k)
    are noise around 0. For each hammer fraction alpha (a spammer-hammer crowd, Sec. 5) and each
    rule (``"paper"``, ``"sum"``), ``n_reps`` response matrices at n s = ``queries_per_task``
    are fitted with TopTwo1; a replicate counts as flipped when some u^(k) has u^(k) . p < 0.

    Returns
    -------
    dict with ``hammer_fractions`` and, per rule, ``flipped`` (replicates), ``ci``
    (Clopper-Pearson) and ``err_g`` (mean error of g_hat per alpha); ``n_reps``.
    """
    from .spectral import TopTwo1

    owner = "sign_rule_flips"
    n, m, K, R, gen = _check_mc_sizes(owner, n_workers, n_tasks, n_labels, n_reps, rng)
    s = float(queries_per_task) / n
    if not 0.0 < s <= 1.0:
        raise ValueError(f"{owner}: queries_per_task / n_workers must lie in (0, 1]; got {s!r}.")
    out: dict[str, Any] = {"hammer_fractions": list(hammer_fractions), "n_reps": R, "sampling_rate": s}
    counts = {rule: np.zeros(len(hammer_fractions), dtype=np.int64) for rule in ("paper", "sum")}
    errs = {rule: np.zeros(len(hammer_fractions)) for rule in ("paper", "sum")}
    for a, alpha in enumerate(hammer_fractions):
        for _ in range(R):
            model = TopTwoModel.spammer_hammer(n, m, K, hammer_fraction=alpha,
                                               confusion_range=confusion_range, rng=gen)
            A = model.sample(s, rng=gen)
            for rule in ("paper", "sum"):
                est = TopTwo1(sign_rule=rule).fit(A, K)
                flipped = bool(np.any(est.result_.left_vectors @ model.reliability < 0))
                counts[rule][a] += flipped
                errs[rule][a] += top_two_errors(est.top_two_, model.top_two)["g"] / R
    for rule in ("paper", "sum"):
        out[rule] = {"flipped": counts[rule], "ci": binomial_ci(counts[rule], R), "err_g": errs[rule]}
    return out


def minimax_gap_curves(n_workers: int = 400, n_tasks: int = 200, n_labels: int = 4, *,
                       confusions: tuple[float, ...] = (0.6, 0.65, 0.7, 0.8),
                       reliability_range: tuple[float, float] = (0.3, 0.9),
                       x_grid: tuple[float, ...] = (1.0, 2.0, 4.0, 6.0, 8.0, 11.0, 15.0, 20.0, 27.0),
                       target: float = 0.05, n_reps: int = 3, rng: Any = None) -> dict[str, Any]:
    """TopTwo2 and the oracle MLE against Theorem 3(b)'s lower bound, over a range of D-bar.

    For each q (all tasks share it, so D-bar^(j) = D-bar) the pair error is measured on a grid
    of x = s n D-bar. Theorem 3(b) says no method reaches a small error below x = 1/4;
    Cor. 2 [`cor:alg2`] guarantees TopTwo2 once x >~ log(m/eps) (1 + n D-bar/(delta^2 ||p||^2)),
    delta = rho D-bar/(4(6 + D-bar)), whose first term grows like 1/(rho^2 D-bar) in these units
    (``theory_checks`` check ``minimax_optimality_gap``). Measured: the x at which the pair error
    first drops to ``target`` (``toptwo.experiments.queries_needed``), per method and D-bar.

    Returns
    -------
    dict with ``x``, ``target`` and ``rows`` (one per q): ``confusion``, ``d_bar``, ``rho``
    (smallest answer probability), ``cor2_x`` = n D-bar/(delta^2 ||p||^2) (the x-scale of Cor. 2's
    first term, without its log factor), ``errors`` (per method: mean pair error per x, NaN where
    s > 1) and ``x_needed`` (per method).
    """
    from .experiments import queries_needed
    from .model import kl_divergence_per_task
    from .mle import OracleMLE, TopTwo2

    owner = "minimax_gap_curves"
    n, m, K, R, gen = _check_mc_sizes(owner, n_workers, n_tasks, n_labels, n_reps, rng)
    xs = np.asarray(x_grid, dtype=float)
    rows = []
    for qv in confusions:
        model = _fixed_q_model(gen, n, m, K, reliability_range, qv, owner)
        d_bar = float(kl_divergence_per_task(model).min())
        p = model.reliability
        rho = float(min(((1 - p) / K).min(), (p * (1 - qv) + (1 - p) / K).min()))
        delta = rho * d_bar / (4 * (6 + d_bar))
        errors = {"TopTwo2": np.full(xs.size, np.nan), "oracle MLE": np.full(xs.size, np.nan)}
        for a, x in enumerate(xs):
            s = x / (n * d_bar)
            if s > 1:
                continue
            acc = {k: 0.0 for k in errors}
            for _ in range(R):
                A = model.sample(s, rng=gen)
                for name, est in (("TopTwo2", TopTwo2(rng=gen)), ("oracle MLE", OracleMLE(p, model.confusion))):
                    acc[name] += top_two_errors(est.fit(A, K).top_two_, model.top_two)["pair"] / R
            for k in errors:
                errors[k][a] = acc[k]
        ok = np.isfinite(errors["TopTwo2"])
        rows.append({
            "confusion": float(qv), "d_bar": d_bar, "rho": rho,
            "cor2_x": float(n * d_bar / (delta**2 * model.norm_p ** 2)),
            "errors": errors,
            "x_needed": {k: queries_needed(xs[ok], v[ok], target) for k, v in errors.items()},
        })
    return {"x": xs, "target": float(target), "rows": rows, "n_workers": n, "n_tasks": m}


def le_cam_queries(d_bar: Any, target: float) -> np.ndarray:
    """Queries per task n s below which no estimator reaches pair error ``target`` (Thm 3(b), corrected).

    Le Cam's two-point bound with Pinsker's inequality gives a pair error of at least
    1/2 - sqrt(s n D-bar / 8) (the corrected form of the proof in [`app:thm:converse`]; the
    paper's 1/2 - sqrt(s n D-bar)/4 has the wrong constant, ``theory_checks`` check
    ``theorem3b_arithmetic``). For identical q across tasks (D-bar^(j) = D-bar) an error of
    ``target`` therefore needs s n D-bar >= 8 (1/2 - target)^2, i.e.
    n s >= 8 (1/2 - target)^2 / D-bar: the lower-bound curve grows like 1/D-bar.
    """
    eps = float(target)
    if not 0.0 < eps < 0.5:
        raise ValueError(f"le_cam_queries: `target` must lie in (0, 1/2); got {target!r} instead.")
    d = np.asarray(d_bar, dtype=float)
    if np.any(~(d > 0)):
        raise ValueError(f"le_cam_queries: `d_bar` must be > 0; got {d_bar!r} instead.")
    return 8.0 * (0.5 - eps) ** 2 / d


def minimax_sample_complexity(n_workers: int = 800, n_tasks: int = 150, n_labels: int = 5, *,
                              confusions: tuple[float, ...] = (0.55, 0.6, 0.65, 0.75),
                              reliability_range: tuple[float, float] = (0.3, 0.9),
                              x_grid: tuple[float, ...] = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.5, 7.0, 9.0, 12.0),
                              target: float = 0.1, n_reps: int = 4, rng: Any = None) -> dict[str, Any]:
    """Queries per task n s needed for pair error ``target`` against D-bar: upper and lower bound.

    For each q (all tasks share it, so D-bar^(j) = D-bar; p ~ Uniform(``reliability_range``),
    the same for every q so that rho, the smallest answer probability, is fixed), each of
    ``n_reps`` replicates measures TopTwo2's and the oracle MLE's pair error on the grid
    x = s n D-bar (points with s > 1 are skipped) and interpolates the x at which it first
    drops to ``target`` (``toptwo.experiments.queries_needed``); n s = x / D-bar.

    Returned next to it: the lower bound n s >= 8 (1/2 - target)^2 / D-bar (``le_cam_queries``,
    slope -1 on log-log axes in D-bar) and the x-scale of Cor. 2's first term,
    n D-bar/(delta^2 ||p||^2) with delta = rho D-bar/(4(6 + D-bar)), which in units of n s grows
    like 1/(rho^2 D-bar^2) (slope -2): the D-bar^2 gap between Cor. 2 and Theorem 3(b)
    (``theory_checks`` check ``minimax_optimality_gap``).

    Returns
    -------
    dict with ``x``, ``target``, ``n_workers``, ``n_tasks``, ``n_labels`` and ``rows`` (one per q):
    ``confusion``, ``d_bar``, ``rho``, ``lower`` (n s of the lower bound), ``cor2_queries``
    (n D-bar/(delta^2 ||p||^2) / D-bar), ``errors`` (per method: pooled mean pair error per x,
    NaN where s > 1) and ``queries`` (per method: n s needed per replicate, NaN if not reached).
    """
    from .experiments import queries_needed
    from .model import kl_divergence_per_task
    from .mle import OracleMLE, TopTwo2

    owner = "minimax_sample_complexity"
    n, m, K, R, gen = _check_mc_sizes(owner, n_workers, n_tasks, n_labels, n_reps, rng)
    xs = np.asarray(x_grid, dtype=float)
    if xs.ndim != 1 or xs.size < 2 or np.any(xs <= 0) or np.any(np.diff(xs) <= 0):
        raise ValueError(f"{owner}: `x_grid` must be positive and strictly increasing; got {x_grid!r} instead.")
    lo, hi = _check_unit_range(reliability_range, "reliability_range", owner)
    p = gen.uniform(lo, hi, size=n)
    rows = []
    for qv in confusions:
        pair_model = _fixed_q_model(gen, n, m, K, reliability_range, qv, owner)
        model = TopTwoModel(p, pair_model.confusion, pair_model.top_two, K)
        d_bar = float(kl_divergence_per_task(model).min())
        rho = float(min(((1 - p) / K).min(), (p * (1 - qv) + (1 - p) / K).min()))
        delta = rho * d_bar / (4 * (6 + d_bar))
        ok = xs / (n * d_bar) <= 1.0
        per_rep = {"TopTwo2": np.full((R, xs.size), np.nan), "oracle MLE": np.full((R, xs.size), np.nan)}
        for r in range(R):
            for a in np.flatnonzero(ok):
                A = model.sample(xs[a] / (n * d_bar), rng=gen)
                for name, est in (("TopTwo2", TopTwo2(rng=gen)), ("oracle MLE", OracleMLE(p, model.confusion))):
                    per_rep[name][r, a] = top_two_errors(est.fit(A, K).top_two_, model.top_two)["pair"]
        queries = {k: np.array([queries_needed(xs[ok], v[r, ok], target) for r in range(R)]) / d_bar
                   for k, v in per_rep.items()}
        rows.append({
            "confusion": float(qv), "d_bar": d_bar, "rho": rho,
            "lower": float(le_cam_queries(d_bar, target)),
            "cor2_queries": float(n / (delta**2 * model.norm_p ** 2)),
            "errors": {k: v.mean(axis=0) for k, v in per_rep.items()},
            "queries": queries,
        })
    return {"x": xs, "target": float(target), "rows": rows, "n_workers": n, "n_tasks": m, "n_labels": K}


def loglog_slope(x: Any, y_reps: Any) -> tuple[float, float]:
    """Slope of log(mean y) on log x, weighted by the replicate standard errors, and its standard error.

    ``y_reps`` has one row per x and one column per replicate (NaN entries are dropped). The
    standard error of log(mean y) is taken as sd / (sqrt(R) mean) (delta method), floored at 2 %
    so that a point whose replicates happen to agree does not get infinite weight.
    """
    xv = np.log(np.asarray(x, dtype=float))
    means, ses = [], []
    for row in y_reps:
        v = np.asarray(row, dtype=float)
        v = v[np.isfinite(v)]
        if v.size < 2:
            raise ValueError(f"loglog_slope: every x needs at least 2 finite replicates; got {row!r}.")
        means.append(v.mean())
        ses.append(max(v.std(ddof=1) / (np.sqrt(v.size) * v.mean()), 0.02))
    w = 1.0 / np.square(ses)
    X = np.column_stack([np.ones(xv.size), xv])
    coef = np.linalg.solve((X * w[:, None]).T @ X, (X * w[:, None]).T @ np.log(means))
    cov = np.linalg.inv((X * w[:, None]).T @ X)
    return float(coef[1]), float(np.sqrt(cov[1, 1]))


def first_crossing(x: Any, y: Any, level: float, *, increasing: bool = False, log_y: bool = False) -> float:
    """The x at which a curve first reaches ``level`` (linear interpolation, in log y if ``log_y``).

    ``increasing=False``: first x with y <= level (an error curve); ``True``: first x with
    y >= level (a success probability). Returns x[0] if the curve starts there and NaN if it
    never gets there. Used with the Clopper-Pearson limits of a curve, it turns binomial
    intervals on y into an interval on the crossing point.
    """
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    if xs.ndim != 1 or xs.shape != ys.shape or xs.size == 0 or np.any(np.diff(xs) <= 0):
        raise ValueError(f"first_crossing: `x` must be 1-D, strictly increasing and as long as `y`; "
                         f"got shapes {xs.shape}, {ys.shape}.")
    hit = np.flatnonzero(ys >= level) if increasing else np.flatnonzero(ys <= level)
    if hit.size == 0:
        return float("nan")
    i = int(hit[0])
    if i == 0:
        return float(xs[0])
    y0, y1, lv = ys[i - 1], ys[i], float(level)
    if log_y and y0 > 0 and y1 > 0 and lv > 0:
        y0, y1, lv = np.log(y0), np.log(y1), np.log(lv)
    if y1 == y0:
        return float(xs[i])
    return float(xs[i - 1] + (lv - y0) / (y1 - y0) * (xs[i] - xs[i - 1]))


def _crossing_interval(x: Any, est: Any, lo: Any, hi: Any, level: float, *, increasing: bool,
                       log_y: bool = False) -> tuple[float, float, float]:
    """Crossing of ``level`` by a curve and by its two confidence limits (earliest, estimate, latest)."""
    a = first_crossing(x, hi if increasing else lo, level, increasing=increasing, log_y=log_y)
    b = first_crossing(x, est, level, increasing=increasing, log_y=log_y)
    c = first_crossing(x, lo if increasing else hi, level, increasing=increasing, log_y=log_y)
    return a, b, c


def scaling_summary(res: dict[str, Any], *, k_target: float = 0.1) -> dict[str, Any]:
    """Derived numbers of the scaling measurements (the stored JSON of ``benchmarks/theorems_mc.py``).

    * ``minimax``: per method, n s needed per D-bar (mean over replicates), the ratio to the lower
      bound ``le_cam_queries``, and the log-log slope on D-bar (``loglog_slope``) with its s.e.;
      the slope of Cor. 2's first term (-2 up to the 6 + D-bar factor).
    * ``every_m``: per m, the x = s n D-bar where P(all pairs right) crosses 1/2, with the
      interval from the Clopper-Pearson limits; the slope of that crossing on log m (weighted,
      s.d. = interval width / 4) and the prediction 1/b (b = per-task decay rate, Theorem 2's
      log m): crossing(m) ~ const + log(m)/b.
    * ``K``: per K, the x = s ||p||^2 gap^2 at which Algorithm 1's per-task pair error reaches
      ``k_target`` (interpolated in log error, interval from the binomial limits), and the
      union-bound allowance log(K/3)/b for the shift from K = 3.
    """
    out: dict[str, Any] = {}
    if "minimax_curve" in res:
        out["minimax"] = _minimax_summary(res["minimax_curve"])
    if "every_task_m" in res:
        out["every_m"] = _every_m_summary(res["every_task_m"])
    if "theorem1_K" in res:
        out["K"] = _k_summary(res["theorem1_K"], k_target)
    return out


def _minimax_summary(mc: dict[str, Any]) -> dict[str, Any]:
    d = np.array([r["d_bar"] for r in mc["rows"]])
    mm: dict[str, Any] = {"d_bar": d, "lower": np.array([r["lower"] for r in mc["rows"]]),
                          "cor2": np.array([r["cor2_queries"] for r in mc["rows"]])}
    mm["cor2_slope"] = float(np.polyfit(np.log(d), np.log(mm["cor2"]), 1)[0])
    for name in ("TopTwo2", "oracle MLE"):
        reps = [np.asarray(r["queries"][name], dtype=float) for r in mc["rows"]]
        mean = np.array([np.nanmean(v) if np.any(np.isfinite(v)) else np.nan for v in reps])
        slope, se = loglog_slope(d, reps)
        mm[name] = {"queries": mean, "ratio": mean / mm["lower"], "slope": slope, "slope_se": se,
                    "missing": int(sum(int(np.sum(~np.isfinite(v))) for v in reps))}
    return mm


def _every_m_summary(ev: dict[str, Any]) -> dict[str, Any]:
    ms = np.array(ev["n_tasks_list"], dtype=float)
    x = np.asarray(ev["x"], dtype=float)
    R = ev["n_reps"]
    rows = []
    for m in ms:
        per = ev["per_m"][str(int(m))]
        lo, hi = (np.asarray(c, dtype=float) for c in per["ci"])
        rows.append(_crossing_interval(x, np.asarray(per["all_ok"]) / R, lo, hi, 0.5, increasing=True))
    cross = np.array(rows)
    sd = np.maximum((cross[:, 2] - cross[:, 0]) / 4, 0.25)
    X = np.column_stack([np.ones(ms.size), np.log(ms)])
    w = 1 / sd**2
    cov = np.linalg.inv((X * w[:, None]).T @ X)
    beta = cov @ (X * w[:, None]).T @ cross[:, 1]
    b, b_se = ev["slope"], ev["slope_se"]
    return {"m": ms, "crossing": cross, "beta": float(beta[1]), "beta_se": float(np.sqrt(cov[1, 1])),
                      "predicted": 1 / b, "predicted_se": b_se / b**2,
                      "task_rate": {str(int(m)): np.asarray(ev["per_m"][str(int(m))]["task_wrong"])
                                    / ev["per_m"][str(int(m))]["task_trials"] for m in ms}}


def _k_summary(tk: dict[str, Any], k_target: float) -> dict[str, Any]:
    Ks = tk["Ks"]
    xk = {}
    for K in Ks:
        r = tk["per_K"][str(K)]
        rate = np.asarray(r["rate"], dtype=float)
        xk[K] = _crossing_interval(r["x"], rate, np.asarray(r["ci_low"]), np.asarray(r["ci_high"]),
                                   k_target, increasing=False, log_y=True)
    b_min = min(tk["per_K"][str(K)]["slope"] for K in Ks)
    return {"Ks": Ks, "target": k_target, "x_needed": xk, "b_min": b_min,
            "allowance": {K: float(np.log(K / Ks[0]) / b_min) for K in Ks}}


def scaling_checks(res: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    """The shapes asserted on the scaling measurements; name -> (holds, message with the values).

    Tolerances come from the sampling noise: replicate standard errors for the minimax slope,
    Clopper-Pearson limits for the crossings and flip rates.
    """
    sm = scaling_summary(res)
    out: dict[str, tuple[bool, str]] = {}
    if "minimax" in sm:
        out.update(_minimax_checks(sm["minimax"]))
    if "every_m" in sm:
        out.update(_every_m_checks(sm["every_m"], res["every_task_m"]["n_reps"]))
    if "K" in sm:
        out.update(_k_checks(sm["K"]))
    if "sign_rule_curve" in res:
        out.update(_sign_checks(res["sign_rule_curve"]))
    return out


def _minimax_checks(mm: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    out: dict[str, tuple[bool, str]] = {}
    for name in ("TopTwo2", "oracle MLE"):
        q = mm[name]["queries"]
        out[f"minimax lower bound ({name})"] = (
            bool(np.all(q >= mm["lower"])),
            f"{name} needs n s = {np.round(q, 1).tolist()}, the lower bound 8(1/2-eps)^2/D-bar = "
            f"{np.round(mm['lower'], 1).tolist()}: no method can need less")
        sl, se = mm[name]["slope"], mm[name]["slope_se"]
        out[f"minimax no D-bar^2 gap ({name})"] = (
            bool(sl >= -1 - 3 * se and mm[name]["missing"] == 0),
            f"{name}: log-log slope of n s needed on D-bar = {sl:.2f} +- {se:.2f}; the lower bound has -1, "
            f"Cor. 2's first term {mm['cor2_slope']:.2f}; a D-bar^2 gap would show a slope below -1 - 3 s.e. "
            f"(missing crossings: {mm[name]['missing']})")
    return out


def _every_m_checks(em: dict[str, Any], R: int) -> dict[str, tuple[bool, str]]:
    out: dict[str, tuple[bool, str]] = {}
    cr = em["crossing"]
    tol = 3 * np.hypot(em["beta_se"], em["predicted_se"])
    out["every-task threshold grows like log m"] = (
        bool(np.all(np.isfinite(cr)) and abs(em["beta"] - em["predicted"]) <= tol and em["beta"] > 3 * em["beta_se"]),
        f"crossing of P(all pairs) = 1/2 at x = {np.round(cr[:, 1], 2).tolist()} for m = {em['m'].astype(int).tolist()}; "
        f"slope on log m {em['beta']:.2f} +- {em['beta_se']:.2f}, predicted 1/b = {em['predicted']:.2f} "
        f"+- {em['predicted_se']:.2f} (tolerance {tol:.2f})")
    # log m against a power law sqrt(m): weighted residual chi^2 of each two-parameter fit (s.d. from the
    # crossing intervals); the log law must fit (chi^2 below its 99 % point, 2 d.o.f.) and beat sqrt(m)
    from scipy.stats import chi2 as _chi2

    sd = np.maximum((cr[:, 2] - cr[:, 0]) / 4, 0.25)
    w = 1 / sd**2

    def _chi(f: np.ndarray) -> float:
        X = np.column_stack([np.ones(f.size), f])
        coef = np.linalg.solve((X * w[:, None]).T @ X, (X * w[:, None]).T @ cr[:, 1])
        return float(np.sum(w * (cr[:, 1] - X @ coef) ** 2))

    c_log, c_sqrt = _chi(np.log(em["m"])), _chi(np.sqrt(em["m"]))
    limit = float(_chi2.ppf(0.99, em["m"].size - 2))
    out["every-task threshold: log m, not a power of m"] = (
        bool(np.all(np.isfinite(cr)) and c_log <= limit and c_log < c_sqrt),
        f"weighted chi^2 of the crossing: log m law {c_log:.2f}, sqrt(m) law {c_sqrt:.2f} (99 % point {limit:.2f})")
    rates = np.array(list(em["task_rate"].values()))
    # Bonferroni over the grid points, so that the family-wise false-alarm rate is 5 %
    lo, hi = binomial_ci(np.round(rates * (R * em["m"][:, None])).astype(int),
                         np.repeat(R * em["m"][:, None].astype(int), rates.shape[1], axis=1),
                         confidence=1 - 0.05 / rates.shape[1])
    out["per-task error does not depend on m"] = (
        bool(np.all(lo.max(axis=0) <= hi.min(axis=0))),
        "per-task error at each x, Clopper-Pearson intervals (Bonferroni) over m overlap: "
        f"{np.round(rates[:, :6], 3).tolist()}")
    return out


def _k_checks(kk: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    out: dict[str, tuple[bool, str]] = {}
    Ks = kk["Ks"]
    x3 = kk["x_needed"][Ks[0]]
    ok_grow = all(kk["x_needed"][K][2] >= x3[0] for K in Ks[1:])
    ok_union = all(kk["x_needed"][K][0] - x3[2] <= kk["allowance"][K] for K in Ks[1:])
    last = kk["x_needed"][Ks[-1]]
    out["per-task error grows with K, at most like log K"] = (
        bool(ok_grow and ok_union and last[0] > x3[2]),
        "x = s||p||^2 gap^2 for per-task error {}: ".format(kk["target"])
        + ", ".join(f"K={K}: {v[1]:.2f} [{v[0]:.2f}, {v[2]:.2f}]" for K, v in kk["x_needed"].items())
        + "; union-bound allowance log(K/3)/b: "
        + ", ".join(f"{K}: {a:.2f}" for K, a in kk["allowance"].items()))
    return out


def _sign_checks(sr: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    out: dict[str, tuple[bool, str]] = {}
    fr = np.array(sr["hammer_fractions"])
    for key, st in sr["settings"].items():
        pap, sm_ = np.array(st["paper"]["flipped"]), np.array(st["sum"]["flipped"])
        paper_lo, paper_hi = (np.array(c) for c in st["paper"]["ci"])
        sum_lo = np.array(st["sum"]["ci"][0])
        safe = fr >= 0.6
        out[f"sign rule ({key})"] = (
            bool(np.all(pap[safe] == 0) and np.all(sm_[safe] == 0) and paper_lo[-1] > 0
                 and np.all(sum_lo <= paper_hi)),
            f"flips of {sr['n_reps']} per spammer fraction {np.round(1 - fr, 2).tolist()}: paper {pap.tolist()}, "
            f"sum {sm_.tolist()} (none with <= 40 % spammers; the paper's rule flips at 95 % spammers; "
            f"the sum rule never flips significantly more often)")
        # the symmetric-noise model (sign_flip_probability) against the measured flip rates, with
        # Bonferroni-corrected Clopper-Pearson intervals (family-wise false-alarm rate 5 %)
        n, R = int(st["n_workers"]), int(sr["n_reps"])
        k_vec = int(sr.get("n_labels", 5)) - 1
        pred = np.array([sign_flip_probability(n, int(round(a * n)), k_vec) for a in fr])
        lo, hi = binomial_ci(pap, R, confidence=1 - 0.05 / fr.size)
        out[f"sign rule flip rate = binomial model ({key})"] = (
            bool(np.all((lo <= pred) & (pred <= hi))),
            f"paper rule, measured {np.round(pap / R, 3).tolist()} vs model {np.round(pred, 3).tolist()} "
            f"(intervals at {1 - 0.05 / fr.size:.4f})")
    return out


def scaling_report(res: dict[str, Any]) -> str:
    """Markdown tables of the scaling measurements (printed by ``benchmarks/theorems_mc.py``)."""
    sm = scaling_summary(res)
    mm = sm["minimax"]
    mc = res["minimax_curve"]
    lines = [f"## Minimax: n s needed for pair error {mc['target']} (n = {mc['n_workers']}, m = {mc['n_tasks']}, "
             f"K = {mc['n_labels']})", "",
             "| q | D-bar | lower 8(1/2-eps)^2/D | TopTwo2 | ratio | oracle | ratio | Cor. 2 first term |",
             "|---|---|---|---|---|---|---|---|"]
    for i, r in enumerate(mc["rows"]):
        lines.append(f"| {r['confusion']} | {r['d_bar']:.4f} | {mm['lower'][i]:.1f} | {mm['TopTwo2']['queries'][i]:.1f} | "
                     f"{mm['TopTwo2']['ratio'][i]:.2f} | {mm['oracle MLE']['queries'][i]:.1f} | "
                     f"{mm['oracle MLE']['ratio'][i]:.2f} | {mm['cor2'][i]:.3g} |")
    lines.append(f"\nlog-log slopes on D-bar: TopTwo2 {mm['TopTwo2']['slope']:.2f} ± {mm['TopTwo2']['slope_se']:.2f}, "
                 f"oracle {mm['oracle MLE']['slope']:.2f} ± {mm['oracle MLE']['slope_se']:.2f}, lower bound -1, "
                 f"Cor. 2 first term {mm['cor2_slope']:.2f}")
    for name, (ok, msg) in scaling_checks(res).items():
        lines.append(f"- {'ok' if ok else 'FAILED'} {name}: {msg}")
    return "\n".join(lines)


def sign_flip_probability(n_workers: int, n_hammers: int, n_vectors: int = 1) -> float:
    """Probability that the paper's sign rule flips some u^(k) in a spammer-hammer crowd (a model).

    Model: the hammers' entries of the right orientation of u^(k) are positive and the spammers'
    entries (p_i = 0) are noise around 0, positive with probability 1/2, independently. The rule
    ("more positive than negative entries", ties broken by the sum) flips u^(k) when
    h + B < n/2, B ~ Binomial(n - h, 1/2); the ``n_vectors`` = K - 1 vectors are taken as
    independent: 1 - (1 - P(B < n/2 - h))^(K-1). The margin is h/2 against a spread
    sqrt(n - h)/2, so the rule is safe only when h >> sqrt(n): with a fixed hammer fraction the
    flip probability vanishes as n grows, but at finite n a majority of spammers (which the
    footnote of Sec. 3 does not exclude) makes it large.
    """
    from scipy.stats import binom

    owner = "sign_flip_probability"
    n = check_int(n_workers, "n_workers", owner=owner, minimum=1)
    h = check_int(n_hammers, "n_hammers", owner=owner, minimum=0)
    v = check_int(n_vectors, "n_vectors", owner=owner, minimum=1)
    if h > n:
        raise ValueError(f"{owner}: `n_hammers` = {h} exceeds `n_workers` = {n}.")
    threshold = math.ceil(n / 2 - h) - 1          # B <= threshold  <=>  h + B < n/2
    p_one = float(binom.cdf(threshold, n - h, 0.5)) if n > h and threshold >= 0 else 0.0
    return 1.0 - (1.0 - p_one) ** v
