"""Worker reliabilities by maximum likelihood: a step 3 for Algorithm 2 beyond eq. (5).

Eq. (5) [`eqn:hatpi`] estimates p_i from the share of worker i's answers that fall in the
estimated pair {g_j, h_j}: a moment estimator that ignores which of the two labels the
answer was. Given q_j, eq. (1) [`eqn:A_dist`] says more, and the maximum-likelihood p_i uses
it. ``TopTwo2(reliability_estimator="mle")`` plugs this p_i into eq. (6); the default stays
eq. (5). The measurements that led here (the few-smart gap of TopTwo2 is the noise and bias
of eq. (5)'s p on spammers) are in ``docs/design_stage1.md``.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_length, check_probability_vector
from .mle import _check_top
from .responses import Responses, _FitView, as_responses

__all__ = ["estimate_reliability_mle", "MLE_STEPS", "MLE_RTOL"]

#: Safeguarded Newton steps of :func:`estimate_reliability_mle` (each a Newton step on the
#: score, or a bisection of the bracket where Newton would leave it): 2^-30 after the
#: bisections alone, and Newton converges quadratically near the maximiser.
MLE_STEPS = 30
#: ... stopping once no p moves by more than MLE_RTOL p in a step. Once converged, the
#: step can cycle between floats a few ulps apart (the score sums hundreds of terms), so
#: the stop is relative, far below what eq. (6)'s clipped weights can resolve.
MLE_RTOL = 1e-12


def estimate_reliability_mle(A2: Responses, top: np.ndarray, confusion: np.ndarray, *,
                             n_responses: np.ndarray | None = None,
                             n_labels: int | None = None) -> np.ndarray:
    """Worker reliabilities p_i by maximum likelihood under eq. (1), given the pairs and q.

    Beyond the paper. Eq. (5) is a moment estimator: it counts only whether an answer
    falls in the pair {g_j, h_j}. Eq. (1) says more: given (g_j, h_j) and q_j, worker i's
    answer to task j has probability

        P(A_ij = g_j) = p q_j + (1 - p)/K,  P(A_ij = h_j) = p (1 - q_j) + (1 - p)/K,
        P(A_ij = c) = (1 - p)/K for every other label c,

    and p_i maximises sum_j log P(A_ij) over the worker's answers. The log-likelihood is
    concave in p on [0, 1] (a sum of logs of affine functions of p), so its maximiser is
    where the score changes sign: 0 or 1 when the score does not change sign in between,
    else safeguarded Newton steps for all workers at once (one pass over the answers in
    the pair per step; the others enter as a count), at most ``MLE_STEPS``, stopping once no
    p moves by more than ``MLE_RTOL`` p (numpy only, no BLAS: the same bits on every
    machine for the same inputs). Measured against eq. (5) in ``docs/design_stage1.md``
    ("Where TopTwo2's remaining gap lives").

    Parameters
    ----------
    A2 : Responses
        The responses to score (all of A without sample splitting), or anything
        :func:`toptwo.as_responses` accepts.
    top : ndarray of shape (n_tasks, 2)
        (g_j, h_j) per task, labels 1..K (0 for a task without an estimate: its answers
        are not used).
    confusion : ndarray of shape (n_tasks,)
        q_j in [1/2, 1].
    n_responses : ndarray of shape (n_workers,), optional
        Responses per worker in the full data (non-negative integers); workers with none
        get NaN.
    n_labels : int, optional
        K, when ``A2`` is not a :class:`~toptwo.Responses` (as in :func:`toptwo.as_responses`;
        without it K is the largest label present).

    Returns
    -------
    p_hat : ndarray of shape (n_workers,)
        The maximiser in [0, 1]; NaN for a worker without an answer to a task that has an
        estimate. Where the likelihood does not depend on p at all (every answer has
        a_ij = 1/K, e.g. K = 4, q = 3/4 and only h answers) every p maximises it and 0 is
        returned.

    Examples
    --------
    With the true pairs and q (TopTwo2 passes its stage 1's instead):

    >>> import toptwo
    >>> from toptwo.reliability import estimate_reliability_mle
    >>> model = toptwo.TopTwoModel.random(30, 300, 4, rng=0)
    >>> A = model.sample(0.5, rng=1)
    >>> estimate_reliability_mle(A, model.top_two, model.confusion)[:4].round(2).tolist()
    [0.66, 0.33, 0.08, 0.02]
    >>> model.reliability[:4].round(2).tolist()
    [0.64, 0.27, 0.04, 0.02]
    """
    owner = "estimate_reliability_mle"
    if not isinstance(A2, _FitView):      # a fit's own responses have passed the gate
        A2 = as_responses(A2, n_labels, owner=owner)
    top = _check_top(top, A2, owner=owner)
    if top.shape[1] != 2:
        raise ValueError(f"`top` of {owner} must have 2 columns (the top-two model); got "
                         f"{top.shape[1]}.")
    q = check_probability_vector(confusion, "confusion", owner=owner, low=0.5, high=1.0,
                                 length=A2.n_tasks)
    K = A2.n_labels
    n = A2.n_workers
    w, t, c = A2.workers, A2.tasks, A2.labels
    if n_responses is not None:
        n_responses = np.asarray(n_responses)
        if n_responses.ndim != 1 or not np.issubdtype(n_responses.dtype, np.integer):
            raise TypeError(f"`n_responses` of {owner} must be a 1-D integer array (answers "
                            f"per worker); got dtype {n_responses.dtype}, shape "
                            f"{n_responses.shape}.")
        check_length(n_responses, "n_responses", owner=owner, length=n)
    g, h = top[:, 0].take(t), top[:, 1].take(t)
    used = g > 0                                      # tasks with an estimate
    # a_ij: P(A_ij) = 1/K + p (a_ij - 1/K), eq. (1): a = q_j for g_j, 1 - q_j for h_j, and
    # 0 elsewhere (also h_j when q_j = 1), where log P = log(1 - p) - log K needs only the
    # count
    q_t = q.take(t)
    is_g = c == g
    inside = is_g | ((c == h) & (q_t < 1.0))
    inside &= used
    w_in = w[inside].astype(np.intp)
    q_in = q_t[inside]
    d = np.where(is_g[inside], q_in, 1.0 - q_in)
    d -= 1.0 / K
    n_out = np.bincount(w[used & ~inside], minlength=n).astype(float)
    answered = np.bincount(w[used], minlength=n) > 0

    def score(p: np.ndarray, slope: bool):
        """d/dp of the log-likelihood (and its derivative): sum d/P - n_out/(1 - p)."""
        ratio = d / (p[w_in] * d + 1.0 / K)
        with np.errstate(divide="ignore"):            # n_out/(1 - p) = inf at p = 1
            out = np.divide(n_out, 1.0 - p, out=np.zeros(n), where=n_out > 0)
        f = np.bincount(w_in, weights=ratio, minlength=n) - out
        if not slope:
            return f
        ratio *= ratio
        return f, -np.bincount(w_in, weights=ratio, minlength=n) - out * out / np.maximum(n_out, 1)

    at0 = ~answered | (score(np.zeros(n), False) <= 0)   # maximiser at p = 0 (or no data)
    at1 = ~at0 & (n_out == 0) & (score(np.ones(n), False) >= 0)   # at p = 1
    # the boundary cases start (and stay) at their end: a bracket of width 0
    lo = np.where(at1, 1.0, 0.0)
    hi = np.where(at0, 0.0, 1.0)
    p = np.where(at0, 0.0, np.where(at1, 1.0, 0.5))
    for _ in range(MLE_STEPS):
        f, fp = score(p, True)
        up = f > 0                                    # the maximiser is above p
        lo = np.where(up, p, lo)
        hi = np.where(up, hi, p)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = p - f / fp
        # Newton inside the bracket (closed: a converged p stays), else bisect it
        new = np.where((newton >= lo) & (newton <= hi), newton, 0.5 * (lo + hi))
        moved = np.abs(new - p) > MLE_RTOL * p
        p = new
        if not moved.any():          # every p settled (a converged step may cycle in ulps)
            break
    p_hat = p
    p_hat[~answered] = np.nan
    if n_responses is not None:
        p_hat[n_responses == 0] = np.nan
    return p_hat
