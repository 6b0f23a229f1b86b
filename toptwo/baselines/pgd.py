r"""PGD: projected gradient descent for sparse rank-one completion, then the one-coin MLE.

Ma, Olshevsky, Saligrama & Szepesvari (ICML 2018), the paper's **PGD** baseline.

Problem. Under the one-coin Dawid-Skene model, the worker agreement matrix
``C_ij = K/(K-1) * agree_ij / common_ij - 1/(K-1)`` (:func:`toptwo.mmsr.worker_covariance`)
has expectation ``x_i x_j`` on every observed pair i != j, with ``x_i = (K s_i - 1)/(K - 1)``
(the top-two paper's reliability p_i with q_j = 1). Ma et al. estimate x by minimising the
squared error on the observed off-diagonal entries,

    f(x) = sum_{(i, j) observed, i != j} (C_ij - x_i x_j)^2,

by gradient steps projected onto the box of valid reliabilities,

    x <- Proj_[-1/(K-1), 1]( x - eta grad f(x) ),   grad_i f = -4 sum_j (C_ij - x_i x_j) x_j,

and show that, on their sparse interaction graphs, this converges to the global optimum
up to the noise level. The labels are then the one-coin maximum-likelihood estimate:
a weighted vote with weight ``log((K - 1) s_i / (1 - s_i))``, which is the log posterior
of each label up to a constant (uniform prior).

Choices where this implementation had to fix details (stated, not taken from the paper):
start x = 1/2 for every worker (positive, so the descent selects the branch where most
workers are better than random; f is symmetric under x -> -x); constant step
``eta = step / (12 d_max)`` with d_max the largest number of co-workers (on the box
|x| <= 1 the gradient is 12 d_max-Lipschitz in the max norm); x clipped to
[-1/(K-1) + 1/sqrt(m), 1 - 1/sqrt(m)] before the weights (as for
:class:`toptwo.mmsr.MMSR`). Stop when max |x(t) - x(t-1)| <= tol, or after ``max_iter``
steps. Workers without a co-worker get x = 0 (weight 0).

Cost: the agreement counts are sparse products, O(sum_j d_j^2); a step is O(n^2) on the
n x n worker matrix; the vote is O(nnz).

References
----------
.. [1] Y. Ma, A. Olshevsky, V. Saligrama and C. Szepesvari, "Gradient Descent for
   Sparse Rank-One Matrix Completion for Crowd-Sourced Aggregation of Sparsely
   Interacting Workers", ICML 2018 (cited as [PGD] in the paper); JMLR 21(133), 2020.
.. [2] H. Jeong and H. W. Chung, "Recovering Top-Two Answers and Confusion Probability
   in Multi-Choice Crowdsourcing", ICML 2023.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np

from .._cost import check_dense_cost
from ._base import ScoreOutputMixin, one_coin_scores, check_dense_size, fit_doc
from .._validation import Interval
from .mmsr import worker_covariance
from ..responses import as_responses

__all__ = ["PGD", "rank_one_pgd"]


def rank_one_pgd(C: np.ndarray, observed: np.ndarray, n_labels: int, *, step: float = 1.0,
                 tol: float = 1e-7, max_iter: int = 5000) -> tuple[np.ndarray, int, bool]:
    """Projected gradient descent on f(x) = sum_observed (C_ij - x_i x_j)^2 (module doc).

    Returns (x, n_iter, converged); x = 0 for rows without an observed entry.
    """
    obs = np.asarray(observed, dtype=float)
    np.fill_diagonal(obs, 0.0)
    active = obs.sum(axis=1) > 0
    lo, hi = -1.0 / (n_labels - 1), 1.0
    deg = max(float(obs.sum(axis=1).max()), 1.0)
    eta = step / (12.0 * deg)
    x = np.where(active, 0.5, 0.0)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - its last value is read after the loop
        grad = -4.0 * (obs * (C - np.outer(x, x))) @ x
        new = np.where(active, np.clip(x - eta * grad, lo, hi), 0.0)
        change = float(np.max(np.abs(new - x)))
        x = new
        if change <= tol:
            converged = True
            break
    return x, it, converged


class PGD(ScoreOutputMixin):
    """Rank-one completion of the worker agreement matrix by projected gradient descent.

    Parameters
    ----------
    step : float, default=1.0
        eta = step / (12 d_max) (see the module docstring); 1.0 is the safe bound.
    tol : float, default=1e-7
        Stop when max_i |x_i(t) - x_i(t-1)| <= tol.
    max_iter : int, default=5000
    rng : None, int or numpy.random.Generator
        Unused (PGD is deterministic); accepted, and checked like every ``rng``, for a
        uniform factory signature.

    Attributes
    ----------
    reliability_, skills_, weights_, covariance_
        As in :class:`toptwo.mmsr.MMSR`.
    objective_ : float
        f(x) at the end (before clipping for the weights).
    top_two_, posteriors_, log_scores_, confusion_, n_iter_, converged_,
    n_workers_in_, n_tasks_in_, n_labels_in_
        As in :class:`toptwo.baselines.DawidSkene`.

    Examples
    --------
    >>> import toptwo
    >>> model = toptwo.TopTwoModel.random(20, 60, 3, rng=0)   # 20 workers, 60 tasks, K = 3
    >>> est = toptwo.baselines.PGD(rng=0).fit(model.sample(0.5, rng=1))
    >>> est.top_two_[:3].tolist()                # truth: [[1, 2], [3, 2], [3, 2]]
    [[1, 3], [3, 2], [3, 2]]
    >>> round(toptwo.top_two_errors(est.top_two_, model.top_two)["pair"], 2)
    0.47
    """

    def __init__(self, *, step: float = 1.0, tol: float = 1e-7, max_iter: int = 5000,
                 rng: Any = None):
        self.step = step
        self.tol = tol
        self.max_iter = max_iter
        self.rng = rng

    _parameter_constraints = {
        "step": [Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "rng": ["random_state"],            # ignored, but a valid rng like everywhere else
    }

    @fit_doc
    def fit(self, A: Any, n_labels: int | None = None) -> "PGD":
        """Estimate the reliabilities by PGD, then take the one-coin MLE (weighted vote)."""
        params = self._validate_params()
        step, tol, max_iter = params["step"], params["tol"], params["max_iter"]
        R = as_responses(A, n_labels, owner=f"{self._name}.fit")
        check_dense_cost(R, f"{self._name}.fit")              # before any (m, K) array
        K = R.n_labels
        n = R.n_workers
        check_dense_size(f"{self._name}.fit", f"the n_workers x n_workers worker covariance "
                         f"({n} x {n})", n * n, copies=6,
                         hint="Use TopTwo2, MajorityVote or OneCoinDawidSkene (sparse, O(nnz) per step) for data this size.")
        m_ans = max(int((R.task_counts() > 0).sum()), 1)
        C, common = worker_covariance(R)
        obs = (common > 0).astype(float)
        active = obs.sum(axis=1) > 0
        x, it, converged = rank_one_pgd(C, common > 0, K, step=step, tol=tol,
                                        max_iter=max_iter)
        obs = (common > 0).astype(float)
        lo, hi = -1.0 / (K - 1), 1.0
        active = obs.sum(axis=1) > 0
        self.objective_ = float(np.sum(obs * (C - np.outer(x, x)) ** 2) / 2.0)
        xc = np.where(active, np.clip(x, lo + 1.0 / np.sqrt(m_ans),
                                      hi - 1.0 / np.sqrt(m_ans)), 0.0)
        scores, s, w = one_coin_scores(R, xc)
        self._store(R, scores)
        self.reliability_ = xc
        self.skills_ = s
        self.weights_ = w
        self.covariance_ = C
        self.n_iter_ = it
        self.converged_ = converged
        return self
