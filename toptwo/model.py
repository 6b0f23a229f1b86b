r"""The top-two model of Jeong & Chung (ICML 2023), eq. (1) [`eqn:A_dist`], and its top-T
generalization (Appendix, eq. [`eqn:topk_dist`]).

There are n workers and m tasks with K answer choices. Task j has a ground truth g_j
and a most confusing answer h_j != g_j; worker i has reliability p_i in [0, 1] and task
j has confusion probability q_j in (1/2, 1]. Each (worker, task) pair is observed
independently with probability s, and then::

    P(A_ij = g_j) = s (p_i q_j       + (1 - p_i)/K)
    P(A_ij = h_j) = s (p_i (1 - q_j) + (1 - p_i)/K)
    P(A_ij = b)   = s (1 - p_i)/K            for each b not in {g_j, h_j}
    P(A_ij = 0)   = 1 - s                    (not answered)

A worker with p_i = 0 is a *spammer* (uniform guesses); p_i = 1 is a *hammer*.

Top-T model. Task j has T plausible answers g_j1, ..., g_jT with weights
q_j1 >= ... >= q_jT; a reliable draw picks g_jt with probability q_jt. We require
sum_t q_jt = 1, which makes the top-two model the case T = 2 with (q_j, 1 - q_j). The
paper's appendix allows sum_t q_jt < 1 with the leftover mass p_i (1 - sum_t q_jt)
placed on *each* remaining label, which does not sum to one; spread evenly instead,
the leftover mass shifts Delta r of every other label away from 1/K, ||p|| is no longer
identifiable from the rank-one structure, and step 5 of Algorithm 3 is biased (see
``theory_checks``). The constraint keeps Algorithms 3-4 exact at the population level.

Proposition 1 [`prop:binary`]. With the binary conversion A^(k) (see
:mod:`toptwo.binary`), E[A^(k)] - s(K - 2k)/K * 1 = 2 s p (r^(k))^T where, in general,
r_j^(k) = k/K - sum_{c <= k} w_j(c) and w_j(c) is the weight of label c (q_j on g_j,
1 - q_j on h_j, 0 elsewhere). This reproduces both cases of the proposition.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import (_check_real, check_int, check_probability_vector, check_rng,
                          check_sampling_rate)
from .responses import Responses, as_responses

__all__ = ["TopTwoModel", "SCENARIOS", "label_distribution", "kl_divergence_per_task",
           "kl_divergence_bar", "answer_frequencies"]

#: Up to this many (worker, task) pairs the sampler draws one uniform per pair; above
#: it, per-worker binomial counts and distinct task draws (never n x m memory).
DENSE_MASK_MAX_PAIRS = 1 << 24

#: The four scenarios of the paper's Table 1 [`tab:synth_setup1`].
SCENARIOS = ("easy", "hard", "few_smart", "high_variance")


def _uniform_half_open(rng: np.random.Generator, low: float, high: float, size) -> np.ndarray:
    """Uniform draws on (low, high] (so q never equals 1/2 exactly)."""
    return low + (high - low) * (1.0 - rng.random(size))


def label_distribution(reliability: Any, confusion: Any, a: Any, b: Any,
                       n_labels: int) -> np.ndarray:
    """mu_{(a,b)}: the answer distribution of eq. (1) given that an answer is given.

    ``mu[..., c-1] = p q + (1-p)/K`` for c = a, ``p (1-q) + (1-p)/K`` for c = b and
    ``(1-p)/K`` otherwise (Sec. 5, the mu^(i,j)_(a,b) behind D-bar and eq. (6)).
    Inputs broadcast against each other; the result has a trailing axis of length K.
    """
    K = check_int(n_labels, "n_labels", owner="label_distribution", minimum=2)
    p = np.asarray(reliability, dtype=float)[..., None]
    q = np.asarray(confusion, dtype=float)[..., None]
    a = np.asarray(a)[..., None]
    b = np.asarray(b)[..., None]
    c = np.arange(1, K + 1)
    base = (1.0 - p) / K
    return base + p * (q * (c == a) + (1.0 - q) * (c == b))


class TopTwoModel:
    r"""Parameters (p, q, g, h, K) of the top-two model, eq. (1), and a sampler.

    Each (worker, task) pair is observed with probability s; an observed answer is

    .. math::

        A_{ij} = \begin{cases} g_j & \text{w.p. } p_i q_j + (1 - p_i)/K, \\
        h_j & \text{w.p. } p_i (1 - q_j) + (1 - p_i)/K, \\
        b \notin \{g_j, h_j\} & \text{w.p. } (1 - p_i)/K \text{ each}
        \end{cases} \quad \text{(eq. (1), given that (i, j) is observed)}.

    For the top-T model (Appendix) the T plausible answers get :math:`p_i q_{jt} +
    (1 - p_i)/K`.

    Parameters
    ----------
    reliability : array-like of shape (n_workers,)
        p_i in [0, 1].
    confusion : array-like of shape (n_tasks,) or (n_tasks, T)
        q_j in (1/2, 1] for the top-two model. For the top-T model, a (n_tasks, T)
        array of weights q_j1 >= ... >= q_jT >= 0 summing to one per row.
    top_two : array-like of int, shape (n_tasks, 2) or (n_tasks, T)
        Columns (g_j, h_j) (or g_j1..g_jT), distinct labels in 1..K per row.
    n_labels : int
        K >= 2 (and T < K).

    Attributes
    ----------
    reliability, confusion, top_two, n_labels, n_workers, n_tasks, n_top
    weights : ndarray of shape (n_tasks, T)
        q_jt per plausible answer ((q_j, 1 - q_j) for T = 2).

    Examples
    --------
    >>> import toptwo
    >>> model = toptwo.TopTwoModel.scenario("hard", n_workers=50, n_tasks=500, n_labels=5, rng=0)
    >>> A = model.sample(0.2, rng=1)
    >>> A.shape
    (50, 500)
    >>> P = model.label_probabilities()              # (n, m, K): eq. (1) for every (i, j)
    >>> float(abs(P.sum(axis=-1) - 1).max()) < 1e-12
    True
    """

    def __init__(self, reliability: Any, confusion: Any, top_two: Any, n_labels: int):
        owner = "TopTwoModel"
        self.reliability = check_probability_vector(reliability, "reliability", owner=owner,
                                                    low=0.0, high=1.0)
        top = np.asarray(top_two)
        if top.ndim != 2 or top.shape[1] < 2:
            raise ValueError(f"`top_two` of {owner} must have shape (n_tasks, T) with T >= 2; "
                             f"got shape {top.shape} instead.")
        if not np.issubdtype(top.dtype, np.integer):
            raise TypeError(f"`top_two` of {owner} must hold integer labels; got dtype "
                            f"{top.dtype} instead.")
        T = top.shape[1]
        K = check_int(n_labels, "n_labels", owner=owner, minimum=2)
        if T >= K:
            raise ValueError(f"{owner} needs T < K (at least one label outside the top T); "
                             f"got T={T} with n_labels={K}.")
        bad = (top < 1) | (top > K)
        if bad.any():
            j, t = (int(v) for v in np.argwhere(bad)[0])
            raise ValueError(f"`top_two` of {owner} must hold labels in 1..{K}; found "
                             f"{int(top[j, t])} at task {j}, column {t}.")
        srt = np.sort(top, axis=1)
        same = (srt[:, 1:] == srt[:, :-1]).any(axis=1)
        if same.any():
            j = int(np.argmax(same))
            raise ValueError(f"`top_two` of {owner} must hold distinct labels per task "
                             f"(g_j != h_j); task {j} has {top[j].tolist()}.")
        m = top.shape[0]
        conf = np.asarray(confusion, dtype=float)
        if T == 2 and conf.ndim == 1:
            conf = check_probability_vector(conf, "confusion", owner=owner, low=0.5, high=1.0,
                                            low_open=True, length=m)
            weights = np.column_stack([conf, 1.0 - conf])
        else:
            if conf.shape != (m, T):
                raise ValueError(f"`confusion` of {owner} must have shape (n_tasks,) for the "
                                 f"top-two model or (n_tasks, T) = {(m, T)}; got shape "
                                 f"{conf.shape} instead.")
            if not np.isfinite(conf).all() or (conf < 0).any():
                raise ValueError(f"`confusion` of {owner} must hold finite weights >= 0.")
            if (np.diff(conf, axis=1) > 1e-12).any():
                j = int(np.argmax((np.diff(conf, axis=1) > 1e-12).any(axis=1)))
                raise ValueError(f"`confusion` of {owner} must be non-increasing along each row "
                                 f"(q_j1 >= ... >= q_jT); task {j} has {conf[j].tolist()}.")
            off = np.abs(conf.sum(axis=1) - 1.0) > 1e-9
            if off.any():
                j = int(np.argmax(off))
                raise ValueError(f"each row of `confusion` of {owner} must sum to 1 (the T "
                                 f"plausible answers share the reliable mass); task {j} sums "
                                 f"to {float(conf[j].sum())!r}.")
            weights = conf
            if T == 2:
                conf = conf[:, 0].copy()
        self.confusion = conf
        self.weights = weights
        self.top_two = top.astype(np.int64)
        self.n_labels = K
        self.n_workers = self.reliability.shape[0]
        self.n_tasks = m
        self.n_top = T

    def __repr__(self) -> str:
        return (f"TopTwoModel(n_workers={self.n_workers}, n_tasks={self.n_tasks}, "
                f"n_labels={self.n_labels}, n_top={self.n_top})")

    # -------------------------------------------------------------- builders
    @classmethod
    def random(cls, n_workers: int = 50, n_tasks: int = 500, n_labels: int = 5, *,
               reliability_range: tuple[float, float] = (0.0, 1.0),
               confusion_range: tuple[float, float] = (0.5, 1.0),
               spammer_fraction: float = 0.0, n_top: int = 2,
               rng: Any = None) -> "TopTwoModel":
        """A random instance with the knobs of the paper's robustness sweeps (App. D).

        p_i ~ Uniform[reliability_range]; a ``spammer_fraction`` of the workers (chosen
        at random, rounded to the nearest count) gets p_i = 0. q_j ~ Uniform on
        (low, high] of ``confusion_range``. The top T answers of each task are a uniformly
        random ordered tuple of distinct labels. For T > 2 the weights are a sorted
        Dirichlet(1, ..., 1) draw (``confusion_range`` is then unused).
        """
        owner = "TopTwoModel.random"
        n = check_int(n_workers, "n_workers", owner=owner, minimum=1)
        m = check_int(n_tasks, "n_tasks", owner=owner, minimum=1)
        K = check_int(n_labels, "n_labels", owner=owner, minimum=2)
        T = check_int(n_top, "n_top", owner=owner, minimum=2)
        if T >= K:
            raise ValueError(f"{owner} needs n_top < n_labels; got n_top={T}, n_labels={K}.")
        lo, hi = _check_range(reliability_range, "reliability_range", 0.0, 1.0, owner)
        qlo, qhi = _check_range(confusion_range, "confusion_range", 0.5, 1.0, owner)
        if not 0.0 <= _check_real(spammer_fraction, "spammer_fraction", owner=owner) <= 1.0:
            raise ValueError(f"The 'spammer_fraction' parameter of {owner} must be in [0, 1]; "
                             f"got {spammer_fraction!r} instead.")
        gen = check_rng(rng, owner=owner)
        p = lo + (hi - lo) * gen.random(n)
        n_spam = int(round(spammer_fraction * n))
        if n_spam:
            p[gen.choice(n, n_spam, replace=False)] = 0.0
        top = _random_tuples(gen, m, K, T)
        if T == 2:
            conf = _uniform_half_open(gen, qlo, qhi, m)
        else:
            conf = -np.sort(-gen.dirichlet(np.ones(T), size=m), axis=1)
        return cls(p, conf, top, K)

    @classmethod
    def scenario(cls, name: str, n_workers: int = 50, n_tasks: int = 500,
                 n_labels: int = 5, *, rng: Any = None) -> "TopTwoModel":
        """The four synthetic scenarios of Table 1 [`tab:synth_setup1`].

        ==============  ====================================  ================================
        name            workers p_i                           tasks q_j
        ==============  ====================================  ================================
        easy            Uniform[0, 1]                         Uniform(0.9, 1]
        hard            Uniform[0, 1]                         Uniform(0.5, 0.6]
        few_smart       90%: Uniform[0, 0.1], 10%: [0.9, 1]   Uniform(0.5, 1]
        high_variance   Uniform[0, 1] (see below)             50%: (0.5, 0.6], 50%: (0.9, 1]
        ==============  ====================================  ================================

        ``high_variance``: Table 1 prints p_i in [0, 0.1], but the authors' released
        experiment data draw p_i from [0, 1], and with p_i <= 0.1 the average queries per
        task n s <= 10 of Fig. 1 carry almost no information (||p||^2/n <= 0.0033 makes
        the minimax bound of Theorem 3(a) stay above 0.77 error for g alone), while Fig. 1
        shows errors falling towards 0. We follow the released data: p_i ~ Uniform[0, 1].
        The *high variance* is in q. The few-smart split is exact: round(0.1 n) hammers.
        """
        owner = "TopTwoModel.scenario"
        if name not in SCENARIOS:
            raise ValueError(f"Unknown scenario {name!r} for {owner}; choose one of "
                             f"{', '.join(SCENARIOS)} (the paper's Table 1).")
        n = check_int(n_workers, "n_workers", owner=owner, minimum=1)
        m = check_int(n_tasks, "n_tasks", owner=owner, minimum=1)
        K = check_int(n_labels, "n_labels", owner=owner, minimum=3)
        gen = check_rng(rng, owner=owner)
        if name == "few_smart":
            n_smart = int(round(0.1 * n))
            p = gen.random(n) * 0.1
            smart = gen.choice(n, n_smart, replace=False)
            p[smart] = 0.9 + 0.1 * gen.random(n_smart)
        else:
            p = gen.random(n)
        if name == "easy":
            q = _uniform_half_open(gen, 0.9, 1.0, m)
        elif name == "hard":
            q = _uniform_half_open(gen, 0.5, 0.6, m)
        elif name == "few_smart":
            q = _uniform_half_open(gen, 0.5, 1.0, m)
        else:
            hardq = gen.random(m) < 0.5
            q = np.where(hardq, _uniform_half_open(gen, 0.5, 0.6, m),
                         _uniform_half_open(gen, 0.9, 1.0, m))
        top = _random_tuples(gen, m, K, 2)
        return cls(p, q, top, K)

    @classmethod
    def spammer_hammer(cls, n_workers: int, n_tasks: int, n_labels: int, *,
                       hammer_fraction: float, confusion_range: tuple[float, float] = (0.5, 1.0),
                       rng: Any = None) -> "TopTwoModel":
        """Spammer-hammer crowd (Sec. 5): round(alpha n) workers with p_i = 1, the rest 0.

        Then ||p||^2 / n = alpha, the quantity p-bar of Theorem 3(a) [`thm:converse`].
        """
        owner = "TopTwoModel.spammer_hammer"
        n = check_int(n_workers, "n_workers", owner=owner, minimum=1)
        if not 0.0 <= _check_real(hammer_fraction, "hammer_fraction", owner=owner) <= 1.0:
            raise ValueError(f"The 'hammer_fraction' parameter of {owner} must be in [0, 1]; "
                             f"got {hammer_fraction!r} instead.")
        gen = check_rng(rng, owner=owner)
        p = np.zeros(n)
        p[gen.choice(n, int(round(hammer_fraction * n)), replace=False)] = 1.0
        m = check_int(n_tasks, "n_tasks", owner=owner, minimum=1)
        K = check_int(n_labels, "n_labels", owner=owner, minimum=3)
        qlo, qhi = _check_range(confusion_range, "confusion_range", 0.5, 1.0, owner)
        q = _uniform_half_open(gen, qlo, qhi, m)
        return cls(p, q, _random_tuples(gen, m, K, 2), K)

    # -------------------------------------------------------------- sampling
    def sample(self, sampling_rate: float, rng: Any = None) -> Responses:
        """Draw a response matrix A from eq. (1) (or the top-T model).

        Each (worker, task) pair is observed independently with probability
        ``sampling_rate`` = s. Returns :class:`~toptwo.Responses` (sparse; use
        ``.toarray()`` for a small dense view).
        """
        owner = "TopTwoModel.sample"
        s = check_sampling_rate(sampling_rate, "sampling_rate", owner=owner)
        gen = check_rng(rng, owner=owner)
        n, m, K = self.n_workers, self.n_tasks, self.n_labels
        if n * m <= DENSE_MASK_MAX_PAIRS:
            w, t = np.nonzero(gen.random((n, m)) < s)
        else:  # never materialise n x m: per-worker counts, then distinct tasks
            counts = np.asarray(gen.binomial(m, s, size=n))
            w = np.repeat(np.arange(n), counts)
            t = np.concatenate([np.sort(gen.choice(m, c, replace=False)) for c in counts])
        nnz = w.shape[0]
        reliable = gen.random(nnz) < self.reliability[w]
        cum = np.cumsum(self.weights[t], axis=1)
        pick = (gen.random(nnz)[:, None] < cum).argmax(axis=1)
        labels = np.where(reliable, self.top_two[t, pick], gen.integers(1, K + 1, size=nnz))
        return Responses(w.astype(np.int32), t.astype(np.int32), labels.astype(np.int32),
                         shape=(n, m), n_labels=K)

    def add_answers(self, responses: Responses, tasks: Any, rng: Any = None) -> Responses:
        """One more answer for each listed task, as an adaptive-labelling platform asks.

        For every task in ``tasks`` (in order; a task may appear more than once) a worker
        who has not answered it yet is drawn uniformly, and the answer is drawn from
        eq. (1): with probability p_i the task's signal (g w.p. q_j, h otherwise), else a
        uniform label. A task every worker has answered is skipped. Returns new
        :class:`~toptwo.Responses` (the input is not changed). For teaching-sized
        simulations (a Python loop over the requested tasks).
        """
        owner = "TopTwoModel.add_answers"
        gen = check_rng(rng, owner=owner)
        if responses.shape != (self.n_workers, self.n_tasks):
            raise ValueError(f"{owner}: responses of shape {responses.shape} do not match the "
                             f"model's (n_workers, n_tasks) = {(self.n_workers, self.n_tasks)}.")
        todo = np.asarray(tasks)
        if todo.ndim != 1 or not np.issubdtype(todo.dtype, np.integer):
            raise TypeError(f"`tasks` of {owner} must be a 1-D array of task indices; got "
                            f"{todo.dtype} with shape {todo.shape}.")
        if todo.size and (todo.min() < 0 or todo.max() >= self.n_tasks):
            bad = int(todo[(todo < 0) | (todo >= self.n_tasks)][0])
            raise ValueError(f"`tasks` of {owner} must hold indices in 0..{self.n_tasks - 1}; "
                             f"found {bad}.")
        answered: dict[int, set[int]] = {}
        for w, t in zip(responses.workers.tolist(), responses.tasks.tolist()):
            answered.setdefault(t, set()).add(w)
        K = self.n_labels
        new_w, new_t, new_l = [], [], []
        for t in todo.tolist():
            have = answered.setdefault(t, set())
            free = np.setdiff1d(np.arange(self.n_workers), np.fromiter(have, int, len(have)))
            if free.size == 0:
                continue
            i = int(gen.choice(free))
            have.add(i)
            if gen.random() < self.reliability[i]:
                pick = int((gen.random() < np.cumsum(self.weights[t])).argmax())
                label = int(self.top_two[t, pick])
            else:
                label = int(gen.integers(1, K + 1))
            new_w.append(i)
            new_t.append(t)
            new_l.append(label)
        return Responses.from_triples(
            np.concatenate([responses.workers, np.asarray(new_w, dtype=np.int64)]),
            np.concatenate([responses.tasks, np.asarray(new_t, dtype=np.int64)]),
            np.concatenate([responses.labels, np.asarray(new_l, dtype=np.int64)]),
            n_workers=self.n_workers, n_tasks=self.n_tasks, n_labels=K)

    # ------------------------------------------------------ theory quantities
    @property
    def norm_p(self) -> float:
        """||p||_2, the collective quality of the crowd (Sec. 4-5)."""
        return float(np.linalg.norm(self.reliability))

    @property
    def p_bar(self) -> float:
        """||p||_2^2 / n, the p-bar of Theorem 3(a)."""
        return float(self.reliability @ self.reliability / self.n_workers)

    def label_weights(self) -> np.ndarray:
        """(n_tasks, K) array w_j(c): q_jt on g_jt, 0 on the other labels."""
        out = np.zeros((self.n_tasks, self.n_labels))
        rows = np.repeat(np.arange(self.n_tasks), self.n_top)
        out[rows, self.top_two.ravel() - 1] = self.weights.ravel()
        return out

    def label_probabilities(self) -> np.ndarray:
        """mu^(i,j): (n_workers, n_tasks, K) answer distribution given an answer (eq. (1)).

        Dense; for teaching-sized instances.
        """
        p = self.reliability[:, None, None]
        return (1.0 - p) / self.n_labels + p * self.label_weights()[None, :, :]

    def r(self, k: int) -> np.ndarray:
        """r^(k) of Proposition 1 [`prop:binary`], shape (n_tasks,), for 0 <= k <= K.

        r_j^(k) = k/K - sum_{c <= k} w_j(c); r^(0) = r^(K) = 0.
        """
        k = check_int(k, "k", owner="TopTwoModel.r", minimum=0)
        if k > self.n_labels:
            raise ValueError(f"k must be in 0..K={self.n_labels}; got k={k}.")
        w = self.label_weights()[:, :k].sum(axis=1)
        return k / self.n_labels - w

    def delta_r(self) -> np.ndarray:
        """Delta r_j^(k) = r_j^(k) - r_j^(k-1), eq. (2) [`eqn:delta_r`]; shape (n_tasks, K).

        Equals 1/K - q_j at k = g_j, 1/K - (1 - q_j) at k = h_j and 1/K elsewhere.
        """
        return 1.0 / self.n_labels - self.label_weights()

    def expected_binary(self, k: int, sampling_rate: float) -> np.ndarray:
        """E[A^(k)] from eq. (1): s (K - 2k)/K + 2 s p (r^(k))^T (Proposition 1). Dense."""
        s = check_sampling_rate(sampling_rate, owner="TopTwoModel.expected_binary")
        K = self.n_labels
        return s * (K - 2 * k) / K + 2 * s * np.outer(self.reliability, self.r(k))


def _random_tuples(gen: np.random.Generator, m: int, K: int, T: int) -> np.ndarray:
    """m uniformly random ordered T-tuples of distinct labels in 1..K."""
    keys = gen.random((m, K))
    return (np.argsort(keys, axis=1)[:, :T] + 1).astype(np.int64)


def _check_range(rng_pair: Any, name: str, low: float, high: float,
                 owner: str) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in rng_pair)
    except (TypeError, ValueError):
        raise TypeError(f"The '{name}' parameter of {owner} must be a pair (low, high); "
                        f"got {rng_pair!r} instead.") from None
    if not (low <= a <= b <= high):
        raise ValueError(f"The '{name}' parameter of {owner} must satisfy {low} <= low <= high "
                         f"<= {high}; got {rng_pair!r} instead.")
    return a, b


def _all_pairs(K: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.meshgrid(np.arange(1, K + 1), np.arange(1, K + 1), indexing="ij")
    keep = a != b
    return a[keep], b[keep]


def _kl(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """KL(P, Q) along the last axis; 0 log 0 = 0, P > 0 = Q gives +inf."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(P > 0, P * (np.log(P) - np.log(Q)), 0.0)
    return terms.sum(axis=-1)


def kl_divergence_per_task(model: TopTwoModel, *, max_elements: int = 4_000_000
                           ) -> np.ndarray:
    """D-bar^(j) of Sec. 5 for every task j (shape (n_tasks,)).

    D-bar^(j) = min over (a, b) != (g_j, h_j), a != b, of
    (1/n) sum_i KL(mu^(i,j)_(g_j,h_j), mu^(i,j)_(a,b)), with mu from eq. (1)
    (:func:`toptwo.label_distribution`). Infinite terms arise when a worker with
    p_i = 1 gives positive probability to a label the alternative excludes.
    Computed in chunks of tasks so that no array exceeds ``max_elements``.
    """
    if not isinstance(model, TopTwoModel) or model.n_top != 2:
        raise TypeError("kl_divergence_per_task needs a top-two TopTwoModel (n_top=2).")
    K, n, m = model.n_labels, model.n_workers, model.n_tasks
    a, b = _all_pairs(K)
    P = a.size
    p = model.reliability
    g, h = model.top_two[:, 0], model.top_two[:, 1]
    chunk = max(1, int(max_elements // max(1, n * P * K)))
    out = np.empty(m)
    for start in range(0, m, chunk):
        sl = slice(start, min(m, start + chunk))
        q = model.confusion[sl]
        mu = label_distribution(p[:, None], q[None, :], g[None, sl], h[None, sl], K)
        alt = label_distribution(p[:, None, None], q[None, :, None], a[None, None, :],
                                 b[None, None, :], K)                    # (n, mc, P, K)
        kl = _kl(mu[:, :, None, :], alt).mean(axis=0)                   # (mc, P)
        same = (a[None, :] == g[sl, None]) & (b[None, :] == h[sl, None])
        kl[same] = np.inf
        out[sl] = kl.min(axis=1)
    return out


def kl_divergence_bar(model: TopTwoModel) -> float:
    """D-bar of Sec. 5: the minimum over tasks of :func:`kl_divergence_per_task`.

    Positive exactly when every q_j is in (1/2, 1) and some p_i > 0 (Sec. 5);
    Theorem 3(b) [`thm:converse`] says no estimator recovers a constant fraction of
    the pairs when s <= 1/(4 n D-bar).
    """
    return float(kl_divergence_per_task(model).min())


def answer_frequencies(model: TopTwoModel, A: Any, task: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Empirical answer frequencies of one task against eq. (1) [`eqn:A_dist`].

    :func:`toptwo.viz.plot_answer_frequencies` draws both, one panel per task.

    Parameters
    ----------
    model : TopTwoModel
        The model A was sampled from (top-two or top-T).
    A : array-like, sparse matrix or Responses
        Response matrix of shape (n_workers, n_tasks), labels 1..K, 0 = not answered.
    task : int
        Column index j (0-based).

    Returns
    -------
    empirical : ndarray of shape (K,)
        Fraction of the answers to task j equal to each label 1..K (NaN if no answer).
    expected : ndarray of shape (K,)
        E[empirical | which workers answered] = mean over the answering workers i of
        P(A_ij = c | A_ij != 0), i.e. eq. (1) divided by s (NaN if no answer).
    n_answers : int
        Number of workers who answered task j.
    """
    owner = "answer_frequencies"
    if not isinstance(model, TopTwoModel):
        raise TypeError(f"The 'model' parameter of {owner} must be a TopTwoModel; got "
                        f"{type(model).__name__} instead.")
    R = as_responses(A, model.n_labels, owner=owner)
    if R.shape != (model.n_workers, model.n_tasks):
        raise ValueError(f"The 'A' parameter of {owner} must have the model's shape "
                         f"{(model.n_workers, model.n_tasks)}; got {R.shape} instead.")
    j = _check_task(task, model.n_tasks, owner)
    K = model.n_labels
    on = R.tasks == j
    workers, labels = R.workers[on], R.labels[on]
    n_answers = int(workers.shape[0])
    if n_answers == 0:
        return np.full(K, np.nan), np.full(K, np.nan), 0
    empirical = np.bincount(labels - 1, minlength=K)[:K] / n_answers
    p = model.reliability[workers][:, None]
    expected = ((1.0 - p) / K + p * model.label_weights()[j][None, :]).mean(axis=0)
    return empirical, expected, n_answers


def _check_task(task: Any, n_tasks: int, owner: str) -> int:
    if isinstance(task, (bool, np.bool_)) or not isinstance(task, (int, np.integer)):
        raise TypeError(f"Task indices of {owner} must be ints; got {task!r} instead.")
    if not 0 <= int(task) < n_tasks:
        raise ValueError(f"Task indices of {owner} must be in 0..{n_tasks - 1}; got {task} "
                         f"instead.")
    return int(task)


def soft_labels(top_two: np.ndarray, confusion: np.ndarray, n_labels: int) -> np.ndarray:
    """The paper's top-two soft labels (Sec. 6.3): q on g, 1 - q on h, 0 elsewhere."""
    m = top_two.shape[0]
    out = np.zeros((m, n_labels))
    ok = top_two[:, 0] > 0
    rows = np.flatnonzero(ok)
    out[rows, top_two[ok, 0] - 1] = confusion[ok]
    out[rows, top_two[ok, 1] - 1] = 1.0 - confusion[ok]
    out[~ok] = np.nan
    return out
