"""Chunked passes over tasks: Algorithm 1's steps 4-5 in bounded memory.

Private machinery behind :mod:`toptwo.spectral` and :mod:`toptwo.mle`: the same
computations as the whole-array versions, processed a block of tasks at a time so that
no (m, K) temporary of a large input is held at once. Tested equal, bit for bit, to the
whole-array versions.
"""

from __future__ import annotations

import numpy as np

from ._ties import _select_rows, _smallest_columns



#: Responses per chunk of the chunked passes over task-major data (cache-sized
#: temporaries instead of arrays of the size of the data).
CHUNK_RESPONSES = 1 << 17


def _task_chunks(indptr: np.ndarray, size: int | None = None, first: int | None = None
                 ) -> list[tuple[int, int, int, int]]:
    """(lo, hi, e0, e1): consecutive task ranges [lo, hi) holding about ``size``
    responses each (default ``CHUNK_RESPONSES``, read at call time; the first range about
    ``first``), and their response range [e0, e1) in task-major order."""
    if size is None:
        size = CHUNK_RESPONSES
    m = indptr.size - 1
    nnz = int(indptr[-1])
    start = size if first is None else first
    cuts = np.searchsorted(indptr, np.arange(start, nnz, size), side="right")
    bounds = np.unique(np.concatenate(([0], cuts, [m]))).tolist()
    return [(lo, hi, int(indptr[lo]), int(indptr[hi]))
            for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]


#: Tasks per chunk of the row-local steps of eq. (3) (cache-sized temporaries).
TASK_CHUNK = 1 << 15


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
        mass = []                             # top-t masses (a loop: one visit to _ties)
        for t in range(n_top):
            mass.append(_select_rows(cols, oc[:, t]))
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
