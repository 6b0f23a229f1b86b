"""Shared look of the figures: the book's font floor and panel layout, method colours.

:data:`FONT_FLOOR_PT`, :data:`MAX_PANELS_PER_ROW` and :data:`BOOK_RC` are the legibility
rules of the book (docs/README.md, "Figures and wide outputs"); :func:`small_texts` checks a
figure against them; :func:`method_color` gives every method one colour across a notebook.
matplotlib is imported inside the functions.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..model import _check_task

__all__ = ["FONT_FLOOR_PT", "MAX_PANELS_PER_ROW", "BOOK_RC", "small_texts", "method_color"]


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


#: Matplotlib settings for figures read in the book at page width (about 730 px): 100 dpi,
#: so a figure at most 8 in wide is at most 800 px, and no text below 10 pt.
BOOK_RC = {"figure.dpi": 100, "font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10,
           "xtick.labelsize": 10, "ytick.labelsize": 10, "legend.fontsize": 10}


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
