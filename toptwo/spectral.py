r"""Stage 1: the spectral estimate of the top-two answers (Algorithm 1, "TopTwo1").

Algorithm 1 [`alg:top_two`], step by step, with the line of code that implements it:

1. Split the entries of A^1 with equal probability into B and C; convert both into
   B^(k), C^(k) and centre them, X^(k) = B^(k) - s'(K-2k)/K 1, Y^(k) likewise, where
   s' is the sampling rate of B (resp. C), estimated as nnz(B)/(n m). The centring is
   never materialised: it is a rank-one correction applied inside every product. The
   default ``centering="observed"`` subtracts (K-2k)/K on the observed entries
   instead; both have expectation 2 s' p (r^(k))^T (see :class:`TopTwo1`).
2. u^(k): leading left singular vector of X^(k), sign fixed so that at least half of
   its entries are positive (:func:`fix_sign`); entries u_i > 2/(eta sqrt(n)) are set
   to zero (:func:`trim`), giving u~^(k).
3. v^(k) = (Y^(k))^T u~^(k) / (2 s')   -- see "Scaling" below.
4. Delta v_j^(k) = v_j^(k) - v_j^(k-1) with v^(0) = v^(K) = 0; g_j = argmin_k
   Delta v_j^(k), h_j = argmin_{k != g_j} (eq. (3) [`alg:gh`]).
5. l_j = K/(K-2) sum_{k not in {g_j, h_j}} Delta v_j^(k), l = mean_j l_j.
6. q_j = 1/K - Delta v_j^(g_j) / l (eq. (4) [`eqn:est_q`]).

Scaling. Step 3 divides by 2 s', not by the printed s': E[X^(k)] = 2 s' p (r^(k))^T
(Proposition 1), so v^(k) estimates ||p||_2 r^(k) and ``norm_p_`` (= l) estimates
||p||_2; q_j of eq. (4) is a ratio and does not change (design notes, "Scaling of v^(k)").

Top-T (Algorithm 3 [`alg:top_T`]): the T smallest Delta v_j^(k) in increasing order
give g_j1..g_jT, l_j = K/(K-T) sum over the other labels, q_jt = 1/K - Delta v^(g_jt)/l.

K = 2. The distribution of eq. (1) with K = 2 depends on (p, q) only through
p_i (2 q_j - 1), so ||p|| and q are not identifiable, and step 5 divides by K - 2 = 0.
TopTwo1 refuses K = 2 with a message saying so.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from ._cost import check_dense_cost
from ._validation import Interval, StrOptions
from ._base import BaseEstimator
from ._chunks import _steps_4_5_chunked
from ._components import stage1_parts
from ._linalg import SOLVERS, _leading_vectors
from ._pooled import stacked_leading_left
from ._result import SpectralResult
from ._split import split_entries
from ._step2 import SIGN_RULES, fix_sign, signed_left, trim
from ._ties import U_ABS_TOL, _clean, _v_error_bound, tolerant_smallest
from .binary import LabelBlocks, centring_shifts
from .responses import (Responses, as_responses, binary_labels_message,
                        check_labels_used)

__all__ = ["TopTwo1", "SpectralResult", "spectral_estimate", "spectral_from_matrices",
           "top_from_projections", "split_entries"]


# --------------------------------------------------------------------- helpers
#: Values of ``left_vector`` (see :class:`TopTwo1`; the pooled ones in ``toptwo._pooled``).
LEFT_VECTORS = ("stacked", "averaged", "per_k")
CENTERINGS = ("observed", "paper")

#: eta of the assumption eta sqrt(n) <= ||p||_2 <= sqrt(n) (TopTwo1 and TopTwo2).
ETA_CONSTRAINT = Interval(
    Real, 0, 1, closed="right",
    note="Algorithm 1 assumes eta sqrt(n) <= ||p||_2 <= sqrt(n), which needs eta <= 1 (with "
         "eta > 1 the trimming threshold 2/(eta sqrt(n)) removes every entry above "
         "2/sqrt(n)).")


def _steps_4_5(v: np.ndarray, n_top: int, tol4: np.ndarray) -> tuple:
    """Steps 4-5 of Algorithm 1 up to l_j: (Delta v, order of eq. (3), the picked
    Delta v, the sum of the others), on all rows at once (the reference, and the path
    whose checks raise on NaN or a bad tolerance)."""
    m, Km1 = v.shape
    K = Km1 + 1
    padded = np.zeros((m, K + 1))
    padded[:, 1:K] = v
    delta_v = np.diff(padded, axis=1)                         # step 4
    order = tolerant_smallest(delta_v, n_top, tol4)           # eq. (3)
    top_mass = np.take_along_axis(delta_v, order, axis=1)
    rest = delta_v.sum(axis=1) - top_mass.sum(axis=1)
    return delta_v, order, top_mass, rest


def eq4_confusion(mass: np.ndarray, l_task: np.ndarray, n_labels: int) -> np.ndarray:
    """Eq. (4): q_jt = 1/K - Delta v_j^(g_jt) / l for every column t of ``mass``.

    ``mass`` (m, T) holds Delta v at the chosen labels, ``l_task`` (m,) the l of each
    task's part; computed column by column. Where l is 0 or NaN the result is +-inf or
    NaN (the callers set NaN there: eq. (4) is undefined).
    """
    q = np.empty(mass.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        for t in range(mass.shape[1]):
            np.subtract(1.0 / n_labels, mass[:, t] / l_task, out=q[:, t])
    return q


def top_from_projections(v: np.ndarray, n_top: int = 2, *, active: np.ndarray | None = None,
                         tie_tol: np.ndarray | float = 0.0, groups: np.ndarray | None = None,
                         return_l_task: bool = False) -> tuple:
    """Steps 4-6 of Algorithm 1 from the projections v^(k) (deterministic core).

    Parameters
    ----------
    v : ndarray of shape (m, K-1)
        v^(1)..v^(K-1) (estimates of ||p|| r^(k)).
    n_top : int
        T (2 for the top-two model).
    active : bool ndarray of shape (m,), optional
        Tasks whose v carries data; only they enter the mean l (step 5).
    tie_tol : float or ndarray of shape (m,), default=0
        Bound on the floating-point error of v_j (see ``_v_error_bound``). Two Delta v
        that differ by at most 4 tie_tol (each Delta v is a difference of two v) are an
        exact tie of eq. (3) and go to the smaller label, so round-off never decides.
    groups : int ndarray of shape (m,), optional
        Connected component of every task; l (step 5) is then averaged per component and
        eq. (4) divides by the task's own component's l.
    return_l_task : bool, default=False
        Also return the l that each task's eq. (4) divided by.

    Returns
    -------
    top : (m, T) int labels 1..K (eq. (3); ties go to the smaller label)
    q_raw : (m, T) 1/K - Delta v^(g_jt) / l (eq. (4)), unclipped; NaN where the task's
        l is not > 0 (no usable estimate of ||p||_2 for its component)
    delta_v : (m, K)
    l_j : (m,) step 5 per task (NaN outside ``active``)
    l : float, mean of l_j over active tasks; with ``groups``, sqrt(sum_C max(l_C, 0)^2)
        over the components (the estimate of ||p||_2 of all workers)
    l_task : (m,) the l each task's eq. (4) divides by (only with ``return_l_task``)
    """
    m, Km1 = v.shape
    K = Km1 + 1
    v = np.asarray(v, dtype=float)
    tol4 = 4.0 * np.asarray(tie_tol, float)
    steps = _steps_4_5_chunked(v, n_top, tol4) if K > 1 and n_top <= K else None
    if steps is None:                        # NaN, a bad tol or n_top: the checks raise
        steps = _steps_4_5(v, n_top, tol4)
    delta_v, order, top_mass, rest = steps
    top = order + 1
    l_j = K / (K - n_top) * rest                              # step 5
    if active is None:
        active = np.ones(m, dtype=bool)
    l_j = np.where(active, l_j, np.nan)
    if groups is None:
        l = float(np.nanmean(l_j)) if active.any() else float("nan")
        l_task = np.full(m, l)
    else:
        ok = active & (groups >= 0)
        g = np.where(ok, groups, 0)
        n_groups = int(g.max()) + 1 if m else 0
        g_ok, l_ok = (g, l_j) if ok.all() else (g[ok], l_j[ok])
        sums = np.bincount(g_ok, weights=l_ok, minlength=n_groups)
        cnt = np.bincount(g_ok, minlength=n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            l_group = sums / cnt
        l_task = np.where(ok, l_group[g], np.nan)
        # ||p||^2 = sum over components of ||p_C||^2; a component without signal
        # (l_C <= 0) adds nothing. Order-free, and = l on connected data with l > 0.
        l_pos = np.where(cnt > 0, np.maximum(np.nan_to_num(l_group, nan=0.0), 0.0), 0.0)
        l = float(np.sqrt(np.sum(l_pos ** 2))) if ok.any() else float("nan")
    q_raw = eq4_confusion(top_mass, l_task, K)
    # l estimates ||p||_2 > 0: where it is 0, negative or NaN (a component whose data
    # show no signal) eq. (4) is undefined (it would give +-inf, NaN or a q with the
    # wrong sign), so q is NaN there; eq. (3)'s labels do not need l and stay
    q_raw[~(l_task > 0)] = np.nan
    if return_l_task:
        return top.astype(np.int64), q_raw, delta_v, l_j, l, l_task
    return top.astype(np.int64), q_raw, delta_v, l_j, l


def spectral_from_matrices(X: list[np.ndarray], Y: list[np.ndarray], s_prime: float,
                           eta: float = 0.1, n_top: int = 2,
                           sign_rule: str = "paper") -> SpectralResult:
    """Algorithm 1 on given dense matrices X^(k), Y^(k) (already centred).

    For teaching and for the noise-free test: pass X^(k) = Y^(k) = E[X^(k)] =
    2 s' p (r^(k))^T and g, h, q come back exactly. ``s_prime`` is s'. The SVD is
    LAPACK's dense one, the reference for the sparse solvers (``solver=`` of
    :func:`spectral_estimate`).
    """
    U, Ut, sv, V = [], [], [], []
    for Xk, Yk in zip(X, Y):
        u_all, s_all, _ = np.linalg.svd(np.asarray(Xk, float), full_matrices=False)
        u = fix_sign(_clean(u_all[:, 0]), sign_rule)
        ut = trim(u, eta)
        U.append(u)
        Ut.append(ut)
        sv.append(s_all[0])
        V.append(np.asarray(Yk, float).T @ ut / (2.0 * s_prime))   # step 3
    v = np.column_stack(V)
    d = (np.abs(np.asarray(Y[0], float)) > 0).sum(axis=0)
    top, q_raw, dv, l_j, l = top_from_projections(v, n_top,
                                                  tie_tol=_v_error_bound(d, s_prime))
    return SpectralResult(top, q_raw, dv, v, np.array(U), np.array(Ut), np.array(sv), l_j, l,
                          s_prime, s_prime)


@dataclass
class CentredBinary:
    """X^(k) = B^(k) - s'(K-2k)/K 1 1^T for k = 1..K-1 (Algorithm 1, step 1), implicit.

    Never materialised: ``off[k-1]`` is subtracted on the observed entries and
    ``rank_one[k-1]`` times the all-ones matrix inside every product. ``"paper"``
    centring is the printed one (off = 0, rank_one = s'(K-2k)/K); ``"observed"``
    subtracts (K-2k)/K on the observed entries only (off = (K-2k)/K, rank_one = 0).
    Both have expectation 2 s' p (r^(k))^T (Proposition 1).
    """

    B: Responses
    centering: str
    shifts: np.ndarray       #: (K-2k)/K, k = 1..K-1
    off: np.ndarray
    rank_one: np.ndarray
    blocks: LabelBlocks


def centred_binary(B: Responses, centering: str, s_prime: float) -> CentredBinary:
    """Step 1: the K-1 centred binary matrices X^(k) of B (see :class:`CentredBinary`)."""
    K = B.n_labels
    shifts = centring_shifts(K)                                      # (K - 2k)/K
    if centering == "observed":
        off, rank_one = shifts, np.zeros(K - 1)
    else:
        off, rank_one = np.zeros(K - 1), s_prime * shifts
    return CentredBinary(B, centering, shifts, off, rank_one, LabelBlocks(B, off))


def leading_left_singular_vectors(X: CentredBinary, solver: str = "auto"
                                  ) -> tuple[np.ndarray, np.ndarray]:
    """Step 2: u^(k), the leading left singular vector of every X^(k), and sigma_1.

    Returns ``U`` of shape (K-1, n) (row k-1 is u^(k), sign not yet fixed) and the K-1
    leading singular values. Computed as the top eigenvector of X X^T on the solver path
    ``solver`` (``toptwo._linalg``); entries that are 0 in exact arithmetic (a worker
    with no response in B, or within ``U_ABS_TOL`` of 0) are set to exactly 0, so that
    no later decision depends on round-off.
    """
    U, sv = _leading_vectors(X.B, X.off, X.rank_one, solver, X.blocks)
    # a worker with no response in B has a zero row in X^(k) (always with "observed";
    # with "paper" where s'(K-2k)/K = 0), so u_i = (X v)_i / sigma = 0 exactly; the
    # solvers leave rounding noise there
    idle = X.B.worker_counts() == 0
    if idle.any():
        U[np.ix_(X.rank_one == 0, idle)] = 0.0
    return _clean(U), sv


def project(C: Responses, Ut: np.ndarray, X: CentredBinary, s_prime: float
            ) -> tuple[np.ndarray, np.ndarray]:
    """Step 3: v^(k) = (Y^(k))^T u~^(k) / (2 s') for all k in one pass, and its error.

    Y^(k) is C centred like X^(k). Returns v of shape (m, K-1) and a bound on the
    floating-point error of every v_j (ties of eq. (3) are judged against it).
    """
    blocks_C = X.blocks if C is X.B else LabelBlocks(C, X.off)
    v = blocks_C.backward(Ut.T)                       # (C^(k) - off)^T u~^(k)
    v /= 2.0 * s_prime
    extra = 0.0
    if X.centering == "paper":                        # minus s'(K-2k)/K 1^T u~^(k)/(2 s')
        v -= X.shifts * Ut.sum(axis=1) / 2.0
        extra = X.B.n_workers * U_ABS_TOL
    return v, _v_error_bound(C.task_counts(), s_prime, extra)


def pooled_left_vector(X: CentredBinary, solver: str, sign_rule: str, mode: str
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Step 2 with one left vector for every k: ``mode`` "stacked" or "averaged".

    ``X`` holds the K-1 centred binary matrices (:func:`centred_binary`); the stacked
    vector's solver paths are in ``toptwo._pooled``.
    Returns (u, sv): u after the sign rule and the projection onto u >= 0 (before
    trimming), and the singular values to report: sigma_1 of every X^(k) for
    "averaged", sigma_1 of the stacked matrix in every slot for "stacked".
    """
    B = X.B
    K = B.n_labels
    if mode == "averaged":
        u, sv = leading_left_singular_vectors(X, solver)      # u^(k), cleaned
    elif mode == "stacked":
        u, sigma = stacked_leading_left(B, X.off, X.rank_one, solver, X.blocks)
        idle = B.worker_counts() == 0
        if idle.any() and not np.any(X.rank_one):    # zero rows of X: u_i = 0 exactly
            u = u.copy()
            u[idle] = 0.0
        sv = np.full(K - 1, sigma)
    else:
        raise ValueError(f"`left_vector` must be one of {LEFT_VECTORS}; got {mode!r} instead.")
    return signed_left(u, mode, sign_rule), sv    # sign, (mean,) clip onto p >= 0


def _spectral_block(B: Responses, C: Responses, *, eta: float, sign_rule: str,
                    centering: str, solver: str, sx: float, sy: float,
                    n_eff: int | None = None, left_vector: str = "per_k") -> dict:
    """Algorithm 1 steps 1-3 on one block: u^(k), u~^(k), v^(k) and the error of v.

    ``n_eff`` is the n of the trimming threshold (the block's workers with responses
    when idle rows are kept in B; default: all rows of B).
    """
    X = centred_binary(B, centering, sx)                            # step 1
    if left_vector == "per_k":
        U, sv = leading_left_singular_vectors(X, solver)            # step 2: SVD
        U = signed_left(U, "per_k", sign_rule)                      # step 2: sign
        Ut = trim(U, eta, n_eff)                                    # step 2: trim
    else:
        # one vector for every k (Proposition 1): sign, clip at 0, trim
        u, sv = pooled_left_vector(X, solver, sign_rule, left_vector)
        U = np.tile(u, (B.n_labels - 1, 1))
        Ut = np.tile(trim(u, eta, n_eff), (B.n_labels - 1, 1))
    v, v_err = project(C, Ut, X, sy)                                # step 3
    return dict(U=U, Ut=Ut, sv=sv, v=v, v_err=v_err)


def spectral_estimate(B: Responses, C: Responses, *, eta: float = 0.1,
                      n_top: int = 2, sign_rule: str = "paper",
                      centering: str = "observed", solver: str = "auto",
                      left_vector: str = "per_k") -> SpectralResult:
    """Algorithm 1 steps 1-6 on sparse parts B (singular vectors) and C (projection).

    Pass the same :class:`Responses` twice for the variant without the B/C split.
    Tasks with no response in C (in particular tasks nobody answered) get top labels 0
    and NaN confusion: v^(k) carries no information about them.

    The body reads as the algorithm: for every part of the data (below), step 1
    :func:`centred_binary`, step 2 :func:`leading_left_singular_vectors`,
    :func:`fix_sign` and :func:`trim`, step 3 :func:`project`; then steps 4-6
    (:func:`top_from_projections`) on all tasks at once.

    Parts. With ``centering="observed"`` the matrix X^(k) is block diagonal over the
    connected components of the worker-task graph, and under eq. (1) the components are
    independent experiments (the likelihood factorises over them). The leading singular
    vector of X^(k) lives on one block only and is exactly 0 on the others, so Algorithm
    1 as printed would leave every other component's tasks to rounding noise. We run
    Algorithm 1 on every component: u^(k), the sign rule, the trimming threshold
    2/(eta sqrt(n_c)), s' = nnz/(n_c m_c) and l (step 5) are those of the component. On
    connected data (the paper's setting) this is Algorithm 1 unchanged, with s' and the
    threshold counting only the workers and tasks that have a response.
    ``centering="paper"`` subtracts s'(K-2k)/K from every entry, which couples all
    components; it runs on the whole matrix, as printed. One-worker components (u = (1))
    are computed all at once (:func:`toptwo._components.stage1_parts`), and so are the
    components of 2 to 64 workers (:mod:`toptwo._batched`, the same arithmetic as the
    per-component path, in one vectorised pass). A component with
    responses in C but none in B has X^(k) = 0 and no identified u^(k): its tasks get
    no stage-1 estimate (top 0, NaN confusion, component -1). See the design notes
    (``docs/design.md``) for the measurements behind these choices.

    Round-off. Entries of u^(k) within ``U_ABS_TOL`` of 0 count as 0; Delta v that
    agree within their error bound are ties of eq. (3) (smaller label first). So the
    labels do not depend on the BLAS kernel, the thread count or the order of the
    responses. ``solver`` selects the eigen-solver path (``toptwo._linalg``); the
    iterative paths run to statistical precision (``LANCZOS_TOL``), and their u agrees
    with the dense path's to ``ITERATIVE_U_TOL``.
    """
    if solver not in SOLVERS:
        raise ValueError(f"`solver` of spectral_estimate must be one of {SOLVERS}; got "
                         f"{solver!r} instead.")
    if left_vector not in LEFT_VECTORS:
        raise ValueError(f"`left_vector` of spectral_estimate must be one of "
                         f"{LEFT_VECTORS}; got {left_vector!r} instead.")
    n, m, K = B.n_workers, B.n_tasks, B.n_labels
    # small components all at once on the dense Gram path (``toptwo._batched``)
    parts = stage1_parts(B, C, centering, batch=solver in ("auto", "dense"))
    U, Ut = np.zeros((K - 1, n)), np.zeros((K - 1, n))
    v, v_err = np.zeros((m, K - 1)), np.zeros(m)
    groups = parts.groups
    sv, sx, sy = parts.sv, parts.sx, parts.sy             # from the largest part (below)
    for part in parts:
        sxc, syc = part.B.nnz / part.size, part.C.nnz / part.size    # s' of B and of C
        blk = _spectral_block(part.B, part.C, eta=eta, sign_rule=sign_rule,
                              centering=centering, solver=solver, sx=sxc, sy=syc,
                              n_eff=part.n_eff, left_vector=left_vector)
        if part.workers is None:                          # the part is the whole data
            U, Ut, v, v_err = blk["U"], blk["Ut"], blk["v"], blk["v_err"]
        else:
            U[:, part.workers], Ut[:, part.workers] = blk["U"], blk["Ut"]
            v[part.tasks], v_err[part.tasks] = blk["v"], blk["v_err"]
        if part.reports:                                  # sigma_1 and s' are reported
            sv, sx, sy = blk["sv"], sxc, syc              # for the largest part
    parts.fill_single_workers(U, Ut, v, v_err, eta=eta, sign_rule=sign_rule,
                              left_vector=left_vector)
    reported = parts.fill_small_components(U, Ut, v, v_err, eta=eta, sign_rule=sign_rule,
                                           left_vector=left_vector)
    if reported is not None:
        sv, sx, sy = reported
    # steps 4-6; a task with no response in C has no data in v^(k) (v_j is 0 or the
    # centring constant), so it gets no estimate rather than the tie rule's (1, 2)
    active = (C.task_counts() > 0) & (groups >= 0)
    top, q_raw, dv, l_j, l, l_task = top_from_projections(
        v, n_top, active=active, tie_tol=v_err, groups=groups, return_l_task=True)
    top[~active] = 0
    q_raw[~active] = np.nan
    return SpectralResult(top, q_raw, dv, v, U, Ut, sv, l_j, l, sx, sy, groups, v_err, l_task,
                          centering)


def resolve_sign_rule(sign_rule: str, left_vector: str) -> str:
    """``sign_rule="auto"``: the paper's rule for the per-k vectors (Algorithm 1 as
    printed), the positive-sum rule for a pooled vector (see :class:`TopTwo1`)."""
    if sign_rule != "auto":
        return sign_rule
    return "paper" if left_vector == "per_k" else "sum"


def check_enough_labels(R: Responses, owner: str) -> None:
    """Refuse data whose answers use at most two of K >= 3 labels.

    Then every estimated pair (g_j, h_j) holds every answer given, every answer is a
    hit in eq. (5) and every p_hat is near 1: the usual cause is binary data padded to
    K = 3. A label missing from data that use three or more labels is an ordinary
    event in a small sample and is accepted.
    """
    used = R.n_labels - R.unused_labels().size
    if R.nnz and used <= 2 < R.n_labels:
        check_labels_used(R, owner)


def check_spectral_labels(K: int, n_top: int, owner: str) -> None:
    if K == 2:
        raise ValueError(binary_labels_message(owner))
    if n_top >= K:
        raise ValueError(f"{owner} needs n_top < n_labels (T < K); got n_top={n_top} with "
                         f"n_labels={K}.")


#: TopTwo1's parameters for Algorithm 1 as printed (:meth:`TopTwo1.paper`).
PAPER_TOPTWO1 = dict(sample_splitting=True, centering="paper", left_vector="per_k",
                     sign_rule="paper")


class TopTwo1(BaseEstimator):
    r"""Spectral estimate of the top-two answers and the confusion probabilities
    (Algorithm 1, "TopTwo1").

    For every threshold k the leading left singular vector :math:`\mathbf u^{(k)}` of the
    centred binary matrix :math:`X^{(k)}` (Proposition 1), its sign fixed and its large
    entries trimmed, projects the responses:
    :math:`\mathbf v^{(k)} = (Y^{(k)})^\top \tilde{\mathbf u}^{(k)} / (2 s')`. With
    :math:`\Delta v_j^{(k)} = v_j^{(k)} - v_j^{(k-1)}` and :math:`v^{(0)} = v^{(K)} = 0`,

    .. math::

        \hat g_j = \arg\min_k \Delta v_j^{(k)}, \quad
        \hat h_j = \arg\min_{k \ne \hat g_j} \Delta v_j^{(k)} \quad \text{(eq. (3))},
        \qquad \hat q_j = \frac1K - \frac{\Delta v_j^{(\hat g_j)}}{l}
        \quad \text{(eq. (4))},

    where :math:`l`, the mean of :math:`l_j = \frac{K}{K-2}\sum_{k \ne \hat g_j, \hat h_j}
    \Delta v_j^{(k)}` (step 5), estimates :math:`\|\mathbf p\|_2`.
    :func:`toptwo.reference.algorithm1` is the same algorithm as printed, in dense NumPy
    (tested equal).

    The default ``TopTwo1()`` departs from Algorithm 1 as printed: no B/C split, centring
    on the observed entries, one left vector pooled over k ("stacked") with the
    positive-sum sign rule, clipped at 0; ``TopTwo1.paper()`` is the printed algorithm.
    Each option set to its paper value runs the paper's step (measurements: design
    notes, ``docs/design.md``, "Deviations").

    The labels are treated as ordered: Proposition 1's conversion compares each answer
    with the thresholds k, so renumbering the choices changes some estimates, far more
    with ``paper()`` than with the default (sizes: ``docs/reproducibility.md``, "The
    numbering of the answer choices"). With ``sample_splitting=True`` the split follows
    the ids of the input (:func:`split_entries`).

    Parameters
    ----------
    eta : float, default=0.1
        The :math:`\eta` of the assumption :math:`\eta\sqrt n \le \|\mathbf p\|_2 \le
        \sqrt n`; entries of :math:`\mathbf u^{(k)}` above :math:`2/(\eta\sqrt n)` are
        set to 0 (step 2).
    sample_splitting : bool, default=False
        True: split the input into B (singular vectors) and C (projections) with equal
        probability, as printed (step 1). False: use all of it for both, as the authors'
        experiments did (design notes, "Sample splitting").
    n_top : int, default=2
        T, the number of plausible answers (Algorithm 3 for T > 2).
    sign_rule : {"auto", "paper", "sum"}, default="auto"
        The sign of :math:`\mathbf u^{(k)}` (or of the pooled vector): "paper", at least
        half of its entries positive (Sec. 4.1; not scikit-learn's ``svd_flip``); "sum",
        a positive sum (design notes, "Sign rule"); "auto", "paper" with
        ``left_vector="per_k"`` (Algorithm 1 as printed) and "sum" with a pooled vector,
        whose one sign decides every k before the clip (``docs/design_stage1.md``).
    centering : {"observed", "paper"}, default="observed"
        "paper": :math:`X^{(k)} = B^{(k)} - s'(K-2k)/K \cdot \mathbb 1` with
        :math:`s' = \mathrm{nnz}(B)/(nm)`; "observed": subtract :math:`(K-2k)/K` on the
        observed entries only. Both have expectation :math:`2s'\mathbf p
        (\mathbf r^{(k)})^\top` (design notes, "Centring").
    left_vector : {"stacked", "averaged", "per_k"}, default="stacked"
        The left vector(s) of step 3. "per_k": :math:`\mathbf u^{(k)}` from each
        :math:`X^{(k)}`, as printed. "stacked": Proposition 1 gives every
        :math:`X^{(k)}` the left factor :math:`\mathbf p/\|\mathbf p\|_2`, so the leading
        left singular vector of :math:`[X^{(1)} \cdots X^{(K-1)}]` estimates it from the
        pooled signal :math:`4s'^2\|\mathbf p\|^2\sum_k\|\mathbf r^{(k)}\|^2`; one sign,
        then the projection onto :math:`\mathbf u \ge 0` (clip at 0: non-expansive
        towards :math:`\mathbf p/\|\mathbf p\|_2 \ge 0`, never raises an entry, so
        Theorem 1's argument holds), trimming, the same vector for every k. "averaged":
        the mean of the sign-fixed :math:`\mathbf u^{(k)}`, clipped at 0 (the authors'
        code). Derivation in ``toptwo._pooled``; measurements in
        ``docs/design_stage1.md``.
    rng : None, int or numpy.random.Generator
        Source of the B/C split (used only with ``sample_splitting=True``).

    Attributes
    ----------
    top_two_ : ndarray of shape (n_tasks, 2)
        :math:`(\hat g_j, \hat h_j)` by eq. (3), labels 1..K; ties go to the smaller
        label. (0, 0) for a task with no response (with ``sample_splitting=True`` also
        for a task with no response in C, or in a connected component without any
        response in B; see :func:`spectral_estimate`).
    top_ : ndarray of shape (n_tasks, T)
        All T estimated plausible answers (equals ``top_two_`` for T = 2).
    confusion_ : ndarray of shape (n_tasks,)
        :math:`\hat q_j` by eq. (4), clipped to [1/2, 1] ([1/T, 1] for T > 2); NaN for a
        task with no response; 1/2 (1/T) for an answered task the model cannot separate
        (its component shows no signal, :math:`l \le 0`, so eq. (4) is undefined; see
        :func:`undetermined_confusion`). For T > 2, ``confusions_`` holds all T weights.
    confusion_raw_ : ndarray of shape (n_tasks,)
        :math:`\hat q_j` by eq. (4) before clipping.
    norm_p_ : float
        :math:`l` of step 5, the estimate of :math:`\|\mathbf p\|_2` (the printed step 3
        divides by :math:`s'` and estimates twice that: design notes, "Scaling").
    result_ : SpectralResult
        :math:`\mathbf u^{(k)}`, :math:`\tilde{\mathbf u}^{(k)}`, :math:`\mathbf v^{(k)}`,
        :math:`\Delta v`, :math:`l_j` and the estimated :math:`s'`.
    observed_rate_ : float
        :math:`\hat s = \mathrm{nnz}/(nm)` of the input.
    n_workers_in_, n_tasks_in_, n_labels_in_ : int

    Examples
    --------
    >>> import toptwo
    >>> model = toptwo.TopTwoModel.random(40, 200, 4, rng=0)
    >>> A = model.sample(0.5, rng=1)                 # 40 workers x 200 tasks, K = 4
    >>> est = toptwo.TopTwo1().fit(A)
    >>> est.top_two_[:3].tolist(), model.top_two[:3].tolist()
    ([[2, 4], [3, 1], [1, 4]], [[2, 4], [3, 1], [1, 4]])
    >>> round(toptwo.top_two_errors(est.top_two_, model.top_two)["pair"], 3)
    0.305
    """

    def __init__(self, *, eta: float = 0.1, sample_splitting: bool = False, n_top: int = 2,
                 sign_rule: str = "auto", centering: str = "observed",
                 left_vector: str = "stacked", rng: Any = None):
        self.eta = eta
        self.sample_splitting = sample_splitting
        self.n_top = n_top
        self.sign_rule = sign_rule
        self.centering = centering
        self.left_vector = left_vector
        self.rng = rng

    _parameter_constraints = {
        "eta": [ETA_CONSTRAINT],
        "sample_splitting": ["boolean"],
        "n_top": [Interval(Integral, 2, None, closed="left")],
        "sign_rule": [StrOptions(("auto",) + SIGN_RULES)],
        "centering": [StrOptions(CENTERINGS)],
        "left_vector": [StrOptions(LEFT_VECTORS)],
        "rng": ["random_state"],
    }

    @classmethod
    def paper(cls, **params: Any) -> "TopTwo1":
        """Algorithm 1 as printed: the B/C split, the paper's centring, one left vector
        per k with the paper's sign rule; ``params`` set the others (``rng``, ``eta``,
        ``n_top``).

        Examples
        --------
        >>> TopTwo1.paper(rng=0).get_params()["left_vector"]
        'per_k'
        """
        return cls(**{**PAPER_TOPTWO1, **params})

    def fit(self, A: Any, n_labels: int | None = None) -> "TopTwo1":
        """Run Algorithm 1 on A (dense array, sparse matrix or Responses)."""
        owner = self._name
        params = self._validate_params()
        eta, T = params["eta"], params["n_top"]
        R = as_responses(A, n_labels, owner=f"{owner}.fit")
        check_dense_cost(R, f"{owner}.fit")              # before any (m, K) array
        check_spectral_labels(R.n_labels, T, owner)               # n_top < K: needs the data
        check_enough_labels(R, f"{owner}.fit")
        if params["sample_splitting"]:
            B, C = split_entries(R, 0.5, params["rng"])           # step 1
            if B.nnz == 0 or C.nnz == 0:
                raise ValueError(f"{owner}: the B/C split left one half empty ({R.nnz} "
                                 f"responses); use sample_splitting=False for so few.")
        else:
            B = C = R
        res = spectral_estimate(B, C, eta=eta, n_top=T,
                                sign_rule=resolve_sign_rule(params["sign_rule"],
                                                            params["left_vector"]),
                                centering=params["centering"],
                                left_vector=params["left_vector"])
        self._set_outputs(res, R, T, R.task_counts() > 0)
        return self

    def _set_outputs(self, res: SpectralResult, R: Responses, T: int,
                     answered: np.ndarray) -> None:
        self.result_ = res
        self.top_ = res.top
        self.top_two_ = res.top[:, :2]
        q_raw = np.where(answered[:, None], res.confusion_raw, np.nan)
        ranked = answered & (res.top[:, 0] > 0)     # (0, 0): unresolved, left NaN
        self.confusions_ = (undetermined_confusion(clip_confusion(q_raw, T), ranked, T)
                            if T > 2 else None)
        self.confusion_raw_ = q_raw[:, 0]
        self.confusion_ = undetermined_confusion(clip_confusion(q_raw[:, 0], T), ranked, T)
        self.norm_p_ = res.norm_p
        self.observed_rate_ = R.observed_rate
        self._record_input(R)


def confusion_at(res: SpectralResult, top: np.ndarray) -> np.ndarray:
    """Eq. (4) at given labels: q_jt = 1/K - Delta v_j^(top_jt) / l, shape (m, T).

    ``res`` is stage 1's :class:`SpectralResult` (Delta v and each task's l); ``top``
    holds labels 1..K (0 where there is no estimate; the result is NaN there and
    where stage 1 had no data).
    """
    top = np.asarray(top)
    K = res.delta_v.shape[1]
    idx = np.clip(top - 1, 0, K - 1)
    l_task = res.l_task if res.l_task is not None else np.full(top.shape[0], res.norm_p)
    q = eq4_confusion(np.take_along_axis(res.delta_v, idx, axis=1), l_task, K)
    return np.where((top > 0) & (l_task > 0)[:, None], q, np.nan)


def undetermined_confusion(q: np.ndarray, answered: np.ndarray, n_top: int) -> np.ndarray:
    """q with 1/T (1/2 for the top two) on answered tasks where eq. (4) is undefined.

    Eq. (4) divides by l, the estimate of ||p||_2 of the task's component; where the
    component's answers show no signal (l <= 0, e.g. a Latin square: every label equally
    often from every worker) the model cannot separate the labels, and the confusion is
    reported as equal shares: q = 1/2 (g and h equally plausible; 1/T on each of the T
    labels for top-T). ``confusion_raw_`` keeps NaN there. Unanswered tasks stay NaN.
    """
    q = np.array(q, dtype=float)
    fill = answered if q.ndim == 1 else answered[:, None]
    return np.where(fill & np.isnan(q), 1.0 / n_top, q)


def clip_confusion(q: np.ndarray, n_top: int) -> np.ndarray:
    """Clip eq. (4)'s q_hat to the model's range (NaN stays NaN).

    The first weight: [1/2, 1] for T = 2, [1/T, 1] for T > 2; a 2-D array of all T
    weights (T > 2) is clipped to [0, 1].
    """
    q = np.asarray(q, float)
    if q.ndim == 2:
        return np.clip(q, 0.0, 1.0)
    return np.clip(q, 1.0 / n_top if n_top > 2 else 0.5, 1.0)
