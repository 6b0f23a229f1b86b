r"""Per-task probabilities: ``p_g`` (g is the true answer) and ``p_pair`` ((g, h) is the pair).

Every estimator reports a pair (g_j, h_j) per task; this module says how sure one can be
of it, under the top-two model of eq. (1) [`eqn:A_dist`], with one meaning for every
method (the CLI's ``p_g``/``p_pair`` columns and :meth:`toptwo.TopTwo2.to_frame` alike):

* ``p_g[j]`` = P(g_j is task j's true answer | its answers), summed over the second answer;
* ``p_pair[j]`` = P((g_j, h_j) is task j's ordered pair | its answers).

The posterior. Given worker reliabilities p_i and a task's confusion q, eq. (1) gives
P(A_ij = c | a, b, q) = (1 - p_i)/K + p_i q 1(c = a) + p_i (1 - q) 1(c = b). The pair has
a uniform prior over the K (K - 1) ordered pairs, and q an empirical-Bayes prior: weights
pi over POSTERIOR_NODES nodes (t = 2 q - 1 at the midpoints of equal bins of [0, 1];
:class:`toptwo.TopTwoEM` uses the same construction with its own GRID_NODES) fitted to the
crowd by maximum marginal likelihood at fixed p (the same objective and Newton solver as
TopTwoEM's grid weights). So

    P(a, b | answers of task j) proportional to  sum_k pi_k exp(Sa_jk(a) + Sb_jk(b)),   a != b,

with Sa_jk(c) = sum_{i: A_ij = c} log(1 + K p_i q_k/(1 - p_i)) (Sb likewise with 1 - q_k).

* :class:`toptwo.TopTwoEM`: its own posterior (``g_proba_``, ``pair_proba_``), at its
  fitted p and grid weights, on its own grid (``confusion_grid_``): the same formula.
* every other method: p from eq. (5) [`eqn:hatpi`] at the method's own pairs (hits per
  answer of each worker, clipped to [MIN_RELIABILITY, MAX_RELIABILITY]), pi fitted as
  above, the posterior evaluated at the method's (g, h).

How well these numbers are calibrated on the paper's real datasets (and why no
crowd-only correction can fix the rest): ``docs/calibration.md``, measured by
``benchmarks/calibration.py``.

Gold tasks. A researcher who knows the true answer of a few tasks recalibrates ``p_g``
on them: :func:`calibrate` fits a monotone map (Platt scaling of logit p_g, at least
:data:`MIN_GOLD` tasks) and :func:`gold_probabilities` applies it to the other tasks
(the CLI's ``--gold FILE``, ``to_frame(gold=...)``); measured with 5-20% of the tasks as
gold by ``benchmarks/gold_calibration.py``.

O(nnz G + m K G) time (G nodes), by TopTwoEM's exclusive sums (no (task, a, b,
node) array), a chunk of tasks at a time, so memory is O(nnz + m (K + G));
:func:`expected_gain` builds the (task, a, b, node) array, a chunk at a time.
Every sum over a task's answers is taken in task-major order (workers increasing) by
scipy's sparse product, without BLAS, so the result does not depend on the input order.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._validation import as_float_array, check_int, check_probability_vector
from .responses import Responses

__all__ = ["grid_posterior", "fit_grid_weights", "task_probabilities", "plugin_reliability",
           "expected_gain", "relabel_order", "calibrate", "GoldCalibration",
           "gold_probabilities", "MIN_GOLD"]

#: Entries of the (task, a, b, node) array built at once (:func:`expected_gain`).
_CHUNK = 1 << 20
#: Entries of the (label, task, 2 nodes) score array built at once (p_g and p_pair).
_NODE_CHUNK = 1 << 18


#: Nodes of the grid of q for every method but TopTwoEM: TopTwoEM's grid until it went
#: to 5 nodes for speed (2026-12, issue 42); kept at 10 here, so the p_g and p_pair of
#: TopTwo2 and the baselines, and their calibration measured in docs/calibration.md,
#: did not change with it.
POSTERIOR_NODES = 10


def _nodes() -> np.ndarray:
    t = (np.arange(POSTERIOR_NODES) + 0.5) / POSTERIOR_NODES
    return 0.5 * (1.0 + t)


def _chunks(R: Responses, G: int, per_task: int | None = None):
    """(lo, hi, inc, workers) per chunk of tasks: ``inc`` of shape (c K, r) sums a
    per-response table into (task, label) rows; ``per_task`` entries per task are built
    at once (default K^2 G), at most _CHUNK in all."""
    K = R.n_labels
    indptr, workers_tm, labels_tm = R.task_major()
    step = max(1, _CHUNK // (K * K * G if per_task is None else per_task))
    for lo in range(0, R.n_tasks, step):
        hi = min(R.n_tasks, lo + step)
        r0, r1 = int(indptr[lo]), int(indptr[hi])
        tasks = np.repeat(np.arange(hi - lo), np.diff(indptr[lo:hi + 1]))
        rows = tasks * K + (labels_tm[r0:r1].astype(np.int64) - 1)
        inc = sp.csr_array((np.ones(r1 - r0), (rows, np.arange(r1 - r0))),
                           shape=((hi - lo) * K, r1 - r0))
        yield lo, hi, inc, workers_tm[r0:r1]


def _scores(R: Responses, p: np.ndarray, q_nodes: np.ndarray):
    """Per chunk: (lo, hi, L) with L[j, a, b, k] = Sa_jk(a) + Sb_jk(b) - M_j (diagonal
    -inf), M_j the task's largest entry (so every exp(L) is at most 1 and one is 1)."""
    K, G = R.n_labels, q_nodes.size
    cw = K * p / (1.0 - p)
    ta = np.log1p(cw[:, None] * q_nodes[None, :])            # (n, G) per worker and node
    tb = np.log1p(cw[:, None] * (1.0 - q_nodes)[None, :])
    diag = np.arange(K)
    for lo, hi, inc, w in _chunks(R, G):
        c = hi - lo
        Sa = (inc @ ta[w]).reshape(c, K, G)
        Sb = (inc @ tb[w]).reshape(c, K, G)
        L = Sa[:, :, None, :] + Sb[:, None, :, :]
        L[:, diag, diag, :] = -np.inf
        L -= L.max(axis=(1, 2, 3))[:, None, None, None]
        yield lo, hi, L


def _node_terms(R: Responses, p: np.ndarray, q_nodes: np.ndarray):
    """Per chunk of tasks: (lo, hi, Sa, Sb, W, Z, M) in O(c K G), no (c, K, K, G) array.

    Sa, Sb of shape (K, c, G) are the per-label scores; from TopTwoEM's E-step
    (``_grid_node_terms``, exclusive sums, exact shift for tasks that would underflow):
    W[a, j, k] = sum_{b != a} exp(Sa[a, j, k] + Sb[b, j, k] - M[j]) (a as g) in
    W[..., :G] and the same with the label as h in W[..., G:], and
    Z[j, k] = sum_a W[a, j, k], the likelihood of task j's answers at node k divided by
    exp(M[j] + C_j) (C_j the same for every node and pair).
    """
    from .extensions._em_grid import _grid_node_terms
    K, G = R.n_labels, q_nodes.size
    cw = K * p / (1.0 - p)
    ta = np.log1p(cw[:, None] * q_nodes[None, :])            # (n, G) per worker and node
    tb = np.log1p(cw[:, None] * (1.0 - q_nodes)[None, :])
    tab = np.concatenate([ta, tb], axis=1)                   # (n, 2 G)
    indptr, workers_tm, labels_tm = R.task_major()
    step = max(1, _NODE_CHUNK // (2 * K * G))
    for lo in range(0, R.n_tasks, step):
        hi = min(R.n_tasks, lo + step)
        c = hi - lo
        r0, r1 = int(indptr[lo]), int(indptr[hi])
        # (label, task) x worker incidence, rows label-major: F @ tab is (K, c, 2 G);
        # within a row the workers come in increasing order (task-major order)
        tasks = np.repeat(np.arange(c), np.diff(indptr[lo:hi + 1]))
        rows = (labels_tm[r0:r1].astype(np.int64) - 1) * c + tasks
        F = sp.csr_array((np.ones(r1 - r0), (rows, workers_tm[r0:r1])),
                         shape=(K * c, R.n_workers))
        S = (F @ tab).reshape(K, c, 2 * G)
        W, Z, M = _grid_node_terms(S)
        yield lo, hi, S[..., :G], S[..., G:], W, Z, M


def fit_grid_weights(R: Responses, p: np.ndarray, q_nodes: np.ndarray | None = None
                     ) -> np.ndarray:
    """Grid weights pi maximising the marginal likelihood of the answers at fixed p.

    The empirical-Bayes prior of q_j: F(pi) = sum_j log(sum_k pi_k Z_jk) + delta sum_k
    log pi_k (Z_jk the likelihood of task j's answers at node k, delta = GRID_PSEUDO),
    maximised by TopTwoEM's Newton solver on the simplex (``_pi_newton``).

    Parameters
    ----------
    R : Responses
        The answers.
    p : ndarray of shape (n_workers,)
        Reliabilities in (0, 1).
    q_nodes : ndarray, optional
        The nodes (default: the POSTERIOR_NODES midpoints).

    Returns
    -------
    ndarray of shape (len(q_nodes),), summing to 1.
    """
    from .extensions._em_grid import GRID_PSEUDO, _pi_newton
    q_nodes = _nodes() if q_nodes is None else np.asarray(q_nodes, float)
    answered = R.task_counts() > 0
    Z = np.empty((R.n_tasks, q_nodes.size))
    for lo, hi, _, _, _, Zc, _ in _node_terms(R, p, q_nodes):
        Z[lo:hi] = Zc
    if not answered.all():
        Z = Z[answered]
    pi = np.full(q_nodes.size, 1.0 / q_nodes.size)
    pi, _ = _pi_newton(Z, pi, GRID_PSEUDO, max_steps=100)   # F rises; stops when flat
    return pi


def _at_pairs(R: Responses, p: np.ndarray, pi: np.ndarray, q_nodes: np.ndarray,
              pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P(g_j = pairs[j, 0]) and P((g_j, h_j) = pairs[j]) per task, chunk by chunk (only
    O(m) output: no (n_tasks, K) array); NaN where unanswered or a pair label is 0."""
    G = q_nodes.size
    m = R.n_tasks
    pg, pp = np.empty(m), np.empty(m)
    a_ix, b_ix = np.maximum(pairs[:, 0] - 1, 0), np.maximum(pairs[:, 1] - 1, 0)
    for lo, hi, Sa, Sb, W, Z, M in _node_terms(R, p, q_nodes):
        D = Z @ pi
        rows = np.arange(hi - lo)
        a, b = a_ix[lo:hi], b_ix[lo:hi]
        pg[lo:hi] = (W[a, rows, :G] @ pi) / D
        e = np.exp(Sa[a, rows] + Sb[b, rows] - M[:, None])
        pp[lo:hi] = np.where(a != b, e @ pi, 0.0) / D
    answered = R.task_counts() > 0
    pg = np.where(answered & (pairs[:, 0] > 0), pg, np.nan)
    pp = np.where(answered & (pairs[:, 0] > 0) & (pairs[:, 1] > 0), pp, np.nan)
    return pg, pp


def grid_posterior(R: Responses, p: np.ndarray, pi: np.ndarray,
                   q_nodes: np.ndarray | None = None, pairs: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray | None]:
    """Posterior of each task's pair with q integrated over the grid (module docstring).

    O(nnz G + m K G) by the exclusive sums of TopTwoEM's E-step (``_node_terms``).

    Parameters
    ----------
    R : Responses
        The answers.
    p : ndarray of shape (n_workers,)
        Reliabilities in (0, 1).
    pi : ndarray of shape (G,)
        Weights of the nodes.
    q_nodes : ndarray of shape (G,), optional
        Default: the POSTERIOR_NODES midpoints.
    pairs : ndarray of shape (n_tasks, 2), optional
        Labels 1..K (0 = none): the pair whose posterior is returned.

    Returns
    -------
    g_marginal : ndarray of shape (n_tasks, K)
        P(label c is g_j | the task's answers) in column c - 1; NaN rows for unanswered
        tasks.
    p_pair : ndarray of shape (n_tasks,) or None
        P((g_j, h_j) = pairs[j] | the answers) (NaN where unanswered or ``pairs[j]`` has
        a 0).
    """
    q_nodes = _nodes() if q_nodes is None else np.asarray(q_nodes, float)
    K, m, G = R.n_labels, R.n_tasks, q_nodes.size
    pi = np.asarray(pi, float)
    gm = np.empty((m, K))
    pp = None if pairs is None else np.empty(m)
    if pairs is not None:
        pairs = np.asarray(pairs)
        a_ix, b_ix = np.maximum(pairs[:, 0] - 1, 0), np.maximum(pairs[:, 1] - 1, 0)
    for lo, hi, Sa, Sb, W, Z, M in _node_terms(R, p, q_nodes):
        D = Z @ pi
        gm[lo:hi] = (W[..., :G] @ pi).T / D[:, None]
        if pp is not None:
            rows = np.arange(hi - lo)
            e = np.exp(Sa[a_ix[lo:hi], rows] + Sb[b_ix[lo:hi], rows] - M[:, None])
            pp[lo:hi] = np.where(a_ix[lo:hi] != b_ix[lo:hi], e @ pi, 0.0) / D
    answered = R.task_counts() > 0
    gm[~answered] = np.nan
    if pp is not None and pairs is not None:
        pp = np.where(answered & (pairs[:, 0] > 0) & (pairs[:, 1] > 0), pp, np.nan)
    return gm, pp


def plugin_reliability(R: Responses, top: np.ndarray) -> np.ndarray:
    """p_i from eq. (5) at the pairs ``top`` (hits per answer of each worker; K = 2: the
    one-coin 2 x share of answers equal to g minus 1), clipped to [MIN_RELIABILITY,
    MAX_RELIABILITY]; a worker without usable answers gets MIN_RELIABILITY."""
    from .reliability import MAX_RELIABILITY, MIN_RELIABILITY, estimate_reliability
    top = np.asarray(top)
    if R.n_labels > 2:
        p = estimate_reliability(R, top, normalization="per_worker")
    else:
        hit = (R.labels == top[R.tasks, 0]).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            p = 2.0 * np.bincount(R.workers, hit, R.n_workers) / R.worker_counts() - 1.0
    return np.clip(np.nan_to_num(p, nan=MIN_RELIABILITY), MIN_RELIABILITY, MAX_RELIABILITY)


def _model(est: Any, R: Responses) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, pi, q_nodes) of the posterior for a fitted estimator (module docstring)."""
    pi = getattr(est, "confusion_weights_", None)
    if pi is not None and "reliability_" in est.__dict__:          # TopTwoEM, grid
        p = np.clip(np.nan_to_num(est.reliability_, nan=0.5), 1e-12, 1.0 - 1e-12)
        return p, np.asarray(pi, float), np.asarray(est.confusion_grid_, float)
    p = plugin_reliability(R, est.top_two_)
    q_nodes = _nodes()
    return p, fit_grid_weights(R, p, q_nodes), q_nodes


def task_probabilities(est: Any, R: Responses | None = None) -> dict[str, np.ndarray]:
    """``p_g`` and ``p_pair`` of a fitted estimator's pairs (module docstring).

    Parameters
    ----------
    est : fitted toptwo estimator
        Any with ``top_two_`` (labels 1..K, 0 for an unanswered task).
    R : Responses, optional
        The data it was fitted on (default: the data recorded by ``fit``).

    Returns
    -------
    dict with ``p_g`` and ``p_pair``, ndarrays of shape (n_tasks,) (NaN where a task has
    no answers).

    Examples
    --------
    >>> import toptwo
    >>> from toptwo.posterior import task_probabilities
    >>> model = toptwo.TopTwoModel.random(40, 200, 4, rng=0)
    >>> est = toptwo.TopTwo2(rng=0).fit(model.sample(0.5, rng=1))
    >>> pr = task_probabilities(est)
    >>> bool(((pr["p_g"] >= pr["p_pair"]) & (pr["p_g"] <= 1)).all())
    True
    """
    if R is None:
        R = getattr(est, "_responses_in", None)
        if R is None:
            raise ValueError(f"task_probabilities needs the data {type(est).__name__} was "
                             f"fitted on: pass R (it was not recorded by fit).")
    cached = est.__dict__.get("_task_probabilities")
    if cached is not None and cached[0] is R:
        return dict(cached[1])
    top = np.asarray(est.top_two_)
    answered = (R.task_counts() > 0) & (top[:, 0] > 0)
    if "g_proba_" in est.__dict__ and "pair_proba_" in est.__dict__:
        out = {"p_g": np.where(answered, est.g_proba_, np.nan),
               "p_pair": np.where(answered, est.pair_proba_, np.nan)}
    else:
        p, pi, q_nodes = _model(est, R)
        pg, pp = _at_pairs(R, p, pi, q_nodes, top)
        out = {"p_g": np.where(answered, pg, np.nan), "p_pair": np.where(answered, pp, np.nan)}
    est.__dict__["_task_probabilities"] = (R, dict(out))
    return out


# ------------------------------------------------------------------ gold calibration
#: Fewest gold tasks :func:`calibrate` fits on. Measured (``docs/calibration.md``,
#: ``benchmarks/gold_calibration.py``): on *flag*, whose ``p_g`` is already calibrated,
#: a map fitted on 5 gold tasks raised the ECE on the other tasks beyond its noise in
#: 99-100% of the splits; on 10, the mean ECE stayed within it (70% of the splits).
MIN_GOLD = 10
#: ``p_g`` is clipped to [PG_CLIP, 1 - PG_CLIP] before its logit is taken: the
#: precision the CLI prints (6 decimals), so a map fitted on printed numbers is the same.
PG_CLIP = 1e-6


def _logit(p: np.ndarray) -> np.ndarray:
    c = np.clip(p, PG_CLIP, 1.0 - PG_CLIP)
    return np.log(c) - np.log1p(-c)


@dataclass(frozen=True)
class GoldCalibration:
    r"""A monotone map of ``p_g`` fitted on gold tasks (:func:`calibrate`).

    ``cal(p) = expit(slope * logit(p) + intercept)`` with ``slope >= 0`` (Platt
    scaling; p clipped to [PG_CLIP, 1 - PG_CLIP] first): non-decreasing, strictly
    increasing when ``slope > 0``, so the order of the tasks by ``p_g`` is kept (a
    slope of 0, when the gold tasks show no rise of accuracy with ``p_g``, maps every
    task to the same value). NaN stays NaN.

    Attributes
    ----------
    slope, intercept : float
        a and b.
    n_gold, n_correct : int
        The gold tasks fitted on, and how many of them had the right g.
    """

    slope: float
    intercept: float
    n_gold: int
    n_correct: int

    def __call__(self, p_g: Any) -> np.ndarray:
        """The calibrated probabilities of ``p_g`` (array-like in [0, 1], NaN allowed)."""
        p = as_float_array(p_g, "p_g", owner="GoldCalibration")
        bad = (p < 0) | (p > 1) | np.isinf(p)
        if bad.any():
            i = int(np.flatnonzero(bad.reshape(-1))[0])
            raise ValueError(f"`p_g` of GoldCalibration must lie in [0, 1] (NaN for no "
                             f"estimate); found {float(p.reshape(-1)[i])!r} at flat index "
                             f"{i}.")
        z = self.slope * _logit(p) + self.intercept
        out = 1.0 / (1.0 + np.exp(-z))
        return np.where(np.isnan(p), np.nan, out)


def calibrate(p_g: Any, correct: Any) -> GoldCalibration:
    r"""Fit a monotone recalibration of ``p_g`` on gold tasks (tasks with a known answer).

    Platt scaling: P(g right | p_g) = expit(a logit(p_g) + b), a >= 0, (a, b) maximising
    the likelihood of Platt's smoothed targets (N+ + 1)/(N+ + 2) for a right g and
    1/(N- + 2) for a wrong one (N+, N- the gold tasks with a right and a wrong g), which
    keeps the fit finite when every gold g is right. Chosen over isotonic regression
    and beta calibration by the held-out measurement in ``docs/calibration.md`` (lower
    Brier score at every share of 5-20% of the tasks as gold; ECE within 0.004 of
    isotonic's). A fitted slope a = 0 (the gold shows no rise of accuracy with p_g) gives
    every task the same probability: the ranking is then lost. The gold tasks are sorted
    first, so the fit does not depend on their order.

    Parameters
    ----------
    p_g : array-like of shape (n_gold,)
        The model's ``p_g`` of the gold tasks (:func:`task_probabilities`), in [0, 1].
    correct : array-like of shape (n_gold,)
        True (or 1) where the task's g is its known answer, False (0) where not.

    Returns
    -------
    GoldCalibration
        Call it on the other tasks' ``p_g``.

    Raises
    ------
    ValueError
        With fewer than :data:`MIN_GOLD` gold tasks, or ``p_g`` outside [0, 1] or NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from toptwo.posterior import calibrate
    >>> p = np.linspace(0.9, 0.999, 30)                     # the model says >= 0.9 ...
    >>> cal = calibrate(p, np.arange(30) % 3 > 0)          # ... but g is right on 2 in 3
    >>> bool(np.all(np.diff(cal(p)) >= 0)), round(float(cal(p).mean()), 2)
    (True, 0.66)
    """
    owner = "calibrate"
    p = check_probability_vector(p_g, "p_g", owner=owner, low=0.0, high=1.0)
    y = as_float_array(correct, "correct", owner=owner)
    if y.shape != p.shape:
        raise ValueError(f"`correct` of {owner} must have the shape of `p_g` {p.shape}; got "
                         f"{y.shape} instead.")
    bad = (y != 0) & (y != 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"`correct` of {owner} must hold True/False (or 1/0); found "
                         f"{float(y[i])!r} at index {i}.")
    if p.size < MIN_GOLD:
        raise ValueError(f"{owner} needs at least MIN_GOLD={MIN_GOLD} gold tasks to fit the "
                         f"calibration of p_g; got {p.size}.")
    return _platt(p, y)


def _platt(p: np.ndarray, y: np.ndarray) -> GoldCalibration:
    """:func:`calibrate`'s fit without the checks (any number of gold tasks)."""
    order = np.lexsort((y, p))
    p, y = p[order], y[order]
    z = _logit(p)
    n1 = float(y.sum())
    n0 = y.size - n1
    t = np.where(y > 0, (n1 + 1.0) / (n1 + 2.0), 1.0 / (n0 + 2.0))

    def nll(ab: np.ndarray) -> tuple[float, np.ndarray]:
        s = ab[0] * z + ab[1]
        r = 1.0 / (1.0 + np.exp(-s)) - t
        # sums without BLAS (np.dot may round differently under another CPU kernel)
        return (float((np.logaddexp(0.0, s) - t * s).sum()),
                np.array([(r * z).sum(), r.sum()]))

    from scipy.optimize import minimize
    res = minimize(nll, np.array([1.0, 0.0]), jac=True, method="L-BFGS-B",
                   bounds=[(0.0, None), (None, None)],
                   options=dict(gtol=1e-10, ftol=1e-14, maxiter=500))
    a, b = (float(v) for v in res.x)
    return GoldCalibration(slope=a, intercept=b, n_gold=int(p.size), n_correct=int(n1))


def _gold_vector(gold: Any, R: Responses, owner: str) -> np.ndarray:
    """``gold`` as labels 1..K per task (0 = not a gold task): an array of shape
    (n_tasks,) (as :attr:`toptwo.datasets.Dataset.truth`), or a mapping / pandas Series
    from task id (as given to ``fit``; 0..n_tasks-1 for an array) to label."""
    K, m = R.n_labels, R.n_tasks
    if hasattr(gold, "items") and not isinstance(gold, np.ndarray):
        ids = R.task_ids
        index = ({t: j for j, t in enumerate(ids.tolist())} if ids is not None else None)
        out = np.zeros(m, dtype=np.int64)
        for t, lab in gold.items():
            j = index.get(t) if index is not None else (
                int(t) if isinstance(t, (int, np.integer)) and not isinstance(t, bool)
                and 0 <= t < m else None)
            if j is None:
                alike = ([u for u in (ids.tolist() if ids is not None else range(m))
                          if str(u) == str(t)][:1])
                hint = (f" (a task {alike[0]!r} exists: the id's type differs, "
                        f"{type(t).__name__} here, {type(alike[0]).__name__} in the data)"
                        if alike else "")
                raise ValueError(f"`gold` of {owner} names task {t!r}, which is not among the "
                                 f"{m} tasks of the data the estimator was fitted on{hint}.")
            if isinstance(lab, (bool, np.bool_)) or not isinstance(lab, (int, np.integer)) \
                    or not 1 <= lab <= K:
                raise ValueError(f"`gold` of {owner} gives task {t!r} the label {lab!r}; "
                                 f"labels are integers 1..{K}.")
            out[j] = int(lab)
        return out
    arr = np.asarray(gold)
    if arr.shape != (m,) or not (np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"`gold` of {owner} must be an integer array of shape ({m},) (labels "
                         f"1..{K}, 0 for a task without a known answer) or a mapping from "
                         f"task id to label; got {arr.dtype} of shape {arr.shape} instead.")
    bad = (arr < 0) | (arr > K)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise ValueError(f"`gold` of {owner} gives task {j} the label {int(arr[j])}; labels "
                         f"are 1..{K} (0 for no known answer).")
    return arr.astype(np.int64)


def gold_probabilities(est: Any, gold: Any, R: Responses | None = None
                       ) -> dict[str, np.ndarray]:
    """``p_g`` and ``p_pair`` recalibrated on gold tasks (:func:`calibrate`).

    * The other tasks: ``p_g`` = cal(model ``p_g``) and ``p_pair`` = cal(``p_g``) x
      P(h is the pair's second | g is true) under the model (``p_pair / p_g`` of
      :func:`task_probabilities`; the gold answers say nothing about h, so this factor
      stays the model's). ``p_g_source`` is ``"calibrated"``.
    * The gold tasks: the answer is known, so ``p_g`` is 1 if the estimator's g is it,
      else 0, and ``p_pair`` is that times the same factor; ``p_g_source`` is
      ``"gold"``. Their g and h stay the estimator's (so a wrong g stays visible).

    Parameters
    ----------
    est : fitted estimator
        Any with ``top_two_``.
    gold : array-like of shape (n_tasks,) or mapping
        Known answers, labels 1..K: an integer array with 0 for the tasks without one
        (as :attr:`toptwo.datasets.Dataset.truth`), or a dict / pandas Series from task
        id (those given to ``fit``; 0..n_tasks-1 for an array) to label. At least
        :data:`MIN_GOLD` answered gold tasks.
    R : Responses, optional
        Default: the data recorded by ``fit``.

    Returns
    -------
    dict with ``p_g``, ``p_pair`` (float arrays, NaN for unanswered tasks) and
    ``p_g_source`` (object array of ``"gold"`` / ``"calibrated"``).

    Examples
    --------
    >>> import numpy as np, toptwo
    >>> from toptwo.posterior import gold_probabilities
    >>> model = toptwo.TopTwoModel.random(40, 200, 4, rng=0)
    >>> est = toptwo.TopTwo2(rng=0).fit(model.sample(0.3, rng=1))
    >>> gold = np.where(np.arange(200) < 40, model.top_two[:, 0], 0)  # 40 known answers
    >>> pr = gold_probabilities(est, gold)
    >>> sorted(set(pr["p_g_source"]))
    ['calibrated', 'gold']
    """
    owner = "gold_probabilities"
    if R is None:
        R = getattr(est, "_responses_in", None)
        if R is None:
            raise ValueError(f"{owner} needs the data the estimator was fitted on: pass R.")
    g_true = _gold_vector(gold, R, owner)
    base = task_probabilities(est, R)
    pg, pp = base["p_g"], base["p_pair"]
    is_gold = g_true > 0
    unanswered = is_gold & np.isnan(pg)
    if unanswered.any():
        j = int(np.flatnonzero(unanswered)[0])
        name = R.task_ids[j] if R.task_ids is not None else j
        raise ValueError(f"`gold` of {owner} gives task {name!r} a known answer, but nobody "
                         f"answered it: a gold task must have answers to be fitted on.")
    g = np.asarray(est.top_two_)[:, 0]
    right = (g == g_true)
    n = int(is_gold.sum())
    if n < MIN_GOLD:
        raise ValueError(f"{owner} needs at least MIN_GOLD={MIN_GOLD} gold tasks to fit the "
                         f"calibration of p_g; got {n}.")
    cal = calibrate(pg[is_gold], right[is_gold])
    with np.errstate(invalid="ignore", divide="ignore"):
        h_given_g = np.where(pg > 0, pp / pg, 0.0)
    new_pg = np.where(is_gold, right.astype(float), cal(pg))
    new_pg = np.where(np.isnan(pg), np.nan, new_pg)
    new_pp = np.where(np.isnan(pp), np.nan, new_pg * h_given_g)
    source = np.where(is_gold, "gold", "calibrated").astype(object)
    return {"p_g": new_pg, "p_pair": new_pp, "p_g_source": source}


# ----------------------------------------------------------- re-labelling value
def expected_gain(est: Any, R: Responses | None = None, n_answers: int | None = None,
                  n_draws: int = 64, rng: Any = 0) -> np.ndarray:
    r"""Expected fall of each task's g error if it got ``n_answers`` fresh answers.

    For task j with posterior P(a, b, k | its answers) (module docstring), its expected
    error now is 1 - p_g[j]; after r fresh answers A' (workers drawn like the crowd's answers:
    the worker of a random answer, so with the crowd's reliabilities) the best choice is
    the label with the largest posterior of being g, so the expected error becomes
    1 - E[max_c P(c is g | its answers, A')]. The gain is the difference::

        gain_j = E[max_c P(c is g | answers, A') - P(g_j is g | answers, A')]  >= 0

    (the second term's expectation is p_g[j]), the preposterior expectation taken by
    Monte Carlo: ``n_draws`` draws of (a, b, k) from the posterior and r answers from
    eq. (1), the same random numbers for every task (common random numbers; a seed
    gives the same list every run, whatever the order of the input rows).

    Parameters
    ----------
    est : fitted estimator
        Any with ``top_two_``.
    R : Responses, optional
        Default: the data recorded by ``fit``.
    n_answers : int, optional
        r, answers per re-labelled task (default: the median number of answers per
        answered task).
    n_draws : int, default=64
        Monte Carlo draws per task.
    rng : int or numpy.random.Generator, default=0
        Seed of the draws.

    Returns
    -------
    ndarray of shape (n_tasks,), >= 0; an unanswered task's gain is computed from the
    prior (every pair equally likely).
    """
    owner = "expected_gain"
    if R is None:
        R = getattr(est, "_responses_in", None)
        if R is None:
            raise ValueError(f"{owner} needs the data the estimator was fitted on: pass R.")
    counts = R.task_counts()
    if n_answers is None:
        n_answers = max(1, int(np.median(counts[counts > 0])))
    r = check_int(n_answers, "n_answers", owner=owner, minimum=1)
    S = check_int(n_draws, "n_draws", owner=owner, minimum=1)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(
        check_int(rng, "rng", owner=owner, minimum=0))
    K, m = R.n_labels, R.n_tasks
    top = np.asarray(est.top_two_)
    p, pi, q_nodes = _model(est, R)
    G = q_nodes.size
    p_resp = np.sort(p[R.workers])              # sorted: independent of the input order
    # common random numbers: for each draw s, uniforms for (a, b, k) and r answers
    u_state = gen.random(S)
    u_pw = p_resp[gen.integers(0, p_resp.size, size=(S, r))]         # (S, r) reliabilities
    u_ans = gen.random((S, r))
    u_any = gen.integers(0, K, size=(S, r))                            # uniform label
    cw_new = K * u_pw / (1.0 - u_pw)
    logpi = np.log(pi)
    gain = np.empty(m)
    diag = np.arange(K)
    flat_pairs = K * K * G
    for lo, hi, L in _scores(R, p, q_nodes):
        c = hi - lo
        L += logpi
        W = np.exp(L)
        W /= W.sum(axis=(1, 2, 3))[:, None, None, None]
        g_now = np.where(top[lo:hi, 0] > 0, top[lo:hi, 0] - 1, W.sum(axis=(2, 3)).argmax(1))
        cdf = np.cumsum(W.reshape(c, flat_pairs), axis=1)
        best = np.zeros(c)
        for s in range(S):
            idx = np.minimum((cdf < u_state[s] * cdf[:, -1:]).sum(axis=1), flat_pairs - 1)
            a, rest = np.divmod(idx, K * G)
            b, k = np.divmod(rest, G)
            qk = q_nodes[k]
            # r answers: with prob p_i reliable (a w.p. q, else b), otherwise uniform
            add = np.zeros((c, K, K, G))
            for t in range(r):
                pw = u_pw[s, t]
                v = u_ans[s, t]
                lab = np.where(v < pw * qk, a, np.where(v < pw, b, u_any[s, t]))
                wa = np.log1p(cw_new[s, t] * q_nodes)                   # (G,)
                wb = np.log1p(cw_new[s, t] * (1.0 - q_nodes))
                rows = np.arange(c)
                add[rows, lab, :, :] += wa[None, None, :]
                add[rows, :, lab, :] += wb[None, None, :]
            L2 = L + add
            L2[:, diag, diag, :] = -np.inf
            L2 -= L2.max(axis=(1, 2, 3))[:, None, None, None]
            E = np.exp(L2)
            gm2 = E.sum(axis=(2, 3))
            # max minus the current choice's posterior: >= 0 draw by draw (its mean is
            # p_g now, so this is the gain with a control variate)
            best += (gm2.max(axis=1) - gm2[np.arange(c), g_now]) / gm2.sum(axis=1)
        gain[lo:hi] = best / S
    return gain


def relabel_order(est: Any, n: int, R: Responses | None = None, *,
                  n_answers: int | None = None, n_draws: int = 64, rng: Any = 0,
                  tie_key: Any = None) -> np.ndarray:
    """The ``n`` tasks whose re-labelling is expected to lower the g error most.

    Sorted by :func:`expected_gain` (largest first), compared after rounding to 9
    decimals so that round-off cannot reorder them; equal gains go by ``tie_key`` (e.g.
    the task ids as written; default the task index).

    Returns
    -------
    ndarray of int, shape (n,): task indices.
    """
    owner = "relabel_order"
    if R is None:
        R = getattr(est, "_responses_in", None)
        if R is None:
            raise ValueError(f"{owner} needs the data the estimator was fitted on: pass R.")
    k = check_int(n, "n", owner=owner, minimum=0)
    if k > R.n_tasks:
        raise ValueError(f"The 'n' parameter of {owner} must be at most n_tasks="
                         f"{R.n_tasks}; got {n} instead.")
    gain = expected_gain(est, R, n_answers=n_answers, n_draws=n_draws, rng=rng)
    key = -np.round(gain, 9)
    tie = np.arange(R.n_tasks) if tie_key is None else np.asarray(tie_key)
    return np.lexsort((tie, key))[:k]


def relabel_rows(est: Any, R: Responses, task_ids: Any, n: int, decimals: int,
                 pg: np.ndarray | None = None, known: np.ndarray | None = None
                 ) -> list[str]:
    """The CLI's ``--uncertain N`` lines: a header ``task,expected_gain,p_g`` and the
    :func:`relabel_order` tasks, equal gains ordered by the task id as written (so a
    shuffled file lists the same tasks in the same order); ``pg``: the ``p_g`` column
    printed (default :func:`task_probabilities`; the CLI passes the gold-calibrated one
    with ``--gold``); ``known``: a mask of the tasks whose answer is known (gold), never
    listed (re-labelling them cannot lower the g error). The gain is the model's own
    (:func:`expected_gain`), with or without gold."""
    known = np.zeros(R.n_tasks, dtype=bool) if known is None else np.asarray(known, bool)
    open_tasks = int(R.n_tasks - known.sum())
    if n > open_tasks:
        what = "task(s)" if not known.any() else "task(s) whose answer is not known (gold)"
        raise ValueError(f"--uncertain {n} is more than the {open_tasks} {what}; give at "
                         f"most {open_tasks}.")
    ids = np.array([str(t) for t in task_ids])
    gain = expected_gain(est, R)           # the same gains as relabel_order, computed once
    candidates = np.flatnonzero(~known)
    order = candidates[np.lexsort((ids[candidates], -np.round(gain[candidates], 9)))][:n]
    if pg is None:
        pg = task_probabilities(est, R)["p_g"]
    rows = ["task,expected_gain,p_g"]
    for j in order:
        g = f"{round(float(gain[j]), decimals)}"
        p = "" if np.isnan(pg[j]) else f"{round(float(pg[j]), decimals)}"
        line = io.StringIO()              # CSV-quoted as the output file (an id with a comma)
        csv.writer(line, lineterminator="").writerow([task_ids[j], g, p])
        rows.append(line.getvalue())
    return rows
