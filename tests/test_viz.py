"""Tests of toptwo.viz: the numbers behind each figure, read back from the Figure."""

import subprocess
import sys

import numpy as np
import pytest

import matplotlib

matplotlib.use("Agg")  # tests only: never in notebooks
import matplotlib.pyplot as plt  # noqa: E402

import toptwo  # noqa: E402
from toptwo.model import answer_frequencies  # noqa: E402
from toptwo.viz import (plot_answer_frequencies, plot_delta_v, plot_rate,  # noqa: E402
                        plot_singular_values)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _tiny_model():
    # 3 workers x 2 tasks, K = 4: p = (1, 0, 0.5); task 0 (g,h)=(2,1) q=0.75; task 1 (4,3) q=1.
    return toptwo.TopTwoModel([1.0, 0.0, 0.5], [0.75, 1.0], [[2, 1], [4, 3]], 4)


def test_toptwo_imports_without_matplotlib():
    code = ("import sys; sys.modules['matplotlib'] = None; import toptwo, toptwo.viz; "
            "from toptwo.theory import fit_loglog_slope; "
            "print(round(fit_loglog_slope([1, 2], [1, 4])[0], 6))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "2.0"


# -------------------------------------------------------------------------- figures
def test_plot_answer_frequencies_data():
    model = _tiny_model()
    A = np.array([[2, 4], [3, 0], [1, 3]])
    fig = plot_answer_frequencies(model, A, [0, 1])
    assert len(fig.axes) == 2
    for ax, j in zip(fig.axes, [0, 1]):
        emp, exp, _ = answer_frequencies(model, A, j)
        heights = [patch.get_height() for patch in ax.patches]
        np.testing.assert_allclose(heights, emp)
        xy = ax.lines[0].get_xydata()
        np.testing.assert_allclose(xy[:, 0], [1, 2, 3, 4])
        np.testing.assert_allclose(xy[:, 1], exp)
    assert "g=2, h=1" in fig.axes[0].get_title()
    with pytest.raises(ValueError, match="at least one task"):
        plot_answer_frequencies(model, A, [])


def test_plot_singular_values_data():
    fig = plot_singular_values({"E[A]": [0.0, 5.0, 1e-16], "A": [1.0, 2.0, 7.0]}, n_show=2)
    ax = fig.axes[0]
    np.testing.assert_allclose(ax.lines[0].get_xydata(), [[1, 5.0], [2, 1e-16]])
    np.testing.assert_allclose(ax.lines[1].get_xydata(), [[1, 7.0], [2, 2.0]])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["E[A]", "A"]
    with pytest.raises(ValueError, match="at least one"):
        plot_singular_values({})


def test_plot_rate_data():
    x = np.array([0.1, 0.2, 0.4, 0.8])
    y = 2.0 * x ** -0.5
    fig = plot_rate(x, y, reference=(-0.5, np.log(10.0)))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    np.testing.assert_allclose(ax.lines[0].get_xydata(), np.column_stack([x, y]))
    fitted = ax.lines[1].get_xydata()
    np.testing.assert_allclose(fitted[:, 0], [0.1, 0.8])
    np.testing.assert_allclose(fitted[:, 1], 2.0 * fitted[:, 0] ** -0.5)
    np.testing.assert_allclose(ax.lines[2].get_xydata()[:, 1], 10.0 * fitted[:, 0] ** -0.5)
    assert "slope -0.5" in ax.get_legend().get_texts()[1].get_text()
    fig2 = plot_rate(x, y, fit=False)
    assert len(fig2.axes[0].lines) == 1


def test_plot_delta_v_data():
    dv = np.array([[0.2, -0.5, 0.2, 0.1], [0.3, 0.2, 0.2, -0.6]])
    expected = dv + 0.01
    fig = plot_delta_v(dv, [1, 0], expected=expected, top_two=[[2, 4], [4, 2]])
    for ax, j in zip(fig.axes, [1, 0]):
        np.testing.assert_allclose([p.get_height() for p in ax.patches], dv[j])
        np.testing.assert_allclose(ax.lines[0].get_xydata()[:, 1], expected[j])
    # task 1: smallest at k=4, second at k=2 (ties 0.2/0.2 go to the smaller label)
    assert fig.axes[0].get_title() == "task 1: ĝ=4, ĥ=2 (true 4, 2)"
    assert fig.axes[1].get_title() == "task 0: ĝ=2, ĥ=4 (true 2, 4)"
    with pytest.raises(ValueError, match=r"must have shape \(n_tasks, K\); got shape \(4,\)"):
        plot_delta_v(dv[0], [0])
    with pytest.raises(ValueError, match="must be in 0..1; got 5 instead"):
        plot_delta_v(dv, [5])


def test_plot_paired_differences_data_and_zero_line():
    from toptwo.viz import plot_paired_differences
    rows = {"MV": [[1, -0.02, 0.005, 30], [2, -0.03, 0.005, 30]],
            "MACE": [[1, 0.01, 0.004, 30], [2, 0.5, 0.004, 30]]}
    fig = plot_paired_differences(rows, ylim=(-0.1, 0.1))
    ax = fig.axes[0]
    assert ax.lines[0].get_label() == "MV"
    assert np.allclose(ax.lines[0].get_ydata(), [-0.02, -0.03])
    assert any(np.allclose(line.get_ydata(), [0, 0]) for line in ax.lines)  # zero line
    assert ax.get_ylim() == (-0.1, 0.1)
    # the off-scale point is drawn at the edge as a triangle
    assert any(line.get_marker() == "^" for line in ax.lines)
    with pytest.raises(ValueError, match="at least one method"):
        plot_paired_differences({})


def test_plot_gap_ranking_orders_best_first():
    from toptwo.viz import plot_gap_ranking
    gaps = {"A": {"mean": 0.03, "ci_low": 0.02, "ci_high": 0.04},
            "B": {"mean": 0.01, "ci_low": 0.0, "ci_high": 0.02}}
    fig = plot_gap_ranking(gaps)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["B", "A"]


def test_method_color_is_stable_and_distinct():
    from toptwo.viz import method_color
    from toptwo.experiments.paper import ALL_METHOD_NAMES

    names = ALL_METHOD_NAMES
    cols = [method_color(m, names) for m in names]
    assert len({str(c) for c in cols}) == len(names)
    assert method_color("Oracle", names) == "black"


# ------------------------------------------------------ legible figures (the book)
def _every_figure():
    """One figure of every plot_* function, with legends, titles and annotations on."""
    from toptwo.viz import (plot_curve_panels, plot_error_curves, plot_estimates,
                            plot_gap_ranking, plot_grid, plot_group_differences,
                            plot_paired_differences, plot_paired_panels)
    model = _tiny_model()
    A = np.array([[2, 4], [3, 0], [1, 3]])
    dv = np.array([[0.2, -0.5, 0.2, 0.1], [0.3, 0.2, 0.2, -0.6]])
    x = np.array([0.1, 0.2, 0.4, 0.8])
    summ = {m: {"x": [1, 2], "mean": [0.5, 0.4], "ci_low": [0.4, 0.3], "ci_high": [0.6, 0.5]}
            for m in ("TopTwo2", "MV")}
    gaps = {"A": {"mean": 0.03, "ci_low": 0.02, "ci_high": 0.04},
            "B": {"mean": 0.01, "ci_low": 0.0, "ci_high": 0.02}}
    return {
        "plot_answer_frequencies": plot_answer_frequencies(model, A, [0, 1, 0, 1]),
        "plot_singular_values": plot_singular_values({"E[A]": [5.0, 1.0], "A": [7.0, 2.0]},
                                                     title="t"),
        "plot_rate": plot_rate(x, 2 * x ** -0.5, reference=(-0.5, 1.0), title="t"),
        "plot_delta_v": plot_delta_v(dv, [1, 0, 1, 0, 1], expected=dv, top_two=[[2, 4], [4, 2]]),
        "plot_paired_differences": plot_paired_differences(
            {"MV": [[1, -0.02, 0.005, 30]], "MACE": [[1, 0.01, 0.004, 30]]}, title="t"),
        "plot_gap_ranking": plot_gap_ranking(gaps, title="t"),
        "plot_error_curves": plot_error_curves(summ, lower_bound=([1, 2], [0.3, 0.2]),
                                               title="t"),
        "plot_estimates": plot_estimates({"p": ([0.1, 0.5], [0.2, 0.4]),
                                          "q": ([0.6, 0.9], [0.65, 0.8])}),
        "plot_grid": plot_grid([[("a", summ), ("b", summ)]]),
        "plot_paired_panels": plot_paired_panels(
            {"a": {"MV": [[1, -0.02, 0.005, 30]]}, "b": {"MV": [[1, 0.01, 0.004, 30]]}}),
        "plot_curve_panels": plot_curve_panels({"a": summ, "b": summ}),
        "plot_group_differences": plot_group_differences(
            {"A - B": {"d1": {"mean": 0.01, "half": 0.02}, "d2": {"mean": -0.03, "half": 0.01}}},
            title="t"),
    }


def test_every_figure_keeps_to_the_font_floor():
    from toptwo.viz import FONT_FLOOR_PT, small_texts

    figures = _every_figure()
    assert set(figures) == {n for n in toptwo.viz.__all__ if n.startswith("plot_")}
    for name, fig in figures.items():
        assert small_texts(fig) == [], (name, small_texts(fig))
        n_texts = sum(bool(t.get_text().strip()) for t in fig.findobj(matplotlib.text.Text))
        assert n_texts >= 5, name
    assert FONT_FLOOR_PT == 10.0


def test_small_texts_finds_a_text_below_the_floor():
    from toptwo.viz import small_texts

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend(fontsize=8)
    ax.set_title("fine", fontsize=10)
    ax.tick_params(labelsize=7)
    found = small_texts(fig)
    assert "'a line' at 8.0 pt" in found and "'fine' at 10.0 pt" not in " ".join(found)
    assert any(f.endswith("at 7.0 pt") for f in found)     # tick labels, once drawn
    assert small_texts(fig, floor=7) == []


def test_many_panels_wrap_to_rows_of_at_most_three():
    from toptwo.viz import MAX_PANELS_PER_ROW

    dv = np.tile([0.2, -0.5, 0.2, 0.1], (6, 1))
    for n, (rows, cols) in {1: (1, 1), 3: (1, 3), 4: (2, 2), 5: (2, 3), 6: (2, 3)}.items():
        fig = plot_delta_v(dv, list(range(n)))
        assert len(fig.axes) == n                       # no empty panels left over
        assert fig.get_size_inches()[0] == pytest.approx(3.2 * cols), n
        assert fig.get_size_inches()[1] == pytest.approx(2.8 * rows), n
        titles = [ax.get_title() for ax in fig.axes]
        assert titles == [f"task {j}: ĝ=2, ĥ=4" for j in range(n)]  # panel t is task t
        assert cols <= MAX_PANELS_PER_ROW
