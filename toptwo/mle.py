r"""Stage 2: worker reliabilities and the plug-in MLE (Algorithm 2, "TopTwo2").

Algorithm 2 [`alg:plugin_MLE`]:

1. Split A into A^1 = A o S and A^2 = A o (1 - S), S_ij ~ Bernoulli(s_1)
   (:func:`toptwo.spectral.split_entries`).
2. Algorithm 1 on A^1 gives (g_j, h_j) and q_j (:class:`toptwo.TopTwo1`).
3. p_i by eq. (5) [`eqn:hatpi`] on A^2 (:func:`estimate_reliability`)::

       p_i = K/(K-2) * ( #{j : A2_ij in {g_j, h_j}} / (m s (1 - s_1)) - 2/K )

4. The plug-in MLE of eq. (6) [`eqn:plug-in-mle`] on all of A (:func:`plugin_mle`)::

       (g_j, h_j) = argmax_{a != b} sum_i log(K p_i q_j/(1 - p_i) + 1) 1(A_ij = a)
                                        + log(K p_i (1 - q_j)/(1 - p_i) + 1) 1(A_ij = b)

Eq. (6) is the log-likelihood of eq. (1) up to terms that do not depend on (a, b):
P(A_ij = a)/P(A_ij = c) = K p q/(1 - p) + 1 for c outside the pair. It needs p_i < 1
and K p q/(1-p) + 1 > 0; hence the clipping stated under TopTwo2's Attributes.

The pair search costs O(nnz + m K): each task's two score vectors S^a_j(c) (weights of
answers c as the first label) and S^b_j(c) come from one pass over the responses
(``np.bincount``), and the best ordered pair with a != b is either (argmax S^a,
argmax S^b) or, when these coincide, the better of the two runner-up combinations.
For T > 2 (Algorithm 4 [`alg:plugin_MLE_T`]) the T-tuple is a linear assignment
problem per task (``scipy.optimize.linear_sum_assignment``).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np

from ._cost import check_dense_cost
from ._validation import (Interval, RealArray, StrOptions, check_length,
                          check_probability_vector)
from ._base import BaseEstimator
from .responses import Responses, _FitView, as_responses
from ._chunks import _task_chunks
from ._ties import _EPS, _best_pairs_columns
from .reliability import (MAX_RELIABILITY, MIN_RELIABILITY, _check_confusion, _reliability,
                          estimate_reliability, estimate_reliability_loo,
                          estimate_reliability_mle)
from .spectral import (TopTwo1, check_enough_labels, check_spectral_labels, clip_confusion,
                       undetermined_confusion, confusion_at, resolve_sign_rule,
                       spectral_estimate, split_entries)

__all__ = ["TopTwo2", "OracleMLE", "estimate_reliability", "plugin_mle", "best_pairs",
           "MAX_RELIABILITY", "MIN_RELIABILITY", "CONFUSION_CLIP"]

#: q_hat is clipped to this range before eq. (6). The model's q lies in (1/2, 1]; at
#: exactly 1/2 the two slots of eq. (6) weigh alike and the order of (g, h) is left to
#: the tie rule, so the lower end stays just above 1/2; the upper end stays below 1 so
#: that the weight of the second answer is not exactly 0.
CONFUSION_CLIP = (0.51, 0.99)


def best_pairs(Sa: np.ndarray, Sb: np.ndarray, tol: np.ndarray | float = 0.0
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """argmax over ordered pairs a != b of Sa[j, a] + Sb[j, b], for every row j at once.

    O(m K). The best score M_j is attained by (argmax Sa, argmax Sb) unless both
    argmaxes coincide, and then by the better of the two runner-up combinations. Every
    pair whose score is within ``tol[j]`` of M_j is an exact tie (``tol`` bounds the
    floating-point error of the scores, see :func:`plugin_mle`), and the tie goes to the
    smaller label, first in a, then in b (the order of a row-major brute-force scan).
    With ``tol = 0`` only bit-identical scores tie.

    Returns (a, b, score) with 0-based label indices.
    """
    Sa, Sb = np.asarray(Sa, float), np.asarray(Sb, float)
    return _best_pairs_columns(np.ascontiguousarray(Sa.T), np.ascontiguousarray(Sb.T), tol)


#: Largest number of ordered T-tuples K!/(K-T)! for which the top-T MLE enumerates all
#: tuples (exact, with the tie rule); beyond it ``linear_sum_assignment`` decides.
MAX_ENUMERATED_TUPLES = 5040


def _best_tuples(S: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """Top-T MLE per task: argmax over ordered T-tuples of sum_t S[j, t, c_t].

    Tuples are scanned in lexicographic order, so among the tuples whose score is within
    ``tol[j]`` of the best the lexicographically smallest wins (the tie rule). Chunked
    over tasks to bound memory.
    """
    from itertools import permutations

    m, T, K = S.shape
    perms = np.array(list(permutations(range(K), T)), dtype=np.int64)   # lexicographic
    out = np.empty((m, T), dtype=np.int64)
    chunk = max(1, 2_000_000 // len(perms))
    for lo in range(0, m, chunk):
        hi = min(m, lo + chunk)
        score = np.zeros((hi - lo, len(perms)))
        for t in range(T):
            score += S[lo:hi, t, :][:, perms[:, t]]
        best = score.max(axis=1, keepdims=True)
        out[lo:hi] = perms[np.argmax(score >= best - tol[lo:hi, None], axis=1)]
    return out


def _tie_tolerance(scores: list[np.ndarray], d: np.ndarray, K: int) -> np.ndarray:
    """Bound on the floating-point error of the pair (tuple) scores of eq. (6), per task
    (see :func:`plugin_mle`): 2 x 8 (d_j + 2) eps sum_i w_i."""
    # sum_i of every weight of task j = the column sums of the score vectors (w >= 0),
    # added label by label in increasing order (the order of a row sum for K < 8)
    if K < 8:
        total = 0
        for S in scores:
            row = S[0].copy()
            for c in range(1, K):
                row += S[c]
            total = total + row
    else:
        total = sum(np.ascontiguousarray(S.T).sum(axis=1) for S in scores)
    return 2.0 * 8.0 * _EPS * (d + 2.0) * total


def _local_tasks(indptr: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Task of every response of tasks [lo, hi) in task-major order, counted from lo.

    ``np.repeat(np.arange(hi - lo), counts)`` by a running count of the task starts
    (faster when tasks have few responses each).
    """
    e0, e1 = int(indptr[lo]), int(indptr[hi])
    # response e belongs to the number of tasks lo + 1..hi - 1 starting at or before it
    starts = np.bincount(indptr[lo + 1:hi] - e0, minlength=e1 - e0 + 1)[:e1 - e0]
    return np.cumsum(starts, out=starts)


def plugin_mle(A: Responses, reliability: np.ndarray, confusion: np.ndarray) -> np.ndarray:
    """Eq. (6) (T = 2) or Algorithm 4's T-tuple MLE, given (p, q) per worker / task.

    Parameters
    ----------
    A : Responses
        The responses (or anything :func:`toptwo.as_responses` accepts).
    reliability : ndarray of shape (n_workers,)
        p_i in [0, 1); NaN is treated as 0 (the worker's answers get weight 0).
    confusion : ndarray of shape (n_tasks,) or (n_tasks, T)
        q_j in [1/2, 1] (or the T weights per task).

    Returns
    -------
    top : ndarray of shape (n_tasks, T), labels 1..K; 0 for tasks with no response.

    Notes
    -----
    Ties. The pair (tuple) scores of a task are sums of d_j weights
    w = log(K p q/(1 - p) + 1). Each weight is within a few ulps of its exact value
    (log1p's error; numpy's SIMD and libm versions differ there), and summing d_j of them
    in any order errs by at most (d_j - 1) eps times their total: so two scores that
    differ by less than 2 x 8 (d_j + 2) eps sum_i w_i are equal as far as floating
    point can tell. They are treated as exact ties and the smaller label wins
    (:func:`best_pairs`). Exact ties are common: clipped reliabilities give many
    workers identical weights. An error in q (stage 1 computes it from u^(k), whose
    last bits depend on the solver) does not break an exact tie: two pairs tie exactly
    only when their answers carry the same multiset of weights in each slot, and then
    q moves both scores alike; it could only reorder pairs whose scores differ by less
    than that error, which is as likely as any other coincidence of real numbers.
    """
    owner = "plugin_mle"
    if not isinstance(A, _FitView):       # a fit's own responses have passed the gate
        A = as_responses(A, owner=owner)
    K = A.n_labels
    p = np.asarray(reliability, float)
    if p.shape != (A.n_workers,):
        raise ValueError(f"`reliability` of {owner} must have length {A.n_workers} "
                         f"(n_workers); got shape {p.shape} instead.")
    bad = (p < 0) | (p >= 1) | np.isinf(p)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"`reliability` of {owner} must lie in [0, 1) (or be NaN); found "
                         f"{float(p[i])!r} at worker {i}.")
    p = np.nan_to_num(p, nan=0.0)
    W = _check_confusion(confusion, A, owner=owner)
    if W.ndim == 1:
        W = np.column_stack([W, 1.0 - W])
    T = W.shape[1]
    # task-major order: q_j repeats over a task's responses (no gather), and every
    # (task, label) sum adds the same numbers in the same order as a worker-major pass
    # (see Responses.task_label_counts_task_major). Scores are stored label-major,
    # S_t[c, j], so that the pair search below runs over contiguous columns.
    indptr, workers_tm, labels_tm = A.task_major()
    m = A.n_tasks
    cwp = K * p / (1.0 - p)                         # K p_i / (1 - p_i) per worker
    Wt = np.ascontiguousarray(W.T)
    d = A.task_counts()
    answered = d > 0
    # T = 2 with K < 8: the pair search runs chunk by chunk on the chunk's scores (it
    # is row-local); otherwise the whole score arrays are kept
    fused = T == 2 and K < 8
    if fused:
        top = np.zeros((m, 2), dtype=np.int64)
    else:
        scores = [np.empty((K, m)) for _ in range(T)]
    # in chunks of tasks (cache-sized temporaries); every (label, task) sum adds the
    # same weights in the same order as one pass over all responses
    for lo, hi, e0, e1 in _task_chunks(indptr):
        mc = hi - lo
        task = _local_tasks(indptr, lo, hi)         # task of every response
        index = labels_tm[e0:e1].astype(np.intp)
        index -= 1
        index *= mc
        index += task
        cw = cwp.take(workers_tm[e0:e1])
        local = []
        for t in range(T):
            w = Wt[t, lo:hi].take(task)             # q_t of every response's task
            w *= cw
            np.log1p(w, out=w)                      # log(K p q_t / (1 - p) + 1)
            local.append(np.bincount(index, weights=w, minlength=K * mc).reshape(K, mc))
        if fused:
            a, b, _ = _best_pairs_columns(local[0], local[1],
                                          _tie_tolerance(local, d[lo:hi], K))
            top[lo:hi, 0] = a + 1
            top[lo:hi, 1] = b + 1
        else:
            for t in range(T):
                scores[t][:, lo:hi] = local[t]
    if not fused:
        tol = _tie_tolerance(scores, d, K)
        from math import perm

        top = np.zeros((A.n_tasks, T), dtype=np.int64)
        S = np.stack([Sc.T for Sc in scores], axis=1) if T > 2 else None   # (m, T, K)
        if S is None:
            a, b, _ = _best_pairs_columns(scores[0], scores[1], tol)
            top = np.column_stack([a, b]) + 1
        elif perm(K, T) <= MAX_ENUMERATED_TUPLES:
            top[answered] = _best_tuples(S[answered], tol[answered]) + 1
        else:
            from scipy.optimize import linear_sum_assignment   # lazy: heavy import

            for j in np.flatnonzero(answered):
                rows, cols = linear_sum_assignment(S[j], maximize=True)
                top[j, rows] = cols + 1
    top[~answered] = 0
    return top.astype(np.int64)


#: TopTwo2's parameters for Algorithm 2 as printed (:meth:`TopTwo2.paper`).
PAPER_TOPTWO2 = dict(sample_splitting=True, reliability_estimator="moment",
                     reliability_normalization="paper", centering="paper",
                     left_vector="per_k", sign_rule="paper")


def check_toptwo2_combinations(params: dict, owner: str) -> None:
    """Refuse combinations of TopTwo2's parameters that are not implemented or not
    meaningful (each parameter alone is checked by ``_parameter_constraints``)."""
    T, n_ref = params["n_top"], params["n_refinements"]
    estimator = params["reliability_estimator"]
    if n_ref and T != 2:
        raise ValueError(f"{owner}: n_refinements is implemented for the top-two model "
                         f"only (n_top=2); got n_top={T}.")
    if estimator == "mle" and T != 2:
        raise ValueError(f"{owner}: reliability_estimator='mle' is implemented for the "
                         f"top-two model only (n_top=2); got n_top={T}.")
    if estimator == "mle" and n_ref:         # the refinement re-estimates p by eq. (5)
        raise ValueError(f"{owner}: n_refinements={n_ref} re-estimates p by eq. (5); it "
                         f"is not implemented with reliability_estimator='mle' (use "
                         f"n_refinements=0).")
    if estimator != "moment" and params["reliability_normalization"] != "per_worker":
        raise ValueError(f"{owner}: reliability_normalization="
                         f"{params['reliability_normalization']!r} applies to eq. (5) "
                         f"as printed (reliability_estimator='moment') only; "
                         f"reliability_estimator={estimator!r} has none (pass "
                         f"reliability_estimator='moment' with it).")


class TopTwo2(BaseEstimator):
    r"""Top-two answers by spectral initialisation and plug-in MLE (Algorithm 2, "TopTwo2").

    Stage 1 is :class:`~toptwo.TopTwo1` on :math:`A^1`; with its
    :math:`(\hat g_j, \hat h_j)` the held-out answers :math:`A^2` give the reliabilities

    .. math::

        \hat p_i = \frac{K}{K-2}\Big(\frac{\sum_j \mathbb 1(A^2_{ij} \in
        \{\hat g_j, \hat h_j\})}{m s (1 - s_1)} - \frac2K\Big) \quad \text{(eq. (5))},

    and the plug-in MLE on all of :math:`A` picks, per task, the ordered pair

    .. math::

        \arg\max_{a \ne b} \sum_i \log\Big(\frac{K\hat p_i\hat q_j}{1-\hat p_i}+1\Big)
        \mathbb 1(A_{ij}=a) + \log\Big(\frac{K\hat p_i(1-\hat q_j)}{1-\hat p_i}+1\Big)
        \mathbb 1(A_{ij}=b) \quad \text{(eq. (6))}.

    :func:`toptwo.reference.algorithm2` is the same algorithm as printed, in dense NumPy
    (tested equal).

    The default ``TopTwo2()`` departs from Algorithm 2 as printed: no sample splitting,
    the leave-one-out form of eq. (5) in step 3, and stage 1 as ``TopTwo1()``'s default
    (observed-entry centring, one stacked left vector with the positive-sum sign rule);
    ``TopTwo2.paper()`` is the printed algorithm. Each option set to its paper value runs
    the paper's step (measurements: design notes, ``docs/design.md``, "Deviations").

    Through stage 1 the estimates depend on the numbering of the choices (eqs. (5) and
    (6) given stage 1 do not), less than TopTwo1's (sizes: ``docs/reproducibility.md``).

    Parameters
    ----------
    split_rate : float, default=0.5
        :math:`s_1`, the fraction of observed entries given to stage 1 (step 1). Used only
        with ``sample_splitting=True``.
    eta : float, default=0.1
        Trimming parameter of Algorithm 1 (:math:`\eta\sqrt n \le \|\mathbf p\|_2`).
    sample_splitting : bool, default=False
        True: both splits as printed (:math:`A^1/A^2`, and B/C inside stage 1). False:
        every stage on all of A (design notes, "Sample splitting").
    reliability_normalization : {"per_worker", "paper"}, default="per_worker"
        Denominator of eq. (5): "paper", :math:`m s (1 - s_1)` estimated as
        :math:`\mathrm{nnz}(A^2)/n`; "per_worker", each worker's own number of
        :math:`A^2` answers to tasks with an estimate (design notes, "Normalisation of
        eq. (5)").
    reliability_estimator : {"leave_one_out", "moment", "mle"}, default="leave_one_out"
        Step 3. "moment": eq. (5) as printed. "leave_one_out", beyond the paper: eq. (5)
        with each answer scored against the pair stage 1 gives its task without that
        answer, and the chance that a top-T answer lands in that pair (eq. (4) summed over
        it) in place of eq. (5)'s 1 (:func:`toptwo.reliability.estimate_reliability_loo`):
        without sample splitting eq. (5)'s pair was estimated from the same answers, and
        spammers agree with it more often than chance. "mle", beyond the paper (T = 2
        only): each worker's maximum-likelihood :math:`p_i` under eq. (1) given stage 1's
        pairs and :math:`\hat q_j` (:func:`toptwo.reliability.estimate_reliability_mle`).
        All three are measured in ``docs/design_stage1.md`` ("Where TopTwo2's remaining
        gap lives"). ``reliability_normalization`` applies to "moment" only, and
        ``n_refinements`` (whose steps re-estimate p by eq. (5)) is refused with "mle".
    n_top : int, default=2
        T (Algorithms 3-4 for T > 2).
    sign_rule : {"auto", "paper", "sum"}, default="auto"
        Sign rule in stage 1 (see :class:`~toptwo.TopTwo1`; "auto": "paper" for
        ``per_k``, "sum" for a pooled vector).
    centering : {"observed", "paper"}, default="observed"
        Centring of the binary matrices in stage 1 (see :class:`~toptwo.TopTwo1`).
    left_vector : {"stacked", "averaged", "per_k"}, default="stacked"
        Stage 1's left vector (see :class:`~toptwo.TopTwo1`; "per_k" is Algorithm 1 as
        printed; measurements in ``docs/design_stage1.md``).
    n_refinements : int, default=0
        Beyond the paper (T = 2 only): this many hard-EM steps after eq. (6), each
        re-estimating p by eq. (5) per worker on all responses (whatever
        ``reliability_estimator`` gave the first p; refused with "mle") and q by a moment
        equation shrunk towards stage 1's q, then solving eq. (6) again; stops at a fixed
        point (design notes, "Refinement").
    refinement_shrinkage : float, default=2.0
        Pseudo-count weight of stage 1's :math:`\hat q_j` in the refinement's q update.
    rng : None, int or numpy.random.Generator
        Source of the sample splits.

    Attributes
    ----------
    top_two_ : ndarray of shape (n_tasks, 2)
        :math:`(\hat g_j, \hat h_j)` from eq. (6) (after refinements, if any); ties go to
        the smaller a, then b. (0, 0) for a task with no response.
    top_ : ndarray of shape (n_tasks, T)
    confusion_ : ndarray of shape (n_tasks,)
        Eq. (4) of stage 1 at the final :math:`\hat g_j`, clipped to [1/2, 1]; NaN for a
        task with no response. For an answered task where eq. (4) is undefined -- its
        component shows no signal (:math:`l \le 0`, the model cannot separate the
        labels), or (with ``sample_splitting=True``) stage 1 cannot see it (none of its
        responses in C) although eq. (6) ranks it -- the :math:`\hat q` that eq. (6)
        used for it: the median :math:`\hat q` of the other tasks (0.75 if there is
        none); ``confusion_raw_`` is NaN there. Eq. (6) uses :math:`\hat q` clipped to
        ``CONFUSION_CLIP`` = (0.51, 0.99).
    confusion_raw_ : ndarray of shape (n_tasks,)
        The same before clipping (NaN where eq. (4) is undefined).
    reliability_ : ndarray of shape (n_workers,)
        :math:`\hat p_i` of step 3 (``reliability_estimator``): eq. (5), in
        [-T/(K-T), 1]; its leave-one-out form, clipped to that range; or the MLE, in
        [0, 1]. NaN for a worker with no answers (and for one with no usable
        :math:`A^2` answer). Eq. (6) uses it clipped to
        [``MIN_RELIABILITY``, ``MAX_RELIABILITY``] = [0.05, 0.99], NaN as the lower end
        (design notes, "Clipping before eq. (6)").
    stage1_ : SpectralResult
        Stage 1's result (Algorithm 1 on :math:`A^1`).
    confusions_ : ndarray of shape (n_tasks, T) or None
        For T > 2: all T weights, eq. (4) at the final labels, clipped to [0, 1].
    norm_p_ : float
        Stage 1's estimate of :math:`\|\mathbf p\|_2`.
    observed_rate_ : float
    n_workers_in_, n_tasks_in_, n_labels_in_ : int

    Examples
    --------
    >>> import toptwo
    >>> model = toptwo.TopTwoModel.random(40, 200, 4, rng=0)
    >>> A = model.sample(0.5, rng=1)                 # 40 workers x 200 tasks, K = 4
    >>> est = toptwo.TopTwo2().fit(A)
    >>> est.top_two_[:3].tolist(), model.top_two[:3].tolist()
    ([[2, 4], [3, 1], [1, 3]], [[2, 4], [3, 1], [1, 4]])
    >>> round(toptwo.top_two_errors(est.top_two_, model.top_two)["pair"], 3)
    0.32
    """

    def __init__(self, *, split_rate: float = 0.5, eta: float = 0.1,
                 sample_splitting: bool = False, reliability_normalization: str = "per_worker",
                 reliability_estimator: str = "leave_one_out", n_top: int = 2,
                 sign_rule: str = "auto", centering: str = "observed",
                 left_vector: str = "stacked", n_refinements: int = 0,
                 refinement_shrinkage: float = 2.0, rng: Any = None):
        self.split_rate = split_rate
        self.eta = eta
        self.sample_splitting = sample_splitting
        self.reliability_normalization = reliability_normalization
        self.reliability_estimator = reliability_estimator
        self.n_top = n_top
        self.sign_rule = sign_rule
        self.centering = centering
        self.left_vector = left_vector
        self.n_refinements = n_refinements
        self.refinement_shrinkage = refinement_shrinkage
        self.rng = rng

    # stage 1's parameters share TopTwo1's declarations (one place for their allowed values)
    _parameter_constraints = {
        "split_rate": [Interval(Real, 0, 1, closed="neither")],
        "eta": TopTwo1._parameter_constraints["eta"],
        "sample_splitting": TopTwo1._parameter_constraints["sample_splitting"],
        "reliability_normalization": [StrOptions(("per_worker", "paper"))],
        "reliability_estimator": [StrOptions(("leave_one_out", "moment", "mle"))],
        "n_top": TopTwo1._parameter_constraints["n_top"],
        "sign_rule": TopTwo1._parameter_constraints["sign_rule"],
        "centering": TopTwo1._parameter_constraints["centering"],
        "left_vector": TopTwo1._parameter_constraints["left_vector"],
        "n_refinements": [Interval(Integral, 0, None, closed="left")],
        "refinement_shrinkage": [Interval(Real, 0, None, closed="left")],
        "rng": TopTwo1._parameter_constraints["rng"],
    }

    @classmethod
    def paper(cls, **params: Any) -> "TopTwo2":
        """Algorithm 2 as printed: both sample splits, eq. (5) with the paper's
        normalisation, and Algorithm 1 as printed in stage 1 (per-k vectors, the paper's
        centring and sign rule); ``params`` set the others (``rng``, ``eta``, ...).

        Only the clips of p and q before eq. (6), which keep eq. (6) defined, remain
        (design notes, "Clipping before eq. (6)").

        Examples
        --------
        >>> TopTwo2.paper(rng=0).get_params()["reliability_estimator"]
        'moment'
        """
        return cls(**{**PAPER_TOPTWO2, **params})

    def fit(self, A: Any, n_labels: int | None = None) -> "TopTwo2":
        """Run Algorithm 2 on A (dense array, sparse matrix or Responses)."""
        owner = self._name
        params = self._validate_params()
        check_toptwo2_combinations(params, owner)
        T = params["n_top"]
        R = as_responses(A, n_labels, owner=f"{owner}.fit")
        check_dense_cost(R, f"{owner}.fit")              # before any (m, K) array
        check_spectral_labels(R.n_labels, T, owner)               # n_top < K: needs the data
        check_enough_labels(R, f"{owner}.fit")
        if params["sample_splitting"]:
            A1, A2 = split_entries(R, params["split_rate"], params["rng"])   # step 1
            B, C = split_entries(A1, 0.5, params["rng"])                   # Alg. 1 step 1
            if min(B.nnz, C.nnz, A2.nnz) == 0:
                raise ValueError(f"{owner}: sample splitting left a part empty ({R.nnz} "
                                 f"responses); use sample_splitting=False for so few.")
        else:
            A1 = A2 = B = C = R
        res = spectral_estimate(B, C, eta=params["eta"], n_top=T,          # step 2
                                sign_rule=resolve_sign_rule(params["sign_rule"],
                                                            params["left_vector"]),
                                centering=params["centering"],
                                left_vector=params["left_vector"])
        q_mle = _confusion_for_eq6(res.confusion_raw, T)
        p_hat = _step3(R, A2, res, q_mle, params)                          # step 3
        p_mle = np.clip(np.nan_to_num(p_hat, nan=MIN_RELIABILITY), MIN_RELIABILITY,
                        MAX_RELIABILITY)
        top = plugin_mle(R, p_mle, q_mle)                                  # step 4
        for _ in range(params["n_refinements"]):   # stops once the labels stop changing
            new_top, p_mle, q_mle = _refine(R, top, q_mle, params["refinement_shrinkage"])
            if np.array_equal(new_top, top):
                break
            top = new_top
        self._set_outputs(R, res, top, q_mle, p_hat, T)
        return self

    def _set_outputs(self, R: Responses, res: Any, top: np.ndarray, q_mle: np.ndarray,
                     p_hat: np.ndarray, T: int) -> None:
        answered = R.task_counts() > 0
        seen = np.isfinite(res.confusion_raw[:, 0])
        # eq. (4) at the final labels (same value as stage 1 wherever they agree)
        q_final = confusion_at(res, top)
        q_final[~(answered & seen)] = np.nan
        self.stage1_ = res
        self._q_mle = q_mle if q_mle.ndim == 1 else q_mle[:, 0]
        self.top_ = top
        self.top_two_ = top[:, :2]
        self.confusions_ = (undetermined_confusion(clip_confusion(q_final, T), answered, T)
                            if T > 2 else None)
        self.confusion_raw_ = q_final[:, 0]
        q_used = q_mle if q_mle.ndim == 1 else q_mle[:, 0]
        self.confusion_ = np.where(answered & np.isnan(q_final[:, 0]), q_used,
                                   clip_confusion(q_final[:, 0], T))
        self.reliability_ = p_hat
        self.norm_p_ = res.norm_p
        self.observed_rate_ = R.observed_rate
        self._record_input(R)

    def _soft_confusion(self) -> np.ndarray:
        # NaN rows only for tasks nobody answered: a task that eq. (6) ranked but stage 1
        # could not see (``confusion_`` NaN, possible with ``sample_splitting=True``)
        # gets the q that eq. (6) used for it (the median q_hat).
        return np.where(np.isnan(self.confusion_), self._q_mle, self.confusion_)


def _confusion_for_eq6(q_raw: np.ndarray, T: int) -> np.ndarray:
    """Stage 1's q_hat as eq. (6) uses it: clipped to ``CONFUSION_CLIP`` (T = 2), a task
    stage 1 could not see given the median of the others (0.75 if none); for T > 2 the
    T weights clipped to [0, 1], 1/T where unseen."""
    seen = np.isfinite(q_raw[:, 0])
    if T == 2:
        q_use = np.clip(q_raw, *CONFUSION_CLIP)
        fill = float(np.median(q_use[seen, 0])) if seen.any() else 0.75
        return np.where(seen, q_use[:, 0], fill)
    q = np.clip(q_raw, 0.0, 1.0)
    q[~seen] = 1.0 / T
    return q


def _step3(R: Responses, A2: Responses, res: Any, q: np.ndarray, params: dict
           ) -> np.ndarray:
    """Step 3 of Algorithm 2 by ``reliability_estimator``: p_hat on the held-out A2."""
    counts = R.worker_counts()
    estimator = params["reliability_estimator"]
    if estimator == "mle":                    # beyond the paper: eq. (1)'s MLE given q
        return estimate_reliability_mle(A2, res.top, q, n_responses=counts)
    if estimator == "leave_one_out":          # beyond the paper: eq. (5) without the answer
        return estimate_reliability_loo(A2, res, centering=params["centering"],
                                        in_stage1=not params["sample_splitting"],
                                        n_responses=counts)
    return _reliability(A2, res.top, params["reliability_normalization"],     # eq. (5)
                        n_responses=counts)


def _refine(R: Responses, top: np.ndarray, q_prior: np.ndarray, shrink: float
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One hard-EM step on the top-two model (TopTwo2's ``n_refinements``).

    p_i: eq. (5) with per-worker normalisation on all responses against ``top``;
    q_j: (sum_p/2 + (n_g - n_h)/2 + shrink q_prior) / (sum_p + shrink), the moment
    equation E[n_g - n_h] = (2 q - 1) sum_p shrunk towards ``q_prior``; then eq. (6).
    """
    K = R.n_labels
    p = _reliability(R, top, "per_worker", n_responses=R.worker_counts())
    p = np.clip(np.nan_to_num(p, nan=MIN_RELIABILITY), MIN_RELIABILITY, MAX_RELIABILITY)
    counts = R.task_label_counts()
    rows = np.arange(R.n_tasks)
    g = np.clip(top[:, 0] - 1, 0, K - 1)
    h = np.clip(top[:, 1] - 1, 0, K - 1)
    psum = np.bincount(R.tasks, weights=p[R.workers], minlength=R.n_tasks)
    num = 0.5 * psum + 0.5 * (counts[rows, g] - counts[rows, h]) + shrink * q_prior
    den = psum + shrink
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.where(den > 0, num / np.where(den > 0, den, 1.0), q_prior)
    q = np.clip(q, *CONFUSION_CLIP)
    return plugin_mle(R, p, q), p, q


class OracleMLE(BaseEstimator):
    r"""Eq. (6) with the true :math:`(\mathbf p, \mathbf q)`: the paper's oracle MLE.

    The maximum-likelihood pair of every task when the model's parameters are known
    (the reference curve of the paper's figures):
    :math:`\arg\max_{a \ne b} \sum_i \log(K p_i q_j/(1-p_i)+1)\,\mathbb 1(A_{ij}=a)
    + \log(K p_i (1-q_j)/(1-p_i)+1)\,\mathbb 1(A_{ij}=b)`; ties go to the smaller a,
    then b. :func:`toptwo.reference.oracle_mle` is the same, by brute force.

    Parameters
    ----------
    reliability : array-like of shape (n_workers,)
        True :math:`p_i` in [0, 1]; clipped to [0, 1 - 1e-9] so that a hammer
        (:math:`p_i = 1`) keeps a finite, dominant weight.
    confusion : array-like of shape (n_tasks,) or (n_tasks, T)
        True :math:`q_j` in [1/2, 1] (or top-T weights summing to 1 per row).

    Attributes
    ----------
    top_two_, top_ : ndarray of shape (n_tasks, 2), (n_tasks, T)
        The MLE labels; (0, 0) for a task with no response.
    confusion_ : ndarray of shape (n_tasks,)
        The given q (first weight for top-T), NaN for a task with no response.
    reliability_ : ndarray of shape (n_workers,)
        The given p.

    Examples
    --------
    >>> import toptwo
    >>> model = toptwo.TopTwoModel.random(40, 200, 4, rng=0)
    >>> A = model.sample(0.5, rng=1)
    >>> oracle = toptwo.OracleMLE(model.reliability, model.confusion).fit(A)
    >>> round(toptwo.top_two_errors(oracle.top_two_, model.top_two)["pair"], 3)
    0.31
    """

    def __init__(self, reliability: Any, confusion: Any):
        self.reliability = reliability
        self.confusion = confusion

    _parameter_constraints = {
        "reliability": [RealArray(low=0.0, high=1.0)],
        "confusion": [RealArray()],
    }

    def fit(self, A: Any, n_labels: int | None = None) -> "OracleMLE":
        params = self._validate_params()
        p, q = params["reliability"], params["confusion"]
        R = as_responses(A, n_labels, owner="OracleMLE.fit")
        check_dense_cost(R, "OracleMLE.fit")              # before any (m, K) array
        # shapes against the data; q's range depends on its shape (q_j or top-T weights)
        check_length(p, "reliability", owner="OracleMLE", length=R.n_workers)
        if q.ndim == 1:
            q = check_probability_vector(q, "confusion", owner="OracleMLE", low=0.5, high=1.0,
                                         length=R.n_tasks)
        elif q.ndim >= 1 and q.shape[0] != R.n_tasks:
            raise ValueError(f"`confusion` of OracleMLE must have n_tasks={R.n_tasks} rows; "
                             f"got shape {q.shape}.")
        else:
            q = _check_confusion(q, R, owner="OracleMLE")
            off = np.abs(q.sum(axis=1) - 1.0) > 1e-9
            if off.any():
                j = int(np.argmax(off))
                raise ValueError(f"`confusion` of OracleMLE with T = {q.shape[1]} weights per "
                                 f"task must have rows summing to 1 (the top-T model as "
                                 f"corrected in the README); row {j} sums to "
                                 f"{float(q[j].sum())!r}.")
        top = plugin_mle(R, np.minimum(p, 1.0 - 1e-9), q)
        self.top_ = top
        self.top_two_ = top[:, :2]
        self.reliability_ = p
        answered = R.task_counts() > 0
        conf = q if q.ndim == 1 else q[:, 0]
        self.confusion_ = np.where(answered, conf, np.nan)
        self._record_input(R)
        return self
