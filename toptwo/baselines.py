"""Baselines with the same estimator API and a top-two output, and the paper's roster.

:data:`PAPER_METHODS` maps the display names of the paper's comparison (Sec. 6.1,
Fig. 1 and Appendix "Baseline Methods") plus MACE and GLAD to factories
``rng -> estimator``; every estimator has ``fit(A, n_labels=None)``, ``top_two_``,
``confusion_``, ``fit_predict`` and ``soft_labels``.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any, Callable

import numpy as np

from ._base import BaseEstimator
from ._validation import Interval, check_n_top_bound
from .responses import as_responses

__all__ = ["MajorityVote", "PAPER_METHODS", "PAPER_METHOD_NOTES"]


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


def _paper_methods() -> dict[str, Callable[[Any], Any]]:
    from .dawid_skene import DawidSkene
    from .ebcc import EBCC
    from .glad import GLAD
    from .mace import MACE
    from .mle import TopTwo2
    from .mmsr import MMSR
    from .multispa import MultiSPA
    from .opt_ds import OptDawidSkene
    from .pgd import PGD
    from .spectral import TopTwo1

    out: dict[str, Callable[[Any], Any]] = {
        "MV": lambda rng: MajorityVote(rng=rng),
        "MV-D&S": lambda rng: DawidSkene(confusion="one_coin"),
        "MV-D&S (full)": lambda rng: DawidSkene(),
        "OPT-D&S": lambda rng: OptDawidSkene(confusion="one_coin", rng=rng),
        "OPT-D&S (full)": lambda rng: OptDawidSkene(rng=rng),
        "PGD": lambda rng: PGD(),
        "M-MSR": lambda rng: MMSR(rng=rng),
        "EBCC": lambda rng: EBCC(rng=rng),
        "MACE": lambda rng: MACE(rng=rng),
        "GLAD": lambda rng: GLAD(),
        "TopTwo1": lambda rng: TopTwo1(rng=rng),
        "TopTwo2": lambda rng: TopTwo2(rng=rng),
    }
    out["MultiSPA-KL"] = lambda rng: MultiSPA(refine="kl")
    out["MultiSPA-EM"] = lambda rng: MultiSPA(refine="em", confusion="one_coin")
    out["MultiSPA-EM (full)"] = lambda rng: MultiSPA(refine="em")
    return out


#: Display name -> factory ``rng -> unfitted estimator`` for every method of the paper's
#: comparison that ``toptwo`` implements, plus MACE and GLAD. The oracle MLE needs the
#: true (p, q) and is not here (``toptwo.OracleMLE(model.reliability, model.confusion)``).
PAPER_METHODS: dict[str, Callable[[Any], Any]] = _paper_methods()

#: What each name means where a choice was made (see the modules for details).
PAPER_METHOD_NOTES: dict[str, str] = {
    "MV-D&S": "Dawid-Skene EM from majority vote with the one-coin worker model "
              "(Zhang et al.'s AggregateCFG mode 1); the free K x K model drifts to "
              "label-mixing optima on top-two data (see DawidSkene's Notes) and is "
              "'MV-D&S (full)'.",
    "OPT-D&S": "Zhang et al.'s three-view tensor initialisation, then the same one-coin "
               "EM as 'MV-D&S'; 'OPT-D&S (full)' runs the free K x K EM.",
    "PGD": "projected-gradient rank-one completion of the agreement matrix, then the "
           "one-coin MLE (step size and start chosen here, see toptwo.pgd).",
    "M-MSR": "M-MSR iteration; signs from the leading eigenvector of sign(C) (the paper "
             "uses a graph construction).",
    "MultiSPA-KL": "SPA on pairwise co-occurrences (permutations resolved by maximising "
                   "the diagonal), then the KL fit of the co-occurrences by L-BFGS.",
    "MultiSPA-EM": "MultiSPA matrices, then the same one-coin EM as 'MV-D&S'; "
                   "'MultiSPA-EM (full)' runs the free K x K EM.",
    "EBCC": "mean-field VB with 10 subtypes per class, the authors' default priors.",
    "MACE": "EM (no variational Bayes), best of 10 random restarts.",
    "GLAD": "EM with an L-BFGS M-step, N(1, 1) priors on alpha and log beta.",
}
