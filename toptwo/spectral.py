r"""Stage 1: the spectral estimate of the top-two answers (Algorithm 1, "TopTwo1").

Algorithm 1 [`alg:top_two`], step by step, with the line of code that implements it:

1. Split the entries of A^1 with equal probability into B and C; convert both into
   B^(k), C^(k) and centre them, X^(k) = B^(k) - s'(K-2k)/K 1, Y^(k) likewise, where
   s' is the sampling rate of B (resp. C), estimated as nnz(B)/(n m). The centring is
   never materialised: it is a rank-one correction applied inside every product. The
   default ``centering="observed"`` subtracts (K-2k)/K on the observed entries
   instead; both have expectation 2 s' p (r^(k))^T (see :class:`TopTwo1`).
2. u^(k): leading left singular vector of X^(k), sign fixed so that at least half of
   its entries are positive (``_fix_sign``); entries u_i > 2/(eta sqrt(n)) are set
   to zero (``_trim``), giving u~^(k).
3. v^(k) = (Y^(k))^T u~^(k) / (2 s')   -- see "Scaling" below.
4. Delta v_j^(k) = v_j^(k) - v_j^(k-1) with v^(0) = v^(K) = 0; g_j = argmin_k
   Delta v_j^(k), h_j = argmin_{k != g_j} (eq. (3) [`alg:gh`]).
5. l_j = K/(K-2) sum_{k not in {g_j, h_j}} Delta v_j^(k), l = mean_j l_j.
6. q_j = 1/K - Delta v_j^(g_j) / l (eq. (4) [`eqn:est_q`]).

Scaling. Proposition 1 gives E[X^(k)] = 2 s' p (r^(k))^T (B has sampling rate s'),
whereas Sec. 4.1 writes s' p (r^(k))^T. With u = p/||p||, the paper's
v^(k) = (Y^(k))^T u / s' therefore estimates 2 ||p|| r^(k), and its l estimates
2 ||p||_2, not ||p||_2. We divide by 2 s' instead, so that v^(k) estimates
||p||_2 r^(k) and ``norm_p_`` (= l) estimates ||p||_2, as the paper intends; q_j of
eq. (4) is a ratio and is the same under both scalings. A noise-free test
(``tests/test_spectral.py``) and ``theory_checks`` (claim 12) check this.

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
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh

from ._validation import Interval, StrOptions
from ._base import BaseEstimator
from .binary import LabelBlocks, _binary_csr, binary_sign
from .responses import (Responses, _FitView, as_responses, binary_labels_message,
                        check_labels_used)

__all__ = ["TopTwo1", "SpectralResult", "spectral_estimate", "spectral_from_matrices",
           "top_from_projections", "split_entries"]

#: Below this many workers u^(k) comes from the dense n x n Gram matrix (exact eigh);
#: above it from ARPACK on the implicit operator X X^T. Both give the same vector.
DENSE_GRAM_MAX_WORKERS = 400


def split_entries(R: Responses, rate: float, rng: np.random.Generator
                  ) -> tuple[Responses, Responses]:
    """Split the observed entries: each goes to the first part with probability ``rate``.

    This is A o S and A o (1 - S) with S_ij ~ Bernoulli(rate) i.i.d. (Alg. 2 step 1;
    Alg. 1 step 1 with rate 1/2). Unobserved entries are unaffected either way, so only
    the nnz observed entries need a draw. Each part is read by one fit like the data it
    came from, so it keeps its derived arrays (CSR form, task-major order, counts) for
    as long as it is used.
    """
    mask = rng.random(R.nnz) < rate
    return _FitView(R.subset(mask)), _FitView(R.subset(~mask))


@dataclass
class SpectralResult:
    """Everything Algorithm 1 computes (diagnostics for notebooks and tests)."""

    top: np.ndarray            #: (m, T) estimated top-T labels, 0 for tasks without data
    confusion_raw: np.ndarray  #: (m, T) eq. (4) per plausible answer, unclipped
    delta_v: np.ndarray        #: (m, K) Delta v_j^(k)
    v: np.ndarray              #: (m, K-1) v^(k)
    left_vectors: np.ndarray   #: (K-1, n) u^(k) after the sign rule, before trimming
    trimmed: np.ndarray        #: (K-1, n) u~^(k)
    singular_values: np.ndarray  #: (K-1,) leading singular value of X^(k)
    l_per_task: np.ndarray     #: (m,) l_j (NaN where the task has no data in C)
    norm_p: float              #: l, the estimate of ||p||_2
    s_prime_x: float           #: s' of B (estimated)
    s_prime_y: float           #: s' of C (estimated)
    #: (m,) connected component of every task (-1: no stage-1 estimate); see
    #: :func:`spectral_estimate`
    components: np.ndarray | None = None
    #: (m,) bound on the floating-point error of v_j (ties of eq. (3) within 4x it)
    v_error: np.ndarray | None = None
    #: (m,) the l that eq. (4) divides by for each task (its component's l)
    l_task: np.ndarray | None = None


# --------------------------------------------------------------------- helpers
SIGN_RULES = ("paper", "sum")
CENTERINGS = ("observed", "paper")

#: eta of the assumption eta sqrt(n) <= ||p||_2 <= sqrt(n) (TopTwo1 and TopTwo2).
ETA_CONSTRAINT = Interval(
    Real, 0, 1, closed="right",
    note="Algorithm 1 assumes eta sqrt(n) <= ||p||_2 <= sqrt(n), which needs eta <= 1 (with "
         "eta > 1 the trimming threshold 2/(eta sqrt(n)) removes every entry above "
         "2/sqrt(n)).")


def _fix_sign(u: np.ndarray, rule: str = "paper") -> np.ndarray:
    """The paper's sign rule: of {u, -u}, the one with at least half its entries > 0.

    Implemented as "more positive than negative entries", which is the paper's rule
    whenever that rule decides, and still decides when many entries are zero (then
    neither u nor -u has half its entries positive). Entries within ``U_ABS_TOL`` of 0
    are zero for this count: the solvers cannot tell their sign (call ``_clean`` first
    to make them exactly 0). When the counts tie, the one with a positive sum is kept;
    when the sum is 0 too (to within the accuracy of u, n U_ABS_TOL), the sign is not
    identified by the data and the zero vector is returned. So the result never depends
    on the eigen-solver's sign, on round-off or on the order of the workers.

    ``rule="sum"`` (an option beyond the paper) keeps the sign with a positive sum
    first (then the count, then the first entry): the population vector p/||p|| has no
    negative entry, and when most workers are spammers (p_i = 0) the count of positive
    entries is decided by their noise, while the sum is dominated by the reliable
    workers.
    """
    big = np.abs(u) > U_ABS_TOL
    pos, neg = int((big & (u > 0)).sum()), int((big & (u < 0)).sum())
    total = float(u[big].sum())
    sum_decides = abs(total) > u.size * U_ABS_TOL
    if rule == "sum" and sum_decides:
        return -u if total < 0 else u
    if pos != neg:
        return u if pos > neg else -u
    if sum_decides:
        return -u if total < 0 else u
    # Neither rule decides: u and -u are equally supported by the data (a symmetric
    # component, e.g. two workers who answered one task with opposite binary answers).
    # The sign is not identified, so the direction carries no usable information:
    # u~^(k) = 0 (any other choice would depend on the order of the workers).
    return np.zeros_like(u)


def _trim(u: np.ndarray, eta: float, n: int | None = None) -> np.ndarray:
    """Alg. 1 step 2: zero the entries u_i > 2/(eta sqrt(n)) (n defaults to len(u))."""
    out = u.copy()
    out[u > 2.0 / (eta * np.sqrt(u.shape[0] if n is None else n))] = 0.0
    return out


# A^(k) and the joint products over all k come from toptwo.binary (the one
# implementation of Proposition 1's conversion).
_LabelBlocks = LabelBlocks


#: Lanczos settings for the joint path. The top Ritz pair (theta, u) of the Gram matrix
#: G = X X^T has residual r = G u - theta u, and by the Davis-Kahan sin-theta theorem
#: ||u - u_exact||_2 <= ||r|| / gap, gap = lambda_1 - lambda_2. We stop when
#: ||r|| <= LANCZOS_TOL theta_1 (the criterion ARPACK uses), at most LANCZOS_MAX_STEPS
#: steps (then ARPACK finishes the unconverged problems). A stop on the Ritz gap
#: theta_1 - theta_2 instead was tried and dropped: early in the iteration theta_2 can lie
#: far below lambda_2, so that gap overestimates the true one and the stop came too
#: early on near-degenerate spectra (errors of 1e-5 in u where this rule gave 1e-11).
#:
#: u is needed to statistical precision, not to machine precision: the stop leaves
#: ||u - u_exact||_2 <= LANCZOS_TOL theta_1 / gap, at most ITERATIVE_U_TOL = 1e-5 for
#: theta_1/gap <= 100 (on Table 1's scenarios theta_1/gap is 1-7; the measured error is
#: 3e-9 to 7e-8). The sampling noise of u is 100-300 times that bound: between two
#: independent draws of the ``hard`` scenario the entries of u^(k) differ by 3.1e-3
#: (rms / sqrt 2) at 2e6 responses and 1.4e-3 at 1e7 (``benchmarks/u_precision.py``).
#: The stop was 1e-10 theta_1 before: three more joint steps on ``hard`` at 2e6 (10
#: instead of 7), four on ``few_smart`` (14 instead of 10).
#:
#: The decisions taken from u (zeroing, the sign rule, ties of Delta v: ``U_ABS_TOL``)
#: guard against round-off, not against this truncation error: on one solver path the
#: iteration is the same computation on every machine, BLAS kernel and thread count up
#: to round-off (about 1e-14 in u), and its truncation error is the same everywhere. What
#: the truncation error does decide is the agreement between solver paths (a forced
#: ``solver=`` other than the one "auto" picks from n): u within ITERATIVE_U_TOL, labels
#: equal except where a Delta v lies within that of a tie (none in the tests). The stop
#: itself is a threshold on a computed residual: round-off could move it to the next
#: step only if the residual fell within about 1e-12 (relative) of LANCZOS_TOL theta_1,
#: which over the factor of about 15 that one step spans has a probability of about
#: 1e-11 per fit.
LANCZOS_TOL = 1e-7
#: Accuracy of u^(k) on the iterative paths (see ``LANCZOS_TOL``): for path comparisons.
ITERATIVE_U_TOL = 100.0 * LANCZOS_TOL
LANCZOS_MAX_STEPS = 80


def _joint_leading_left(blocks: _LabelBlocks, shifts: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top left singular pairs of X^(k) = A^(k) - shifts[k] 1 1^T for all k at once.

    Lanczos with full re-orthogonalisation on the K - 1 Gram operators X^(k) X^(k)T,
    run in lock step so that every step costs one joint backward and one joint forward
    pass over the responses. Start vector 1/sqrt(n) for every k (deterministic).

    Returns U of shape (n, K-1), singular values (K-1,) and a mask of the converged
    problems (the caller hands the others to ARPACK).
    """
    from scipy.linalg import eigh_tridiagonal

    n, nk = blocks.n, blocks.K - 1

    centred = bool(np.any(shifts != 0))

    def gram(V):
        if not centred:                                           # X = B^(k) - offsets
            if done.any():
                # a converged problem's column of V is 0, and so is its product (exactly):
                # only the others go through the data
                act = np.flatnonzero(~done)
                out = np.zeros_like(V)
                out[:, act] = blocks.forward(blocks.backward(V[:, act], act), act)
                return out
            return blocks.forward(blocks.backward(V))
        W = blocks.backward(V) - shifts * V.sum(axis=0)          # X^T v
        return blocks.forward(W) - shifts * W.sum(axis=0)        # X w

    steps = min(n, LANCZOS_MAX_STEPS)
    Q = np.zeros((steps + 1, n, nk))
    alpha = np.zeros((steps, nk))
    beta = np.zeros((steps, nk))
    Q[0] = 1.0 / np.sqrt(n)
    U = np.zeros((n, nk))
    theta_top = np.zeros(nk)
    done = np.zeros(nk, dtype=bool)
    j = 0
    for j in range(steps):
        w = gram(Q[j])
        alpha[j] = np.einsum("nk,nk->k", w, Q[j])
        for _ in range(2):                                        # full re-orthogonalisation
            coef = np.einsum("jnk,nk->jk", Q[:j + 1], w)
            w -= np.einsum("jnk,jk->nk", Q[:j + 1], coef)
        b = np.linalg.norm(w, axis=0)
        beta[j] = b
        for k in np.flatnonzero(~done):
            if j == 0:
                theta, S = alpha[:1, k], np.ones((1, 1))
            else:
                theta, S = eigh_tridiagonal(alpha[:j + 1, k], beta[:j, k])
            top = int(np.argmax(theta))
            resid = b[k] * abs(S[-1, top])            # ||G u - theta u|| of the Ritz pair
            if resid <= LANCZOS_TOL * max(theta[top], 1e-300) or j + 1 == n:
                done[k] = True
                U[:, k] = Q[:j + 1, :, k].T @ S[:, top]
                theta_top[k] = theta[top]
        if done.all():
            break
        safe = np.where(b > 0, b, 1.0)
        Q[j + 1] = np.where(done, 0.0, w / safe)
    norms = np.linalg.norm(U, axis=0)
    U[:, done] /= norms[done]
    return U, np.sqrt(np.maximum(theta_top, 0.0)), done


#: ARPACK settings for u^(k): a small Krylov space suffices for a rank-one signal, and
#: the relative tolerance of the Lanczos path leaves u accurate to ITERATIVE_U_TOL, far
#: below the sampling noise.
ARPACK_NCV = 8
ARPACK_TOL = LANCZOS_TOL


def _leading_left(M: sp.csr_array, MT: sp.csr_array, c: float, v0: np.ndarray | None,
                  *, dense: bool | None = None) -> tuple[np.ndarray, float]:
    """Leading left singular vector and value of X = M - c 1 1^T (M sparse, n x m).

    X X^T = M M^T - c (b 1^T + 1 b^T) + c^2 m 1 1^T with b = M 1: dense n x n Gram for
    small n, otherwise ARPACK (Lanczos) on the implicit operator, started at ``v0``
    (deterministic, no hidden random start). ``MT`` is M^T in CSR form.
    """
    n, m = M.shape
    if dense is None:
        dense = n <= DENSE_GRAM_MAX_WORKERS
    if dense:
        b = M @ np.ones(m)
        G = (M @ MT).toarray()
        G -= c * (b[:, None] + b[None, :])
        G += c * c * m
        w, V = np.linalg.eigh(G)
        sigma = float(np.sqrt(max(w[-1], 0.0)))
        if n > 1 and w[-1] - w[-2] <= _degenerate_gap(n, w[-1]):
            # sigma_1 = sigma_2: the leading direction is not identified by the data
            # (any unit vector of the eigenspace would do; eigh's choice depends on the
            # order of the workers), so it carries no usable information
            return np.zeros(n), sigma
        return V[:, -1], sigma

    def mv(x):
        x = np.ravel(x)
        y = MT @ x - c * x.sum()          # X^T x
        return M @ y - c * y.sum()        # X y

    op = LinearOperator((n, n), matvec=mv, dtype=float)
    w, V = eigsh(op, k=1, which="LA", v0=v0, ncv=min(ARPACK_NCV, n - 1), tol=ARPACK_TOL)
    return V[:, 0], float(np.sqrt(max(w[0], 0.0)))


# ------------------------------------------------------ round-off-proof decisions
#: Round-off tolerance of the entries of a unit vector u^(k). The dense path (eigh of the
#: Gram matrix, n <= DENSE_GRAM_MAX_WORKERS under "auto") returns u with ||r|| ~ n eps
#: ||G||, so (Davis-Kahan, theta_1/gap <= 100) within 1e-8 of the exact vector, and
#: ``_degenerate_gap`` catches smaller gaps; on the iterative paths, run to statistical
#: precision (``LANCZOS_TOL``), round-off moves u by about 1e-14 between machines. Entries
#: with |u_i| <= U_ABS_TOL are therefore taken as 0 (set to exactly 0; they never vote in
#: the sign rule), and Delta v within the bound of ``_v_error_bound`` are ties.
U_ABS_TOL = 1e-8

_EPS = float(np.finfo(float).eps)


def _degenerate_gap(n: int, theta: float) -> float:
    """Smallest eigen-gap theta_1 - theta_2 of the Gram matrix at which u is determined.

    eigh returns u with residual ||r|| <= c n eps theta_1, hence (Davis-Kahan) an error
    of ||r|| / gap; below this gap that error could exceed ``U_ABS_TOL`` (16 n eps
    theta_1 / U_ABS_TOL, e.g. 3.6e-7 theta_1 for n = 1, 1.4e-5 theta_1 for n = 400), and
    an exactly repeated singular value (a symmetric component) is always below it.
    """
    return 16.0 * n * _EPS * max(theta, 0.0) / U_ABS_TOL


def _v_error_bound(task_counts: np.ndarray, s_prime: float, extra: float = 0.0) -> np.ndarray:
    r"""Bound on |v_hat_j^(k) - v_j^(k)| from the accuracy of u and of the sums.

    v_j = sum_i u~_i Y_ij / (2 s') over the d_j responses of task j, |Y_ij| <= 2,
    |u~_i| <= 1: an error of U_ABS_TOL in each u~_i moves v_j by at most
    2 d_j U_ABS_TOL / (2 s'), and summing d_j terms of size <= 2 in floating point
    errs by at most 2 d_j^2 eps / (2 s') (the gamma_d bound of recursive summation).
    ``extra`` adds a task-independent term (the rank-one centring of "paper").
    """
    d = task_counts.astype(float)
    return d * (U_ABS_TOL + d * _EPS) / s_prime + extra


def tolerant_smallest(values: np.ndarray, n_pick: int, tol: np.ndarray | float
                      ) -> np.ndarray:
    """Indices of the ``n_pick`` smallest entries of every row, ties by a tolerance.

    Row by row and slot by slot: among the entries not yet picked, every entry within
    ``tol`` (per row) of the smallest one is an exact tie, and the tie goes to the
    smallest index (the documented tie rule: the smaller label). Entries that differ by
    more than ``tol`` keep their floating-point order. With ``tol = 0`` this is a stable
    argsort truncated to ``n_pick`` columns. +-inf are ordinary values (an infinite tie
    goes to the smaller index); NaN has no order and is refused (ValueError), as is a
    NaN, infinite or negative ``tol``.

    Computed column by column (K passes over m rows per slot), not with reductions
    along the short axis of an (m, K) array.
    """
    vals = np.asarray(values, dtype=float)
    if vals.ndim != 2:
        raise ValueError(f"`values` of tolerant_smallest must be 2-D (rows x labels); got "
                         f"shape {vals.shape} instead.")
    m, K = vals.shape
    if not 0 <= n_pick <= K:
        raise ValueError(f"`n_pick` of tolerant_smallest must be in 0..{K} (the number of "
                         f"columns); got {n_pick} instead.")
    bad = np.isnan(vals)
    if bad.any():
        j, k = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(f"`values` of tolerant_smallest must not be NaN (NaN has no "
                         f"order); found NaN at row {j}, column {k}.")
    tol = np.broadcast_to(np.asarray(tol, dtype=float), (m,))
    if not np.isfinite(tol).all() or (tol < 0).any():
        j = int(np.argmax(~np.isfinite(tol) | (tol < 0)))
        raise ValueError(f"`tol` of tolerant_smallest must be finite and >= 0; found "
                         f"{float(tol[j])!r} at row {j}.")
    return _smallest_columns(vals.T.copy(), n_pick, tol, bool(np.isposinf(vals).any()))


def _smallest_columns(cols: np.ndarray, n_pick: int, tol: np.ndarray, has_posinf: bool
                      ) -> np.ndarray:
    """:func:`tolerant_smallest` on validated values stored label-major, cols[k] =
    values[:, k] (shape (K, m), overwritten)."""
    K, m = cols.shape
    out = np.empty((m, n_pick), dtype=np.int64)
    flat_cols = cols.reshape(-1)
    rows = np.arange(m)
    # picked entries become +inf; only when +inf occurs among the values themselves
    # must they be told apart from the picked ones
    avail = np.ones((K, m), dtype=bool) if has_posinf else None
    for t in range(n_pick):
        low = np.min(cols if avail is None else np.where(avail, cols, np.inf), axis=0)
        floor = low + tol
        # the smallest tied index wins (branch-free first-true search, see mle)
        pick = _first_true([(cols[k] <= floor) if avail is None
                            else (cols[k] <= floor) & avail[k] for k in range(K)])
        out[:, t] = pick
        at = pick * m                                         # flat index of (pick_j, j)
        at += rows
        flat_cols[at] = np.inf
        if avail is not None:
            avail.reshape(-1)[at] = False
    return out


#: Responses per chunk of the chunked passes over task-major data (cache-sized
#: temporaries instead of arrays of the size of the data).
CHUNK_RESPONSES = 1 << 17


def _task_chunks(indptr: np.ndarray, size: int | None = None, first: int | None = None):
    """(lo, hi, e0, e1): consecutive task ranges [lo, hi) holding about ``size``
    responses each (default ``CHUNK_RESPONSES``, read at call time; the first range about
    ``first``), and their response range [e0, e1) in task-major order."""
    if size is None:
        size = CHUNK_RESPONSES
    m = indptr.size - 1
    nnz = int(indptr[-1])
    start = size if first is None else first
    cuts = np.searchsorted(indptr, np.arange(start, nnz, size), side="right")
    bounds = np.unique(np.concatenate(([0], cuts, [m])))
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        if hi > lo:
            yield lo, hi, int(indptr[lo]), int(indptr[hi])


def _first_true(conds: list[np.ndarray]) -> np.ndarray:
    """Index of the first True among K boolean rows, per column (0 where none is)."""
    K = len(conds)
    dt = np.int8 if K < 127 else np.int32
    key = np.full(conds[0].shape, K, dtype=dt)
    for c, cond in enumerate(conds):
        np.minimum(key, (~cond).astype(dt) * dt(K - c) + dt(c), out=key)
    key[key == K] = 0
    return key.astype(np.int64)


def _select_rows(M: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """M[idx[j], j] for every column j of a (K, m) array."""
    m = M.shape[1]
    flat = idx * m
    flat += np.arange(m)
    return M.reshape(-1).take(flat)


#: Tasks per chunk of the row-local steps of eq. (3) (cache-sized temporaries).
TASK_CHUNK = 1 << 15


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


def _steps_4_5_chunked(v: np.ndarray, n_top: int, tol4: np.ndarray) -> tuple | None:
    """:func:`_steps_4_5` in chunks of ``TASK_CHUNK`` rows, label-major inside a chunk:
    the same subtractions, comparisons and left-to-right sums (row sums of fewer than 8
    entries add them left to right), so the same bits. None when a check would fail
    (then :func:`_steps_4_5` raises its error)."""
    m, Km1 = v.shape
    K = Km1 + 1
    t4 = np.broadcast_to(tol4, (m,))
    if not np.isfinite(t4).all() or (t4 < 0).any():
        return None
    delta_v = np.empty((m, K))
    order = np.empty((m, n_top), dtype=np.int64)
    top_mass = np.empty((m, n_top))
    rest = np.empty(m)
    for lo in range(0, m, TASK_CHUNK):
        hi = min(m, lo + TASK_CHUNK)
        vc = v[lo:hi]
        cols = np.empty((K, hi - lo))         # cols[k] = v^(k+1) - v^(k), v^(0) = v^(K) = 0
        np.subtract(vc[:, 0], 0.0, out=cols[0])
        for k in range(1, K - 1):
            np.subtract(vc[:, k], vc[:, k - 1], out=cols[k])
        np.subtract(0.0, vc[:, K - 2], out=cols[K - 1])
        if np.isnan(cols).any():
            return None
        for k in range(K):
            delta_v[lo:hi, k] = cols[k]
        oc = _smallest_columns(cols.copy(), n_top, t4[lo:hi], bool(np.isposinf(cols).any()))
        order[lo:hi] = oc
        mass = [_select_rows(cols, oc[:, t]) for t in range(n_top)]
        for t in range(n_top):
            top_mass[lo:hi, t] = mass[t]
        if K < 8:
            total = cols[0].copy()
            for k in range(1, K):
                total += cols[k]
            picked = mass[0].copy() if n_top else np.zeros(hi - lo)
            for t in range(1, n_top):
                picked += mass[t]
            np.subtract(total, picked, out=rest[lo:hi])
        else:
            rest[lo:hi] = delta_v[lo:hi].sum(axis=1) - top_mass[lo:hi].sum(axis=1)
    return delta_v, order, top_mass, rest


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
    with np.errstate(invalid="ignore", divide="ignore"):
        q_raw = np.empty_like(top_mass)                       # eq. (4), column by column
        for t in range(n_top):
            np.subtract(1.0 / K, top_mass[:, t] / l_task, out=q_raw[:, t])
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
        u = _fix_sign(_clean(u_all[:, 0]), sign_rule)
        ut = _trim(u, eta)
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


SOLVERS = ("auto", "dense", "lanczos", "svds")


def _components(B: Responses, C: Responses) -> tuple[int, np.ndarray, np.ndarray]:
    """Connected components of the worker-task graph of B and C together.

    Returns (number of components, component of every worker, of every task); workers
    and tasks without any response get -1. Components are numbered by their smallest
    worker index, so the numbering does not depend on the order of the responses.

    Without the B/C split (the default) the components come from min-label
    propagation over the responses (each round: every task takes the smallest label of
    its workers, every worker the smallest label of its tasks), a few O(nnz) passes on
    crowdsourcing graphs, whose diameter is small; a graph that needs more than
    ``_PROPAGATION_ROUNDS`` rounds (a long chain) goes to scipy's connected_components.
    """
    n, m = B.shape
    parts = (B,) if C is B else (B, C)
    if n * n <= max(_PAIR_TABLE_PER_RESPONSE * sum(R.nnz for R in parts), _PAIR_TABLE_MIN):
        return _components_by_first_worker(parts, n, m)
    if C is B:
        labels = _propagate_min_label(B)
        if labels is not None:
            lw, lt = labels
            return _renumber(lw, lt)
    from scipy.sparse.csgraph import connected_components

    rows = np.concatenate([B.workers, C.workers]).astype(np.int64)
    cols = np.concatenate([B.tasks, C.tasks]).astype(np.int64) + n
    G = sp.coo_array((np.ones(rows.size, dtype=np.int8), (rows, cols)),
                     shape=(n + m, n + m)).tocsr()
    _, lab = connected_components(G, directed=False)
    deg = np.zeros(n + m, dtype=bool)
    deg[rows] = True
    deg[cols] = True
    # relabel every component by its smallest worker index (as the propagation does)
    lab = np.where(deg, lab, -1)
    first = np.full(int(lab.max()) + 2 if lab.size else 1, n, dtype=np.int64)
    wl = lab[:n]
    np.minimum.at(first, wl[wl >= 0], np.flatnonzero(wl >= 0))
    lw = np.where(wl >= 0, first[np.maximum(wl, 0)], -1)
    tl = lab[n:]
    lt = np.where(tl >= 0, first[np.maximum(tl, 0)], -1)
    return _renumber(lw, lt)


#: The worker-pair table of ``_components_by_first_worker`` (n^2 booleans) is used while
#: n^2 <= this many times the number of responses (so it stays linear in the data).
_PAIR_TABLE_PER_RESPONSE = 4
#: ... and always while n^2 <= this (a table of 64 KiB).
_PAIR_TABLE_MIN = 1 << 16


def _components_by_first_worker(parts: tuple[Responses, ...], n: int, m: int
                                ) -> tuple[int, np.ndarray, np.ndarray]:
    """Connected components through a worker x worker table (few workers, many tasks).

    Every task links all its workers to its smallest worker f_j, which keeps the
    components; the distinct pairs (f_j, i) fit an n x n boolean table, filled in one
    pass over the responses, and scipy labels the components of that small graph. A task
    takes the component of f_j. Same result as ``_components``' other paths. The pass
    stops after its first chunk when the pairs seen so far already join every active
    worker (the usual case: one component); the labels are then the same.
    """
    from scipy.sparse.csgraph import connected_components

    active = np.zeros(n, dtype=bool)
    answered = np.zeros(m, dtype=bool)
    for R in parts:
        indptr = R.task_major()[0]
        active |= np.diff(R.tocsr().indptr) > 0
        answered |= indptr[1:] > indptr[:-1]

    def first_worker() -> np.ndarray:
        """f_j of every task over all parts (n: the task has no response)."""
        first = np.full(m, n, dtype=np.int64)
        for R in parts:
            indptr, workers, _ = R.task_major()
            if workers.size:
                # workers are increasing within a task: the first one is the smallest
                starts = indptr[:-1]
                head = workers[np.minimum(starts, workers.size - 1)]
                np.minimum(first, np.where(indptr[1:] > starts, head, n), out=first)
        return first

    table = np.zeros(n * n, dtype=bool)
    # with one part, f_j is read off each chunk as it is processed
    first_row = None if len(parts) == 1 else first_worker() * n

    def table_components() -> np.ndarray:
        flat = np.flatnonzero(table)                   # the pairs, row by row
        rows = flat // n
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=ptr[1:])
        G = sp.csr_array((np.ones(flat.size, dtype=np.int8), flat - rows * n, ptr),
                         shape=(n, n))
        return connected_components(G, directed=False)[1]

    # a small first chunk: usually enough to join every active worker (see below)
    chunks = [(R, c) for i, R in enumerate(parts)
              for c in _task_chunks(R.task_major()[0], first=16 * n if i == 0 else None)]
    for pos, (R, (lo, hi, e0, e1)) in enumerate(chunks):   # cache-sized temporaries
        indptr, workers, _ = R.task_major()
        counts = np.diff(indptr[lo:hi + 1])
        wk = workers[e0:e1]
        if wk.size:
            if first_row is None:
                head = wk[np.minimum(indptr[lo:hi] - e0, wk.size - 1)].astype(np.int64)
                head *= n
                key = np.repeat(head, counts)
            else:
                key = np.repeat(first_row[lo:hi], counts)
            key += wk
            table[key] = True
        if pos == 0 and len(chunks) > 1 and active.any():
            # the pairs seen so far are edges of the graph: if they already join every
            # active worker into one component, so do all of them, and the remaining
            # responses need not be read: every active worker and every answered task
            # is in the component of the smallest active worker
            lab = table_components()
            if np.unique(lab[active]).size == 1:
                w0 = int(np.argmax(active))
                return _renumber(np.where(active, w0, -1), np.where(answered, w0, -1))
    lab = table_components()
    first = first_worker()
    # relabel every component by its smallest worker index (as the propagation does)
    first_of = np.full(n, n, dtype=np.int64)
    np.minimum.at(first_of, lab[active], np.flatnonzero(active))
    lw = np.where(active, first_of[lab], -1)
    ft = np.minimum(first, n - 1)
    lt = np.where(first < n, lw[ft], -1)
    return _renumber(lw, lt)


#: Rounds of min-label propagation before falling back to scipy (see ``_components``).
_PROPAGATION_ROUNDS = 20


def _propagate_min_label(R: Responses) -> tuple[np.ndarray, np.ndarray] | None:
    """Smallest worker index of every node's component, by min-label propagation.

    Returns (worker labels, task labels) with -1 for nodes without responses, or None
    when the labels have not settled after ``_PROPAGATION_ROUNDS`` rounds.
    """
    n, m = R.shape
    csr = R.tocsr()
    t_indptr, t_workers, _ = R.task_major()
    w_has = np.diff(csr.indptr) > 0
    t_has = np.diff(t_indptr) > 0
    w_start = csr.indptr[:-1][w_has]
    t_start = t_indptr[:-1][t_has]
    lw = np.arange(n, dtype=np.int32)          # int32: half the memory traffic per pass
    lt = np.full(m, -1, dtype=np.int32)
    first = int(np.argmax(w_has)) if w_has.any() else 0
    for _ in range(_PROPAGATION_ROUNDS):
        lt[t_has] = np.minimum.reduceat(lw[t_workers], t_start)
        best = np.minimum.reduceat(lt[csr.indices], w_start)
        if (best >= lw[w_has]).all():                      # no label moved: settled
            lw[~w_has] = -1
            return lw.astype(np.int64), lt.astype(np.int64)
        lw[w_has] = np.minimum(lw[w_has], best)
        if (lw[w_has] == first).all():
            # every active worker reached the smallest one: a single component, and every
            # task (answered by some of them) belongs to it; no confirming round needed
            lt[t_has] = first
            lw[~w_has] = -1
            return lw.astype(np.int64), lt.astype(np.int64)
    return None


def _renumber(lw: np.ndarray, lt: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """Component labels (smallest worker index, -1 = none) -> 0..c-1 in that order."""
    used = np.unique(lw[lw >= 0])
    remap = np.full(lw.size + 1, -1, dtype=np.int64)
    remap[used] = np.arange(used.size)
    return (int(used.size), np.where(lw >= 0, remap[lw], -1),
            np.where(lt >= 0, remap[np.maximum(lt, 0)], -1))


def _local_index(comp: np.ndarray, n_comp: int) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Compact index of every node inside its component, and the nodes of each component.

    Returns ``local`` (node -> index within its component, in increasing node order) and
    ``(order, bounds)``: the nodes of component c are ``order[bounds[c]:bounds[c+1]]``.
    """
    order = np.lexsort((np.arange(comp.size), comp))
    sorted_comp = comp[order]
    first = np.searchsorted(sorted_comp, sorted_comp, side="left")
    local = np.empty(comp.size, dtype=np.int64)
    local[order] = np.arange(comp.size) - first
    bounds = np.searchsorted(sorted_comp, np.arange(n_comp + 1), side="left")
    return local, (order, bounds)


def _edges_by_component(R: Responses, wcomp: np.ndarray, n_comp: int
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Responses grouped by component (stable: (worker, task) order kept inside)."""
    ecomp = wcomp[R.workers]
    order = np.argsort(ecomp, kind="stable")
    bounds = np.searchsorted(ecomp[order], np.arange(n_comp + 1), side="left")
    return order, bounds


def _component_responses(R: Responses, parts: tuple[np.ndarray, np.ndarray], c: int,
                         w_loc: np.ndarray, t_loc: np.ndarray, shape: tuple[int, int]
                         ) -> Responses:
    """The responses of component c with compact worker and task indices (a fit view:
    the block's derived arrays are built once)."""
    order, bounds = parts
    sel = order[bounds[c]:bounds[c + 1]]
    return _FitView(Responses(w_loc[R.workers[sel]].astype(np.int32),
                              t_loc[R.tasks[sel]].astype(np.int32), R.labels[sel],
                              shape=shape, n_labels=R.n_labels))


def _leading_vectors(B: Responses, off: np.ndarray, rank_one: np.ndarray, solver: str,
                     blocks: "_LabelBlocks | None" = None) -> tuple[np.ndarray, np.ndarray]:
    """u^(k) and sigma_1(X^(k)) for all k: the one interface over the solver paths.

    X^(k) = (B^(k) - off[k] on the observed entries) - rank_one[k] 1 1^T. ``solver``:
    "dense" (eigh of the n x n Gram matrix), "lanczos" (lock-step Lanczos over all k,
    ARPACK for a problem that does not converge), "svds" (scipy.sparse.linalg.svds, the
    reference) or "auto" (dense up to ``DENSE_GRAM_MAX_WORKERS`` workers, else
    Lanczos). All return u to the accuracy stated at ``U_ABS_TOL``.
    """
    n, K = B.n_workers, B.n_labels
    if n == 1:                          # a 1 x m matrix: u = (1), sigma = its norm
        return np.ones((K - 1, 1)), _single_row_norms(B, off, rank_one)
    if solver == "auto":
        solver = "dense" if n <= DENSE_GRAM_MAX_WORKERS else "lanczos"
    U = np.empty((K - 1, n))
    sv = np.empty(K - 1)
    if solver == "lanczos":
        blocks = blocks if blocks is not None else _LabelBlocks(B, off)
        Ucols, sv, done = _joint_leading_left(blocks, rank_one)
        U = Ucols.T.copy()
        todo = np.flatnonzero(~done) + 1
        for k in map(int, todo):
            U[k - 1], sv[k - 1] = _leading_left(_binary_csr(B, k, off[k - 1]),
                                                _binary_csr(B, k, off[k - 1], transpose=True),
                                                rank_one[k - 1], np.full(n, 1.0 / np.sqrt(n)),
                                                dense=False)
        return U, sv
    for k in range(1, K):
        M, c = _binary_csr(B, k, off[k - 1]), rank_one[k - 1]
        MT = _binary_csr(B, k, off[k - 1], transpose=True)
        if solver == "dense":
            U[k - 1], sv[k - 1] = _leading_left(M, MT, c, None, dense=True)
        else:
            U[k - 1], sv[k - 1] = _svds_left(M, MT, c)
    return U, sv


def _single_row_norms(B: Responses, off: np.ndarray, rank_one: np.ndarray) -> np.ndarray:
    """sigma_1 of every X^(k) of a one-worker block: the norm of its single row."""
    return np.array([np.sqrt(float((_binary_csr(B, k, off[k - 1]).data ** 2).sum()
                                   + rank_one[k - 1] ** 2 * (B.n_tasks - B.nnz)))
                     for k in range(1, B.n_labels)])


def _svds_left(M: sp.csr_array, MT: sp.csr_array, c: float) -> tuple[np.ndarray, float]:
    """Reference: scipy.sparse.linalg.svds on X = M - c 1 1^T (deterministic start)."""
    from scipy.sparse.linalg import svds

    n, m = M.shape
    op = LinearOperator((n, m), dtype=float,
                        matvec=lambda y: M @ np.ravel(y) - c * np.ravel(y).sum(),
                        rmatvec=lambda x: MT @ np.ravel(x) - c * np.ravel(x).sum())
    if min(n, m) < 3:                   # ARPACK needs k < min(n, m); tiny: dense SVD
        Xd = M.toarray() - c
        u_all, s_all, _ = np.linalg.svd(Xd, full_matrices=False)
        return u_all[:, 0], float(s_all[0])
    u, s, _ = svds(op, k=1, tol=ARPACK_TOL, v0=np.full(min(n, m), 1.0 / np.sqrt(min(n, m)))
                   if n <= m else None, solver="arpack", random_state=0)
    return u[:, 0], float(s[0])


def _single_worker_blocks(C: Responses, wcomp: np.ndarray, tcomp: np.ndarray,
                          singles: np.ndarray, nC_c: np.ndarray,
                          w_bounds: tuple[np.ndarray, np.ndarray]) -> dict:
    """Algorithm 1 steps 2-3 on all one-worker components at once ("observed" centring).

    A one-worker component c is a 1 x m_c matrix: u = (1), u~ = (1), and task j's only
    response in C gives v_j^(k) = (A^(k)_ij - (K-2k)/K) / (2 s'_c), s'_c = nnz_c(C)/m_c:
    exactly what :func:`_spectral_block` computes for it, in one vectorised pass.
    """
    K = C.n_labels
    order, bounds = w_bounds
    comp_ids = np.flatnonzero(singles)
    workers = order[bounds[comp_ids]]
    m_c = np.bincount(tcomp[tcomp >= 0], minlength=singles.size)
    sy_c = nC_c / m_c                                        # s' of C per component
    mask = singles[np.maximum(wcomp[C.workers], 0)] & (wcomp[C.workers] >= 0)
    tasks = C.tasks[mask]
    lab = C.labels[mask]
    comp = wcomp[C.workers[mask]]
    off = (K - 2 * np.arange(1, K)) / K
    signed = binary_sign(lab[:, None], np.arange(1, K)[None, :]) - off[None, :]
    v = signed * 1.0 / (2.0 * sy_c[comp])[:, None]
    v_err = _v_error_bound(np.ones(tasks.size), sy_c[comp])
    all_tasks = np.flatnonzero(np.isin(tcomp, comp_ids) & (tcomp >= 0))
    return dict(workers=workers, tasks=tasks, v=v, v_err=v_err, all_tasks=all_tasks)


def _clean(u: np.ndarray) -> np.ndarray:
    """Entries within ``U_ABS_TOL`` of 0 are 0 in exact arithmetic as far as the solvers
    can tell: set them to exactly 0 (so they neither vote in the sign rule nor add noise
    to v^(k))."""
    out = np.array(u, dtype=float, copy=True)
    out[np.abs(out) <= U_ABS_TOL] = 0.0
    return out


def _spectral_block(B: Responses, C: Responses, *, eta: float, sign_rule: str,
                    centering: str, solver: str, sx: float, sy: float,
                    n_eff: int | None = None) -> dict:
    """Algorithm 1 steps 1-3 on one block: u^(k), u~^(k), v^(k) and the error of v.

    ``n_eff`` is the n of the trimming threshold (the block's workers with responses
    when idle rows are kept in B; default: all rows of B).
    """
    n, K = B.n_workers, B.n_labels
    shifts = (K - 2 * np.arange(1, K)) / K
    observed = centering == "observed"
    # "paper": X = B^(k) - s'(K-2k)/K 1 1^T (rank-one correction inside the products);
    # "observed": X = B^(k) - (K-2k)/K on the observed entries only (no correction).
    off = shifts if observed else np.zeros(K - 1)
    rank_one = np.zeros(K - 1) if observed else sx * shifts
    blocks_B = _LabelBlocks(B, off)
    U, sv = _leading_vectors(B, off, rank_one, solver, blocks_B)         # step 2
    # A worker with no response in B has a zero row in X^(k) (always with "observed";
    # with "paper" where s'(K-2k)/K = 0), so u_i = (X v)_i / sigma = 0 exactly; the
    # solvers leave rounding noise there.
    idle = B.worker_counts() == 0
    if idle.any():
        U[np.ix_(rank_one == 0, idle)] = 0.0
    U = np.array([_fix_sign(_clean(u), sign_rule) for u in U])
    Ut = np.array([_trim(u, eta, n_eff) for u in U])
    # step 3: v^(k) = (C^(k) - s'(K-2k)/K 1)^T u~^(k) / (2 s'), all k in one pass
    blocks_C = blocks_B if C is B else _LabelBlocks(C, off)
    v = blocks_C.backward(Ut.T)
    v /= 2.0 * sy
    extra = 0.0
    if not observed:
        v -= shifts * Ut.sum(axis=1) / 2.0
        extra = n * U_ABS_TOL
    v_err = _v_error_bound(C.task_counts(), sy, extra)
    return dict(U=U, Ut=Ut, sv=sv, v=v, v_err=v_err)


def spectral_estimate(B: Responses, C: Responses, *, eta: float = 0.1,
                      n_top: int = 2, sign_rule: str = "paper",
                      centering: str = "observed", solver: str = "auto") -> SpectralResult:
    """Algorithm 1 steps 2-6 on sparse parts B (singular vectors) and C (projection).

    Pass the same :class:`Responses` twice for the variant without the B/C split.
    Tasks with no response in C (in particular tasks nobody answered) get top labels 0
    and NaN confusion: v^(k) carries no information about them.

    Disconnected responses. With ``centering="observed"`` the matrix X^(k) is block
    diagonal over the connected components of the worker-task graph, and under eq. (1)
    the components are independent experiments (the likelihood factorises over them).
    The leading singular vector of X^(k) lives on one block only and is exactly 0 on the
    others, so Algorithm 1 as printed would leave every other component's tasks to
    rounding noise. We run Algorithm 1 on every component: u^(k), the sign rule, the
    trimming threshold 2/(eta sqrt(n_c)), s' = nnz/(n_c m_c) and l (step 5) are those
    of the component. On connected data (the paper's setting, and any instance with
    enough responses) this is Algorithm 1 unchanged. ``centering="paper"`` subtracts
    s'(K-2k)/K from every entry, which couples all components; it runs on the whole
    matrix, as printed. When the data are one component, B and C are used as they are
    (no copy), and s' and the trimming threshold still count only the workers and tasks
    that have a response (s' = nnz/(n' m'), threshold 2/(eta sqrt(n')) with n', m' the
    active workers and tasks), exactly as for a component of disconnected data. One-worker
    components (u = (1)) are computed all at once.

    No responses in B. With the B/C split a component can have responses in C but none
    in B (typically one worker whose few answers all went to C). X^(k) is 0 there and
    u^(k) is not identified by the data, so its tasks get no stage-1 estimate: top 0,
    NaN confusion, component -1, like tasks without a response in C. (Algorithm 1 on
    the whole matrix would give them v = 0 and the tie rule's (1, 2), which carries no
    information either.) TopTwo1 reports them unresolved; TopTwo2 still ranks them by
    eq. (6) on all responses, with the median q (see :class:`toptwo.TopTwo2`). A
    uniform u on such a component (a majority vote) was measured and left out: it
    changes no average (web, TopTwo2 with splits: 0.1752 g error either way over five
    splits) and would change stored results.

    Round-off. Entries of u^(k) within ``U_ABS_TOL`` of 0 count as 0; Delta v that
    agree within their error bound are ties of eq. (3) (smaller label first). So the
    labels do not depend on the BLAS kernel, the thread count or the order of the
    responses.

    ``solver`` selects the eigen-solver path (see ``_leading_vectors``). The iterative
    paths run to statistical precision (``LANCZOS_TOL``): their u agrees with the dense
    path's to ``ITERATIVE_U_TOL``, and the labels agree except where a Delta v lies within
    that of a tie.
    """
    n, m, K = B.n_workers, B.n_tasks, B.n_labels
    if solver not in SOLVERS:
        raise ValueError(f"`solver` of spectral_estimate must be one of {SOLVERS}; got "
                         f"{solver!r} instead.")
    U = np.zeros((K - 1, n))
    Ut = np.zeros((K - 1, n))
    v = np.zeros((m, K - 1))
    v_err = np.zeros(m)
    groups = np.full(m, -1, dtype=np.int64)
    sv = np.full(K - 1, np.nan)
    sx_all = B.nnz / (n * m)
    sy_all = C.nnz / (n * m)
    if centering == "paper":
        blk = _spectral_block(B, C, eta=eta, sign_rule=sign_rule, centering=centering,
                              solver=solver, sx=sx_all, sy=sy_all)
        U, Ut, v, v_err, sv = blk["U"], blk["Ut"], blk["v"], blk["v_err"], blk["sv"]
        groups[C.task_counts() > 0] = 0
        sx, sy = sx_all, sy_all
    else:
        n_comp, wcomp, tcomp = _components(B, C)
        if n_comp == 1:
            # one component: the data themselves (idle rows and columns are zero in
            # X^(k) and change nothing; the caches of B and C are kept); s' and the
            # trimming threshold count the active workers and tasks only
            nw, nt = int((wcomp >= 0).sum()), int((tcomp >= 0).sum())
            comps: list[tuple[int, np.ndarray | None, np.ndarray | None, Responses, Responses,
                              tuple[int, int]]] = (
                [(0, None, None, B, C, (nw, nt))] if B.nnz and C.nnz else [])
            singles = np.zeros(1, dtype=bool)
            nB_c, nC_c = np.array([B.nnz]), np.array([C.nnz])
        else:
            w_loc, w_bounds = _local_index(wcomp, n_comp)
            t_loc, t_bounds = _local_index(tcomp, n_comp)
            nw_c, nt_c = np.diff(w_bounds[1]), np.diff(t_bounds[1])
            B_parts = _edges_by_component(B, wcomp, n_comp)
            C_parts = B_parts if C is B else _edges_by_component(C, wcomp, n_comp)
            nB_c, nC_c = np.diff(B_parts[1]), np.diff(C_parts[1])
            singles = (nw_c == 1) & (nB_c > 0) & (nC_c > 0)
            comps = []
            for c in (int(x) for x in np.flatnonzero(~singles & (nB_c > 0) & (nC_c > 0))):
                w_idx = w_bounds[0][w_bounds[1][c]:w_bounds[1][c + 1]]
                t_idx = t_bounds[0][t_bounds[1][c]:t_bounds[1][c + 1]]
                shape = (w_idx.size, t_idx.size)
                Bc = _component_responses(B, B_parts, c, w_loc, t_loc, shape)
                Cc = Bc if C is B else _component_responses(C, C_parts, c, w_loc, t_loc,
                                                            shape)
                comps.append((c, w_idx, t_idx, Bc, Cc, shape))
        # the component with the most responses in B reports sigma_1 and s' (the first
        # such one on a tie)
        has_u = (nB_c > 0) & (nC_c > 0)
        best = int(np.argmax(np.where(has_u, nB_c, -1))) if has_u.any() else -1
        sx = sy = float("nan")
        if singles.any():
            # every one-worker component at once: u = (1) (the sign rule keeps it, the
            # trimming threshold 2/eta >= 2 never removes it), so v_j^(k) is the
            # worker's centred binary answer / (2 s'); the same numbers as the
            # per-component path, without a Python loop over (often thousands of) them
            blk = _single_worker_blocks(C, wcomp, tcomp, singles, nC_c, w_bounds)
            U[:, blk["workers"]] = 1.0
            Ut[:, blk["workers"]] = 1.0
            v[blk["tasks"]] = blk["v"]
            v_err[blk["tasks"]] = blk["v_err"]
            groups[blk["all_tasks"]] = tcomp[blk["all_tasks"]]
            if best >= 0 and singles[best]:
                sel = _component_responses(B, B_parts, best, w_loc, t_loc,
                                           (1, int(nt_c[best])))
                off = (K - 2 * np.arange(1, K)) / K
                sv = _single_row_norms(sel, off, np.zeros(K - 1))
                sx, sy = nB_c[best] / nt_c[best], nC_c[best] / nt_c[best]
        for c, wi, ti, Bc, Cc, shape in comps:
            sxc = Bc.nnz / (shape[0] * shape[1])
            syc = Cc.nnz / (shape[0] * shape[1])
            blk = _spectral_block(Bc, Cc, eta=eta, sign_rule=sign_rule, centering=centering,
                                  solver=solver, sx=sxc, sy=syc, n_eff=shape[0])
            if wi is None:
                U, Ut, v, v_err = blk["U"], blk["Ut"], blk["v"], blk["v_err"]
                groups[tcomp >= 0] = 0
            else:
                U[:, wi], Ut[:, wi] = blk["U"], blk["Ut"]
                v[ti], v_err[ti] = blk["v"], blk["v_err"]
                groups[ti] = c
            if c == best:
                sv, sx, sy = blk["sv"], sxc, syc
    # steps 4-6; a task with no response in C has no data in v^(k) (v_j is 0 or the
    # centring constant), so it gets no estimate rather than the tie rule's (1, 2)
    active = (C.task_counts() > 0) & (groups >= 0)
    top, q_raw, dv, l_j, l, l_task = top_from_projections(
        v, n_top, active=active, tie_tol=v_err, groups=groups, return_l_task=True)
    top[~active] = 0
    q_raw[~active] = np.nan
    return SpectralResult(top, q_raw, dv, v, U, Ut, sv, l_j, l, sx, sy, groups, v_err, l_task)


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


class TopTwo1(BaseEstimator):
    """Spectral estimate of the top-two answers (Algorithm 1, "TopTwo1").

    Parameters
    ----------
    eta : float, default=0.1
        The eta of the assumption eta sqrt(n) <= ||p||_2 <= sqrt(n); entries of u^(k)
        above 2/(eta sqrt(n)) are trimmed (Alg. 1 step 2).
    sample_splitting : bool, default=False
        True: the paper's Algorithm 1 -- split the input into B and C with equal
        probability, singular vectors from B, projection on C. False: the variant the
        authors' experiments ran, with all of the input used for both. The default is
        False because halving the data for each step costs more accuracy than the
        independence it buys (the split is worse on every Table 1 scenario, paired on
        the same data: ``benchmarks/splitting.py``, notebook 04; figures in the README's
        design-choices table).
    n_top : int, default=2
        T, the number of plausible answers (Algorithm 3 for T > 2).
    sign_rule : {"paper", "sum"}, default="paper"
        How the sign of u^(k) is fixed: the paper's "at least half of the entries
        positive", or (beyond the paper) "positive sum": the population vector
        p/||p||_2 has no negative entry, so its sum ||p||_1/||p||_2 >= 1 is the largest
        margin the data offer. When most workers are spammers (p_i = 0, allowed by the
        assumption eta sqrt(n) <= ||p||_2) their entries of u^(k) are noise around 0
        and decide the paper's count, while the sum is carried by the reliable workers.
        Neither measures better everywhere: "sum" never flips u^(k) in spammer-heavy
        synthetic crowds where the paper's rule does, is equal on Table 1's scenarios,
        and is worse on subsampled real data (color), where a few prolific workers with
        large entries decide the sum. So the paper's rule stays the default (figures in
        the README's design-choices table, notebook 05).
    centering : {"observed", "paper"}, default="observed"
        How B^(k) is centred before its SVD (Alg. 1 step 1). "paper": X^(k) = B^(k) -
        s'(K-2k)/K on every entry, with s' estimated as nnz(B)/(n m). "observed": subtract
        (K-2k)/K on the observed entries only. Under the paper's uniform sampling both
        have the same expectation, E[X^(k)] = 2 s' p (r^(k))^T (Proposition 1: given that
        (i, j) is observed, E[A^(k)_ij] = (K-2k)/K + 2 p_i r_j), so both are Algorithm 1;
        they differ in the noise. When workers answer very different numbers of tasks
        (s_i instead of s), "paper" leaves a rank-one term (s_i - s')(K-2k)/K along the
        workers' activity that can capture u^(k), while "observed" leaves S o (2 p r^T).
        "observed" is also block diagonal over the connected components of the
        worker-task graph, which :func:`spectral_estimate` uses. Default "observed"
        because it measures better, on real data with uneven workloads above all
        (notebook 08; figures in the README's design-choices table).
    rng : None, int or numpy.random.Generator
        Source of the B/C split (used only with ``sample_splitting=True``).

    Attributes
    ----------
    top_two_ : ndarray of shape (n_tasks, 2)
        (g_j, h_j) by eq. (3); both 0 for a task with no response (with
        ``sample_splitting=True``: no response in the projection half C, or in a
        connected component without any response in B, where u^(k) is not identified;
        see :func:`spectral_estimate`).
    top_ : ndarray of shape (n_tasks, T)
        All T estimated plausible answers (equals ``top_two_`` for T = 2).
    confusion_ : ndarray of shape (n_tasks,)
        q_j by eq. (4), clipped to [1/2, 1] (the model's range for q; [1/T, 1] for the
        first weight when T > 2); NaN for a task with no response. For T > 2,
        ``confusions_`` holds all T weights.
    confusion_raw_ : ndarray of shape (n_tasks,)
        q_j by eq. (4) before clipping.
    norm_p_ : float
        l of step 5: the estimate of ||p||_2 (see "Scaling" in the module docstring).
    result_ : SpectralResult
        u^(k), u~^(k), v^(k), Delta v, l_j and the estimated s'.
    observed_rate_ : float
        s_hat = nnz / (n m) of the input.
    n_workers_in_, n_tasks_in_, n_labels_in_ : int

    Notes
    -----
    Sign rule: of {u, -u}, the one with at least half of its entries positive (Sec. 4.1);
    this is not scikit-learn's ``svd_flip``. Ties in eq. (3) go to the smaller label.
    """

    def __init__(self, *, eta: float = 0.1, sample_splitting: bool = False, n_top: int = 2,
                 sign_rule: str = "paper", centering: str = "observed", rng: Any = None):
        self.eta = eta
        self.sample_splitting = sample_splitting
        self.n_top = n_top
        self.sign_rule = sign_rule
        self.centering = centering
        self.rng = rng

    _parameter_constraints = {
        "eta": [ETA_CONSTRAINT],
        "sample_splitting": ["boolean"],
        "n_top": [Interval(Integral, 2, None, closed="left")],
        "sign_rule": [StrOptions(SIGN_RULES)],
        "centering": [StrOptions(CENTERINGS)],
        "rng": ["random_state"],
    }

    def fit(self, A: Any, n_labels: int | None = None) -> "TopTwo1":
        """Run Algorithm 1 on A (dense array, sparse matrix or Responses)."""
        owner = self._name
        params = self._validate_params()
        eta, T = params["eta"], params["n_top"]
        R = as_responses(A, n_labels, owner=f"{owner}.fit")
        check_spectral_labels(R.n_labels, T, owner)               # n_top < K: needs the data
        check_enough_labels(R, f"{owner}.fit")
        if params["sample_splitting"]:
            B, C = split_entries(R, 0.5, params["rng"])           # step 1
            if B.nnz == 0 or C.nnz == 0:
                raise ValueError(f"{owner}: the B/C split left one half empty ({R.nnz} "
                                 f"responses); use sample_splitting=False for so few.")
        else:
            B = C = R
        res = spectral_estimate(B, C, eta=eta, n_top=T, sign_rule=params["sign_rule"],
                                centering=params["centering"])
        self._set_outputs(res, R, T, R.task_counts() > 0)
        return self

    def _set_outputs(self, res: SpectralResult, R: Responses, T: int,
                     answered: np.ndarray) -> None:
        self.result_ = res
        self.top_ = res.top
        self.top_two_ = res.top[:, :2]
        q_raw = np.where(answered[:, None], res.confusion_raw, np.nan)
        self.confusions_ = clip_confusion(q_raw, T) if T > 2 else None
        self.confusion_raw_ = q_raw[:, 0]
        self.confusion_ = clip_confusion(q_raw[:, 0], T)
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
    with np.errstate(invalid="ignore", divide="ignore"):      # NaN l: no estimate
        dv = res.delta_v.reshape(-1)
        base = K * np.arange(top.shape[0])
        q = np.empty(top.shape)
        for t in range(top.shape[1]):                       # column by column
            flat = idx[:, t] + base                         # of (j, idx[j, t]) in delta_v
            np.subtract(1.0 / K, dv.take(flat) / l_task, out=q[:, t])
    return np.where((top > 0) & (l_task > 0)[:, None], q, np.nan)


def clip_confusion(q: np.ndarray, n_top: int) -> np.ndarray:
    """Clip eq. (4)'s q_hat to the model's range (NaN stays NaN).

    The first weight: [1/2, 1] for T = 2, [1/T, 1] for T > 2; a 2-D array of all T
    weights (T > 2) is clipped to [0, 1].
    """
    q = np.asarray(q, float)
    if q.ndim == 2:
        return np.clip(q, 0.0, 1.0)
    return np.clip(q, 1.0 / n_top if n_top > 2 else 0.5, 1.0)


def soft_labels(top_two: np.ndarray, confusion: np.ndarray, n_labels: int) -> np.ndarray:
    """The paper's top-two soft labels (Sec. 6.3): q on g, 1 - q on h, 0 elsewhere."""
    m = top_two.shape[0]
    out = np.zeros((m, n_labels))
    ok = top_two[:, 0] > 0
    rows = np.flatnonzero(ok)
    out[rows, top_two[ok, 0] - 1] = confusion[ok]
    out[rows, top_two[ok, 1] - 1] = 1.0 - confusion[ok]
    out[~ok] = np.nan
    return out
