"""Shared output of the score-based baselines: top two from per-label log scores.

Every baseline in :mod:`toptwo.baselines.mmsr`, :mod:`toptwo.baselines.mace`, :mod:`toptwo.baselines.glad`,
:mod:`toptwo.baselines.ebcc` and :mod:`toptwo.baselines.opt_ds` ends with an (n_tasks, K) array of
unnormalised log posteriors ("log scores"); this module turns it into the estimator
surface the rest of ``toptwo`` uses (``top_two_``, ``posteriors_``, ``confusion_``,
``fit_predict``, ``soft_labels``, ``n_*_in_``).

Ties. Scores are sums of floating-point terms, so two labels with mathematically equal
scores (e.g. the same number of votes from workers of the same weight) can differ by
round-off. Labels whose score is within ``TIE_RTOL * max(1, |best|)`` of the best are
treated as tied; among tied labels the one with the most votes wins (so a model that
cannot tell the labels apart -- a lone worker, one answer per task, all weights zero --
still returns the answers given), then the smallest label; likewise for the
second label among the remaining ones.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

import numpy as np

from .._base import BaseEstimator

from ..responses import Responses
from ..model import soft_labels as _soft_labels

__all__ = ["MAX_DENSE_ENTRIES", "MAX_WORK", "check_dense_size", "TIE_RTOL", "task_keys",
           "tie_jitter", "worker_keys", "key_uniforms", "content_groups", "EM_TOL",
           "em_converged",
           "top_two_with_ties", "ScoreOutputMixin", "FIT_PARAMETERS", "fit_doc"]

#: Largest number of float64 entries a baseline may hold in its dense working arrays
#: (all copies together): 2**27 entries = 1 GiB. Beyond, ``fit`` refuses up front with a
#: message naming the size, instead of a MemoryError (or swapping) after a long run.
MAX_DENSE_ENTRIES = 2**27

#: Largest number of multiply-adds of the dense steps a baseline may need (about a minute
#: of pure-NumPy work on one core); beyond, ``fit`` refuses up front.
MAX_WORK = 2**32


def check_dense_size(owner: str, what: str, size: int, *, copies: int = 1,
                     hint: str = "", work: int | None = None) -> None:
    """Refuse a fit whose dense arrays (or one step's work) would exceed the limits.

    ``what`` names the array and its shape in the data's terms (e.g. "the n_workers x
    n_workers worker covariance, 8000 x 8000"); ``size`` is its number of entries and
    ``copies`` how many such arrays the method holds at once.
    """
    need = int(size) * int(copies)
    if need > MAX_DENSE_ENTRIES:
        raise ValueError(
            f"{owner} would build {what} = {int(size):,} entries ({copies} cop"
            f"{'y' if copies == 1 else 'ies'}, {need * 8 / 2**30:.1f} GiB), more than "
            f"toptwo.baselines.MAX_DENSE_ENTRIES = {MAX_DENSE_ENTRIES:,} entries "
            f"({MAX_DENSE_ENTRIES * 8 / 2**30:.0f} GiB). {hint}".rstrip())
    if work is not None and work > MAX_WORK:
        raise ValueError(
            f"{owner} would need about {int(work):.2e} multiply-adds for {what} "
            f"(more than toptwo.baselines.MAX_WORK = {MAX_WORK:.2e}, about a minute). "
            f"{hint}".rstrip())


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser (Steele et al. 2014), elementwise on uint64 (wrapping)."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _uint_hash(counts: np.ndarray, z: np.ndarray) -> np.ndarray:
    """sum_c counts[:, c] z_c (mod 2^64), mixed: a hash of each row of counts."""
    with np.errstate(over="ignore"):
        return _splitmix64((counts.astype(np.uint64) * z[None, :]).sum(axis=1,
                                                                      dtype=np.uint64))


def task_keys(R: Any, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A 64-bit identity of each task from its content, not its position or id.

    The key of task j mixes (a) its label counts and (b) the sum over its answers of a
    hash of (the answering worker's label profile, the label given); a worker's profile
    is its own label counts. Both are invariant under permutations of workers, tasks and
    rows and the same for every input form (matrix, sparse, triples, CSV with ids).
    Two tasks get the same key only if equally-profiled workers gave them the same
    labels. O(nnz + (n + m) K) time and memory.
    """
    m, K = counts.shape
    z = rng.integers(0, 2**63, size=(2, K), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    salt = rng.integers(0, 2**63, dtype=np.uint64)
    index = R.workers.astype(np.int64) * K + (R.labels - 1)
    profile = np.bincount(index, minlength=R.n_workers * K).reshape(R.n_workers, K)
    hw = _uint_hash(profile, z[1])                              # per worker
    with np.errstate(over="ignore"):
        he = _splitmix64(hw[R.workers] ^ (R.labels.astype(np.uint64)
                                           * np.uint64(0x9E3779B97F4A7C15)))
    # 20-bit integers summed in float64: exact (below 2^53 for < 2^33 answers per task),
    # so the per-task sum does not depend on the order of the answers
    per_task = np.bincount(R.tasks, weights=(he >> np.uint64(44)).astype(np.float64),
                           minlength=m).astype(np.uint64)
    with np.errstate(over="ignore"):
        return _splitmix64(_uint_hash(counts, z[0]) ^ _splitmix64(per_task) ^ salt)


def tie_jitter(keys: np.ndarray, K: int) -> np.ndarray:
    """Jitter in [0, 1) per (task, label): splitmix64 of (task key, label), scaled.

    With ``keys`` from :func:`task_keys` the ranking of a task's labels is a function of
    (seed, the task's content) only. O(m K).
    """
    with np.errstate(over="ignore"):
        lab = np.arange(1, K + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        key = _splitmix64(keys[:, None] ^ lab[None, :])
    return (key >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def worker_keys(R: Any, rng: np.random.Generator) -> np.ndarray:
    """A 64-bit identity of each worker from its content, not its position or id.

    The key of worker i mixes (a) its label profile (its label counts) and (b) the sum
    over its answers of a hash of (the task's :func:`task_keys` key, the label given),
    salted by draws of ``rng``. Invariant under permutations of workers, tasks and rows;
    two workers get the same key only if they gave the same labels to tasks with the
    same keys (e.g. two identical rows). O(nnz + (n + m) K).
    """
    K = R.n_labels
    tk = task_keys(R, R.task_label_counts(), rng)
    z = rng.integers(0, 2**63, size=K, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    salt = rng.integers(0, 2**63, dtype=np.uint64)
    index = R.workers.astype(np.int64) * K + (R.labels - 1)
    profile = np.bincount(index, minlength=R.n_workers * K).reshape(R.n_workers, K)
    with np.errstate(over="ignore"):
        he = _splitmix64(tk[R.tasks] ^ (R.labels.astype(np.uint64)
                                         * np.uint64(0xD1B54A32D192ED03)))
    # 20-bit integers summed exactly in float64: independent of the order of the answers
    per_worker = np.bincount(R.workers, weights=(he >> np.uint64(44)).astype(np.float64),
                             minlength=R.n_workers).astype(np.uint64)
    with np.errstate(over="ignore"):
        return _splitmix64(_uint_hash(profile, z) ^ _splitmix64(per_worker) ^ salt)


def _sum20(index: np.ndarray, h: np.ndarray, size: int) -> np.ndarray:
    """Per-group sums of the top 20 bits of the hashes ``h``: exact in float64 (below
    2^53 for < 2^33 terms), so independent of the order of the terms."""
    return np.bincount(index, weights=(h >> np.uint64(44)).astype(np.float64),
                       minlength=size).astype(np.uint64)


def label_keys(R: Any) -> np.ndarray:
    """A 64-bit identity of each label from its content, not its number (shape (K,)).

    Invariant under renumbering the labels and under permutations of workers, tasks
    and rows: built only from label-free quantities -- how many answers a task has,
    how many of them agree with a given answer, and hashes of workers and tasks made of
    those -- then summed over the answers that gave each label. Two labels get the same
    key only if their answers are alike in all of these (an exact symmetry of the data,
    or a 64-bit collision). Unsalted (no ``rng``): the order is a function of the data.
    O(nnz + m K).
    """
    K = R.n_labels
    counts = R.task_label_counts()
    lab = R.labels.astype(np.int64) - 1
    agree = counts[R.tasks, lab].astype(np.uint64)                  # answers like this one
    task_n = counts.sum(axis=1).astype(np.uint64)
    with np.errstate(over="ignore"):
        c1, c2, c3 = (np.uint64(c) for c in (0x9E3779B97F4A7C15, 0xD1B54A32D192ED03,
                                            0xBF58476D1CE4E5B9))
        hw = _splitmix64(_sum20(R.workers, _splitmix64(task_n[R.tasks] * c1 ^ agree),
                                R.n_workers))
        ht = _splitmix64(_sum20(R.tasks, _splitmix64(hw[R.workers] ^ agree * c2), R.n_tasks))
        per_label = _sum20(lab, _splitmix64(ht[R.tasks] ^ hw[R.workers] * c3 ^ agree), K)
        total = counts.sum(axis=0).astype(np.uint64)
        return _splitmix64(_splitmix64(total) ^ per_label)


def canonical_labels(R: Any) -> tuple[Any, np.ndarray]:
    """``R`` with its labels renumbered by :func:`label_keys`, and the renumbering.

    Returns ``(Rc, rank)``: label ``c + 1`` of ``R`` is label ``rank[c] + 1`` of ``Rc``.
    ``Rc`` is the same whatever numbering of the choices the data came in (except for
    labels with equal keys, kept in their given order), so a step run on ``Rc`` --
    random starts drawn per label, sums over labels, a sort of columns -- does not
    depend on the numbering; an array indexed by labels comes back as ``X[..., rank]``
    (docs/robustness.md).
    """
    from ..responses import Responses
    order = np.argsort(label_keys(R), kind="stable")
    rank = np.empty(R.n_labels, dtype=np.int64)
    rank[order] = np.arange(R.n_labels)
    if (order == np.arange(R.n_labels)).all():
        return R, rank
    labels = (rank[R.labels.astype(np.int64) - 1] + 1).astype(R.labels.dtype)
    return Responses(R.workers, R.tasks, labels, shape=R.shape, n_labels=R.n_labels), rank


def key_uniforms(keys: np.ndarray, d: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform draws in (0, 1), shape (len(keys), d), each a hash of (key, column, a draw).

    The random start of an entity (worker or task) with content key ``keys[i]``
    (:func:`worker_keys`, :func:`task_keys`): equal keys give equal rows, so a start
    drawn this way is equivariant under permutations of the input, and over seeds of
    ``rng`` each entry is uniform. One 64-bit draw of ``rng`` per call. O(len(keys) d).
    """
    salt = rng.integers(0, 2**63, dtype=np.uint64)
    with np.errstate(over="ignore"):
        col = np.arange(1, d + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        h = _splitmix64(_splitmix64(keys ^ salt)[:, None] ^ col[None, :])
    return ((h >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0 ** -53


def content_groups(keys: np.ndarray, n_groups: int,
                   score: np.ndarray | None = None) -> np.ndarray:
    """Split entities into ``n_groups`` nearly equal groups by their content.

    Rank the entities by decreasing ``score`` (a function of their content, exact), ties
    by their content ``keys``; an entity's group is (the rank of the first entity with
    its (score, key)) mod ``n_groups`` -- round-robin, so that each group gets a share
    of every score level. Entities with equal (score, key) share a group, so the split
    is equivariant under permutations of the input (balanced when the keys are
    distinct). Without ``score``, the order of the keys: a random balanced split.
    """
    score = np.zeros(keys.shape) if score is None else np.asarray(score, dtype=float)
    order = np.lexsort((keys, -score))
    ks, ss = keys[order], score[order]
    new = np.r_[True, (ks[1:] != ks[:-1]) | (ss[1:] != ss[:-1])]
    first_rank = np.maximum.accumulate(np.where(new, np.arange(keys.size), 0))
    group = np.empty(keys.size, dtype=np.int64)
    group[order] = first_rank % n_groups
    return group


def logsumexp_rows(x: np.ndarray) -> np.ndarray:
    """log sum_k exp(x[j, k]) per row, shifted by the row maximum (finite rows).

    The one copy used by the EM objectives of DawidSkene and MACE.
    """
    mx = x.max(axis=1)
    return mx + np.log(np.exp(x - mx[:, None]).sum(axis=1))


#: Relative tolerance under which two label scores count as tied (smallest label wins).
TIE_RTOL = 1e-9

#: The stopping convention of every EM in toptwo (Dawid-Skene in all its modes, one-coin
#: Dawid-Skene, GLAD, MACE, TopTwoEM): stop when one iteration changes the objective the
#: EM climbs (its penalised log-likelihood, or log-posterior) by at most ``tol`` per
#: response, |F_t - F_(t-1)| <= tol * nnz. The objective is a sum over responses, so the
#: rule is relative: it asks for the same accuracy per response at every data size (an
#: absolute change needs more iterations the more data there are). The baselines'
#: default is EM_TOL = 1e-5, crowd-kit's value for the same rule (its ELBO per response):
#: with 1e-7 full-matrix Dawid-Skene drifted to its 100-iteration cap at 2 10^6 responses
#: (crowd-kit: 8), and on the 24 cells of benchmarks/em.py stopping at 1e-5 changes its
#: pair error by -0.0019 +- 0.0010 (docs/speed.md, "EM iterations"). TopTwoEM stops at
#: the EM step's guaranteed gain, EM_GAIN_TOL = EM_TOL / 10 per response
#: (``toptwo.extensions._em_grid``): its accuracy target needs it (at 1e-5 its mean gap
#: to the oracle rose by 0.0005). EBCC is variational and keeps its authors' rule
#: (largest change of a class posterior), which does not grow with the data size either.
EM_TOL = 1e-5


def em_converged(previous: float, current: float, nnz: int, tol: float = EM_TOL) -> bool:
    """The EM stopping rule of :data:`EM_TOL`: ``|current - previous| <= tol * nnz``."""
    return abs(current - previous) <= tol * max(int(nnz), 1)


def _first_within(scores: np.ndarray, best: np.ndarray,
                  votes: np.ndarray | None = None) -> np.ndarray:
    tol = TIE_RTOL * np.maximum(1.0, np.abs(best))
    tied = scores >= (best - tol)[:, None]
    if votes is None:
        return np.argmax(tied, axis=1)
    return np.argmax(np.where(tied, votes, -1.0), axis=1)   # most votes, then smallest


def top_two_with_ties(log_scores: np.ndarray, answered: np.ndarray,
                      votes: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Posteriors, top two and confusion from (n_tasks, K) log scores.

    Parameters
    ----------
    log_scores : ndarray of shape (n_tasks, K)
        Unnormalised log posteriors (finite, or -inf for an impossible label) on
        answered rows; other rows are ignored.
    answered : ndarray of bool, shape (n_tasks,)
        Bool array of shape (n_tasks,): tasks with at least one response.
    votes : ndarray of shape (n_tasks, K), optional
        Answers per (task, label): among tied labels the most voted wins (then the
        smallest label).

    Returns
    -------
    posteriors : (n_tasks, K), NaN rows where not answered
    top_two : int (n_tasks, 2), labels 1..K, (0, 0) where not answered; near-ties
        (relative ``TIE_RTOL``) go to the smaller label.
    confusion : (n_tasks,), ``post(g) / (post(g) + post(h))``, NaN where not answered.
    """
    S = np.asarray(log_scores, dtype=float)
    m, K = S.shape
    top = np.zeros((m, 2), dtype=np.int64)
    post = np.full((m, K), np.nan)
    conf = np.full(m, np.nan)
    if not answered.any():
        return post, top, conf
    Sa = S[answered]
    Va = None if votes is None else np.asarray(votes, dtype=float)[answered]
    rows = np.arange(Sa.shape[0])
    b1 = Sa.max(axis=1)
    g = _first_within(Sa, b1, Va)
    rest = Sa.copy()
    rest[rows, g] = -np.inf
    b2 = rest.max(axis=1)
    h = _first_within(rest, np.where(np.isfinite(b2), b2, b1),
                      None if Va is None else np.where(np.isfinite(rest), Va, -1.0))
    h = np.where(h == g, (g + 1) % K, h)            # all others -inf: any other label
    top[answered, 0] = g + 1
    top[answered, 1] = h + 1
    e = np.exp(Sa - b1[:, None])
    post[answered] = e / e.sum(axis=1, keepdims=True)
    conf[answered] = 1.0 / (1.0 + np.exp(Sa[rows, h] - Sa[rows, g]))
    return post, top, conf


#: The Parameters and Returns of every baseline's ``fit`` (the same signature
#: ``fit(A, n_labels=None)`` everywhere); :func:`fit_doc` appends it to the one-line
#: summary each class writes.
FIT_PARAMETERS = """

Parameters
----------
A : array-like, scipy sparse matrix or Responses, shape (n_workers, n_tasks)
    Labels 1..K, 0 = not answered (validated by :func:`toptwo.as_responses`).
n_labels : int, optional
    K; inferred as the largest label present when omitted.

Returns
-------
self
    The fitted estimator.
"""

_Fit = TypeVar("_Fit", bound=Callable[..., Any])


def fit_doc(fit: _Fit) -> _Fit:
    """Decorator: complete ``fit``'s one-line docstring with :data:`FIT_PARAMETERS`."""
    summary = (fit.__doc__ or "").strip()
    if "\n" in summary:
        raise ValueError(f"fit_doc expects a one-line docstring, got {summary!r}")
    fit.__doc__ = summary + FIT_PARAMETERS
    return fit


class ScoreOutputMixin(BaseEstimator):
    """``_store`` sets the common attributes; ``fit_predict`` and ``soft_labels``."""

    def _store(self, R: Responses, log_scores: np.ndarray) -> None:
        answered = R.task_counts() > 0
        self.posteriors_, self.top_two_, self.confusion_ = top_two_with_ties(
            log_scores, answered, R.task_label_counts())
        self.log_scores_ = np.where(answered[:, None], log_scores, np.nan)
        self.top_ = self.top_two_
        self._record_input(R)

    def fit(self, A: Any, n_labels: int | None = None):  # pragma: no cover - abstract
        raise NotImplementedError

    def fit_predict(self, A: Any, n_labels: int | None = None) -> np.ndarray:
        """Fit and return g_hat, shape (n_tasks,) (0 for unanswered tasks)."""
        return self.fit(A, n_labels).top_two_[:, 0]

    def soft_labels(self) -> np.ndarray:
        """Top-two soft labels: confusion_ on g_hat, 1 - confusion_ on h_hat (Sec. 6.3)."""
        return _soft_labels(self.top_two_, self.confusion_, self.n_labels_in_)


def one_coin_scores(R: Responses, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Log scores of the one-coin model at reliabilities x (M-MSR and PGD's last step).

    Worker i answers correctly with probability s_i = x_i (K-1)/K + 1/K and otherwise
    uniformly among the K-1 other labels, so its answer adds
    w_i = log((K-1) s_i / (1 - s_i)) to the label it gave. Returns (scores (m, K), s, w).
    """
    K = R.n_labels
    s = x * (K - 1) / K + 1.0 / K
    w = np.log((K - 1) * s / (1.0 - s))
    scores = np.bincount(R.tasks.astype(np.int64) * K + R.labels - 1,
                         weights=w[R.workers], minlength=R.n_tasks * K).reshape(R.n_tasks, K)
    return scores, s, w
