"""Statistics of comparisons: means with CIs, paired differences, Holm-corrected tests.

See :mod:`toptwo.experiments` for the overview. Quantiles and tests come from
:mod:`scipy.stats`, imported on first use (it takes ~0.3 s to import).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np


__all__ = ["aggregate", "paired_gap", "paired_differences", "paired_row_tests", "holm_family", "grid_average", "compare_methods", "holm", "queries_needed", "paired_tolerance", "t_claim", "estimate_claim", "sweep_failures"]

#: A standard error at or below this is zero up to round-off: error rates and their
#: differences are multiples of 1/m (>= 1e-8 for any m the package handles), so paired
#: differences that vary at all have a standard error far above it, while equal
#: differences computed in floating point can leave ~1e-17.
_ROUNDOFF_SEM = 1e-12



# ------------------------------------------------------------------------- statistics
def _t975(df: int) -> float:
    """97.5% quantile of Student's t with ``df`` degrees of freedom (NaN for df < 1)."""
    from scipy import stats  # lazy: scipy.stats takes ~0.3 s to import
    return float(stats.t.ppf(0.975, df)) if df >= 1 else float("nan")


def _mean_sem(values: Sequence[float]) -> tuple[float, float]:
    a = np.asarray(values, float)
    return float(a.mean()), (float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else 0.0)


def aggregate(records: Sequence[Mapping[str, Any]], metric: str, *,
              x: str = "queries_per_task", by: str = "method"
              ) -> dict[Any, dict[str, np.ndarray]]:
    """Mean, standard error and Student-t 95% confidence interval per group and x.

    Parameters
    ----------
    records : sequence of dict
        Output of :func:`sweep` (possibly concatenated).
    metric : str
        The key to summarise, e.g. ``"err_pair"``.
    x : str, default="queries_per_task"
        The key giving the x-axis (one summary per distinct value, sorted).
    by : str, default="method"
        The key defining the groups (curves).

    Returns
    -------
    dict group -> dict of 1-D arrays ``x``, ``mean``, ``sem`` (sample standard
    deviation / sqrt(n), 0 for a single replicate), ``ci_low``, ``ci_high`` (mean -/+
    t_{0.975, n-1} sem, ``scipy.stats.t``; equal to the mean for a single replicate) and
    ``n`` (replicates with a finite value). Groups are in order of first appearance.
    """
    if not records:
        raise ValueError("aggregate: `records` is empty; run a sweep first.")
    for k in (metric, x, by):
        if k not in records[0]:
            raise KeyError(f"aggregate: records have no key {k!r}; available keys are "
                           f"{sorted(records[0])}.")
    groups: dict[Any, dict[float, list[float]]] = {}
    for rec in records:
        groups.setdefault(rec[by], {}).setdefault(float(rec[x]), []).append(float(rec[metric]))
    out: dict[Any, dict[str, np.ndarray]] = {}
    for g, per_x in groups.items():
        xs = np.array(sorted(per_x))
        mean, sem, lo, hi, cnt = (np.empty(xs.size) for _ in range(5))
        for i, xv in enumerate(xs):
            vals = np.asarray(per_x[xv])
            vals = vals[np.isfinite(vals)]
            k = vals.size
            cnt[i] = k
            mean[i] = vals.mean() if k else np.nan
            sem[i] = vals.std(ddof=1) / math.sqrt(k) if k > 1 else (0.0 if k else np.nan)
            half = _t975(k - 1) * sem[i] if k > 1 else 0.0
            lo[i], hi[i] = mean[i] - half, mean[i] + half
        out[g] = {"x": xs, "mean": mean, "sem": sem, "ci_low": lo, "ci_high": hi,
                  "n": cnt.astype(np.int64)}
    return out


def _paired_values(records: Sequence[Mapping[str, Any]], method: str, other: str,
                   metric: str, x: str, where: Mapping[str, Any]
                   ) -> dict[tuple[float, int], float]:
    """(x, replicate) -> metric(method) - metric(other), over the draws both have a finite
    value for. Two records of one method for the same (x, replicate) (e.g. two scenarios
    concatenated without a ``where`` filter) are refused: pairing them would be arbitrary."""
    vals: dict[str, dict[tuple[float, int], float]] = {method: {}, other: {}}
    for rec in records:
        if rec["method"] in vals and all(rec.get(k) == v for k, v in where.items()):
            key = (float(rec[x]), int(rec["replicate"]))
            if key in vals[rec["method"]]:
                raise ValueError(f"two records of {rec['method']!r} for {x} = {key[0]!r}, "
                                 f"replicate {key[1]}: select one group of draws with "
                                 f"`where=` (e.g. where={{'scenario': ...}}).")
            v = float(rec[metric])
            vals[rec["method"]][key] = v if math.isfinite(v) else math.nan
    common = sorted(set(vals[method]) & set(vals[other]))
    return {k: vals[method][k] - vals[other][k] for k in common
            if math.isfinite(vals[method][k] - vals[other][k])}


def paired_gap(records: Sequence[Mapping[str, Any]], method: str, reference: str,
               metric: str = "err_pair", *, x: str = "queries_per_task",
               where: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Gap ``metric(method) - metric(reference)`` paired per (x, replicate).

    Per replicate r the differences are averaged over the x grid; the mean over
    replicates of these averages is the gap, with a Student-t 95% CI (the replicates
    are independent draws). Only replicates with a finite difference at *every* x of the
    grid take part (an average over fewer points would weigh the grid differently); a
    replicate missing some x is left out of the gap but kept in ``per_x``. Also returns
    the gap per x value.

    Parameters
    ----------
    records : output of :func:`sweep`
        The records.
    method, reference : str
        Values of the ``method`` key.
    metric : str, default="err_pair"
        The record field compared.
    x : str, default="queries_per_task"
        The record field that indexes the grid.
    where : mapping, optional
        Keep only records whose keys equal these values (e.g. ``{"scenario": "hard"}``).

    Returns
    -------
    dict with ``mean``, ``sem``, ``ci_low``, ``ci_high``, ``n`` (complete replicates) and
    ``per_x``: dict x -> (mean difference, sem) over replicates at that x.
    """
    where = dict(where or {})
    diffs = _paired_values(records, method, reference, metric, x, where)
    if not diffs:
        raise ValueError(f"paired_gap: no (x, replicate) with both {method!r} and "
                         f"{reference!r} in the records (where={where!r}).")
    per_rep: dict[int, list[float]] = {}
    per_x: dict[float, list[float]] = {}
    for (xv, r), d in diffs.items():
        per_rep.setdefault(r, []).append(d)
        per_x.setdefault(xv, []).append(d)
    reps = [float(np.mean(v)) for _, v in sorted(per_rep.items()) if len(v) == len(per_x)]
    if not reps:
        raise ValueError(f"paired_gap: no replicate has both {method!r} and {reference!r} "
                         f"at every {x} of the grid {sorted(per_x)} (where={where!r}).")
    mean, sem = _mean_sem(reps)
    half = _t975(len(reps) - 1) * sem if len(reps) > 1 else 0.0
    return {"mean": mean, "sem": sem, "ci_low": mean - half, "ci_high": mean + half,
            "n": len(reps), "per_x": {xv: _mean_sem(v) for xv, v in sorted(per_x.items())}}


def paired_differences(records: Sequence[Mapping[str, Any]], method: str,
                       others: Sequence[str], metric: str = "err_pair", *,
                       x: str = "queries_per_task", where: Mapping[str, Any] | None = None
                       ) -> dict[str, list[list[float]]]:
    """Per x: ``[x, mean, sem, n]`` of the paired difference ``method - other``.

    The rows of the "TopTwo2 minus every method" tables of
    ``benchmarks/reproduce_paper.py`` and of :func:`toptwo.viz.plot_paired_differences`
    (one row per x; ``sem`` is the sample sd of the per-replicate differences over
    sqrt(n)). Pairs are the (x, replicate) draws with a finite value for both methods.

    Parameters
    ----------
    records : output of :func:`sweep`
        The records.
    method : str
        The method the others are subtracted from (e.g. ``"TopTwo2"``).
    others : sequence of str
        The methods compared with it (``method`` itself is skipped).
    metric : str, default="err_pair"
        The record field compared.
    x : str, default="queries_per_task"
        The record field that indexes the grid.
    where : mapping, optional
        Keep only records whose keys equal these values.

    Returns
    -------
    dict other -> list of ``[x, mean, sem, n]`` rows, sorted by x.
    """
    out = {}
    for other in others:
        if other == method:
            continue
        per_x: dict[float, list[float]] = {}
        for (xv, _), d in _paired_values(records, method, other, metric, x,
                                         dict(where or {})).items():
            per_x.setdefault(xv, []).append(d)
        out[other] = [[xv, *_mean_sem(d), len(d)] for xv, d in sorted(per_x.items())]
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


def paired_row_tests(rows: Mapping[str, Sequence[Sequence[float]]], *,
                     exclude: Sequence[str] = (), tags: Mapping[str, Any] | None = None
                     ) -> list[dict[str, Any]]:
    """Two-sided t tests of stored paired differences, one per (method, x) row.

    Each row ``[x, mean, sem, n]`` (as from :func:`paired_differences`, or
    :meth:`toptwo.experiments.paper.StoredRun.paired`) summarises n paired differences; the test of
    "mean difference = 0" has t = mean / sem with n - 1 degrees of freedom
    (``scipy.stats.t``). A row with n < 2 or sem = 0 (up to round-off, ``_ROUNDOFF_SEM``)
    is **not testable** (``p`` is NaN):
    with sem = 0 every draw gave the same difference, which happens when the draws do
    not vary (e.g. keeping d answers per task when no task has more than d), so there
    is one comparison, not a sample of them. :func:`holm_family` leaves such rows out of
    the family and never calls them significant.

    Parameters
    ----------
    rows : mapping method -> list of [x, mean, sem, n]
        The paired differences per method.
    exclude : sequence of str, optional
        Methods to leave out (e.g. the reference itself).
    tags : mapping, optional
        Key/values copied into every result (e.g. ``{"knob": "n_tasks"}``).

    Returns
    -------
    list of dict with ``method``, ``x``, ``mean``, ``sem``, ``n``, ``half`` (half-width of
    the 95% CI; NaN where not testable), ``p`` and the tags. Adjust a family of them with
    :func:`holm_family`.
    """
    from scipy import stats  # lazy: scipy.stats takes ~0.3 s to import
    out = []
    for method, table in rows.items():
        if method in exclude:
            continue
        for x, mean, sem, n in table:
            n = int(n)
            testable = n >= 2 and sem is not None and sem > _ROUNDOFF_SEM
            p = float(2 * stats.t.sf(abs(mean / sem), n - 1)) if testable else math.nan
            out.append({"method": method, "x": x, "mean": mean, "sem": sem, "n": n,
                        "half": _t975(n - 1) * sem if testable else math.nan,
                        "p": p, **dict(tags or {})})
    return out


def holm_family(tests: list[dict[str, Any]], alpha: float = 0.05) -> list[dict[str, Any]]:
    """Holm-adjust the p-values of one family of tests, in place.

    Parameters
    ----------
    tests : list of dict with a ``p`` entry
        The family (e.g. from :func:`paired_row_tests`). Tests with a NaN ``p`` (not
        testable) are not part of the family: they get ``p_holm`` NaN and are never
        significant.
    alpha : float in (0, 1), default=0.05
        Family-wise error rate.

    Returns
    -------
    list of dict
        ``tests``, each with ``p_holm`` (:func:`holm`) and ``significant`` (``p_holm <=
        alpha``) added.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"The 'alpha' parameter of holm_family must be in (0, 1); got "
                         f"{alpha!r} instead.")
    family = [t for t in tests if not math.isnan(t["p"])]
    for t in tests:
        t["p_holm"], t["significant"] = math.nan, False
    if family:
        for t, q in zip(family, holm([t["p"] for t in family])):
            t["p_holm"] = float(q)
            t["significant"] = bool(q <= alpha)
    return tests


def grid_average(raw: Mapping[str, Mapping[str, Sequence[float]]], method: str,
                 xs: Sequence[float] | None = None) -> np.ndarray:
    """Per replicate, a method's error averaged over the grid points ``xs``.

    Parameters
    ----------
    raw : mapping method -> {str(x): [error of replicate 0, 1, ...]}
        The ``raw_err_pair`` tables of ``benchmarks/reproduce_paper.py``
        (:meth:`toptwo.experiments.paper.StoredRun.raw`).
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
    (``p_holm <= alpha``); a pair whose difference is the same in every replicate is not
    testable (``p`` NaN, never significant; see :func:`holm_family`).
    """
    from scipy import stats  # lazy: scipy.stats takes ~0.3 s to import
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
        half = _t975(n - 1) * sem
        # sem = 0: every replicate gave the same difference -- one comparison, not testable
        p = float(stats.ttest_rel(da[:n], db[:n]).pvalue) if sem > _ROUNDOFF_SEM else math.nan
        rows.append({"a": a, "b": b, "mean": float(d.mean()), "ci_low": float(d.mean()) - half,
                     "ci_high": float(d.mean()) + half, "n": int(n), "p": p})
    return holm_family(rows, alpha)


def queries_needed(x: Any, error: Any, target: float) -> float:
    """The x (e.g. n s) at which an error curve first drops to ``target`` or below.

    Between the last grid point above the target and the first at or below it, the
    curve is interpolated linearly in (log x, log error) (in (log x, error) when the
    lower point is 0). Returns ``x[0]`` if the curve starts at or below the target and
    NaN if it never gets there.

    Parameters
    ----------
    x : array-like, increasing, > 0
        Increasing grid of queries per task (n s).
    error : array-like, same length
        Mean error at each grid point.
    target : float > 0
        The error level epsilon to reach.
    """
    xs = np.asarray(x, float)
    ys = np.asarray(error, float)
    if xs.ndim != 1 or xs.shape != ys.shape or xs.size == 0:
        raise ValueError(f"queries_needed: `x` and `error` must be 1-D of equal length; got "
                         f"shapes {xs.shape} and {ys.shape}.")
    if not np.all(xs > 0) or np.any(np.diff(xs) <= 0):
        raise ValueError("queries_needed: `x` must be positive and strictly increasing.")
    if not target > 0:
        raise ValueError(f"queries_needed: `target` must be > 0; got {target!r} instead.")
    below = np.flatnonzero(ys <= target)
    if below.size == 0:
        return float("nan")
    i = int(below[0])
    if i == 0:
        return float(xs[0])
    x0, x1, y0, y1 = np.log(xs[i - 1]), np.log(xs[i]), ys[i - 1], ys[i]
    if y1 > 0:
        t = (np.log(y0) - np.log(target)) / (np.log(y0) - np.log(y1))
    else:
        t = (y0 - target) / (y0 - y1)
    return float(np.exp(x0 + t * (x1 - x0)))


def paired_tolerance(top_a: Any, top_b: Any, n_sd: float = 2.0) -> float:
    """``n_sd`` standard deviations of the difference of two methods' pair error rates.

    The two error rates on the same m tasks differ only on the tasks where their pairs
    differ (a fraction d), so their difference has standard deviation at most
    sqrt(d/m); returns n_sd sqrt(d/m). (Notebook 04 holds TopTwo2 to the oracle and to
    stage 1 within it.)
    """
    a, b = np.asarray(top_a), np.asarray(top_b)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"paired_tolerance needs two (n_tasks, 2) label arrays of one shape; "
                         f"got {a.shape} and {b.shape}.")
    d = float(np.mean(np.any(a != b, axis=1)))
    return float(n_sd * np.sqrt(d / a.shape[0]))


# ------------------------------------------------------------- false-alarm rates of claims
def _check_side(side: Any, owner: str) -> str:
    if side not in (">", "<"):
        raise ValueError(f"{owner}: `side` must be '>' or '<'; got {side!r} instead.")
    return side


def t_claim(values: Any, side: str, bound: float = 0.0, level: float = 0.95) -> dict[str, float | bool]:
    """A claim "mean > bound" (``side=">"``) or "mean < bound" shown by a Student-t interval.

    The claim is accepted when the whole two-sided ``level`` interval of the mean of
    ``values`` (paired differences, one per seed) lies on the claimed side of ``bound``. Its
    **false-alarm rate** is the probability that a re-run on fresh seeds fails the check
    although the claim holds; at the measured effect (true mean and standard deviation equal
    to the sample's) it is the noncentral-t probability P(T' <= t_(1+level)/2), T' ~
    nct(n - 1, delta), delta = |mean - bound| sqrt(n)/sd (``scipy.stats.nct``). This is an
    estimate (the effect is estimated too); the seed sweeps of the lessons check it.

    Returns
    -------
    dict with ``mean``, ``half`` (half-width of the interval), ``limit`` (the interval's end
    nearest ``bound``), ``holds`` and ``false_alarm``.
    """
    from scipy import stats

    _check_side(side, "t_claim")
    d = np.asarray(values, float)
    if d.ndim != 1 or d.size < 2 or not np.all(np.isfinite(d)):
        raise ValueError(f"t_claim needs a 1-d sample of at least 2 finite values; got shape {d.shape}.")
    if not 0.0 < level < 1.0:
        raise ValueError(f"t_claim: `level` must lie in (0, 1); got {level!r} instead.")
    n = d.size
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    t_crit = float(stats.t.ppf(0.5 + level / 2, n - 1))
    half = t_crit * sd / math.sqrt(n)
    sign = 1.0 if side == ">" else -1.0
    limit = mean - sign * half
    holds = bool(sign * (limit - bound) > 0)
    if sd <= _ROUNDOFF_SEM:
        fa = 0.0 if sign * (mean - bound) > 0 else 1.0
    else:
        delta = sign * (mean - bound) * math.sqrt(n) / sd
        fa = float(stats.nct.cdf(t_crit, n - 1, delta))
    return {"mean": mean, "half": half, "limit": limit, "holds": holds, "false_alarm": fa}


def estimate_claim(estimate: float, sem: float, side: str, bound: float) -> dict[str, float | bool]:
    """A claim "quantity > bound" (``side=">"``) or "< bound" checked on a point estimate.

    With the estimate approximately normal with standard error ``sem``, the false-alarm rate
    at the measured value (the probability that a re-run lands on the wrong side of
    ``bound`` although the true value is the estimate) is Phi(-|estimate - bound|/sem) when
    the claim holds (and >= 1/2 when it does not).

    Returns
    -------
    dict with ``estimate``, ``sem``, ``holds`` and ``false_alarm``.
    """
    from scipy import stats

    _check_side(side, "estimate_claim")
    est, se = float(estimate), float(sem)
    if not (math.isfinite(est) and math.isfinite(se) and se >= 0):
        raise ValueError(f"estimate_claim needs a finite estimate and sem >= 0; got {estimate!r}, {sem!r}.")
    sign = 1.0 if side == ">" else -1.0
    margin = sign * (est - float(bound))
    holds = bool(margin > 0)
    fa = (0.0 if holds else 1.0) if se <= _ROUNDOFF_SEM else float(stats.norm.cdf(-margin / se))
    return {"estimate": est, "sem": se, "holds": holds, "false_alarm": fa}


def sweep_failures(outcomes: Any, level: float = 0.95) -> dict[str, float | int]:
    """How often a check failed over a seed sweep: count, trials and the Clopper-Pearson upper
    limit of the failure rate (one-sided ``level``; ``scipy.stats.binomtest``)."""
    from scipy import stats

    ok = np.asarray(outcomes, bool).ravel()
    if ok.size == 0:
        raise ValueError("sweep_failures needs at least one outcome.")
    fails = int((~ok).sum())
    hi = float(stats.binomtest(fails, ok.size).proportion_ci(confidence_level=2 * level - 1, method="exact").high)
    return {"failures": fails, "trials": int(ok.size), "upper": hi}
