"""Worker reliabilities, step 3 of Algorithm 2: eq. (5) and two alternatives.

Eq. (5) [`eqn:hatpi`] (:func:`estimate_reliability`, ``reliability_estimator="moment"``)
estimates p_i from the share of worker i's answers that fall in the estimated pair
{g_j, h_j}::

    p_i = K/(K-2) * ( #{j : A2_ij in {g_j, h_j}} / (m s (1 - s_1)) - 2/K )
 Without sample splitting that pair was estimated from the same
answers, so spammers agree with it more often than chance (the few-smart gap of TopTwo2 is
the noise and bias of eq. (5)'s p on spammers, ``docs/design_stage1.md``).

* :func:`estimate_reliability_loo`, TopTwo2's default (``reliability_estimator=
  "leave_one_out"``): eq. (5) with each answer scored against the pair stage 1 gives its task
  without that answer, corrected for how often that pair is right;
* :func:`estimate_reliability_mle` (``reliability_estimator="mle"``): given q_j, eq. (1)
  [`eqn:A_dist`] also tells g-answers from h-answers, and the maximum-likelihood p_i uses
  that (eq. (5) is a moment estimator that ignores it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _chunks as _chunks_mod
from ._chunks import _task_chunks
from ._ties import _select_rows, _smallest_columns
from ._validation import check_choice, check_length, check_probability_vector
from .binary import binary_sign, centring_shifts
from .responses import Responses, _FitView, as_responses
from ._result import SpectralResult

__all__ = ["estimate_reliability", "estimate_reliability_mle", "estimate_reliability_loo",
           "MAX_RELIABILITY", "MIN_RELIABILITY", "MLE_STEPS", "MLE_RTOL",
           "CHANCE_BITS"]

#: p_hat is clipped to [MIN_RELIABILITY, MAX_RELIABILITY] before eq. (6): the upper end
#: keeps log(1 - p) finite; the lower end (instead of 0) keeps every answer's weight
#: positive, so a task whose workers all look like spammers falls back to a weighted
#: vote instead of an all-zero score (which left (g, h) to the tie rule).
MAX_RELIABILITY = 0.99
MIN_RELIABILITY = 0.05
#: Safeguarded Newton steps of :func:`estimate_reliability_mle` (each a Newton step on the
#: score, or a bisection of the bracket where Newton would leave it): 2^-30 after the
#: bisections alone, and Newton converges quadratically near the maximiser.
MLE_STEPS = 30
#: ... stopping once no p moves by more than MLE_RTOL p in a step. Once converged, the
#: step can cycle between floats a few ulps apart (the score sums hundreds of terms), so
#: the stop is relative, far below what eq. (6)'s clipped weights can resolve.
MLE_RTOL = 1e-12
#: :func:`estimate_reliability_loo` adds the excess chances c_ij - T/K on a grid of
#: 2^-CHANCE_BITS (an error of 2^-33 per answer, none where c_ij is clipped to T/K), as
#: integers: the same sum in any order of the answers.
CHANCE_BITS = 32


def _check_top(top: Any, R: Responses, *, owner: str) -> np.ndarray:
    """(n_tasks, T) integer labels in 0..K (0 = no estimate), 2 <= T < K."""
    arr = np.asarray(top)
    if arr.ndim != 2 or arr.shape[0] != R.n_tasks or not 2 <= arr.shape[1] < R.n_labels:
        raise ValueError(f"`top` of {owner} must have shape (n_tasks, T) = ({R.n_tasks}, T) "
                         f"with 2 <= T < K={R.n_labels}; got shape {arr.shape} instead.")
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"`top` of {owner} must hold integer labels; got dtype {arr.dtype} "
                        f"instead.")
    bad = (arr < 0) | (arr > R.n_labels)
    if bad.any():
        j, t = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"`top` of {owner} must hold labels in 1..{R.n_labels} (0 for no "
                         f"estimate); found {int(arr[j, t])} at task {j}, column {t}.")
    # a row is T distinct labels (an ordered pair or T-tuple, a != b) or all 0
    ordered = np.sort(arr, axis=1)
    some = ordered[:, -1] > 0
    bad_row = some & ((ordered[:, 0] == 0) | (ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
    if bad_row.any():
        j = int(np.argmax(bad_row))
        raise ValueError(f"`top` of {owner} must hold {arr.shape[1]} distinct labels per task "
                         f"(or all 0 for no estimate); task {j} has "
                         f"{[int(v) for v in arr[j]]}.")
    return arr


def _check_confusion(confusion: Any, R: Responses, *, owner: str) -> np.ndarray:
    """q of shape (n_tasks,) or top-T weights of shape (n_tasks, T), 2 <= T < K, in [0, 1]."""
    W = np.asarray(confusion, float)
    m, K = R.n_tasks, R.n_labels
    if not (W.shape == (m,) or (W.ndim == 2 and W.shape[0] == m and 2 <= W.shape[1] < K)):
        raise ValueError(f"`confusion` of {owner} must have shape ({m},) or ({m}, T) with "
                         f"2 <= T < K={K}; got shape {W.shape} instead.")
    bad = ~np.isfinite(W) | (W < 0) | (W > 1)
    if bad.any():
        pos = tuple(int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"`confusion` of {owner} must lie in [0, 1]; found "
                         f"{float(W[pos])!r} at task {pos[0]}"
                         + (f", column {pos[1]}." if len(pos) > 1 else "."))
    return W


def estimate_reliability(A2: Responses, top: np.ndarray, *, normalization: str = "paper",
                         n_responses: np.ndarray | None = None) -> np.ndarray:
    """Worker reliabilities p_i from held-out responses, eq. (5) (and eq. for top-T).

    Parameters
    ----------
    A2 : Responses
        The responses not used by stage 1.
    top : ndarray of shape (n_tasks, T)
        Estimated plausible answers per task (0 for tasks without any; a response to
        such a task never counts as a hit).
    normalization : {"paper", "per_worker"}
        "paper": divide the hit count by m s (1 - s_1), estimated as nnz(A2)/n, the
        average number of A^2 answers per worker (eq. (5)). "per_worker": divide by the
        worker's own number of A^2 answers to tasks that have an estimate (real workers
        answer very different numbers of tasks; this is the sample mean of Lemma 1's
        Bernoulli variables, and answers to tasks without an estimate, which can never
        be hits, would bias it down).
    n_responses : ndarray of shape (n_workers,), optional
        Responses per worker in the full data; workers with none get NaN.

    Returns
    -------
    p_hat : ndarray of shape (n_workers,)
        K/(K-T) (hits_i / N_i - T/K), unclipped (may fall outside [0, 1]); NaN for a worker
        with no responses (and, with "per_worker", for one with no A^2 responses).
    """
    check_choice(normalization, "normalization", ("paper", "per_worker"),
                 owner="estimate_reliability")
    return _reliability(A2, top, normalization, n_responses)


def _reliability(A2: Responses, top: Any, normalization: str,
                 n_responses: np.ndarray | None) -> np.ndarray:
    """:func:`estimate_reliability` once ``normalization`` is checked (TopTwo2's own calls)."""
    K = A2.n_labels
    top = _check_top(top, A2, owner="estimate_reliability")
    T = top.shape[1]
    counts = A2.task_counts()
    if K < 63:
        # one bit per label: bit c of mask_j is set iff c is among task j's top labels
        # (bit 0, "no estimate", never matches an answer), one pass over the responses
        dt = next(d for d in (np.uint8, np.uint16, np.uint32, np.uint64)
                  if K < 8 * np.dtype(d).itemsize)          # the smallest that holds K + 1 bits
        mask = np.zeros(A2.n_tasks, dtype=dt)
        for t in range(T):
            mask |= np.left_shift(dt(1), top[:, t].astype(dt))
        # in the stored (worker-major) order: a worker's hits are a contiguous run, summed
        # as integers (exact, so the same counts as any other order)
        w_indptr = A2.tocsr().indptr
        hit_count = np.zeros(A2.n_workers, dtype=np.int64)
        for lo, hi, e0, e1 in _task_chunks(w_indptr):      # worker ranges, cache-sized
            if e1 == e0:
                continue
            hit = mask.take(A2.tasks[e0:e1])
            hit >>= A2.labels[e0:e1].astype(dt)
            hit &= dt(1)
            starts = w_indptr[lo:hi] - e0
            some = w_indptr[lo + 1:hi + 1] > w_indptr[lo:hi]  # reduceat needs non-empty runs
            hit_count[lo:hi][some] = np.add.reduceat(hit, starts[some], dtype=np.int64)
        hits = hit_count.astype(float)
    else:
        indptr, workers_tm, labels_tm = A2.task_major()
        tasks_tm = A2.task_major_tasks()
        hit = top[:, 0][tasks_tm] == labels_tm
        for t in range(1, T):
            hit |= top[:, t][tasks_tm] == labels_tm
        hits = np.bincount(workers_tm[hit], minlength=A2.n_workers).astype(float)
    if normalization == "paper":
        denom = np.full(A2.n_workers, A2.nnz / A2.n_workers)
    elif (top[:, 0] > 0)[counts > 0].all():   # every answered task resolved
        denom = A2.worker_counts().astype(float)
    else:   # the worker's answers to tasks that have an estimate (top > 0)
        _, workers_tm, _ = A2.task_major()
        resolved = np.repeat(top[:, 0] > 0, counts)
        denom = np.bincount(workers_tm[resolved], minlength=A2.n_workers).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = K / (K - T) * (hits / denom - T / K)
    p[denom == 0] = np.nan
    if n_responses is not None:
        p[n_responses == 0] = np.nan
    return p


def _check_n_responses(n_responses: Any, n: int, owner: str) -> np.ndarray | None:
    """``n_responses`` (answers per worker in the full data) checked: None, or 1-D integers
    of length n_workers."""
    if n_responses is None:
        return None
    n_responses = np.asarray(n_responses)
    if n_responses.ndim != 1 or not np.issubdtype(n_responses.dtype, np.integer):
        raise TypeError(f"`n_responses` of {owner} must be a 1-D integer array (answers per "
                        f"worker); got dtype {n_responses.dtype}, shape {n_responses.shape}.")
    check_length(n_responses, "n_responses", owner=owner, length=n)
    return n_responses


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
    n_responses = _check_n_responses(n_responses, n, owner)
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


def estimate_reliability_loo(A2: Responses, stage1: Any, *, centering: str | None = None,
                             in_stage1: bool = True,
                             n_responses: np.ndarray | None = None) -> np.ndarray:
    r"""Worker reliabilities p_i by eq. (5), each answer scored against the pair stage 1
    gives its task without that answer (leave one out), attenuation corrected.

    Beyond the paper; TopTwo2's default step 3. Eq. (5) counts a hit when worker i's
    answer falls in the estimated pair. Without sample splitting that pair was estimated
    from the same answer, so every worker, spammers included, agrees with it more often
    than eq. (1) says (the bias the paper's split :math:`A^1/A^2` removes, at the price of
    half the data). Here the answer is taken out instead: stage 1's projections are
    linear in the answers (step 3: :math:`v_j^{(k)} = \sum_i \tilde u_i X^{(k)}_{ij}/(2s')`),
    so without answer (i, j)

    .. math:: v_j^{(k),-i} = v_j^{(k)} - \tilde u_i X^{(k)}_{ij} / (2 s'),

    and steps 4-5 on :math:`v^{-i}_j` give the pair :math:`P_{-i}(j)` (eq. (3)) and the
    estimated chance :math:`c_{ij} = T/K - \sum_{a \in P_{-i}(j)} \Delta v_j^{(a),-i}/l`
    (eq. (4) summed over the pair, clipped to [T/K, 1]) that an answer from the top-T
    lands in it. Because :math:`P_{-i}(j)` does not depend on worker i's answer, eq. (1)
    gives :math:`\mathbb E[\mathbb 1(A_{ij} \in P_{-i}(j))] = T/K + p_i (c_{ij} - T/K)`,
    and the moment estimator is

    .. math:: \hat p_i = \frac{\sum_j (\mathbb 1(A_{ij} \in P_{-i}(j)) - T/K)}
                              {\sum_j (c_{ij} - T/K)}

    over the worker's answers to tasks with an estimate and another answer. Where
    :math:`P_{-i}(j)` is the full pair and :math:`c_{ij} = 1` (the pair is taken as right,
    as eq. (5) does) this is eq. (5) with the per-worker denominator,
    :math:`\frac{K}{K-T}(\text{hits}_i/N_i - T/K)`. The correction matters where the
    other answers often miss the pair (hard tasks), which would otherwise shrink every
    good worker's :math:`\hat p_i`. With sample splitting (``in_stage1=False``) A2's
    answers are not in stage 1, nothing is taken out, and only :math:`c_{ij}` differs from
    eq. (5). Measured against eq. (5) and the MLE in ``docs/design_stage1.md``.

    Round-off: the labels of :math:`P_{-i}(j)` are eq. (3)'s with stage 1's tie tolerance
    (doubled for the one subtraction), so the hits are decided as stage 1's labels are;
    :math:`c_{ij}` is a real number like :math:`\hat q_j`.

    Parameters
    ----------
    A2 : Responses
        The responses to score (all of A without sample splitting: then they must be
        stage 1's C).
    stage1 : SpectralResult
        Stage 1's result (:func:`toptwo.spectral_estimate`), with ``v``, ``trimmed``,
        ``components``, ``v_error`` and ``l_task``.
    centering : {"observed", "paper"}, optional
        The centring stage 1 used (it fixes :math:`X^{(k)}_{ij}`); read from ``stage1``
        (``SpectralResult.centering``), and refused if it disagrees. Needed only for a
        result that does not record it.
    in_stage1 : bool, default=True
        Whether A2's answers are stage 1's C (no sample splitting). With False nothing is
        taken out: the pair is stage 1's own (eq. (3) at stage 1's tie tolerance).
    n_responses : ndarray of shape (n_workers,), optional
        Responses per worker in the full data; workers with none get NaN.

    Returns
    -------
    p_hat : ndarray of shape (n_workers,)
        Clipped to [-T/(K-T), 1], the range of eq. (5): the ratio is unstable where a
        worker's few answers all have c_ij close to T/K (pairs that carry almost no
        information without the answer), and can leave that range by far (a worker of 4
        answers reached 122 on flag before this clip). Eq. (6) clips p further (TopTwo2).
        NaN for a worker without a usable answer (or whose c_ij are all T/K).

    Examples
    --------
    Five hammers (p = 1) and 45 spammers (p = 0), each answering a tenth of the tasks: eq.
    (5) credits the spammers with the pairs their own answers helped choose. Left one out,
    a task keeps about four other answers, mostly spammers', so the hammers' p is
    attenuated (their answers often miss a pair the spammers chose); what eq. (6) needs is
    their weight relative to the spammers'.

    >>> import numpy as np
    >>> import toptwo
    >>> from toptwo.reliability import estimate_reliability_loo
    >>> model = toptwo.TopTwoModel.spammer_hammer(50, 500, 5, hammer_fraction=0.1, rng=1)
    >>> A = model.sample(0.1, rng=11)
    >>> eq5 = toptwo.TopTwo2(reliability_estimator="moment").fit(A)
    >>> spam = model.reliability == 0
    >>> round(float(np.nanmean(eq5.reliability_[spam])), 2)     # eq. (5), spammers
    0.26
    >>> loo = estimate_reliability_loo(A, eq5.stage1_)
    >>> round(float(np.nanmean(loo[spam])), 2)                  # left one out
    -0.03
    >>> round(float(np.nanmean(loo[~spam])), 2)                 # hammers: ranked first
    0.47
    """

    owner = "estimate_reliability_loo"
    A2, centering, n_responses, top = _check_loo_inputs(A2, stage1, centering, in_stage1,
                                                        n_responses, owner)
    K, T, n = A2.n_labels, top.shape[1], A2.n_workers
    indptr, workers_tm, labels_tm = A2.task_major()
    counts = np.diff(indptr)
    l_task = np.asarray(stage1.l_task, float)
    # eq. (3)'s tolerance, 4 x the bound of v; doubled for the subtraction (nothing is
    # subtracted without in_stage1: then the pair is stage 1's own)
    tol4 = (8.0 if in_stage1 else 4.0) * np.asarray(stage1.v_error, float)
    has_l = l_task > 0
    usable_task = top[:, 0] > 0                           # tasks with an estimate ...
    if in_stage1:
        usable_task &= counts > 1                         # ... and another answer
        out = _TakeOut(A2, stage1, centering, counts)
    dv_lm = np.ascontiguousarray(np.asarray(stage1.delta_v, float).T)   # dv_lm[c - 1, j]
    hits = np.zeros(n, dtype=np.int64)
    n_used = np.zeros(n, dtype=np.int64)
    excess = np.zeros(n, dtype=np.int64)   # sum of c_ij - T/K in units of 2^-CHANCE_BITS
    # chunks of at most about 2^20 answers, so of at most 2^20 + 1 answered tasks: a worker
    # answers a task once, so it has at most 2^20 + 1 answers in a chunk, its sum of
    # integers < 2^CHANCE_BITS stays below 2^53 and the float sums of bincount are exact
    for lo, hi, e0, e1 in _task_chunks(indptr, size=min(_chunks_mod.CHUNK_RESPONSES, 1 << 20)):
        cnt = counts[lo:hi]
        use = _per_answer(usable_task, lo, hi, cnt)
        if not use.any():
            continue
        w, c0 = workers_tm[e0:e1], labels_tm[e0:e1].astype(np.intp) - 1
        cols = _per_answer(dv_lm, lo, hi, cnt)            # Delta v_j (step 4), label-major
        if in_stage1:
            out.subtract(cols, w, c0, _per_answer(out.inv_2s, lo, hi, cnt))
        order = _smallest_columns(cols.copy(), T, _per_answer(tol4, lo, hi, cnt), False)
        hit = order[:, 0] == c0                           # eq. (3) without the answer
        mass = _select_rows(cols, order[:, 0])
        for t in range(1, T):
            hit |= order[:, t] == c0
            mass += _select_rows(cols, order[:, t])
        lt = _per_answer(l_task, lo, hi, cnt)
        with np.errstate(invalid="ignore", divide="ignore"):
            cij = np.divide(mass, lt)
            np.subtract(T / K, cij, out=cij)
            np.clip(cij, T / K, 1.0, out=cij)             # eq. (4) summed over the pair
        if not has_l[lo:hi].all():
            cij[~(lt > 0)] = 1.0                          # no estimate of ||p||: eq. (5)
        # integers: sums that do not depend on the order of the answers or the chunks;
        # c_ij - T/K >= 0, exactly 0 where c_ij is clipped to T/K
        cij -= T / K
        every = bool(use.all())
        if not every:
            hit &= use
            cij[~use] = 0.0
        # hits and answers used in one count: used 2^21 + hits (a worker has at most
        # 2^20 + 1 answers in a chunk, so both counts stay below 2^21, the sums below 2^42)
        both = np.bincount(w, weights=(hit + (1 << 21)) if every
                           else hit + np.multiply(use, float(1 << 21)),
                           minlength=n).astype(np.int64)
        hits += both & ((1 << 21) - 1)
        n_used += both >> 21
        np.ldexp(cij, CHANCE_BITS, out=cij)
        excess += np.bincount(w, weights=np.rint(cij, out=cij), minlength=n).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_hat = (hits - T / K * n_used) / np.ldexp(excess.astype(float), -CHANCE_BITS)
    np.clip(p_hat, -T / (K - T), 1.0, out=p_hat)          # the range of eq. (5)
    p_hat[(n_used == 0) | (excess <= 0)] = np.nan
    if n_responses is not None:
        p_hat[np.asarray(n_responses) == 0] = np.nan
    return p_hat


def _per_answer(a: np.ndarray, lo: int, hi: int, cnt: np.ndarray) -> np.ndarray:
    """Tasks lo..hi-1's values (last axis) repeated for each of their answers."""
    return np.repeat(a[..., lo:hi], cnt, axis=-1)


def _check_loo_inputs(A2: Any, stage1: Any, centering: str | None, in_stage1: Any,
                      n_responses: Any, owner: str) -> tuple:
    """(A2, centering, n_responses, top) of :func:`estimate_reliability_loo`, checked."""

    if not isinstance(A2, _FitView):
        A2 = as_responses(A2, owner=owner)
    if not isinstance(stage1, SpectralResult):
        raise TypeError(f"`stage1` of {owner} must be a SpectralResult (stage 1's result: "
                        f"toptwo.spectral_estimate, or TopTwo2's stage1_); got "
                        f"{type(stage1).__name__}.")
    if stage1.v_error is None or stage1.components is None or stage1.l_task is None:
        raise ValueError(f"`stage1` of {owner} must come from toptwo.spectral_estimate (it "
                         f"needs the result's components, v_error and l_task); this one has "
                         f"none (spectral_from_matrices?).")
    recorded = stage1.centering
    if centering is None:
        centering = recorded if recorded is not None else "observed"
    if centering not in ("observed", "paper"):
        raise ValueError(f"`centering` of {owner} must be 'observed' or 'paper'; got "
                         f"{centering!r} instead.")
    if recorded is not None and centering != recorded:
        raise ValueError(f"`centering` of {owner} is {centering!r} but stage 1 used "
                         f"{recorded!r}; leave it out (it is read from `stage1`).")
    if not isinstance(in_stage1, (bool, np.bool_)):
        raise TypeError(f"`in_stage1` of {owner} must be True or False; got "
                        f"{in_stage1!r}.")
    n_responses = _check_n_responses(n_responses, A2.n_workers, owner)
    top = _check_top(stage1.top, A2, owner=owner)
    K = A2.n_labels
    delta_v = np.asarray(stage1.delta_v)
    if delta_v.shape != (A2.n_tasks, K):
        raise ValueError(f"`stage1` of {owner} is for {delta_v.shape[0]} tasks and "
                         f"{delta_v.shape[1]} labels; the responses have {A2.n_tasks} and {K}.")
    return A2, centering, n_responses, top


class _TakeOut:
    """An answer's terms in stage 1's Delta v_j (steps 1-4), to take them out.

    Answer (i, j) with label c adds x^(k) = u~_i^(k) X^(k)_ij / (2 s') to v_j^(k) (step 3),
    X^(k)_ij the centred binary entry of label c (step 1) and s' that of the task's part
    (its component with "observed" centring, the whole matrix with "paper"), so it adds
    x^(k) - x^(k-1) to Delta v_j^(k) (step 4; x^(0) = x^(K) = 0).
    """

    def __init__(self, A2: Responses, stage1: Any, centering: str, counts: np.ndarray):

        K, n = A2.n_labels, A2.n_workers
        entry = binary_sign(np.arange(1, K + 1)[:, None], np.arange(1, K)[None, :])
        self.entry = entry.astype(float)                  # X^(k) of label c, row c - 1
        if centering == "observed":
            self.entry -= centring_shifts(K)
            comp = np.asarray(stage1.components)
            ok = comp >= 0
            n_c = int(comp.max()) + 1 if ok.any() else 0
            # the component of every worker: that of its first task (responses are
            # stored worker by worker; A2 is stage 1's C here, so all of a worker's
            # tasks share its component)
            wcomp = np.full(n, -1, dtype=np.int64)
            first = np.searchsorted(A2.workers, np.arange(n + 1, dtype=A2.workers.dtype))
            has = first[1:] > first[:-1]
            wcomp[has] = comp[A2.tasks[first[:-1][has]]]
            nnz_c = np.bincount(comp[ok], weights=counts[ok], minlength=n_c)
            size_c = (np.bincount(comp[ok], minlength=n_c)
                      * np.bincount(wcomp[wcomp >= 0], minlength=n_c))
            with np.errstate(invalid="ignore", divide="ignore"):
                s_task = np.where(ok, (nnz_c / np.maximum(size_c, 1))[np.maximum(comp, 0)],
                                  np.nan)
        else:
            s_task = np.full(A2.n_tasks, float(stage1.s_prime_y))
        self.inv_2s = 1.0 / (2.0 * s_task)                # 1 / (2 s') per task
        self.u_tilde = np.asarray(stage1.trimmed, float)  # (K-1, n): u~^(k)
        self.pooled = bool((self.u_tilde == self.u_tilde[:1]).all())   # one u~ for all k
        padded = np.zeros((K, K + 1))
        padded[:, 1:K] = self.entry
        self.d_entry = np.diff(padded, axis=1)            # X^(k) - X^(k-1) per label

    def subtract(self, cols: np.ndarray, w: np.ndarray, c0: np.ndarray,
                 inv_2s: np.ndarray) -> None:
        """cols[k] -= the answers' terms of Delta v^(k+1) (label-major, in place)."""
        K = cols.shape[0]
        if self.pooled:             # one u~: the difference of the entries times it
            uw = self.u_tilde[0].take(w) * inv_2s
            for k in range(K):
                cols[k] -= self.d_entry[:, k].take(c0) * uw
            return
        prev = None
        for k in range(K - 1):
            x = self.entry[:, k].take(c0) * (self.u_tilde[k].take(w) * inv_2s)
            cols[k] -= x if prev is None else x - prev
            prev = x
        cols[K - 1] += prev
