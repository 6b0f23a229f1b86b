"""TopTwo2's ``reliability_estimator="mle"``: each worker's maximum-likelihood p under eq. (1)
given the pairs and q (beyond the paper; measured in docs/design_stage1.md)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar

import toptwo
import toptwo.reliability as rel
from toptwo.reliability import estimate_reliability_mle


def _loglik(p, labels, g, h, q, K):
    """Eq. (1): log P of one worker's answers at reliability p (brute force, per answer)."""
    P = np.where(labels == g, p * q + (1 - p) / K,
                 np.where(labels == h, p * (1 - q) + (1 - p) / K, (1 - p) / K))
    return float(np.sum(np.log(P)))


def _instance(seed, n=12, m=60, K=5, s=0.6):
    model = toptwo.TopTwoModel.random(n, m, K, rng=seed)
    R = model.sample(s, rng=seed + 100)
    rng = np.random.default_rng(seed + 200)
    q = rng.uniform(0.5, 1.0, m)
    # pairs from the truth, some tasks swapped or without an estimate
    top = model.top_two.copy()
    swap = rng.random(m) < 0.2
    top[swap] = top[swap][:, ::-1]
    top[:3] = 0
    return R, top, q


def _score(p, labels, g, h, q, K):
    """d/dp of _loglik (brute force)."""
    a = np.where(labels == g, q, np.where(labels == h, 1 - q, 0.0))
    return float(np.sum((a - 1 / K) / (p * a + (1 - p) / K)))


def _reference_mle(R, top, q):
    """Per worker: the root of the exact score by brentq (xtol 1e-15), or the boundary."""
    K = R.n_labels
    out = np.full(R.n_workers, np.nan)
    for i in range(R.n_workers):
        e = (R.workers == i) & (top[R.tasks, 0] > 0)
        if not e.any():
            continue
        args = (R.labels[e], top[R.tasks[e], 0], top[R.tasks[e], 1], q[R.tasks[e]], K)
        top_p = 1.0 - 1e-15
        if _score(0.0, *args) <= 0:
            out[i] = 0.0
        elif _score(top_p, *args) >= 0:
            out[i] = 1.0
        else:
            out[i] = brentq(_score, 0.0, top_p, args=args, xtol=1e-15, rtol=1e-15)
        # and it is the maximiser of the likelihood (bounded search as a second opinion)
        best = minimize_scalar(lambda p, a=args: -_loglik(p, *a), bounds=(0.0, top_p),
                               method="bounded", options={"xatol": 1e-12})
        assert _loglik(out[i], *args) >= -best.fun - 1e-9
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("steps", [None, 12])
def test_mle_maximises_the_likelihood_of_eq1(seed, steps, monkeypatch):
    # with 12 steps bisection alone would be about 1e-4 off: the Newton steps must do the work
    if steps is not None:
        monkeypatch.setattr(rel, "MLE_STEPS", steps)
    R, top, q = _instance(seed)
    p_hat = estimate_reliability_mle(R, top, q)
    ref = _reference_mle(R, top, q)
    np.testing.assert_array_equal(np.isnan(p_hat), np.isnan(ref))
    ok = ~np.isnan(ref)
    np.testing.assert_allclose(p_hat[ok], ref[ok], rtol=0, atol=1e-10)


def test_mle_boundaries_and_idle_workers():
    # worker 0 only ever gives g (q = 1): p = 1; worker 1 only other labels: p = 0;
    # worker 2 answers nothing; worker 3 only tasks without an estimate
    workers = np.array([0, 0, 0, 1, 1, 1, 3])
    tasks = np.array([0, 1, 2, 0, 1, 2, 3])
    labels = np.array([1, 2, 3, 5, 5, 4, 1])
    R = toptwo.Responses(workers, tasks, labels, shape=(4, 4), n_labels=5)
    top = np.array([[1, 2], [2, 3], [3, 1], [0, 0]])
    q = np.array([1.0, 1.0, 1.0, 0.75])
    p = estimate_reliability_mle(R, top, q)
    assert p[0] == 1.0
    assert p[1] == 0.0
    assert np.isnan(p[2]) and np.isnan(p[3])


def test_mle_refuses_bad_input():
    R, top, q = _instance(0)
    with pytest.raises(ValueError, match=r"`top` of estimate_reliability_mle must have 2 columns"):
        estimate_reliability_mle(R, np.zeros((R.n_tasks, 3), dtype=int), q)
    with pytest.raises(ValueError, match=r"confusion"):
        estimate_reliability_mle(R, top, np.full(R.n_tasks, 0.3))
    with pytest.raises(TypeError, match=r"estimate_reliability_mle"):
        estimate_reliability_mle("responses.csv", top, q)
    # a dense array is read like any input
    np.testing.assert_array_equal(estimate_reliability_mle(R.toarray(), top, q),
                                  estimate_reliability_mle(R, top, q))


def test_toptwo2_option_uses_the_mle_and_keeps_the_default():
    model = toptwo.TopTwoModel.scenario("few_smart", 50, 300, 5, rng=3)
    A = model.sample(0.3, rng=4)
    # the default is the leave-one-out p, not the MLE (and not eq. (5))
    default = toptwo.TopTwo2().fit(A)
    from toptwo.reliability import estimate_reliability_loo
    np.testing.assert_array_equal(default.reliability_, estimate_reliability_loo(
        toptwo.as_responses(A), default.stage1_, n_responses=toptwo.as_responses(A).worker_counts()))
    est = toptwo.TopTwo2(reliability_estimator="mle").fit(A)
    R = toptwo.as_responses(A)
    expected = estimate_reliability_mle(R, est.stage1_.top, est._q_mle,
                                        n_responses=R.worker_counts())
    np.testing.assert_array_equal(est.reliability_, expected)
    assert np.nanmin(est.reliability_) >= 0 and np.nanmax(est.reliability_) <= 1
    # the same data in another worker order: the same p per worker, the same labels
    perm = np.random.default_rng(5).permutation(R.n_workers)
    inv = np.argsort(perm)
    Rp = toptwo.Responses.from_triples(inv[R.workers], R.tasks, R.labels,
                                       n_workers=R.n_workers, n_tasks=R.n_tasks,
                                       n_labels=R.n_labels)
    other = toptwo.TopTwo2(reliability_estimator="mle").fit(Rp)
    np.testing.assert_allclose(other.reliability_[inv], est.reliability_, rtol=0, atol=1e-9)
    assert other.top_two_.tolist() == est.top_two_.tolist()


def test_toptwo2_option_combinations_are_refused():
    A = toptwo.TopTwoModel.random(20, 80, 5, rng=0).sample(0.5, rng=1)
    with pytest.raises(ValueError, match=r"reliability_estimator='mle' is implemented for "
                                         r"the top-two model only \(n_top=2\); got n_top=3"):
        toptwo.TopTwo2(reliability_estimator="mle", n_top=3).fit(A)
    for estimator in ("mle", "leave_one_out"):
        with pytest.raises(ValueError, match=rf"reliability_normalization='paper' applies to "
                                             rf"eq. \(5\) as printed \(reliability_estimator="
                                             rf"'moment'\) only; reliability_estimator="
                                             rf"'{estimator}' has none \(pass "
                                             rf"reliability_estimator='moment' with it\)"):
            toptwo.TopTwo2(reliability_estimator=estimator,
                           reliability_normalization="paper").fit(A)
    # the default is the leave-one-out estimator: the paper's normalisation needs "moment"
    with pytest.raises(ValueError, match=r"reliability_estimator='leave_one_out' has none"):
        toptwo.TopTwo2(reliability_normalization="paper").fit(A)
    with pytest.raises(ValueError, match=r"reliability_estimator"):
        toptwo.TopTwo2(reliability_estimator="ml").fit(A)
    with pytest.raises(ValueError, match=r"n_refinements=3 re-estimates p by eq. \(5\); it is "
                                         r"not implemented with reliability_estimator='mle'"):
        toptwo.TopTwo2(reliability_estimator="mle", n_refinements=3).fit(A)


def test_mle_q_one_and_an_h_answer_is_an_answer_outside_the_pair():
    # with q_j = 1, eq. (1) gives h_j probability (1 - p)/K, like any label outside the pair
    R = toptwo.Responses(np.array([0, 0, 0]), np.array([0, 1, 2]), np.array([1, 2, 1]),
                         shape=(1, 3), n_labels=4)
    top = np.array([[1, 2], [1, 2], [1, 2]])
    q = np.array([1.0, 1.0, 1.0])
    p = estimate_reliability_mle(R, top, q)          # no RuntimeWarning (they are errors)
    ref = _reference_mle(R, top, q)
    np.testing.assert_allclose(p, ref, atol=1e-10)
    assert 0 < p[0] < 1


def test_mle_reads_k_from_n_labels_for_other_inputs():
    R, top, q = _instance(1)
    dense = R.toarray()
    np.testing.assert_array_equal(estimate_reliability_mle(dense, top, q, n_labels=R.n_labels),
                                  estimate_reliability_mle(R, top, q))
    with pytest.raises(ValueError, match=r"n_labels"):
        estimate_reliability_mle(dense, top, q, n_labels=2)


def test_mle_checks_n_responses():
    R, top, q = _instance(2)
    counts = R.worker_counts().copy()
    counts[0] = 0
    assert np.isnan(estimate_reliability_mle(R, top, q, n_responses=counts)[0])
    with pytest.raises(ValueError, match=r"`n_responses` of estimate_reliability_mle must "
                                         r"have length 12; got length 3"):
        estimate_reliability_mle(R, top, q, n_responses=np.zeros(3, dtype=int))
    with pytest.raises(TypeError, match=r"`n_responses` of estimate_reliability_mle must be "
                                        r"a 1-D integer array"):
        estimate_reliability_mle(R, top, q, n_responses=[0.0] * R.n_workers)


def test_toptwo2_option_with_sample_splitting():
    A = toptwo.TopTwoModel.scenario("hard", 40, 200, 5, rng=6).sample(0.3, rng=7)
    est = toptwo.TopTwo2(reliability_estimator="mle", sample_splitting=True, rng=8).fit(A)
    p = est.reliability_
    assert np.all(np.isnan(p) | ((p >= 0) & (p <= 1)))
    assert np.isfinite(p).sum() >= 30
    again = toptwo.TopTwo2(reliability_estimator="mle", sample_splitting=True, rng=8).fit(A)
    np.testing.assert_array_equal(again.reliability_, p)
