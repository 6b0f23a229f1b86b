"""Tests of toptwo.experiments (sweeps, aggregation, sample complexity) and of the theory
quantities the sweeps are compared with (minimax bound, D-bar)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import toptwo
from toptwo import experiments as ex
from toptwo import theory, viz
from toptwo.model import kl_divergence_bar, kl_divergence_per_task


def _factory(g):
    return toptwo.TopTwoModel.random(12, 30, 4, rng=g)


METHODS = {
    "mv": lambda model, rng: toptwo.baselines.MajorityVote(rng=rng),
    "oracle": lambda model: toptwo.OracleMLE(model.reliability, model.confusion),
}


# ------------------------------------------------------------------ sweep
def _same(a, b):
    """Records equal, NaN == NaN (records hold NaN where a metric does not apply)."""
    return repr(a) == repr(b)


def test_sweep_is_reproducible():
    a = ex.sweep(_factory, METHODS, [0.3, 0.6], 2, seed=7)
    b = ex.sweep(_factory, METHODS, [0.3, 0.6], 2, seed=7)
    assert _same(a, b)
    assert len(a) == 2 * 2 * 2
    c = ex.sweep(_factory, METHODS, [0.3, 0.6], 2, seed=8)
    assert not _same(a, c)


def test_sweep_is_prefix_stable_in_grid_and_replicates():
    """Replicate r at x is the same draw whatever the grid and the number of replicates."""
    small = ex.sweep(_factory, METHODS, [0.6], 2, seed=7, key=(1,))
    big = ex.sweep(_factory, METHODS, [0.3, 0.6, 0.9], 3, seed=7, key=(1,))
    sub = [r for r in big if r["sampling_rate"] == 0.6 and r["replicate"] < 2]
    assert _same(small, sub)
    # negative twin: the key separates sweeps
    other = ex.sweep(_factory, METHODS, [0.6], 2, seed=7, key=(2,))
    assert not _same(small, other)


def test_sweep_seeding_scheme_is_the_documented_one():
    """Model stream (..., 0), data stream (..., 1), method stream (..., 2, crc32(name))."""
    import zlib

    seen = {}

    def factory(g):
        seen["model"] = g.integers(2**62)
        return toptwo.TopTwoModel.random(15, 40, 5, rng=g)

    def spy(model, rng):
        seen["method"] = rng.integers(2**62)
        return toptwo.TopTwo2()

    (rec,) = ex.sweep(factory, {"t2": spy}, [0.5], 1, seed=3, key=(4,))
    base = (4, 50_000, 0, 0)
    assert ex.replicate_seed(3, 0.5, 0, (4,)).spawn_key == base

    def stream(*tail):
        return np.random.default_rng(np.random.SeedSequence(3, spawn_key=base + tail))

    assert seen["model"] == stream(0).integers(2**62)
    assert seen["method"] == stream(2, zlib.crc32(b"t2")).integers(2**62)
    g = stream(0)
    g.integers(2**62)
    model = toptwo.TopTwoModel.random(15, 40, 5, rng=g)
    A = model.sample(0.5, rng=stream(1))
    est = toptwo.TopTwo2().fit(A)
    assert rec["err_pair"] == toptwo.top_two_errors(est.top_two_, model.top_two)["pair"]
    # negative twin: the data stream is not the model stream
    B = model.sample(0.5, rng=stream(0))
    assert not np.array_equal(A.labels, B.labels) or A.nnz != B.nnz


def test_replicate_seed_validates():
    with pytest.raises(TypeError, match="'key' parameter of replicate_seed must be a sequence"):
        ex.replicate_seed(0, 0.5, 0, key=3)
    with pytest.raises(ValueError, match="'x' parameter of replicate_seed must be a finite "
                                         "number >= 0"):
        ex.replicate_seed(0, -0.5, 0)
    with pytest.raises(TypeError, match="'key' parameter of sweep must be a sequence"):
        ex.sweep(_factory, METHODS, [0.5], 1, seed=0, key=3)


def test_adding_or_reordering_methods_does_not_change_results():
    base = ex.sweep(_factory, {"mv": METHODS["mv"]}, [0.3, 0.6], 3, seed=11)
    more = {"t1": lambda model: toptwo.TopTwo1(),
            "oracle": METHODS["oracle"], "mv": METHODS["mv"]}
    both = ex.sweep(_factory, more, [0.3, 0.6], 3, seed=11)
    assert _same([r for r in both if r["method"] == "mv"], base)


def test_method_rngs_are_distinct_per_method_and_draw():
    seen = []

    def spy(model, rng):
        seen.append(int(rng.integers(2**62)))
        return toptwo.baselines.MajorityVote(rng=rng)

    ex.sweep(_factory, {"a": spy, "b": spy}, [0.3, 0.6], 2, seed=0)
    assert len(seen) == 8 and len(set(seen)) == 8


def test_sweep_records_metrics():
    model = toptwo.TopTwoModel.random(15, 40, 5, rng=1)
    recs = ex.sweep(model, {"t2": lambda m: toptwo.TopTwo2(),
                            "mv": lambda m, r: toptwo.baselines.MajorityVote(rng=r)},
                    [0.5], 1, seed=0, tags={"alpha": 0.25})
    t2, mv = recs
    assert t2["method"] == "t2" and mv["method"] == "mv"
    assert t2["alpha"] == 0.25 and t2["queries_per_task"] == pytest.approx(7.5)
    assert t2["p_bar"] == pytest.approx(model.p_bar)
    for key in ex.METRICS:
        assert key in t2
    assert np.isfinite(t2["mse_p"]) and math.isnan(mv["mse_p"])
    # recompute from a direct fit on the same draw
    A = model.sample(0.5, rng=np.random.default_rng(ex.replicate_seed(0, 0.5, 0).spawn(2)[1]))
    est = toptwo.TopTwo2().fit(A)
    err = toptwo.top_two_errors(est.top_two_, model.top_two)
    assert t2["err_pair"] == err["pair"] and t2["err_g"] == err["g"]
    assert t2["observed_queries_per_task"] == A.nnz / 40
    assert t2["mse_p"] == pytest.approx(np.mean((est.reliability_ - model.reliability) ** 2))
    d = np.abs(est.confusion_ - model.confusion)
    assert t2["max_abs_q"] == pytest.approx(d.max())
    ok = est.top_two_[:, 0] == model.top_two[:, 0]
    assert t2["max_abs_q_ok"] == pytest.approx(d[ok].max())


def test_sweep_custom_score_and_draw():
    model = toptwo.TopTwoModel.random(15, 40, 5, rng=1)
    raw = ex.sweep(model, {"t2": lambda m: toptwo.TopTwo2()}, [0.5], 2, seed=0,
                   score=lambda est, mo: ex.score_top_two(est, mo,
                                                          confusion_attr="confusion_raw_"))
    clipped = ex.sweep(model, {"t2": lambda m: toptwo.TopTwo2()}, [0.5], 2, seed=0)
    assert [r["err_pair"] for r in raw] == [r["err_pair"] for r in clipped]
    assert any(a["max_abs_q"] != b["max_abs_q"] for a, b in zip(raw, clipped))
    seen = []

    def draw(source, x, gen):
        seen.append(x)
        return source.sample(x / 10, rng=gen)

    recs = ex.sweep(model, {"mv": METHODS["mv"]}, [3, 6], 1, seed=0, draw=draw)
    assert seen == [3.0, 6.0] and [r["x"] for r in recs] == [3.0, 6.0]


def test_sweep_validation_messages():
    with pytest.raises(ValueError, match=r"'grid' .* must hold sampling rates in \(0, 1\] "
                                         r"with draw='rate'; got 0.0 instead"):
        ex.sweep(_factory, METHODS, [0.0, 0.5], 1, seed=0)
    with pytest.raises(ValueError, match="'grid' .* must be non-empty"):
        ex.sweep(_factory, METHODS, [], 1, seed=0)
    with pytest.raises(ValueError, match="repeated points"):
        ex.sweep(_factory, METHODS, [0.5, 0.5000001], 1, seed=0)
    with pytest.raises(TypeError, match="'methods' .* must be a non-empty mapping"):
        ex.sweep(_factory, {}, [0.5], 1, seed=0)
    with pytest.raises(TypeError, match="'seed' parameter of sweep must be an int"):
        ex.sweep(_factory, METHODS, [0.5], 1, seed=None)
    with pytest.raises(TypeError, match="'source' parameter of sweep must be"):
        ex.sweep(3, METHODS, [0.5], 1, seed=0)
    with pytest.raises(ValueError, match="n_replicates"):
        ex.sweep(_factory, METHODS, [0.5], 0, seed=0)
    with pytest.raises(ValueError, match="'draw' parameter of sweep must be one of"):
        ex.sweep(_factory, METHODS, [0.5], 1, seed=0, draw="bootstrap")
    with pytest.raises(ValueError, match="draw='per_task' subsamples real responses"):
        ex.sweep(_factory, METHODS, [2], 1, seed=0, draw="per_task")
    with pytest.raises(ValueError, match="`truth` is only for real responses"):
        ex.sweep(_factory, METHODS, [0.5], 1, seed=0, truth=np.ones(30, int))
    R = toptwo.TopTwoModel.random(12, 30, 4, rng=0).sample(0.5, rng=0)
    with pytest.raises(ValueError, match="cannot be sampled at a rate"):
        ex.sweep(R, METHODS, [0.5], 1, seed=0, truth=np.ones(30, int))
    with pytest.raises(ValueError, match="real responses need `truth`"):
        ex.sweep(R, METHODS, [2], 1, seed=0, draw="per_task")
    with pytest.raises(ValueError, match=r"whole numbers of answers per task >= 1 .* got 2.5"):
        ex.sweep(R, METHODS, [2.5], 1, seed=0, draw="per_task", truth=np.ones(30, int))
    with pytest.raises(ValueError, match=r"'truth' parameter of sweep must have shape"):
        ex.sweep(R, METHODS, [2], 1, seed=0, draw="per_task", truth=np.ones(29, int))


def test_progress_is_off_by_default(capsys):
    ex.sweep(_factory, METHODS, [0.5], 1, seed=0)
    assert capsys.readouterr().err == ""
    ex.sweep(_factory, METHODS, [0.5], 1, seed=0, progress=True)
    assert "1/1 draws (100%)" in capsys.readouterr().err


# ------------------------------------------------------------------ aggregate
def test_aggregate_arithmetic():
    recs = [{"method": m, "queries_per_task": x, "err": v}
            for m, x, v in [("a", 2.0, 0.1), ("a", 2.0, 0.3), ("a", 1.0, 0.5),
                            ("a", 1.0, 0.7), ("a", 1.0, 0.9), ("b", 1.0, 0.2),
                            ("a", 2.0, float("nan"))]]
    out = ex.aggregate(recs, "err")
    assert list(out) == ["a", "b"]
    a = out["a"]
    np.testing.assert_array_equal(a["x"], [1.0, 2.0])
    np.testing.assert_allclose(a["mean"], [0.7, 0.2])
    np.testing.assert_array_equal(a["n"], [3, 2])
    sem = np.array([np.std([0.5, 0.7, 0.9], ddof=1) / np.sqrt(3),
                    np.std([0.1, 0.3], ddof=1) / np.sqrt(2)])
    np.testing.assert_allclose(a["sem"], sem)
    # Student t quantiles for 2 and 1 degrees of freedom (printed tables: 4.303, 12.706)
    np.testing.assert_allclose(a["ci_high"] - a["mean"], [4.303 * sem[0], 12.706 * sem[1]],
                               rtol=1e-4)
    np.testing.assert_allclose(a["mean"] - a["ci_low"], a["ci_high"] - a["mean"])
    b = out["b"]
    assert b["sem"][0] == 0.0 and b["ci_low"][0] == b["ci_high"][0] == 0.2


def test_aggregate_large_sample_uses_student_t_not_normal_quantile():
    recs = [{"method": "a", "queries_per_task": 1.0, "e": float(v)} for v in range(40)]
    s = ex.aggregate(recs, "e")["a"]
    half = s["ci_high"][0] - s["mean"][0]
    # t_{0.975, 39} = 2.0227 (printed tables), visibly wider than the normal 1.96
    assert half == pytest.approx(2.0227 * s["sem"][0], rel=1e-4)
    assert half != pytest.approx(1.96 * s["sem"][0], rel=1e-3)


def test_aggregate_errors():
    with pytest.raises(ValueError, match="empty"):
        ex.aggregate([], "err")
    with pytest.raises(KeyError, match="no key 'nope'"):
        ex.aggregate([{"method": "a", "queries_per_task": 1.0}], "nope")


# ------------------------------------------------------------ queries_needed
def test_queries_needed_on_exponential_curve():
    # error = exp(-x/5): log-linear in x, so log-log interpolation is close, not exact
    x = np.geomspace(1, 100, 40)
    y = np.exp(-x / 5)
    got = ex.queries_needed(x, y, 0.01)
    assert got == pytest.approx(5 * np.log(100), rel=0.01)


def test_queries_needed_exact_on_power_law():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    y = 0.8 / x**2          # a power law is a straight line on log-log axes
    assert ex.queries_needed(x, y, 0.8 / 9.0) == pytest.approx(3.0)
    assert ex.queries_needed(x, y, 0.9) == 1.0
    assert math.isnan(ex.queries_needed(x, y, 1e-3))
    # a zero after the crossing point: linear in the error there
    assert ex.queries_needed([1, 2], [0.4, 0.0], 0.2) == pytest.approx(np.sqrt(2))


def test_queries_needed_uses_first_crossing_and_rejects_a_wrong_answer():
    x = [1, 2, 3, 4]
    y = [0.5, 0.05, 0.4, 0.01]
    got = ex.queries_needed(x, y, 0.1)
    assert 1 < got < 2
    assert not (3 < got < 4)


def test_queries_needed_validation():
    with pytest.raises(ValueError, match="strictly increasing"):
        ex.queries_needed([2, 1], [0.5, 0.1], 0.2)
    with pytest.raises(ValueError, match="equal length"):
        ex.queries_needed([1, 2], [0.5], 0.2)
    with pytest.raises(ValueError, match="target"):
        ex.queries_needed([1, 2], [0.5, 0.1], 0.0)


# ---------------------------------------------------------- minimax bound
def test_minimax_lower_bound_formula():
    ns = np.array([0.0, 1.0, 10.0])
    got = theory.minimax_lower_bound_g(5, 0.3, ns, n_workers=50)
    np.testing.assert_allclose(got, 0.8 * np.exp(-0.6 * ns))
    assert got[0] == pytest.approx(0.8)
    # it lies below the exact error floor ((K-1)/K)(1 - s)^(n p_bar) of the spammer-hammer
    # crowd under eq. (1)'s sampling, for every s up to s* = 0.797 (p_bar is unrestricted)
    from toptwo.theory import THEOREM3A_MAX_SAMPLING_RATE, spammer_hammer_error_g

    n = 40
    s = np.linspace(0.0, THEOREM3A_MAX_SAMPLING_RATE, 60)
    for n_h in (1, 10, 30, 40):
        lb = theory.minimax_lower_bound_g(4, n_h / n, n * s, n_workers=n)
        assert np.all(lb <= spammer_hammer_error_g(4, n_h, s) * (1 + 1e-12))
    # s = 0.7 (notebook 05's largest rate) is allowed although 0.7 > 2/3; p_bar = 0.9 too
    theory.minimax_lower_bound_g(5, 0.9, 35.0, n_workers=50)
    # negative twin: just above s* the bound exceeds the exact floor, so it is refused
    s_bad = THEOREM3A_MAX_SAMPLING_RATE + 0.01
    assert 0.75 * np.exp(-2 * s_bad * 40) > spammer_hammer_error_g(4, 40, s_bad)
    with pytest.raises(ValueError, match=r"sampling rate s = queries_per_task / n_workers must be <= s\* = 0\.79681"):
        theory.minimax_lower_bound_g(5, 0.3, s_bad * 50, n_workers=50)
    with pytest.raises(ValueError, match=r"p_bar.* must be in \[0, 1\]"):
        theory.minimax_lower_bound_g(5, 1.5, 1.0, n_workers=50)
    with pytest.raises(ValueError, match="queries_per_task"):
        theory.minimax_lower_bound_g(5, 0.3, -1.0, n_workers=50)
    with pytest.raises(TypeError):
        theory.minimax_lower_bound_g(5, 0.3, 1.0)  # n_workers is required


# -------------------------------------------------------------------- D-bar
def _dbar_loop(model):
    K = model.n_labels
    per_task = []
    for j in range(model.n_tasks):
        g, h = model.top_two[j]
        best = np.inf
        for a, b in itertools.permutations(range(1, K + 1), 2):
            if (a, b) == (g, h):
                continue
            tot = 0.0
            for pi in model.reliability:
                P = toptwo.label_distribution(pi, model.confusion[j], g, h, K)
                Q = toptwo.label_distribution(pi, model.confusion[j], a, b, K)
                for pc, qc in zip(P, Q):
                    if pc > 0:
                        tot += np.inf if qc == 0 else pc * np.log(pc / qc)
            best = min(best, tot / model.n_workers)
        per_task.append(best)
    return np.array(per_task)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kl_divergence_bar_matches_double_loop(seed):
    model = toptwo.TopTwoModel.random(4, 6, 4, rng=seed)
    np.testing.assert_allclose(kl_divergence_per_task(model), _dbar_loop(model),
                               rtol=1e-12)
    assert kl_divergence_bar(model) == pytest.approx(_dbar_loop(model).min(), rel=1e-12)
    # chunking does not change the answer
    np.testing.assert_allclose(kl_divergence_per_task(model, max_elements=1),
                               kl_divergence_per_task(model), rtol=0, atol=0)


def test_kl_divergence_bar_with_hammers_matches_loop():
    p = np.array([0.0, 1.0, 0.5])
    model = toptwo.TopTwoModel(p, [0.7, 0.95], [[1, 2], [3, 1]], 4)
    np.testing.assert_allclose(kl_divergence_per_task(model), _dbar_loop(model))
    assert np.all(np.isfinite(kl_divergence_per_task(model)))


def test_kl_divergence_bar_positive_iff_q_inside_and_some_p_positive():
    top = [[1, 2], [2, 3], [4, 1]]
    good = toptwo.TopTwoModel([0.0, 0.3, 0.8], [0.6, 0.75, 0.9], top, 4)
    assert kl_divergence_bar(good) > 0
    # negative twins: a task with q = 1 (h indistinguishable from the rest) ...
    q_one = toptwo.TopTwoModel([0.0, 0.3, 0.8], [0.6, 1.0, 0.9], top, 4)
    assert kl_divergence_bar(q_one) == 0.0
    assert kl_divergence_per_task(q_one)[0] > 0
    # ... or no informative worker (all spammers)
    spam = toptwo.TopTwoModel([0.0, 0.0, 0.0], [0.6, 0.75, 0.9], top, 4)
    assert kl_divergence_bar(spam) == 0.0


def test_kl_divergence_bar_grows_with_reliability():
    top = [[1, 2]] * 3
    vals = [kl_divergence_bar(toptwo.TopTwoModel([p] * 3, [0.7] * 3, top, 5))
            for p in (0.1, 0.3, 0.6)]
    assert vals[0] < vals[1] < vals[2]


# -------------------------------------------------------------------- figure
def test_plot_error_curves_data():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    summary = {"a": {"x": np.array([1.0, 2.0]), "mean": np.array([0.5, 0.2]),
                     "ci_low": np.array([0.4, 0.1]), "ci_high": np.array([0.6, 0.3])},
               "b": {"x": np.array([1.0, 2.0]), "mean": np.array([0.4, 0.1]),
                     "ci_low": np.array([0.3, 0.0]), "ci_high": np.array([0.5, 0.2])}}
    bx = np.array([1.0, 2.0])
    fig = viz.plot_error_curves(summary, lower_bound=(bx, np.array([0.3, 0.05])), title="t")
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == ["a", "b", "minimax lower bound (Thm 3a)"]
    np.testing.assert_allclose(lines[0].get_xydata(), [[1.0, 0.5], [2.0, 0.2]])
    np.testing.assert_allclose(lines[2].get_xydata(), [[1.0, 0.3], [2.0, 0.05]])
    assert ax.get_yscale() == "log" and ax.get_title() == "t"
    assert len(ax.collections) == 2          # one CI band per method
    plt.close(fig)


def test_plot_estimates_data():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    fig = viz.plot_estimates({"p": ([0.1, 0.5, np.nan], [0.2, 0.4, 0.3]),
                             "q": ([0.6, 0.9], [0.65, 0.8])}, ncols=3)
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 2
    pts = fig.axes[0].lines[0].get_xydata()
    np.testing.assert_allclose(pts, [[0.1, 0.2], [0.5, 0.4]])      # NaN pair dropped
    np.testing.assert_allclose(fig.axes[1].lines[1].get_xydata(), [[0.6, 0.6], [0.9, 0.9]])
    assert fig.axes[1].get_title() == "q"
    plt.close(fig)
    with pytest.raises(ValueError, match="panel 'x' has truth of length 2"):
        viz.plot_estimates({"x": ([1, 2], [1])})


def test_paired_gap_uses_complete_replicates_only():
    nan = float("nan")
    recs = []
    for r, (a1, a2) in enumerate([(1.0, 2.0), (1.0, 2.0), (1.0, nan)]):
        recs += [{"method": "A", "queries_per_task": 1.0, "replicate": r, "err_pair": a1},
                 {"method": "A", "queries_per_task": 2.0, "replicate": r, "err_pair": a2},
                 {"method": "B", "queries_per_task": 1.0, "replicate": r, "err_pair": 0.0},
                 {"method": "B", "queries_per_task": 2.0, "replicate": r, "err_pair": 0.0}]
    g = ex.paired_gap(recs, "A", "B")
    # replicates 0 and 1 average (1 + 2) / 2 = 1.5; replicate 2 lacks x = 2 and is left out
    # (averaging it over x = 1 alone would give the biased 1.333)
    assert g["mean"] == pytest.approx(1.5) and g["n"] == 2
    assert g["per_x"][1.0][0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="two records of 'A' for queries_per_task = 1.0"):
        ex.paired_gap(recs + recs[:1], "A", "B")
