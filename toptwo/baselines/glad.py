r"""GLAD: Generative model of Labels, Abilities, and Difficulties (Whitehill et al. 2009).

Problem. Worker i has an ability alpha_i in R and task j an inverse difficulty
beta_j = exp(b_j) > 0; worker i answers task j correctly with probability

    P(A_ij = Z_j) = sigma(alpha_i beta_j),     sigma(x) = 1 / (1 + exp(-x)),

and otherwise gives one of the other K - 1 labels uniformly (the paper's multi-label
extension of its binary model; true labels Z_j i.i.d. with a fixed prior, here uniform).
alpha_i < 0 is an adversarial worker, alpha_i = 0 a guesser; beta_j -> 0 makes task j
a coin toss for everyone, beta_j -> infinity makes it trivial for anyone with
alpha_i > 0. Compared with the top-two model, GLAD has a per-task difficulty (like q_j)
but no most confusing answer.

Update (EM, Whitehill et al. Sec. 3 "Inference"):

* E-step: ``P(Z_j = k | A) ∝ prod_{i answered j} sigma(alpha_i beta_j)^[A_ij = k]
  ((1 - sigma(alpha_i beta_j)) / (K - 1))^[A_ij != k]``.
* M-step: maximise the expected complete log-likelihood plus the Gaussian log priors
  ``alpha_i ~ N(1, 1)``, ``b_j = log beta_j ~ N(1, 1)`` (the means the authors' code
  and crowd-kit use) over (alpha, b) by a gradient method; with ``P_e`` the posterior
  that response e is right and ``x_e = alpha_i beta_j``,
  ``dQ/d alpha_i = sum_e (P_e - sigma(x_e)) beta_j - (alpha_i - 1)`` and
  ``dQ/d b_j = sum_e (P_e - sigma(x_e)) alpha_i beta_j - (b_j - 1)``.
  Here: at most ``m_step_max_iter`` L-BFGS iterations from the current point
  (scipy.optimize.minimize), deterministic.

Start alpha = 1, b = 1 (crowd-kit's start), E-step first. Stop when one EM iteration
changed the log-posterior, sum_j log sum_k P(A_.j, Z_j = k) plus the log priors, by at
most ``tol`` per response (the convention of every EM in toptwo,
:data:`toptwo.baselines.EM_TOL`; each M-step raises Q, so the log-posterior does not
decrease), or after ``max_iter``. (Until 2026-11-25: the largest change of (alpha, b)
at most 1e-4.)

Cost: O(nnz + n_workers + n_tasks) per objective/gradient evaluation (``np.bincount``
over responses); no n_workers x n_tasks array.

References
----------
.. [1] J. Whitehill, P. Ruvolo, T. Wu, J. Bergsma and J. Movellan, "Whose Vote Should
   Count More: Optimal Integration of Labels from Labelers of Unknown Expertise",
   NIPS 2009.
.. [2] H. Jeong and H. W. Chung, "Recovering Top-Two Answers and Confusion Probability
   in Multi-Choice Crowdsourcing", ICML 2023.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from .._cost import check_dense_cost
from ._base import EM_TOL, ScoreOutputMixin, em_converged, fit_doc
from .._validation import Interval
from ..responses import Responses, as_responses

__all__ = ["GLAD"]


class GLAD(ScoreOutputMixin):
    """GLAD abilities and difficulties fitted by EM; top two from the label posterior.

    Parameters
    ----------
    tol : float, default=1e-5
        Stop when an EM iteration changed the log-posterior by at most ``tol`` per
        response (``EM_TOL``, the convention of every EM in toptwo).
    max_iter : int, default=100
        Maximum number of EM iterations.
    m_step_max_iter : int, default=25
        L-BFGS iterations per M-step.
    rng : None, int or numpy.random.Generator
        Unused (GLAD is deterministic); accepted, and checked like every ``rng``, for a
        uniform factory signature.

    Attributes
    ----------
    abilities_ : ndarray (n_workers,)
        alpha_i (NaN for workers without responses).
    difficulties_ : ndarray (n_tasks,)
        beta_j = exp(b_j) (NaN for tasks without responses).
    top_two_, posteriors_, log_scores_, confusion_, n_iter_, converged_,
    n_workers_in_, n_tasks_in_, n_labels_in_
        As in :class:`toptwo.baselines.DawidSkene`.

    Examples
    --------
    >>> import toptwo
    >>> model = toptwo.TopTwoModel.random(20, 60, 3, rng=0)   # 20 workers, 60 tasks, K = 3
    >>> est = toptwo.baselines.GLAD(rng=0).fit(model.sample(0.5, rng=1))
    >>> est.top_two_[:3].tolist()                # truth: [[1, 2], [3, 2], [3, 2]]
    [[1, 3], [3, 2], [3, 2]]
    >>> round(toptwo.top_two_errors(est.top_two_, model.top_two)["pair"], 2)
    0.45
    """

    def __init__(self, *, tol: float = EM_TOL, max_iter: int = 100,
                 m_step_max_iter: int = 25, rng: Any = None):
        self.tol = tol
        self.max_iter = max_iter
        self.m_step_max_iter = m_step_max_iter
        self.rng = rng

    _parameter_constraints = {
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "m_step_max_iter": [Interval(Integral, 1, None, closed="left")],
        "rng": ["random_state"],            # ignored, but a valid rng like everywhere else
    }

    @staticmethod
    def _log_scores(R: Responses, alpha: np.ndarray, b: np.ndarray) -> np.ndarray:
        K = R.n_labels
        x = alpha[R.workers] * np.exp(b[R.tasks])
        lr = log_expit(x)
        lw = log_expit(-x) - np.log(K - 1)
        base = np.bincount(R.tasks, weights=lw, minlength=R.n_tasks)
        bonus = np.bincount(R.tasks.astype(np.int64) * K + R.labels - 1, weights=lr - lw,
                            minlength=R.n_tasks * K).reshape(R.n_tasks, K)
        return base[:, None] + bonus

    @fit_doc
    def fit(self, A: Any, n_labels: int | None = None) -> "GLAD":
        """Fit by EM."""
        params = self._validate_params()
        tol, max_iter, inner = params["tol"], params["max_iter"], params["m_step_max_iter"]
        R = as_responses(A, n_labels, owner=f"{self._name}.fit")
        check_dense_cost(R, f"{self._name}.fit")              # before any (m, K) array
        n, m, K = R.n_workers, R.n_tasks, R.n_labels
        w, t = R.workers, R.tasks
        lab = R.labels.astype(np.int64) - 1
        answered = R.task_counts() > 0
        alpha = np.ones(n)
        b = np.ones(m)
        converged = False
        it = 0
        previous = None
        for it in range(1, max_iter + 1):  # noqa: B007 - its last value is read after the loop
            S = self._log_scores(R, alpha, b)
            Sa = S[answered]
            T = np.zeros((m, K))
            mx = Sa.max(axis=1, keepdims=True)
            E = np.exp(Sa - mx)
            # the log-posterior EM climbs (up to a constant): the stopping rule's objective
            objective = float((mx[:, 0] + np.log(E.sum(axis=1))).sum()
                              - 0.5 * (np.sum((alpha - 1.0) ** 2) + np.sum((b - 1.0) ** 2)))
            if previous is not None and em_converged(previous, objective, R.nnz, tol):
                converged = True
                it -= 1
                break
            previous = objective
            T[answered] = E / E.sum(axis=1, keepdims=True)
            P = T[t, lab]                                  # P(response e is right)

            def negQ(z: np.ndarray) -> tuple[float, np.ndarray]:
                a, bb = z[:n], z[n:]
                beta = np.exp(bb)
                x = a[w] * beta[t]
                q = P @ log_expit(x) + (1.0 - P) @ (log_expit(-x) - np.log(K - 1))
                q -= 0.5 * (np.sum((a - 1.0) ** 2) + np.sum((bb - 1.0) ** 2))
                r = P - expit(x)
                ga = np.bincount(w, weights=r * beta[t], minlength=n) - (a - 1.0)
                gb = np.bincount(t, weights=r * x, minlength=m) - (bb - 1.0)
                return -q, -np.concatenate([ga, gb])

            res = minimize(negQ, np.concatenate([alpha, b]), jac=True, method="L-BFGS-B",
                           options={"maxiter": inner})
            new_alpha, new_b = res.x[:n], res.x[n:]
            alpha, b = new_alpha, new_b
        S = self._log_scores(R, alpha, b)
        self._store(R, S)
        self.abilities_ = np.where(R.worker_counts() > 0, alpha, np.nan)
        self.difficulties_ = np.where(answered, np.exp(b), np.nan)
        self.n_iter_ = it
        self.converged_ = converged
        return self
