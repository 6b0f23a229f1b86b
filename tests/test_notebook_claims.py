"""Seed sweep of the lessons' statistical claims.

A notebook asserts its claims on one seed. Each claim here is the same computation as the
notebook's cell, re-run on seeds 0-19 with the notebook's tolerance: a claim must hold for
every seed (its tolerance is derived from the sampling noise, so a failure on some seed
would mean a tolerance that is too tight or a claim that is false). Notebook 05's
Monte-Carlo section was swept over seeds 0-9 when it was written (see
``benchmarks/theorems_mc.py`` for the larger runs).
"""

from __future__ import annotations

import numpy as np
import pytest

import toptwo

SEEDS = range(20)


def _instance(seed: int, s: float = 0.3):
    """Notebook 04's instance: n = 100, m = 500, K = 5, p ~ U[0, 1], q ~ U(1/2, 1]."""
    model = toptwo.TopTwoModel.random(100, 500, 5, rng=seed)
    return model, model.sample(s, rng=seed + 1)


def _paired_tol(a: np.ndarray, b: np.ndarray) -> float:
    """2 sd of a paired difference of error rates: they differ only where the pairs do."""
    d = np.mean(np.any(a != b, axis=1))
    return 2 * np.sqrt(d / a.shape[0])


@pytest.mark.slow
@pytest.mark.parametrize("s", [0.1, 0.3])
def test_notebook04_mle_refines_stage1_every_seed(s):
    fails = []
    for seed in SEEDS:
        model, A = _instance(seed, s)
        t1 = toptwo.TopTwo1().fit(A)
        t2 = toptwo.TopTwo2().fit(A)
        e1 = toptwo.top_two_errors(t1.top_two_, model.top_two)["pair"]
        e2 = toptwo.top_two_errors(t2.top_two_, model.top_two)["pair"]
        if not e2 <= e1 + _paired_tol(t2.top_two_, t1.top_two_):
            fails.append((seed, e1, e2))
    assert not fails, f"TopTwo2 worse than stage 1 beyond the paired noise on {fails}"


@pytest.mark.slow
@pytest.mark.parametrize("s", [0.1, 0.3])
def test_notebook04_toptwo2_within_noise_of_oracle_every_seed(s):
    fails = []
    for seed in SEEDS:
        model, A = _instance(seed, s)
        t2 = toptwo.TopTwo2().fit(A)
        oracle = toptwo.OracleMLE(model.reliability, model.confusion).fit(A)
        mv = toptwo.MajorityVote(rng=3).fit(A)
        e2, eo, emv = (toptwo.top_two_errors(e.top_two_, model.top_two)["pair"]
                       for e in (t2, oracle, mv))
        if not (e2 - eo <= 0.01 + _paired_tol(t2.top_two_, oracle.top_two_) and e2 < emv):
            fails.append((seed, round(e2, 3), round(eo, 3), round(emv, 3)))
    assert not fails, f"TopTwo2 not within 0.01 + 2 sd of the oracle (or not below MV): {fails}"


@pytest.mark.slow
def test_the_paired_tolerance_rejects_a_worse_method():
    # negative twin: the same test flags majority vote against the oracle at s = 0.3
    flagged = 0
    for seed in range(5):
        model, A = _instance(seed)
        mv = toptwo.MajorityVote(rng=3).fit(A)
        oracle = toptwo.OracleMLE(model.reliability, model.confusion).fit(A)
        emv, eo = (toptwo.top_two_errors(e.top_two_, model.top_two)["pair"] for e in (mv, oracle))
        flagged += emv - eo > 0.01 + _paired_tol(mv.top_two_, oracle.top_two_)
    assert flagged == 5


# ----------------------------------------------------------------- notebook 05, section 7
HAMMERS = (1.0, 0.6, 0.4, 0.3, 0.2, 0.15, 0.1, 0.05)


def _sign_rule_claims(fl) -> list[str]:
    """Notebook 05's section 7 asserts, as a list of the ones that fail."""
    from scipy import stats
    h = np.array(HAMMERS)
    i10 = HAMMERS.index(0.1)
    bad = []
    for rule in ("paper", "sum"):
        if np.any(fl[rule]["flipped"][h >= 0.3] != 0):
            bad.append(f"{rule} flips with <= 70% spammers")
    if np.any(fl["sum"]["flipped"][h >= 0.1] > 1):
        bad.append("sum rule flips more than once")
    if not fl["paper"]["ci"][0][i10] > 0.15:
        bad.append("paper rule's flip rate at 90% spammers not above 0.15")
    fp, fs = fl["paper"]["flipped"][i10], fl["sum"]["flipped"][i10]
    if not stats.fisher_exact([[fp, 30 - fp], [fs, 30 - fs]], alternative="greater").pvalue < 0.01:
        bad.append("sum rule does not flip significantly less often")
    if not fl["sum"]["err_g"][i10] < fl["paper"]["err_g"][i10]:
        bad.append("sum rule's g error not lower")
    return bad


@pytest.mark.slow
def test_notebook05_sign_rule_claims_every_seed():
    from toptwo import theory
    fails = {}
    for seed in range(10):
        fl = theory.sign_rule_flips(hammer_fractions=HAMMERS, n_reps=30, rng=seed)
        bad = _sign_rule_claims(fl)
        if bad:
            fails[seed] = bad
    assert not fails, f"notebook 05's sign-rule claims fail for {fails}"


@pytest.mark.slow
def test_notebook05_sign_rule_claims_reject_swapped_rules():
    # negative twin: with the two rules' results swapped, the claims must fail
    from toptwo import theory
    fl = theory.sign_rule_flips(hammer_fractions=HAMMERS, n_reps=30, rng=0)
    swapped = {**fl, "paper": fl["sum"], "sum": fl["paper"]}
    assert _sign_rule_claims(fl) == []
    assert len(_sign_rule_claims(swapped)) >= 3


# ----------------------------------------------------------------- notebook 05, section 8
def _minimax_claims(mm) -> list[str]:
    d_bar = np.array([r["d_bar"] for r in mm["rows"]])
    need = {k: np.array([r["x_needed"][k] for r in mm["rows"]]) for k in ("TopTwo2", "oracle MLE")}
    cor2 = np.array([r["cor2_x"] for r in mm["rows"]])
    bad = []
    for k, v in need.items():
        if not np.all((v > 4 * 0.25) & (v < 1e-3 * cor2)):
            bad.append(f"{k} outside (1, Cor. 2 / 1000)")
    if not np.polyfit(np.log(d_bar), np.log(need["TopTwo2"]), 1)[0] > -0.5:
        bad.append("TopTwo2's threshold grows like 1/D-bar")
    if not np.all(need["TopTwo2"] / need["oracle MLE"] <= 1.5):
        bad.append("TopTwo2 more than 1.5x the oracle")
    return bad


@pytest.mark.slow
def test_notebook05_minimax_claims_every_seed():
    from toptwo import theory
    fails = {}
    for seed in range(5):
        bad = _minimax_claims(theory.minimax_gap_curves(n_reps=2, rng=seed))
        if bad:
            fails[seed] = bad
    assert not fails, f"notebook 05's minimax claims fail for {fails}"


def test_notebook05_minimax_claims_reject_a_dbar_squared_gap():
    # negative twin: thresholds growing like 1/D-bar (the gap Cor. 2 would allow) are rejected
    rows = [{"d_bar": d, "cor2_x": 1e7, "x_needed": {"TopTwo2": 0.5 / d, "oracle MLE": 0.5 / d}}
            for d in (0.04, 0.08, 0.12, 0.16)]
    assert "TopTwo2's threshold grows like 1/D-bar" in _minimax_claims({"rows": rows})
