r"""MACE: Multi-Annotator Competence Estimation (Hovy, Berg-Kirkpatrick, Vaswani & Hovy 2013).

Problem. Each task j has a true label T_j, uniform over 1..K. When worker i answers, a
hidden coin S_ij decides whether the worker *knows* (probability theta_i, the
competence) and copies T_j, or *spams* (probability 1 - theta_i) and draws the answer
from the worker's own spamming distribution xi_i over the K labels:

    P(A_ij = a | T_j = k) = theta_i [a = k] + (1 - theta_i) xi_i(a).

This is the paper's generative story (Sec. 2, "Model", and its Fig. 1); it differs from
one-coin D&S in that a spammer's guesses are worker-specific (xi_i), not uniform.

Update (EM, the paper's unsupervised training; the variational-Bayes variant with
Beta/Dirichlet priors is not implemented):

* E-step: ``P(T_j = k | A) ∝ prod_{i answered j} P(A_ij | T_j = k)``; for each response
  e = (i, j, a) the posterior of "knowing" is
  ``P(T_j = a | A) theta_i / (theta_i + (1 - theta_i) xi_i(a))``.
* M-step (expected counts plus ``smoothing`` delta, as in the MACE software):
  ``theta_i = (sum_e knowing_e + delta) / (n_i + 2 delta)``,
  ``xi_i(a) = (sum_{e: a_e = a} (1 - knowing_e) + delta) / (sum_e (1 - knowing_e) + K delta)``.

EM is started ``n_restarts`` times from random parameters (theta_i and xi_i normalised
from Uniform[1, 2) draws, as the MACE software and crowd-kit do; here each draw is a
hash of a draw of ``rng`` and the worker's content, so that the result does not depend
on the order of the workers, tasks or rows) and the run with the
largest marginal log-likelihood ``sum_j log (1/K sum_k prod_i P(A_ij | k))`` is kept
(first run on exact ties). Each run stops when one iteration changed its log-posterior
(the marginal log-likelihood plus the log of the smoothing's Beta(1 + delta, 1 + delta)
and Dirichlet(1 + delta) priors, which the M-step maximises) by at most ``tol`` per
response (the convention of every EM in toptwo, :data:`toptwo.baselines.EM_TOL`), or
after ``max_iter`` iterations. (Until 2026-11-25: the largest change of theta and xi at
most 1e-6.)

Cost: O(nnz + n_workers K) per iteration (``np.bincount`` over responses); no
n_workers x n_tasks array.

References
----------
.. [1] D. Hovy, T. Berg-Kirkpatrick, A. Vaswani and E. Hovy, "Learning Whom to Trust
   with MACE", NAACL-HLT 2013, pp. 1120-1130.
.. [2] H. Jeong and H. W. Chung, "Recovering Top-Two Answers and Confusion Probability
   in Multi-Choice Crowdsourcing", ICML 2023 (the top-two read-off of the scores).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np

from .._cost import check_dense_cost
from ._base import (EM_TOL, ScoreOutputMixin, canonical_labels, em_converged, fit_doc,
                    key_uniforms, worker_keys, logsumexp_rows as _logsumexp_rows)
from .._validation import Interval
from ..responses import Responses, as_responses

__all__ = ["MACE"]


class MACE(ScoreOutputMixin):
    """MACE competence/spamming model fitted by EM with random restarts.

    Parameters
    ----------
    n_restarts : int, default=10
        Independent EM runs from random starts; the best marginal likelihood wins.
    smoothing : float or None, default=None
        delta > 0 added to the expected counts; None = 0.01 / K (MACE's default).
    tol : float, default=1e-5
        A run stops when an iteration changed its log-posterior by at most ``tol`` per
        response (``EM_TOL``, the convention of every EM in toptwo).
    max_iter : int, default=50
        Iterations per run (MACE's default number of EM iterations).
    rng : None, int or numpy.random.Generator
        Draws the random starts (per worker, a hash of a draw and the worker's content:
        :func:`toptwo.baselines._base.worker_keys`).

    Attributes
    ----------
    competence_ : ndarray (n_workers,)
        theta_i (NaN for workers without responses).
    spam_distribution_ : ndarray (n_workers, K)
        xi_i (NaN rows for workers without responses).
    log_likelihood_ : float
        Marginal log-likelihood of the kept run.
    restart_log_likelihoods_ : ndarray (n_restarts,)
    top_two_, posteriors_, log_scores_, confusion_, n_iter_, converged_,
    n_workers_in_, n_tasks_in_, n_labels_in_
        As in :class:`toptwo.baselines.DawidSkene` (for the kept run).

    Examples
    --------
    >>> import toptwo
    >>> model = toptwo.TopTwoModel.random(20, 60, 3, rng=0)   # 20 workers, 60 tasks, K = 3
    >>> est = toptwo.baselines.MACE(rng=0).fit(model.sample(0.5, rng=1))
    >>> est.top_two_[:3].tolist()                # truth: [[1, 2], [3, 2], [3, 2]]
    [[1, 3], [2, 3], [3, 2]]
    >>> round(toptwo.top_two_errors(est.top_two_, model.top_two)["pair"], 2)
    0.45
    """

    def __init__(self, *, n_restarts: int = 10, smoothing: float | None = None,
                 tol: float = EM_TOL, max_iter: int = 50, rng: Any = None):
        self.n_restarts = n_restarts
        self.smoothing = smoothing
        self.tol = tol
        self.max_iter = max_iter
        self.rng = rng

    _parameter_constraints = {
        "n_restarts": [Interval(Integral, 1, None, closed="left")],
        "smoothing": [None, Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "rng": ["random_state"],
    }

    @fit_doc
    def fit(self, A: Any, n_labels: int | None = None) -> "MACE":
        """Fit by EM (best of ``n_restarts`` random starts)."""
        params = self._validate_params()
        restarts, tol, max_iter = params["n_restarts"], params["tol"], params["max_iter"]
        gen = params["rng"]
        R = as_responses(A, n_labels, owner=f"{self._name}.fit")
        check_dense_cost(R, f"{self._name}.fit")              # before any (m, K) array
        K = R.n_labels
        delta = 0.01 / K if params["smoothing"] is None else params["smoothing"]
        # starts drawn for the labels in a canonical order, then renumbered: they do not
        # depend on the numbering of the choices
        Rc, rank = canonical_labels(R)
        keys = worker_keys(Rc, gen)
        best = None
        lls = []
        for _ in range(restarts):
            run = self._run(R, gen, keys, rank, delta, tol, max_iter)
            lls.append(run[0])
            if best is None or run[0] > best[0]:
                best = run
        assert best is not None                  # max_restarts >= 1 (checked)
        ll, S, theta, xi, it, conv = best
        self._store(R, S)
        active = R.worker_counts() > 0
        self.competence_ = np.where(active, theta, np.nan)
        self.spam_distribution_ = np.where(active[:, None], xi, np.nan)
        self.log_likelihood_ = ll
        self.restart_log_likelihoods_ = np.asarray(lls)
        self.n_iter_ = it
        self.converged_ = conv
        return self

    @staticmethod
    def _scores(R: Responses, theta: np.ndarray, xi: np.ndarray) -> tuple[np.ndarray,
                                                                         np.ndarray]:
        K = R.n_labels
        w, lab = R.workers, R.labels.astype(np.int64) - 1
        spam = (1.0 - theta[w]) * xi[w, lab]            # P(A_e | T != a_e)
        know = theta[w] + spam                          # P(A_e | T == a_e)
        base = np.bincount(R.tasks, weights=np.log(spam), minlength=R.n_tasks)
        bonus = np.bincount(R.tasks.astype(np.int64) * K + lab,
                            weights=np.log(know) - np.log(spam),
                            minlength=R.n_tasks * K).reshape(R.n_tasks, K)
        return base[:, None] + bonus, know

    def _run(self, R: Responses, gen: np.random.Generator, keys: np.ndarray,
             rank: np.ndarray, delta: float, tol: float, max_iter: int):
        n, K = R.n_workers, R.n_labels
        w, lab = R.workers, R.labels.astype(np.int64) - 1
        answered = R.task_counts() > 0
        n_i = R.worker_counts().astype(float)
        # Uniform[1, 2) draws per worker, each a hash of (a draw of rng, the worker's
        # content): the same worker starts alike wherever it stands (issue 27)
        start = 1.0 + key_uniforms(keys, 2 + K, gen)
        sp2 = start[:, :2]
        theta = sp2[:, 1] / sp2.sum(axis=1)
        xi = start[:, 2:][:, rank]
        xi /= xi.sum(axis=1, keepdims=True)
        converged = False
        it = 0
        previous = None
        for it in range(1, max_iter + 1):  # noqa: B007 - its last value is read after the loop
            S, know = self._scores(R, theta, xi)
            Sa = S[answered]
            T = np.zeros_like(S)
            mx = Sa.max(axis=1, keepdims=True)
            E = np.exp(Sa - mx)
            # the stopping rule's objective: the log-posterior (marginal log-likelihood
            # plus the log of the smoothing's Beta/Dirichlet priors), up to a constant
            objective = float((mx[:, 0] + np.log(E.sum(axis=1))).sum()
                              + delta * (np.log(theta).sum() + np.log1p(-theta).sum()
                                         + np.log(xi).sum()))
            if previous is not None and em_converged(previous, objective, R.nnz, tol):
                converged = True
                it -= 1
                break
            previous = objective
            T[answered] = E / E.sum(axis=1, keepdims=True)
            knowing = T[R.tasks, lab] * theta[w] / know
            new_theta = (np.bincount(w, weights=knowing, minlength=n) + delta) / (n_i + 2 * delta)
            spam_counts = np.bincount(w * K + lab, weights=1.0 - knowing,
                                      minlength=n * K).reshape(n, K) + delta
            new_xi = spam_counts / spam_counts.sum(axis=1, keepdims=True)
            theta, xi = new_theta, new_xi
        S, _ = self._scores(R, theta, xi)
        ll = float(_logsumexp_rows(S[answered]).sum() - answered.sum() * np.log(K))
        return ll, S, theta, xi, it, converged
