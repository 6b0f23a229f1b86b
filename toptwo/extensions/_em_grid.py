"""The grid EM of :class:`toptwo.TopTwoEM` (``confusion="grid"``): the machinery.

Private. The E-step integrates q_j over a fixed grid of nodes on (1/2, 1) (the posterior
of each task's confusion is kept on ``GRID_NODES`` points), the M-step solves for the
mixing weights by Newton's method (:func:`_pi_newton`) and for p by the conditional
maximisations of :mod:`toptwo.extensions.em`; the iteration is accelerated (SQUAREM, and
Anderson mixing on the weights) while keeping the log-posterior monotone. The model, the
objective and the stopping rule are derived in :mod:`toptwo.extensions.em`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..responses import Responses
from .._ties import _EPS

#: p_i and q_j are kept this far inside their intervals by the Newton solves (the priors
#: already keep them interior; this only guards log(0) against underflow).
_EDGE = 1e-12
#: Number of (label, task, node) entries per block of the grid E-step: small enough for
#: the chain of elementwise operations to stay in the processor's cache (measured at
#: m = 200000, K = 5, CPU time per E-step: 0.132 s with 2^16 and 0.130 s with 2^18,
#: against 0.168 s with 2^14 and 0.158 s with 2^20).
_GRID_CHUNK = 1 << 16
#: The grid E-step keeps the unscaled g and h terms (2 K GRID_NODES float64 per answered
#: task) of as many of its first blocks as fit in this many bytes between its two passes,
#: and recomputes the others' block by block (the same bits). At 10^7 responses (m = 10^6,
#: K = 5, 5 nodes) they take 400 MB: kept, the fit takes 7.4-8.7 s against 8.4-10.2 s
#: with 256 MiB (64% kept) and peaks at 1.25 GB against 1.16 GB (0.89 GB with none
#: kept; TopTwo2's default 0.54 GB; 10 nodes with none kept, before 2026-12: 0.99 GB).
_GRID_CACHE_BYTES = 512 << 20
#: Newton iterations per conditional maximisation (each halves the bracket at worst).
_NEWTON_MAX = 100
_NEWTON_TOL = 1e-12
#: ``confusion="grid"``: EM stops when the EM step from the current point would raise
#: the expected complete-data log-posterior (the M-step's objective), and so at least
#: the log-posterior, by at most this much per response (module docstring, "Stopping"):
#: the convention of every EM in toptwo (:data:`toptwo.baselines.EM_TOL`), ten times
#: tighter than the baselines' default (at 1e-5 the mean gap to the oracle over the 24
#: cells of benchmarks/em.py rose by 0.0005). Until 2026-11-25 an absolute 1e-3, which
#: took 5 E-steps at 10^4 responses and 12 at 10^7.
EM_GAIN_TOL = 1e-6                # EM_TOL / 10
#: logit(p) of an extrapolated point is clipped to +-_LOGIT_MAX.
_LOGIT_MAX = 27.0


def _logit(p: np.ndarray) -> np.ndarray:
    return np.log(p) - np.log1p(-p)


def _expit(t: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-t))


def _newton(deriv, x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Root of a decreasing derivative on (lo, hi), vectorised: safeguarded Newton.

    ``deriv(x)`` returns (f'(x), f''(x)) with f'' < 0, f'(lo+) > 0 > f'(hi-). Keeps a
    bracket [lo, hi] of the root; takes the Newton step when it lands inside the bracket
    (or is below _NEWTON_TOL), else bisects. Stops when every Newton step is below
    _NEWTON_TOL.
    """
    x = np.clip(x, lo, hi).copy()
    lo0, hi0 = lo, hi
    lo, hi = lo.copy(), hi.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(_NEWTON_MAX):
            d1, d2 = deriv(x)
            up = d1 > 0
            np.copyto(lo, x, where=up)
            np.copyto(hi, x, where=~up)
            delta = np.divide(d1, d2)
            np.negative(delta, out=delta)
            x_new = x + delta
            # a Newton step below the tolerance is taken even if it does not move x in
            # floating point (x then sits on the bracket's end): bisecting there would
            # jump away from a converged root
            small = np.abs(delta) <= _NEWTON_TOL
            bad = (x_new <= lo) | (x_new >= hi)
            bad &= ~small
            bad |= ~np.isfinite(x_new)
            any_bad = bool(bad.any())
            if any_bad:
                x_new = np.where(bad, 0.5 * (lo + hi), x_new)
            np.maximum(x_new, lo0, out=x_new)
            np.minimum(x_new, hi0, out=x_new)
            x = x_new
            if not any_bad and small.all():
                break
    return x



#: Nodes of the confusion grid (``confusion="grid"``): t = 2q - 1 at the midpoints of
#: GRID_NODES equal bins of [0, 1]. Ten until 2026-12 (issue 42): on the 24 cells of
#: benchmarks/em.py (30 paired replicates) 5 nodes gave a mean gap to the oracle of 0.0049
#: against 0.0050 (paired difference -0.0001 +- 0.0001) and a largest ECE of pair_proba_
#: of 0.028 (as with 10; 4 nodes: 0.034, 3: 0.068), at about half the E-step's cost
#: (design notes, "TopTwoEM").
GRID_NODES = 5
#: Dirichlet pseudo-count added to every node's weight (keeps log pi finite).
GRID_PSEUDO = 0.1


def _exclusive_sums(E: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """X[c] = sum_{b != c} E[b] along axis 0, by prefix and suffix sums (no subtraction,
    so no cancellation); written to ``out`` if given (K >= 3)."""
    K = E.shape[0]
    X = np.empty_like(E) if out is None else out
    np.copyto(X[1], E[0])                     # prefix sums E[0] + ... + E[c - 1]
    for c in range(2, K):
        np.add(X[c - 1], E[c - 1], out=X[c])
    s = E[K - 1].copy()                       # plus suffix sums E[c + 1] + ... + E[K - 1]
    for c in range(K - 2, 0, -1):
        X[c] += s
        s += E[c]
    X[0] = s
    return X


#: A task whose largest per-node term is below this (in the shift by the largest S^a +
#: S^b) is recomputed with the exact shift (:func:`_node_terms_chunk`).
_TINY = 1e-200


def _grid_node_terms_exact(sa: np.ndarray, sb: np.ndarray):
    """:func:`_node_terms_chunk` for a few tasks, through the (K, K, r, G) array of all
    pairs shifted by the largest off-diagonal term (the shift factor w is then 1)."""
    K = sa.shape[0]
    L = sa[:, None] + sb[None, :]
    L[np.arange(K), np.arange(K)] = -np.inf
    M = L.max(axis=(0, 1, 3))
    L -= M[None, None, :, None]
    np.exp(L, out=L)
    Gu = L.sum(axis=1)
    return Gu, L.sum(axis=0), Gu.sum(axis=0), M


def _row_max(a: np.ndarray) -> np.ndarray:
    """Largest entry of each row of a short-rowed (c, G) array, column by column (numpy's
    reduction along a short last axis is several times slower)."""
    out = a[:, 0].copy()
    for k in range(1, a.shape[1]):
        np.maximum(out, a[:, k], out=out)
    return out


def _node_terms_chunk(Sa: np.ndarray, Sb: np.ndarray, gu: np.ndarray, hu: np.ndarray):
    """Per-node terms of the posterior over (node k, a, b) for a chunk of tasks.

    The posterior is proportional to pi_k exp(Sa[a, j, k] + Sb[b, j, k]) for a != b;
    ``Sa`` and ``Sb`` of shape (K, c, G) (label, task, node) are overwritten. On return
    ``gu[a, j, k] w[j, k]`` = sum_{b != a} exp(Sa[a, j, k] + Sb[b, j, k] - M[j]) (a as g),
    ``hu`` the same with the label as h, and the function returns (z, w, M) with
    z[j, k] = sum_a gu[a, j, k] w[j, k], the likelihood of task j's answers at node k
    times exp(-M[j] - C_j). With E^a = exp(Sa - max_a Sa) (likewise E^b) and M[j] =
    max_k (max_a Sa + max_b Sb), gu[a] = E^a[a] X^b[a] and w = exp(max Sa + max Sb - M),
    X^b[a] = sum_{b != a} E^b[b] by prefix and suffix sums (:func:`_exclusive_sums`):
    O(c K G), no (K, K, c, G) array, nothing cancels, every term at most 1. A task whose
    answers all favour one label by a log-ratio of several hundred in both slots would
    underflow (its largest z below _TINY); such tasks are recomputed over all pairs with
    the exact shift (:func:`_grid_node_terms_exact`; w = 1 for them).
    """
    ma, mb = Sa.max(axis=0), Sb.max(axis=0)
    top = ma + mb
    M = _row_max(top)
    np.subtract(Sa, ma, out=Sa)
    np.exp(Sa, out=Sa)
    np.subtract(Sb, mb, out=Sb)
    np.exp(Sb, out=Sb)
    _exclusive_sums(Sb, out=gu)
    gu *= Sa
    _exclusive_sums(Sa, out=hu)
    hu *= Sb
    top -= M[:, None]
    w = np.exp(top, out=top)
    z = gu.sum(axis=0)
    z *= w
    return z, w, M


def _grid_node_terms(S: np.ndarray):
    """:func:`_node_terms_chunk` over all tasks, for ``S`` of shape (K, m, 2 G) with Sa in
    ``S[..., :G]`` and Sb in ``S[..., G:]``: returns (W, Z, M) with W[..., :G] = gu w and
    W[..., G:] = hu w (Gu and Hu of the module docstring, shifted by M) and Z = z."""
    K, m, G2 = S.shape
    G = G2 // 2
    W = np.empty_like(S)
    Z = np.empty((m, G))
    M = np.empty(m)
    step = max(1, _GRID_CHUNK // (K * G))
    for lo in range(0, m, step):
        hi = min(m, lo + step)
        sa, sb = np.ascontiguousarray(S[:, lo:hi, :G]), np.ascontiguousarray(S[:, lo:hi, G:])
        gu, hu = np.empty_like(sa), np.empty_like(sb)
        z, w, Mc = _node_terms_chunk(sa.copy(), sb.copy(), gu, hu)
        bad = np.flatnonzero(_row_max(z) < _TINY)
        if bad.size:
            gu[:, bad], hu[:, bad], z[bad], Mc[bad] = _grid_node_terms_exact(sa[:, bad],
                                                                           sb[:, bad])
            w[bad] = 1.0
        W[:, lo:hi, :G] = gu * w
        W[:, lo:hi, G:] = hu * w
        Z[lo:hi], M[lo:hi] = z, Mc
    return W, Z, M


#: Newton steps on the grid weights per E-step, at most (each one raises the objective;
#: from a poor start ten or more are needed, near the optimum one or two), and in the
#: first E-step, at TopTwo2's p (whose optimal weights EM moves away from at once:
#: measured at 2 10^6 responses, 3 steps there took 10 E-steps and 30 Newton steps in
#: all, against 10-11 and 34-47 with 0, 6, 10 or 20).
_PI_NEWTON = 20
_PI_FIRST = 3
#: A Newton step on the grid weights goes at most this fraction of the way to the
#: boundary of the simplex (a weight can shrink 100-fold in one step).
_PI_BOUNDARY = 0.99


def _pi_newton(Z: np.ndarray, pi: np.ndarray, delta: float, max_steps: int | None = None,
               work: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Maximise F(pi) = sum_j log(Z[j] @ pi) + delta sum_k log pi_k over the simplex.

    The log-posterior's dependence on the grid weights for fixed p (Z from
    :func:`_node_terms_chunk`, rows of answered tasks): concave, solved by Newton steps
    on the simplex (the KKT system of the equality-constrained quadratic model), each
    step d shortened to at most _PI_BOUNDARY of the way to the boundary and halved until
    F rises by an Armijo fraction of the Newton decrement g.d. The rise along the step,
    sum_j log1p(t (Z[j] @ d)/(Z[j] @ pi)) + delta sum_k log1p(t d_k/pi_k), is a sum of
    small terms, accurate far below the round-off of F itself (d sums to 0, so pi + t d
    stays on the simplex). When the step had to be shortened, the multiplicative EM
    update pi_k (sum_j Z_jk/(Z[j] @ pi) + delta/pi_k)/(m + G delta) (a rise of F by
    EM's inequality) is taken instead if it rises more. Stops when the decrement is below
    1e-12 per task, when a full step from a decrement that small by the
    self-concordance bound leaves one below it, or after ``max_steps`` (default
    _PI_NEWTON) steps; ``work``, an array shaped like Z, is scratch space. Returns the
    new weights and F at them; F never decreases. Computed on the transpose Z.T (G, m):
    a Z stored in Fortran order (the transpose of a C array, as :class:`_GridEM` keeps
    it) makes every per-task pass run along contiguous rows of m values (at m = 10^6 the
    division by Z @ pi took 25 ms per step on Z's rows of 5 values, 5 ms on Z.T's).
    """
    G = pi.size
    ZT = Z.T                                    # (G, m)
    m = max(ZT.shape[1], 1)
    zp = pi @ ZT
    f = float(np.log(zp).sum() + delta * np.log(pi).sum())
    kkt = np.zeros((G + 1, G + 1))
    kkt[:G, G] = kkt[G, :G] = 1.0
    RmT = np.empty_like(ZT) if work is None else work.T
    for _ in range(_PI_NEWTON if max_steps is None else max_steps):
        np.divide(ZT, zp, out=RmT)
        g = RmT.sum(axis=1) + delta / pi
        kkt[:G, :G] = -(RmT @ RmT.T) - np.diag(delta / pi ** 2)
        try:
            d = np.linalg.solve(kkt, np.concatenate([-g, [0.0]]))[:G]
        except np.linalg.LinAlgError:
            break
        d -= d.mean()                       # exactly on the simplex's tangent space
        dec = float(g @ d)
        if not dec > 1e-12 * m:
            break
        neg = d < 0
        t = min(1.0, float((_PI_BOUNDARY * pi[neg] / -d[neg]).min(initial=1.0)))
        ratio = (d @ ZT) / zp
        while t > 1e-10:
            rise = float(np.log1p(t * ratio).sum() + delta * np.log1p(t * d / pi).sum())
            if rise >= 1e-4 * t * dec:
                break
            t *= 0.5
        else:
            break
        if t < 1.0:
            # far from the optimum the multiplicative EM update of the weights (from the
            # same column sums) can rise more than the shortened Newton step
            s = g - delta / pi
            d_em = (pi * s + delta) / (m + G * delta) - pi
            r_em = (d_em @ ZT) / zp
            rise_em = float(np.log1p(r_em).sum() + delta * np.log1p(d_em / pi).sum())
            if rise_em > rise:
                t, d, ratio, rise = 1.0, d_em, r_em, rise_em
                dec = np.inf
        pi = pi + t * d
        zp = zp * (1.0 + t * ratio)
        f += rise
        # -F/delta is self-concordant (a sum of -log of affine functions times 1/delta >=
        # 1, plus -log pi_k): after a full Newton step from a point with decrement lam =
        # sqrt(dec/delta) < 1, the next one is at most (lam/(1 - lam))^2 (Nesterov 2004,
        # Thm 4.1.14), so a step that lands within the tolerance needs no further check
        lam = np.sqrt(dec / delta)
        if (t == 1.0 and delta <= 1.0 and lam < 1.0
                and delta * (lam / (1.0 - lam)) ** 4 <= 1e-12 * m):
            break
    return pi / pi.sum(), f


#: Largest number of (block, label) keys sorted by numpy's radix sort (a 16-bit key) in
#: :func:`_grid_blocks`; beyond, the rows are sorted as int64 (the same permutation).
_RADIX_KEYS = 1 << 16


def _grid_blocks(R: Responses, tasks_per_block: int):
    """The (label, task) x worker incidence of the responses, cut into blocks of tasks.

    Only answered tasks are kept, renumbered 0..m' - 1 in their order. Block b covers
    renumbered tasks lo..hi-1 (c = hi - lo of them); its CSR matrix F_b of shape (K c, n)
    has a 1 in row (label - 1) c + (j - lo), column i, for every response A_ij = label.
    F_b @ T, for a (worker, node) table T, is the (label, task, node) array of sums over
    the task's answers with that label, contiguous in (K, c, G) order; the transpose
    F_b.T (a CSC view) sums a (label, task, node) array over each worker's answers.
    Within a row the workers come in increasing order (the task-major order of the
    responses), so every sum is taken in the same order whatever the input order.
    Returns a list of (lo, hi, F_b, F_b.T).
    """
    n, K = R.n_workers, R.n_labels
    _, workers_tm, labels_tm = R.task_major()
    counts = R.task_counts()
    m = int(np.count_nonzero(counts))
    # renumbered task of every response (task-major order: non-decreasing); its row
    # lo K + (label - 1) c + (j - lo), with c = tasks_per_block except in the last block,
    # computed in place (a few nnz-sized temporaries: this is the fit's memory peak)
    rows = np.repeat(np.arange(m, dtype=np.int64), counts[counts > 0])
    lo_t = rows // tasks_per_block
    lo_t *= tasks_per_block
    rows -= lo_t                                   # j - lo
    last = (m - 1) // tasks_per_block * tasks_per_block if m else 0
    c_t = np.where(lo_t == last, m - last, tasks_per_block)
    lab = labels_tm.astype(np.int64)
    lab -= 1
    lab *= c_t
    del c_t
    rows += lab
    del lab
    lo_t *= K
    rows += lo_t
    del lo_t
    # a stable sort by row (task-major order, workers increasing, within a row; each row
    # holds distinct workers, so the matrix is canonical). The responses already come in
    # task order, so a stable sort by (block, label) is the same permutation: numpy sorts
    # a 16-bit key by radix sort, O(nnz) (about 3 times faster at 10^7 responses)
    indptr = np.zeros(K * m + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=K * m), out=indptr[1:])
    n_keys = K * ((m - 1) // tasks_per_block + 1) if m else 0
    if n_keys <= _RADIX_KEYS:
        del rows
        key = np.repeat((np.arange(m) // tasks_per_block * K).astype(np.uint16),
                        counts[counts > 0])
        key += (labels_tm - 1).astype(np.uint16)
        order = np.argsort(key, kind="stable")
        del key
    else:
        order = np.argsort(rows, kind="stable")
        del rows
    indices = workers_tm[order].astype(np.int32 if n < 2**31 else np.int64)
    del order
    inc = sp.csr_array((np.ones(indices.size), indices, indptr), shape=(K * m, n))
    out = []
    for lo in range(0, m, tasks_per_block):
        hi = min(m, lo + tasks_per_block)
        a, b = inc.indptr[lo * K], inc.indptr[hi * K]
        F = sp.csr_array((inc.data[a:b], inc.indices[a:b], inc.indptr[lo * K:hi * K + 1] - a),
                         shape=(K * (hi - lo), n))
        out.append((lo, hi, F, F.T))
    return out


def _grid_pairs_block(F, Ta: np.ndarray, Tb: np.ndarray, pi: np.ndarray, K: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The pair posterior with q_j integrated out, and the node posterior, for one block
    of tasks (:func:`_grid_blocks`).

    Returns ``pair`` of shape (K, K, c), P((g_j, h_j) = (a, b)) proportional to
    sum_k pi_k exp(Sa[a, j, k] + Sb[b, j, k]) (0 on the diagonal), and ``node`` of shape
    (c, G), P(q_j = q_k | A_.j). From the same shifted exponentials as
    :func:`_node_terms_chunk` (every term at most 1; a task whose terms all underflow is
    recomputed with the exact shift). O(c K^2 G) by one ``np.einsum`` (numpy's own loops,
    no BLAS); run once, after EM.
    """
    G = Ta.shape[1]
    c = F.shape[0] // K
    Sa = (F @ Ta).reshape(K, c, G)
    Sb = (F @ Tb).reshape(K, c, G)
    ma, mb = Sa.max(axis=0), Sb.max(axis=0)
    top = ma + mb
    M = _row_max(top)
    Ea, Eb = np.exp(Sa - ma), np.exp(Sb - mb)
    Ea *= np.exp(top - M[:, None]) * pi
    pair = np.einsum("acg,bcg->abc", Ea, Eb)
    node = (Ea * _exclusive_sums(Eb)).sum(axis=0)
    diag = np.arange(K)
    pair[diag, diag] = 0.0
    total = node @ np.ones(G)
    bad = np.flatnonzero(total < _TINY)
    if bad.size:
        L = Sa[:, None, bad] + Sb[None, :, bad] + np.log(pi)
        L[diag, diag] = -np.inf
        L -= L.max(axis=(0, 1, 3))[None, None, :, None]
        np.exp(L, out=L)
        pair[:, :, bad] = L.sum(axis=3)
        node[bad] = L.sum(axis=(0, 1))
        total[bad] = node[bad].sum(axis=1)
    pair /= total
    node /= total[:, None]
    return pair, node


def _grid_labels_block(pair: np.ndarray, tie: np.ndarray, post_tol: float):
    """The chosen pair of every task of a block from its pair posterior (K, K, c): the
    largest posterior, ties (posterior at least exp(-tie) times the largest, less 2
    ``post_tol``) to the lexicographically smallest (a, b), a != b. Returns (a, b, the
    chosen pair's posterior, the posterior that a is g_j)."""
    K = pair.shape[0]
    xa, xb = np.nonzero(~np.eye(K, dtype=bool))          # off-diagonal, row-major order
    off = pair[xa, xb]                                    # (K (K - 1), c)
    floor = off.max(axis=0) * np.exp(-tie) - 2.0 * post_tol
    first = np.argmax(off >= floor, axis=0)               # the first pair within the tie
    a, b = xa[first], xb[first]
    cols = np.arange(pair.shape[2])
    return a, b, off[first, cols], pair.sum(axis=1)[a, cols]


class _GridPoint(NamedTuple):
    """An E-step's result (``confusion="grid"``): p, the grid weights, the (worker,
    2 nodes) posterior sums of the M-step, the g and h marginals of the answered tasks
    (only with ``posterior_tol`` > 0) and the log-posterior."""
    p: np.ndarray
    pi: np.ndarray
    WW: np.ndarray
    gh: np.ndarray | None
    lp: float


#: Anderson acceleration (``confusion="grid"``): number of past differences combined.
_AA_MEMORY = 10


def _anderson(xs: list, gxs: list) -> np.ndarray | None:
    """Anderson acceleration (type II) of the fixed-point map x -> g(x).

    ``xs`` are the last iterates, ``gxs`` their images; with residuals f_i = g(x_i) -
    x_i, the proposal is g(x_k) - sum_i gamma_i (g(x_i+1) - g(x_i)), gamma minimising
    || f_k - sum_i gamma_i (f_i+1 - f_i) || (least squares). None with fewer than two
    iterates or a non-finite proposal.
    """
    if len(xs) < 2:
        return None
    f = np.array([g - x for x, g in zip(xs, gxs)])
    dF = np.diff(f, axis=0)
    dG = np.diff(np.array(gxs), axis=0)
    try:
        gamma = np.linalg.lstsq(dF.T, f[-1], rcond=None)[0]
    except np.linalg.LinAlgError:
        return None
    z = gxs[-1] - gamma @ dG
    return z if np.isfinite(z).all() else None


def _grid_done(old: _GridPoint, new: _GridPoint, active: np.ndarray, tol: float,
               post_tol: float) -> bool:
    """The parameter and posterior stopping rules between two consecutive accepted
    points (the EM-gain rule is checked before each step)."""
    change = max(float(np.abs(new.p - old.p)[active].max(initial=0.0)),
                 float(np.abs(new.pi - old.pi).max()))
    if change < tol:
        return True
    if post_tol > 0 and old.gh is not None and new.gh is not None:
        return float(np.abs(new.gh - old.gh).max(initial=0.0)) < post_tol
    return False


class _GridEM:
    """E-step, M-step and labels of ``confusion="grid"`` on one response set.

    Holds the blocks of :func:`_grid_blocks` and the work arrays, allocated once per fit:
    the unscaled g and h terms of the last E-step (K, m, G each, the only arrays of that
    size), its per-task node terms and shifts.
    """

    def __init__(self, R: Responses, a_p: float, b_p: float, post_tol: float):
        n, K = R.n_workers, R.n_labels
        Gn = GRID_NODES
        self.answered = R.task_counts() > 0
        self.active = R.worker_counts() > 0
        # every per-task array covers the answered tasks only (renumbered in order)
        m = self.n_ans = int(self.answered.sum())
        self.R, self.n, self.m, self.K, self.Gn = R, n, m, K, Gn
        self.a_p, self.b_p, self.post_tol = a_p, b_p, post_tol
        self.Nw = R.worker_counts().astype(float)
        self.nnz = max(int(R.nnz), 1)
        self.q_nodes = 0.5 * (1.0 + (np.arange(Gn) + 0.5) / Gn)
        self.qq = np.concatenate([self.q_nodes, 1.0 - self.q_nodes])
        self.x = (self.q_nodes - 1.0 / K)[:, None]
        self.y = (1.0 - self.q_nodes - 1.0 / K)[:, None]
        self.xy = (self.qq - 1.0 / K)[:, None]          # x then y, as the M-step's (2 G, n)
        self.blocks = _grid_blocks(R, max(1, _GRID_CHUNK // (K * Gn)))
        largest = max((hi - lo for lo, hi, _, _ in self.blocks), default=0)
        # the unscaled g and h terms of the first blocks are kept between the passes, as
        # many whole blocks as fit in _GRID_CACHE_BYTES; pass 2 recomputes the others
        keep = _GRID_CACHE_BYTES // (2 * K * Gn * 8)
        self.n_kept = max((hi for _, hi, _, _ in self.blocks if hi <= keep), default=0)
        self.Gu, self.Hu = np.empty((K, self.n_kept, Gn)), np.empty((K, self.n_kept, Gn))
        self.Wt = np.empty((self.n_kept, Gn))
        if self.n_kept < m:
            self.gbuf, self.hbuf = np.empty(K * largest * Gn), np.empty(K * largest * Gn)
        # Z and the grid weights' scratch array in Fortran order (their transposes are C
        # arrays): the Newton steps of :func:`_pi_newton` run along rows of m values
        self.Z, self.M = np.empty((Gn, m)).T, np.empty(m)
        self.work = np.empty((Gn, m)).T
        self.buf = np.empty(K * largest * 2 * Gn)
        self.lo_p, self.hi_p = np.full(n, _EDGE), np.full(n, 1.0 - _EDGE)

    def tables(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(worker, node) weights log(1 + K p_i q_k/(1 - p_i)) (slot a) and with 1 - q_k."""
        T = np.log1p((self.K * p / (1.0 - p))[:, None] * self.qq[None, :])
        return np.ascontiguousarray(T[:, :self.Gn]), np.ascontiguousarray(T[:, self.Gn:])

    def _block_terms(self, F, Ta: np.ndarray, Tb: np.ndarray, c: int, gu: np.ndarray,
                     hu: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-node terms of one block at the tables (Ta, Tb) (:func:`_node_terms_chunk`,
        with the exact shift for tasks that would underflow): writes gu, hu, returns
        (z, w, M). The same operations on the same inputs, so a recomputation gives the
        same bits."""
        K, Gn = self.K, self.Gn
        z, w, Mc = _node_terms_chunk((F @ Ta).reshape(K, c, Gn),
                                     (F @ Tb).reshape(K, c, Gn), gu, hu)
        bad = np.flatnonzero(_row_max(z) < _TINY)
        if bad.size:
            gu[:, bad], hu[:, bad], z[bad], Mc[bad] = _grid_node_terms_exact(
                (F @ Ta).reshape(K, c, Gn)[:, bad], (F @ Tb).reshape(K, c, Gn)[:, bad])
            w[bad] = 1.0
        return z, w, Mc

    def _terms(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, bool]:
        """Where the g and h terms of the block of tasks lo..hi-1 go: the kept arrays
        (True) or the scratch buffers that pass 2 refills (False)."""
        if hi <= self.n_kept:
            return self.Gu[:, lo:hi], self.Hu[:, lo:hi], True
        n = self.K * (hi - lo) * self.Gn
        shape = (self.K, hi - lo, self.Gn)
        return self.gbuf[:n].reshape(shape), self.hbuf[:n].reshape(shape), False

    def e_step(self, p: np.ndarray, pi: np.ndarray, pi_steps: int | None = None) -> _GridPoint:
        """Pass 1: per-node terms at p, block by block (in cache); the grid weights are
        then moved to their optimum given p (:func:`_pi_newton`, at most ``pi_steps``
        Newton steps); pass 2: the posterior under the new weights, summed per (worker,
        node) for the M-step. The unscaled g and h terms of pass 1 are kept for pass 2
        for as many blocks as fit in _GRID_CACHE_BYTES; pass 2 recomputes the others
        block by block (the same bits; memory O(nnz + m G) beyond the budget instead of
        O(m K G))."""
        K, Gn, Z, Wt, M = self.K, self.Gn, self.Z, self.Wt, self.M
        Ta, Tb = self.tables(p)
        for lo, hi, F, _ in self.blocks:
            gu, hu, kept = self._terms(lo, hi)
            z, w, M[lo:hi] = self._block_terms(F, Ta, Tb, hi - lo, gu, hu)
            Z[lo:hi] = z
            if kept:
                Wt[lo:hi] = w
        pi, f = _pi_newton(Z, pi, GRID_PSEUDO, pi_steps, self.work)
        pa = p[self.active]
        # log-posterior: sum_j C_j = sum_i N_i log((1 - p_i)/K); log Z_j = M_j + log D_j
        lp = float(self.Nw @ np.log((1.0 - p) / K) + M.sum() + f
                   - self.n_ans * np.log(K * (K - 1))
                   + self.a_p * np.log(pa).sum() + self.b_p * np.log1p(-pa).sum())
        ratio = pi[None, :] / (Z @ pi)[:, None]       # times w: the (task, node) scale
        WW = np.zeros((self.n, 2 * Gn))
        gh = np.empty((2, K, self.m)) if self.post_tol > 0 else None
        for lo, hi, F, FT in self.blocks:
            c = hi - lo
            gu, hu, kept = self._terms(lo, hi)
            w = Wt[lo:hi] if kept else self._block_terms(F, Ta, Tb, c, gu, hu)[1]
            scale = w * ratio[lo:hi]
            buf = self.buf[:K * c * 2 * Gn].reshape(K, c, 2 * Gn)
            np.multiply(gu, scale[None], out=buf[..., :Gn])
            np.multiply(hu, scale[None], out=buf[..., Gn:])
            WW += FT @ buf.reshape(K * c, 2 * Gn)
            if gh is not None:
                gh[0][:, lo:hi] = buf[..., :Gn].sum(axis=2)
                gh[1][:, lo:hi] = buf[..., Gn:].sum(axis=2)
        return _GridPoint(p, pi, WW, gh, lp)

    def m_step(self, pt: _GridPoint) -> tuple[np.ndarray, float]:
        """p_i: the same concave 1-D problem as for confusion="map", with the node's q_k
        in place of q_j, so the responses aggregate per (worker, node). Returns the
        maximiser and the rise of the maximised function Q (the EM step's guaranteed rise
        of the log-posterior), summed from per-worker log-ratios."""
        K, a_p, b_p = self.K, self.a_p, self.b_p
        W = np.ascontiguousarray(pt.WW.T)             # (2 G, n): slot a, then slot b
        Wo = np.clip(self.Nw - W.sum(axis=0), 0.0, None)
        xy, c_o = self.xy, Wo + b_p
        den, wu = np.empty_like(W), np.empty_like(W)

        def d_p(pv):
            # u = (q - 1/K)/(1/K + p (q - 1/K)) per node and slot, one (2 G, n) array
            np.multiply(xy, pv, out=den)
            np.add(den, 1.0 / K, out=den)
            np.divide(xy, den, out=den)
            np.multiply(W, den, out=wu)
            d1 = wu.sum(axis=0)
            np.multiply(wu, den, out=wu)
            d2 = wu.sum(axis=0)
            r, s = 1.0 / (1.0 - pv), 1.0 / pv
            d1 += a_p * s - c_o * r
            d2 = -d2 - c_o * r * r - a_p * s * s
            return d1, d2

        p_new = _newton(d_p, pt.p, self.lo_p, self.hi_p)
        dp = p_new - pt.p
        gain = (W * np.log1p(dp * xy / (1.0 / K + pt.p * xy))).sum(axis=0)
        gain += c_o * np.log1p(-dp / (1.0 - pt.p)) + a_p * np.log1p(dp / pt.p)
        return p_new, float(gain[self.active].sum())

    def labels(self, p: np.ndarray, pi: np.ndarray, tol: float) -> dict:
        """Labels, block by block: the pair with the largest marginal posterior; pairs
        whose posterior is within a factor exp(-tie_j), less 2 ``posterior_tol``, of it
        are ties (round-off of the scores, and parameter changes up to ``tol``), the
        lexicographically smallest wins. Per worker: twice the largest weight (its sum
        over a task bounds the scores, for the round-off) and a bound on |d w/d p| of both
        weights (their sum: the scores' sensitivity to p)."""
        K, m = self.K, self.m
        Ta, Tb = self.tables(p)
        per_worker = np.column_stack([2.0 * np.log1p(K * p / (1.0 - p)),
                                      2.0 * K / ((1.0 - p) * (1.0 - p + K * p))])
        d = self.R.task_counts()[self.answered].astype(float)
        a, b = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
        pair_proba, g_proba, q_mean = np.empty(m), np.empty(m), np.empty(m)
        for lo, hi, F, _ in self.blocks:
            pair, node = _grid_pairs_block(F, Ta, Tb, pi, K)
            sums = (F @ per_worker).reshape(K, hi - lo, 2).sum(axis=0)
            rounding = 8.0 * _EPS * (d[lo:hi] + 2.0) * sums[:, 0]
            tie = 2.0 * rounding + tol * (sums[:, 1] + 1.0 / pi.min())
            a[lo:hi], b[lo:hi], pair_proba[lo:hi], g_proba[lo:hi] = _grid_labels_block(
                pair, tie, self.post_tol)
            q_mean[lo:hi] = node @ self.q_nodes
        return dict(a=a, b=b, pair_proba=pair_proba, g_proba=g_proba, q=q_mean)


def _squarem(x0: np.ndarray, x1: np.ndarray, x2: np.ndarray) -> np.ndarray | None:
    """SQUAREM extrapolation (Varadhan and Roland 2008, step length of scheme S3, at least
    the plain two-step point) from three consecutive EM iterates."""
    r, v = x1 - x0, x2 - 2.0 * x1 + x0
    nv = float(np.sqrt(v @ v))
    if not nv > 0:
        return None
    alpha = min(-float(np.sqrt(r @ r)) / nv, -1.0)
    return x0 - 2.0 * alpha * r + alpha * alpha * v


def _accelerated_em(em: _GridEM, cur: _GridPoint, max_iter: int, tol: float,
                    post_tol: float) -> tuple[_GridPoint, list, int, bool]:
    """EM from ``cur`` with Anderson acceleration of logit(p), SQUAREM after a failure.

    Each iteration takes the M-step from the current point; if its guaranteed rise (the
    gain of Q) is at most EM_GAIN_TOL per response, EM has converged. Otherwise an extrapolated point
    is tried: the Anderson combination (:func:`_anderson`) of the last _AA_MEMORY + 1
    points and their EM images; after a rejected one, the history restarts and the next
    extrapolation is a SQUAREM step (:func:`_squarem`) from two plain EM steps, after
    which Anderson resumes. A trial is kept only if it raises the log-posterior at least
    as much as the EM step is guaranteed to; otherwise the EM step is taken. Returns the
    final point, the log-posterior after every E-step (a rejected trial repeats the
    current value), the number of E-steps after the first and whether a stopping rule
    was met.
    """
    active = em.active
    history = [cur.lp]
    n_iter = 0
    xs: list[np.ndarray] = []        # logit(p) of the accepted points ...
    gxs: list[np.ndarray] = []       # ... and of their EM images
    em_run = 0                       # plain EM steps since the last restart
    squarem_next = False
    while n_iter < max_iter:
        p_em, gain = em.m_step(cur)
        if gain <= EM_GAIN_TOL * em.nnz:
            return cur, history, n_iter, True
        xs.append(_logit(cur.p[active]))
        gxs.append(_logit(p_em[active]))
        del xs[:-(_AA_MEMORY + 1)], gxs[:-(_AA_MEMORY + 1)]
        z = None
        if not squarem_next:
            z = _anderson(xs, gxs)
        elif em_run >= 2:
            z = _squarem(xs[-3], xs[-2], xs[-1])
            squarem_next = False
        nxt = None
        if z is not None:
            p_try = cur.p.copy()
            p_try[active] = _expit(np.clip(z, -_LOGIT_MAX, _LOGIT_MAX))
            trial = em.e_step(p_try, cur.pi)
            n_iter += 1
            if trial.lp - cur.lp >= gain:
                nxt = trial
            else:
                history.append(cur.lp)
                del xs[:-1], gxs[:-1]
                squarem_next, em_run = True, 0
            del trial
        if nxt is None:
            if n_iter >= max_iter:
                break
            nxt = em.e_step(p_em, cur.pi)
            n_iter += 1
            em_run += 1
        converged = _grid_done(cur, nxt, active, tol, post_tol)
        cur = nxt
        history.append(cur.lp)
        if converged:
            return cur, history, n_iter, True
    return cur, history, n_iter, False
