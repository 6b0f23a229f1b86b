r"""Figures for the teaching notebooks and the book: ``toptwo.viz`` only plots.

Every ``plot_*`` function returns a :class:`matplotlib.figure.Figure` (created with
``matplotlib.pyplot.subplots`` so that it shows inline in a notebook) whose data can be
read back in tests (``ax.lines[i].get_xydata()``, ``ax.patches``). matplotlib is imported
inside the functions: ``import toptwo`` and ``import toptwo.viz`` work without it.

By role:

- :mod:`toptwo.viz.lessons` -- the model and spectral lessons: answer frequencies against
  eq. (1) [`eqn:A_dist`], singular values, a rate on log-log axes, Delta v_j^(k);
- :mod:`toptwo.viz.comparisons` -- the experiment layer (:mod:`toptwo.experiments`): error
  curves with confidence bands, estimates against the truth, paired differences, gap
  rankings, differences per group;
- :mod:`toptwo.viz._style` -- the book's font floor (:data:`FONT_FLOOR_PT`,
  :func:`small_texts`), panel layout (:data:`MAX_PANELS_PER_ROW`, :data:`BOOK_RC`) and
  method colours (:func:`method_color`).

The numbers behind the figures are computed elsewhere:
:func:`toptwo.model.answer_frequencies` (empirical answer frequencies against eq. (1)),
:func:`toptwo.theory.fit_loglog_slope` (the log-log least-squares fit of a rate) and
:func:`toptwo.metrics.sin_theta` (Lemma [`lem:sin_uk_p`]).
"""

from ._style import BOOK_RC, FONT_FLOOR_PT, MAX_PANELS_PER_ROW, method_color, small_texts
from .comparisons import (plot_curve_panels, plot_error_curves, plot_estimates, plot_gap_ranking,
                          plot_grid, plot_group_differences, plot_paired_differences,
                          plot_paired_panels)
from .lessons import plot_answer_frequencies, plot_delta_v, plot_rate, plot_singular_values

__all__ = [
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
    "plot_paired_panels",
    "plot_curve_panels",
    "plot_group_differences",
    "small_texts",
    "FONT_FLOOR_PT",
    "MAX_PANELS_PER_ROW",
    "BOOK_RC",
]
