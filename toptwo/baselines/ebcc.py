r"""EBCC: Enhanced Bayesian Classifier Combination (Li, Rubinstein & Cohn, ICML 2019).

Problem. Bayesian classifier combination (a Bayesian Dawid-Skene model) in which every
true class k has M latent *subtypes*; the confusion matrix of a worker depends on the
(class, subtype) of the task, which lets correlated worker behaviour be represented
through a low-rank mixture rather than pairwise terms. Generative model (the paper's
Sec. 3): class prior tau ~ Dir(alpha), subtype weights pi_k ~ Dir(a_pi / M) per class,
worker confusion rows v_{i,k,m} ~ Dir(beta_k) with beta_{k,l} = a_v if l = k else b_v;
then for task j: z_j ~ tau, g_j ~ pi_{z_j}, and A_ij ~ v_{i, z_j, g_j}.

Update: mean-field variational Bayes (the paper's Sec. 4 inference, "EBCC-VB"), with
q(z_j = k, g_j = m) = r_jkm and Dirichlet factors:

* ``eta_km = a_pi / M + sum_j r_jkm``, ``nu_k = alpha + sum_{j,m} r_jkm``,
  ``mu_{i,k,m,l} = beta_{k,l} + sum_{j: A_ij = l} r_jkm``;
* ``log r_jkm = E[log pi_km] + E[log tau_k] + sum_{i answered j} E[log v_{i,k,m,A_ij}] + c_j``
  with ``E[log x] = digamma(param) - digamma(sum of params)``.

Start (as the authors' code): r_jk = normalised majority-vote counts, split over the M
subtypes by a Dirichlet(1, ..., 1) draw per (task, class) from ``rng`` (here a hash of a
draw of ``rng`` and the task's content, :func:`toptwo.baselines._base.task_keys`, so
that the result does not depend on the order of the workers, tasks or rows). Stop when the
largest absolute change of the class posteriors ``sum_m r_jkm`` is at most ``tol``
(the authors use an absolute tolerance 1e-3 on the same quantity) or after
``max_iter`` iterations. The log scores whose top two are read off are
``log sum_m r_jkm`` (kept on the log scale, so tiny posteriors keep their order).
Defaults follow the authors' code: M = 10, a_pi = 0.1, alpha = 1, a_v = 4, b_v = 1.

Cost: O(nnz K M) per iteration through two sparse products with the
task x (worker, label) incidence matrix; memory O(n_tasks K M + n_workers K^2 M).

References
----------
.. [1] Y. Li, B. I. P. Rubinstein and T. Cohn, "Exploiting Worker Correlation for Label
   Aggregation in Crowdsourcing", ICML 2019 (cited as [EBCC] in the paper).
.. [2] H. Jeong and H. W. Chung, "Recovering Top-Two Answers and Confusion Probability
   in Multi-Choice Crowdsourcing", ICML 2023.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma, logsumexp

from .._cost import check_dense_cost
from ._base import (ScoreOutputMixin, canonical_labels, check_dense_size, fit_doc,
                    key_uniforms, task_keys)
from .._validation import Interval
from ..responses import as_responses

__all__ = ["EBCC"]


class EBCC(ScoreOutputMixin):
    """EBCC variational inference; top two from the class posterior.

    Parameters
    ----------
    n_subtypes : int, default=10
        M, subtypes per class.
    a_pi : float, default=0.1
        Total Dirichlet concentration of the subtype weights (a_pi / M each).
    alpha : float, default=1.0
        Dirichlet concentration of the class prior.
    a_v, b_v : float, default=4.0, 1.0
        Dirichlet prior of each confusion row: a_v on the true class, b_v elsewhere.
    tol : float, default=1e-3
        Stop when max |change| of the class posteriors <= tol.
    max_iter : int, default=500
    rng : None, int or numpy.random.Generator
        Draws the random split of the initial posteriors over subtypes (per task, a hash
        of a draw and the task's content).

    Attributes
    ----------
    class_prior_ : ndarray (K,)
        E[tau] under q.
    subtype_weights_ : ndarray (K, M)
        E[pi_k] under q.
    top_two_, posteriors_, log_scores_, confusion_, n_iter_, converged_,
    n_workers_in_, n_tasks_in_, n_labels_in_
        As in :class:`toptwo.baselines.DawidSkene`.

    Examples
    --------
    >>> import toptwo
    >>> model = toptwo.TopTwoModel.random(20, 60, 3, rng=0)   # 20 workers, 60 tasks, K = 3
    >>> est = toptwo.baselines.EBCC(rng=0).fit(model.sample(0.5, rng=1))
    >>> est.top_two_[:3].tolist()                # truth: [[1, 2], [3, 2], [3, 2]]
    [[1, 3], [2, 3], [3, 2]]
    >>> round(toptwo.top_two_errors(est.top_two_, model.top_two)["pair"], 2)
    0.47
    """

    def __init__(self, *, n_subtypes: int = 10, a_pi: float = 0.1, alpha: float = 1.0,
                 a_v: float = 4.0, b_v: float = 1.0, tol: float = 1e-3,
                 max_iter: int = 500, rng: Any = None):
        self.n_subtypes = n_subtypes
        self.a_pi = a_pi
        self.alpha = alpha
        self.a_v = a_v
        self.b_v = b_v
        self.tol = tol
        self.max_iter = max_iter
        self.rng = rng

    _parameter_constraints = {
        "n_subtypes": [Interval(Integral, 1, None, closed="left")],
        "a_pi": [Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "a_v": [Interval(Real, 0, None, closed="neither")],
        "b_v": [Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "rng": ["random_state"],
    }

    @fit_doc
    def fit(self, A: Any, n_labels: int | None = None) -> "EBCC":
        """Fit by mean-field variational Bayes."""
        params = self._validate_params()
        M, a_pi, alpha = params["n_subtypes"], params["a_pi"], params["alpha"]
        a_v, b_v, tol = params["a_v"], params["b_v"], params["tol"]
        max_iter, gen = params["max_iter"], params["rng"]
        R = as_responses(A, n_labels, owner=f"{self._name}.fit")
        check_dense_cost(R, f"{self._name}.fit")              # before any (m, K) array
        n, m, K = R.n_workers, R.n_tasks, R.n_labels
        check_dense_size(f"{self._name}.fit", f"the n_tasks x K x n_subtypes posteriors "
                         f"({m} x {K} x {M})", m * K * M, copies=6,
                         work=max_iter * (m * K * M + n * K * K * M), hint="Use TopTwo2, MajorityVote or OneCoinDawidSkene (sparse, O(nnz) per step) for data this size.")
        answered = R.task_counts() > 0
        # task x (worker, label) incidence: X[j, i K + l] = 1 if A_ij = l + 1
        X = sp.csr_array((np.ones(R.nnz), (R.tasks, R.workers.astype(np.int64) * K
                                           + R.labels - 1)), shape=(m, n * K))
        XT = X.T.tocsr()
        beta = np.full((K, K), b_v)
        np.fill_diagonal(beta, a_v)
        counts = R.task_label_counts()
        tot = counts.sum(axis=1, keepdims=True)
        z = np.divide(counts, tot, out=np.zeros_like(counts), where=tot > 0)
        # Dirichlet(1, ..., 1) split per (task, class): normalised Exp(1) draws, each a
        # hash of (a draw of rng, the task's content), not of its position (issue 27)
        # drawn for the labels in a canonical order, then renumbered: the start does not
        # depend on the numbering of the choices
        Rc, rank = canonical_labels(R)
        E = -np.log(key_uniforms(task_keys(Rc, Rc.task_label_counts(), gen), K * M, gen)
                    ).reshape(m, K, M)[:, rank, :]
        r = E / E.sum(axis=2, keepdims=True) * z[:, :, None]
        r[~answered] = 0.0
        converged = False
        it = 0
        for it in range(1, max_iter + 1):  # noqa: B007 - its last value is read after the loop
            eta = a_pi / M + r.sum(axis=0)                                   # (K, M)
            nu = alpha + z.sum(axis=0)                                        # (K,)
            N = (XT @ r.reshape(m, K * M)).reshape(n, K, K, M)                # [i, l, k, m]
            mu = N.transpose(0, 2, 3, 1) + beta[None, :, None, :]             # [i, k, m, l]
            e_log_pi = digamma(eta) - digamma(eta.sum(axis=1, keepdims=True))
            e_log_tau = digamma(nu) - digamma(nu.sum())
            e_log_v = digamma(mu) - digamma(mu.sum(axis=3, keepdims=True))
            V = e_log_v.transpose(0, 3, 1, 2).reshape(n * K, K * M)          # [(i, l), (k, m)]
            L = (X @ V).reshape(m, K, M) + e_log_pi[None] + e_log_tau[None, :, None]
            La = L[answered].reshape(-1, K * M)
            La = La - logsumexp(La, axis=1, keepdims=True)
            r = np.zeros((m, K, M))
            r[answered] = np.exp(La).reshape(-1, K, M)
            z_new = r.sum(axis=2)
            change = float(np.max(np.abs(z_new - z))) if answered.any() else 0.0
            z = z_new
            if change <= tol:
                converged = True
                break
        log_scores = np.zeros((m, K))
        log_scores[answered] = logsumexp(La.reshape(-1, K, M), axis=2)
        self._store(R, log_scores)
        self.class_prior_ = nu / nu.sum()
        self.subtype_weights_ = eta / eta.sum(axis=1, keepdims=True)
        self.n_iter_ = it
        self.converged_ = converged
        return self
