"""Seed sweep of the ranking claims of the reproduction notebooks (06-08).

The notebooks derive their ranking claims from the stored 30-replicate runs of
``benchmarks/reproduce_paper.py`` with Holm-corrected paired t tests. A claim that holds on
one stored run could still be an accident of its seed. Each test here re-runs a *reduced*
version of the experiment (fewer replicates, two budgets, the methods the claim is about)
for several root seeds that the stored run did not use, and checks that the claim holds
for every seed. Each claim is paired with a negative twin showing that the check can
fail (it rejects a claim that is false).
"""

from __future__ import annotations

import pytest

import toptwo
from toptwo import experiments as ex
from toptwo.experiments import paper

SEEDS = (101, 202, 303)          # root seeds, not the stored run's (20230)
RATES = (0.08, 0.16)             # n s = 4 and 8
REPS = 6


def _run(scenario: str, methods, seed: int):
    recs = ex.sweep(lambda g: toptwo.TopTwoModel.scenario(scenario, 50, 500, 5, rng=g),
                    paper.method_factories(methods), RATES, REPS, seed=seed)
    raw: dict[str, dict[str, list[float]]] = {}
    for r in recs:
        raw.setdefault(r["method"], {}).setdefault(str(float(r["queries_per_task"])), []).append(
            r["err_pair"])
    return raw


def _mean(raw, m):
    return float(ex.grid_average(raw, m).mean())


@pytest.mark.slow
def test_full_matrix_models_are_behind_toptwo2_every_seed():
    # notebook 06 section 3: MV-D&S (full) and MultiSPA-KL lose to TopTwo2 everywhere
    fails = []
    for seed in SEEDS:
        for scenario in ("hard", "high_variance"):
            raw = _run(scenario, ["TopTwo2", "MV-D&S (full)", "MultiSPA-KL"], seed)
            rows = ex.compare_methods(raw, [("TopTwo2", "MV-D&S (full)"),
                                            ("TopTwo2", "MultiSPA-KL")])
            fails += [(seed, scenario, r["b"], round(r["mean"], 3)) for r in rows
                      if not (r["significant"] and r["mean"] < 0)]
    assert not fails, f"TopTwo2 not significantly better (Holm) on {fails}"


@pytest.mark.slow
def test_opt_ds_is_not_second_on_hard_every_seed():
    # notebook 06 section 5: the paper's "OPT-D&S second on Hard" does not reproduce;
    # at least two methods have a lower grid-averaged pair error than OPT-D&S
    methods = ["OPT-D&S", "TopTwo2", "MACE", "PGD", "MV-D&S"]
    fails = []
    for seed in SEEDS:
        raw = _run("hard", methods, seed)
        ahead = [m for m in methods[1:] if _mean(raw, m) < _mean(raw, "OPT-D&S")]
        if len(ahead) < 2:
            fails.append((seed, ahead))
    assert not fails, f"fewer than two methods ahead of OPT-D&S on hard: {fails}"


@pytest.mark.slow
def test_mace_is_ahead_of_toptwo2_on_few_smart_every_seed():
    # notebook 06 section 5: on few_smart MACE (and the one-coin EM) beat TopTwo2, so the
    # paper's "TopTwo2 best in every scenario" does not reproduce there
    fails = []
    for seed in SEEDS:
        raw = _run("few_smart", ["TopTwo2", "MACE", "MV-D&S"], seed)
        if not _mean(raw, "MACE") < _mean(raw, "TopTwo2"):
            fails.append((seed, round(_mean(raw, "MACE"), 3), round(_mean(raw, "TopTwo2"), 3)))
    assert not fails, f"MACE not ahead of TopTwo2 on few_smart: {fails}"


@pytest.mark.slow
def test_the_seed_sweep_rejects_a_false_ranking():
    # negative twin: "MV is ahead of TopTwo2 on hard" is false; the same machinery says so
    raw = _run("hard", ["TopTwo2", "MV"], SEEDS[0])
    (row,) = ex.compare_methods(raw, [("MV", "TopTwo2")])
    assert not (row["significant"] and row["mean"] < 0)
    assert _mean(raw, "MV") > _mean(raw, "TopTwo2")
