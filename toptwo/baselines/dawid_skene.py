"""Dawid-Skene EM baselines, sparse, with a top-two output.

The paper compares TopTwo1/TopTwo2 with maximum-likelihood baselines that give a
*score* for every label of every task, from which the top two are read off
(Sec. 6.1 and Appendix "Baseline Methods" [`app:baseline`]):

* :class:`DawidSkene` -- the full confusion-matrix model of Dawid & Skene (1979), fitted
  by EM initialised with majority vote: the paper's **MV-D&S** (Zhang et al. 2016 call
  it that as well). Worker ``i`` answers ``l`` to a task whose true label is ``k`` with
  probability ``C[i, k, l]``; the true labels are i.i.d. with prior ``pi``.
* :class:`OneCoinDawidSkene` -- the single-coin restriction: worker ``i`` is right with
  probability ``s_i`` and otherwise picks one of the other ``K - 1`` labels uniformly.
  This is the model PGD (Ma et al.) assumes and, written with the paper's reliability
  ``p_i = (K s_i - 1) / (K - 1)``, it is the top-two model eq. (1) [`eqn:A_dist`] with
  every ``q_j = 1`` (the ``1 - p_i`` part spread uniformly over all K labels).

Conventions are the paper's: ``A`` has shape ``(n_workers, n_tasks)``, labels ``1..K``,
``0`` = not answered. Nothing here builds the dense ``n_workers x n_tasks`` array: one EM
iteration costs O(nnz K + n_workers K^2) time for :class:`DawidSkene` and O(nnz + m K)
for :class:`OneCoinDawidSkene` (``nnz`` = number of responses), through two fixed sparse
incidence matrices (response -> task, response -> (worker, label)).

Common output (both classes)
----------------------------
``posteriors_`` (n_tasks, K)
    Posterior P(true label = k | A) at the fitted parameters; NaN rows for tasks
    without any response.
``top_two_`` (n_tasks, 2)
    The labels with the largest and second largest posterior (column 0 = g_hat,
    column 1 = h_hat), ranked on the log scale so that posteriors that underflow to 0
    still keep their order. Scores within ``TIE_RTOL`` (relative) of each other are
    tied; ties go to the most voted label, then the smaller label (the rule of every
    score-based baseline). ``(0, 0)`` for tasks without any response.
``confusion_`` (n_tasks,)
    ``post(g_hat) / (post(g_hat) + post(h_hat))``, the D&S analogue of q_j (NaN for
    unanswered tasks).

Smoothing
---------
Both M-steps add a pseudo-count ``smoothing`` (alpha) to every count (additive or
Laplace/Lidstone smoothing): ``C[i, k, l] = (N[i, k, l] + alpha) / (sum_l N[i, k, l] +
K alpha)``, ``s_i = (correct_i + alpha) / (n_i + 2 alpha)``, ``pi_k = (sum_j T[j, k] +
alpha) / (m_answered + K alpha)``. This is the MAP estimate under a Dirichlet(1 + alpha)
prior, keeps every log finite (no log 0) and makes the EM objective, the penalised
log-likelihood stored in ``objective_history_``, non-decreasing. alpha = 1 is classical
Laplace smoothing; it over-smooths workers with few responses (a Flag worker gives
about 7 answers against 100 cells of a 10 x 10 confusion matrix), hence the small
default 0.01.

References
----------
.. [1] A. P. Dawid and A. M. Skene, "Maximum Likelihood Estimation of Observer
   Error-Rates Using the EM Algorithm", Journal of the Royal Statistical Society,
   Series C (Applied Statistics) 28(1):20-28, 1979.
.. [2] Y. Zhang, X. Chen, D. Zhou and M. I. Jordan, "Spectral Methods Meet EM: A Provably
   Optimal Algorithm for Crowdsourcing", NeurIPS 2014; JMLR 17(102):1-44, 2016
   (MV-D&S / OPT-D&S, cited as [SEM] in the paper).
.. [3] H. Jeong and H. W. Chung, "Recovering Top-Two Answers and Confusion Probability
   in Multi-Choice Crowdsourcing", ICML 2023.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._cost import check_dense_cost
from .._base import BaseEstimator
from .._validation import Interval, StrOptions
from ..responses import Responses, as_responses
from ..model import soft_labels
from ._base import (EM_TOL, em_converged, fit_doc, logsumexp_rows as _logsumexp_rows,
                    top_two_with_ties)

__all__ = ["CONFUSION_MODES", "DawidSkene", "OneCoinDawidSkene", "top_two_from_log_scores"]

#: Worker models of :class:`DawidSkene` (Zhang et al.'s reference code, ``AggregateCFG``
#: modes 0, 2 and 1): a free K x K confusion matrix, one accuracy per (worker, true
#: class), one accuracy per worker.
CONFUSION_MODES = ("full", "class", "one_coin")

#: Largest n_workers * K * K that DawidSkene allocates (one float64 copy: 2 GiB); beyond,
#: fit refuses with a message instead of running out of memory.
MAX_CONFUSION_ENTRIES = 2**28


#: Posteriors, top two and confusion from the final log scores: the one tie rule of the
#: score-based baselines (:func:`toptwo.baselines._base.top_two_with_ties`; ties within
#: TIE_RTOL go to the most voted label, then the smaller). This module's own exact-tie
#: version was merged into it after giving the same posteriors, top two and
#: confusion, bit for bit, on every DS fit checked: DawidSkene (each confusion mode) and
#: OneCoinDawidSkene on the four Table 1 scenarios (s = 0.02-0.5, 8 draws each) and the
#: seven real datasets; the smallest relative gap between the two best scores there was
#: 2.2e-6, far above TIE_RTOL = 1e-9, and no exact ties occurred.
top_two_from_log_scores = top_two_with_ties


class _DSBase(BaseEstimator):
    """Shared EM loop, validation and attributes of the Dawid-Skene baselines."""

    def __init__(self, *, smoothing: float = 0.01, tol: float = EM_TOL,
                 max_iter: int = 100):
        self.smoothing = smoothing
        self.tol = tol
        self.max_iter = max_iter

    # -- subclasses implement ------------------------------------------------
    def _m_step(self, T: np.ndarray) -> None:          # pragma: no cover - abstract
        raise NotImplementedError

    def _log_scores(self) -> np.ndarray:               # pragma: no cover - abstract
        raise NotImplementedError

    def _penalty(self) -> float:                       # pragma: no cover - abstract
        raise NotImplementedError

    def _finalise_worker_params(self) -> None:         # pragma: no cover - abstract
        raise NotImplementedError

    # -- shared --------------------------------------------------------------
    _parameter_constraints = {
        "smoothing": [Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def _m_step_prior(self, T: np.ndarray) -> None:
        K = self._K
        counts = T[self._answered].sum(axis=0)
        self.class_prior_ = (counts + self._alpha) / (counts.sum() + K * self._alpha)

    @fit_doc
    def fit(self, A: Any, n_labels: int | None = None):
        """Fit by EM from the majority-vote initialisation."""
        params = self._validate_params()
        R = as_responses(A, n_labels, owner=f"{self._name}.fit")
        check_dense_cost(R, f"{self._name}.fit")              # before any (m, K) array
        return self._fit_em(R, params)

    def _fit_em(self, R: Responses, params: dict[str, Any]):
        """EM on validated data with validated (normalised) parameters."""
        alpha, tol, max_iter = params["smoothing"], params["tol"], params["max_iter"]
        self._setup(R, alpha)
        T = self._initial_posteriors(R, params)
        history: list[float] = []
        converged = False
        it = 0
        for it in range(1, max_iter + 1):
            self._m_step(T)
            self._m_step_prior(T)
            S = self._log_scores()
            obj = float(_logsumexp_rows(S[self._answered]).sum()) + self._penalty()
            T = np.zeros_like(S)
            Sa = S[self._answered]
            Ea = np.exp(Sa - Sa.max(axis=1, keepdims=True))
            T[self._answered] = Ea / Ea.sum(axis=1, keepdims=True)
            history.append(obj)
            if it > 1 and em_converged(history[-2], history[-1], R.nnz, tol):
                converged = True
                break
        self.posteriors_, self.top_two_, self.confusion_ = top_two_from_log_scores(
            S, self._answered, R.task_label_counts())
        self.log_scores_ = np.where(self._answered[:, None], S, np.nan)
        self.top_ = self.top_two_
        self.objective_history_ = np.asarray(history)
        self.n_iter_ = it
        self.converged_ = converged
        self._record_input(R)
        self._finalise_worker_params()
        for name in ("_R", "_P_task", "_T_of"):
            self.__dict__.pop(name, None)
        return self

    def _initial_posteriors(self, R: Responses, params: dict[str, Any]) -> np.ndarray:
        """Initial E-step replaced by majority vote: T[j] = normalised vote counts."""
        counts = R.task_label_counts()
        tot = counts.sum(axis=1, keepdims=True)
        return np.divide(counts, tot, out=np.zeros_like(counts), where=tot > 0)

    def _setup(self, R: Responses, alpha: float) -> None:
        self._R = R
        self._K = R.n_labels
        self._alpha = alpha
        nnz = R.nnz
        e = np.arange(nnz)
        ones = np.ones(nnz)
        # response -> task incidence (m x nnz): sums per-response rows into tasks.
        self._P_task = sp.csr_array((ones, (R.tasks, e)), shape=(R.n_tasks, nnz))
        self._answered = R.task_counts() > 0
        self._active = R.worker_counts() > 0

    def fit_predict(self, A: Any, n_labels: int | None = None) -> np.ndarray:
        """Fit and return g_hat, shape (n_tasks,) (0 for unanswered tasks)."""
        return self.fit(A, n_labels).top_two_[:, 0]

    def soft_labels(self) -> np.ndarray:
        """Top-two soft labels: ``confusion_`` on g_hat, 1 - ``confusion_`` on h_hat (Sec. 6.3)."""
        return soft_labels(self.top_two_, self.confusion_, self.n_labels_in_)


class DawidSkene(_DSBase):
    """Dawid-Skene EM with a full confusion matrix per worker, initialised by majority
    vote (the paper's MV-D&S).

    Model (Dawid & Skene 1979): the true label ``y_j`` of task j is drawn from the class
    prior ``pi``; worker i answers ``l`` with probability ``C[i, y_j, l]``, independently
    across responses. EM alternates

    * E-step: ``T[j, k] = P(y_j = k | A) ∝ pi_k prod_{i answered j} C[i, k, A_ij]``;
    * M-step: ``C[i, k, l] ∝ sum_{j: A_ij = l} T[j, k] + alpha``,
      ``pi_k ∝ sum_j T[j, k] + alpha`` (alpha = ``smoothing``),

    starting from the M-step applied to the majority-vote posteriors (normalised vote
    counts), as MV-D&S does in Zhang et al. (2016). Stops when the penalised
    log-likelihood changes by at most ``tol * nnz`` between iterations (the stopping
    convention of every EM in toptwo, :data:`toptwo.baselines.EM_TOL`), or after
    ``max_iter`` iterations. Deterministic.

    Parameters
    ----------
    confusion : {"full", "class", "one_coin"}, default="full"
        Worker model, as the modes of Zhang et al.'s reference code (``AggregateCFG``):
        ``"full"`` is Dawid & Skene's free K x K matrix (mode 0); ``"class"`` keeps one
        accuracy per (worker, true class) and spreads the rest uniformly over the other
        K - 1 labels (mode 2); ``"one_coin"`` keeps one accuracy per worker (mode 1;
        the same model as :class:`OneCoinDawidSkene`, whose accuracy is pooled over
        classes in the same way). The M-step is the MAP one in each family (accuracy
        ``(correct + alpha) / (total + 2 alpha)``).
    smoothing : float, default=0.01
        Pseudo-count alpha > 0 added to every confusion-matrix cell and class-prior count
        (additive/Laplace smoothing; MAP under a Dirichlet(1 + alpha) prior). See the
        module docstring.
    tol : float, default=1e-5
        Stop when one iteration changes the objective by at most ``tol`` per response
        (``EM_TOL``, the convention of every EM in toptwo).
    max_iter : int, default=100
        Maximum number of EM iterations (M-step + E-step).

    Attributes
    ----------
    top_two_ : ndarray of shape (n_tasks, 2)
        Labels with the largest and second largest posterior, ties (within TIE_RTOL) to
        the most voted, then the smaller label;
        (0, 0) for unanswered tasks.
    posteriors_ : ndarray of shape (n_tasks, K)
        Posterior class probabilities (NaN rows for unanswered tasks).
    log_scores_ : ndarray of shape (n_tasks, K)
        Unnormalised log posteriors that ``top_two_`` ranks (NaN rows if unanswered).
    confusion_ : ndarray of shape (n_tasks,)
        ``post(g_hat) / (post(g_hat) + post(h_hat))`` (NaN if unanswered).
    confusion_matrices_ : ndarray of shape (n_workers, K, K)
        ``C[i, k, l]`` = P(worker i answers l+1 | true label k+1); NaN for workers
        without responses.
    reliability_ : ndarray of shape (n_workers,)
        Worker accuracy under the fitted prior, ``sum_k pi_k C[i, k, k]`` (NaN if the
        worker gave no response).
    class_prior_ : ndarray of shape (K,)
    objective_history_ : ndarray
        Penalised log-likelihood after each iteration (non-decreasing, EM).
    n_iter_ : int
    converged_ : bool
    n_workers_in_, n_tasks_in_, n_labels_in_ : int

    References
    ----------
    .. [1] A. P. Dawid and A. M. Skene, "Maximum Likelihood Estimation of Observer
       Error-Rates Using the EM Algorithm", J. R. Stat. Soc. Series C (Applied
       Statistics) 28(1):20-28, 1979.
    .. [2] Y. Zhang, X. Chen, D. Zhou and M. I. Jordan, "Spectral Methods Meet EM: A
       Provably Optimal Algorithm for Crowdsourcing", JMLR 17(102):1-44, 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from toptwo.baselines import DawidSkene
    >>> A = np.array([[1, 2, 3, 1, 3],   # rows = workers, columns = tasks
    ...               [1, 2, 3, 1, 3],
    ...               [1, 2, 3, 2, 3],
    ...               [1, 2, 1, 1, 2],
    ...               [2, 2, 3, 1, 3]])
    >>> DawidSkene().fit(A, n_labels=3).top_two_[:, 0]
    array([1, 2, 3, 1, 3])

    With very few responses per worker a full confusion matrix can overfit: on a
    3-task toy, EM may explain a 3-to-1 vote by relabelling a worker. Prefer
    :class:`OneCoinDawidSkene` on small data.

    Notes
    -----
    **Full confusion matrices on top-two data drift away from the labels.** Under the
    top-two model eq. (1) the most confusing answer h_j changes from task to task, so
    the D&S model (one latent class per task) is misspecified, and its likelihood has
    better optima than the one whose class k means "true label k". EM from majority
    vote climbs to them: on ``TopTwoModel.scenario("hard", 50, 500, 5, rng=0)`` at
    s = 1 (``sample(1.0, rng=100)``) the pair error is 0.372 after one iteration
    (oracle 0.362), 0.770 after 10, 0.882 where the relative stop ends it (29 iterations)
    and 0.894 if run on (64 iterations; g error 0.544) while the log-likelihood rises from -38133 to -35976; the fitted confusion matrix of a p = 1 worker has rows like
    (0.49, 0.27, 0, 0.01, 0.23), i.e. class 1 has come to mean "1, 2 or 5". More data
    makes the misspecified optimum sharper, hence errors that *rise* with s on *hard*.
    The restricted models (``confusion="class"`` or ``"one_coin"``) cannot represent
    those label mixtures and stay within 0.00-0.03 (one-coin) of the oracle on the
    easy, hard and high-variance scenarios, which is where the paper's MV-D&S curves
    sit; ``toptwo.experiments.paper.make("MV-D&S")`` therefore uses
    ``confusion="one_coin"``.
    """

    def __init__(self, *, confusion: str = "full", smoothing: float = 0.01,
                 tol: float = EM_TOL, max_iter: int = 100):
        super().__init__(smoothing=smoothing, tol=tol, max_iter=max_iter)
        self.confusion = confusion

    _parameter_constraints = {"confusion": [StrOptions(CONFUSION_MODES)],
                              **_DSBase._parameter_constraints}

    def _setup(self, R: Responses, alpha: float) -> None:
        K = R.n_labels
        size = R.n_workers * K * K
        if size > MAX_CONFUSION_ENTRIES:
            raise ValueError(
                f"DawidSkene.fit would allocate n_workers x K x K = {R.n_workers} x {K} x {K} "
                f"= {size} confusion-matrix entries (more than {MAX_CONFUSION_ENTRIES}, "
                f"{MAX_CONFUSION_ENTRIES * 8 // 2**30} GiB per copy); use OneCoinDawidSkene "
                f"(one parameter per worker) or pass the real number of choices n_labels.")
        super()._setup(R, alpha)
        nnz = R.nnz
        # response -> (worker, answered label) incidence ((n K) x nnz).
        self._wl = R.workers.astype(np.int64) * K + (R.labels.astype(np.int64) - 1)
        self._P_wl = sp.csr_array((np.ones(nnz), (self._wl, np.arange(nnz))),
                                  shape=(R.n_workers * K, nnz))

    def _m_step(self, T: np.ndarray) -> None:
        R, K, a = self._R, self._K, self._alpha
        N = (self._P_wl @ T[R.tasks]).reshape(R.n_workers, K, K)   # [i, l, k]
        N = N.transpose(0, 2, 1)                                      # [i, k, l]
        if self.confusion == "full":
            N = N + a
            self._C = N / N.sum(axis=2, keepdims=True)
            self._acc = None
        else:
            # Zhang et al.'s AggregateCFG: one accuracy per (worker, class) ("class",
            # mode 2) or per worker ("one_coin", mode 1); errors uniform over the rest.
            diag = np.einsum("ikk->ik", N)
            tot = N.sum(axis=2)
            if self.confusion == "one_coin":
                diag = diag.sum(axis=1, keepdims=True)
                tot = tot.sum(axis=1, keepdims=True)
            acc = (diag + a) / (tot + 2 * a)
            self._acc = acc
            C = np.broadcast_to(((1.0 - acc) / (K - 1))[:, :, None],
                                (R.n_workers, acc.shape[1], K)).copy()
            if C.shape[1] == 1:
                C = np.repeat(C, K, axis=1)
                acc = np.repeat(acc, K, axis=1)
            idx = np.arange(K)
            C[:, idx, idx] = acc
            self._C = C
        self._logC = np.log(self._C)

    def _log_scores(self) -> np.ndarray:
        R, K = self._R, self._K
        # contribution of response e to class k: log C[w_e, k, l_e]
        logC_wl = self._logC.transpose(0, 2, 1).reshape(R.n_workers * K, K)
        contrib = logC_wl[self._wl]                                   # (nnz, K)
        return self._P_task @ contrib + np.log(self.class_prior_)[None, :]

    def _penalty(self) -> float:
        a = self._alpha
        prior = float(np.log(self.class_prior_).sum())
        if self._acc is None:
            return a * (float(self._logC[self._active].sum()) + prior)
        acc = self._acc[self._active]
        return a * (float(np.log(acc).sum() + np.log1p(-acc).sum()) + prior)

    def _finalise_worker_params(self) -> None:
        C = self._C.copy()
        C[~self._active] = np.nan
        self.confusion_matrices_ = C
        diag = np.einsum("ikk->ik", C)
        self.reliability_ = diag @ self.class_prior_
        for name in ("_C", "_logC", "_wl", "_P_wl", "_acc"):
            self.__dict__.pop(name, None)


class OneCoinDawidSkene(_DSBase):
    """Single-coin Dawid-Skene model fitted by EM (one skill per worker).

    Worker i answers the true label with probability ``s_i`` (``skills_``) and each of
    the other ``K - 1`` labels with probability ``(1 - s_i) / (K - 1)``. This is the
    model PGD (Ma, Olshevsky, Saligrama and Szepesvari) assumes; in the paper's notation
    it is eq. (1) [`eqn:A_dist`] with ``q_j = 1`` for every task and reliability
    ``p_i = (K s_i - 1) / (K - 1)`` (``reliability_``), which may be negative for a
    worker worse than random. EM, initialised by majority vote:

    * E-step: ``T[j, k] ∝ pi_k prod_{i answered j} s_i^[A_ij = k]
      ((1 - s_i)/(K - 1))^[A_ij != k]``;
    * M-step: ``s_i = (sum_{j answered by i} T[j, A_ij] + alpha) / (n_i + 2 alpha)``,
      ``pi_k ∝ sum_j T[j, k] + alpha``.

    Parameters
    ----------
    smoothing : float, default=0.01
        Pseudo-count alpha > 0 (Beta(1 + alpha, 1 + alpha) prior on each skill,
        Dirichlet(1 + alpha) on the class prior).
    tol : float, default=1e-5
        Stop when one iteration changes the objective by at most ``tol`` per response
        (``EM_TOL``, the convention of every EM in toptwo).
    max_iter : int, default=100
        Maximum number of EM iterations.

    Attributes
    ----------
    top_two_, posteriors_, log_scores_, confusion_, class_prior_, objective_history_,
    n_iter_, converged_, n_workers_in_, n_tasks_in_, n_labels_in_
        As in :class:`DawidSkene`.
    skills_ : ndarray of shape (n_workers,)
        s_i = P(worker i answers the true label); NaN for workers without responses.
    reliability_ : ndarray of shape (n_workers,)
        The paper's p_i = (K s_i - 1) / (K - 1); NaN for workers without responses.

    References
    ----------
    .. [1] A. P. Dawid and A. M. Skene, J. R. Stat. Soc. Series C 28(1):20-28, 1979.
    .. [2] Y. Ma, A. Olshevsky, V. Saligrama and C. Szepesvari, "Gradient Descent for
       Sparse Rank-One Matrix Completion for Crowd-Sourced Aggregation of Sparsely
       Interacting Workers", ICML 2018 (PGD, cited as [PGD] in the paper).

    Examples
    --------
    >>> import toptwo
    >>> model = toptwo.TopTwoModel.random(20, 60, 3, rng=0)   # 20 workers, 60 tasks, K = 3
    >>> est = toptwo.baselines.OneCoinDawidSkene().fit(model.sample(0.5, rng=1))
    >>> est.top_two_[:3].tolist()                # truth: [[1, 2], [3, 2], [3, 2]]
    [[1, 3], [3, 2], [3, 2]]
    >>> round(toptwo.top_two_errors(est.top_two_, model.top_two)["pair"], 2)
    0.43
    """

    def _setup(self, R: Responses, alpha: float) -> None:
        super()._setup(R, alpha)
        K = R.n_labels
        self._tl = R.tasks.astype(np.int64) * K + (R.labels.astype(np.int64) - 1)
        self._n_i = R.worker_counts().astype(float)

    def _m_step(self, T: np.ndarray) -> None:
        R, a = self._R, self._alpha
        correct = np.bincount(R.workers, weights=T.reshape(-1)[self._tl],
                              minlength=R.n_workers)
        self._s = (correct + a) / (self._n_i + 2 * a)

    def _log_scores(self) -> np.ndarray:
        R, K = self._R, self._K
        log_right = np.log(self._s)
        log_wrong = np.log1p(-self._s) - np.log(K - 1)
        base = np.bincount(R.tasks, weights=log_wrong[R.workers], minlength=R.n_tasks)
        bonus = np.bincount(self._tl, weights=(log_right - log_wrong)[R.workers],
                            minlength=R.n_tasks * K).reshape(R.n_tasks, K)
        return bonus + base[:, None] + np.log(self.class_prior_)[None, :]

    def _penalty(self) -> float:
        s = self._s[self._active]
        return self._alpha * (float(np.log(s).sum() + np.log1p(-s).sum())
                              + float(np.log(self.class_prior_).sum()))

    def _finalise_worker_params(self) -> None:
        s = self._s.copy()
        s[~self._active] = np.nan
        K = self._K
        self.skills_ = s
        self.reliability_ = (K * s - 1.0) / (K - 1.0)
        for name in ("_s", "_tl", "_n_i"):
            self.__dict__.pop(name, None)
