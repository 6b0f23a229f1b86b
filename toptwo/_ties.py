"""Round-off bounds and tie rules: discrete decisions that never depend on round-off.

Private machinery behind :mod:`toptwo.spectral` and :mod:`toptwo.mle`. Exact ties
(two labels with equal Delta v, an entry of u that is zero in exact arithmetic) are
common in small or symmetric crowds; floating-point round-off breaks them differently
on different BLAS kernels. Values within a derived tolerance of each other are treated
as equal, and ties are broken by the label order, so every decision is the same on every
machine.
"""

from __future__ import annotations

import numpy as np



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


def _degenerate_gap(n: int, theta: float | np.ndarray) -> float | np.ndarray:
    """Smallest eigen-gap theta_1 - theta_2 of the Gram matrix at which u is determined.

    eigh returns u with residual ||r|| <= c n eps theta_1, hence (Davis-Kahan) an error
    of ||r|| / gap; below this gap that error could exceed ``U_ABS_TOL`` (16 n eps
    theta_1 / U_ABS_TOL, e.g. 3.6e-7 theta_1 for n = 1, 1.4e-5 theta_1 for n = 400), and
    an exactly repeated singular value (a symmetric component) is always below it.
    ``theta`` may be an array (one theta_1 per matrix of a batch).
    """
    return 16.0 * n * _EPS * np.maximum(theta, 0.0) / U_ABS_TOL


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


def _best_pairs_columns(A: np.ndarray, Bc: np.ndarray, tol: np.ndarray | float
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`best_pairs` on scores stored label-major: A[c] = Sa[:, c], shape (K, m).

    Column by column (K passes over the m rows): the same comparisons and sums as a
    row-wise argmax/partition, without reductions along the short axis.
    """
    K, m = A.shape
    tol = np.broadcast_to(np.asarray(tol, float), (m,))
    # largest Sb, its first column b1, and the largest Sb outside column b1
    first = Bc.max(axis=0)
    b1 = _first_true([Bc[c] == first for c in range(K)])
    at_b1 = b1 * m                                   # flat index of (b1[j], j)
    at_b1 += np.arange(m)
    rest = Bc.copy()
    rest.reshape(-1)[at_b1] = -np.inf
    second = rest.max(axis=0) if K > 1 else rest[0]
    # best pair starting at a: Sa[a] + the largest Sb outside column a
    pair_best = A + first
    pair_best.reshape(-1)[at_b1] = A.reshape(-1).take(at_b1) + second
    floor = pair_best.max(axis=0)
    floor -= tol
    a = _first_true([pair_best[c] >= floor for c in range(K)])   # smallest a within tol
    sa = _select_rows(A, a)
    b = _first_true([(sa + Bc[c] >= floor) & (a != c) for c in range(K)])
    return a, b, sa + _select_rows(Bc, b)


def _clean(u: np.ndarray) -> np.ndarray:
    """Entries within ``U_ABS_TOL`` of 0 are 0 in exact arithmetic as far as the solvers
    can tell: set them to exactly 0 (so they neither vote in the sign rule nor add noise
    to v^(k))."""
    out = np.array(u, dtype=float, copy=True)
    out[np.abs(out) <= U_ABS_TOL] = 0.0
    return out
