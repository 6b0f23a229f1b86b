"""Tests of toptwo.paper (the method registry, the stored runs) and of the experiment layer's
draws, scores and statistics that the reproductions (notebooks 06-09) use."""

from __future__ import annotations

import numpy as np
import pytest

import toptwo
from toptwo import experiments as ex
from toptwo import viz
from toptwo.experiments import paper
from toptwo.metrics import top_t_errors


def _hard(gen):
    return toptwo.TopTwoModel.scenario("hard", 20, 60, 4, rng=gen)


# ---------------------------------------------------------------- method_factories
def test_method_factories_build_every_method():
    model = toptwo.TopTwoModel.scenario("easy", 20, 60, 4, rng=0)
    A = model.sample(0.5, rng=1)
    for name, make in paper.method_factories(paper.METHODS).items():
        est = make(model, np.random.default_rng(2)).fit(A)
        assert est.top_two_.shape == (60, 2), name


def test_method_factories_rejects_unknown_name():
    with pytest.raises(ValueError, match="must be names from .*got 'Snorkel' instead"):
        paper.method_factories(["MV", "Snorkel"])


def test_method_factories_refuses_top_two_methods_for_top_t():
    with pytest.raises(ValueError, match="recovers top-two answers only; with n_top=3"):
        paper.method_factories(["TopTwo2 refine3"], n_top=3)


# ---------------------------------------------------------------- registry
def test_make_builds_one_estimator_and_checks_names():
    est = paper.make("MV-D&S")
    assert type(est).__name__ == "DawidSkene" and est.confusion == "one_coin"
    assert paper.make("TopTwo2", rng=3, n_top=3).n_top == 3
    with pytest.raises(ValueError, match="the oracle MLE needs the true model"):
        paper.make("Oracle")
    with pytest.raises(ValueError, match=r"recovers top-two answers only; with n_top=3"):
        paper.make("MACE", n_top=3)
    with pytest.raises(ValueError, match="must be names from .*got 'Snorkel' instead"):
        paper.make("Snorkel")
    with pytest.raises(TypeError, match="single string 'MV'"):
        paper.method_factories("MV")


def test_every_registered_name_has_a_note_or_is_self_explaining():
    for name in paper.METHOD_NOTES:
        assert name in paper.METHODS
    assert set(paper.ESTIMATOR_NAMES) == set(paper.METHODS) - {"Oracle"}


# ---------------------------------------------------------------- paired_gap
def _recs(vals_a, vals_b):
    out = []
    for r, (a, b) in enumerate(zip(vals_a, vals_b)):
        out.append({"method": "A", "queries_per_task": 1.0, "replicate": r, "err_pair": a})
        out.append({"method": "B", "queries_per_task": 1.0, "replicate": r, "err_pair": b})
    return out


def test_paired_gap_matches_hand_computation():
    g = ex.paired_gap(_recs([0.3, 0.5, 0.4], [0.1, 0.2, 0.3]), "A", "B")
    d = np.array([0.2, 0.3, 0.1])
    assert g["mean"] == pytest.approx(d.mean())
    assert g["sem"] == pytest.approx(d.std(ddof=1) / np.sqrt(3))
    assert g["ci_high"] - g["mean"] == pytest.approx(4.303 * g["sem"], rel=1e-4)  # t_{0.975, 2}
    assert g["n"] == 3


def test_paired_gap_negative_twin_sign():
    # the gap of B to A is minus the gap of A to B: a checker ignoring the order fails
    recs = _recs([0.3, 0.5, 0.4], [0.1, 0.2, 0.3])
    assert ex.paired_gap(recs, "B", "A")["mean"] == pytest.approx(-0.2)


def test_paired_gap_needs_common_draws():
    with pytest.raises(ValueError, match="no \\(x, replicate\\) with both 'A' and 'C'"):
        ex.paired_gap(_recs([0.1], [0.2]), "A", "C")


# ---------------------------------------------------------------- subsample_per_task
def test_subsample_per_task_keeps_at_most_d_per_task():
    model = toptwo.TopTwoModel.scenario("easy", 40, 100, 5, rng=0)
    A = model.sample(0.3, rng=1)
    deg = np.bincount(A.tasks, minlength=100)
    B = ex.subsample_per_task(A, 5, rng=2)
    kept = np.bincount(B.tasks, minlength=100)
    np.testing.assert_array_equal(kept, np.minimum(deg, 5))
    # kept responses are responses of A (same worker, task, label)
    a = set(zip(A.workers.tolist(), A.tasks.tolist(), A.labels.tolist()))
    assert set(zip(B.workers.tolist(), B.tasks.tolist(), B.labels.tolist())) <= a


def test_subsample_per_task_is_uniform():
    # one task answered by 10 workers, keep 2: each worker kept w.p. 1/5 (binomial sd
    # over 2000 draws: sqrt(2000 .2 .8) = 17.9; 5 sd tolerance)
    A = toptwo.Responses.from_triples(np.arange(10), np.zeros(10, int), np.ones(10, int),
                                      n_labels=3)
    gen = np.random.default_rng(3)
    hits = np.zeros(10)
    for _ in range(2000):
        hits[ex.subsample_per_task(A, 2, gen).workers] += 1
    assert np.all(np.abs(hits - 400) < 5 * 17.9)
    # negative twin: always keeping the first two would put 2000 on workers 0 and 1
    biased = np.zeros(10)
    biased[[0, 1]] = 2000
    assert not np.all(np.abs(biased - 400) < 5 * 17.9)


def test_subsample_per_task_validates_d():
    A = toptwo.Responses.from_triples([0], [0], [1], n_labels=3)
    with pytest.raises(ValueError, match="'d' parameter of subsample_per_task must be an "
                                         "int >= 1; got 0 instead"):
        ex.subsample_per_task(A, 0, rng=0)


# ---------------------------------------------------------------- vote_ratio
def test_vote_ratio_on_toy(toy):
    A, K, _, expected = toy
    np.testing.assert_allclose(ex.vote_ratio(toptwo.as_responses(A, K)), expected)


def test_vote_ratio_nan_for_unanswered():
    A = toptwo.Responses.from_triples([0, 1], [0, 0], [1, 2], n_tasks=2, n_labels=3)
    r = ex.vote_ratio(A)
    assert r[0] == 0.5 and np.isnan(r[1])


# ---------------------------------------------------------------- top-T
def test_top_t_errors_on_toy():
    truth = np.array([[1, 2, 3], [2, 3, 4], [4, 1, 2]])
    est = np.array([[1, 2, 3], [3, 2, 4], [4, 1, 3]])
    e = top_t_errors(est, truth)
    assert e["ordered"] == pytest.approx(2 / 3)
    assert e["set"] == pytest.approx(1 / 3)
    np.testing.assert_allclose(e["per_position"], [1 / 3, 1 / 3, 1 / 3])


def test_top_t_errors_validates_shapes():
    with pytest.raises(ValueError, match="must both have shape"):
        top_t_errors(np.zeros((3, 2), int), np.zeros((3, 3), int))
    with pytest.raises(TypeError, match="integer labels"):
        top_t_errors(np.zeros((3, 2)), np.zeros((3, 2), int))


def test_top_t_sweep_records():
    # a top-T model's default score: the ordered, set and per-position errors and the
    # MSE of the weights (NaN for the oracle, which is handed them)
    f = lambda g: toptwo.TopTwoModel.random(20, 30, 5, n_top=3, rng=g)  # noqa: E731
    recs = ex.sweep(f, paper.method_factories(["MV", "TopTwo1", "TopTwo2", "Oracle"], n_top=3),
                    [0.5], 2, seed=1)
    assert sorted({r["method"] for r in recs}) == ["MV", "Oracle", "TopTwo1", "TopTwo2"]
    for r in recs:
        assert 0 <= r["err_ordered"] <= 1 and r["err_set"] <= r["err_ordered"]
        assert r["err_pos1"] <= r["err_ordered"]
        assert np.isnan(r["mse_q"]) == (r["method"] == "Oracle")


# ---------------------------------------------------------------- plot_grid / per-task sweep
def test_plot_grid_layout_and_data():
    import matplotlib
    import matplotlib.pyplot as plt
    matplotlib.use("Agg")  # tests only
    summ = {"A": {"x": [1, 2], "mean": [0.5, 0.4], "ci_low": [0.4, 0.3], "ci_high": [0.6, 0.5]},
            "B": {"x": [1, 2], "mean": [0.3, 0.2], "ci_low": [0.2, 0.1], "ci_high": [0.4, 0.3]}}
    fig = viz.plot_grid([[("p1", summ), ("p2", summ)], [("p3", summ), ("p4", summ)]])
    assert len(fig.axes) == 4
    np.testing.assert_allclose(fig.axes[3].lines[1].get_xydata(), [[1, 0.3], [2, 0.2]])
    assert fig.axes[0].get_legend() is not None and fig.axes[1].get_legend() is None
    plt.close(fig)
    with pytest.raises(ValueError, match="rows of equal"):
        viz.plot_grid([[("p1", summ)], []])


def test_per_task_sweep_scores_only_tasks_with_truth():
    model = toptwo.TopTwoModel.scenario("easy", 30, 80, 4, rng=0)
    A = model.sample(0.5, rng=1)
    truth = model.top_two.copy()
    truth[:40] = 0                       # unknown truth: inferred, not scored
    recs = ex.sweep(A, paper.method_factories(["MV"]), [3, 100], 2, seed=0, draw="per_task",
                    truth=truth)
    full = [r for r in recs if r["budget"] == 100]
    mv = toptwo.baselines.MajorityVote(rng=0).fit(A)
    # budget 100 >= every task's degree: the whole data, so g error = MV's on tasks 40..79
    assert full[0]["responses_per_task"] == pytest.approx(A.nnz / 80)
    assert all(0 <= r["err_g"] <= 1 for r in recs)
    assert full[0]["err_g"] == pytest.approx(np.mean(mv.top_two_[40:, 0] != truth[40:, 0]),
                                             abs=0.05)   # MV's tie-breaking stream differs
    # negative twin: scoring all 80 tasks against the zeroed truth would give error >= 0.5
    wrong = np.mean(mv.top_two_[:, 0] != truth[:, 0])
    assert wrong >= 0.5 and full[0]["err_g"] < 0.5
    # per-task draws are prefix-stable too: budget 3, replicate 1 is the same subsample in
    # a sweep over (3,) with 2 replicates and over (100, 3) with 3
    again = ex.sweep(A, paper.method_factories(["MV"]), [100, 3], 3, seed=0, draw="per_task",
                     truth=truth)
    pick = lambda rs: [(r["err_g"], r["responses_per_task"]) for r in rs  # noqa: E731
                       if r["budget"] == 3 and r["replicate"] == 1]
    assert pick(recs) == pick(again)
    with pytest.raises(ValueError, match=r"shape \(n_tasks,\) or \(n_tasks, 2\)"):
        ex.sweep(A, paper.method_factories(["MV"]), [3], 1, seed=0, draw="per_task",
                 truth=truth[:5])


# ---------------------------------------------------------------- observed centering
# Notebook 08's diagnosis, as a unit test: Algorithm 1's centring (centering="paper")
# leaves a rank-one activity term (s_i - s')(K - 2k)/K when workloads are uneven; the
# core's default centering="observed" does not. (Its equality with a dense reference
# computation is tested in tests/test_spectral.py.)
def _uneven(seed):
    """Half the workers answer ~60% of the tasks, the other half ~5% (uneven workloads)."""
    model = toptwo.TopTwoModel.scenario("easy", 60, 400, 5, rng=seed)
    A = model.sample(0.6, rng=seed + 1)
    gen = np.random.default_rng(seed + 2)
    keep = (A.workers < 30) | (gen.random(A.nnz) < 0.05 / 0.6)
    return model, A.subset(keep)


def test_observed_centering_beats_uniform_centering_on_uneven_workloads():
    masked, uniform = [], []
    for seed in range(0, 50, 5):
        model, A = _uneven(seed)
        # Algorithm 1's per-k vectors, where the centring matters most
        obs = toptwo.TopTwo1(centering="observed", left_vector="per_k").fit(A)
        masked.append(np.mean(obs.top_two_[:, 0] != model.top_two[:, 0]))
        t1 = toptwo.TopTwo1(centering="paper", left_vector="per_k").fit(A)
        uniform.append(np.mean(t1.top_two_[:, 0] != model.top_two[:, 0]))
    masked, uniform = np.array(masked), np.array(uniform)
    # measured: observed 0-0.015 per seed (mean 0.005), paper 0.0075-0.155 (mean 0.064)
    assert np.all(masked < 0.03) and np.all(masked <= uniform)
    assert uniform.mean() > masked.mean() + 0.03


def test_observed_centering_agrees_with_algorithm_1_under_uniform_sampling():
    model = toptwo.TopTwoModel.scenario("easy", 60, 400, 5, rng=3)
    A = model.sample(0.5, rng=4)
    obs = toptwo.TopTwo1(centering="observed").fit(A)
    t1 = toptwo.TopTwo1(centering="paper").fit(A)
    assert np.mean(obs.top_two_[:, 0] == t1.top_two_[:, 0]) > 0.95
    # negative twin: a random labelling agrees on about 1/K of the tasks
    rand = np.random.default_rng(0).integers(1, 6, 400)
    assert np.mean(rand == t1.top_two_[:, 0]) < 0.5


# ---------------------------------------------------------------- Holm, paired tables
def test_holm_matches_hand_computation():
    # p sorted: 0.01 (x4 = 0.04), 0.02 (x3 = 0.06), 0.03 (x2 = 0.06), 0.5 (x1 = 0.5)
    adj = ex.holm([0.03, 0.01, 0.5, 0.02])
    assert np.allclose(adj, [0.06, 0.04, 0.5, 0.06])


def test_holm_is_monotone_and_capped():
    adj = ex.holm([0.4, 0.3, 0.9])
    assert np.allclose(adj, [0.9, 0.9, 0.9])   # 0.3*3 = 0.9, then max-accumulated
    assert ex.holm([0.8, 0.9]).max() <= 1.0


def test_holm_rejects_bad_pvalues():
    with pytest.raises(ValueError, match="values in \\[0, 1\\]"):
        ex.holm([0.1, 1.5])
    with pytest.raises(ValueError, match="non-empty"):
        ex.holm([])


def _raw():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.2, 0.6, size=(2, 30))          # instance difficulty, per x
    return {"A": {"1.0": list(base[0]), "2.0": list(base[1])},
            "B": {"1.0": list(base[0] + 0.05 + 0.01 * rng.standard_normal(30)),
                  "2.0": list(base[1] + 0.05 + 0.01 * rng.standard_normal(30))},
            "C": {"1.0": list(base[0] + 0.01 * rng.standard_normal(30)),
                  "2.0": list(base[1] + 0.01 * rng.standard_normal(30))}}


def test_compare_methods_finds_the_shift_and_not_the_tie():
    rows = ex.compare_methods(_raw(), [("A", "B"), ("A", "C")])
    ab, ac = rows
    assert ab["significant"] and ab["ci_high"] < 0 and abs(ab["mean"] + 0.05) < 0.01
    assert not ac["significant"] and ac["ci_low"] < 0 < ac["ci_high"]
    assert ab["p_holm"] >= ab["p"] and ac["p_holm"] >= ac["p"]


def test_compare_methods_uses_scipy_paired_t():
    from scipy import stats
    raw = _raw()
    (row,) = ex.compare_methods(raw, [("A", "B")], xs=[1.0])
    a, b = np.array(raw["A"]["1.0"]), np.array(raw["B"]["1.0"])
    assert np.isclose(row["p"], stats.ttest_rel(a, b).pvalue)
    half = stats.t.ppf(0.975, 29) * (a - b).std(ddof=1) / np.sqrt(30)
    assert np.isclose(row["ci_high"] - row["mean"], half)


def test_compare_methods_validates():
    with pytest.raises(ValueError, match="not in the table"):
        ex.compare_methods(_raw(), [("A", "Z")])
    with pytest.raises(ValueError, match="missing"):
        ex.grid_average(_raw(), "A", xs=[3.0])
    with pytest.raises(ValueError, match="at least one"):
        ex.compare_methods(_raw(), [])


def test_paired_differences_rows():
    recs = [{"method": m, "replicate": r, "queries_per_task": x, "err_pair": e}
            for (m, r, x, e) in [("T", 0, 1.0, 0.3), ("T", 1, 1.0, 0.5), ("M", 0, 1.0, 0.4),
                                 ("M", 1, 1.0, 0.4)]]
    tab = ex.paired_differences(recs, "T", ["T", "M"])
    (row,) = tab["M"]
    assert row[0] == 1.0 and np.isclose(row[1], 0.0) and np.isclose(row[2], 0.1) and row[3] == 2
    assert "T" not in tab


def test_all_method_names_are_buildable_and_paper_first():
    assert paper.ALL_METHOD_NAMES[:len(paper.PAPER_NAMES)] == paper.PAPER_NAMES
    assert set(paper.method_factories(paper.ALL_METHOD_NAMES)) == set(paper.ALL_METHOD_NAMES)


# ---------------------------------------------------------------- stored runs
def test_results_loader_finds_every_stored_set(monkeypatch):
    monkeypatch.delenv("TOPTWO_RESULTS", raising=False)
    for name in paper.RESULT_NAMES:
        run = paper.load(name)
        assert isinstance(run, paper.StoredRun) and len(run) > 0
    with pytest.raises(ValueError, match=r"unknown result set 'nope'; known: core, "):
        paper.load("nope")


def test_results_loader_messages(monkeypatch, tmp_path):
    monkeypatch.setenv("TOPTWO_RESULTS", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match=r"TOPTWO_RESULTS=.*is not a folder"):
        paper.load("core")
    monkeypatch.setenv("TOPTWO_RESULTS", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"core.json does not exist; run "
                                                r"`python benchmarks/bench_core.py`"):
        paper.load("core")


def test_stored_run_accessors_agree_with_the_raw_json():
    syn = paper.load("reproduce_synthetic")
    assert syn.groups == ("easy", "hard", "few_smart", "high_variance")
    summ = syn.summary("err_pair", "hard", methods=["MV", "TopTwo2"])
    assert list(summ) == ["MV", "TopTwo2"]
    stored = syn["scenarios"]["hard"]["summary"]["err_pair"]["TopTwo2"]
    np.testing.assert_array_equal(summ["TopTwo2"]["mean"], stored["mean"])
    assert summ["TopTwo2"]["n"].dtype == np.int64
    raw = syn.raw("err_pair", "hard")
    assert ex.grid_average(raw, "TopTwo2").size == syn.config["replicates"]
    assert syn.paired("err_pair", "hard")["MV"] == \
        syn["scenarios"]["hard"]["toptwo2_minus"]["err_pair"]["MV"]
    assert "TopTwo2" in syn.gap_to_oracle("hard")
    # the only group is found without a name; several need one
    assert "summary" in paper.load("reproduce_real").group()
    assert "summary" in paper.load("reproduce_topt").group()
    with pytest.raises(ValueError, match=r"has the groups \['easy', 'hard'.*name one"):
        syn.summary("err_pair")
    with pytest.raises(ValueError, match="has no group 'medium'; its groups are"):
        syn.summary("err_pair", "medium")
    with pytest.raises(KeyError, match="no 'err_q' summary|no summary of 'err_q'"):
        syn.summary("err_q", "hard")
    with pytest.raises(KeyError, match=r"no 'err_pair' summary for \['Snorkel'\]"):
        syn.summary("err_pair", "hard", methods=["Snorkel"])
    with pytest.raises(ValueError, match="has no named groups"):
        paper.load("reproduce_topt").group("hard")


def test_paired_row_tests_and_holm_family():
    rows = {"A": [[1.0, 0.02, 0.005, 30], [2.0, 0.0, 0.0, 30]], "B": [[1.0, -0.001, 0.01, 10]],
            "TopTwo2": [[1.0, 0.0, 0.0, 30]]}
    tests = ex.paired_row_tests(rows, exclude=("TopTwo2",), tags={"knob": "n"})
    assert [(t["method"], t["x"]) for t in tests] == [("A", 1.0), ("A", 2.0), ("B", 1.0)]
    from scipy import stats
    assert tests[0]["p"] == pytest.approx(2 * stats.t.sf(4.0, 29))
    assert tests[0]["half"] == pytest.approx(stats.t.ppf(0.975, 29) * 0.005)
    assert np.isnan(tests[1]["p"]) and tests[0]["knob"] == "n"     # sem = 0: not testable
    ex.holm_family(tests)
    assert tests[0]["significant"] and not tests[2]["significant"] and not tests[1]["significant"]
    assert tests[0]["p_holm"] == pytest.approx(min(1, 2 * tests[0]["p"]))   # a family of two
    # negative twin: without the family correction the smallest p would be 3x smaller
    assert tests[0]["p_holm"] > tests[0]["p"]
    with pytest.raises(ValueError, match="'alpha' parameter of holm_family"):
        ex.holm_family(tests, alpha=1.5)


def test_untestable_rows_are_never_significant():
    """sem = 0 (every draw gave the same difference) or n < 2 is one comparison, not a test."""
    rows = {"A": [[20.0, 0.001, 0.0, 30], [4.0, 0.03, 0.003, 30]], "B": [[4.0, 0.02, 0.01, 1]]}
    tests = ex.holm_family(ex.paired_row_tests(rows))
    by = {(t["method"], t["x"]): t for t in tests}
    assert np.isnan(by["A", 20.0]["p"]) and not by["A", 20.0]["significant"]
    assert np.isnan(by["B", 4.0]["p"]) and not by["B", 4.0]["significant"]
    # the one testable row forms a family of one: Holm leaves its p unchanged
    assert by["A", 4.0]["significant"] and by["A", 4.0]["p_holm"] == by["A", 4.0]["p"]
    # compare_methods likewise: a constant difference is not a significant one
    raw = {"A": {"1.0": [0.3, 0.4, 0.5]}, "B": {"1.0": [0.2, 0.3, 0.4]}}
    (row,) = ex.compare_methods(raw, [("A", "B")])
    assert np.isnan(row["p"]) and not row["significant"]
