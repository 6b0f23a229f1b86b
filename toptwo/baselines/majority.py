"""Majority vote, the simplest baseline, with the same estimator API and a top-T output.

The other baselines of the paper's comparison (Sec. 6.1, Fig. 1 and Appendix "Baseline
Methods") have a module each; :mod:`toptwo.experiments.paper` maps their display names to builders.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np

from .._cost import check_dense_cost
from .._base import BaseEstimator
from .._validation import Interval, StrOptions, check_n_top_bound
from ..responses import as_responses
from ._base import fit_doc, task_keys, tie_jitter

__all__ = ["MajorityVote", "task_keys", "tie_jitter"]



class MajorityVote(BaseEstimator):
    """Majority vote: the T most frequent answers of each task (T = 2: the top two).

    Ties are broken at random with the estimator's ``rng``: a jitter in [0, 1/2) is added
    to every count before ranking. With ``tie_break="content"`` the jitter of label c in
    a task is a hash of (the draw of ``rng``, the task's content, c) (:func:`task_keys`,
    :func:`tie_jitter`); the content is the task's label counts and the label profiles
    of the workers who answered it, never its position or id. The result is then
    reproducible for a fixed seed, unbiased among tied labels over seeds, the same for
    every input form, and equivariant under any permutation of workers, tasks or input
    rows (a shuffled CSV file gives the same row for every task; the command line uses
    this rule). Two tasks to which equally-profiled workers gave the same labels break
    their ties the same way (the default). ``tie_break="position"`` draws the jitter in
    the order of the tasks, as the stored runs of earlier rounds were made: reproducible
    for a fixed seed, but it changes when the tasks are reordered.
    Sec. 5 of the paper: majority vote
    needs n s = Theta((sum_i p_i / n)^-2 log(1/eps)) queries per task. With ``n_top=T``
    it is the top-T baseline of Appendix `subsec:top_T`; the ranking, and so
    ``top_two_``, does not depend on T.

    Parameters
    ----------
    n_top : int, default=2
        T, the number of answers ranked per task (2 <= T <= K).
    rng : None, int or numpy.random.Generator
        Source of the tie-breaking jitter.
    tie_break : {"content", "position"}, default="content"
        How the jitter is tied to a task: drawn in task order ("position"), or a hash of
        the task's content ("content", invariant under reordering the input).

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

    Examples
    --------
    >>> import toptwo
    >>> model = toptwo.TopTwoModel.random(20, 60, 3, rng=0)   # 20 workers, 60 tasks, K = 3
    >>> est = toptwo.baselines.MajorityVote(rng=0).fit(model.sample(0.5, rng=1))
    >>> est.top_two_[:3].tolist()                # truth: [[1, 2], [3, 2], [3, 2]]
    [[1, 3], [3, 2], [3, 2]]
    >>> round(toptwo.top_two_errors(est.top_two_, model.top_two)["pair"], 2)
    0.47
    """

    def __init__(self, *, n_top: int = 2, rng: Any = None, tie_break: str = "content"):
        self.n_top = n_top
        self.rng = rng
        self.tie_break = tie_break

    _parameter_constraints = {
        "n_top": [Interval(Integral, 2, None, closed="left")],
        "rng": ["random_state"],
        "tie_break": [StrOptions(("position", "content"))],
    }

    @fit_doc
    def fit(self, A: Any, n_labels: int | None = None) -> "MajorityVote":
        """Count the answers of each task and rank the labels (ties by ``tie_break``)."""
        owner = self._name
        params = self._validate_params()
        T, gen = params["n_top"], params["rng"]
        R = as_responses(A, n_labels, owner=f"{owner}.fit")
        check_dense_cost(R, f"{owner}.fit")              # before any (m, K) array
        check_n_top_bound(T, R.n_labels, owner=owner)          # T <= K: needs the data
        counts = R.task_label_counts()
        if params["tie_break"] == "content":
            jitter = tie_jitter(task_keys(R, counts, gen), R.n_labels)
        else:
            jitter = gen.random(counts.shape)
        order = np.argsort(-(counts + 0.5 * jitter), axis=1, kind="stable")[:, :T]
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
