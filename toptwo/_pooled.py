r"""Stage 1 with one left vector for all k (``left_vector="stacked"`` / ``"averaged"``).

Proposition 1 gives every centred binary matrix the same left factor,

    E[X^(k)] = 2 s' p (r^(k))^T,    k = 1, ..., K-1,

so the stacked matrix X = [X^(1) ... X^(K-1)] (n x (K-1) m) has expectation
2 s' p [r^(1); ...; r^(K-1)]^T, again rank one, with left factor u* = p / ||p||_2.
Algorithm 1 as printed estimates u* K-1 times, once from each X^(k), and uses each
estimate only for its own k. Here it is estimated once:

* ``"stacked"``: the leading left singular vector of X, i.e. the top eigenvector of
  X X^T = sum_k X^(k) X^(k)T. Its signal is sigma_1(E X)^2 = 4 s'^2 ||p||^2 sum_k
  ||r^(k)||^2 -- the sum of the K-1 per-k signals -- while the noise matrices of the
  K-1 blocks add up in X X^T with a spectral norm of the same order as one block's
  times sqrt(K-1) at most (the blocks are functions of the same responses, so not
  independent, and the bound uses the triangle inequality only). By the Davis-Kahan
  (Wedin) theorem sin angle(u, u*) <= ||noise|| / sigma_1 gap, so the pooled estimate
  is at least as good as the best of the per-k ones up to that factor and strictly
  better whenever the signal is spread over several k (the per-k signal ||r^(k)|| is
  small for the k that split g_j and h_j on the same side for most tasks, and those
  per-k vectors are the ones the sign rule flips).
* ``"averaged"``: the mean of the K-1 sign-fixed per-k vectors (the authors' released
  code, ``helper_functions/run_TopTwo1.m`` lines 29-30).

Either vector then goes through one sign rule (:func:`toptwo.spectral.fix_sign`), is
projected onto the cone {u : u >= 0} (entrywise clip at 0: p >= 0, so u* lies in the
cone, and projection onto a closed convex set is non-expansive:
||max(u, 0) - u*|| <= ||u - u*||), trimmed as printed (entries > 2/(eta sqrt(n))
set to 0), and used for every k in step 3. The clip keeps Theorem 1's argument: the
proof needs ||u~ - u*|| small and every entry of u~ at most 2/(eta sqrt(n)); the clip
never increases the first and never raises an entry, so both bounds that held for u
hold for max(u, 0). It removes the negative entries of the spammers (p_i = 0), whose
noise otherwise pulls v^(k) = Y^T u~ towards their (random) answers with a negative
weight.

Solver paths are those of the per-k vector: the dense n x n Gram matrix (the sum of
the K-1 Gram matrices) up to ``DENSE_GRAM_MAX_WORKERS`` workers, else Lanczos on the
implicit operator sum_k X^(k) X^(k)T (one joint pass over the responses per step),
with ARPACK for a problem that does not converge, or scipy's ``svds`` on the stacked
operator. The decisions (zeroing, sign, clip, trimming) use the same round-off rules
(``U_ABS_TOL``). Nothing n x m is densified.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh

from ._linalg import (ARPACK_NCV, ARPACK_TOL, DENSE_GRAM_MAX_WORKERS, _joint_leading_left,
                      _single_row_norms)
from ._ties import _degenerate_gap
from .binary import LabelBlocks, _binary_csr
from .responses import Responses


class _StackedGram:
    """The operator X X^T = sum_k X^(k) X^(k)T as a one-problem block for
    :func:`toptwo._linalg._joint_leading_left` (which then runs plain Lanczos on it).

    X^(k) = A^(k) - off[k] (on observed entries, inside ``blocks``) - c_k 1 1^T.
    """

    def __init__(self, blocks: LabelBlocks, rank_one: np.ndarray):
        self.inner, self.c = blocks, np.asarray(rank_one, float)
        self.n, self.K = blocks.n, 2            # one problem (nk = K - 1 = 1)
        self.nk = blocks.K - 1

    def backward(self, V: np.ndarray, ks=None) -> np.ndarray:
        v = V[:, 0]
        W = self.inner.backward(np.repeat(v[:, None], self.nk, axis=1))   # (A^(k))^T v
        if self.c.any():
            W -= self.c * v.sum()
        return W                                                         # (m, K-1)

    def forward(self, W: np.ndarray, ks=None) -> np.ndarray:
        Z = self.inner.forward(W)                                        # A^(k) w_k
        if self.c.any():
            Z -= self.c * W.sum(axis=0)
        return Z.sum(axis=1, keepdims=True)                              # sum over k


def _gram_dense(B: Responses, off: np.ndarray, rank_one: np.ndarray) -> np.ndarray:
    """sum_k X^(k) X^(k)T as a dense n x n array (n small: the "dense" path)."""
    n, m, K = B.n_workers, B.n_tasks, B.n_labels
    G = np.zeros((n, n))
    ones = np.ones(m)
    for k in range(1, K):
        M = _binary_csr(B, k, off[k - 1])
        MT = _binary_csr(B, k, off[k - 1], transpose=True)
        c = rank_one[k - 1]
        G += (M @ MT).toarray()
        if c != 0:
            b = M @ ones
            G -= c * (b[:, None] + b[None, :])
            G += c * c * m
    return G


def stacked_leading_left(B: Responses, off: np.ndarray, rank_one: np.ndarray, solver: str,
                         blocks: LabelBlocks | None = None) -> tuple[np.ndarray, float]:
    """Leading left singular vector and value of X = [X^(1) ... X^(K-1)].

    X^(k) = (B^(k) - off[k] on the observed entries) - rank_one[k] 1 1^T; ``solver`` as
    in :func:`toptwo._linalg._leading_vectors`. The vector is returned as the solver
    gives it (sign not fixed); the zero vector when sigma_1 = sigma_2 on the dense path
    (the direction is not identified by the data).
    """
    n, m, K = B.n_workers, B.n_tasks, B.n_labels
    if n == 1:
        return np.ones(1), float(np.sqrt(np.sum(_single_row_norms(B, off, rank_one) ** 2)))
    if solver == "auto":
        solver = "dense" if n <= DENSE_GRAM_MAX_WORKERS else "lanczos"
    if solver == "dense":
        G = _gram_dense(B, off, rank_one)
        w, V = np.linalg.eigh(G)
        sigma = float(np.sqrt(max(w[-1], 0.0)))
        if w[-1] - w[-2] <= _degenerate_gap(n, w[-1]):
            return np.zeros(n), sigma
        return V[:, -1], sigma
    blocks = blocks if blocks is not None else LabelBlocks(B, off)
    op = _StackedGram(blocks, rank_one)
    if solver == "lanczos":
        # duck-typed block (n, K, forward, backward): one problem, plain Lanczos
        U, sv, done = _joint_leading_left(op, np.zeros(1))  # type: ignore[arg-type]
        if done[0]:
            return U[:, 0], float(sv[0])

        def mv(x):
            return op.forward(op.backward(np.ravel(x)[:, None]))[:, 0]

        lin = LinearOperator((n, n), matvec=mv, dtype=float)
        w, V = eigsh(lin, k=1, which="LA", v0=np.full(n, 1.0 / np.sqrt(n)),
                     ncv=min(ARPACK_NCV, n - 1), tol=ARPACK_TOL)
        return V[:, 0], float(np.sqrt(max(w[0], 0.0)))
    # "svds": the reference, on the stacked n x ((K-1) m) operator
    from scipy.sparse.linalg import svds

    Ms = [_binary_csr(B, k, off[k - 1]) for k in range(1, K)]
    MTs = [_binary_csr(B, k, off[k - 1], transpose=True) for k in range(1, K)]
    c = np.asarray(rank_one, float)

    def matvec(y):
        y = np.ravel(y).reshape(K - 1, m)
        return sum(Ms[k] @ y[k] - c[k] * y[k].sum() for k in range(K - 1))

    def rmatvec(x):
        x = np.ravel(x)
        return np.concatenate([MTs[k] @ x - c[k] * x.sum() for k in range(K - 1)])

    width = (K - 1) * m
    if min(n, width) < 3:
        Xd = sp.hstack(Ms).toarray() - np.repeat(c, m)[None, :]
        u_all, s_all, _ = np.linalg.svd(Xd, full_matrices=False)
        return u_all[:, 0], float(s_all[0])
    lin = LinearOperator((n, width), matvec=matvec, rmatvec=rmatvec, dtype=float)
    u, s, _ = svds(lin, k=1, tol=ARPACK_TOL, solver="arpack",
                   v0=np.full(n, 1.0 / np.sqrt(n)) if n <= width else None, random_state=0)
    return u[:, 0], float(s[0])
