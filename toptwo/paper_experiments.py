r"""Helpers for reproducing the paper's experiments (Sec. 6, Appendices A, C-E).

Builds on :mod:`toptwo.experiments` (``run_sweep``, ``aggregate``) with what the
reproduction notebooks 06-09 and ``benchmarks/reproduce_paper.py`` share:

* :func:`method_factories` -- the methods compared in Fig. 1 [`fig:synthetic_acc`] and
  Fig. `fig:app:synthetic_acc` (majority vote, MV-D&S, one-coin D&S, TopTwo1, TopTwo2,
  variants of TopTwo2 and the oracle MLE), as ``run_sweep`` factories.
* :func:`sweep_rates` -- ``run_sweep`` one sampling rate at a time, each seeded by
  (seed, key, rate), so that replicate r at rate s is the *same draw* whatever the grid
  and the number of replicates: a notebook's small run is a prefix of the full run of
  the script and can be checked against it exactly.
* :func:`paired_gap` -- the gap of a method to a reference (the oracle) in a metric,
  paired per (rate, replicate), with a Student-t 95% confidence interval.
* :func:`subsample_per_task` -- keep at most d responses of each task (Sec. 6.2,
  Fig. 2a [`fig:color_error`]: "we subsampled it to simulate how the prediction error
  decreases as the number of responses per task increases").
* :func:`vote_ratio` -- each task's empirical vote ratio between its two most frequent
  answers, the quantity q_hat should track (Appendix A [`sec:app:model`]).
* :func:`top_t_errors` -- error rates for the ordered top-T answers (Appendix
  `subsec:top_T`); :func:`top_t_sweep` for T = 3.
* :func:`subsample_sweep` -- errors against responses per task on real data.
* :func:`plot_grid` -- a grid of error-curve panels (returns the Figure).

Algorithm 1 subtracts the shift on observed entries only by default
(``TopTwo1(centering="observed")``, suited to uneven workloads as in notebook 08); the
paper's centring is ``centering="paper"``.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ._validation import check_int, check_rng
from .baselines import MajorityVote
from .dawid_skene import DawidSkene, OneCoinDawidSkene
from .experiments import _t975, run_sweep
from .mle import OracleMLE, TopTwo2
from .model import TopTwoModel
from .responses import Responses, as_responses
from .spectral import TopTwo1

__all__ = ["METHOD_NAMES", "PAPER_NAMES", "ALL_METHOD_NAMES", "holm", "paired_table",
           "grid_average", "compare_methods", "method_factories", "sweep_rates", "paired_gap",
           "top_t_sweep",
           "plot_grid", "subsample_per_task", "subsample_sweep",
           "vote_ratio", "top_t_errors"]

#: Every method :func:`method_factories` knows, in plotting order.
METHOD_NAMES = ("MV", "MV-D&S (full)", "OneCoinDS", "TopTwo1", "TopTwo2", "TopTwo2 split",
                "TopTwo2 refine3", "Oracle")

def _oracle(model: TopTwoModel | None, T: int) -> OracleMLE:
    """The oracle MLE of ``model`` (it needs the true p and q)."""
    if model is None:
        raise ValueError("the oracle MLE needs the true model (p, q); none was given.")
    return OracleMLE(model.reliability, model.confusion if T == 2 else model.weights)


_BUILDERS: dict[str, Callable[[TopTwoModel | None, np.random.Generator, int], Any]] = {
    "MV": lambda model, rng, T: MajorityVote(n_top=T, rng=rng),
    "MV-D&S": lambda model, rng, T: DawidSkene(confusion="one_coin"),
    "MV-D&S (full)": lambda model, rng, T: DawidSkene(),
    "OneCoinDS": lambda model, rng, T: OneCoinDawidSkene(),
    "TopTwo1": lambda model, rng, T: TopTwo1(n_top=T, rng=rng),
    "TopTwo2": lambda model, rng, T: TopTwo2(n_top=T, rng=rng),
    "TopTwo2 split": lambda model, rng, T: TopTwo2(sample_splitting=True, n_top=T, rng=rng),
    "TopTwo2 refine3": lambda model, rng, T: TopTwo2(n_refinements=3, rng=rng),
    "Oracle": lambda model, rng, T: _oracle(model, T),
}

def _registry_builder(name: str) -> Callable[[TopTwoModel | None, np.random.Generator, int], Any]:
    from .baselines import PAPER_METHODS

    return lambda model, rng, T: PAPER_METHODS[name](rng)


def _add_registry() -> None:
    """Every method of :data:`toptwo.baselines.PAPER_METHODS` under its display name."""
    from .baselines import PAPER_METHODS

    for name in PAPER_METHODS:
        _BUILDERS.setdefault(name, _registry_builder(name))


_add_registry()

#: The baselines of the paper's comparison beyond :data:`METHOD_NAMES` (Sec. 6.1, Fig. 1,
#: the appendix): run by ``benchmarks/reproduce_paper.py baselines``.
BASELINE_NAMES = ("MV", "MV-D&S", "MV-D&S (full)", "OPT-D&S", "PGD", "M-MSR",
                  "MultiSPA-KL", "MultiSPA-EM", "EBCC", "MACE", "GLAD", "TopTwo1",
                  "TopTwo2", "Oracle")


#: Every method of the comparison in the notebooks' plotting order: the paper's methods
#: (Sec. 6.1, Fig. 1 [`fig:synthetic_acc`]) first, then the package's extras (the textbook
#: full-matrix D&S, MACE, GLAD and two variants of TopTwo2). ``OneCoinDS`` is left out:
#: it is the same one-coin EM as ``"MV-D&S"`` (identical answers).
PAPER_NAMES = ("MV", "MV-D&S", "OPT-D&S", "PGD", "M-MSR", "MultiSPA-KL", "MultiSPA-EM",
               "EBCC", "TopTwo1", "TopTwo2", "Oracle")
ALL_METHOD_NAMES = PAPER_NAMES + ("MV-D&S (full)", "MACE", "GLAD", "TopTwo2 split",
                                  "TopTwo2 refine3")


def method_factories(names: Sequence[str] = METHOD_NAMES, *, n_top: int = 2
                     ) -> dict[str, Callable[[Any, np.random.Generator], Any]]:
    """``run_sweep`` factories ``name -> f(model, rng)`` for the compared methods.

    ============== ==========================================================
    name           estimator
    ============== ==========================================================
    MV             :class:`~toptwo.MajorityVote` (seeded tie-breaking)
    MV-D&S         :class:`~toptwo.dawid_skene.DawidSkene` (EM from majority
                   vote, one-coin worker model: the paper's MV-D&S as read from its
                   figures; ``"MV-D&S (full)"`` is the free K x K model)
    OneCoinDS      :class:`~toptwo.dawid_skene.OneCoinDawidSkene` (the single-
                   coin model that PGD assumes, fitted by EM)
    TopTwo1        Algorithm 1 (``TopTwo1``)
    TopTwo2        Algorithm 2 (``TopTwo2``, package defaults)
    TopTwo2 split  Algorithm 2 with the paper's sample splitting
    TopTwo2        ``TopTwo2(n_refinements=3)``: three hard-EM refinements of
    refine3        (p, q) after eq. (6) (beyond the paper; T = 2 only)
    Oracle         :class:`~toptwo.OracleMLE` with the true p, q (the true
                   (m, T) weights for T > 2)
    ============== ==========================================================

    Parameters
    ----------
    names : sequence of str, default=METHOD_NAMES
        Display names of the methods (keys of the builder table).
    n_top : int, default=2
        T passed to MV, TopTwo1 and TopTwo2 (and which weights the oracle gets).
    """
    T = check_int(n_top, "n_top", owner="method_factories", minimum=2)
    out = {}
    for name in names:
        if name not in _BUILDERS:
            raise ValueError(f"The 'names' parameter of method_factories must hold names "
                             f"from {sorted(_BUILDERS)}; got {name!r} instead.")
        if T != 2 and name == "TopTwo2 refine3":
            raise ValueError("method_factories: 'TopTwo2 refine3' needs n_top=2 (the "
                             f"refinement is implemented for the top-two model); got n_top={T}.")
        build = _BUILDERS[name]
        out[name] = (lambda b: (lambda model, rng: b(model, rng, T)))(build)
    return out


def _rate_key(s: float) -> int:
    return int(round(float(s) * 100_000))


def sweep_rates(model_factory: Any, methods: Mapping[str, Callable[..., Any]],
                sampling_rates: Sequence[float], n_replicates: int, *, seed: int,
                key: Sequence[int] = (), tags: Mapping[str, Any] | None = None
                ) -> list[dict[str, Any]]:
    """:func:`toptwo.experiments.run_sweep`, one rate at a time, prefix-stable seeding.

    Rate s is swept by ``run_sweep(..., [s], n_replicates, rng=SeedSequence(seed,
    spawn_key=(*key, round(1e5 s))))``. Since ``SeedSequence.spawn`` numbers its
    children, replicate r at rate s is the same draw (model, sample and estimators'
    generators) for any grid containing s and any ``n_replicates > r``.

    Parameters
    ----------
    model_factory, methods, tags : as in ``run_sweep``
        ``rng -> TopTwoModel``, a fresh instance per replicate.
    sampling_rates : sequence of float in (0, 1]
        The sampling rates s.
    n_replicates : int >= 1
        Replicates per rate.
    seed : int >= 0
        Root seed; replicate r at rate s is the same draw whatever the grid.
    key : sequence of int >= 0
        Distinguishes sweeps sharing a seed (e.g. the scenario's index).
    """
    owner = "sweep_rates"
    seed = check_int(seed, "seed", owner=owner, minimum=0)
    key = tuple(check_int(k, "key", owner=owner, minimum=0) for k in key)
    rates = [float(s) for s in sampling_rates]
    if not rates:
        raise ValueError(f"The 'sampling_rates' parameter of {owner} must be non-empty; "
                         f"got {list(sampling_rates)!r} instead.")
    records: list[dict[str, Any]] = []
    for s in rates:
        if not 0.0 < s <= 1.0:
            raise ValueError(f"The 'sampling_rates' parameter of {owner} must hold rates in "
                             f"(0, 1]; got {s!r} instead.")
        ss = np.random.SeedSequence(seed, spawn_key=key + (_rate_key(s),))
        records += run_sweep(model_factory, methods, [s], n_replicates, ss, tags=tags)
    return records


def paired_gap(records: Sequence[Mapping[str, Any]], method: str, reference: str,
               metric: str = "err_pair", *, x: str = "queries_per_task",
               where: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Gap ``metric(method) - metric(reference)`` paired per (x, replicate).

    Per replicate r the differences are averaged over the x grid; the mean over
    replicates of these averages is the gap, with a Student-t 95% CI (the replicates
    are independent draws). Also returns the gap per x value.

    Parameters
    ----------
    records : output of :func:`sweep_rates` / ``run_sweep``
        Records of :func:`sweep_rates`.
    method, reference : str
        Values of the ``method`` key.
    metric : str, default="err_pair"
        The record field compared (e.g. ``err_pair``).
    x : str, default="queries_per_task"
        The record field that indexes the grid.
    where : mapping, optional
        Keep only records whose keys equal these values (e.g. ``{"scenario": "hard"}``).

    Returns
    -------
    dict with ``mean``, ``sem``, ``ci_low``, ``ci_high``, ``n`` (replicates) and
    ``per_x``: dict x -> (mean difference, sem) over replicates at that x.
    """
    where = dict(where or {})
    vals: dict[str, dict[tuple[float, int], float]] = {method: {}, reference: {}}
    for rec in records:
        if rec["method"] in vals and all(rec.get(k) == v for k, v in where.items()):
            vals[rec["method"]][(float(rec[x]), int(rec["replicate"]))] = float(rec[metric])
    common = sorted(set(vals[method]) & set(vals[reference]))
    if not common:
        raise ValueError(f"paired_gap: no (x, replicate) with both {method!r} and "
                         f"{reference!r} in the records (where={where!r}).")
    diffs = {k: vals[method][k] - vals[reference][k] for k in common}
    per_rep: dict[int, list[float]] = {}
    per_x: dict[float, list[float]] = {}
    for (xv, r), d in diffs.items():
        per_rep.setdefault(r, []).append(d)
        per_x.setdefault(xv, []).append(d)

    def summ(v: Sequence[float]) -> tuple[float, float]:
        a = np.asarray(v, float)
        return float(a.mean()), (float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1
                                 else 0.0)

    reps = [float(np.mean(v)) for _, v in sorted(per_rep.items())]
    mean, sem = summ(reps)
    half = _t975(len(reps) - 1) * sem if len(reps) > 1 else 0.0
    return {"mean": mean, "sem": sem, "ci_low": mean - half, "ci_high": mean + half,
            "n": len(reps), "per_x": {xv: summ(v) for xv, v in sorted(per_x.items())}}


def paired_table(records: Sequence[Mapping[str, Any]], method: str, others: Sequence[str],
                 metric: str = "err_pair", *, x: str = "queries_per_task"
                 ) -> dict[str, list[list[float]]]:
    """Per x: ``[x, mean, sem, n]`` of the paired difference ``method - other``.

    The rows of the "TopTwo2 minus every method" tables of
    ``benchmarks/reproduce_paper.py`` (one row per x; ``sem`` is the sample sd of the
    per-replicate differences over sqrt(n)). Pairs are (x, replicate) with both methods.
    """
    out = {}
    for other in others:
        if other == method:
            continue
        vals: dict[str, dict[tuple[float, int], float]] = {method: {}, other: {}}
        for rec in records:
            if rec["method"] in vals and np.isfinite(rec[metric]):
                vals[rec["method"]][(float(rec[x]), int(rec["replicate"]))] = float(rec[metric])
        per_x: dict[float, list[float]] = {}
        for k in sorted(set(vals[method]) & set(vals[other])):
            per_x.setdefault(k[0], []).append(vals[method][k] - vals[other][k])
        rows = []
        for xv, d in sorted(per_x.items()):
            a = np.asarray(d)
            sem = float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else 0.0
            rows.append([xv, float(a.mean()), sem, int(a.size)])
        out[other] = rows
    return out


def holm(pvalues: Any) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error control).

    ``adjusted[i] <= alpha`` rejects hypothesis i with family-wise error rate at most
    alpha over all the hypotheses given (Holm, 1979). Same result as
    ``statsmodels.stats.multitest.multipletests(p, method="holm")[1]``.

    Parameters
    ----------
    pvalues : array-like of float in [0, 1]
        The unadjusted p-values of the family of hypotheses.
    """
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1 or p.size == 0 or np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"holm: pvalues must be a non-empty 1-D array of values in [0, 1]; "
                         f"got {np.asarray(pvalues)!r} instead.")
    order = np.argsort(p, kind="stable")
    m = p.size
    adj_sorted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj_sorted
    return out


def grid_average(raw: Mapping[str, Mapping[str, Sequence[float]]], method: str,
                 xs: Sequence[float] | None = None) -> np.ndarray:
    """Per replicate, a method's error averaged over the grid points ``xs``.

    Parameters
    ----------
    raw : mapping method -> {str(x): [error of replicate 0, 1, ...]}
        The ``raw_err_pair`` tables of ``benchmarks/reproduce_paper.py``.
    method : str
        A key of ``raw``.
    xs : sequence of float, optional
        Grid points to average over (default: every grid point of the method).

    Returns
    -------
    ndarray of shape (n_replicates,)
        Replicates present at every grid point (the smallest count over ``xs``).
    """
    if method not in raw:
        raise ValueError(f"grid_average: method {method!r} not in the table; "
                         f"available: {sorted(raw)}.")
    table = raw[method]
    keys = [str(float(x)) for x in xs] if xs is not None else list(table)
    missing = [k for k in keys if k not in table]
    if missing or not keys:
        raise ValueError(f"grid_average: grid points {missing or keys!r} missing for "
                         f"{method!r}; available: {list(table)}.")
    n = min(len(table[k]) for k in keys)
    return np.mean([np.asarray(table[k][:n], dtype=float) for k in keys], axis=0)


def compare_methods(raw: Mapping[str, Mapping[str, Sequence[float]]],
                    pairs: Sequence[tuple[str, str]], *, xs: Sequence[float] | None = None,
                    alpha: float = 0.05) -> list[dict[str, Any]]:
    """Paired comparisons ``a - b`` of grid-averaged errors, Holm-corrected as one family.

    For each pair (a, b) the per-replicate difference of :func:`grid_average` errors is
    tested against 0 with a two-sided paired t test (``scipy.stats.ttest_rel``); its mean
    gets a Student-t 95% CI (``scipy.stats.t.ppf``). The p-values of all the pairs are
    adjusted together with :func:`holm`, so "significant" claims over the whole family
    have a family-wise error rate of at most ``alpha``.

    Parameters
    ----------
    raw : mapping
        As in :func:`grid_average`.
    pairs : sequence of (str, str)
        The comparisons (a, b): difference a - b (negative: a has the lower error).
    xs : sequence of float, optional
        Grid points averaged over (default: all of each method's).
    alpha : float, default=0.05
        Family-wise error rate for the ``significant`` flag.

    Returns
    -------
    list of dict (one per pair, in order) with ``a``, ``b``, ``mean``, ``ci_low``,
    ``ci_high`` (unadjusted 95% CI), ``n``, ``p``, ``p_holm`` and ``significant``
    (``p_holm <= alpha``).
    """
    from scipy import stats  # lazy: keeps import toptwo light

    if not pairs:
        raise ValueError("compare_methods: `pairs` must list at least one (a, b) pair.")
    if not 0 < alpha < 1:
        raise ValueError(f"The 'alpha' parameter of compare_methods must be in (0, 1); "
                         f"got {alpha!r} instead.")
    rows = []
    for a, b in pairs:
        da, db = grid_average(raw, a, xs), grid_average(raw, b, xs)
        n = min(da.size, db.size)
        d = da[:n] - db[:n]
        if n < 2:
            raise ValueError(f"compare_methods: {a!r} - {b!r} has {n} replicate(s); a "
                             f"paired t test needs at least 2.")
        sem = float(d.std(ddof=1) / math.sqrt(n))
        half = float(stats.t.ppf(0.975, n - 1)) * sem
        p = 1.0 if sem == 0 and d.mean() == 0 else (
            0.0 if sem == 0 else float(stats.ttest_rel(da[:n], db[:n]).pvalue))
        rows.append({"a": a, "b": b, "mean": float(d.mean()), "ci_low": float(d.mean()) - half,
                     "ci_high": float(d.mean()) + half, "n": int(n), "p": p})
    adj = holm([r["p"] for r in rows])
    for r, q in zip(rows, adj):
        r["p_holm"] = float(q)
        r["significant"] = bool(q <= alpha)
    return rows


def subsample_per_task(A: Any, d: int, rng: Any) -> Responses:
    """Keep at most ``d`` responses of every task, chosen uniformly without replacement.

    A task with ``d`` or fewer responses keeps all of them. Used to draw the response
    budgets of Fig. 2a [`fig:color_error`] from the color data.

    Parameters
    ----------
    A : Responses, array or sparse matrix
        Responses (anything :func:`toptwo.as_responses` accepts).
    d : int >= 1
        Responses kept per task.
    rng : int or numpy.random.Generator
        Source of the subsample.
    """
    owner = "subsample_per_task"
    R = as_responses(A, owner=owner)
    d = check_int(d, "d", owner=owner, minimum=1)
    gen = check_rng(rng, owner=owner)
    # rank the responses of each task by a random key; keep the first d of each task
    order = np.lexsort((gen.random(R.nnz), R.tasks))
    t_sorted = R.tasks[order]
    starts = np.searchsorted(t_sorted, t_sorted, side="left")
    rank = np.arange(R.nnz) - starts
    keep = np.zeros(R.nnz, dtype=bool)
    keep[order[rank < d]] = True
    return R.subset(keep)


def vote_ratio(A: Any) -> np.ndarray:
    """Each task's vote ratio c1 / (c1 + c2) between its two most frequent answers.

    c1 >= c2 are the two largest per-label counts (ties give 1/2); NaN for a task
    without responses. Under eq. (1) [`eqn:A_dist`] its expectation given the responses
    is about (p q + (1-p)/K) / (p + 2 (1-p)/K) averaged over the answering workers: it
    increases with q_j, so q_hat (eq. (4) [`eqn:est_q`]) and the vote ratio should be
    positively correlated (Appendix A [`sec:app:model`]).
    """
    R = as_responses(A, owner="vote_ratio")
    c = -np.sort(-R.task_label_counts(), axis=1)
    tot = c[:, 0] + c[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tot > 0, c[:, 0] / np.where(tot > 0, tot, 1), np.nan)


def top_t_errors(estimate: Any, truth: Any) -> dict[str, Any]:
    """Error rates for ordered top-T answers (Appendix `subsec:top_T`).

    Parameters
    ----------
    estimate, truth : int arrays of shape (n_tasks, T)
        Ordered answers (column t = the t-th plausible answer g_{j,t+1}).

    Returns
    -------
    dict with ``ordered`` (fraction of tasks whose whole ordered tuple is wrong),
    ``set`` (fraction whose unordered set of T answers is wrong) and ``per_position``
    (ndarray (T,), error of each column).
    """
    est = np.asarray(estimate)
    tru = np.asarray(truth)
    if est.ndim != 2 or est.shape != tru.shape:
        raise ValueError(f"top_t_errors: estimate and truth must both have shape "
                         f"(n_tasks, T); got {est.shape} and {tru.shape} instead.")
    if not (np.issubdtype(est.dtype, np.integer) and np.issubdtype(tru.dtype, np.integer)):
        raise TypeError(f"top_t_errors needs integer labels; got dtypes {est.dtype} and "
                        f"{tru.dtype} instead.")
    wrong = est != tru
    same_set = (np.sort(est, axis=1) == np.sort(tru, axis=1)).all(axis=1)
    return {"ordered": float(wrong.any(axis=1).mean()), "set": float((~same_set).mean()),
            "per_position": wrong.mean(axis=0)}


def top_t_sweep(model_factory: Callable[[np.random.Generator], TopTwoModel],
                sampling_rates: Sequence[float], n_replicates: int, *, seed: int,
                n_top: int = 3) -> list[dict[str, Any]]:
    """Top-T recovery (Appendix `subsec:top_T`) of MV, TopTwo1, TopTwo2 and the oracle.

    For each rate s and replicate r (seeded by ``SeedSequence(seed, spawn_key=(round(
    1e5 s), r))``, prefix-stable like :func:`sweep_rates`): draw a top-T model, sample A
    and fit ``MajorityVote(n_top=T)``, ``TopTwo1(n_top=T)``, ``TopTwo2(n_top=T)`` and
    ``OracleMLE(p, weights)``. Records: ``method``, ``sampling_rate``, ``replicate``,
    ``queries_per_task`` (n s), ``err_ordered``, ``err_set``, ``err_pos1..T``
    (:func:`top_t_errors`) and ``mse_q`` = mean over tasks and t of (q_hat_t - q_t)^2
    (TopTwo1 / TopTwo2: eq. (est_qT) of stage 1 at its own ordered answers; MV: the
    answer shares; NaN for the oracle).
    """
    owner = "top_t_sweep"
    T = check_int(n_top, "n_top", owner=owner, minimum=2)
    R_ = check_int(n_replicates, "n_replicates", owner=owner, minimum=1)
    seed = check_int(seed, "seed", owner=owner, minimum=0)
    records: list[dict[str, Any]] = []
    for s in sampling_rates:
        s = float(s)
        for r in range(R_):
            ss = np.random.SeedSequence(seed, spawn_key=(_rate_key(s), r))
            s_model, s_sample, s_mv, s_t1, s_t2 = ss.spawn(5)
            model = model_factory(np.random.default_rng(s_model))
            A = model.sample(s, rng=np.random.default_rng(s_sample))
            ests: dict[str, Any] = {
                "MV": MajorityVote(n_top=T, rng=np.random.default_rng(s_mv)),
                "TopTwo1": TopTwo1(n_top=T, rng=np.random.default_rng(s_t1)),
                "TopTwo2": TopTwo2(n_top=T, rng=np.random.default_rng(s_t2)),
                "Oracle": OracleMLE(model.reliability, model.weights),
            }
            for name, est in ests.items():
                est.fit(A)
                err = top_t_errors(est.top_, model.top_two)
                rec = {"method": name, "sampling_rate": s, "replicate": r,
                       "queries_per_task": s * model.n_workers,
                       "err_ordered": err["ordered"], "err_set": err["set"]}
                for t in range(T):
                    rec[f"err_pos{t + 1}"] = float(err["per_position"][t])
                qh = getattr(est, "confusions_", None)
                if qh is not None and name != "Oracle":
                    d = np.asarray(qh, float) - model.weights
                    rec["mse_q"] = float(np.nanmean(d * d))
                else:
                    rec["mse_q"] = float("nan")
                records.append(rec)
    return records


def subsample_sweep(responses: Any, truth: Any, methods: Mapping[str, Callable[..., Any]],
                    budgets: Sequence[int], n_replicates: int, *, seed: int
                    ) -> list[dict[str, Any]]:
    """Errors against responses per task on real data (Fig. 2a [`fig:color_error`]).

    For each budget d and replicate r, keep at most d responses per task
    (:func:`subsample_per_task`, seeded by ``SeedSequence(seed, spawn_key=(d, r))``,
    prefix-stable in r) and fit every method.

    Parameters
    ----------
    responses : Responses
        The full responses.
    truth : int array of shape (n_tasks, 2) or (n_tasks,)
        (g, h) per task, or g only (then only ``err_g`` is meaningful); 0 = unknown
        (such tasks take part in the inference but not in the score).
    methods : mapping name -> callable(model, rng)
        As from :func:`method_factories` (called with ``model=None``: no oracle).
    budgets : sequence of int >= 1
        Responses kept per task.
    n_replicates : int >= 1
        Subsamples per budget.
    seed : int >= 0
        Root seed of the subsamples.

    Returns
    -------
    list of dict with ``method``, ``budget``, ``replicate``, ``responses_per_task``
    (kept responses / tasks), ``err_g``, ``err_h``, ``err_pair`` (NaN without h).
    """
    owner = "subsample_sweep"
    R = as_responses(responses, owner=owner)
    tr = np.asarray(truth)
    if tr.ndim == 1:
        tr = np.column_stack([tr, np.zeros_like(tr)])
    if tr.shape != (R.n_tasks, 2):
        raise ValueError(f"The 'truth' parameter of {owner} must have shape (n_tasks,) or "
                         f"(n_tasks, 2) with n_tasks={R.n_tasks}; got {np.shape(truth)} "
                         f"instead.")
    reps = check_int(n_replicates, "n_replicates", owner=owner, minimum=1)
    seed = check_int(seed, "seed", owner=owner, minimum=0)
    has_g = tr[:, 0] > 0
    has_h = has_g & (tr[:, 1] > 0)
    records: list[dict[str, Any]] = []
    for d in budgets:
        d = check_int(d, "budgets", owner=owner, minimum=1)
        for r in range(reps):
            s_sub, s_est = np.random.SeedSequence(seed, spawn_key=(d, r)).spawn(2)
            A = subsample_per_task(R, d, np.random.default_rng(s_sub))
            for name, make in methods.items():
                est = make(None, np.random.default_rng(s_est)).fit(A)
                top = np.asarray(est.top_two_)
                wrong_g = top[:, 0] != tr[:, 0]
                wrong_h = top[:, 1] != tr[:, 1]
                rec = {"method": name, "budget": d, "replicate": r,
                       "responses_per_task": A.nnz / R.n_tasks,
                       "err_g": float(wrong_g[has_g].mean())}
                if has_h.any():
                    rec["err_h"] = float(wrong_h[has_h].mean())
                    rec["err_pair"] = float((wrong_g | wrong_h)[has_h].mean())
                else:
                    rec["err_h"] = rec["err_pair"] = float("nan")
                records.append(rec)
    return records


def plot_grid(panels: Sequence[Sequence[tuple[str, Mapping[str, Mapping[str, Any]]]]], *,
              xlabel: str = "average queries per task  n s", ylabel: str = "error rate",
              logy: bool = False, legend: str = "first", width: float = 3.4,
              height: float = 2.8) -> Any:
    """A grid of error-curve panels (:func:`toptwo.experiments.plot_error_curves`).

    Parameters
    ----------
    panels : list of rows, each a list of ``(title, summary)``
        ``summary`` maps method -> dict with ``x``, ``mean``, ``ci_low``, ``ci_high``
        (output of :func:`toptwo.experiments.aggregate`, or the same with lists, as
        stored in ``benchmarks/results/reproduce_*.json``).
    xlabel, ylabel : str
        X-axis label of every panel.
    logy : bool, default=False
        Logarithmic y axes.
    legend : {"first", "all"}, default="first"
        Keep the legend on the first panel only, or on every panel.
    width
        Width of one panel (inches).
    height
        Height of one panel (inches).

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.axes[r * ncols + c]`` is panel (r, c); its lines are the methods in the
        order of the summary (``line.get_xydata()`` gives (x, mean)).
    """
    import matplotlib.pyplot as plt  # lazy

    nr = len(panels)
    if nr == 0 or any(len(row) != len(panels[0]) or not row for row in panels):
        raise ValueError("plot_grid: `panels` must be a non-empty list of rows of equal, "
                         "non-zero length.")
    if legend not in ("first", "all"):
        raise ValueError(f"The 'legend' parameter of plot_grid must be 'first' or 'all'; "
                         f"got {legend!r} instead.")
    nc = len(panels[0])
    fig, axes = plt.subplots(nr, nc, figsize=(width * nc, height * nr), squeeze=False)
    from .experiments import plot_error_curves
    for r, row in enumerate(panels):
        for c, (title, summary) in enumerate(row):
            ax = axes[r, c]
            plot_error_curves(summary, ax=ax, title=title, logy=logy, xlabel=xlabel,
                              ylabel=ylabel)
            if legend == "first" and (r, c) != (0, 0):
                ax.get_legend().remove()
    fig.tight_layout()
    return fig

