"""Sample splitting: Algorithm 2 step 1 (A^1, A^2) and Algorithm 1 step 1 (B, C).

:func:`split_entries` is re-exported by :mod:`toptwo.spectral` and :mod:`toptwo`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .responses import Responses, _FitView

__all__ = ["split_entries"]


def split_entries(R: Responses, rate: float, rng: np.random.Generator
                  ) -> tuple[Responses, Responses]:
    """Split the observed entries: each goes to the first part with probability ``rate``.

    This is A o S and A o (1 - S) with S_ij ~ Bernoulli(rate) i.i.d. (Alg. 2 step 1;
    Alg. 1 step 1 with rate 1/2). Unobserved entries are unaffected either way, so only
    the nnz observed entries need a draw: ``rng.random(nnz)``, taken by the entries in
    the order of their (worker id, task id) -- the ids' sorted order where ``R`` carries
    ids (``worker_ids`` / ``task_ids``, e.g. from a CSV file or a DataFrame), else the
    row and column positions. So the split of an entry does not depend on the order of
    the input rows, nor on the numbering of ids. Each part keeps its derived arrays (CSR
    form, task-major order, counts) for as long as it is used.

    Examples
    --------
    >>> import numpy as np
    >>> R = Responses.from_triples(["w2", "w1", "w1"], ["t1", "t1", "t2"], [1, 2, 3])
    >>> B, C = split_entries(R, 0.5, np.random.default_rng(0))
    >>> B.nnz + C.nnz
    3
    """
    draw = rng.random(R.nnz)
    order = _canonical_entry_order(R)
    if order is not None:                  # the draws go to the entries in id order
        ordered = np.empty_like(draw)
        ordered[order] = draw
        draw = ordered
    mask = draw < rate
    return _FitView(R.subset(mask)), _FitView(R.subset(~mask))


def _id_ranks(ids: Any, n: int) -> np.ndarray | None:
    """Rank of every id in the sorted order of the ids (None: no ids, or already sorted)."""
    if ids is None:
        return None
    arr = np.asarray(ids)
    try:
        _, rank = np.unique(arr, return_inverse=True)
    except TypeError:                      # ids of mixed types: order by type, then repr
        keys = np.array([f"{type(x).__name__}:{x!r}" for x in arr.tolist()])
        _, rank = np.unique(keys, return_inverse=True)
    rank = rank.reshape(-1).astype(np.int64)
    if rank.size != n or np.array_equal(rank, np.arange(n)):
        return None
    return rank


def _canonical_entry_order(R: Responses) -> np.ndarray | None:
    """Entries sorted by (worker id rank, task id rank); None when that is the stored
    order (no ids, or ids already in sorted order)."""
    wr = _id_ranks(R.worker_ids, R.n_workers)
    tr = _id_ranks(R.task_ids, R.n_tasks)
    if wr is None and tr is None:
        return None
    w = R.workers if wr is None else wr[R.workers]
    t = R.tasks if tr is None else tr[R.tasks]
    return np.lexsort((t, w))
