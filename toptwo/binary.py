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
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from ._validation import check_int
from .responses import Responses, as_responses

__all__ = ["to_binary", "binary_stack", "from_binary"]


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


def _binary_csr(R: Responses, k: int) -> sp.csr_array:
    base = R.tocsr()
    data = np.where(base.data > k, 1.0, -1.0)
    return sp.csr_array((data, base.indices, base.indptr), shape=R.shape)
