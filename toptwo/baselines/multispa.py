r"""MultiSPA, MultiSPA-KL and MultiSPA-EM (Ibrahim, Fu, Kargas & Huang, NeurIPS 2019).

Problem. Dawid-Skene model written with column-stochastic confusion matrices
``A_i[a, k] = P(worker i answers a | true class k)`` and class prior ``d``. The
pairwise co-occurrence of two workers' answers on their common tasks has expectation

    R_il = E[e_{A_i} e_{A_l}^T] = A_i diag(d) A_l^T          (the paper's eq. (3))

Ibrahim et al. estimate the A_i from these second-order statistics only:

* **MultiSPA** (their Algorithm 1): for worker i stack ``Z_i = [R_il1, R_il2, ...]``
  over the co-workers l; after normalising every column to sum 1, each column is a
  convex combination of the columns of A_i, and under their separability condition
  (some co-worker answers almost deterministically per class) the successive
  projection algorithm (SPA; Gillis & Vavasis 2014) picks K columns equal to A_i's up
  to a permutation. SPA: repeatedly take the column of largest l2 norm and project all
  columns onto the orthogonal complement of it.
* **MultiSPA-KL** (their Sec. 4, eq. (12)): refine (A, d) by minimising
  ``sum_{i < l} N_il KL(R_hat_il || A_i diag(d) A_l^T)`` (N_il = common tasks), here by
  L-BFGS on a softmax parametrisation (columns of A_i and d on the simplex), from
  MultiSPA; the objective is invariant to a common relabelling of the classes, so the
  labels are fixed afterwards by maximising the diagonal of ``sum_i A_i``. The
  workers enter the fit in a canonical order (sorted by a hash of their content), so
  the result does not depend on the order of the input.
* **MultiSPA-EM**: Dawid-Skene EM started from the MultiSPA matrices (their Sec. 5).

Labels: the Dawid-Skene posterior at the estimated (A, d) (one E-step); for
MultiSPA-EM the EM's posterior.

Choices (stated, where the paper leaves room or this implementation simplifies):
SPA runs on the distinct normalised columns in sorted order, and a tie of residual
norms (relative ``SPA_RTOL``) goes to the first, so the choice depends on the columns'
content, not on the order of the co-workers;
the permutation of each worker's SPA columns is resolved by maximising the diagonal
(Hungarian assignment, scipy's ``linear_sum_assignment``): confusion matrices are
taken as diagonally dominant, instead of the paper's alignment through the
co-occurrences. A worker with fewer than K non-zero co-occurrence columns gets the
uninformative uniform matrix, and a class SPA cannot resolve (the columns span fewer
than K directions) the uniform column. SPA columns are floored at 1e-6 and renormalised.
The EM of MultiSPA-EM is :class:`toptwo.baselines.DawidSkene` with the same ``confusion`` choices.

Cost: the co-occurrence counts are one sparse product of the (worker, label) x task
incidence matrix with its transpose, an (n K) x (n K) array; SPA is O(n^2 K^3);
each KL evaluation is O(n^2 K^3); the E-step is O(nnz K). No n_workers x n_tasks
array is built, but memory grows as (n K)^2 with the number of workers.

References
----------
.. [1] S. Ibrahim, X. Fu, N. Kargas and K. Huang, "Crowdsourcing via Pairwise
   Co-occurrences: Identifiability and Algorithms", NeurIPS 2019 (cited in the paper as
   MultiSPA-KL / MultiSPA-EM).
.. [2] N. Gillis and S. A. Vavasis, "Fast and Robust Recursive Algorithms for Separable
   Nonnegative Matrix Factorization", IEEE TPAMI 36(4), 2014 (SPA).
.. [3] H. Jeong and H. W. Chung, "Recovering Top-Two Answers and Confusion Probability
   in Multi-Choice Crowdsourcing", ICML 2023.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment, minimize
from scipy.special import softmax

from .._cost import check_dense_cost
from ._base import ScoreOutputMixin, canonical_labels, check_dense_size, fit_doc, worker_keys
from .._validation import Interval, StrOptions
from .dawid_skene import CONFUSION_MODES, DawidSkene
from ..responses import Responses, as_responses

__all__ = ["MultiSPA", "cooccurrences", "spa"]

_FLOOR = 1e-6


def cooccurrences(R: Responses) -> tuple[np.ndarray, np.ndarray]:
    """Counts ``N[i, l, a, b]`` (tasks where i said a+1 and l said b+1) and ``common[i, l]``."""
    n, m, K = R.n_workers, R.n_tasks, R.n_labels
    B = sp.csr_array((np.ones(R.nnz), (R.workers.astype(np.int64) * K + R.labels - 1,
                                       R.tasks)), shape=(n * K, m))
    N = (B @ B.T).toarray().reshape(n, K, n, K).transpose(0, 2, 1, 3)
    common = N.sum(axis=(2, 3))
    idx = np.arange(n)
    N[idx, idx] = 0.0
    common[idx, idx] = 0.0
    return N, common


#: Relative tolerance under which two residual norms in SPA count as tied.
SPA_RTOL = 1e-9


def spa(Y: np.ndarray, k: int) -> np.ndarray:
    """Indices of k columns of Y chosen by the successive projection algorithm.

    Ties (residual squared norms within ``SPA_RTOL`` of the largest, relative) go to
    the first such column; SPA stops early (fewer than k indices) when every residual
    is below ``SPA_RTOL`` times the largest initial norm (the columns span fewer than k
    directions), instead of choosing among round-off; :func:`_multispa_matrices` passes the columns in a canonical
    order (sorted, duplicates merged), so the choice is by content, not by position.
    """
    Rm = np.array(Y, dtype=float)
    chosen: list[int] = []
    scale = 0.0
    for _ in range(k):
        norms = np.einsum("ij,ij->j", Rm, Rm)
        top = norms.max() if norms.size else 0.0
        scale = scale or top
        if top <= SPA_RTOL * scale:
            break          # the columns span fewer than k directions: the rest is round-off
        j = int(np.argmax(norms >= top * (1.0 - SPA_RTOL)))
        chosen.append(j)
        u = Rm[:, j].copy()
        nu = np.linalg.norm(u)
        u /= nu
        Rm -= np.outer(u, u @ Rm)
    return np.asarray(chosen, dtype=np.int64)


def _multispa_matrices(N: np.ndarray, common: np.ndarray, K: int) -> np.ndarray:
    """A[i] (K x K, column-stochastic, columns = classes) by SPA + diagonal matching."""
    n = N.shape[0]
    A = np.full((n, K, K), 1.0 / K)
    for i in range(n):
        cols = N[i][common[i] > 0]                      # (n_co, K, K): [l, a, b]
        if cols.size == 0:
            continue
        Z = cols.transpose(1, 0, 2).reshape(K, -1)      # columns = (l, b)
        s = Z.sum(axis=0)
        Z = Z[:, s > 0] / s[s > 0]
        if Z.shape[1] < K:
            continue
        # canonical column order: the distinct columns, sorted (exact ratios of counts,
        # so equal columns are equal floats); SPA's ties then go by content, not by the
        # position of the co-worker (issue 27)
        Z = np.unique(Z, axis=1)
        sel = Z[:, spa(Z, K)]
        sel = np.maximum(sel, _FLOOR)
        sel /= sel.sum(axis=0, keepdims=True)
        # maximise the diagonal; SPA stops early when the columns span fewer than K
        # directions, and the classes it did not resolve keep the uniform column
        rows, cols_ = linear_sum_assignment(-sel)
        Ai = np.full((K, K), 1.0 / K)
        Ai[:, rows] = sel[:, cols_]
        A[i] = Ai
    return A


def _kl_refine(N: np.ndarray, common: np.ndarray, A0: np.ndarray, d0: np.ndarray,
               max_iter: int) -> tuple[np.ndarray, np.ndarray, int]:
    n, K = A0.shape[0], A0.shape[1]
    I, L = np.nonzero(np.triu(common > 0, k=1))
    Np = N[I, L]                                         # counts (p, K, K): N_il R_hat_il
    ones = np.ones(I.size)
    to_i = sp.csr_array((ones, (I, np.arange(I.size))), shape=(n, I.size))
    to_l = sp.csr_array((ones, (L, np.arange(I.size))), shape=(n, I.size))

    def unpack(z):
        th = z[:n * K * K].reshape(n, K, K)
        return softmax(th, axis=1), softmax(z[n * K * K:])

    def f(z):
        A, d = unpack(z)
        Ai, Al = A[I], A[L]
        M = np.einsum("pak,k,pbk->pab", Ai, d, Al)
        M = np.maximum(M, 1e-300)
        val = -float(np.sum(Np * np.log(M)))
        G = Np / M                                        # dval/dM = -G
        gA = -(to_i @ np.einsum("pab,k,pbk->pak", G, d, Al).reshape(-1, K * K)
               + to_l @ np.einsum("pab,pak,k->pbk", G, Ai, d).reshape(-1, K * K)
               ).reshape(n, K, K)
        gd = -np.einsum("pab,pak,pbk->k", G, Ai, Al)
        # softmax chain rule: dtheta = A * (gA - sum_a A gA)
        gth = A * (gA - (A * gA).sum(axis=1, keepdims=True))
        gphi = d * (gd - (d * gd).sum())
        return val, np.concatenate([gth.ravel(), gphi])

    z0 = np.concatenate([np.log(np.maximum(A0, _FLOOR)).ravel(),
                         np.log(np.maximum(d0, _FLOOR))])
    res = minimize(f, z0, jac=True, method="L-BFGS-B", options={"maxiter": max_iter})
    A, d = unpack(res.x)
    # The KL objective is invariant to one permutation of the classes applied to every
    # A_i and to d; re-fix the class labels as SPA did (maximise the pooled diagonal).
    rows, cols = linear_sum_assignment(-A.sum(axis=0))
    perm = np.empty(K, dtype=np.int64)
    perm[rows] = cols                    # class rows[k] <- current column cols[k]
    return A[:, :, perm], d[perm], int(res.nit)


class _DSFromMatrices(DawidSkene):
    """Dawid-Skene EM whose first E-step uses given matrices (uniform class prior)."""

    _name = "MultiSPA"

    def __init__(self, C0: np.ndarray, **kw: Any):
        super().__init__(**kw)
        self._C0 = C0

    def _initial_posteriors(self, R: Responses, params: dict[str, Any]) -> np.ndarray:
        # an entry 0 of a recovered confusion matrix is an impossible answer: log 0 = -inf,
        # exactly what the E-step needs (exp(-inf) = 0), without the warning
        with np.errstate(divide="ignore"):
            self._logC = np.log(self._C0)
        self.class_prior_ = np.full(R.n_labels, 1.0 / R.n_labels)
        S = self._log_scores()
        T = np.zeros_like(S)
        Sa = S[self._answered]
        E = np.exp(Sa - Sa.max(axis=1, keepdims=True))
        T[self._answered] = E / E.sum(axis=1, keepdims=True)
        return T


class MultiSPA(ScoreOutputMixin):
    """MultiSPA confusion matrices from pairwise co-occurrences, optionally refined.

    Parameters
    ----------
    refine : {"none", "kl", "em"}, default="kl"
        "none": MultiSPA alone; "kl": MultiSPA-KL; "em": MultiSPA-EM.
    confusion : {"full", "class", "one_coin"}, default="full"
        Worker model of the EM stage (``refine="em"`` only), as in
        :class:`toptwo.baselines.DawidSkene`.
    max_iter : int, default=100
        L-BFGS iterations of the KL refinement, or EM iterations.
    rng : None, int or numpy.random.Generator
        Unused (MultiSPA is deterministic); accepted, and checked like every ``rng``, for a
        uniform factory signature.

    Attributes
    ----------
    confusion_matrices_ : ndarray (n_workers, K, K)
        ``C[i, k, l]`` = P(worker i answers l+1 | true class k+1) (the transpose of the
        paper's A_i), after the chosen refinement.
    spa_confusion_ : ndarray (n_workers, K, K)
        The MultiSPA matrices, same layout.
    class_prior_ : ndarray (K,)
    top_two_, posteriors_, log_scores_, confusion_, n_iter_,
    n_workers_in_, n_tasks_in_, n_labels_in_
        As in :class:`toptwo.baselines.DawidSkene`.

    Examples
    --------
    >>> import toptwo
    >>> model = toptwo.TopTwoModel.random(20, 60, 3, rng=0)   # 20 workers, 60 tasks, K = 3
    >>> est = toptwo.baselines.MultiSPA(rng=0).fit(model.sample(0.5, rng=1))
    >>> est.top_two_[:3].tolist()                # truth: [[1, 2], [3, 2], [3, 2]]
    [[3, 2], [3, 2], [1, 3]]
    >>> round(toptwo.top_two_errors(est.top_two_, model.top_two)["pair"], 2)
    0.62
    """

    def __init__(self, *, refine: str = "kl", confusion: str = "full", max_iter: int = 100,
                 rng: Any = None):
        self.refine = refine
        self.confusion = confusion
        self.max_iter = max_iter
        self.rng = rng

    _parameter_constraints = {
        "refine": [StrOptions(("none", "kl", "em"))],
        "confusion": [StrOptions(CONFUSION_MODES)],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "rng": ["random_state"],            # ignored, but a valid rng like everywhere else
    }

    @fit_doc
    def fit(self, A: Any, n_labels: int | None = None) -> "MultiSPA":
        """Fit MultiSPA (and the chosen refinement)."""
        params = self._validate_params()
        refine, max_iter = params["refine"], params["max_iter"]
        R = as_responses(A, n_labels, owner=f"{self._name}.fit")
        check_dense_cost(R, f"{self._name}.fit")              # before any (m, K) array
        K = R.n_labels
        n = R.n_workers
        check_dense_size(f"{self._name}.fit", f"the (n_workers K) x (n_workers K) "
                         f"co-occurrence counts ({n * K} x {n * K})", (n * K) ** 2, copies=3,
                         hint="Use TopTwo2, MajorityVote or OneCoinDawidSkene (sparse, O(nnz) per step) for data this size.")
        # SPA and the KL refinement run on the labels in a canonical order of their
        # content (SPA sorts columns, L-BFGS amplifies round-off), and their matrices are
        # renumbered back: the result does not depend on the numbering of the choices
        Rc, rank = canonical_labels(R)
        N, common = cooccurrences(Rc)
        A0c = _multispa_matrices(N, common, K)
        A0 = A0c[:, rank][:, :, rank]
        self.spa_confusion_ = A0.transpose(0, 2, 1).copy()
        d = np.full(K, 1.0 / K)
        it = 0
        if refine == "em":
            ds = _DSFromMatrices(self.spa_confusion_, confusion=params["confusion"],
                                 max_iter=max_iter)
            # the EM stage runs on parameters already checked here (DawidSkene's
            # smoothing and tol at their defaults), not through a second validation
            ds._fit_em(R, {"smoothing": ds.smoothing, "tol": ds.tol, "max_iter": max_iter})
            self._store(R, np.nan_to_num(ds.log_scores_, nan=0.0))
            self.confusion_matrices_ = ds.confusion_matrices_
            self.class_prior_ = ds.class_prior_
            self.n_iter_ = ds.n_iter_
            self.converged_ = ds.converged_
            return self
        Amat = A0
        if refine == "kl":
            # L-BFGS sums over worker pairs and amplifies round-off: run it with the
            # workers in a canonical order (sorted by a hash of their content, a fixed
            # draw as MultiSPA is deterministic), so that it does not depend on theirs
            order = np.argsort(worker_keys(Rc, np.random.default_rng(0)), kind="stable")
            # only workers with a co-worker enter it: an idle worker (no answers, or
            # none shared) adds parameters that change L-BFGS's path; it
            # keeps SPA's uniform matrix
            order = order[common.sum(axis=1)[order] > 0]
            Amat = A0c.copy()
            if order.size:
                Ac, d, it = _kl_refine(N[np.ix_(order, order)],
                                       common[np.ix_(order, order)], A0c[order], d, max_iter)
                Amat[order] = Ac
            Amat, d = Amat[:, rank][:, :, rank], d[rank]
        C = Amat.transpose(0, 2, 1)                         # [i, k, l]
        logC = np.log(np.maximum(C, 1e-300))
        lab = R.labels.astype(np.int64) - 1
        contrib = logC[R.workers, :, lab]                   # (nnz, K)
        S = np.zeros((R.n_tasks, K))
        for k in range(K):
            S[:, k] = np.bincount(R.tasks, weights=contrib[:, k], minlength=R.n_tasks)
        with np.errstate(divide="ignore"):      # a class prior of 0: that class scores -inf
            S += np.log(d)[None, :]
        self._store(R, S)
        self.confusion_matrices_ = C
        self.class_prior_ = d
        self.n_iter_ = it
        self.converged_ = True
        return self
