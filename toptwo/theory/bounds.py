"""The paper's bounds as functions: Theorem 3(a)/(b), Lemma 1, Le Cam, the sign rule.

Closed-form quantities only (no simulation); the SymPy proofs of their arithmetic are in
``theory_checks``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import check_int


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
