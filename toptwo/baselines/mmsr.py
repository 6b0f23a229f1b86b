r"""M-MSR: robust rank-one completion of the worker covariance (Ma & Olshevsky 2020).

Problem. Under the one-coin Dawid-Skene model (worker i answers the truth with
probability s_i, otherwise a uniformly random other label) two workers i != j agree on a
common task with probability ``s_i s_j + (1 - s_i)(1 - s_j)/(K - 1)``, so the matrix

    C_ij = K/(K - 1) * (agreement rate of i and j on their common tasks) - 1/(K - 1)

has expectation ``x_i x_j`` with ``x_i = (K s_i - 1)/(K - 1)`` -- the paper's
reliability p_i of eq. (1) with q_j = 1. Estimating x is a rank-one matrix completion
problem on the observed (worker, worker) pairs, which Ma & Olshevsky solve robustly
(against up to F adversarial entries per row) with the *Matrix Mean-Subsequence-Reduced*
iteration (their Algorithm 1, M-MSR): with u, v > 0 started at random,

    v_j <- trimmed mean over observed i of |C_ij| / u_i,
    u_i <- trimmed mean over observed j of |C_ij| / v_j,

where "trimmed" drops the F largest values above the current estimate (or all of them
if there are fewer than F) and the F smallest below it. |x| = u / sqrt(|u|/|v|), the
signs come from the sign pattern of C, and the labels are the one-coin MLE: a weighted
vote with weight ``log((K - 1) s_i / (1 - s_i))`` per worker, which is the log
posterior of each label up to a constant (uniform class prior).

What is implemented, and choices where the paper leaves room
------------------------------------------------------------
* F = max(0, floor(d_min / 2) - 1), d_min = the smallest number of co-workers of an
  active worker (crowd-kit's rule); ``n_trim`` overrides it.
* Signs: the sign vector of the leading eigenvector of the observed sign matrix
  ``sign(C_ij)`` (rank-one sign pattern), globally oriented so that the majority of
  workers is better than random. The paper and crowd-kit use a graph construction for
  this step; on data where every x_i >= 0 both give all signs +.
* x is clipped to [-1/(K-1) + 1/sqrt(m), 1 - 1/sqrt(m)] before the weights (as in
  crowd-kit), which keeps every weight finite.
* Stop: when the largest change of |x| between iterations is at most ``tol``, or after
  ``max_iter`` iterations (the rank-one estimate itself, not a round-off-sized loss).

Cost. The agreement and co-occurrence counts are two sparse products (O(sum_j d_j^2),
d_j = workers on task j); each iteration is O(n^2 log n) on the n x n worker matrix; the
vote is O(nnz). Nothing of size n_workers x n_tasks is built.

References
----------
.. [1] Q. Ma and A. Olshevsky, "Adversarial Crowdsourcing Through Robust Rank-One
   Matrix Completion", NeurIPS 2020 (cited as [M-MSR] in the paper).
.. [2] H. Jeong and H. W. Chung, "Recovering Top-Two Answers and Confusion Probability
   in Multi-Choice Crowdsourcing", ICML 2023, Sec. 6.1 and Appendix "Baseline Methods".
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._cost import check_dense_cost
from ._base import (ScoreOutputMixin, canonical_labels, check_dense_size, fit_doc,
                    key_uniforms, one_coin_scores, worker_keys)
from .._validation import Interval
from ..responses import Responses, as_responses

__all__ = ["MMSR", "worker_covariance"]


def worker_covariance(R: Responses) -> tuple[np.ndarray, np.ndarray]:
    """C (n x n) and the number of common tasks (n x n, zero diagonal), see module doc.

    ``C_ij`` is 0 where workers i and j share no task (and on the diagonal).
    """
    n, m, K = R.n_workers, R.n_tasks, R.n_labels
    ones = np.ones(R.nnz)
    S = sp.csr_array((ones, (R.workers, R.tasks)), shape=(n, m))
    B = sp.csr_array((ones, (R.workers, R.tasks.astype(np.int64) * K + R.labels - 1)),
                     shape=(n, m * K))
    common = (S @ S.T).toarray()
    agree = (B @ B.T).toarray()
    np.fill_diagonal(common, 0.0)
    np.fill_diagonal(agree, 0.0)
    C = np.zeros((n, n))
    obs = common > 0
    C[obs] = K / (K - 1.0) * agree[obs] / common[obs] - 1.0 / (K - 1.0)
    return C, common


def _trimmed_means(Y: np.ndarray, obs: np.ndarray, current: np.ndarray, F: int,
                   m: int) -> np.ndarray:
    """Column-wise M-MSR trimmed mean of Y[obs] around ``current`` (see module doc)."""
    cnt = obs.sum(axis=0)
    Ys = np.sort(np.where(obs, Y, np.inf), axis=0)
    n_lt = (obs & (Y < current[None, :])).sum(axis=0)
    n_gt = (obs & (Y > current[None, :])).sum(axis=0)
    lo = np.where(n_lt >= F, F, n_lt)
    hi = np.where(n_gt >= F, cnt - F, cnt - n_gt)
    r = np.arange(Y.shape[0])[:, None]
    keep = (r >= lo[None, :]) & (r < hi[None, :])
    k = keep.sum(axis=0)
    tot = np.where(keep, Ys, 0.0).sum(axis=0)
    out = current.copy()
    ok = k > 0
    out[ok] = tot[ok] / k[ok]
    # a single kept value of exactly 0 would stall the division: crowd-kit's 1/sqrt(m)
    zero1 = ok & (k == 1) & (out == 0.0)
    out[zero1] = 1.0 / np.sqrt(m)
    return out


class MMSR(ScoreOutputMixin):
    """M-MSR worker reliabilities (Ma & Olshevsky 2020) and the one-coin weighted vote.

    Parameters
    ----------
    n_trim : int or None, default=None
        F, the number of extreme values dropped on each side in the trimmed means;
        None = ``max(0, floor(d_min / 2) - 1)``.
    tol : float, default=1e-8
        Stop when max_i |x_i(t) - x_i(t-1)| <= tol.
    max_iter : int, default=1000
    rng : None, int or numpy.random.Generator
        Draws the random positive start of u, v (uniform on (0, 1)): a hash of a draw of
        ``rng`` and the worker's content (:func:`toptwo.baselines._base.worker_keys`),
        so the result does not depend on the order of the workers, tasks or rows.

    Attributes
    ----------
    reliability_ : ndarray (n_workers,)
        x_i = (K s_i - 1)/(K - 1) after clipping (0 for workers without a co-worker).
    skills_ : ndarray (n_workers,)
        s_i = P(right answer) = x_i (K - 1)/K + 1/K.
    weights_ : ndarray (n_workers,)
        log((K - 1) s_i / (1 - s_i)).
    covariance_ : ndarray (n_workers, n_workers)
        C of the module docstring.
    top_two_, posteriors_, log_scores_, confusion_, n_iter_, converged_,
    n_workers_in_, n_tasks_in_, n_labels_in_
        As in :class:`toptwo.baselines.DawidSkene` (posteriors are the one-coin posteriors at the
        estimated skills, uniform prior).

    Examples
    --------
    >>> import toptwo
    >>> model = toptwo.TopTwoModel.random(20, 60, 3, rng=0)   # 20 workers, 60 tasks, K = 3
    >>> est = toptwo.baselines.MMSR(rng=0).fit(model.sample(0.5, rng=1))
    >>> est.top_two_[:3].tolist()                # truth: [[1, 2], [3, 2], [3, 2]]
    [[1, 3], [3, 2], [3, 2]]
    >>> round(toptwo.top_two_errors(est.top_two_, model.top_two)["pair"], 2)
    0.45
    """

    def __init__(self, *, n_trim: int | None = None, tol: float = 1e-8,
                 max_iter: int = 1000, rng: Any = None):
        self.n_trim = n_trim
        self.tol = tol
        self.max_iter = max_iter
        self.rng = rng

    _parameter_constraints = {
        "n_trim": [None, Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "rng": ["random_state"],
    }

    @fit_doc
    def fit(self, A: Any, n_labels: int | None = None) -> "MMSR":
        """Estimate the reliabilities by M-MSR, then take the weighted vote."""
        params = self._validate_params()
        tol, max_iter, gen = params["tol"], params["max_iter"], params["rng"]
        R = as_responses(A, n_labels, owner=f"{self._name}.fit")
        check_dense_cost(R, f"{self._name}.fit")              # before any (m, K) array
        n, K = R.n_workers, R.n_labels
        check_dense_size(f"{self._name}.fit", f"the n_workers x n_workers worker covariance "
                         f"({n} x {n})", n * n, copies=8,
                         hint="Use TopTwo2, MajorityVote or OneCoinDawidSkene (sparse, O(nnz) per step) for data this size.")
        m_ans = max(int((R.task_counts() > 0).sum()), 1)
        C, common = worker_covariance(R)
        obs = common > 0
        deg = obs.sum(axis=0)
        active = deg > 0
        F = params["n_trim"]
        if F is None:
            F = max(0, int(deg[active].min()) // 2 - 1) if active.any() else 0
        X = np.abs(C)
        # random positive start, a hash of (the seed's draw, the worker's content): the
        # same worker gets the same start wherever it stands in the input (issue 27)
        # keys of the data with its labels in a canonical order: the start does not
        # depend on the numbering of the choices
        start = key_uniforms(worker_keys(canonical_labels(R)[0], gen), 2, gen)
        u, v = start[:, 0].copy(), start[:, 1].copy()
        x_prev = np.zeros(n)
        converged = False
        it = 0
        for it in range(1, max_iter + 1):  # noqa: B007 - its last value is read after the loop
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                v = _trimmed_means(X / u[:, None], obs, v, F, m_ans)
                u = _trimmed_means(X.T / v[:, None], obs.T, u, F, m_ans)
                # norms over the workers with a co-worker: an idle worker keeps its
                # random start and must not scale the others
                nu, nv = np.linalg.norm(u[active]), np.linalg.norm(v[active])
                k = np.sqrt(nu / nv)
                x = np.where(active, u / k, 0.0)
            if not (nu > 0 and nv > 0 and np.isfinite(x).all()):
                # |C| is not close to rank one and the best rank-one fit is not attained
                # (e.g. x_0 -> inf, x_1 -> 0 with x_0 x_1 fixed): the iteration diverges
                # until over/underflow. Keep the last finite estimate (clipped below),
                # or x = 0 (every worker random) if there is none.
                x = x_prev
                break
            # (u, v) -> (u / k, v k) leaves x unchanged: rebalance so |u| = |v|
            u, v = u / k, v * k
            if np.max(np.abs(x - x_prev)) <= tol:
                converged = True
                break
            x_prev = x
        sign = _signs(C, obs, active)
        x = np.where(active, sign * x, 0.0)
        lo = -1.0 / (K - 1) + 1.0 / np.sqrt(m_ans)
        hi = 1.0 - 1.0 / np.sqrt(m_ans)
        x = np.where(active, np.clip(x, lo, hi), 0.0)
        scores, s, w = one_coin_scores(R, x)
        self._store(R, scores)
        self.reliability_ = x
        self.skills_ = s
        self.weights_ = w
        self.covariance_ = C
        self.n_trim_ = F
        self.n_iter_ = it
        self.converged_ = converged
        return self


#: relative tolerance under which a covariance or an eigenvector entry counts as 0 in the
#: sign step (round-off of sums whose order follows the input order)
SIGN_RTOL = 1e-9


def _signs(C: np.ndarray, obs: np.ndarray, active: np.ndarray) -> np.ndarray:
    """+-1 per worker from the leading eigenvector of the observed sign matrix."""
    n = C.shape[0]
    sign = np.ones(n)
    idx = np.flatnonzero(active)
    if idx.size == 0:
        return sign
    Cs = C[np.ix_(idx, idx)]
    # a covariance within round-off of 0 has no sign (its sum order follows the input order)
    tiny = SIGN_RTOL * max(1.0, float(np.abs(Cs).max()))
    Sg = np.where(np.abs(Cs) <= tiny, 0.0, np.sign(Cs)) * obs[np.ix_(idx, idx)]
    vals, vecs = np.linalg.eigh(Sg)
    # the leading eigenspace (several vectors when the integer matrix has a repeated top
    # eigenvalue, where eigh's basis follows the input order): the projection of the ones
    # vector onto it is the same vector whatever the order, oriented towards +1
    tol = SIGN_RTOL * max(1.0, float(np.abs(vals).max()))
    top = vecs[:, vals >= vals[-1] - tol]
    lead = top @ (top.T @ np.ones(idx.size))
    if not np.any(np.abs(lead) > tol):          # ones orthogonal to it: no preferred sign
        return sign
    sg = np.where(lead < -tol, -1.0, 1.0)       # entries within round-off of 0: +1
    if sg.sum() < 0:
        sg = -sg
    sign[idx] = sg
    return sign
