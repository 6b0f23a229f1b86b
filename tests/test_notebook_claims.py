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
