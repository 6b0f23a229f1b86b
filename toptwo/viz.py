r"""Figures and small numeric helpers for the teaching notebooks.

Every ``plot_*`` function returns a :class:`matplotlib.figure.Figure` (created with
``matplotlib.pyplot.subplots`` so that it shows inline in a notebook) whose data can be
read back in tests (``ax.lines[i].get_xydata()``, ``ax.patches``). matplotlib is imported
inside the functions: ``import toptwo`` works without it.

The numeric helpers are the computations that a figure and the assert next to it share:

- :func:`answer_frequencies` -- empirical answer frequencies of one task against the
  distribution of eq. (1) [`eqn:A_dist`];
- :func:`fit_loglog_slope` -- least-squares slope of log y against log x (rates);
- :func:`sin_theta` -- sin of the angle between two vectors (Lemma [`lem:sin_uk_p`]).

The figures of the experiment layer (:mod:`toptwo.experiments`) are here too: error curves
with confidence bands (:func:`plot_error_curves`, :func:`plot_grid`), estimates against the
truth (:func:`plot_estimates`), paired differences and gap rankings.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ._validation import check_int
from .model import TopTwoModel
from .responses import as_responses

__all__ = [
    "answer_frequencies",
    "fit_loglog_slope",
    "sin_theta",
    "plot_answer_frequencies",
    "plot_singular_values",
    "plot_rate",
    "plot_delta_v",
    "method_color",
    "plot_paired_differences",
    "plot_gap_ranking",
    "plot_error_curves",
    "plot_estimates",
    "plot_grid",
    "small_texts",
]


# ---------------------------------------------------------------- numeric helpers
def answer_frequencies(model: TopTwoModel, A: Any, task: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Empirical answer frequencies of one task against eq. (1) [`eqn:A_dist`].

    Parameters
    ----------
    model : TopTwoModel
        The model A was sampled from (top-two or top-T).
    A : array-like, sparse matrix or Responses
        Response matrix of shape (n_workers, n_tasks), labels 1..K, 0 = not answered.
    task : int
        Column index j (0-based).

    Returns
    -------
    empirical : ndarray of shape (K,)
        Fraction of the answers to task j equal to each label 1..K (NaN if no answer).
    expected : ndarray of shape (K,)
        E[empirical | which workers answered] = mean over the answering workers i of
        P(A_ij = c | A_ij != 0), i.e. eq. (1) divided by s (NaN if no answer).
    n_answers : int
        Number of workers who answered task j.
    """
    owner = "answer_frequencies"
    if not isinstance(model, TopTwoModel):
        raise TypeError(f"The 'model' parameter of {owner} must be a TopTwoModel; got "
                        f"{type(model).__name__} instead.")
    R = as_responses(A, model.n_labels, owner=owner)
    if R.shape != (model.n_workers, model.n_tasks):
        raise ValueError(f"The 'A' parameter of {owner} must have the model's shape "
                         f"{(model.n_workers, model.n_tasks)}; got {R.shape} instead.")
    j = _check_task(task, model.n_tasks, owner)
    K = model.n_labels
    on = R.tasks == j
    workers, labels = R.workers[on], R.labels[on]
    n_answers = int(workers.shape[0])
    if n_answers == 0:
        return np.full(K, np.nan), np.full(K, np.nan), 0
    empirical = np.bincount(labels - 1, minlength=K)[:K] / n_answers
    p = model.reliability[workers][:, None]
    expected = ((1.0 - p) / K + p * model.label_weights()[j][None, :]).mean(axis=0)
    return empirical, expected, n_answers


def fit_loglog_slope(x: Any, y: Any) -> tuple[float, float]:
    """Least-squares fit of log y = slope * log x + intercept (natural logarithms).

    Used to measure rates such as sin theta ~ s^(-1/2) (Lemma [`lem:sin_uk_p`]) or
    error ~ (n s)^a. ``exp(intercept)`` is the constant in y ~ C x^slope.

    Parameters
    ----------
    x, y : array-like of shape (N,)
        Positive, finite values; N >= 2 and x not all equal.

    Returns
    -------
    (slope, intercept) : tuple of float
    """
    owner = "fit_loglog_slope"
    xa = np.asarray(x, dtype=float).ravel()
    ya = np.asarray(y, dtype=float).ravel()
    if xa.shape != ya.shape:
        raise ValueError(f"x and y of {owner} must have the same length; got {xa.shape[0]} "
                         f"and {ya.shape[0]} instead.")
    if xa.shape[0] < 2:
        raise ValueError(f"{owner} needs at least 2 points; got {xa.shape[0]} instead.")
    for name, arr in (("x", xa), ("y", ya)):
        bad = ~np.isfinite(arr) | (arr <= 0)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"All values of '{name}' in {owner} must be finite and > 0 (log "
                             f"scale); got {float(arr[i])!r} at index {i} instead.")
    lx, ly = np.log(xa), np.log(ya)
    if np.ptp(lx) == 0:
        raise ValueError(f"The values of 'x' in {owner} must not all be equal; got "
                         f"{float(xa[0])!r} everywhere instead.")
    slope, intercept = np.polyfit(lx, ly, 1)
    return float(slope), float(intercept)


def sin_theta(a: Any, b: Any) -> float:
    """sin of the angle between vectors a and b: sqrt(1 - cos^2), sign-blind.

    sin theta(u, p*) is the distance measure of Lemma [`lem:sin_uk_p`] and of Wedin's
    sin-theta theorem; it does not depend on the sign or the norm of either vector.
    """
    owner = "sin_theta"
    av = np.asarray(a, dtype=float).ravel()
    bv = np.asarray(b, dtype=float).ravel()
    if av.shape != bv.shape:
        raise ValueError(f"a and b of {owner} must have the same length; got {av.shape[0]} "
                         f"and {bv.shape[0]} instead.")
    na, nb = np.linalg.norm(av), np.linalg.norm(bv)
    if na == 0 or nb == 0:
        raise ValueError(f"{owner} needs two nonzero vectors; got norms {na!r} and {nb!r} "
                         f"instead.")
    ua, ub = av / na, bv / nb
    # ||ua - (ua . ub) ub||: accurate for small angles, unlike sqrt(1 - cos^2).
    return min(1.0, float(np.linalg.norm(ua - (ua @ ub) * ub)))


def _check_task(task: Any, n_tasks: int, owner: str) -> int:
    if isinstance(task, (bool, np.bool_)) or not isinstance(task, (int, np.integer)):
        raise TypeError(f"Task indices of {owner} must be ints; got {task!r} instead.")
    if not 0 <= int(task) < n_tasks:
        raise ValueError(f"Task indices of {owner} must be in 0..{n_tasks - 1}; got {task} "
                         f"instead.")
    return int(task)


def _check_tasks(tasks: Any, n_tasks: int, owner: str) -> list[int]:
    tasks = list(np.atleast_1d(np.asarray(tasks)).tolist())
    if not tasks:
        raise ValueError(f"The 'tasks' parameter of {owner} must list at least one task; "
                         f"got an empty list instead.")
    return [_check_task(t, n_tasks, owner) for t in tasks]


def _subplots(n_panels: int, *, width: float = 3.2, height: float = 2.8):
    # at most MAX_PANELS_PER_ROW panels a row, rows balanced (4 -> 2 x 2): legible at the
    # book's page width (docs/README.md, "Figures and wide outputs")
    import matplotlib.pyplot as plt

    nrows = -(-n_panels // MAX_PANELS_PER_ROW)
    ncols = -(-n_panels // nrows)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows),
                             squeeze=False)
    for ax in axes.ravel()[n_panels:]:
        fig.delaxes(ax)                    # fig.axes[t] stays panel t
    return fig, list(axes.ravel()[:n_panels])


# ---------------------------------------------------------------------- figures
def plot_answer_frequencies(model: TopTwoModel, A: Any, tasks: Sequence[int]):
    """Empirical answer frequencies of a few tasks (bars) against eq. (1) (dots).

    One panel per task j: bar c is the fraction of the answers equal to c; the dots are
    the expected fractions of :func:`answer_frequencies` (eq. (1) given an answer,
    averaged over the workers who answered). g_j and h_j are named in the title.

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.axes[t].patches`` are the K bars of panel t (heights = empirical
        frequencies), ``fig.axes[t].lines[0]`` the expected frequencies.
    """
    owner = "plot_answer_frequencies"
    tasks = _check_tasks(tasks, model.n_tasks, owner)
    R = as_responses(A, model.n_labels, owner=owner)
    K = model.n_labels
    labels = np.arange(1, K + 1)
    fig, axes = _subplots(len(tasks))
    for ax, j in zip(axes, tasks):
        emp, exp, n_ans = answer_frequencies(model, R, j)
        ax.bar(labels, emp, color="tab:blue", alpha=0.6, label="empirical")
        ax.plot(labels, exp, "o", color="tab:red", label="eq. (1)")
        g, h = int(model.top_two[j, 0]), int(model.top_two[j, 1])
        ax.set_title(f"task {j}: g={g}, h={h}, q={model.weights[j, 0]:.2f}, "
                     f"{n_ans} answers", fontsize=10)
        ax.set_xticks(labels)
        ax.set_xlabel("label")
        ax.set_ylim(0, 1)
    axes[0].set_ylabel("fraction of answers")
    axes[0].legend(fontsize=10)
    fig.tight_layout()
    return fig


def plot_singular_values(series: Mapping[str, Any], *, n_show: int | None = None,
                         title: str = "singular values"):
    """Singular values (largest first) of several matrices, one line per matrix.

    Parameters
    ----------
    series : mapping name -> array-like
        Singular values of each matrix (any order; they are sorted, largest first).
    n_show : int, optional
        Plot only the first ``n_show`` of each (default: all).
    title
        Axes title.

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.axes[0].lines[t]`` holds series t as points (index 1, 2, ...; value).
    """
    owner = "plot_singular_values"
    if not series:
        raise ValueError(f"The 'series' parameter of {owner} must hold at least one "
                         f"matrix; got an empty mapping instead.")
    fig, (ax,) = _subplots(1, width=5.5, height=3.2)
    for name, values in series.items():
        sv = np.sort(np.asarray(values, dtype=float).ravel())[::-1]
        if n_show is not None:
            sv = sv[:n_show]
        ax.plot(np.arange(1, sv.shape[0] + 1), sv, "o-", ms=4, label=str(name))
    ax.set_xlabel("index")
    ax.set_ylabel("singular value")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=10)
    fig.tight_layout()
    return fig


def plot_rate(x: Any, y: Any, fit: tuple[float, float] | bool = True, *,
              reference: tuple[float, float] | None = None, xlabel: str = "x",
              ylabel: str = "y", title: str | None = None):
    """Log-log scatter of y against x with a fitted power law.

    Parameters
    ----------
    x, y : array-like
        Positive values.
    fit : (slope, intercept), True or False
        Line exp(intercept) x^slope to draw; True fits it with :func:`fit_loglog_slope`.
    reference : (slope, intercept), optional
        A theoretical rate exp(intercept) x^slope, drawn dashed (e.g. a bound).
    title
        Axes title.
    xlabel
        X-axis label.
    ylabel
        Y-axis label.

    Returns
    -------
    matplotlib.figure.Figure
        ``lines[0]`` the data, then the fitted line (if any), then the reference (if any);
        both axes are logarithmic.
    """
    xa = np.asarray(x, dtype=float).ravel()
    ya = np.asarray(y, dtype=float).ravel()
    if fit is True:
        fit = fit_loglog_slope(xa, ya)
    fig, (ax,) = _subplots(1, width=5.0, height=3.4)
    ax.plot(xa, ya, "o", label="measured")
    grid = np.array([xa.min(), xa.max()])
    if fit:
        slope, intercept = fit
        ax.plot(grid, np.exp(intercept) * grid ** slope, "-",
                label=f"fit: slope {slope:.3g}")
    if reference is not None:
        rslope, rint = reference
        ax.plot(grid, np.exp(rint) * grid ** rslope, "--", color="gray",
                label=f"reference: slope {rslope:.3g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=10)
    ax.legend(fontsize=10)
    fig.tight_layout()
    return fig


def plot_delta_v(delta_v: Any, tasks: Sequence[int], *, expected: Any = None,
                 top_two: Any = None):
    """Delta v_j^(k) over k = 1..K for a few tasks: where g-hat and h-hat come from.

    Eq. (3) [`alg:gh`]: g-hat_j is the k with the smallest Delta v_j^(k), h-hat_j the
    second smallest. Bars are Delta v_j^(k) (g-hat dark red, h-hat orange, others grey).

    Parameters
    ----------
    delta_v : array-like of shape (n_tasks, K)
        ``TopTwo1().fit(A).result_.delta_v``.
    tasks : sequence of int
        Columns j to show, one panel each.
    expected : array-like of shape (n_tasks, K), optional
        The population value ||p||_2 Delta r_j^(k) (eq. (2) [`eqn:delta_r`] times ||p||),
        drawn as black dots (``lines[0]`` of each panel).
    top_two : array-like of shape (n_tasks, 2), optional
        The true (g_j, h_j), named in each panel's title.

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.axes[t].patches`` are the K bars of panel t.
    """
    owner = "plot_delta_v"
    dv = np.asarray(delta_v, dtype=float)
    if dv.ndim != 2:
        raise ValueError(f"The 'delta_v' parameter of {owner} must have shape (n_tasks, K); "
                         f"got shape {dv.shape} instead.")
    m, K = dv.shape
    tasks = _check_tasks(tasks, m, owner)
    exp = None if expected is None else np.asarray(expected, dtype=float)
    if exp is not None and exp.shape != dv.shape:
        raise ValueError(f"The 'expected' parameter of {owner} must have the shape of "
                         f"delta_v {dv.shape}; got {exp.shape} instead.")
    labels = np.arange(1, K + 1)
    fig, axes = _subplots(len(tasks))
    for ax, j in zip(axes, tasks):
        order = np.argsort(dv[j], kind="stable")
        colors = ["lightgray"] * K
        colors[order[0]] = "darkred"
        colors[order[1]] = "orange"
        ax.bar(labels, dv[j], color=colors)
        if exp is not None:
            ax.plot(labels, exp[j], "o", color="black", ms=4, label=r"$\|p\|\,\Delta r$")
        ax.axhline(0.0, color="black", lw=0.5)
        title = f"task {j}: ĝ={order[0] + 1}, ĥ={order[1] + 1}"
        if top_two is not None:
            g, h = (int(v) for v in np.asarray(top_two)[j, :2])
            title += f" (true {g}, {h})"
        ax.set_title(title, fontsize=10)
        ax.set_xticks(labels)
        ax.set_xlabel("k")
    axes[0].set_ylabel(r"$\Delta v^{(k)}_j$")
    if exp is not None:
        axes[0].legend(fontsize=10)
    fig.tight_layout()
    return fig


# ------------------------------------------------- the reproduction notebooks (06-08)
_OURS = ("TopTwo1", "TopTwo2", "TopTwo2 split", "TopTwo2 refine3")


def method_color(name: str, names: Sequence[str]) -> Any:
    """One colour per method, stable across a notebook's figures.

    The TopTwo methods get reds and the oracle black; the other methods take the
    ``tab20`` colours in the order of ``names``.
    """
    import matplotlib

    if name == "Oracle":
        return "black"
    if name in _OURS:
        return ("#d62728", "#b2182b", "#f4a582", "#67001f")[_OURS.index(name)]
    others = [m for m in names if m != "Oracle" and m not in _OURS]
    cmap = matplotlib.colormaps["tab20"]
    # tab20 without its two reds (kept for the TopTwo methods): dark shades, then light
    palette = [k for k in range(0, 20, 2) if k != 6] + [k for k in range(1, 20, 2) if k != 7]
    i = others.index(name) if name in others else len(others)
    return cmap(palette[i % len(palette)])


def _figure_and_axes(ax: Any, figsize: tuple[float, float]) -> tuple[Any, Any]:
    """``(figure, axes)``: the given axes and its figure, or a new figure of ``figsize``."""
    import matplotlib.pyplot as plt  # lazy

    if ax is None:
        return plt.subplots(figsize=figsize)
    return ax.figure, ax


def plot_paired_differences(rows: Mapping[str, Sequence[Sequence[float]]], *, ax: Any = None,
                            reference: str = "TopTwo2", xlabel: str = "average queries per task  n s",
                            title: str | None = None, ylim: tuple[float, float] | None = None,
                            legend: bool = True, names: Sequence[str] | None = None) -> Any:
    """Paired differences ``reference - method`` against x, with 95% CIs and a zero line.

    Below the zero line the reference (TopTwo2) has the lower error; a CI that crosses
    the line is a tie at that x.

    Parameters
    ----------
    rows : mapping method -> [[x, mean, sem, n], ...]
        Per x the mean paired difference, its standard error and the number of pairs
        (the ``toptwo2_minus`` tables of ``benchmarks/reproduce_paper.py``). The CI is
        mean +/- ``scipy.stats.t.ppf(0.975, n - 1)`` sem.
    ax : matplotlib Axes, optional
        Axes to draw on (a new figure when None).
    reference : str, default="TopTwo2"
        Name of the reference method (axis label only).
    xlabel, title : str
        Axis label and title.
    ylim : (float, float), optional
        Y range; points outside it are drawn at the edge as triangles (so a zoomed
        panel does not hide that a method is far away).
    legend : bool, default=True
        Draw a legend (plain-text method names).
    names : sequence of str, optional
        All method names, for :func:`method_color` (default: the keys of ``rows``).

    Returns
    -------
    matplotlib.figure.Figure
        ``ax.lines[i]`` is method i of ``rows`` (``get_xydata()`` = (x, mean)), then the
        zero line; ``ax.collections[i]`` its CI bars.
    """
    from scipy import stats

    if not rows:
        raise ValueError("plot_paired_differences: `rows` must hold at least one method.")
    fig, ax = _figure_and_axes(ax, (5, 3.5))
    names = list(names or rows)
    for i, (name, r) in enumerate(rows.items()):
        a = np.asarray(r, dtype=float).reshape(-1, 4)
        x, mean, sem, n = a.T
        half = np.where(n > 1, stats.t.ppf(0.975, np.maximum(n - 1, 1)), 0.0) * sem
        shift = (i - (len(rows) - 1) / 2) * 0.004 * (np.ptp(x) if x.size > 1 else 1.0)
        col = method_color(name, names)
        ax.plot(x + shift, mean, "-o", ms=2.5, lw=1, color=col, label=name)
        ax.vlines(x + shift, mean - half, mean + half, color=col, lw=1)
    ax.axhline(0, color="k", lw=0.8)
    if ylim is not None:
        ax.set_ylim(*ylim)
        for name, r in rows.items():
            a = np.asarray(r, dtype=float).reshape(-1, 4)
            for xv, m in zip(a[:, 0], a[:, 1]):
                if m < ylim[0] or m > ylim[1]:
                    edge = ylim[0] if m < ylim[0] else ylim[1]
                    ax.plot([xv], [edge], "v" if m < ylim[0] else "^", ms=5, clip_on=False,
                            color=method_color(name, names))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"{reference} minus method")
    if title:
        ax.set_title(title, fontsize=10)
    if legend:
        ax.legend(fontsize=10, ncol=2)
    ax.grid(True, alpha=0.3)
    return fig


def plot_gap_ranking(gaps: Mapping[str, Mapping[str, float]], *, ax: Any = None,
                     title: str | None = None, xlabel: str = "pair error minus the oracle's",
                     names: Sequence[str] | None = None) -> Any:
    """Methods ranked by their gap to a reference, best on top, with 95% CIs.

    Parameters
    ----------
    gaps : mapping method -> {"mean", "ci_low", "ci_high"}
        e.g. the ``gap_to_oracle`` table of ``benchmarks/reproduce_paper.py``.
    ax : matplotlib Axes, optional
        Axes to draw on (a new figure when None).
    title, xlabel : str
        Title and x-axis label.
    names : sequence of str, optional
        All method names, for :func:`method_color`.

    Returns
    -------
    matplotlib.figure.Figure
        The y tick labels of ``ax`` are the methods, best first (top).
    """

    if not gaps:
        raise ValueError("plot_gap_ranking: `gaps` must hold at least one method.")
    fig, ax = _figure_and_axes(ax, (4, 4))
    names = list(names or gaps)
    ranked = sorted(gaps, key=lambda m: (gaps[m]["mean"], m))
    y = np.arange(len(ranked))
    mean = np.array([gaps[m]["mean"] for m in ranked])
    lo = mean - np.array([gaps[m]["ci_low"] for m in ranked])
    hi = np.array([gaps[m]["ci_high"] for m in ranked]) - mean
    ax.errorbar(mean, y, xerr=[lo, hi], fmt="none", ecolor="0.6")
    ax.scatter(mean, y, c=[method_color(m, names) for m in ranked], s=18, zorder=3)
    ax.set_yticks(y, ranked, fontsize=10)
    ax.invert_yaxis()
    ax.axvline(0, color="k", lw=0.8)
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title, fontsize=10)
    return fig


# ---------------------------------------------------------------- experiment figures
def plot_error_curves(summary: Mapping[Any, Mapping[str, np.ndarray]], *,
                      lower_bound: tuple[np.ndarray, np.ndarray] | None = None,
                      lower_bound_label: str = "minimax lower bound (Thm 3a)",
                      xlabel: str = "average queries per task  n s",
                      ylabel: str = "error rate", title: str | None = None,
                      logy: bool = True, ax: Any = None) -> Any:
    """Error curves with 95% CI bands (from :func:`aggregate`) against n s.

    Parameters
    ----------
    summary : dict name -> dict with ``x``, ``mean``, ``ci_low``, ``ci_high``
        Method -> {x, mean, ci_low, ci_high} (from :func:`toptwo.experiments.aggregate`).
    lower_bound : (x, y), optional
        A bound to draw as a dashed black curve.
    logy : bool, default=True
        Log scale on the error axis (non-positive values are masked).
    ax : matplotlib Axes, optional
        Axes to draw on (a new figure when None).
    title
        Axes title.
    xlabel
        X-axis label.
    ylabel
        Y-axis label.
    lower_bound_label
        Legend entry of the lower bound.

    Returns
    -------
    matplotlib.figure.Figure
        Its first axes holds one line per method in the order of ``summary`` (then the
        bound), so the plotted data can be read back with ``line.get_xydata()``.
    """
    import matplotlib.pyplot as plt  # lazy: toptwo itself does not need matplotlib

    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4))
    else:
        fig = ax.figure
    markers = ("o", "s", "^", "v", "D", "x", "+", "*")
    styles = ("-", "--", "-.", ":")
    for i, (name, s) in enumerate(summary.items()):
        x = np.asarray(s["x"], float)
        mean = np.asarray(s["mean"], float)
        # marker and line style vary too, so curves that coincide stay visible
        line, = ax.plot(x, mean, marker=markers[i % len(markers)], ms=3,
                        ls=styles[i // len(markers) % len(styles)] if i >= len(markers) else "-",
                        label=str(name), zorder=3 + i % 3)
        lo = np.asarray(s.get("ci_low", mean), float)
        hi = np.asarray(s.get("ci_high", mean), float)
        if logy:
            floor = 1e-4
            lo = np.maximum(lo, floor)
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
    if lower_bound is not None:
        bx, by = (np.asarray(v, float) for v in lower_bound)
        ax.plot(bx, by, "k--", label=lower_bound_label)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


def plot_estimates(panels: Mapping[str, tuple[Any, Any]], *, ncols: int = 3) -> Any:
    """Scatter plots of estimates against the truth, one panel each, with y = x dashed.

    Parameters
    ----------
    panels : mapping title -> (truth, estimate)
        e.g. ``{"p_hat (eq. (5))": (model.reliability, est.reliability_)}``. Pairs with a
        non-finite value are left out.
    ncols : int, default=3
        Panels per row.

    Returns
    -------
    matplotlib.figure.Figure
        Panel t is ``fig.axes[t]``; its ``lines[0]`` holds the finite (truth, estimate)
        points and ``lines[1]`` the diagonal.
    """
    import matplotlib.pyplot as plt  # lazy

    if not isinstance(panels, Mapping) or not panels:
        raise ValueError("plot_estimates: `panels` must be a non-empty mapping "
                         "title -> (truth, estimate).")
    k = len(panels)
    nc = min(k, check_int(ncols, "ncols", owner="plot_estimates", minimum=1))
    nr = -(-k // nc)
    fig, axes = plt.subplots(nr, nc, figsize=(3.3 * nc, 3.1 * nr), squeeze=False)
    for ax, (title, (truth, est)) in zip(axes.ravel(), panels.items()):
        t = np.asarray(truth, float).ravel()
        e = np.asarray(est, float).ravel()
        if t.shape != e.shape:
            raise ValueError(f"plot_estimates: panel {title!r} has truth of length "
                             f"{t.size} and estimate of length {e.size}; they must match.")
        ok = np.isfinite(t) & np.isfinite(e)
        ax.plot(t[ok], e[ok], ".", ms=3, alpha=0.6)
        lo = float(min(t[ok].min(), e[ok].min())) if ok.any() else 0.0
        hi = float(max(t[ok].max(), e[ok].max())) if ok.any() else 1.0
        ax.plot([lo, hi], [lo, hi], "k--", lw=1)
        if ok.any():                  # the x axis spans the truth (q <= 1), not the estimates
            t_lo, t_hi = float(t[ok].min()), float(t[ok].max())
            pad = 0.05 * max(t_hi - t_lo, 1e-9)
            ax.set_xlim(t_lo - pad, t_hi + pad)
        ax.set_title(str(title), fontsize=10)
        ax.set_xlabel("truth")
        ax.set_ylabel("estimate")
    for ax in axes.ravel()[k:]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def plot_grid(panels: Sequence[Sequence[tuple[str, Mapping[str, Mapping[str, Any]]]]], *,
              xlabel: str = "average queries per task  n s", ylabel: str = "error rate",
              logy: bool = False, legend: str = "first", width: float = 3.4,
              height: float = 2.8) -> Any:
    """A grid of error-curve panels (:func:`plot_error_curves`).

    Parameters
    ----------
    panels : list of rows, each a list of ``(title, summary)``
        ``summary`` maps method -> dict with ``x``, ``mean``, ``ci_low``, ``ci_high``
        (output of :func:`toptwo.experiments.aggregate`, or the same with lists, as
        :meth:`toptwo.experiments.paper.StoredRun.summary` returns them).
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
    for r, row in enumerate(panels):
        for c, (title, summary) in enumerate(row):
            ax = axes[r, c]
            plot_error_curves(summary, ax=ax, title=title, logy=logy, xlabel=xlabel,
                              ylabel=ylabel)
            if legend == "first" and (r, c) != (0, 0):
                ax.get_legend().remove()
    fig.tight_layout()
    return fig


# ------------------------------------------------------- legible figures (the book)
#: The smallest font (points) a figure may use: at the book's page width a 10 pt text is
#: at least 9 CSS pixels high for a figure up to 11.4 in wide (docs/README.md, "Figures
#: and wide outputs"; checked in Chromium by tests/test_book.py). Every figure made here
#: uses at least this size; lessons keep to it with :func:`small_texts`.
FONT_FLOOR_PT = 10.0
#: Panels in one row of a figure made here (more panels wrap to further rows).
MAX_PANELS_PER_ROW = 3


def small_texts(fig: Any, floor: float = FONT_FLOOR_PT) -> list[str]:
    """The visible texts of ``fig`` set in less than ``floor`` points.

    Titles, axis labels, tick labels, legend entries and annotations alike. An empty list
    means the figure keeps to the book's font floor; a lesson can assert it::

        assert not small_texts(fig), small_texts(fig)

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure to inspect (it is drawn once, so that its tick labels exist).
    floor : float, default=FONT_FLOOR_PT
        Smallest allowed size in points.

    Returns
    -------
    list of str
        ``"'text' at 8.0 pt"`` for each offending text, in drawing order.
    """
    from matplotlib.text import Text  # lazy

    fig.canvas.draw()                      # tick labels exist only once drawn
    out = []
    for t in fig.findobj(Text):
        if t.get_visible() and t.get_text().strip() and t.get_fontsize() < floor - 1e-9:
            out.append(f"{t.get_text()!r} at {t.get_fontsize():.1f} pt")
    return out


# ---------------------------------------------------------------- lesson figures at page width
#: Matplotlib settings for figures read in the book at page width (about 730 px): 100 dpi,
#: so a figure at most 8 in wide is at most 800 px, and no text below 10 pt.
BOOK_RC = {"figure.dpi": 100, "font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10,
           "xtick.labelsize": 10, "ytick.labelsize": 10, "legend.fontsize": 10}


def plot_paired_panels(panels: Mapping[str, Mapping[str, Sequence[Sequence[float]]]], *,
                       ylim: tuple[float, float] | None = None,
                       xlabel: str = "average queries per task  n s",
                       ylabel: str = "TopTwo2 minus method", width: float = 7.5,
                       height: float = 3.0, names: Sequence[str] | None = None,
                       sharey: bool = True) -> Any:
    """At most three panels of paired differences against x, 95% CIs, a zero line each.

    Each panel is :func:`plot_paired_differences` of its rows (e.g. one line per
    scenario); the panels share the y axis, and one legend sits below them (10 pt), so
    the figure stays legible at page width.

    Parameters
    ----------
    panels : mapping title -> (mapping label -> rows ``[x, mean, sem, n]``)
        One to three panels; every panel should have the same labels (the legend is the
        first panel's).
    ylim : (float, float), optional
        Common y range (points outside are drawn at the edge as triangles).
    xlabel, ylabel : str
        Axis labels (the y label on the first panel only).
    width, height : float
        Figure size in inches (width at most 8: 800 px at :data:`BOOK_RC`'s 100 dpi).
    names : sequence of str, optional
        All labels, for stable colours (:func:`method_color`).
    sharey : bool, default=True
        One y axis for all panels (False: each panel its own range and y label).

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.axes[i]`` is panel i; its ``lines[j]`` is label j (``get_xydata()`` gives
        (x, mean)), then the zero line.
    """
    import matplotlib.pyplot as plt  # lazy

    if not isinstance(panels, Mapping) or not 1 <= len(panels) <= 3:
        raise ValueError(f"plot_paired_panels: `panels` must map 1 to 3 titles to rows; got "
                         f"{len(panels) if isinstance(panels, Mapping) else type(panels).__name__}.")
    if not 0 < width <= 8:
        raise ValueError(f"The 'width' parameter of plot_paired_panels must be in (0, 8] "
                         f"inches; got {width!r} instead.")
    fig, axes = plt.subplots(1, len(panels), figsize=(width, height), sharey=sharey,
                             squeeze=False)
    for ax, (title, rows) in zip(axes[0], panels.items()):
        plot_paired_differences(rows, ax=ax, title=title, legend=False, ylim=ylim,
                                names=names or list(rows))
        ax.set_ylabel("")
        ax.set_xlabel(xlabel if len(panels) == 1 else "n s")
    axes[0, 0].set_ylabel(ylabel)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=10,
               frameon=False)
    n_rows = -(-len(labels) // 4)
    fig.tight_layout(rect=(0, 0.06 + 0.07 * n_rows, 1, 1))
    return fig


def plot_curve_panels(panels: Mapping[str, Mapping[str, Mapping[str, Any]]], *,
                      xlabel: str = "average queries per task  n s",
                      ylabel: str = "error rate", logy: bool = False, width: float = 7.5,
                      height: float = 3.0, ncol: int = 4) -> Any:
    """At most three panels of error curves with 95% CI bands and one legend below them.

    Parameters
    ----------
    panels : mapping title -> summary
        ``summary`` maps method -> dict with ``x``, ``mean``, ``ci_low``, ``ci_high``
        (:func:`toptwo.experiments.aggregate`, or
        :meth:`toptwo.experiments.paper.StoredRun.summary`); one to three panels with the
        same methods.
    xlabel, ylabel : str
        Axis labels (the y label on the first panel only).
    logy : bool, default=False
        Logarithmic y axes.
    width, height : float
        Figure size in inches (width at most 8, see :data:`BOOK_RC`); the legend adds
        about 0.25 in per row below the panels.
    ncol : int, default=4
        Columns of the legend.

    Returns
    -------
    matplotlib.figure.Figure
        ``fig.axes[i]`` is panel i; its lines are the methods in the order of the summary.
    """
    import matplotlib.pyplot as plt  # lazy

    if not isinstance(panels, Mapping) or not 1 <= len(panels) <= 3:
        raise ValueError("plot_curve_panels: `panels` must map 1 to 3 titles to summaries.")
    if not 0 < width <= 8:
        raise ValueError(f"The 'width' parameter of plot_curve_panels must be in (0, 8] "
                         f"inches; got {width!r} instead.")
    n_labels = len(next(iter(panels.values())))
    n_rows = -(-n_labels // ncol)
    fig, axes = plt.subplots(1, len(panels), figsize=(width, height + 0.25 * n_rows),
                             sharey=True, squeeze=False)
    for ax, (title, summary) in zip(axes[0], panels.items()):
        plot_error_curves(summary, ax=ax, title=title, logy=logy, ylabel="",
                          xlabel=xlabel if len(panels) == 1 else "n s")
        ax.get_legend().remove()
        ax.title.set_fontsize(11)
    axes[0, 0].set_ylabel(ylabel)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=10, frameon=False)
    fig.tight_layout(rect=(0, 0.25 * n_rows / (height + 0.25 * n_rows) + 0.04, 1, 1))
    return fig


# ---------------------------------------------------------------- differences per group
def plot_group_differences(diffs: Mapping[str, Mapping[str, Mapping[str, float]]], *,
                           ax: Any = None, ylabel: str = "difference",
                           title: str | None = None, legend: bool = True) -> Any:
    """Differences with 95% CIs per group (e.g. per dataset), one marker series per label.

    For comparisons on fixed groups rather than along a budget (lesson 08: the g error of
    one stage-1 variant minus another's on each real dataset, with the per-task CI).
    Below the zero line the first method of the difference has the lower error; a bar that
    crosses it is a tie.

    Parameters
    ----------
    diffs : mapping label -> (mapping group -> {"mean", "half"})
        ``half`` is the half-width of the 95% CI (e.g.
        :func:`toptwo.experiments.findings.per_task_difference`). Every label should have
        the same groups; the x axis follows the first label's order.
    ax : matplotlib Axes, optional
        Axes to draw on (a new figure when None).
    ylabel, title : str
        Axis label and title.
    legend : bool, default=True
        Draw a legend of the labels.

    Returns
    -------
    matplotlib.figure.Figure
        ``ax.lines[i]`` holds label i's means (``get_xydata()`` = (group index, mean)),
        then the zero line; the x tick labels are the groups.
    """
    if not diffs:
        raise ValueError("plot_group_differences: `diffs` must hold at least one label.")
    fig, ax = _figure_and_axes(ax, (6, 3.2))
    groups = list(next(iter(diffs.values())))
    markers = ("o", "s", "^", "D")
    for i, (label, table) in enumerate(diffs.items()):
        missing = [g for g in groups if g not in table]
        if missing:
            raise ValueError(f"plot_group_differences: label {label!r} has no value for "
                             f"{missing}.")
        x = np.arange(len(groups)) + (i - (len(diffs) - 1) / 2) * 0.18
        mean = np.array([table[g]["mean"] for g in groups], float)
        half = np.array([table[g]["half"] for g in groups], float)
        line, = ax.plot(x, mean, markers[i % len(markers)], ms=5, label=label)
        ax.vlines(x, mean - half, mean + half, color=line.get_color(), lw=1.2)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=11)
    if legend:
        ax.legend(fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    return fig
