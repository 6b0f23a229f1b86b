"""Solver routing for stage 1: the leading left singular vectors u^(k) (Algorithm 1, step 2).

Private machinery behind :func:`toptwo.spectral.spectral_estimate`. The algorithm needs
"the leading left singular vector of X^(k)"; this module computes it as the leading
eigenvector of the Gram matrix X X^T, by one of three equivalent routes chosen from the
size of the problem: a dense ``eigh`` of the n x n Gram matrix (few workers), a
lock-step Lanczos iteration on all K - 1 matrices at once, or ARPACK (``eigsh``) on an
implicit operator. All routes return the same vector to the stated accuracy; the design
notes (``docs/design.md``) give the reasons and measurements.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh

from .binary import LabelBlocks, _binary_csr
from .responses import Responses
from ._ties import _degenerate_gap


#: Below this many workers u^(k) comes from the dense n x n Gram matrix (exact eigh);
#: above it from ARPACK on the implicit operator X X^T. Both give the same vector.
DENSE_GRAM_MAX_WORKERS = 400


# A^(k) and the joint products over all k come from toptwo.binary (the one
# implementation of Proposition 1's conversion).
_LabelBlocks = LabelBlocks


#: Lanczos stop: Ritz residual <= LANCZOS_TOL theta_1; why: docs/design.md "Eigen-solvers".
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


SOLVERS = ("auto", "dense", "lanczos", "svds")
