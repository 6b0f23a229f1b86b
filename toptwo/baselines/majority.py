"""Majority vote, the simplest baseline, with the same estimator API and a top-T output.

The other baselines of the paper's comparison (Sec. 6.1, Fig. 1 and Appendix "Baseline
Methods") have a module each; :mod:`toptwo.experiments.paper` maps their display names to builders.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np

from .._base import BaseEstimator
from .._validation import Interval, check_n_top_bound
from ..responses import as_responses

__all__ = ["MajorityVote"]


class MajorityVote(BaseEstimator):
    """Majority vote: the T most frequent answers of each task (T = 2: the top two).

    Ties are broken uniformly at random with the estimator's ``rng`` (a random jitter in
    [0, 1/2) is added to every count before ranking, so the result is reproducible for
    a fixed seed and unbiased among tied labels). Sec. 5 of the paper: majority vote
    needs n s = Theta((sum_i p_i / n)^-2 log(1/eps)) queries per task. With ``n_top=T``
    it is the top-T baseline of Appendix `subsec:top_T`; the ranking, and so
    ``top_two_``, does not depend on T.

    Parameters
    ----------
    n_top : int, default=2
        T, the number of answers ranked per task (2 <= T <= K).
    rng : None, int or numpy.random.Generator
        Source of the tie-breaking jitter.

    Attributes
    ----------
    top_ : ndarray of shape (n_tasks, T)
        The T most frequent labels in decreasing order (0 for a task with no response;
        a task with fewer than T distinct answers gets random other labels after them).
    top_two_ : ndarray of shape (n_tasks, 2)
        The first two columns of ``top_``.
    confusion_ : ndarray of shape (n_tasks,)
        Vote ratio count(g) / (count(g) + count(h)) (NaN for unanswered tasks).
    confusions_ : ndarray of shape (n_tasks, T) or None
        For T > 2, each of the T labels' share of the task's responses (NaN for
        unanswered tasks); None for T = 2.
    counts_ : ndarray of shape (n_tasks, K)
        Number of answers per label.
    """

    def __init__(self, *, n_top: int = 2, rng: Any = None):
        self.n_top = n_top
        self.rng = rng

    _parameter_constraints = {
        "n_top": [Interval(Integral, 2, None, closed="left")],
        "rng": ["random_state"],
    }

    def fit(self, A: Any, n_labels: int | None = None) -> "MajorityVote":
        owner = self._name
        params = self._validate_params()
        T, gen = params["n_top"], params["rng"]
        R = as_responses(A, n_labels, owner=f"{owner}.fit")
        check_n_top_bound(T, R.n_labels, owner=owner)          # T <= K: needs the data
        counts = R.task_label_counts()
        order = np.argsort(-(counts + 0.5 * gen.random(counts.shape)), axis=1)[:, :T]
        tot = counts.sum(axis=1)
        answered = tot > 0
        top = (order + 1).astype(np.int64)
        top[~answered] = 0
        ranked = np.take_along_axis(counts, order, axis=1)
        cg, ch = ranked[:, 0], ranked[:, 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            self.confusion_ = np.where(answered, cg / (cg + ch), np.nan)
            shares = ranked / tot[:, None]
        shares[~answered] = np.nan
        self.counts_ = counts
        self.top_ = top
        self.top_two_ = top[:, :2]
        self.confusions_ = shares if T > 2 else None
        self._record_input(R)
        return self
