r"""The findings of lessons 07 (robustness, Fig. 7-8) and 08 (real data), as functions.

Lessons 07 and 08 state their claims through these functions, and
``tests/test_lessons_07_08.py`` calls the same functions on other seeds, on halves of the
stored replicates and on deliberately wrong answers (every Monte-Carlo check holds for
other seeds and rejects a wrong answer).

* :func:`paired_family` and :func:`significant` -- the paired t tests of a stored run
  (TopTwo2 minus every method, per grid point), Holm-corrected as **one** family, and the
  methods significantly ahead of or behind TopTwo2.
* :func:`paired_rows_from_raw` -- the same paired rows from per-replicate errors (to re-test
  a claim on a subset of the replicates).
* :func:`spammer_instance`, :func:`estimation_instance` -- lesson 07's computed-here
  instances (why weighting workers pays off with spammers; why q is harder than p).
* :func:`per_task_difference`, :func:`low_high_split`, :func:`printed_comparison` --
  lesson 08's per-task comparisons on a fixed dataset and its comparison with a printed
  table.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .stats import holm_family, paired_row_tests

__all__ = ["paired_family", "significant", "paired_rows_from_raw", "auc", "spammer_instance",
           "estimation_instance", "STAGE1_VARIANTS", "per_task_difference", "low_high_split",
           "printed_comparison", "PRIOR_VARIANCE_P", "PRIOR_VARIANCE_Q", "mean_ci", "miss_rate"]

#: Variance of the default priors of :meth:`toptwo.TopTwoModel.random`: p ~ U[0, 1] and
#: q ~ U(1/2, 1]. A relative MSE (MSE / prior variance) of 1 is no better than the prior mean.
PRIOR_VARIANCE_P = 1 / 12
PRIOR_VARIANCE_Q = 1 / 48

#: The stage-1 variants lesson 08 compares (keyword arguments of TopTwo1 / TopTwo2): the
#: package default (the pooled left vector of docs/design_stage1.md, observed centring),
#: the per-k vectors with the observed centring (the earlier default), and
#: Algorithm 1 as printed (per-k vectors, the centring s'(K-2k)/K on every entry).
STAGE1_VARIANTS: dict[str, dict[str, str]] = {
    "default": {},
    "per_k": {"left_vector": "per_k"},
    "printed": {"left_vector": "per_k", "centering": "paper"},
}


def paired_family(tables: Mapping[Any, Mapping[str, Sequence[Sequence[float]]]], *,
                  exclude: Sequence[str] = ("TopTwo2",), alpha: float = 0.05
                  ) -> list[dict[str, Any]]:
    """Paired t tests of every row of several tables, Holm-corrected as one family.

    Parameters
    ----------
    tables : mapping tag -> (mapping method -> rows ``[x, mean, sem, n]``)
        E.g. ``{knob: run.paired("err_pair", knob)}`` or ``{metric: run.paired(metric,
        "color")}`` (:meth:`toptwo.experiments.paper.StoredRun.paired`): TopTwo2 minus each
        method, so a positive mean means the method has the lower error.
    exclude : sequence of str
        Methods left out of the family.
    alpha : float, default=0.05
        Family-wise error rate: the probability that any "significant" in the result is a
        false alarm, whatever the number of tests.

    Returns
    -------
    list of dict
        :func:`~toptwo.experiments.paired_row_tests` records with ``tag``, ``p_holm`` and
        ``significant`` (rows that cannot be tested, sem = 0, are never significant).
    """
    tests: list[dict[str, Any]] = []
    for tag, rows in tables.items():
        tests += paired_row_tests(rows, exclude=exclude, tags={"tag": tag})
    return holm_family(tests, alpha)


def significant(tests: Sequence[Mapping[str, Any]], side: str, *, tag: Any = None,
                x: float | None = None, methods: Sequence[str] | None = None) -> list[str]:
    """Methods significantly ahead of (``side="ahead"``) or behind (``"behind"``) TopTwo2.

    "Ahead" means a significantly lower error than TopTwo2 (a positive difference TopTwo2 -
    method), "behind" a significantly higher one, after the Holm correction of
    :func:`paired_family`. ``tag`` and ``x`` select the tests (None: any); ``methods``
    restricts the answer. Sorted, each method once.
    """
    if side not in ("ahead", "behind"):
        raise ValueError(f"`side` of significant must be 'ahead' or 'behind'; got {side!r}.")
    sign = 1 if side == "ahead" else -1
    out = {t["method"] for t in tests
           if t["significant"] and sign * t["mean"] > 0
           and (tag is None or t["tag"] == tag) and (x is None or float(t["x"]) == float(x))
           and (methods is None or t["method"] in methods)}
    return sorted(out)


def paired_rows_from_raw(raw: Mapping[str, Mapping[str, Sequence[float]]], method: str,
                         other: str, replicates: slice | Sequence[int] = slice(None)
                         ) -> list[list[float]]:
    """``method - other`` paired per replicate, per grid point: rows ``[x, mean, sem, n]``.

    ``raw`` is :meth:`~toptwo.experiments.paper.StoredRun.raw` (``{method: {str(x): [error
    per replicate]}}``); ``replicates`` selects replicates (independent draws, so two
    disjoint selections are two runs with other seeds). sem = sd / sqrt(n), ddof = 1. A grid
    point where the selection holds no replicate of one of the methods is left out.
    """
    for m in (method, other):
        if m not in raw:
            raise KeyError(f"paired_rows_from_raw: no method {m!r}; stored: {sorted(raw)}.")
    rows = []
    for key in sorted(set(raw[method]) & set(raw[other]), key=float):
        a, b = np.asarray(raw[method][key], float), np.asarray(raw[other][key], float)
        n = min(a.size, b.size)
        idx = np.arange(n)[replicates]
        d = a[idx] - b[idx]
        if d.size == 0:          # fewer replicates stored for this method (e.g. 10 of 30)
            continue
        sem = float(d.std(ddof=1) / math.sqrt(d.size)) if d.size > 1 else math.nan
        rows.append([float(key), float(d.mean()), sem, int(d.size)])
    return rows


def auc(positive: Any, negative: Any) -> float:
    """P(a random ``positive`` score > a random ``negative`` one), ties counting 1/2.

    The Mann-Whitney U statistic over ``len(positive) * len(negative)``.
    """
    pos, neg = np.asarray(positive, float), np.asarray(negative, float)
    if pos.size == 0 or neg.size == 0:
        raise ValueError("auc: both groups must be non-empty.")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (pos.size * neg.size))


def mean_ci(values: Any) -> dict[str, float]:
    """Mean of independent replicates with its 95% Student-t interval.

    Returns ``mean``, ``sem``, ``half`` (``t_{0.975, n-1} sem``), ``low``, ``high``, ``n``.
    """
    from scipy import stats  # lazy

    v = np.asarray(values, float)
    if v.ndim != 1 or v.size < 2:
        raise ValueError(f"mean_ci: need at least 2 values in a 1-D array; got shape {v.shape}.")
    sem = float(v.std(ddof=1) / math.sqrt(v.size))
    half = float(stats.t.ppf(0.975, v.size - 1) * sem)
    m = float(v.mean())
    return {"mean": m, "sem": sem, "half": half, "low": m - half, "high": m + half,
            "n": int(v.size)}


def miss_rate(margin: float, sem: float, n: int) -> float:
    """False-alarm rate of the check "the 95% t interval lies beyond the bound".

    ``margin`` is the measured mean minus the bound, signed so that a positive margin is
    the claim (e.g. ``bound - mean`` for "below the bound"), ``sem`` its standard error
    over ``n`` replicates. A re-run of the experiment passes the check when ``T = margin_hat
    / sem_hat > t_{0.975, n-1}``; if the true margin equals the measured one (plug-in),
    ``T`` is noncentral t with ``n - 1`` degrees of freedom and noncentrality ``margin /
    sem``, so this returns ``P(T <= t_{0.975, n-1})``: the probability that the check fails
    although the claim holds with the measured effect. About 1/2 when the interval just
    touches the bound, tiny for a clear effect; 1 when the margin is not positive.
    """
    from scipy import stats  # lazy

    if n < 2 or not sem > 0:
        return 0.0 if margin > 0 else 1.0
    if margin <= 0:
        return 1.0
    return float(stats.nct.cdf(stats.t.ppf(0.975, n - 1), n - 1, margin / sem))


def spammer_instance(seed: int, *, spammer_fraction: float = 0.3, s: float = 0.1,
                     shape: tuple[int, int, int] = (50, 500, 5)) -> dict[str, float]:
    """One crowd with spammers (p_i = 0): how well TopTwo2's p_hat finds them, and its gain.

    The crowd is ``TopTwoModel.random(*shape, spammer_fraction=..., rng=seed)``, the
    responses ``model.sample(s, rng=100 + seed)``; TopTwo2 and majority vote are fitted
    with ``rng=seed``.

    Returns
    -------
    dict with ``spammers`` (their number), ``auc`` (:func:`auc` of p_hat, non-spammers
    against spammers: eq. (5) ranks the spammers last when it is 1), ``err_toptwo2`` and
    ``err_mv`` (pair errors) and ``diff`` (TopTwo2 minus MV).
    """
    from ..baselines import MajorityVote
    from ..metrics import top_two_errors
    from ..mle import TopTwo2
    from ..model import TopTwoModel

    model = TopTwoModel.random(*shape, spammer_fraction=spammer_fraction, rng=seed)
    A = model.sample(s, rng=100 + seed)
    t2 = TopTwo2(reliability_estimator="moment", rng=seed).fit(A)     # eq. (5) as printed
    mv = MajorityVote(rng=seed).fit(A)
    spam = model.reliability == 0
    e2, emv = (top_two_errors(e.top_two_, model.top_two)["pair"] for e in (t2, mv))
    return {"spammers": int(spam.sum()), "auc": auc(t2.reliability_[~spam], t2.reliability_[spam]),
            "err_toptwo2": float(e2), "err_mv": float(emv), "diff": float(e2 - emv)}


def estimation_instance(seed: int, *, s: float = 0.2, shape: tuple[int, int, int] = (50, 500, 5)
                        ) -> dict[str, Any]:
    """One crowd: TopTwo2's p_hat (eq. (5)) and q_hat (eq. (4), clipped) against the truth.

    The crowd is ``TopTwoModel.random(*shape, rng=seed)`` (p ~ U[0, 1], q ~ U(1/2, 1]), the
    responses ``model.sample(s, rng=seed + 1)``, TopTwo2 fitted with ``rng=0``.

    Returns
    -------
    dict with ``rel_p`` and ``rel_q`` (MSE divided by the prior variance,
    :data:`PRIOR_VARIANCE_P`, :data:`PRIOR_VARIANCE_Q`), ``model`` and ``estimator``.
    """
    from ..mle import TopTwo2
    from ..model import TopTwoModel

    model = TopTwoModel.random(*shape, rng=seed)
    A = model.sample(s, rng=seed + 1)
    t2 = TopTwo2(reliability_estimator="moment", rng=0).fit(A)        # eq. (5) as printed
    rel_p = float(np.mean((t2.reliability_ - model.reliability) ** 2) / PRIOR_VARIANCE_P)
    rel_q = float(np.mean((t2.confusion_ - model.confusion) ** 2) / PRIOR_VARIANCE_Q)
    return {"rel_p": rel_p, "rel_q": rel_q, "model": model, "estimator": t2}


def per_task_difference(a: Any, b: Any, alpha: float = 0.05) -> dict[str, float]:
    """Mean of ``a - b`` over tasks with its Student-t interval (``mean``, ``half``, ``n``).

    ``a`` and ``b`` are per-task errors (0/1) of two methods on the same tasks. The interval
    (level ``1 - alpha``; pass ``alpha / N`` for a Bonferroni family of N comparisons) is
    over the tasks of one fixed dataset: it says how sure the comparison is on tasks like
    these, not over re-collections of the data. ``half`` is 0 when every difference is equal.
    """
    from scipy import stats  # lazy

    d = np.asarray(a, float) - np.asarray(b, float)
    if d.ndim != 1 or d.size < 2:
        raise ValueError(f"per_task_difference: need two 1-D arrays of at least 2 tasks; got "
                         f"shape {d.shape}.")
    if not 0 < alpha < 1:
        raise ValueError(f"per_task_difference: alpha must be in (0, 1); got {alpha!r}.")
    half = float(stats.t.ppf(1 - alpha / 2, d.size - 1) * d.std(ddof=1) / math.sqrt(d.size))
    return {"mean": float(d.mean()), "half": half, "n": int(d.size)}


def low_high_split(wrong: Any, q_hat: Any, k: int) -> dict[str, float]:
    """Error rate on the k tasks with the lowest ``q_hat`` against the k with the highest.

    ``wrong`` is a per-task 0/1 error (e.g. of majority vote against the truth). Ties in
    ``q_hat`` are broken by task index (stable sort), NaN scores are left out. ``z`` is the
    difference of the two rates in units of ``sd = sqrt(2 * 0.25 / k)``, an upper bound on
    the standard deviation of the difference of two shares over k tasks each, so ``z > 3``
    has a false-alarm rate below 0.14% (one-sided, normal approximation) if the two groups
    had the same error rate.
    """
    wrong, q_hat = np.asarray(wrong, float), np.asarray(q_hat, float)
    ok = np.flatnonzero(np.isfinite(q_hat))
    if not 1 <= k <= ok.size // 2:
        raise ValueError(f"low_high_split: k must be in [1, {ok.size // 2}]; got {k!r}.")
    order = ok[np.argsort(q_hat[ok], kind="stable")]
    low, high = float(wrong[order[:k]].mean()), float(wrong[order[-k:]].mean())
    sd = math.sqrt(2 * 0.25 / k)
    return {"low": low, "high": high, "sd": sd, "z": (low - high) / sd}


def printed_comparison(ours: Mapping[str, Sequence[float]],
                       printed: Mapping[str, Sequence[int | str]], columns: Sequence[str],
                       to_printed: Callable[[float, Any], Any], *, width: int = 12
                       ) -> tuple[list[str], list[tuple[str, str]]]:
    """Our table beside a printed one: text lines and the cells that differ.

    Each cell shows our value at the printed precision (``to_printed(value, printed)``, e.g.
    :func:`toptwo.datasets.at_printed_precision`), followed by the printed value in
    parentheses where the two differ. Rows in the order of ``printed``.

    Returns
    -------
    (lines, differing)
        ``lines``: a header and one line per row (``width`` characters per column);
        ``differing``: sorted ``(row, column)`` of the cells that differ.
    """
    lines = [f"{'':8s}" + "".join(f"{c:>{width}s}" for c in columns)]
    differing = []
    for row, cells in printed.items():
        line = f"{row:8s}"
        for col, o, p in zip(columns, ours[row], cells):
            o = to_printed(o, p)
            same = str(o) == str(p)
            if not same:
                differing.append((row, col))
            line += f"{(str(o) if same else f'{o} ({p})'):>{width}s}"
        lines.append(line)
    return lines, sorted(differing)
