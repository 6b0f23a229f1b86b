"""Connected components of the worker-task graph for stage 1.

Private machinery behind :func:`toptwo.spectral.spectral_estimate`. Algorithm 1 is
applied to each connected component of the bipartite graph of responses separately:
tasks in different components share no worker, so their vectors u^(k) are unrelated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np
import scipy.sparse as sp

from ._step2 import signed_left, trim
from .binary import binary_sign, centring_shifts
from .responses import Responses, _FitView
from . import _batched
from ._chunks import _task_chunks
from ._linalg import _single_row_norms
from ._ties import _v_error_bound



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
    off = centring_shifts(K)
    signed = binary_sign(lab[:, None], np.arange(1, K)[None, :]) - off[None, :]
    v_err = _v_error_bound(np.ones(tasks.size), sy_c[comp])
    all_tasks = np.flatnonzero(np.isin(tcomp, comp_ids) & (tcomp >= 0))
    # v per unit of u~: step 3 multiplies by the worker's u~ (``fill_single_workers``)
    return dict(workers=workers, tasks=tasks, signed=signed, scale=2.0 * sy_c[comp],
                w_of=np.searchsorted(workers, C.workers[mask]), v_err=v_err,
                all_tasks=all_tasks)


#: One-worker components are done all at once (``_single_worker_blocks``); False sends
#: them through the per-component path (the reference in the tests).
SINGLE_WORKERS_AT_ONCE = True


@dataclass
class Part:
    """One part of the data that Algorithm 1 runs on (a connected component, or all)."""

    B: Responses
    C: Responses
    size: int                       #: n_c m_c, the denominator of s' = nnz / (n_c m_c)
    n_eff: int | None               #: n of the trimming threshold (None: rows of B)
    workers: np.ndarray | None      #: global indices of its workers (None: all)
    tasks: np.ndarray | None        #: global indices of its tasks (None: all)
    reports: bool                   #: the largest part reports sigma_1 and s'


class Stage1Parts:
    """The parts of (B, C) that stage 1 runs on separately; iterate for the parts.

    ``centering="paper"`` couples every entry: one part, the whole matrix. Otherwise
    one part per connected component of the worker-task graph with responses in B and C
    (the data themselves when connected); one-worker components (u = (1), v_j^(k) the
    worker's centred answer / (2 s')) are done all at once by
    :meth:`fill_single_workers`. With ``batch`` (the dense Gram path), components of 2 to
    ``toptwo._batched.BATCH_MAX_WORKERS`` workers are done all at once by
    :meth:`fill_small_components` (the same arithmetic as the per-component path).
    ``groups`` is every task's component (-1: no stage-1 estimate); ``sv``, ``sx``,
    ``sy`` the values reported when the largest part is a one-worker component (NaN
    otherwise until a part reports).
    """

    def __init__(self, B: Responses, C: Responses, centering: str,
                 batch: bool = True) -> None:
        n, m, K = B.n_workers, B.n_tasks, B.n_labels
        self.groups = np.full(m, -1, dtype=np.int64)
        self.sv = np.full(K - 1, np.nan)
        self.sx = self.sy = float("nan")
        self._singles: dict | None = None
        self._small: dict | None = None
        self._parts: list[Part] = []
        if centering == "paper":
            self._parts = [Part(B, C, n * m, None, None, None, True)]
            self.groups[C.task_counts() > 0] = 0
            self.sx, self.sy = B.nnz / (n * m), C.nnz / (n * m)
            return
        n_comp, wcomp, tcomp = _components(B, C)
        if n_comp == 1:
            # one component: the data themselves (idle rows and columns are zero in
            # X^(k) and change nothing; the caches of B and C are kept); s' and the
            # trimming threshold count the active workers and tasks only
            nw, nt = int((wcomp >= 0).sum()), int((tcomp >= 0).sum())
            if B.nnz and C.nnz:
                self._parts = [Part(B, C, nw * nt, nw, None, None, True)]
                self.groups[tcomp >= 0] = 0
            return
        w_loc, w_bounds = _local_index(wcomp, n_comp)
        t_loc, t_bounds = _local_index(tcomp, n_comp)
        nw_c, nt_c = np.diff(w_bounds[1]), np.diff(t_bounds[1])
        B_parts = _edges_by_component(B, wcomp, n_comp)
        C_parts = B_parts if C is B else _edges_by_component(C, wcomp, n_comp)
        nB_c, nC_c = np.diff(B_parts[1]), np.diff(C_parts[1])
        has_u = (nB_c > 0) & (nC_c > 0)
        singles = (nw_c == 1) & has_u & SINGLE_WORKERS_AT_ONCE
        # the component with the most responses in B reports sigma_1 and s' (the first
        # such one on a tie)
        best = int(np.argmax(np.where(has_u, nB_c, -1))) if has_u.any() else -1
        small = np.zeros(n_comp, dtype=bool)
        if batch and _batched.BATCH_MAX_WORKERS >= 2:
            small = (has_u & (nw_c >= 2) & (nw_c <= _batched.BATCH_MAX_WORKERS)
                     & (_batched.pair_counts(B, tcomp, n_comp) <= _batched.BATCH_BUDGET))
        if small.any():
            comps = np.flatnonzero(small)
            self._small = dict(B=B, C=C, comps=comps, wcomp=wcomp, tcomp=tcomp,
                               w_loc=w_loc, w_bounds=w_bounds, nw_c=nw_c, nt_c=nt_c,
                               nB_c=nB_c, nC_c=nC_c,
                               best=best if best >= 0 and small[best] else -1)
            self.groups[np.isin(tcomp, comps)] = tcomp[np.isin(tcomp, comps)]
        for c in (int(x) for x in np.flatnonzero(~singles & has_u & ~small)):
            w_idx = w_bounds[0][w_bounds[1][c]:w_bounds[1][c + 1]]
            t_idx = t_bounds[0][t_bounds[1][c]:t_bounds[1][c + 1]]
            shape = (w_idx.size, t_idx.size)
            Bc = _component_responses(B, B_parts, c, w_loc, t_loc, shape)
            Cc = Bc if C is B else _component_responses(C, C_parts, c, w_loc, t_loc, shape)
            self._parts.append(Part(Bc, Cc, shape[0] * shape[1], shape[0], w_idx, t_idx,
                                    c == best))
            self.groups[t_idx] = c
        if singles.any():
            self._singles = _single_worker_blocks(C, wcomp, tcomp, singles, nC_c, w_bounds)
            self.groups[self._singles["all_tasks"]] = tcomp[self._singles["all_tasks"]]
            if best >= 0 and singles[best]:
                sel = _component_responses(B, B_parts, best, w_loc, t_loc,
                                           (1, int(nt_c[best])))
                self.sv = _single_row_norms(sel, centring_shifts(K), np.zeros(K - 1))
                self.sx, self.sy = nB_c[best] / nt_c[best], nC_c[best] / nt_c[best]

    def __iter__(self) -> Iterator[Part]:
        return iter(self._parts)

    def fill_small_components(self, U: np.ndarray, Ut: np.ndarray, v: np.ndarray,
                              v_err: np.ndarray, *, eta: float, sign_rule: str,
                              left_vector: str) -> tuple | None:
        """Steps 1-3 of every batched component, written into the global arrays.

        Returns (sigma_1, s' of B, s' of C) when the largest part is one of them.
        """
        if self._small is None:
            return None
        d = self._small
        sv = _batched.small_components(
            d["B"], d["C"], d["comps"], d["wcomp"], d["tcomp"], d["w_loc"], d["w_bounds"],
            d["nw_c"], d["nt_c"], d["nC_c"], eta=eta, sign_rule=sign_rule,
            left_vector=left_vector, U=U, Ut=Ut, v=v, v_err=v_err, report=d["best"])
        if sv is None:
            return None
        c = d["best"]
        size = int(d["nw_c"][c]) * int(d["nt_c"][c])
        return sv, int(d["nB_c"][c]) / size, int(d["nC_c"][c]) / size

    def fill_single_workers(self, U: np.ndarray, Ut: np.ndarray, v: np.ndarray,
                            v_err: np.ndarray, *, eta: float, sign_rule: str,
                            left_vector: str) -> None:
        """Steps 2-3 of every one-worker component, written into the global arrays.

        u = (1) up to sign (the 1 x m_c matrix's left singular vector), then step 2's
        rules (:func:`toptwo._step2.signed_left`, trimming at n = 1) and step 3 with the
        worker's u~.
        """
        if self._singles is None:
            return
        blk = self._singles
        K, n_s = U.shape[0] + 1, blk["workers"].size
        shape = (n_s, 1) if left_vector == "stacked" else (K - 1, n_s, 1)
        u = np.broadcast_to(signed_left(np.ones(shape), left_vector, sign_rule),
                            (K - 1, n_s, 1))
        ut = trim(u, eta, 1)
        U[:, blk["workers"]] = u[..., 0]
        Ut[:, blk["workers"]] = ut[..., 0]
        v[blk["tasks"]] = blk["signed"] * ut[:, blk["w_of"], 0].T / blk["scale"][:, None]
        v_err[blk["tasks"]] = blk["v_err"]


def stage1_parts(B: Responses, C: Responses, centering: str, batch: bool = True
                 ) -> Stage1Parts:
    """The parts of (B, C) that Algorithm 1 runs on (see :class:`Stage1Parts`)."""
    return Stage1Parts(B, C, centering, batch)
