"""Baselines with the same estimator API and a top-two output."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import FittedAttributesMixin, check_rng
from .responses import as_responses
from .spectral import soft_labels

__all__ = ["MajorityVote"]


class MajorityVote(FittedAttributesMixin):
    """Majority vote top two: the most and second most frequent answers of each task.

    Ties are broken uniformly at random with the estimator's ``rng`` (a random jitter in
    [0, 1/2) is added to every count before ranking, so the result is reproducible for
    a fixed seed and unbiased among tied labels). Sec. 5 of the paper: majority vote
    needs n s = Theta((sum_i p_i / n)^-2 log(1/eps)) queries per task.

    Parameters
    ----------
    rng : None, int or numpy.random.Generator
        Source of the tie-breaking jitter.

    Attributes
    ----------
    top_two_ : ndarray of shape (n_tasks, 2)
        Most and second most frequent labels (0, 0 for a task with no response; a task
        with a single distinct answer gets a random other label as h).
    confusion_ : ndarray of shape (n_tasks,)
        Vote ratio count(g) / (count(g) + count(h)) (NaN for unanswered tasks).
    counts_ : ndarray of shape (n_tasks, K)
        Number of answers per label.
    """

    def __init__(self, *, rng: Any = None):
        self.rng = rng

    def fit(self, A: Any, n_labels: int | None = None) -> "MajorityVote":
        R = as_responses(A, n_labels, owner="MajorityVote.fit")
        gen = check_rng(self.rng, owner="MajorityVote")
        counts = R.task_label_counts()
        order = np.argsort(-(counts + 0.5 * gen.random(counts.shape)), axis=1)
        top = order[:, :2] + 1
        answered = counts.sum(axis=1) > 0
        top[~answered] = 0
        rows = np.arange(R.n_tasks)
        cg = counts[rows, order[:, 0]]
        ch = counts[rows, order[:, 1]]
        with np.errstate(invalid="ignore"):
            conf = np.where(answered, cg / (cg + ch), np.nan)
        self.counts_ = counts
        self.top_two_ = top.astype(np.int64)
        self.top_ = self.top_two_
        self.confusion_ = conf
        self.n_labels_in_ = R.n_labels
        return self

    def fit_predict(self, A: Any, n_labels: int | None = None) -> np.ndarray:
        return self.fit(A, n_labels).top_two_[:, 0]

    def soft_labels(self) -> np.ndarray:
        return soft_labels(self.top_two_, self.confusion_, self.n_labels_in_)
