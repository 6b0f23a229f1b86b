r"""The claims a lesson makes about a stored comparison, as functions the tests re-run.

Lesson 06 (Sec. 6.1 of the paper) states its findings about the stored synthetic run
(``reproduce_synthetic``) through these functions, and ``tests/test_lesson06_claims.py``
calls the same functions on every cell of the run, on disjoint halves of its replicates
(two independent runs with other seeds) and on a deliberately wrong answer. Everything
here reads the per-replicate tables of :meth:`toptwo.experiments.paper.StoredRun.raw`
(``{method: {str(x): [error of replicate 0, 1, ...]}}``).

* :func:`paired_rows` -- a method minus another, paired per replicate, per grid point:
  the rows ``[x, mean, sem, n]`` that :meth:`~toptwo.experiments.paper.StoredRun.paired`
  stores and :func:`toptwo.viz.plot_paired_differences` draws.
* :func:`ci_below_zero` -- where the 95% Student-t interval of such a difference lies
  below 0, and :func:`miss_rate`, the probability that a re-run of the experiment would
  not find it there although the difference is what was measured (the false-alarm rate
  of the check "the CI lies below 0", derived from the same t interval).
* :func:`holm_ranking` -- paired t tests of grid-averaged errors for every pair a lesson
  looks at, in every group (scenario), Holm-corrected as **one** family: a "significantly
  better" in the result has a family-wise error rate of at most ``alpha``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from .stats import compare_methods, grid_average, holm

__all__ = ["paired_rows", "ci_below_zero", "ci_above_zero", "miss_rate", "Ranking", "holm_ranking",
           "SYNTHETIC_CLAIMS", "synthetic_claims", "paired_correlation",
           "subset_replicates"]

Raw = Mapping[str, Mapping[str, Sequence[float]]]


def subset_replicates(raw: Raw, replicates: Sequence[int] | slice) -> dict[str, dict[str, list[float]]]:
    """The same table restricted to some replicates (e.g. ``slice(0, 15)``).

    Replicates are independent draws (:func:`toptwo.experiments.replicate_seed`), so two
    disjoint subsets are two independent runs of the experiment with other seeds.
    """
    out: dict[str, dict[str, list[float]]] = {}
    for method, table in raw.items():
        out[method] = {}
        for x, values in table.items():
            v = np.asarray(values, dtype=float)
            out[method][x] = (v[replicates] if isinstance(replicates, slice)
                              else v[np.asarray(replicates, dtype=int)]).tolist()
    return out


def paired_rows(raw: Raw, a: str, b: str) -> list[list[float]]:
    """``a - b`` per grid point, paired per replicate: rows ``[x, mean, sem, n]``.

    Parameters
    ----------
    raw : mapping method -> {str(x): [error per replicate]}
        Per-replicate errors (:meth:`~toptwo.experiments.paper.StoredRun.raw`).
    a, b : str
        Methods; negative means: ``a`` has the lower error.

    Returns
    -------
    list of [x, mean, sem, n], sorted by x (sem = sd / sqrt(n), sd with ddof = 1).
    """
    for m in (a, b):
        if m not in raw:
            raise ValueError(f"paired_rows: method {m!r} not in the table; available: "
                             f"{sorted(raw)}.")
    rows = []
    for x in sorted(set(raw[a]) & set(raw[b]), key=float):
        va, vb = np.asarray(raw[a][x], float), np.asarray(raw[b][x], float)
        n = min(va.size, vb.size)
        d = va[:n] - vb[:n]
        sem = float(d.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
        rows.append([float(x), float(d.mean()), sem, n])
    return rows


def _half(sem: float, n: int) -> float:
    from scipy import stats  # lazy
    return float(stats.t.ppf(0.975, n - 1) * sem) if n > 1 else math.inf


def ci_below_zero(rows: Sequence[Sequence[float]], *, xmin: float = -math.inf) -> dict[float, bool]:
    """For each grid point x >= ``xmin``: does the 95% t interval of the mean lie below 0?

    ``rows`` are ``[x, mean, sem, n]`` (:func:`paired_rows`); the interval is mean +/-
    ``t_{0.975, n-1}`` sem. True at x means: the first method of the difference has the
    lower error there, at the 5% level of that one interval.
    """
    return {float(x): bool(mean + _half(sem, int(n)) < 0)
            for x, mean, sem, n in rows if float(x) >= xmin}


def ci_above_zero(rows: Sequence[Sequence[float]], *, xmin: float = -math.inf) -> dict[float, bool]:
    """As :func:`ci_below_zero`, for an interval entirely above 0 (the second method better)."""
    return ci_below_zero([[x, -mean, sem, n] for x, mean, sem, n in rows], xmin=xmin)


def miss_rate(mean: float, sem: float, n: int) -> float:
    """Probability that a re-run's 95% interval does not lie below 0, if the truth is ``mean``.

    The check "the t interval of a paired difference lies below 0" fails on a re-run of the
    experiment when ``T = mean_hat / sem_hat > -t_{0.975, n-1}``; with the true mean equal
    to the measured one (a plug-in estimate), ``T`` is noncentral t with n - 1 degrees of
    freedom and noncentrality ``mean / sem``. So this is the false-alarm rate of the check
    (it fails although the claim "below 0" holds), derived from the interval it uses. It
    is about 1/2 when the measured interval just touches 0, and tiny for a clear effect.
    For a mean >= 0 (the claim does not hold) it returns 1.
    """
    from scipy import stats  # lazy
    if n < 2 or not sem > 0:
        return 0.0 if mean < 0 else 1.0
    if mean >= 0:
        return 1.0
    t = stats.t.ppf(0.975, n - 1)
    return float(stats.nct.sf(-t, n - 1, mean / sem))


def paired_correlation(raw: Raw, a: str, b: str) -> tuple[float, float, int]:
    """Correlation of two methods' errors over replicates, within each grid point.

    Both methods' errors are centred at each x (so the fall of the error with x does not
    count), pooled over x, and tested with a one-sided Pearson test of "correlation > 0"
    (``scipy.stats.pearsonr``; the centring costs one degree of freedom per grid point,
    which the test ignores: negligible with 30 replicates per x).

    Returns
    -------
    (r, p, n) : the correlation, the one-sided p-value and the number of pairs.
    """
    from scipy import stats  # lazy

    xa, xb = [], []
    for x in sorted(set(raw[a]) & set(raw[b]), key=float):
        va, vb = np.asarray(raw[a][x], float), np.asarray(raw[b][x], float)
        k = min(va.size, vb.size)
        xa.append(va[:k] - va[:k].mean())
        xb.append(vb[:k] - vb[:k].mean())
    da, db = np.concatenate(xa), np.concatenate(xb)
    res = stats.pearsonr(da, db, alternative="greater")
    return float(res.statistic), float(res.pvalue), int(da.size)


@dataclass
class Ranking:
    """Methods ordered per group by grid-averaged error, with Holm-corrected paired tests.

    Attributes
    ----------
    order : dict group -> list of methods, best (lowest mean grid-averaged error) first
    tests : dict (group, a, b) -> test of ``a - b`` (both orientations stored), with
        ``mean``, ``ci_low``, ``ci_high``, ``p``, ``p_holm``, ``significant``
    family_size : int, the number of tests corrected together
    alpha : float, the family-wise error rate
    """

    order: dict[str, list[str]]
    tests: dict[tuple[str, str, str], dict[str, Any]] = field(repr=False)
    family_size: int
    alpha: float

    def better(self, group: str, a: str, b: str) -> bool:
        """``a`` significantly better (lower error) than ``b`` in ``group``, after Holm."""
        key = (group, a, b)
        if key not in self.tests:
            raise KeyError(f"Ranking.better: {a!r} vs {b!r} in {group!r} is not in the "
                           f"tested family (focus methods and the first two of each group).")
        t = self.tests[key]
        return bool(t["significant"] and t["mean"] < 0)

    def ahead_of(self, group: str, method: str) -> list[str]:
        """The methods significantly better than ``method`` in ``group`` (in rank order)."""
        return [m for m in self.order[group]
                if m != method and (group, m, method) in self.tests
                and self.better(group, m, method)]

    def behind(self, group: str, method: str) -> list[str]:
        """The methods significantly worse than ``method`` in ``group`` (in rank order)."""
        return [m for m in self.order[group]
                if m != method and (group, method, m) in self.tests
                and self.better(group, method, m)]


def holm_ranking(raw_by_group: Mapping[str, Raw], methods: Sequence[str], *,
                 focus: Sequence[str] = (), alpha: float = 0.05) -> Ranking:
    """Rank ``methods`` in every group and test the pairs that a ranking claim needs.

    Per group the methods are ordered by their mean grid-averaged error
    (:func:`~toptwo.experiments.grid_average`, ties by name); the family is, in every
    group, the first and the second of that order and every ``focus`` method against
    every other method. All tests of all groups are Holm-corrected together
    (:func:`~toptwo.experiments.holm`), so the family-wise error rate of all the
    "significantly better" statements is at most ``alpha``.

    Parameters
    ----------
    raw_by_group : mapping group -> raw table
        E.g. ``{scenario: run.raw("err_pair", scenario)}``.
    methods : sequence of str
        The methods ranked (e.g. every method but the oracle).
    focus : sequence of str
        Methods compared with every other method in every group (the paper's claims).
    alpha : float, default=0.05
        Family-wise error rate.
    """
    methods = list(methods)
    order, flat, res = {}, [], []
    for group, raw in raw_by_group.items():
        order[group] = sorted(methods, key=lambda m: (float(grid_average(raw, m).mean()), m))
        lead = {order[group][0], order[group][1], *focus}
        pairs = sorted({(min(a, b), max(a, b)) for a in lead for b in methods if a != b})
        res += compare_methods(raw, pairs, alpha=alpha)
        flat += [(group, a, b) for a, b in pairs]
    padj = holm([r["p"] for r in res])
    tests = {}
    for (group, a, b), r, q in zip(flat, res, padj):
        r = dict(r, p_holm=float(q), significant=bool(q <= alpha))
        tests[group, a, b] = r
        tests[group, b, a] = dict(r, a=b, b=a, mean=-r["mean"], ci_low=-r["ci_high"],
                                  ci_high=-r["ci_low"])
    return Ranking(order=order, tests=tests, family_size=len(res), alpha=alpha)


#: The claims lesson 06 states about the synthetic scenarios of Sec. 6.1, by key (the
#: sentence each stands for). :func:`synthetic_claims` evaluates them.
SYNTHETIC_CLAIMS = {
    # each sentence is what the lesson shows on the page; "significantly" is the Holm family of
    # holm_ranking, "on average" the per-replicate mean over the budgets n s (grid_average),
    # "beats at n s" a paired 95% CI below 0 at each such budget
    "paired": "on easy, TopTwo2's and MV's errors are positively correlated (one-sided Pearson test at 0.01)",
    "mv": "TopTwo2 beats MV at every n s >= 8 in every scenario",
    "rich": "TopTwo2 beats EBCC, MultiSPA-KL and MV-D&S (full) at every n s >= 6 in every scenario",
    "stage1": "TopTwo2 significantly better than TopTwo1 on average on hard and high_variance",
    "mmsr": "TopTwo2 significantly better than M-MSR on average in every scenario",
    "one_coin_close": "every CI of TopTwo2 minus a one-coin EM method lies within +-0.06",
    "mace_few_smart": "MACE ahead of TopTwo2 at some n s on few_smart (CI above 0)",
    "claim1_holds": "no method of the paper significantly ahead of TopTwo2 on easy, hard, high_variance",
    "claim1_fails_few_smart": "some method significantly ahead of TopTwo2 on few_smart",
    "opt_not_second_hard": "at least two methods significantly ahead of OPT-D&S on hard",
    "opt_not_worst_few_smart": "some method significantly behind OPT-D&S on few_smart",
    "split_costs": "sample splitting significantly worse than TopTwo2 in every scenario",
    "refine_no_harm": "the refinement (n_refinements=3) nowhere significantly worse than TopTwo2",
}


def synthetic_claims(raw_by_group: Mapping[str, Raw], methods: Sequence[str],
                     paper_methods: Sequence[str], *, ranking: Ranking | None = None
                     ) -> dict[str, bool]:
    """Evaluate lesson 06's claims (:data:`SYNTHETIC_CLAIMS`) on per-replicate errors.

    The lesson calls this on the stored run; ``tests/test_lesson06_claims.py`` calls it on
    each half of the replicates (independent runs with other seeds) and on wrong answers
    (TopTwo2's errors shifted), which must flip the claims they contradict.

    Parameters
    ----------
    raw_by_group : mapping scenario -> raw table
        ``{"easy": run.raw("err_pair", "easy"), ...}`` for the four scenarios.
    methods : sequence of str
        The ranked methods (every method but the oracle).
    paper_methods : sequence of str
        The paper's methods (claim 1 is about them).
    ranking : Ranking, optional
        :func:`holm_ranking` of the same data with focus TopTwo2 and OPT-D&S (computed
        when not given).

    Returns
    -------
    dict key -> bool, one per key of :data:`SYNTHETIC_CLAIMS`.
    """
    from scipy import stats  # lazy

    rank = ranking or holm_ranking(raw_by_group, methods, focus=("TopTwo2", "OPT-D&S"))
    groups = list(raw_by_group)

    def rows(name: str, other: str) -> list[list[float]]:
        return paired_rows(raw_by_group[name], "TopTwo2", other)

    def below(other: str, xmin: float) -> bool:
        return all(all(ci_below_zero(rows(g, other), xmin=xmin).values()) for g in groups)

    edge = max(abs(m) + stats.t.ppf(0.975, n - 1) * s for other in ("MV-D&S", "PGD", "MultiSPA-EM")
               for g in groups for _, m, s, n in rows(g, other))
    paper = [m for m in paper_methods if m not in ("Oracle", "TopTwo2")]
    split = [rank.tests[g, "TopTwo2 split", "TopTwo2"] for g in groups]
    return {
        "paired": paired_correlation(raw_by_group["easy"], "TopTwo2", "MV")[1] < 0.01,
        "mv": below("MV", 8),
        "rich": all(below(m, 6) for m in ("EBCC", "MultiSPA-KL", "MV-D&S (full)")),
        "stage1": all(rank.better(g, "TopTwo2", "TopTwo1") for g in ("hard", "high_variance")),
        "mmsr": all(rank.better(g, "TopTwo2", "M-MSR") for g in groups),
        "one_coin_close": bool(edge < 0.06),
        "mace_few_smart": any(ci_above_zero(rows("few_smart", "MACE")).values()),
        "claim1_holds": not any(m in paper for g in ("easy", "hard", "high_variance")
                                for m in rank.ahead_of(g, "TopTwo2")),
        "claim1_fails_few_smart": bool(rank.ahead_of("few_smart", "TopTwo2")),
        "opt_not_second_hard": len(rank.ahead_of("hard", "OPT-D&S")) >= 2,
        "opt_not_worst_few_smart": bool(rank.behind("few_smart", "OPT-D&S")),
        "split_costs": all(t["significant"] and t["mean"] > 0 for t in split),
        "refine_no_harm": not any(rank.better(g, "TopTwo2", "TopTwo2 refine3") for g in groups),
    }
