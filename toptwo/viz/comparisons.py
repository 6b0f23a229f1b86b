"""Figures of the experiment layer (:mod:`toptwo.experiments`, notebooks 05-11).

Error curves with 95% confidence bands (:func:`plot_error_curves`, :func:`plot_grid`,
:func:`plot_curve_panels`), estimates against the truth (:func:`plot_estimates`), paired
differences (:func:`plot_paired_differences`, :func:`plot_paired_panels`), gap rankings
(:func:`plot_gap_ranking`) and differences per group (:func:`plot_group_differences`).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .._validation import check_int
from ._style import _figure_and_axes, method_color

__all__ = ["plot_paired_differences", "plot_gap_ranking", "plot_error_curves", "plot_estimates",
           "plot_grid", "plot_paired_panels", "plot_curve_panels", "plot_group_differences"]


# ------------------------------------------------- the reproduction notebooks (06-08)
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


# ---------------------------------------------------------- lesson figures at page width


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
