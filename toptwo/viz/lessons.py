r"""Figures of the model and spectral lessons (notebooks 01-05).

Answer frequencies against eq. (1) [`eqn:A_dist`], singular values, a measured rate on
log-log axes and Delta v_j^(k) of eq. (3) [`alg:gh`]. The numbers they draw come from
:func:`toptwo.model.answer_frequencies` and :func:`toptwo.theory.fit_loglog_slope`.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..model import TopTwoModel, answer_frequencies
from ..responses import as_responses
from ..theory.scaling import fit_loglog_slope
from ._style import _check_tasks, _subplots

__all__ = ["plot_answer_frequencies", "plot_singular_values", "plot_rate", "plot_delta_v"]


def plot_answer_frequencies(model: TopTwoModel, A: Any, tasks: Sequence[int]):
    """Empirical answer frequencies of a few tasks (bars) against eq. (1) (dots).

    One panel per task j: bar c is the fraction of the answers equal to c; the dots are
    the expected fractions of :func:`~toptwo.model.answer_frequencies` (eq. (1) given an answer,
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
        Line exp(intercept) x^slope to draw; True fits it with
        :func:`toptwo.theory.fit_loglog_slope`.
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
