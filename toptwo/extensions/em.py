r"""Beyond the paper: EM on the full likelihood of the top-two model ("TopTwoEM").

TopTwo2 (Algorithm 2) decides each task by the plug-in MLE of eq. (6) [`eqn:plug-in-mle`]
with (p, q) fixed from stage 1 and eq. (5). :class:`TopTwoEM` instead maximises the
(penalised) likelihood of eq. (1) [`eqn:A_dist`] over (p, q), with the ordered pairs
(g_j, h_j) as latent variables, by expectation-conditional-maximisation (ECM; Meng and
Rubin 1993), starting from TopTwo2.

Model. Given that worker i answered task j (the sampling rate s only multiplies the
likelihood by a constant and is left out), eq. (1) with (g_j, h_j) = (a, b) reads

    P(A_ij = c | a, b) = (1 - p_i)/K + p_i q_j 1(c = a) + p_i (1 - q_j) 1(c = b).

The pairs have a uniform prior over the K(K-1) ordered pairs a != b: the model has no
preferred label, and a uniform prior keeps the method equivariant under relabelling.

E-step in O(nnz + m K^2). As in eq. (6), the log-likelihood of task j under (a, b) is a
constant plus two per-label score vectors::

    log P(A_.j | a, b) = C_j + S^a_j(a) + S^b_j(b),   a != b,
    C_j      = sum_{i in j} log((1 - p_i)/K),
    S^a_j(c) = sum_{i: A_ij = c} log(1 + K p_i q_j/(1 - p_i)),
    S^b_j(c) = sum_{i: A_ij = c} log(1 + K p_i (1 - q_j)/(1 - p_i)).

S^a and S^b are two ``np.bincount`` passes over the responses (O(nnz + m K)); the
posterior r_j(a, b) = exp(S^a_j(a) + S^b_j(b) - log Z_j) over the K(K-1) pairs is an
(m, K, K) array (built in chunks of tasks, diagonal at -inf) normalised by a stable
log-sum-exp (O(m K^2)). Its marginals G_j(c) = sum_b r_j(c, b) (posterior that c is g_j)
and H_j(c) = sum_a r_j(a, c) give, for each response e = (i, j, c), the posterior
weights gamma^g_e = G_j(c), gamma^h_e = H_j(c) and gamma^o_e = 1 - gamma^g_e - gamma^h_e
(c is neither). The log marginal likelihood of task j is C_j + log Z_j - log(K(K-1)).
(Z_j is not computed as (sum e^{S^a})(sum e^{S^b}) - sum e^{S^a + S^b}: that difference
cancels catastrophically when S^a and S^b peak at the same label.)

M-step. The expected complete-data log-posterior is

    Q(p, q) = sum_e [ gamma^g_e log(p_i q_j + (1 - p_i)/K)
                      + gamma^h_e log(p_i (1 - q_j) + (1 - p_i)/K)
                      + gamma^o_e log((1 - p_i)/K) ] + log pi(p) + log pi(q).

It does not separate jointly, so the M-step is two conditional maximisations (ECM, which
keeps EM's monotonicity): first every p_i given q, then every q_j given the new p. Each is
a 1-D problem, and all of them are solved at once by a vectorised safeguarded Newton
iteration (Newton step when it stays inside the current bracket of the root of the
derivative, bisection otherwise):

* p_i given q: with x_e = q_j - 1/K and y_e = 1 - q_j - 1/K, every term is
  log(1/K + p x) or log(1/K + p y) or log((1 - p)/K), the log of a positive affine function
  of p, so the objective is concave in p, with

      d/dp   = sum_e gamma^g x/(1/K + p x) + gamma^h y/(1/K + p y) - gamma^o/(1 - p) + d log pi/dp,
      d2/dp2 = -sum_e gamma^g x^2/(1/K + p x)^2 + gamma^h y^2/(1/K + p y)^2
               + gamma^o/(1 - p)^2  (all with a minus sign) + d2 log pi/dp2 < 0.

* q_j given p: with c_i = (1 - p_i)/K, the terms are log(c + p q) and log(c + p (1 - q)),
  again concave, with d/dq = sum_e gamma^g p/(c + p q) - gamma^h p/(c + p (1 - q)) +
  d log pi/dq.

Priors (MAP-EM). On q_j, the Beta prior of t_j = 2 q_j - 1 in [0, 1] with density
proportional to t^(nu mu) (1 - t)^(nu (1 - mu)): nu = ``confusion_prior_strength``
pseudo-answers pulling t towards its mode mu. A task has few answers (n s = 10 at the
paper's smallest rates), and its unpenalised MLE of q sits on the boundary whenever no
reliable answer hits h (q = 1, which gives h weight 0 and leaves h to the tie rule) or
the hits are balanced (q = 1/2, which leaves the order of g and h to the tie rule); the
prior keeps q inside (1/2, 1) and shares strength across tasks. mu is set once, before
EM starts, from TopTwo2's q (the mean of its t over answered tasks, clipped to
[0.1, 0.9]): an empirical-Bayes choice of the prior's centre that fixes the objective, so
EM stays monotone. On p_i, the Beta(1 + nu_p/2, 1 + nu_p/2) prior (nu_p =
``reliability_prior_strength``, default 0.5): less than one pseudo-answer that keep p_i inside
(0, 1) (p_i = 1 makes every answer outside the pair impossible and log(1 - p) infinite).
Both log-priors are concave, so each 1-D problem stays concave with a unique root of the
derivative in the open interval; the derivatives tend to +inf at the lower end and -inf
at the upper end, so the bracket is the whole interval. ``theory_checks.checks_em``
checks these formulas (gradients, second derivatives, concavity) with SymPy.

Monotonicity and stopping (``confusion="map"``). E-step then the two exact conditional
maximisations never decrease the log-posterior, log L(p, q) + log pi(p) + log pi(q)
(recorded in ``log_likelihood_``; the Newton solves stop at a relative step of 1e-12, so
a decrease can only be round-off). EM stops when the largest change of any p_i or q_j is
below ``tol``, or when an iteration raised the log-posterior by at most 1e-6 per response
(EM_GAIN_TOL: the stopping convention of every EM in toptwo,
:data:`toptwo.baselines.EM_TOL`, ten times tighter), or after ``max_iter`` iterations.

Option ``confusion="grid"`` (q_j integrated out; the default). With about 10 answers per
task the MAP of q_j is far from q_j and the plug-in pair posterior is overconfident
(measurements: design notes, "TopTwoEM"). With ``confusion="grid"`` q_j is
a latent variable instead, drawn from a distribution pi over GRID_NODES fixed values q_k
(t_k = 2 q_k - 1 at the midpoints of equal bins of [0, 1]) whose weights are estimated:
the latent state of task j is (q-node k, a, b), with prior pi_k / (K(K-1)); pi has a
Dirichlet(1 + delta) prior (delta = GRID_PSEUDO).

* Per-node scores. The weight log(1 + K p_i q_k/(1 - p_i)) depends on the worker and the
  node only, so S^a_jk(c) for all nodes is a sparse product of the (label, task) x
  worker incidence matrix with an (n, GRID_NODES) table (likewise S^b).
* E-step in O(nnz GRID_NODES + m K GRID_NODES), not O(m K^2 GRID_NODES). The marginal
  of "c is g_j" at node k is sum_{b != c} exp(S^a(c) + S^b(b)) = exp(S^a(c)) X^b(c),
  where X^b(c) = sum_{b != c} exp(S^b(b)) is an exclusive sum, computed from prefix and
  suffix sums of exp(S^b - max S^b) (no subtraction, so no cancellation;
  :func:`_node_terms_chunk`). The shift by max S^a + max S^b can only underflow when a
  task's answers favour one label by a log-ratio of several hundred in both slots; such
  tasks are recomputed over all K(K-1) pairs with the exact shift. The answered tasks
  are processed in blocks of about _GRID_CHUNK (label, task, node) entries: each block's
  sparse product, exponentials and exclusive sums stay in the processor's cache, and the
  only arrays of size K m GRID_NODES (the unscaled g and h terms) are allocated once per
  fit (:class:`_GridEM`), for as many blocks as fit in 512 MiB: the second pass of each
  E-step recomputes the others block by block (the same bits), so beyond that budget
  the memory is O(nnz + m GRID_NODES).
* Grid weights (ECME; Liu and Rubin 1994). For fixed p the log-posterior depends on pi
  only through F(pi) = sum_j log(sum_k pi_k Z_jk) + delta sum_k log pi_k, with Z_jk the
  likelihood of task j's answers at node k: concave on the simplex, so each E-step first
  maximises F by Newton steps with a line search from the current pi
  (:func:`_pi_newton`; the plain EM update pi_k = (sum_j P(node k | A_.j) + delta) /
  (m_answered + GRID_NODES delta) converges slowly, like any mixing weights under EM,
  and is only used when it rises more than a shortened Newton step), then computes the
  posterior under the new pi in a second pass over the blocks.
* M-step for p: the same concave 1-D problem as above with q_k in place of q_j; its
  per-response terms aggregate into (worker, node) sums (the transposed sparse product),
  so each Newton step costs O(n GRID_NODES). It also returns its gain, the rise of the
  maximised expected complete-data log-posterior Q, which EM's inequality guarantees as
  a rise of the log-posterior: L(p_EM, pi) - L(p, pi) >= Q(p_EM) - Q(p).
* Acceleration (:func:`_accelerated_em`). Each iteration proposes an extrapolated point
  by Anderson acceleration (type II, Walker and Ni 2011) of logit(p) over the last
  _AA_MEMORY + 1 points and their EM images; after a rejected proposal the history
  restarts and the next proposal is a SQUAREM step (Varadhan and Roland 2008, scheme
  S3) from two plain EM steps, after which Anderson resumes. A proposal's E-step is
  kept only if it raises the log-posterior at least as much as the plain EM step is
  guaranteed to (its gain); otherwise EM takes the plain step. So every recorded step
  raises the log-posterior by at least the gain (a rejected proposal repeats the
  current value in ``log_likelihood_``), and no decision compares numbers within
  round-off of each other except by a coincidence of measure zero.
* Stopping. EM stops when the EM step from the current point would gain at most
  EM_GAIN_TOL = 1e-6 per response, EM_GAIN_TOL nnz in all (checked before any further
  E-step; the convention of every EM in toptwo, :data:`toptwo.baselines.EM_TOL`, ten
  times tighter than the baselines' default: a gain per
  response, so the number of E-steps does not grow with the data size, where an
  absolute 1e-3 took 5 at 10^4 responses and 12 at 10^7), or when the largest change of
  any p_i or pi_k between accepted points is below ``tol``, or (if ``posterior_tol`` > 0)
  when no task's posterior probability of any label being g_j or h_j changed by
  ``posterior_tol`` or more, or after ``max_iter`` E-steps. Why the gain rule is enough:
  near the maximum, along a direction whose fraction of missing information is lambda,
  the gain is (1 - lambda) times the rise still possible, so the log-posterior is within
  EM_GAIN_TOL nnz/(1 - lambda) of its maximum; and within D of the maximum (quadratic
  approximation) every smooth function of (p, pi), each task's pair posterior among
  them, is within sqrt(2 D) posterior standard deviations of its value at the maximum.
  With D proportional to nnz the posterior standard deviations, which shrink like
  1/sqrt(nnz), make the distance in the parameters themselves independent of the data
  size. How close that is to the maximum, measured: design notes, "TopTwoEM".

The labels are the mode of the pair posterior with q_j integrated out (the Bayes
decision for the pair error), ``pair_proba_`` its probability and ``confusion_`` the
posterior mean of q_j, computed block by block after EM. ``theory_checks.checks_em``
checks the pi update (Lagrange conditions) with SymPy.

Labels. (g_j, h_j) is the posterior mode: the argmax of S^a_j(a) + S^b_j(b) at the final
(p, q), by :func:`toptwo.mle.best_pairs`. Pair scores within a tolerance are ties and go
to the lexicographically smaller (a, b); the tolerance is the floating-point bound of
eq. (6) (see :func:`toptwo.plugin_mle`) plus ``tol`` times the sensitivity of the scores
to (p, q) (the sum over the task's answers of |d w/d p| + |d w/d q| for both slots): the
scores can move that much when round-off makes EM stop one iteration earlier or later.
With ``confusion="grid"`` the pair posterior with q_j integrated out is compared: pairs
whose posterior is at least exp(-tie_j) times the largest, less 2 ``posterior_tol``, are
ties, with tie_j the same bound for the scores at the q_k (|d w/d p| only) plus
``tol``/min_k pi_k for the weights: a margin for parameters that differ by up to
``tol``, far above the round-off by which two runs on different BLAS kernels or
thread counts differ (the E-step's sums over responses are taken in a fixed order; BLAS
enters only through the grid weights' Newton solve and the log-posterior's dot
products, and ``tests/test_roundoff.py`` checks identical labels, E-step counts and
least certain tasks under other kernels).
"""

from __future__ import annotations

import copy
from numbers import Integral, Real
from typing import Any

import numpy as np

from .._cost import check_dense_cost, check_pair_cost
from .._base import BaseEstimator
from .._validation import InstanceOf, Interval, StrOptions, check_int
from ..mle import TopTwo2, best_pairs
from ..responses import Responses, as_responses
from .._ties import _EPS
from ..model import soft_labels
from ..spectral import check_spectral_labels
from ._em_grid import EM_GAIN_TOL as EM_TOL
from ._em_grid import (_EDGE, EM_GAIN_TOL, GRID_NODES, _accelerated_em, _expit,  # noqa: F401
                       _GridEM, _logit, _newton, _PI_FIRST)

__all__ = ["TopTwoEM", "em_posteriors", "pair_posterior", "GRID_NODES"]
#: Number of (task, a, b) entries of the pair posterior built at once.
_PAIR_CHUNK = 1 << 21


def _task_scores(R: Responses, p: np.ndarray, q: np.ndarray):
    """S^a, S^b (m, K) and C (m,) of the module docstring, in task-major order."""
    K = R.n_labels
    _, workers_tm, _ = R.task_major()
    tasks_tm = R.task_major_tasks()
    pw = p[workers_tm]
    qt = q[tasks_tm]
    cw = K * pw / (1.0 - pw)
    wa = np.log1p(cw * qt)
    wb = np.log1p(cw * (1.0 - qt))
    Sa = R.task_label_counts_task_major(wa)
    Sb = R.task_label_counts_task_major(wb)
    C = np.bincount(tasks_tm, weights=np.log((1.0 - pw) / K), minlength=R.n_tasks)
    return Sa, Sb, C, wa, wb


def pair_posterior(R: Responses, p: np.ndarray, q: np.ndarray, top: np.ndarray
                   ) -> np.ndarray:
    """Posterior probability of each task's pair ``top[j]`` given its answers, eq. (1).

    With a uniform prior over the K (K - 1) ordered pairs and eq. (1)'s likelihood at
    worker reliabilities p and task confusions q, P((g_j, h_j) = (a, b) | A_.j) =
    exp(Sa[j, a] + Sb[j, b] - logZ[j]) with S^a, S^b of :func:`_task_scores` and logZ of
    :func:`em_posteriors`. Computed a chunk of tasks at a time: the same sums in the same
    order as those functions (the same bits), with no float array of the size of the data
    (the task-major arrays of ``R`` are read, and built if ``R`` has not built them).

    Parameters
    ----------
    R : Responses
        The answers.
    p : ndarray of shape (n_workers,)
        Reliabilities in [0, 1).
    q : ndarray of shape (n_tasks,)
        Confusions in [1/2, 1].
    top : ndarray of shape (n_tasks, 2)
        The pairs (labels 1..K).

    Returns
    -------
    ndarray of shape (n_tasks,)
        The posterior of each pair; unspecified for a row of ``top`` that is not a pair of
        labels (0 = no estimate) or a task without answers (callers mask those).
    """
    from .._chunks import _task_chunks
    from ..mle import _local_tasks

    K = R.n_labels
    indptr, workers_tm, labels_tm = R.task_major()
    out = np.empty(R.n_tasks)
    g = np.maximum(np.asarray(top)[:, 0] - 1, 0)
    h = np.maximum(np.asarray(top)[:, 1] - 1, 0)
    c_w = K * p / (1.0 - p)                          # K p_i / (1 - p_i), as _task_scores
    for lo, hi, e0, e1 in _task_chunks(indptr):
        mc = hi - lo
        task = _local_tasks(indptr, lo, hi)
        index = task * K
        index += labels_tm[e0:e1]
        index -= 1
        cw = c_w.take(workers_tm[e0:e1])
        qt = q[lo:hi].take(task)
        Sa = np.bincount(index, weights=np.log1p(cw * qt), minlength=mc * K).reshape(mc, K)
        Sb = np.bincount(index, weights=np.log1p(cw * (1.0 - qt)),
                         minlength=mc * K).reshape(mc, K)
        _, _, logZ = em_posteriors(Sa, Sb)
        rows = np.arange(mc)
        with np.errstate(over="ignore", invalid="ignore"):
            out[lo:hi] = np.exp(Sa[rows, g[lo:hi]] + Sb[rows, h[lo:hi]] - logZ)
    return out


def em_posteriors(Sa: np.ndarray, Sb: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Marginals of the pair posterior r_j(a, b) proportional to exp(Sa[j, a] + Sb[j, b]), a != b.

    Returns (G, H, logZ): G[j, c] = P(g_j = c), H[j, c] = P(h_j = c) and
    logZ[j] = log sum_{a != b} exp(Sa[j, a] + Sb[j, b]). Built as (chunk, K, K) blocks with
    the diagonal at -inf and a log-sum-exp shifted by the row maximum, so no overflow and
    no cancellation.
    """
    m, K = Sa.shape
    G = np.empty((m, K))
    H = np.empty((m, K))
    logZ = np.empty(m)
    diag = np.eye(K, dtype=bool)
    step = max(1, _PAIR_CHUNK // (K * K))
    for lo in range(0, m, step):
        hi = min(m, lo + step)
        L = Sa[lo:hi, :, None] + Sb[lo:hi, None, :]
        L[:, diag] = -np.inf
        M = L.max(axis=(1, 2))
        np.subtract(L, M[:, None, None], out=L)
        np.exp(L, out=L)
        g = L.sum(axis=2)
        Z = g.sum(axis=1)
        G[lo:hi] = g / Z[:, None]
        H[lo:hi] = L.sum(axis=1) / Z[:, None]
        logZ[lo:hi] = M + np.log(Z)
    return G, H, logZ


#: ``uncertain_tasks`` ranks the pair posteriors rounded to this many decimals.
UNCERTAIN_DECIMALS = 9


class TopTwoEM(BaseEstimator):
    r"""Top-two answers by EM on the full likelihood of eq. (1) (beyond the paper).

    Starting from :class:`~toptwo.TopTwo2`, maximises the log-posterior of
    :math:`(\mathbf p, \mathbf q)` with the ordered pairs :math:`(g_j, h_j)` as latent
    variables (uniform prior over the :math:`K(K-1)` pairs), by
    expectation-conditional-maximisation; given that worker i answered task j, eq. (1)
    with :math:`(g_j, h_j) = (a, b)` reads

    .. math::

        P(A_{ij} = c \mid a, b) = \frac{1 - p_i}{K} + p_i q_j \mathbb 1(c = a)
        + p_i (1 - q_j) \mathbb 1(c = b).

    The labels are the posterior mode of each task's pair (with ``confusion="grid"``, with
    :math:`q_j` integrated out). The derivation (E-step, the concave conditional
    M-steps, priors, grid, acceleration, stopping) is the module docstring; the
    measurements behind the defaults are in the design notes (``docs/design.md``,
    "TopTwoEM").

    Parameters
    ----------
    max_iter : int, default=100
        Largest number of EM iterations (with ``confusion="grid"``: of E-steps after the
        first, counting rejected extrapolations). Each E-step scores the K(K-1) ordered
        pairs of every answered task; ``fit`` refuses up front when that exceeds
        ``max(2**24, 8 nnz K)`` cells (:func:`toptwo._cost.check_pair_cost`).
    tol : float, default=1e-6
        Stop when the largest change of any :math:`p_i` (of a worker with answers) or
        :math:`q_j` (of an answered task; of a grid weight with ``confusion="grid"``) in
        one iteration is below ``tol``; also when the log-posterior rose by at most
        ``EM_GAIN_TOL`` = 1e-6 per response ("map"), or the EM step's guaranteed rise is at
        most that ("grid"): the stopping convention of every EM in toptwo,
        :data:`toptwo.baselines.EM_TOL`, ten times tighter (module docstring, "Stopping").
    posterior_tol : float, default=0.0
        With ``confusion="grid"``: also stop when no answered task's posterior
        probability that a label is :math:`g_j`, or :math:`h_j`, changed by this much or
        more in one iteration (0 turns this rule off); pairs whose posterior is within 2
        ``posterior_tol`` of the best are ties (smallest pair wins). Ignored with "map".
    confusion_prior_strength : float, default=4.0
        :math:`\nu > 0`: pseudo-answers of the Beta prior on :math:`t_j = 2 q_j - 1` (mode
        at the mean of TopTwo2's t over answered tasks, clipped to [0.1, 0.9]).
    reliability_prior_strength : float, default=0.5
        :math:`\nu_p > 0`: the prior :math:`\mathrm{Beta}(1 + \nu_p/2, 1 + \nu_p/2)` on
        each :math:`p_i`.
    confusion : {"grid", "map"}, default="grid"
        "map": :math:`q_j` is a parameter per task with the Beta prior above (MAP).
        "grid": :math:`q_j` is integrated over an estimated distribution on a grid; its
        ``pair_proba_`` is calibrated.
    init : TopTwo2, optional
        The initial estimator; a copy of it is fitted on the same data (the object
        passed is left unchanged). Default ``TopTwo2(reliability_estimator="moment",
        rng=rng)``: eq. (5) as printed. EM re-estimates p from its own posteriors, and
        starting it from the leave-one-out p (TopTwo2's default) changed its mean pair error
        by at most 0.0003 on the five crowds of ``benchmarks/stage1.py`` (10 paired
        replicates per rate; ``docs/design_stage1.md``).
    rng : None, int or numpy.random.Generator
        Passed to the default TopTwo2 (its sample splits, if any).

    Attributes
    ----------
    top_two_ : ndarray of shape (n_tasks, 2)
        Posterior mode :math:`(g_j, h_j)`; (0, 0) for a task with no response.
    pair_proba_ : ndarray of shape (n_tasks,)
        Posterior probability of the chosen pair; NaN for a task with no response.
    g_proba_ : ndarray of shape (n_tasks,)
        Posterior probability that the chosen :math:`g_j` is :math:`g_j` (summed over h);
        NaN likewise.
    confusion_ : ndarray of shape (n_tasks,)
        :math:`q_j` (MAP; with ``confusion="grid"`` the posterior mean) in (1/2, 1); NaN
        for a task with no response.
    reliability_ : ndarray of shape (n_workers,)
        :math:`p_i` (MAP) in (0, 1); NaN for a worker with no response.
    log_likelihood_ : ndarray of shape (``n_iter_`` + 1,)
        Log-posterior (log-likelihood of eq. (1) given the observed pattern plus the log
        priors, up to a constant) at the start and after every iteration.
    n_iter_ : int
        Number of EM iterations run.
    converged_ : bool
        Whether a tolerance was met before ``max_iter``.
    init_ : TopTwo2
        The fitted initial estimator.
    confusion_prior_mode_ : float
        The prior's mode for :math:`q_j`, :math:`(1 + \mu)/2` (NaN with "grid").
    confusion_grid_, confusion_weights_ : ndarray of shape (GRID_NODES,) or None
        With ``confusion="grid"``: the nodes :math:`q_k` and their estimated weights
        :math:`\pi_k`.
    n_workers_in_, n_tasks_in_, n_labels_in_ : int

    Examples
    --------
    >>> import toptwo
    >>> model = toptwo.TopTwoModel.random(40, 200, 4, rng=0)
    >>> A = model.sample(0.5, rng=1)                 # 40 workers x 200 tasks, K = 4
    >>> em = toptwo.TopTwoEM(rng=0).fit(A)
    >>> round(toptwo.top_two_errors(em.top_two_, model.top_two)["pair"], 3)
    0.32
    >>> bool(((em.pair_proba_ > 0) & (em.pair_proba_ <= 1)).all())
    True
    """

    def __init__(self, *, max_iter: int = 100, tol: float = 1e-6,
                 posterior_tol: float = 0.0,
                 confusion_prior_strength: float = 4.0,
                 reliability_prior_strength: float = 0.5,
                 confusion: str = "grid", init: TopTwo2 | None = None, rng: Any = None):
        self.confusion = confusion
        self.max_iter = max_iter
        self.tol = tol
        self.posterior_tol = posterior_tol
        self.confusion_prior_strength = confusion_prior_strength
        self.reliability_prior_strength = reliability_prior_strength
        self.init = init
        self.rng = rng

    # ---------------------------------------------------------------- checks
    _parameter_constraints = {
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "confusion_prior_strength": [Interval(Real, 0, None, closed="neither")],
        "reliability_prior_strength": [Interval(Real, 0, None, closed="neither")],
        "posterior_tol": [Interval(Real, 0, 1, closed="left")],
        "confusion": [StrOptions(("map", "grid"))],
        "init": [None, InstanceOf(TopTwo2, "toptwo.TopTwo2")],
        "rng": ["random_state"],
    }

    # ------------------------------------------------------------------- fit
    def fit(self, A: Any, n_labels: int | None = None) -> "TopTwoEM":
        """Fit TopTwo2, then run EM on A (dense array, sparse matrix or Responses)."""
        owner = "TopTwoEM"
        params = self._validate_params()
        max_iter, tol, post_tol = params["max_iter"], params["tol"], params["posterior_tol"]
        nu_q, nu_p = params["confusion_prior_strength"], params["reliability_prior_strength"]
        R = as_responses(A, n_labels, owner=f"{owner}.fit")
        check_dense_cost(R, f"{owner}.fit")              # before any (m, K) array
        check_spectral_labels(R.n_labels, 2, owner)
        check_pair_cost(R, f"{owner}.fit", max_iter)     # m K^2 per E-step, paid by data
        # a copy: fitting must not change the user's parameter object
        init = (TopTwo2(reliability_estimator="moment", rng=self.rng) if self.init is None
                else copy.deepcopy(self.init))
        if getattr(init, "n_top", 2) != 2:
            raise ValueError(f"The 'init' parameter of {owner} must be a TopTwo2 with "
                             f"n_top=2; got n_top={init.n_top!r}.")
        init.fit(R)
        n, m, K = R.n_workers, R.n_tasks, R.n_labels
        answered = R.task_counts() > 0
        active = R.worker_counts() > 0

        # ---- initial (p, q) from TopTwo2 and the prior's centre
        p = np.clip(np.nan_to_num(init.reliability_, nan=0.5), 0.01, 0.99)
        q0 = np.clip(init.confusion_, 0.51, 0.99)
        t_init = 2.0 * q0[answered & np.isfinite(q0)] - 1.0
        mu = float(np.clip(t_init.mean(), 0.1, 0.9)) if t_init.size else 0.5
        q = np.where(np.isfinite(q0), q0, 0.5 * (1.0 + mu))
        a_q, b_q = nu_q * mu, nu_q * (1.0 - mu)          # exponents of t and 1 - t
        a_p = b_p = nu_p / 2.0                           # exponents of p and 1 - p

        if self.confusion == "grid":
            out = self._fit_grid(R, p, t_init, max_iter, tol, a_p, b_p, post_tol)
            top = np.zeros((m, 2), dtype=np.int64)         # answered tasks only in out
            top[answered] = np.column_stack([out["a"], out["b"]]) + 1
            full = {}
            for key in ("pair_proba", "g_proba", "q"):
                full[key] = np.full(m, np.nan)
                full[key][answered] = out[key]
            self._set(init, top, full["pair_proba"], full["g_proba"], full["q"], out["p"],
                      out["history"], out["n_iter"], out["converged"], answered, active, R)
            self.confusion_grid_, self.confusion_weights_ = out["q_nodes"], out["pi"]
            self.confusion_prior_mode_ = float("nan")
            return self

        _, workers_tm, labels_tm = R.task_major()
        tasks_tm = R.task_major_tasks()
        flat = tasks_tm.astype(np.int64) * K + (labels_tm - 1)

        def log_prior(p, q):
            t = 2.0 * q[answered] - 1.0
            pa = p[active]
            return float(a_q * np.log(t).sum() + b_q * np.log1p(-t).sum()
                         + a_p * np.log(pa).sum() + b_p * np.log1p(-pa).sum())

        def e_step(p, q):
            Sa, Sb, C, wa, wb = _task_scores(R, p, q)
            G, H, logZ = em_posteriors(Sa, Sb)
            ll = float((C + logZ)[answered].sum() - answered.sum() * np.log(K * (K - 1)))
            return Sa, Sb, G, H, ll + log_prior(p, q)

        Sa, Sb, G, H, lp = e_step(p, q)
        history = [lp]
        converged = False
        n_iter = 0
        lo_p, hi_p = np.full(n, _EDGE), np.full(n, 1.0 - _EDGE)
        lo_q, hi_q = np.full(m, 0.5 + _EDGE), np.full(m, 1.0 - _EDGE)
        for n_iter in range(1, max_iter + 1):  # noqa: B007 - its last value is read after the loop
            gg = G.ravel()[flat]                     # gamma^g, gamma^h, gamma^o per response
            gh = H.ravel()[flat]
            go = np.clip(1.0 - gg - gh, 0.0, None)
            Go = np.bincount(workers_tm, weights=go, minlength=n)
            qt = q[tasks_tm]
            x = qt - 1.0 / K
            y = 1.0 - qt - 1.0 / K

            def d_p(pv):
                pe = pv[workers_tm]
                ux = x / (1.0 / K + pe * x)
                uy = y / (1.0 / K + pe * y)
                d1 = np.bincount(workers_tm, weights=gg * ux + gh * uy, minlength=n)
                d2 = np.bincount(workers_tm, weights=gg * ux * ux + gh * uy * uy, minlength=n)
                d1 += -Go / (1.0 - pv) + a_p / pv - b_p / (1.0 - pv)
                d2 = -d2 - Go / (1.0 - pv) ** 2 - a_p / pv ** 2 - b_p / (1.0 - pv) ** 2
                return d1, d2

            p_new = _newton(d_p, p, lo_p, hi_p)
            pe = p_new[workers_tm]
            ce = (1.0 - pe) / K

            def d_q(qv):
                qe = qv[tasks_tm]
                ug = pe / (ce + pe * qe)
                uh = pe / (ce + pe * (1.0 - qe))
                d1 = np.bincount(tasks_tm, weights=gg * ug - gh * uh, minlength=m)
                d2 = np.bincount(tasks_tm, weights=gg * ug * ug + gh * uh * uh, minlength=m)
                t = 2.0 * qv - 1.0
                d1 += 2.0 * a_q / t - 2.0 * b_q / (1.0 - t)
                d2 = -d2 - 4.0 * a_q / t ** 2 - 4.0 * b_q / (1.0 - t) ** 2
                return d1, d2

            q_new = _newton(d_q, q, lo_q, hi_q)
            change = max(float(np.abs(p_new - p)[active].max(initial=0.0)),
                         float(np.abs(q_new - q)[answered].max(initial=0.0)))
            p, q = p_new, q_new
            Sa, Sb, G, H, lp = e_step(p, q)
            rise = lp - history[-1]
            history.append(lp)
            if change < tol or rise <= EM_TOL * R.nnz:
                converged = True
                break

        # ---- labels: posterior mode with ties within round-off + tol x sensitivity
        pw = p[workers_tm]
        qt = q[tasks_tm]
        base = (1.0 - pw) / K
        dena, denb = base + pw * qt, base + pw * (1.0 - qt)
        sens = (np.abs((qt - 1.0 / K) / dena + 1.0 / (1.0 - pw)) + pw / dena
                + np.abs((1.0 - qt - 1.0 / K) / denb + 1.0 / (1.0 - pw)) + pw / denb)
        total = np.log(dena / base) + np.log(denb / base)
        d = R.task_counts().astype(float)
        rounding = 8.0 * _EPS * (d + 2.0) * np.bincount(tasks_tm, weights=total, minlength=m)
        tie = 2.0 * rounding + tol * np.bincount(tasks_tm, weights=sens, minlength=m)
        a, b, score = best_pairs(Sa, Sb, tie)
        rows = np.arange(m)
        _, _, logZ = em_posteriors(Sa, Sb)
        pair_proba = np.exp(score - logZ)
        g_proba = G[rows, a]
        top = np.column_stack([a, b]).astype(np.int64) + 1
        top[~answered] = 0
        self._set(init, top, pair_proba, g_proba, q, p, history, n_iter, converged,
                  answered, active, R)
        self.confusion_prior_mode_ = 0.5 * (1.0 + mu)
        self.confusion_grid_ = self.confusion_weights_ = None
        return self

    def _set(self, init, top, pair_proba, g_proba, q, p, history, n_iter, converged,
             answered, active, R) -> None:
        self.init_ = init
        self.top_two_ = top
        self.top_ = top
        self.pair_proba_ = np.where(answered, pair_proba, np.nan)
        self.g_proba_ = np.where(answered, g_proba, np.nan)
        self.confusion_ = np.where(answered, q, np.nan)
        self.reliability_ = np.where(active, p, np.nan)
        self.log_likelihood_ = np.asarray(history)
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.observed_rate_ = R.observed_rate
        self._record_input(R)

    def _fit_grid(self, R: Responses, p: np.ndarray, t_init: np.ndarray, max_iter: int,
                  tol: float, a_p: float, b_p: float, post_tol: float) -> dict:
        """EM with q_j latent on a grid whose weights pi are estimated (``confusion="grid"``)."""
        em = _GridEM(R, a_p, b_p, post_tol)
        Gn = GRID_NODES
        bins = np.minimum((t_init * Gn).astype(np.int64), Gn - 1)
        pi = (np.bincount(bins, minlength=Gn) + 1.0) / (bins.size + Gn)
        cur, history, n_iter, converged = _accelerated_em(em, em.e_step(p, pi, _PI_FIRST),
                                                          max_iter, tol, post_tol)
        out = em.labels(cur.p, cur.pi, tol)
        out.update(p=cur.p, pi=cur.pi, history=history, n_iter=n_iter, converged=converged,
                   q_nodes=em.q_nodes)
        return out

    def fit_predict(self, A: Any, n_labels: int | None = None) -> np.ndarray:
        """Fit and return g_hat (shape (n_tasks,))."""
        return self.fit(A, n_labels).top_two_[:, 0]

    def _check_fitted(self, what: str) -> None:
        if not hasattr(self, "pair_proba_"):
            raise RuntimeError(f"TopTwoEM.{what} needs a fitted estimator; call fit first.")

    def soft_labels(self) -> np.ndarray:
        """(n_tasks, K): q_hat on g_hat, 1 - q_hat on h_hat (Sec. 6.3); NaN rows only for
        tasks nobody answered."""
        self._check_fitted("soft_labels")
        return soft_labels(self.top_two_, self.confusion_, self.n_labels_in_)

    def uncertain_tasks(self, n: int) -> np.ndarray:
        """The ``n`` tasks whose chosen pair has the lowest posterior (ties: smaller index).

        A task nobody answered counts with the prior's 1/(K(K-1)), no more than any
        posterior's largest pair, so unanswered tasks come first. To decide which tasks
        should get more answers, prefer :func:`toptwo.posterior.relabel_order` (the
        tasks whose re-labelling is expected to lower the g error most; what the CLI's
        ``--uncertain N`` prints), measured on real data in ``docs/calibration.md``. The posteriors are compared after rounding to
        UNCERTAIN_DECIMALS decimals, so floating-point round-off (about 1e-14 between
        BLAS builds) cannot reorder them; equal values go by task index.
        """
        self._check_fitted("uncertain_tasks")
        m = self.n_tasks_in_
        k = check_int(n, "n", owner="TopTwoEM.uncertain_tasks", minimum=0)
        if k > m:
            raise ValueError(f"The 'n' parameter of TopTwoEM.uncertain_tasks must be at most "
                             f"n_tasks={m}; got {n} instead.")
        K = self.n_labels_in_
        key = np.where(np.isnan(self.pair_proba_), 1.0 / (K * (K - 1)), self.pair_proba_)
        return np.argsort(np.round(key, UNCERTAIN_DECIMALS), kind="stable")[:k]
