"""Binary conversion of a K-ary response matrix (Sec. 3, "Binary conversion").

For 1 <= k < K the matrix A^(k) in {-1, 0, +1}^(n x m) records whether each answer
exceeds k::

    A^(k)_ij = -1  if 1 <= A_ij <= k
    A^(k)_ij = +1  if k <  A_ij <= K
    A^(k)_ij =  0  if A_ij = 0 (not answered)

Proposition 1 [`prop:binary`]: E[A^(k)] - s(K - 2k)/K * 1 = 2 s p (r^(k))^T, a rank-one
matrix (see :meth:`toptwo.TopTwoModel.r` and :meth:`~toptwo.TopTwoModel.expected_binary`).

Every A^(k) is a signed sum of the label-indicator matrices L_c (L_c[i, j] = 1 iff
A_ij = c): A^(k) = sum_{c > k} L_c - sum_{c <= k} L_c. The estimators use that to
share one sparsity structure across all k (only the +-1 data array changes).

This module is the only implementation of the conversion: :func:`binary_sign` is the
rule, :func:`to_binary` / :func:`binary_stack` give A^(k) as sparse matrices, and
:class:`LabelBlocks` multiplies all K - 1 of them at once (TopTwo1 and TopTwo2 take
A^(k) from here).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from ._validation import check_int
from .responses import Responses, as_responses

__all__ = ["to_binary", "binary_stack", "from_binary", "binary_sign", "centring_shifts"]


def binary_sign(labels: Any, k: Any) -> np.ndarray:
    """The conversion rule of Sec. 3: +1.0 where label > k, -1.0 where 1 <= label <= k.

    ``labels`` and ``k`` broadcast (e.g. a label array and one k, or a column of labels
    1..K against a row of thresholds 1..K-1, which gives the (K, K-1) sign table of
    :class:`LabelBlocks`). Labels must be observed answers (>= 1); unanswered entries
    are not part of the sparse data.
    """
    return np.where(np.asarray(labels) > np.asarray(k), 1.0, -1.0)


def centring_shifts(n_labels: int) -> np.ndarray:
    """(K - 2k)/K for k = 1..K-1: the centring constants of Proposition 1.

    E[A^(k)] - s (K - 2k)/K 1 1^T = 2 s p (r^(k))^T, so X^(k) subtracts these (times
    s', or on the observed entries only: Algorithm 1, step 1).

    Examples
    --------
    >>> centring_shifts(4).tolist()
    [0.5, 0.0, -0.5]
    """
    K = n_labels
    return (K - 2 * np.arange(1, K)) / K


def to_binary(A: Any, k: int, n_labels: int | None = None) -> sp.csr_array:
    """A^(k) as a float CSR array of shape (n_workers, n_tasks) with entries -1, 0, +1.

    Parameters
    ----------
    A : array-like, sparse matrix or Responses
        Response matrix (labels 1..K, 0 = not answered).
    k : int
        Threshold, 1 <= k < K.
    n_labels : int, optional
        K; inferred from the data when omitted.
    """
    R = as_responses(A, n_labels, owner="to_binary")
    k = check_int(k, "k", owner="to_binary", minimum=1)
    if k >= R.n_labels:
        raise ValueError(f"to_binary needs 1 <= k < K={R.n_labels}; got k={k}.")
    return _binary_csr(R, k)


def binary_stack(A: Any, n_labels: int | None = None) -> list[sp.csr_array]:
    """[A^(1), ..., A^(K-1)]: all K - 1 binary matrices (float CSR)."""
    R = as_responses(A, n_labels, owner="binary_stack")
    return [_binary_csr(R, k) for k in range(1, R.n_labels)]


def from_binary(stack: Sequence[Any]) -> Responses:
    """Invert :func:`binary_stack`: A_ij = 1 + #{k : A^(k)_ij = +1} where observed.

    Raises ValueError if the matrices do not share one support or are not monotone
    in k (A^(k) is non-increasing in k), i.e. are not the binary conversion of any A.
    """
    if len(stack) == 0:
        raise ValueError("from_binary needs at least one matrix (K - 1 >= 1).")
    mats = [sp.csr_array(M) for M in stack]
    shape = mats[0].shape
    K = len(mats) + 1
    coos = []
    for k, M in enumerate(mats, start=1):
        if M.shape != shape:
            raise ValueError(f"from_binary: A^({k}) has shape {M.shape}, A^(1) has {shape}.")
        M = M.copy()
        M.eliminate_zeros()
        M.sort_indices()
        if not np.isin(M.data, (-1.0, 1.0)).all():
            raise ValueError(f"from_binary: A^({k}) must hold only -1, 0 and +1.")
        coos.append(M.tocoo())
    rows, cols = coos[0].row, coos[0].col
    for k, c in enumerate(coos[1:], start=2):
        if not (np.array_equal(c.row, rows) and np.array_equal(c.col, cols)):
            raise ValueError(f"from_binary: A^({k}) is nonzero on a different set of entries "
                             f"than A^(1); every A^(k) shares the support of A.")
    signs = np.stack([c.data for c in coos])               # (K-1, nnz)
    if (np.diff(signs, axis=0) > 0).any():
        raise ValueError("from_binary: entries must be non-increasing in k (A^(k) = +1 means "
                         "A > k, which implies A > k - 1).")
    labels = 1 + (signs > 0).sum(axis=0)
    return Responses(rows.astype(np.int32), cols.astype(np.int32), labels.astype(np.int32),
                     shape=shape, n_labels=K)


def _binary_csr(R: Responses, k: int, offset: float = 0.0, *,
                transpose: bool = False) -> sp.csr_array:
    """A^(k) - ``offset`` on the observed entries, float CSR of shape (n, m).

    With ``transpose=True`` the transpose (m, n), built from the cached task-major
    form of ``R`` (no transposition per call). The sparsity pattern is shared with
    ``R``; only the +-1 data array is new.
    """
    if transpose:
        indptr, indices, labels = R.task_major()
        shape = R.shape[::-1]
    else:
        base = R.tocsr()
        indptr, indices, labels = base.indptr, base.indices, base.data
        shape = R.shape
    data = binary_sign(labels, k)
    if offset:
        data -= offset
    return sp.csr_array((data, indices, indptr), shape=shape)


#: Elements (8 bytes each) a label-block product may allocate before LabelBlocks
#: switches to entry-by-entry products (32 MiB).
BLOCK_BUDGET = 2**22


def _use_per_entry(n: int, m: int, K: int, nnz: int) -> bool:
    """True when the label-block arrays, (K n) x (K - 1), would exceed both
    :data:`BLOCK_BUDGET` and a few times the data's own size, nnz + (n + m) K."""
    return K * n * (K - 1) > max(BLOCK_BUDGET, 4 * (nnz + (n + m) * K))


class LabelBlocks:
    """All K - 1 binary matrices of one set of responses, for joint products.

    A^(k) = sum_c sign_k(c) L_c with sign_k(c) = :func:`binary_sign` (c, k) and L_c the
    indicator of label c. Stacking the L_c as blocks of rows gives one sparse matrix
    Lf of shape (K n, m) (row (c-1) n + i holds the tasks worker i labelled c); we
    store its transpose ``Lt`` (m, K n). Then, for Y of shape (m, K-1) and X of shape
    (n, K-1), column k of

        forward(Y)  = sum_c sign_k(c) (L_c Y)[:, k]      = A^(k) Y[:, k]
        backward(X) = Lt (sign (x) X)[:, k]              = (A^(k))^T X[:, k]

    so one pass over the nnz responses serves all K - 1 binary matrices. ``offsets``
    (length K - 1) gives A^(k) - offsets[k] on the observed entries instead (the
    "observed" centring of Algorithm 1).

    Memory. The label-block products build (K n) x (K - 1) arrays, O(n K^2): fine for
    the usual K <= 20, but 800 MB at K = 1000 with 100 workers whatever the number of
    answers. Above :data:`BLOCK_BUDGET` elements (and above ``nnz + (n + m) K``) the
    products are taken entry by entry instead: column k of the result sums
    sign_k(c_e) x[i_e, k] over the answers e (task-major for ``backward``, worker-major
    for ``forward``), the K - 1 columns in chunks of at most ``BLOCK_BUDGET`` / nnz, so
    memory is O(nnz + (n + m) K) and time O(nnz K) per product. The path is chosen from
    (n, m, K, nnz) only, so a given data set always takes the same one; the two paths
    agree to round-off (different summation order), and every column is the same
    whatever the chunking.
    """

    def __init__(self, R: Responses, offsets: np.ndarray | None = None):
        n, m, K = R.n_workers, R.n_tasks, R.n_labels
        self.n, self.m, self.K = n, m, K
        indptr, workers, labels = R.task_major()
        # 32-bit indices where they fit: a quarter less memory traffic per product
        idx = np.int32 if max(K * n, R.nnz) < np.iinfo(np.int32).max else np.int64
        cols = np.multiply(labels, n, dtype=idx)          # (c - 1) n + i
        cols += workers
        cols -= n
        indptr = indptr.astype(idx, copy=False)
        # Task-major form only: Lt @ X gathers from the small (K n)-row X and writes its
        # output in order, and Lt.T @ Y (a CSC product) reads Y in order and scatters
        # into the small output; a worker-major Lf @ Y would gather rows of Y at random
        # (measured 7x slower at 10^7 responses). Column indices need not be sorted.
        self.Lt = sp.csr_array((np.ones(R.nnz), cols, indptr), shape=(m, K * n))
        self.LtT = self.Lt.T
        self.sign = binary_sign(np.arange(1, K + 1)[:, None], np.arange(1, K)[None, :])
        if offsets is not None:
            self.sign = self.sign - np.asarray(offsets, float)[None, :]
        nnz = R.nnz
        self.per_entry = _use_per_entry(n, m, K, nnz)
        if self.per_entry:
            # entry e (task-major order): label c_e, worker i_e, task j_e
            self._lab = labels.astype(np.intp) - 1
            self._wrk = workers.astype(np.intp)
            self._tsk = R.task_major_tasks().astype(np.intp)
            e = np.arange(nnz, dtype=idx)
            ones = np.ones(nnz)
            self._by_task = sp.csr_array((ones, e, indptr), shape=(m, nnz))
            # worker-major, entries of each worker in task order (stable sort)
            order = np.argsort(self._wrk, kind="stable").astype(idx)
            wptr = np.searchsorted(self._wrk[order], np.arange(n + 1)).astype(idx)
            self._by_worker = sp.csr_array((ones, order, wptr), shape=(n, nnz))
            self._chunk = max(1, min(K - 1, BLOCK_BUDGET // max(nnz, 1)))

    def _per_entry(self, M: np.ndarray, rows: np.ndarray, gather: np.ndarray,
                   sign: np.ndarray) -> np.ndarray:
        """Columns t of ``M`` (sum over entries of sign[c_e, t] M[gather_e, t]), chunked."""
        b = sign.shape[1]
        out = np.empty((rows.shape[0], b))
        for lo in range(0, b, self._chunk):
            hi = min(b, lo + self._chunk)
            V = M[gather, lo:hi] * sign[self._lab, lo:hi]
            out[:, lo:hi] = rows @ V
        return out

    def forward(self, Y: np.ndarray, ks: np.ndarray | None = None) -> np.ndarray:
        """(n, K-1): column k is A^(k) Y[:, k].

        With ``ks`` (indices into 0..K-2), Y has one column per entry of ``ks`` and so
        does the result (A^(ks[t]+1) Y[:, t]); every column is computed exactly as in the
        full product (the sparse kernels treat the columns independently).
        """
        sign = self.sign if ks is None else self.sign[:, ks]
        if self.per_entry:
            return self._per_entry(np.asarray(Y, float), self._by_worker, self._tsk, sign)
        Z = (self.LtT @ Y).reshape(self.K, self.n, sign.shape[1])
        return np.einsum("cnk,ck->nk", Z, sign)

    def backward(self, X: np.ndarray, ks: np.ndarray | None = None) -> np.ndarray:
        """(m, K-1): column k is (A^(k))^T X[:, k] (``ks``: as in :meth:`forward`)."""
        sign = self.sign if ks is None else self.sign[:, ks]
        if self.per_entry:
            return self._per_entry(np.asarray(X, float), self._by_task, self._wrk, sign)
        Xe = (sign[:, None, :] * X[None, :, :]).reshape(self.K * self.n, sign.shape[1])
        return self.Lt @ Xe

    def sq_norms(self, R: Responses) -> np.ndarray:
        """(K-1,): ||A^(k) - offsets[k] on the observed entries||_F^2 for every k."""
        counts = np.bincount(R.labels, minlength=self.K + 1)[1:].astype(float)
        return counts @ self.sign ** 2
