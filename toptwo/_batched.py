r"""Algorithm 1 steps 1-3 on many small connected components at once.

Private machinery behind :func:`toptwo.spectral.spectral_estimate`. Stage 1 runs
Algorithm 1 on every connected component of the worker-task graph
(:mod:`toptwo._components`), which for 10^5 small components is a Python loop of 10^5
iterations (design notes, "Disconnected responses"). Here every component with at most
``BATCH_MAX_WORKERS`` workers goes through one vectorised computation instead, the same
arithmetic in the same order as the per-component path (:func:`toptwo.spectral.
_spectral_block` on the component's dense n_c x n_c Gram matrix):

* Gram matrices. Entry (i, i') of X^(k) X^(k)T sums x_ij^(k) x_i'j^(k) over the tasks
  j in increasing order, as scipy's sparse product does; here every task emits its d_j^2
  worker pairs (task by task) and ``np.bincount`` adds the products in that order, so
  each entry is the same floating-point sum. The stacked Gram matrix sum_k X^(k) X^(k)T
  adds the K - 1 matrices in the order k = 1..K-1, as :func:`toptwo._pooled._gram_dense`.
* Eigenvectors: ``np.linalg.eigh`` on the stack of all Gram matrices of one size n_c
  (the same LAPACK routine, one matrix after the other), the same degenerate-gap rule.
* Decisions: idle workers, then step 2's rules through the very functions of the
  per-component path (:func:`toptwo._step2.signed_left` and :func:`toptwo._step2.trim`,
  which work on a stack of vectors), on all components of one size at once; the
  degenerate-gap rule is :func:`toptwo._ties._degenerate_gap` and the error bound of v
  :func:`toptwo._ties._v_error_bound`, as there.
* Step 3 for all of them in one product (:class:`toptwo.binary.LabelBlocks` on the
  responses of C in these components): task j's v_j^(k) sums over its own responses in
  the same order, then is divided by 2 s' of its component.

Time is O(sum_j d_j^2 (K - 1)) (the per-component path's too) plus one eigh per
component (per k for ``"per_k"`` and ``"averaged"``); the temporaries (worker pairs,
Gram matrices) are processed in batches of at most ``BATCH_BUDGET`` elements, and the
outputs are the (n + m)(K - 1) arrays of stage 1: with n_c <= ``BATCH_MAX_WORKERS``
(d_j <= n_c) that is O(nnz K) time and O(nnz + (n + m) K) memory whatever the number
of components. Tested equal to the per-component
loop (labels exactly, numbers to round-off) in ``tests/test_components_batched.py``,
which also changes each rule in its one definition and checks that both paths follow.
"""

from __future__ import annotations

import numpy as np

from ._step2 import signed_left, trim
from ._ties import _degenerate_gap, _v_error_bound
from .binary import LabelBlocks, binary_sign, centring_shifts
from .responses import Responses

#: Components with at most this many workers (and at least two) are batched; larger ones
#: cost far more than the loop's overhead and keep the per-component path. 0 disables
#: batching (the per-component loop for every component: the reference in the tests).
BATCH_MAX_WORKERS = 64
#: Elements of the temporaries of one batch (worker pairs, Gram matrices x (K - 1)); a
#: component whose own pairs exceed it keeps the per-component path.
BATCH_BUDGET = 2**21


def pair_counts(B: Responses, tcomp: np.ndarray, n_comp: int) -> np.ndarray:
    """sum_j d_j^2 over the tasks of every component (d_j: responses of task j in B)."""
    d = B.task_counts()
    has = (d > 0) & (tcomp >= 0)
    return np.bincount(tcomp[has], weights=d[has].astype(float) ** 2, minlength=n_comp)


def _leading(G: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Top eigenvector and sigma_1 of every n x n matrix in G (shape (..., n, n)), with
    the degenerate-gap rule of ``_leading_left`` / ``stacked_leading_left``."""
    w, V = np.linalg.eigh(G)
    top = w[..., -1]
    sigma = np.sqrt(np.maximum(top, 0.0))
    u = V[..., :, -1].copy()
    u[(top - w[..., -2]) <= _degenerate_gap(n, top)] = 0.0
    return u, sigma



def small_components(B: Responses, C: Responses, comps: np.ndarray, wcomp: np.ndarray,
                     tcomp: np.ndarray, w_loc: np.ndarray, w_bounds: tuple, nw_c: np.ndarray,
                     nt_c: np.ndarray, nC_c: np.ndarray, *, eta: float, sign_rule: str,
                     left_vector: str, U: np.ndarray, Ut: np.ndarray, v: np.ndarray,
                     v_err: np.ndarray, report: int = -1) -> np.ndarray | None:
    """Steps 1-3 of Algorithm 1 on the components ``comps`` ("observed" centring, the
    dense Gram path), written into the global arrays U, Ut (K-1, n), v (m, K-1) and
    v_err (m,). Returns the singular values of component ``report`` if it is among them.
    """
    K = B.n_labels
    off = centring_shifts(K)                                 # (K - 2k)/K
    sign = binary_sign(np.arange(1, K + 1)[:, None], np.arange(1, K)[None, :]) - off
    order_w, bounds_w = w_bounds
    idle = B.worker_counts() == 0
    # components in processing order: by size n_c, then by index
    comps = comps[np.lexsort((comps, nw_c[comps]))]
    rank = np.full(nw_c.size, -1, dtype=np.int64)
    rank[comps] = np.arange(comps.size)
    # B's responses of these components, task-major within each component, components
    # in processing order
    indptr, workers, labels = B.task_major()
    etask = B.task_major_tasks()
    erank = rank[np.maximum(tcomp[etask], 0)]
    erank[tcomp[etask] < 0] = -1
    sel = np.flatnonzero(erank >= 0)
    sel = sel[np.argsort(erank[sel], kind="stable")]
    e_task, e_lab = etask[sel], labels[sel].astype(np.intp) - 1
    e_wl = w_loc[workers[sel]]
    e_bounds = np.searchsorted(erank[sel], np.arange(comps.size + 1))
    d_task = B.task_counts()
    e_deg = d_task[e_task].astype(np.int64)
    e_pairs = np.zeros(sel.size + 1, dtype=np.int64)
    np.cumsum(e_deg, out=e_pairs[1:])
    sv_report = None
    per_k = left_vector in ("per_k", "averaged")          # one Gram matrix per k
    sizes = nw_c[comps]
    lo = 0
    while lo < comps.size:
        n_c = int(sizes[lo])
        # one batch: components of size n_c, temporaries within BATCH_BUDGET
        per_comp = n_c * n_c * ((K - 1) if per_k else 1)
        hi = int(np.searchsorted(sizes, n_c, side="right"))
        hi = min(hi, lo + max(1, BATCH_BUDGET // per_comp))
        p_end = np.searchsorted(e_pairs[e_bounds], e_pairs[e_bounds[lo]] + BATCH_BUDGET,
                                side="right") - 1
        hi = max(lo + 1, min(hi, int(p_end)))
        sv = _batch(comps[lo:hi], lo, n_c, e_bounds, e_task, e_lab, e_wl, e_deg, sign,
                    order_w, bounds_w, idle, eta, sign_rule, left_vector, U, Ut)
        if report >= 0 and lo <= rank[report] < hi:
            sv_report = sv[int(rank[report]) - lo]
        lo = hi
    # step 3: v^(k) = (Y^(k))^T u~^(k) / (2 s') for all these tasks in one product
    small = np.zeros(nw_c.size, dtype=bool)
    small[comps] = True
    cw = wcomp[C.workers]
    Cs = C.subset(small[np.maximum(cw, 0)] & (cw >= 0))
    tasks = np.flatnonzero(small[np.maximum(tcomp, 0)] & (tcomp >= 0))
    sy = nC_c / (nw_c * nt_c)                                # s' of C per component
    sy_t = sy[tcomp[tasks]]
    V = LabelBlocks(Cs, off).backward(Ut.T)
    v[tasks] = V[tasks] / (2.0 * sy_t)[:, None]
    v_err[tasks] = _v_error_bound(Cs.task_counts()[tasks], sy_t)
    return sv_report


def _batch(comps, lo, n_c, e_bounds, e_task, e_lab, e_wl, e_deg, sign, order_w, bounds_w,
           idle, eta, sign_rule, left_vector, U, Ut) -> np.ndarray:
    """Steps 1-2 on the components ``comps`` (all with n_c workers; ``lo``: position of
    the first in the edge bounds): u and u~ into U and Ut; returns sigma_1, (nb, K-1)."""
    nb = comps.size
    Km1 = sign.shape[1]
    a, b = int(e_bounds[lo]), int(e_bounds[lo + nb])
    t, lab, wl, deg = e_task[a:b], e_lab[a:b], e_wl[a:b], e_deg[a:b]
    cpos = np.repeat(np.arange(nb), np.diff(e_bounds[lo:lo + nb + 1]))
    # the worker pairs of every task, task by task: edge e pairs with every edge of its
    # task (including itself); the task's edges are consecutive
    ne = t.size
    start = np.ones(ne, dtype=bool)
    start[1:] = t[1:] != t[:-1]
    first_of = np.maximum.accumulate(np.where(start, np.arange(ne), 0))
    first = np.repeat(np.arange(ne), deg)
    base = np.zeros(ne + 1, dtype=np.int64)
    np.cumsum(deg, out=base[1:])
    second = np.arange(first.size) - np.repeat(base[:-1], deg) + np.repeat(first_of, deg)
    nn = n_c * n_c
    slot = cpos[first] * nn + wl[first] * n_c + wl[second]
    la, lb = lab[first], lab[second]
    slots = nb * nn
    # global indices of the workers of every component (increasing = local order)
    W = order_w[bounds_w[comps][:, None] + np.arange(n_c)[None, :]]       # (nb, n_c)
    idle_w = idle[W]
    if left_vector == "stacked":
        G = np.zeros(slots)
        for k in range(Km1):
            col = sign[:, k]
            G += np.bincount(slot, weights=col[la] * col[lb], minlength=slots)
        u, sigma = _leading(G.reshape(nb, n_c, n_c), n_c)               # (nb, n_c)
        u[idle_w] = 0.0
        sv = np.repeat(sigma[:, None], Km1, axis=1)
    else:                                                   # one Gram matrix per k
        G = np.empty((Km1, slots))
        for k in range(Km1):
            col = sign[:, k]
            G[k] = np.bincount(slot, weights=col[la] * col[lb], minlength=slots)
        u, sigma = _leading(G.reshape(Km1, nb, n_c, n_c), n_c)          # (K-1, nb, n_c)
        u[:, idle_w] = 0.0
        sv = sigma.T                                                    # (nb, K-1)
    # step 2's rules, the per-component path's functions on every component at once
    u = signed_left(u, left_vector, sign_rule)
    ut = trim(u, eta, n_c)
    cols = W.ravel()
    if left_vector == "per_k":
        U[:, cols] = u.reshape(Km1, -1)
        Ut[:, cols] = ut.reshape(Km1, -1)
    else:
        U[:, cols] = u.reshape(-1)[None, :]
        Ut[:, cols] = ut.reshape(-1)[None, :]
    return sv
