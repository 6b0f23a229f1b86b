"""Negative twins of lesson 05's Monte-Carlo tolerances: each check rejects a wrong answer.

``tests/test_notebook_claims.py`` re-runs the lesson's claims for other seeds (they must
hold); here the same checks, through the same library calls, are handed the answer a wrong
theory would give, and must fail on it. Exact curves, no sampling: each test is instant.
"""

from __future__ import annotations

import numpy as np

from toptwo import experiments as ex
from toptwo import theory
from toptwo.theory import fit_loglog_slope

K, ALPHA, N = 5, 0.3, 50
NS = np.array([1, 2, 3, 4, 6, 8, 11, 15, 20, 27, 35], dtype=float)


def _growth(ns, err):
    """Sec. 1: growth of (n s needed / the bound's n s) from eps = 0.1 to 0.02."""
    ratios = [ex.queries_needed(ns, err, eps) / (np.log((K - 1) / (K * eps)) / (2 * ALPHA))
              for eps in (0.1, 0.02)]
    return ratios[1] / ratios[0]


def test_sec1_bound_check_rejects_a_method_below_the_minimax_bound():
    bound = theory.minimax_lower_bound_g(K, ALPHA, NS, n_workers=N)
    below = bound / 2                                  # a method that beats the bound by a factor 2
    sem = np.zeros_like(NS)
    slack = 3 * np.maximum(sem, np.sqrt(bound * (1 - bound) / (300 * 5)))
    assert not np.all(below + slack >= bound)


def test_sec1_rate_check_accepts_log_and_rejects_log_squared():
    limit = np.sqrt(np.log((K - 1) / (K * 0.02)) / np.log((K - 1) / (K * 0.1)))
    ns = np.geomspace(1, 60, 40)
    log_rate = (K - 1) / K * np.exp(-ALPHA * ns)               # n s ~ log(1/eps): ratio flat
    log2_rate = (K - 1) / K * np.exp(-np.sqrt(ALPHA * ns))    # n s ~ log^2(1/eps)
    assert _growth(ns, log_rate) < limit
    assert _growth(ns, log2_rate) >= limit


def test_sec2_slope_checks_reject_the_swapped_exponents():
    alphas = np.array([0.1, 0.14, 0.2, 0.28])
    spectral_wrong = fit_loglog_slope(alphas, 1.0 / alphas**2)[0]   # a 1/alpha^2 spectral method
    mv_wrong = fit_loglog_slope(alphas, 2.5 / alphas)[0]            # a 1/alpha majority vote
    assert abs(spectral_wrong + 1) > 0.3
    assert abs(mv_wrong + 2) > 0.4
    assert not mv_wrong <= spectral_wrong - 0.5


def test_sec3_le_cam_check_rejects_an_error_below_the_bound():
    x = np.array([1 / 16, 1 / 8, 1 / 4])
    le_cam = 0.5 - np.sqrt(x / 8)
    slack = 3 * np.sqrt(0.25 / (300 * 4))
    assert not np.all(le_cam - 0.1 + slack >= le_cam)


def test_sec4_slope_checks_reject_a_one_over_s_law():
    x = np.geomspace(10, 100, 6)
    slope = fit_loglog_slope(x, 3.0 / x)[0]                          # error ~ 1/s
    assert abs(slope + 0.5) > 0.28 and abs(slope + 0.5) > 0.15
