"""Stage 2 (Algorithm 2, TopTwo2): p_hat of eq. (5), the plug-in MLE of eq. (6), the
pair search, the oracle MLE, and recovery at fixed seeds."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

import toptwo
from toptwo.reliability import estimate_reliability_loo
from toptwo import TopTwoModel, best_pairs, estimate_reliability, plugin_mle, top_two_errors

from conftest import with_gaps

# ------------------------------------------------ eq. (5): p_hat, binomial sd
N_W, M_T, K5, S_OBS = 50, 500, 5, 0.3


@pytest.fixture(scope="module")
def reliability_setup():
    model = TopTwoModel.scenario("hard", N_W, M_T, K5, rng=21)
    return model, model.sample(S_OBS, rng=22)


def hit_probability(p, K, T=2):
    """sigma_i = P(A_ij in {g_j, h_j} | answered) = p_i + T (1 - p_i)/K (eq. (1))."""
    return p + T * (1 - p) / K


def sd_per_worker(p, N, K):
    """hits_i | N_i ~ Binomial(N_i, sigma_i): sd of K/(K-2) (hits_i/N_i - 2/K)."""
    sig = hit_probability(p, K)
    return K / (K - 2) * np.sqrt(sig * (1 - sig) / N)


def sd_paper(p, m, s, n, K):
    """Unconditionally hits_i ~ Binomial(m, s sigma_i); eq. (5) divides by D = nnz/n ~ m s.
    Delta method: relative sd of D is sqrt((1 - s)/(n m s)) (D is a mean over n m pairs)."""
    sig = hit_probability(p, K)
    sd_ratio = np.sqrt(m * s * sig * (1 - s * sig)) / (m * s)
    sd_denominator = sig * np.sqrt((1 - s) / (n * m * s))
    return K / (K - 2) * np.sqrt(sd_ratio ** 2 + sd_denominator ** 2)


def within_sd(p_hat, p_ref, sd, z=6.0) -> bool:
    """|p_hat_i - p_i| <= z sd_i for every worker (z = 6: P(fail) <~ n * 2e-9 under the
    normal approximation of the binomial)."""
    return bool(np.all(np.abs(p_hat - p_ref) <= z * sd))


def test_p_hat_per_worker_within_binomial_sd(reliability_setup):
    model, A2 = reliability_setup
    p_hat = estimate_reliability(A2, model.top_two, normalization="per_worker")
    sd = sd_per_worker(model.reliability, A2.worker_counts(), K5)
    assert within_sd(p_hat, model.reliability, sd)
    # negative twin: the same checker rejects p shifted by 10 sd
    assert not within_sd(p_hat, model.reliability + 10 * sd, sd)


def test_p_hat_paper_within_binomial_sd(reliability_setup):
    model, A2 = reliability_setup
    p_hat = estimate_reliability(A2, model.top_two, normalization="paper")
    sd = sd_paper(model.reliability, M_T, S_OBS, N_W, K5)
    assert within_sd(p_hat, model.reliability, sd)
    assert not within_sd(p_hat, model.reliability - 10 * sd, sd)


def test_p_hat_formula_literal():
    # eq. (5) by hand: K/(K-2) (hits/N - 2/K)
    A = toptwo.as_responses(np.array([[1, 2, 3, 0], [3, 3, 0, 0], [0, 0, 0, 0]]), n_labels=4)
    top = np.array([[1, 2], [2, 3], [4, 1], [1, 2]])
    pw = estimate_reliability(A, top, normalization="per_worker",
                              n_responses=A.worker_counts())
    # worker 0: task0 1 hit, task1 2 hit, task2 3 miss -> 2/3; worker 1: 3 miss, 3 hit -> 1/2
    np.testing.assert_allclose(pw[:2], [2 * (2 / 3 - 0.5), 2 * (1 / 2 - 0.5)])
    assert np.isnan(pw[2])                                   # silent worker: NaN
    pp = estimate_reliability(A, top, normalization="paper", n_responses=A.worker_counts())
    D = 5 / 3                                                # nnz / n
    np.testing.assert_allclose(pp[:2], [2 * (2 / D - 0.5), 2 * (1 / D - 0.5)])
    assert np.isnan(pp[2])
    # a task without estimate (top = 0) never counts as a hit; per_worker leaves it out of
    # the denominator too (worker 0: task1 hit, task2 miss -> 1/2), paper keeps m s (1-s1)
    top0 = top.copy()
    top0[0] = 0
    assert estimate_reliability(A, top0, normalization="per_worker")[0] == pytest.approx(
        2 * (1 / 2 - 0.5))
    assert estimate_reliability(A, top0, normalization="paper")[0] == pytest.approx(
        2 * (1 / D - 0.5))


# ---------------------------------------- best_pairs == brute force (hypothesis)
def brute_pairs(Sa, Sb):
    """Row-major scan over ordered pairs a != b; first maximiser wins (documented tie rule)."""
    m, K = Sa.shape
    out = []
    for j in range(m):
        best = None
        for a in range(K):
            for b in range(K):
                if a != b:
                    sc = Sa[j, a] + Sb[j, b]
                    if best is None or sc > best[2]:
                        best = (a, b, sc)
        out.append(best)
    return np.array(out, dtype=float)


@st.composite
def score_pairs(draw, small_ints: bool):
    m = draw(st.integers(1, 8))
    K = draw(st.integers(2, 6))
    if small_ints:   # many ties
        el = st.integers(0, 3).map(float)
    else:
        el = st.floats(-50, 50, allow_nan=False, allow_subnormal=False)
    Sa = draw(arrays(np.float64, (m, K), elements=el))
    Sb = draw(arrays(np.float64, (m, K), elements=el))
    return Sa, Sb


@settings(max_examples=150, deadline=None)
@given(score_pairs(small_ints=True))
def test_best_pairs_with_ties(data):
    Sa, Sb = data
    a, b, score = best_pairs(Sa, Sb)
    ref = brute_pairs(Sa, Sb)
    assert (a != b).all()
    rows = np.arange(Sa.shape[0])
    np.testing.assert_array_equal(Sa[rows, a] + Sb[rows, b], ref[:, 2])   # achieved score
    np.testing.assert_array_equal(score, ref[:, 2])
    # the documented tie rule (smaller a, then smaller b) = the row-major brute force
    np.testing.assert_array_equal(a, ref[:, 0])
    np.testing.assert_array_equal(b, ref[:, 1])


@settings(max_examples=100, deadline=None)
@given(score_pairs(small_ints=False))
def test_best_pairs_continuous(data):
    Sa, Sb = data
    a, b, score = best_pairs(Sa, Sb)
    ref = brute_pairs(Sa, Sb)
    np.testing.assert_array_equal(score, ref[:, 2])
    totals = Sa[:, :, None] + Sb[:, None, :]
    K = Sa.shape[1]
    totals[:, np.arange(K), np.arange(K)] = -np.inf
    unique_best = (totals == ref[:, 2][:, None, None]).sum(axis=(1, 2)) == 1
    np.testing.assert_array_equal(a[unique_best], ref[unique_best, 0])
    np.testing.assert_array_equal(b[unique_best], ref[unique_best, 1])


# ------------------------------------------- plug-in MLE == brute force
def eq6_scores(R, p, W, K):
    """S_t[j, c] = sum_i log(K p_i W_jt / (1 - p_i) + 1) 1(A_ij = c), by explicit loops."""
    m, T = W.shape
    S = np.zeros((T, m, K))
    for i, j, c in zip(R.workers, R.tasks, R.labels):
        for t in range(T):
            S[t, j, c - 1] += np.log(K * p[i] * W[j, t] / (1 - p[i]) + 1)
    return S


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("T", [2, 3])
def test_plugin_mle_equals_brute_force(seed, T):
    rng = np.random.default_rng(seed)
    n, m, K = 6, 10, int(rng.integers(T + 1, 6))
    model = TopTwoModel.random(n, m, K, n_top=T, rng=rng)
    R = model.sample(0.7, rng=rng)
    p = rng.uniform(0, 0.95, n)
    W = (np.column_stack([model.confusion, 1 - model.confusion]) if T == 2
         else model.weights)
    top = plugin_mle(R, p, model.confusion if T == 2 else W)
    S = eq6_scores(R, p, W, K)
    answered = R.task_counts() > 0
    for j in range(m):
        if not answered[j]:
            assert (top[j] == 0).all()
            continue
        best = max(sum(S[t, j, c] for t, c in enumerate(tup))
                   for tup in itertools.permutations(range(K), T))
        achieved = sum(S[t, j, top[j, t] - 1] for t in range(T))
        assert len(set(top[j])) == T
        assert achieved == pytest.approx(best, rel=1e-12, abs=1e-12)


def test_plugin_mle_nan_reliability_counts_as_zero():
    R = toptwo.as_responses(np.array([[1, 1], [2, 2], [2, 2]]), n_labels=3)
    # worker 0 (p = 0.9) outweighs workers 1, 2 unless its p is NaN (-> weight 0)
    top = plugin_mle(R, np.array([0.9, 0.2, 0.2]), np.array([0.8, 0.8]))
    np.testing.assert_array_equal(top[:, 0], [1, 1])
    top = plugin_mle(R, np.array([np.nan, 0.2, 0.2]), np.array([0.8, 0.8]))
    np.testing.assert_array_equal(top[:, 0], [2, 2])


# ------------------------------------------------------------- OracleMLE
def test_oracle_toy(toy):
    A, K, expected, _ = toy
    est = toptwo.OracleMLE(np.full(5, 0.5), np.full(4, 0.7)).fit(A)
    np.testing.assert_array_equal(est.top_two_, expected)
    np.testing.assert_array_equal(est.fit_predict(A), expected[:, 0])
    # a single hammer overrides the majority: worker 4 (p = 1) answered 2 on task 0
    hammer = np.array([0.1, 0.1, 0.1, 0.1, 1.0])
    np.testing.assert_array_equal(toptwo.OracleMLE(hammer, np.full(4, 0.7)).fit(A)
                                  .top_two_[0], [2, 1])


def test_oracle_validation(toy):
    A = toy[0]
    with pytest.raises(ValueError, match=r"`reliability` of OracleMLE must have length 5; got "
                                         r"length 3"):
        toptwo.OracleMLE([0.5] * 3, [0.7] * 4).fit(A)
    with pytest.raises(ValueError, match=r"`confusion` of OracleMLE must lie in \[0.5, 1.0\]; "
                                         r"found 0.4 at index 1"):
        toptwo.OracleMLE([0.5] * 5, [0.7, 0.4, 0.7, 0.7]).fit(A)
    with pytest.raises(ValueError, match=r"`confusion` of OracleMLE must have n_tasks=4 rows; "
                                         r"got shape \(3, 2\)"):
        toptwo.OracleMLE([0.5] * 5, np.full((3, 2), 0.5)).fit(A)


def test_oracle_unanswered_task_and_silent_worker(small_model, small_responses):
    R = with_gaps(small_responses, empty_worker=3, empty_task=7)
    est = toptwo.OracleMLE(small_model.reliability, small_model.confusion).fit(R)
    np.testing.assert_array_equal(est.top_two_[7], [0, 0])
    assert (np.delete(est.top_two_, 7, axis=0) > 0).all()


# --------------------------------------------------------------- TopTwo2
def test_toptwo2_attributes(small_model, small_responses):
    est = toptwo.TopTwo2(rng=0).fit(small_responses)
    m, n, K = small_model.n_tasks, small_model.n_workers, small_model.n_labels
    assert est.top_two_.shape == (m, 2) and est.reliability_.shape == (n,)
    assert isinstance(est.stage1_, toptwo.spectral.SpectralResult)
    assert ((est.confusion_ >= 0.5) & (est.confusion_ <= 1)).all()
    np.testing.assert_array_equal(est.confusion_, np.clip(est.confusion_raw_, 0.5, 1))
    assert est.norm_p_ == est.stage1_.norm_p
    np.testing.assert_allclose(est.soft_labels().sum(axis=1), 1.0)
    assert (est.top_two_[:, 0] != est.top_two_[:, 1]).all()
    assert (est.n_workers_in_, est.n_tasks_in_, est.n_labels_in_) == (n, m, K)
    # without splitting p_hat is eq. (5) left one out on all of A at the stage-1 estimate
    np.testing.assert_array_equal(
        est.reliability_, estimate_reliability_loo(small_responses, est.stage1_,
                                                   n_responses=small_responses.worker_counts()))
    # and with reliability_estimator="moment", eq. (5) itself
    moment = toptwo.TopTwo2(rng=0, reliability_estimator="moment").fit(small_responses)
    ref = estimate_reliability(small_responses, est.stage1_.top, normalization="per_worker")
    np.testing.assert_allclose(moment.reliability_, ref)


@pytest.mark.parametrize("split", [False, True])
def test_toptwo2_unanswered_task_and_silent_worker(small_responses, split):
    R = with_gaps(small_responses, empty_worker=3, empty_task=7)
    est = toptwo.TopTwo2(sample_splitting=split, rng=4).fit(R)
    np.testing.assert_array_equal(est.top_two_[7], [0, 0])
    assert np.isnan(est.confusion_[7])
    assert np.isnan(est.reliability_[3])
    assert np.isfinite(np.delete(est.reliability_, 3)).all()
    assert (np.delete(est.top_two_, 7, axis=0) > 0).all()
    # q_hat comes from stage 1: finite exactly where stage 1 had data for v^(k)
    seen = est.stage1_.top[:, 0] > 0
    assert np.isfinite(est.confusion_raw_[seen]).all()
    assert np.isnan(est.confusion_raw_[~seen]).all()
    # issue 27: an answered task is never NaN: the q eq. (6) used where eq. (4) is undefined
    answered = np.arange(R.n_tasks) != 7
    assert np.isfinite(est.confusion_[answered]).all()
    np.testing.assert_array_equal(est.confusion_[answered & ~seen],
                                  est._q_mle[answered & ~seen])
    if not split:
        assert seen.sum() == R.n_tasks - 1


def test_toptwo2_sample_splitting_seeded(small_responses):
    a = toptwo.TopTwo2(sample_splitting=True, rng=5).fit(small_responses)
    b = toptwo.TopTwo2(sample_splitting=True, rng=5).fit(small_responses)
    np.testing.assert_array_equal(a.top_two_, b.top_two_)
    np.testing.assert_array_equal(a.reliability_, b.reliability_)


def test_toptwo2_split_too_small():
    A = np.zeros((3, 3), int)
    A[0, 0], A[1, 1], A[2, 2] = 1, 3, 2
    with pytest.raises(ValueError, match=r"TopTwo2: sample splitting left a part empty \(3 "
                                         r"responses\)"):
        toptwo.TopTwo2(sample_splitting=True, rng=1).fit(A)


def test_padded_binary_data_are_refused():
    # binary answers padded to K = 3: label 3 never occurs, every answer would be a hit
    # in eq. (5) and every p_hat near 1
    model = TopTwoModel.random(20, 50, 3, rng=0)
    R = model.sample(0.5, rng=1)
    R2 = toptwo.Responses(R.workers, R.tasks, np.minimum(R.labels, 2), shape=R.shape,
                          n_labels=3)
    for cls in (toptwo.TopTwo1, toptwo.TopTwo2):
        with pytest.raises(ValueError, match=r"label\(s\) 3 never occur.*every answer counts "
                                             r"as a hit in eq. \(5\).*toptwo.baselines.MajorityVote"):
            cls().fit(R2)
    toptwo.TopTwo2().fit(R)                  # all three labels used: accepted


def test_toptwo2_top_t():
    R = TopTwoModel.random(30, 60, 6, n_top=3, rng=1).sample(0.6, rng=2)
    est = toptwo.TopTwo2(n_top=3, rng=0).fit(R)
    assert est.top_.shape == (60, 3)
    assert (np.sort(est.top_, axis=1)[:, 1:] != np.sort(est.top_, axis=1)[:, :-1]).all()


# --------------------------------------------- recovery at fixed seeds
@pytest.mark.slow
def test_recovery_inside_corollary2_regime():
    """n = 200 workers with p_i in [0.5, 1] (||p||^2 >= 50), q_j in (0.7, 0.8] (g and h
    separated, h identifiable), s = 1: the condition s = Omega(log(m/eps)/(delta^2 ||p||^2)
    + log(m/eps)/(n D-bar)) of Corollary 2 [`eqn:cor2_suff`] holds with room to spare;
    TopTwo2 recovers every pair, as does the oracle MLE."""
    for seed in (0, 1):
        model = TopTwoModel.random(200, 300, 5, reliability_range=(0.5, 1.0),
                                   confusion_range=(0.7, 0.8), rng=seed)
        A = model.sample(1.0, rng=100 + seed)
        est = toptwo.TopTwo2(rng=seed).fit(A)
        err = top_two_errors(est.top_two_, model.top_two)
        assert err["g"] == 0.0 and err["pair"] == 0.0
        oracle = toptwo.OracleMLE(model.reliability, model.confusion).fit(A)
        assert top_two_errors(oracle.top_two_, model.top_two)["pair"] == 0.0


def test_recovery_easy_scenario():
    """Easy scenario (q in (0.9, 1]), n = 50, m = 500, s = 1: every g is recovered; h is
    nearly unidentifiable when q -> 1, so the pair error is bounded by the oracle's pair
    error plus 3 binomial sd of an error rate over m tasks."""
    m = 500
    for seed in (0, 1):
        model = TopTwoModel.scenario("easy", 50, m, 5, rng=seed)
        A = model.sample(1.0, rng=200 + seed)
        err = top_two_errors(toptwo.TopTwo2(rng=seed).fit(A).top_two_, model.top_two)
        oracle = top_two_errors(toptwo.OracleMLE(model.reliability, model.confusion)
                                .fit(A).top_two_, model.top_two)["pair"]
        assert err["g"] == 0.0
        assert err["pair"] <= oracle + 3 * np.sqrt(oracle * (1 - oracle) / m)


def no_worse(err_a, err_b) -> bool:
    """Mean pair error of method a over replicates is at most that of method b."""
    return float(np.mean(err_a)) <= float(np.mean(err_b))


def test_toptwo2_no_worse_than_majority_vote_few_smart():
    t2, mv, rand = [], [], []
    for seed in range(3):
        model = TopTwoModel.scenario("few_smart", 50, 500, 5, rng=seed)
        A = model.sample(0.3, rng=300 + seed)
        t2.append(top_two_errors(toptwo.TopTwo2(rng=seed).fit(A).top_two_,
                                 model.top_two)["pair"])
        mv.append(top_two_errors(toptwo.baselines.MajorityVote(rng=seed).fit(A).top_two_,
                                 model.top_two)["pair"])
        guess = np.argsort(np.random.default_rng(seed).random((500, 5)), axis=1)[:, :2] + 1
        rand.append(top_two_errors(guess, model.top_two)["pair"])
    assert no_worse(t2, mv)
    # negative twin: the same comparison rejects random guessing against majority vote
    assert not no_worse(rand, mv)


def test_estimate_reliability_refuses_unknown_normalization():
    R = toptwo.as_responses(np.array([[1, 2], [2, 2]]), n_labels=3)
    with pytest.raises(ValueError, match=r"'normalization' parameter .* must be one of "
                                         r"'paper', 'per_worker'"):
        estimate_reliability(R, np.array([[1, 2], [2, 1]]), normalization="bogus")


def test_oracle_unanswered_task_confusion_nan(small_model, small_responses):
    R = with_gaps(small_responses, empty_worker=3, empty_task=7)
    est = toptwo.OracleMLE(small_model.reliability, small_model.confusion).fit(R)
    assert np.isnan(est.confusion_[7])


def test_task_major_sums_are_bit_identical_to_worker_major():
    """plugin_mle sums weights in task-major order; the result must equal the
    worker-major sums exactly (same numbers added in the same order per bin)."""
    model = TopTwoModel.scenario("hard", 60, 300, 5, rng=11)
    R = model.sample(0.3, rng=12)
    w = np.random.default_rng(13).random(R.nnz) * 1e3      # worker-major order
    indptr, workers_tm, labels_tm = R.task_major()
    # the same weights, permuted into task-major order via (worker, task) keys
    key_wm = R.workers.astype(np.int64) * R.n_tasks + R.tasks
    tasks_tm = np.repeat(np.arange(R.n_tasks), np.diff(indptr))
    key_tm = workers_tm.astype(np.int64) * R.n_tasks + tasks_tm
    w_tm = w[np.searchsorted(key_wm, key_tm)]
    np.testing.assert_array_equal(R.task_label_counts_task_major(w_tm),
                                  R.task_label_counts(w))
    # negative twin: a different within-task order is not guaranteed to be identical
    assert not np.array_equal(R.task_label_counts_task_major(w_tm[::-1]),
                              R.task_label_counts(w))


def test_eta_above_one_is_refused():
    A = np.array([[1, 2, 3], [1, 2, 3]])
    for cls in (toptwo.TopTwo1, toptwo.TopTwo2):
        with pytest.raises(ValueError, match=r"'eta' parameter of TopTwo[12] must be a float in "
                                             r"\(0, 1\]; got 1.5 instead.*eta <= 1"):
            cls(eta=1.5).fit(A)
        cls(eta=1.0).fit(A)                      # the boundary is allowed


def test_soft_labels_with_splitting_have_nan_rows_only_for_unanswered_tasks():
    model = toptwo.TopTwoModel.scenario("hard", n_workers=50, n_tasks=300, n_labels=5, rng=0)
    A = model.sample(0.1, rng=1)
    est = toptwo.TopTwo2(sample_splitting=True, rng=0).fit(A)
    S = est.soft_labels()
    answered = A.task_counts() > 0
    assert np.isnan(est.confusion_raw_[answered]).any()  # stage 1 missed some tasks
    assert np.isfinite(est.confusion_[answered]).all()   # never NaN when answered
    assert np.isfinite(S[answered]).all() and np.isnan(S[~answered]).all()
    np.testing.assert_allclose(S[answered].sum(axis=1), 1.0)


def test_oracle_top_t_weights_must_sum_to_one():
    model = toptwo.TopTwoModel.random(5, 4, 5, rng=0)
    A = model.sample(1.0, rng=0)
    W = np.tile([0.5, 0.3, 0.1], (4, 1))
    with pytest.raises(ValueError, match=r"rows summing to 1.*row 0 sums to 0.9"):
        toptwo.OracleMLE(model.reliability, W).fit(A)
    W[:, 2] = 0.2
    toptwo.OracleMLE(model.reliability, W).fit(A)


A_SMALL = np.array([[1, 2, 3], [1, 2, 2]])


@pytest.mark.parametrize("bad, exc", [("a", TypeError), (None, TypeError),
                                      (-1.0, ValueError), (float("nan"), ValueError)])
def test_refinement_shrinkage_message(bad, exc):
    with pytest.raises(exc, match=r"'refinement_shrinkage' parameter of TopTwo2"):
        toptwo.TopTwo2(refinement_shrinkage=bad).fit(np.array([[1, 2, 3], [1, 2, 2]]))


def test_oracle_refuses_scalar_confusion():
    with pytest.raises(ValueError, match=r"`confusion` of OracleMLE.*shape \(3,\) or "
                                         r"\(3, T\).*got shape \(\)"):
        toptwo.OracleMLE([0.5, 0.5], 0.7).fit(A_SMALL)


def test_oracle_refuses_one_column_confusion():
    # used to return a (3, 1) "top_two_"
    with pytest.raises(ValueError, match=r"2 <= T < K=3.*got shape \(3, 1\)"):
        toptwo.OracleMLE([0.5, 0.5], np.ones((3, 1))).fit(A_SMALL)


def test_oracle_refuses_out_of_range_weights():
    with pytest.raises(ValueError, match=r"`confusion` of OracleMLE.*\[0, 1\].*1.5"):
        toptwo.OracleMLE([0.5, 0.5], np.array([[1.5, -0.5]] * 3)).fit(A_SMALL)


def test_plugin_mle_validates_reliability_length():
    R = toptwo.as_responses(A_SMALL)
    with pytest.raises(ValueError, match=r"`reliability` of plugin_mle must have length 2"):
        toptwo.plugin_mle(R, np.array([0.5, 0.5, 0.5]), np.full(3, 0.7))
    with pytest.raises(ValueError, match=r"`reliability` of plugin_mle.*\[0, 1\).*1.0"):
        toptwo.plugin_mle(R, np.array([1.0, 0.5]), np.full(3, 0.7))


def test_plugin_mle_accepts_dense_input_like_every_entry_point():
    R = toptwo.as_responses(A_SMALL)
    p, q = np.array([0.5, 0.4]), np.full(3, 0.7)
    assert np.array_equal(toptwo.plugin_mle(A_SMALL, p, q), toptwo.plugin_mle(R, p, q))
    # NaN reliabilities stay allowed (documented: weight 0)
    toptwo.plugin_mle(R, np.array([np.nan, 0.4]), q)


def test_estimate_reliability_validates_top_shape():
    R = toptwo.as_responses(A_SMALL)
    with pytest.raises(ValueError, match=r"`top` of estimate_reliability must have shape "
                                         r"\(n_tasks, T\) = \(3, T\).*got shape \(1, 2\)"):
        toptwo.estimate_reliability(R, np.array([[1, 2]]))


def test_top_t_confusion_clipped_to_the_models_range():
    model = toptwo.TopTwoModel.random(60, 300, 5, n_top=3, rng=5)
    A = model.sample(0.3, rng=6)
    for est in (toptwo.TopTwo1(n_top=3).fit(A), toptwo.TopTwo2(n_top=3).fit(A)):
        q = est.confusion_[np.isfinite(est.confusion_)]
        assert q.min() >= 1 / 3 and q.max() <= 1
        # the first weight of a top-3 task can be below 1/2: not clipped up to 1/2
        assert (q < 0.5).any()


@pytest.mark.parametrize("K", [4, 10, 20, 70])
def test_reliability_hits_match_a_direct_count_for_every_label_width(K):
    # the hit test packs each task's top labels into one bitmask (8 to 64 bits by K, a
    # plain comparison beyond): every width must count the same hits as a direct scan
    R = toptwo.TopTwoModel.random(20, 50, K, rng=K).sample(0.5, rng=1)
    gen = np.random.default_rng(K)
    top = np.array([gen.choice(K, 2, replace=False) + 1 for _ in range(50)])
    top[gen.random(50) < 0.2] = 0                       # tasks without an estimate
    p = toptwo.estimate_reliability(R, top, normalization="paper")
    hits = np.array([sum(1 for w, t, lab in zip(R.workers, R.tasks, R.labels)
                         if w == i and lab in top[t]) for i in range(20)])
    np.testing.assert_allclose(p, K / (K - 2) * (hits / (R.nnz / 20) - 2 / K), rtol=1e-12)


def test_best_pairs_label_major_layout_matches_the_row_form():
    from toptwo.mle import _best_pairs_columns
    rng = np.random.default_rng(3)
    Sa = rng.integers(0, 3, size=(500, 6)).astype(float)
    Sb = rng.integers(0, 3, size=(500, 6)).astype(float)
    tol = rng.choice([0.0, 0.5], size=500)
    got = _best_pairs_columns(np.ascontiguousarray(Sa.T), np.ascontiguousarray(Sb.T), tol)
    for j in range(500):
        M = max(Sa[j, x] + Sb[j, y] for x in range(6) for y in range(6) if x != y)
        a, b = next((x, y) for x in range(6) for y in range(6)
                    if x != y and Sa[j, x] + Sb[j, y] >= M - tol[j])
        assert (got[0][j], got[1][j]) == (a, b)


@pytest.mark.parametrize("row, shown", [([2, 2], "[2, 2]"), ([3, 0], "[3, 0]"),
                                        ([0, 1], "[0, 1]")])
def test_a_pair_of_equal_labels_is_refused(row, shown):
    # eq. (5) counts a hit for an answer in {g_j, h_j}, an ordered pair with g != h: a row
    # (2, 2) would count a one-label "pair" (and so would a half-empty row); all 0 is a
    # task without an estimate
    R = toptwo.TopTwoModel.random(6, 4, 4, rng=0).sample(1.0, rng=1)
    top = np.array([[1, 2], [0, 0], row, [4, 3]])
    with pytest.raises(ValueError, match=r"`top` of estimate_reliability must hold 2 distinct "
                                         r"labels per task \(or all 0 for no estimate\); task 2 "
                                         r"has " + re.escape(shown) + r"\."):
        toptwo.estimate_reliability(R, top)
    top[2] = [1, 3]
    assert np.isfinite(toptwo.estimate_reliability(R, top)).all()


def test_eq5_and_eq6_are_symmetric_in_the_labels():
    # given stage 1's pairs, steps 3 and 4 of Algorithm 2 treat the labels alike: a
    # renumbering sigma of the choices gives the same p_hat and the relabelled pairs
    # (the numbering enters TopTwo2 only through Algorithm 1: docs/reproducibility.md)
    model = toptwo.TopTwoModel.random(30, 120, 5, rng=3)
    R = model.sample(0.4, rng=4)
    gen = np.random.default_rng(5)
    p = gen.uniform(0.1, 0.9, R.n_workers)
    q = gen.uniform(0.55, 0.95, R.n_tasks)
    top = toptwo.plugin_mle(R, p, q)
    p5 = toptwo.estimate_reliability(R, model.top_two, normalization="per_worker")
    for _ in range(3):
        sigma = gen.permutation(5) + 1                       # label c -> sigma[c - 1]
        Rs = toptwo.Responses.from_triples(R.workers, R.tasks, sigma[R.labels - 1],
                                           n_workers=R.n_workers, n_tasks=R.n_tasks,
                                           n_labels=5)
        relabel = np.concatenate([[0], sigma])
        np.testing.assert_array_equal(
            toptwo.estimate_reliability(Rs, relabel[model.top_two], normalization="per_worker"),
            p5)
        # eq. (6): the same best pair wherever it is unique (continuous p, q: no exact
        # tie between answered labels; an unanswered second label is a tie)
        top_s = toptwo.plugin_mle(Rs, p, q)
        answered_pair = (R.task_label_counts() > 0).sum(axis=1) >= 2
        np.testing.assert_array_equal(top_s[answered_pair], relabel[top][answered_pair])
