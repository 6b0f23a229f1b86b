r"""OPT-D&S: spectral (three-view tensor) initialisation, then Dawid-Skene EM.

Zhang, Chen, Zhou & Jordan (2014/2016), "Spectral Methods Meet EM", Algorithm 1
("Estimating confusion matrices") followed by Algorithm 2's EM, the paper's **OPT-D&S**.

Problem. Dawid-Skene: worker i answers l to a task of true class c with probability
``C[i, c, l]``; classes have prior w. Splitting the workers into three groups G_1, G_2,
G_3 and summing each group's one-hot answers per task gives three *views*
``Z_g[:, j] in R^K`` that are conditionally independent given the true class, with
``E[Z_g | y_j = c] = mu_g[:, c]`` (the group's aggregated confusion). Zhang et al.
(their Sec. 3.1, steps (a)-(c) of their Algorithm 1) recover mu_g and w from second and third
moments:

(a) symmetrise two views onto the third:
    ``Z1~ = (Z3 Z2^T)(Z1 Z2^T)^{-1} Z1``, ``Z2~ = (Z3 Z1^T)(Z2 Z1^T)^{-1} Z2``;
(b) ``M2 = Z1~ Z2~^T / m``, ``M3 = (1/m) sum_j Z1~_j (x) Z2~_j (x) Z3_j``; whiten with
    ``W = U S^{-1/2}`` from the SVD of M2 and decompose ``M3(W, W, W)`` by the robust
    tensor power method (Anandkumar et al. 2014): K times, the best of 100 random
    starts after 100 power iterations, then deflation;
(c) each eigenpair (lambda, v) gives a column ``lambda (W^T)^+ v`` of mu_3 and a class
    weight ``w = lambda^{-2}``; the column is assigned to the class of its largest
    entry (diagonal dominance) -- Zhang et al.'s code does this greedily, in the order
    the eigenpairs are found, with the first free class when that one is taken; here
    all K columns are assigned at once by the Hungarian assignment that maximises
    their normalised entries on their classes (the greedy rule relabelled the classes
    of adult2 for 3 of 5 seeds: g error 0.94 instead of 0.28, docs/robustness.md);

and then every worker's matrix from the other two groups' views (step (d)):
``mu_i = (1/m) Z_i (Z_a + Z_b)^T (diag(w) (mu_a + mu_b)^T)^{-1}``, floored at 1e-6
and normalised per class. This follows Zhang et al.'s released MATLAB code
(``SolveCFG.m``, ``RobustPowerMethod.m``, ``MainProgram.m``), including its choices:
three nearly equal worker groups, w averaged over the two other groups. The code splits
the workers by index mod 3; here the workers are ranked by their agreement rate (the
share of the other answers to their tasks that equal theirs) and dealt round-robin into
the three groups, ties by a hash of their content and a draw of ``rng``
(:func:`toptwo.baselines._base.content_groups`): the result does not depend on the
order of the workers, tasks or rows, and every group gets a share of the
reliable workers, which the three views need. For the same reason the moments are
summed over the tasks in a canonical order (sorted by their views), the whitening keeps
the singular values above ``1e-9`` of the largest (pseudo-inverses likewise), and the
power method's starts are drawn in label coordinates: the power method amplifies
round-off, so input order must not enter it. The EM that follows
is :class:`toptwo.baselines.DawidSkene` started from the E-step at these matrices (uniform class
prior), instead of from majority vote; ``confusion`` selects the worker model of that
EM as there (Zhang et al.'s ``AggregateCFG`` modes).

Not implemented: the projection of step (d) onto the simplex with the ``delta``-floor
of the theory (the code's 1e-6 floor is used), and the paper's sample-splitting
variant. Cost: the moments are O(nnz K + m K^2) (m = tasks) and the tensor step is
O(K^4) per power iteration; nothing of size n_workers x n_tasks is built.

References
----------
.. [1] Y. Zhang, X. Chen, D. Zhou and M. I. Jordan, "Spectral Methods Meet EM: A
   Provably Optimal Algorithm for Crowdsourcing", NeurIPS 2014; JMLR 17(102), 2016.
.. [2] A. Anandkumar, R. Ge, D. Hsu, S. M. Kakade and M. Telgarsky, "Tensor
   Decompositions for Learning Latent Variable Models", JMLR 15, 2014 (robust tensor
   power method).
.. [3] H. Jeong and H. W. Chung, "Recovering Top-Two Answers and Confusion Probability
   in Multi-Choice Crowdsourcing", ICML 2023 (OPT-D&S baseline).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from .._validation import check_rng
from ._base import canonical_labels, check_dense_size, content_groups, worker_keys
from .dawid_skene import DawidSkene
from ..responses import Responses

__all__ = ["OptDawidSkene", "spectral_confusion"]

_FLOOR = 1e-6


#: Relative tolerance of the rank decisions: singular values of the moment matrices at
#: most this fraction of the largest are zero (exactly singular moments, e.g. a group
#: that never gave some label, come out as round-off-sized singular values).
_RANK_RTOL = 1e-9


def _robust_power(T: np.ndarray, U: np.ndarray, gen: np.random.Generator,
                  n_starts: int = 100, n_iter: int = 100) -> tuple[float, np.ndarray]:
    """Best of ``n_starts`` power iterations ``v <- T(I, v, v) / ||.||`` on an r^3 tensor.

    The starts are drawn in the K label coordinates and rotated into the whitened
    coordinates by ``U^T`` (K x r, the left singular vectors that whiten), so the run
    does not depend on the signs or the basis LAPACK picks for U: a start names the same
    direction whatever the order of the tasks that made the moments.
    """
    V = U.T @ (gen.random((U.shape[0], n_starts)) - 0.5)
    V /= np.maximum(np.linalg.norm(V, axis=0), 1e-300)
    for _ in range(n_iter):
        V = np.einsum("abc,bs,cs->as", T, V, V)
        V /= np.maximum(np.linalg.norm(V, axis=0), 1e-300)
    lam = np.einsum("abc,as,bs,cs->s", T, V, V, V)
    s = int(np.argmax(lam))                  # first maximum: deterministic given gen
    return float(lam[s]), V[:, s]


def _solve_group(x1: np.ndarray, x2: np.ndarray, x3: np.ndarray,
                 gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """mu_3 (K x K, columns = classes) and w (K,) from three views (K x m each)."""
    K, m = x1.shape
    x1t = (x3 @ x2.T / m) @ np.linalg.pinv(x1 @ x2.T / m, rcond=_RANK_RTOL) @ x1
    x2t = (x3 @ x1.T / m) @ np.linalg.pinv(x2 @ x1.T / m, rcond=_RANK_RTOL) @ x2
    M2 = x1t @ x2t.T / m
    M3 = np.einsum("aj,bj,cj->abc", x1t, x2t, x3) / m
    U, S, _ = np.linalg.svd(M2)
    # whiten on the range of M2 only (rank r <= K); the classes beyond r get w = 0
    keep = S > _RANK_RTOL * S[0] if S[0] > 0 else np.zeros(K, dtype=bool)
    U, S = U[:, keep], S[keep]
    W = U / np.sqrt(S)[None, :]                       # K x r, W^T M2 W = I_r
    T = np.einsum("abc,ai,bj,ck->ijk", M3, W, W, W)
    mu = np.zeros((K, K))
    w = np.zeros(K)
    Wp = U * np.sqrt(S)[None, :]                      # (W^T)^+
    cols, lams = np.zeros((K, K)), np.zeros(K)
    for t in range(K):
        lam, v = _robust_power(T, U, gen)
        T = T - lam * np.einsum("i,j,k->ijk", v, v, v)
        cols[:, t], lams[t] = lam * (Wp @ v), lam
    # columns to classes by diagonal dominance: the assignment maximising the sum of the
    # columns' (normalised) entries on their classes, instead of greedily in the order
    # the power method found them (which let a column's class go to an earlier one)
    tot = cols.sum(axis=0)
    share = np.divide(cols, tot, out=np.zeros_like(cols), where=tot != 0)
    classes, which = linear_sum_assignment(-share)
    mu[:, classes] = cols[:, which]
    w[classes] = np.divide(1.0, lams[which] ** 2, out=np.zeros(K), where=lams[which] != 0)
    return mu, w


def spectral_confusion(R: Responses, rng: Any = None) -> np.ndarray:
    """Zhang et al.'s Algorithm 1 (see module doc): C[i, c, l], shape (n, K, K).

    Run on the labels renumbered in a canonical order of their content
    (:func:`toptwo.baselines._base.canonical_labels`) and renumbered back: the power
    method's starts, the canonical task order and the class assignment then do not
    depend on how the choices are numbered (docs/robustness.md).
    """
    gen = check_rng(rng, owner="spectral_confusion")
    Rc, rank = canonical_labels(R)
    return _spectral_confusion(Rc, gen)[:, rank][:, :, rank]


def _spectral_confusion(R: Responses, gen: np.random.Generator) -> np.ndarray:
    n, m, K = R.n_workers, R.n_tasks, R.n_labels
    # three nearly equal groups by content, not by index (Zhang et al.'s code takes index
    # mod 3): round-robin over the workers ranked by their agreement rate (the share of
    # the other answers to their tasks that match theirs; exact ratios of counts), ties
    # by a content hash, so every group gets a share of the good workers and the split
    # does not depend on the workers' order
    counts = R.task_label_counts()
    agree = np.bincount(R.workers, weights=counts[R.tasks, R.labels - 1] - 1.0, minlength=n)
    others = np.bincount(R.workers, weights=counts.sum(axis=1)[R.tasks] - 1.0, minlength=n)
    rate = np.divide(agree, others, out=np.zeros(n), where=others > 0)
    group = content_groups(worker_keys(R, gen), 3, score=rate)
    gl = group[R.workers].astype(np.int64) * K + R.labels - 1
    Z = sp.csr_array((np.ones(R.nnz), (gl, R.tasks)), shape=(3 * K, m)).toarray()
    Z = Z.reshape(3, K, m)                                 # K x m per group: O(m K)
    # the moments are averages over the answered tasks only: a task nobody answered
    # (an all-zero column of a matrix, absent from triples) must not enter them
    answered = np.flatnonzero(R.task_counts() > 0)
    Za = Z[:, :, answered]
    views = [(1, 2, 0), (2, 0, 1), (0, 1, 2)]              # (x1, x2, x3) -> mu of x3
    mus = np.zeros((3, K, K))
    ws = np.zeros((3, K))
    # the moments are sums over tasks: take them in a canonical order of the tasks (sorted
    # by their three views, exact counts), so they are bit-identical however the input
    # is ordered -- the power method amplifies round-off on small data
    canon = Za[:, :, np.lexsort(Za.reshape(3 * K, -1)[::-1])]
    for a, b, c in views:
        mus[c], ws[c] = _solve_group(canon[a], canon[b], canon[c], gen)
    total = Z.sum(axis=0)
    C = np.zeros((n, K, K))
    # (1/m) Z_i (Z_alt)^T for every worker: response (i, j, l) adds e_l (x) Z_alt[:, j]
    wl = R.workers.astype(np.int64) * K + R.labels - 1
    P = sp.csr_array((np.ones(R.nnz), (wl, np.arange(R.nnz))), shape=(n * K, R.nnz))
    alt = total[:, R.tasks] - Z[group[R.workers], :, R.tasks].T      # (K, nnz)
    XX = (P @ alt.T).reshape(n, K, K) / answered.size                # [i, l, l']
    for g in range(3):
        other_groups = [h for h in range(3) if h != g]
        mu_alt = mus[other_groups].sum(axis=0)
        w_alt = ws[other_groups].sum(axis=0) / 2.0
        D = np.linalg.pinv(np.diag(w_alt) @ mu_alt.T, rcond=_RANK_RTOL)
        idx = np.flatnonzero(group == g)
        mu_i = np.maximum(XX[idx] @ D, _FLOOR)                       # [i, l, c]
        mu_i /= mu_i.sum(axis=1, keepdims=True)
        C[idx] = mu_i.transpose(0, 2, 1)
    return C


class OptDawidSkene(DawidSkene):
    """OPT-D&S: Zhang et al.'s spectral confusion matrices, then Dawid-Skene EM.

    Parameters
    ----------
    confusion, smoothing, tol, max_iter
        As in :class:`toptwo.baselines.DawidSkene` (the EM stage).
    rng : None, int or numpy.random.Generator
        The split of the workers into three groups (by content) and the random starts of
        the robust tensor power method.

    Notes
    -----
    Cost model: the moments take ``m K^3`` multiply-adds and the robust tensor power
    method ``3 x K x 100 x 100 x K^3`` (three view groups, K components, 100 iterations
    of 100 starts of a ``K^3`` contraction), i.e. ``3e4 K^4``. ``fit`` refuses up front
    when the sum exceeds ``toptwo.baselines.MAX_WORK`` (about a minute of NumPy work on
    one core): K above 19 for any data. The message names DawidSkene and the sparse
    estimators instead.

    Attributes
    ----------
    spectral_confusion_ : ndarray (n_workers, K, K)
        The initial matrices of Algorithm 1.
    All attributes of :class:`toptwo.baselines.DawidSkene`.

    Examples
    --------
    >>> import toptwo
    >>> model = toptwo.TopTwoModel.random(20, 60, 3, rng=0)   # 20 workers, 60 tasks, K = 3
    >>> est = toptwo.baselines.OptDawidSkene(rng=0).fit(model.sample(0.5, rng=1))
    >>> est.top_two_[:3].tolist()                # truth: [[1, 2], [3, 2], [3, 2]]
    [[1, 3], [3, 2], [3, 1]]
    >>> round(toptwo.top_two_errors(est.top_two_, model.top_two)["pair"], 2)
    0.67
    """

    def __init__(self, *, confusion: str = "full", smoothing: float = 0.01,
                 tol: float = 1e-7, max_iter: int = 100, rng: Any = None):
        super().__init__(confusion=confusion, smoothing=smoothing, tol=tol,
                         max_iter=max_iter)
        self.rng = rng

    _parameter_constraints = {**DawidSkene._parameter_constraints, "rng": ["random_state"]}

    def _initial_posteriors(self, R: Responses, params: dict[str, Any]) -> np.ndarray:
        K, m = R.n_labels, R.n_tasks
        check_dense_size(f"{self._name}.fit", f"the K x K x K third-order moment tensors "
                         f"({K} x {K} x {K}, from {m} tasks) and their tensor power method",
                         K ** 3, copies=4,
                         # the moments (m K^3) and the robust tensor power method: 3 view
                         # groups x K components x 100 iterations x 100 starts of a K^3
                         # contraction (issue 39: K = 200 ran past 150 s; K = 40, 5 min)
                         work=m * K ** 3 + 3 * K * 100 * 100 * K ** 3, hint="Use TopTwo2, MajorityVote or OneCoinDawidSkene (sparse, O(nnz) per step) for data this size.")
        C = spectral_confusion(R, params["rng"])
        self.spectral_confusion_ = C
        K = R.n_labels
        self._logC = np.log(C)
        self.class_prior_ = np.full(K, 1.0 / K)
        S = self._log_scores()
        T = np.zeros_like(S)
        Sa = S[self._answered]
        E = np.exp(Sa - Sa.max(axis=1, keepdims=True))
        T[self._answered] = E / E.sum(axis=1, keepdims=True)
        return T
