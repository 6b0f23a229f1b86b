"""Tests of the page-width lesson figures of toptwo.viz (plot_paired_panels, plot_curve_panels)."""

import numpy as np
import pytest

import matplotlib

matplotlib.use("Agg")  # tests only: never in notebooks
import matplotlib.pyplot as plt  # noqa: E402

from toptwo.viz import BOOK_RC, plot_curve_panels, plot_paired_panels  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


ROWS = {"easy": [[1, -0.02, 0.005, 30], [2, -0.03, 0.005, 30]],
        "hard": [[1, 0.01, 0.004, 30], [2, 0.02, 0.004, 30]]}


def _text_sizes(fig):
    fig.canvas.draw()
    texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text()]
    return [t.get_fontsize() for t in texts]


def test_plot_paired_panels_data_zero_lines_and_legible_text():
    with plt.rc_context(BOOK_RC):
        fig = plot_paired_panels({"TopTwo2 - MV": ROWS, "TopTwo2 - PGD": ROWS}, ylim=(-0.05, 0.05))
        assert len(fig.axes) == 2
        assert fig.get_size_inches()[0] <= 8 and fig.dpi <= 100
        for ax in fig.axes:
            assert np.allclose(ax.lines[0].get_ydata(), [-0.02, -0.03])
            assert any(np.allclose(line.get_ydata(), [0, 0]) for line in ax.lines)   # zero line
            assert ax.get_ylim() == (-0.05, 0.05)
        assert [t.get_text() for t in fig.legends[0].get_texts()] == ["easy", "hard"]
        assert min(_text_sizes(fig)) >= 10


def test_plot_paired_panels_own_y_ranges():
    far = {"easy": [[1, -0.3, 0.01, 30], [2, -0.2, 0.01, 30]]}
    fig = plot_paired_panels({"near": ROWS, "far": far}, sharey=False)
    assert fig.axes[0].get_ylim()[0] > -0.1 and fig.axes[1].get_ylim()[0] < -0.25


def test_plot_paired_panels_refuses_more_than_three_panels_or_a_wide_figure():
    with pytest.raises(ValueError, match="1 to 3"):
        plot_paired_panels({str(i): ROWS for i in range(4)})
    with pytest.raises(ValueError, match="width"):
        plot_paired_panels({"a": ROWS}, width=10)


def test_plot_curve_panels_data_legend_below_and_legible_text():
    summary = {m: {"x": np.array([1.0, 2.0]), "mean": np.array([0.5, 0.4]) + i / 10,
                   "ci_low": np.array([0.45, 0.35]) + i / 10, "ci_high": np.array([0.55, 0.45]) + i / 10}
               for i, m in enumerate(["MV", "TopTwo2", "Oracle"])}
    with plt.rc_context(BOOK_RC):
        fig = plot_curve_panels({"easy": summary, "hard": summary}, ylabel="pair error")
        assert len(fig.axes) == 2 and fig.get_size_inches()[0] <= 8
        assert np.allclose(fig.axes[1].lines[1].get_ydata(), [0.6, 0.5])
        assert all(ax.get_legend() is None for ax in fig.axes)           # one legend, below
        legend = fig.legends[0]
        fig.canvas.draw()
        box = legend.get_window_extent()
        assert all(box.y1 <= ax.get_window_extent().y0 for ax in fig.axes)   # never over the data
        assert min(_text_sizes(fig)) >= 10
    with pytest.raises(ValueError, match="1 to 3"):
        plot_curve_panels({})
