"""Monte-Carlo experiments for the paper's probabilistic statements.

Each function draws crowds from :class:`toptwo.TopTwoModel` with a given ``rng`` and
measures the event a theorem bounds (Theorem 1, Lemma 1, Theorem 3, the sign rule),
with Clopper-Pearson intervals.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_int, check_rng
from ..metrics import top_two_errors
from ..model import TopTwoModel
from .bounds import LE_CAM_PINSKER_CONSTANT, lemma1_bound, le_cam_queries, theorem3b_corrected_bound



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
    from ..model import kl_divergence_per_task
    from ..mle import OracleMLE

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
    (``TopTwo1(**PAPER_ALGORITHM1)``: per-k left vectors and the paper's sign rule, not the
    package's pooled default) is run ``n_reps`` times.

    Returns
    -------
    list of dicts, one per (reliability range, q): ``reliability_range``, ``confusion``,
    ``gap``, ``norm_p2``, ``x``, ``sampling_rate`` (NaN where s > 1), ``wrong`` and ``trials``
    (pair errors and task outcomes pooled over replicates), ``rate``, ``ci_low``/``ci_high``
    (Clopper-Pearson 95%; task outcomes within a replicate share u^(k), so these intervals
    are optimistic), ``slope``/``slope_se`` (weighted fit of log rate = a - slope * x).
    """
    from ..spectral import TopTwo1

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
                    est = TopTwo1(**PAPER_ALGORITHM1, rng=gen).fit(model.sample(s, rng=gen), K)
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
    from ..model import kl_divergence_per_task
    from ..mle import OracleMLE

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


#: The configurations of the paper's algorithms as printed (Algorithm 1 and Algorithm 2): sample
#: splitting, the paper's centring and sign rule, one left vector per binary matrix (``"per_k"``),
#: eq. (5) as printed, with the paper's normalisation. The package's defaults differ (``left_vector="stacked"``,
#: docs/design_stage1.md); statements about the paper's algorithms are measured on these.
PAPER_ALGORITHM1: dict[str, Any] = {"sample_splitting": True, "centering": "paper", "left_vector": "per_k", "sign_rule": "paper"}
PAPER_ALGORITHM2: dict[str, Any] = {**PAPER_ALGORITHM1, "reliability_normalization": "paper",
                                    "reliability_estimator": "moment"}


def competitor_information(reliability: Any, confusion: float, n_labels: int, estimator: str) -> float:
    """Per-competitor information per unit sampling rate: x / s for the label-union experiment.

    A task fails through label c (c not in {g, h}) when c out-scores h. Algorithm 1 compares
    the u-weighted counts of h and c (Delta v of eq. (2), u ~ p/||p||); its signal-to-noise
    ratio squared, s (1-q)^2 ||p||^4 / sum_i p_i^2 (p_i (1-q) + 2 (1-p_i)/K), is s times the
    returned value for ``estimator="alg1"``. Eq. (6) compares log-likelihoods of (g, h) and
    (g, c), two answer distributions that differ by swapping the probabilities a_i =
    p_i (1-q) + (1-p_i)/K and b_i = (1-p_i)/K of h and c; the Chernoff information of such a
    swap is the Bhattacharyya distance, s sum_i (sqrt(a_i) - sqrt(b_i))^2 to first order in s
    (the exponent of the likelihood-ratio test's error), returned over s for ``estimator="alg2"``.
    """
    p = np.asarray(reliability, float)
    q, K = float(confusion), int(n_labels)
    a = p * (1 - q)
    if estimator == "alg1":
        return float((1 - q) ** 2 * np.sum(p**2) ** 2 / np.sum(p**2 * (a + 2 * (1 - p) / K)))
    if estimator == "alg2":
        return float(np.sum((np.sqrt(a + (1 - p) / K) - np.sqrt((1 - p) / K)) ** 2))
    raise ValueError(f"competitor_information: `estimator` must be 'alg1' or 'alg2'; got {estimator!r}.")


def label_union_failures(estimator: str = "alg1", n_labels_list: tuple[int, ...] = (3, 5, 9), *,
                         n_workers: int = 400, n_tasks: int = 2000, confusion: float = 0.8,
                         reliability_range: tuple[float, float] = (0.3, 0.9), information: float = 12.0,
                         n_reps: int = 4, rng: Any = None) -> dict[str, Any]:
    """The log K of Corollaries 1-2: task failures against per-competitor failures, over K.

    Corollary 1's log(mK/eps) and Theorem 2's log(mK^2/eps) come from union bounds: a task
    fails when one of several label comparisons fails, and there are more of them at larger K.
    With q = ``confusion`` > 2/3 the binding comparisons are "c beats h" for the K - 2 labels
    c not in {g, h} (the g-vs-h gap 2q - 1 is larger than 1 - q). One worker pool
    (p_i ~ U(``reliability_range``)) is used for every K; at each K the sampling rate is set so
    that the per-competitor information (:func:`competitor_information`) equals
    ``information`` (matched per-task information), pairs are drawn uniformly, and the
    estimator is fitted ``n_reps`` times: ``"alg1"`` is Algorithm 1 as printed
    (``TopTwo1(**PAPER_ALGORITHM1)``), ``"alg2"`` Algorithm 2 as printed
    (``TopTwo2(**PAPER_ALGORITHM2)``). Counted: tasks with (g_hat, h_hat) != (g, h), and
    competitor events (task j, label c not in {g_j, h_j}) in which c out-scores h_j -- on
    Delta v (Algorithm 1: Delta v_c < Delta v_h) or on eq. (6)'s second-label score
    sum_{i: A_ij = c} log(1 + K p_i (1 - q_j)/(1 - p_i)) with the fit's p_hat, q_hat
    (Algorithm 2: larger than h's).

    If the K - 2 competitor events of a task acted like independent trials, the task would
    fail with probability 1 - (1 - f)^(c (K-2)^kappa) with kappa = 1 (the union bound's
    log K); ``theory_checks`` check ``mc_corollary1_log_K`` / ``mc_corollary2_log_K`` estimate kappa.

    Returns
    -------
    dict with ``estimator``, ``n_labels_list``, ``information``, ``confusion`` and per K (key K):
    ``sampling_rate``, ``task_failed``, ``task_trials``, ``competitor_wins``,
    ``competitor_trials``.
    """
    from ..mle import MAX_RELIABILITY, MIN_RELIABILITY, TopTwo2
    from ..spectral import TopTwo1

    owner = "label_union_failures"
    if estimator not in ("alg1", "alg2"):
        raise ValueError(f"{owner}: `estimator` must be 'alg1' or 'alg2'; got {estimator!r} instead.")
    n, m, K0, R, gen = _check_mc_sizes(owner, n_workers, n_tasks, min(n_labels_list), n_reps, rng)
    Ks = tuple(check_int(K, "n_labels_list", owner=owner, minimum=3) for K in n_labels_list)
    qv = float(confusion)
    if not 2 / 3 < qv < 1:
        raise ValueError(f"{owner}: `confusion` must lie in (2/3, 1) so that the K - 2 labels c bind; got {confusion!r}.")
    lo, hi = _check_unit_range(reliability_range, "reliability_range", owner)
    p = gen.uniform(lo, hi, size=n)
    out: dict[Any, Any] = {"estimator": estimator, "n_labels_list": list(Ks), "information": float(information),
                           "confusion": qv, "n_workers": n, "n_tasks": m, "n_reps": R}
    rows = np.arange(m)
    for K in Ks:
        g = gen.integers(1, K + 1, size=m)
        h = (g - 1 + gen.integers(1, K, size=m)) % K + 1
        model = TopTwoModel(p, np.full(m, qv), np.column_stack([g, h]), K)
        s = float(information) / competitor_information(p, qv, K, estimator)
        if not 0 < s <= 1:
            raise ValueError(f"{owner}: information {information!r} needs s = {s:.3g} at K = {K} (must be in (0, 1]).")
        others = np.ones((m, K), dtype=bool)
        others[rows, g - 1] = others[rows, h - 1] = False
        failed = wins = 0
        for _ in range(R):
            A = model.sample(s, rng=gen)
            if estimator == "alg1":
                est1 = TopTwo1(**PAPER_ALGORITHM1, rng=gen).fit(A, K)
                top_two = est1.top_two_
                score = -est1.result_.delta_v                     # smaller Delta v ranks first
            else:
                est2 = TopTwo2(**PAPER_ALGORITHM2, rng=gen).fit(A, K)
                top_two = est2.top_two_
                p_hat = np.clip(np.nan_to_num(est2.reliability_, nan=MIN_RELIABILITY), MIN_RELIABILITY,
                                MAX_RELIABILITY)
                w = np.log1p(K * p_hat[A.workers] * (1 - est2._q_mle[A.tasks]) / (1 - p_hat[A.workers]))
                score = np.bincount(A.tasks * K + (A.labels - 1), weights=w, minlength=m * K).reshape(m, K)
            failed += int(np.sum(np.any(top_two != model.top_two, axis=1)))
            wins += int(np.sum((score > score[rows, h - 1][:, None]) & others))
        out[K] = {"sampling_rate": s, "task_failed": failed, "task_trials": R * m,
                  "competitor_wins": wins, "competitor_trials": R * m * (K - 2)}
    return out


def label_union_exponent(data: dict[Any, Any]) -> tuple[float, float, dict[int, tuple[float, float]]]:
    """kappa of :func:`label_union_failures`: -log(1 - F_K) = c (K - 2)^kappa (-log(1 - f_K)).

    Weighted least squares of y_K = log(log(1 - F_K)/log(1 - f_K)) on log(K - 2) over the K of
    ``data`` (the intercept log c is free, so labels outside the K - 2 competitors -- the swap,
    g's errors -- only move c), with the delta-method variances of y_K (F_K and f_K treated as
    independent binomials). kappa = 1 is the union bound's log K; 0 means no K-dependence.

    Returns
    -------
    (kappa, standard error, {K: (F_K, f_K)}). ValueError when some F_K or f_K is 0 or 1.
    """
    xs, ys, ws, rates = [], [], [], {}
    for K in data["n_labels_list"]:
        r = data[K]
        F, NF = r["task_failed"] / r["task_trials"], r["task_trials"]
        f, Nf = r["competitor_wins"] / r["competitor_trials"], r["competitor_trials"]
        if not (0 < F < 1 and 0 < f < 1):
            raise ValueError(f"label_union_exponent: K = {K}: no usable failure counts ({r['task_failed']}/{NF}, "
                             f"{r['competitor_wins']}/{Nf}); need 0 < failures < trials.")
        var = F / (NF * (1 - F)) / np.log1p(-F) ** 2 + f / (Nf * (1 - f)) / np.log1p(-f) ** 2
        xs.append(np.log(K - 2))
        ys.append(np.log(np.log1p(-F) / np.log1p(-f)))
        ws.append(1 / var)
        rates[K] = (F, f)
    X = np.column_stack([np.ones(len(xs)), xs])
    w = np.asarray(ws)
    cov = np.linalg.inv((X * w[:, None]).T @ X)
    coef = cov @ (X * w[:, None]).T @ np.asarray(ys)
    return float(coef[1]), float(np.sqrt(cov[1, 1])), rates


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
    from ..spectral import TopTwo1

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
                # the per-k vectors of Algorithm 1 (the sign rule acts on each u^(k))
                est = TopTwo1(sign_rule=rule, left_vector="per_k").fit(A, K)
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
    from ..experiments import queries_needed
    from ..model import kl_divergence_per_task
    from ..mle import OracleMLE, TopTwo2

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
                for name, est in (("TopTwo2", TopTwo2(reliability_estimator="moment", rng=gen)), ("oracle MLE", OracleMLE(p, model.confusion))):
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
    from ..experiments import queries_needed
    from ..model import kl_divergence_per_task
    from ..mle import OracleMLE, TopTwo2

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
                for name, est in (("TopTwo2", TopTwo2(reliability_estimator="moment", rng=gen)), ("oracle MLE", OracleMLE(p, model.confusion))):
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
