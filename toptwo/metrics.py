"""Error rates as reported in the paper (Sec. 6.1 and Appendix D), and the sin-theta
distance between an estimated and a true vector (Lemma [`lem:sin_uk_p`])."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["top_two_errors", "top_t_errors", "sin_theta"]


def top_two_errors(estimate: Any, truth: Any) -> dict[str, float]:
    """Empirical error rates of estimated top-two answers.

    ``g``: (1/m) sum_j 1(g_hat_j != g_j); ``h``: likewise for h; ``pair``:
    (1/m) sum_j 1((g_hat_j, h_hat_j) != (g_j, h_j)) -- the three quantities plotted in
    the paper's Fig. 1 and Appendix D.

    Parameters
    ----------
    estimate, truth : array-like of int, shape (n_tasks, 2)
        Columns (g, h). Tasks whose true g is 0 (unknown truth, as in real datasets)
        are left out of all three averages; a true h of 0 leaves the task out of the
        ``h`` and ``pair`` averages only. An estimate of 0 (no response) counts as wrong.

    Returns
    -------
    dict with keys "g", "h", "pair" (floats; NaN when no task is scored, and "h"/"pair"
    NaN when either input has a single column), and "n_scored".
    """
    est = np.asarray(estimate)
    tru = np.asarray(truth)
    if est.ndim == 1:
        est = est[:, None]
    if tru.ndim == 1:
        tru = tru[:, None]
    if est.shape[0] != tru.shape[0]:
        raise ValueError(f"top_two_errors: estimate has {est.shape[0]} tasks, truth has "
                         f"{tru.shape[0]}; they must describe the same tasks.")
    if not (np.issubdtype(est.dtype, np.integer) and np.issubdtype(tru.dtype, np.integer)):
        raise TypeError(f"top_two_errors needs integer labels; got dtypes {est.dtype} and "
                        f"{tru.dtype}.")
    gmask = tru[:, 0] > 0
    out = {"g": float(np.mean(est[gmask, 0] != tru[gmask, 0])) if gmask.any() else float("nan")}
    out["h"] = out["pair"] = float("nan")        # unless both give a second column
    if est.shape[1] >= 2 and tru.shape[1] >= 2:
        hmask = gmask & (tru[:, 1] > 0)
        if hmask.any():
            out["h"] = float(np.mean(est[hmask, 1] != tru[hmask, 1]))
            out["pair"] = float(np.mean((est[hmask, 0] != tru[hmask, 0])
                                        | (est[hmask, 1] != tru[hmask, 1])))
    out["n_scored"] = int(gmask.sum())
    return out


def top_t_errors(estimate: Any, truth: Any) -> dict[str, Any]:
    """Error rates for ordered top-T answers (Appendix `subsec:top_T`).

    Parameters
    ----------
    estimate, truth : int arrays of shape (n_tasks, T)
        Ordered answers (column t = the t-th plausible answer g_{j,t+1}).

    Returns
    -------
    dict with ``ordered`` (fraction of tasks whose whole ordered tuple is wrong),
    ``set`` (fraction whose unordered set of T answers is wrong) and ``per_position``
    (ndarray (T,), error of each column).
    """
    est = np.asarray(estimate)
    tru = np.asarray(truth)
    if est.ndim != 2 or est.shape != tru.shape:
        raise ValueError(f"top_t_errors: estimate and truth must both have shape "
                         f"(n_tasks, T); got {est.shape} and {tru.shape} instead.")
    if not (np.issubdtype(est.dtype, np.integer) and np.issubdtype(tru.dtype, np.integer)):
        raise TypeError(f"top_t_errors needs integer labels; got dtypes {est.dtype} and "
                        f"{tru.dtype} instead.")
    wrong = est != tru
    same_set = (np.sort(est, axis=1) == np.sort(tru, axis=1)).all(axis=1)
    return {"ordered": float(wrong.any(axis=1).mean()), "set": float((~same_set).mean()),
            "per_position": wrong.mean(axis=0)}


def sin_theta(a: Any, b: Any) -> float:
    """sin of the angle between vectors a and b: sqrt(1 - cos^2), sign-blind.

    sin theta(u, p*) is the distance measure of Lemma [`lem:sin_uk_p`] and of Wedin's
    sin-theta theorem; it does not depend on the sign or the norm of either vector.
    """
    owner = "sin_theta"
    av = np.asarray(a, dtype=float).ravel()
    bv = np.asarray(b, dtype=float).ravel()
    if av.shape != bv.shape:
        raise ValueError(f"a and b of {owner} must have the same length; got {av.shape[0]} "
                         f"and {bv.shape[0]} instead.")
    na, nb = np.linalg.norm(av), np.linalg.norm(bv)
    if na == 0 or nb == 0:
        raise ValueError(f"{owner} needs two nonzero vectors; got norms {na!r} and {nb!r} "
                         f"instead.")
    ua, ub = av / na, bv / nb
    # ||ua - (ua . ub) ub||: accurate for small angles, unlike sqrt(1 - cos^2).
    return min(1.0, float(np.linalg.norm(ua - (ua @ ub) * ub)))
