"""Algorithm 1 (TopTwo1): noise-free exactness, the scaling of v^(k), the sign rule,
trimming, the two eigen-solver paths, splitting and the estimator contract."""

from __future__ import annotations

import numpy as np
import pytest

import toptwo
from toptwo import TopTwoModel, spectral_from_matrices
from toptwo import _batched, _chunks, _components, _linalg
from toptwo import spectral as spectral_mod
from toptwo.spectral import fix_sign, trim, top_from_projections

from conftest import with_gaps


def centred_expectations(model: TopTwoModel, s_prime: float) -> list[np.ndarray]:
    """X^(k) = E[B^(k)] - s'(K-2k)/K = 2 s' p (r^(k))^T, k = 1..K-1 (Proposition 1)."""
    K = model.n_labels
    return [model.expected_binary(k, s_prime) - s_prime * (K - 2 * k) / K
            for k in range(1, K)]


NOISE_FREE_MODELS = [
    ("random K=3", lambda: TopTwoModel.random(20, 40, 3, reliability_range=(0.1, 1), rng=1)),
    ("random K=5", lambda: TopTwoModel.random(30, 60, 5, reliability_range=(0.1, 1), rng=2)),
    ("hard K=6", lambda: TopTwoModel.scenario("hard", 25, 50, 6, rng=3)),
    ("easy K=4", lambda: TopTwoModel.scenario("easy", 25, 50, 4, rng=4)),
    ("few_smart K=5", lambda: TopTwoModel.scenario("few_smart", 40, 50, 5, rng=5)),
]


@pytest.mark.parametrize("name, make", NOISE_FREE_MODELS, ids=[n for n, _ in NOISE_FREE_MODELS])
@pytest.mark.parametrize("s_prime", [0.05, 0.5])
def test_noise_free_exactness(name, make, s_prime):
    model = make()
    X = centred_expectations(model, s_prime)
    for k, Xk in enumerate(X, start=1):       # Proposition 1 form
        np.testing.assert_allclose(Xk, 2 * s_prime * np.outer(model.reliability, model.r(k)),
                                   atol=1e-15)
    res = spectral_from_matrices(X, X, s_prime, eta=0.1)
    np.testing.assert_array_equal(res.top, model.top_two)               # g, h exactly
    np.testing.assert_allclose(res.confusion_raw[:, 0], model.confusion, rtol=1e-12)
    np.testing.assert_allclose(res.confusion_raw[:, 1], 1 - model.confusion, rtol=1e-11,
                               atol=1e-13)
    # scaling: v^(k) = Y^T u~ / (2 s') = ||p|| r^(k), so l = ||p||_2 (not 2 ||p||_2)
    assert res.norm_p == pytest.approx(model.norm_p, rel=1e-12)
    np.testing.assert_allclose(res.l_per_task, model.norm_p, rtol=1e-12)
    np.testing.assert_allclose(res.v, model.norm_p * np.column_stack(
        [model.r(k) for k in range(1, model.n_labels)]), atol=1e-12)
    np.testing.assert_allclose(res.delta_v, model.norm_p * model.delta_r(), atol=1e-12)
    # left singular vector = p / ||p||
    for u in res.left_vectors:
        np.testing.assert_allclose(u, model.reliability / model.norm_p, atol=1e-12)


def test_paper_scaling_gives_twice_norm_p():
    """Sec. 4.1's v = Y^T u~ / s' estimates 2 ||p|| r^(k): l would be 2 ||p||_2, q unchanged."""
    model = TopTwoModel.random(20, 30, 5, reliability_range=(0.2, 1), rng=8)
    s_prime = 0.3
    X = centred_expectations(model, s_prime)
    res = spectral_from_matrices(X, X, s_prime)
    v_paper = np.column_stack([Xk.T @ ut / s_prime for Xk, ut in zip(X, res.trimmed)])
    top, q_raw, _, _, l_paper = top_from_projections(v_paper)
    assert l_paper == pytest.approx(2 * model.norm_p, rel=1e-12)
    assert res.norm_p == pytest.approx(model.norm_p, rel=1e-12)
    np.testing.assert_array_equal(top, res.top)
    np.testing.assert_allclose(q_raw, res.confusion_raw, rtol=1e-12)


def test_noise_free_top_t():
    model = TopTwoModel.random(20, 40, 6, n_top=3, reliability_range=(0.1, 1), rng=9)
    X = centred_expectations(model, 0.4)
    res = spectral_from_matrices(X, X, 0.4, n_top=3)
    np.testing.assert_array_equal(res.top, model.top_two)
    np.testing.assert_allclose(res.confusion_raw, model.weights, rtol=1e-10, atol=1e-12)
    assert res.norm_p == pytest.approx(model.norm_p, rel=1e-12)


# ----------------------------------------------------------------- sign rule
def test_fix_sign_rule():
    u = np.array([0.5, -0.1, 0.3, 0.2])
    np.testing.assert_array_equal(fix_sign(u), u)            # 3 of 4 positive
    np.testing.assert_array_equal(fix_sign(-u), u)           # 1 of 4 positive -> flip
    # exactly half positive: both qualify; the one with a non-negative sum is kept
    w = np.array([0.9, -0.1, 0.2, -0.3])
    np.testing.assert_array_equal(fix_sign(w), w)
    np.testing.assert_array_equal(fix_sign(-w), w)
    # odd n: at least half means >= n/2
    z = np.array([-1.0, -2.0, 0.5])
    np.testing.assert_array_equal(fix_sign(z), -z)


@pytest.mark.parametrize("seed", range(5))
def test_fix_sign_is_invariant_to_solver_sign(seed):
    u = np.random.default_rng(seed).normal(size=11)
    np.testing.assert_array_equal(fix_sign(u), fix_sign(-u))
    assert 2 * (fix_sign(u) > 0).sum() >= u.size


def test_fix_sign_with_many_zero_entries():
    u = np.array([0.5, 0.5, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(fix_sign(u), fix_sign(-u))
    assert (fix_sign(u) >= 0).all()


def test_noise_free_spammer_majority():
    model = TopTwoModel.spammer_hammer(10, 30, 4, hammer_fraction=0.3, rng=0)
    X = centred_expectations(model, 0.5)
    res = spectral_from_matrices(X, X, 0.5)
    np.testing.assert_array_equal(res.top, model.top_two)
    assert res.norm_p == pytest.approx(model.norm_p, rel=1e-12)


def test_sign_of_x_does_not_change_result():
    model = TopTwoModel.random(15, 30, 5, reliability_range=(0.1, 1), rng=12)
    X = centred_expectations(model, 0.5)
    ref = spectral_from_matrices(X, X, 0.5)
    flipped = spectral_from_matrices([-Xk for Xk in X], X, 0.5)
    np.testing.assert_array_equal(flipped.top, ref.top)
    np.testing.assert_allclose(flipped.left_vectors, ref.left_vectors, atol=1e-12)
    np.testing.assert_allclose(flipped.confusion_raw, ref.confusion_raw, rtol=1e-12)


# ----------------------------------------------------------------- trimming
def test_trim_threshold():
    eta = 0.5                              # n = 16: threshold 2 / (0.5 * 4) = 1.0
    u = np.array([1.0, 1.0 + 1e-12, 0.3, -2.0] + [0.1] * 12)
    out = trim(u, eta)
    assert out[0] == 1.0                   # equal to the threshold: kept
    assert out[1] == 0.0                   # above: set to zero
    assert out[3] == -2.0                  # only large *positive* entries are trimmed
    np.testing.assert_array_equal(out[2:], u[2:])
    assert u[1] == 1.0 + 1e-12             # input untouched


def test_trimming_inside_algorithm1():
    n, eta = 100, 0.5                      # threshold 2 / (0.5 * 10) = 0.4
    p = np.full(n, 0.05)
    p[0] = 1.0                             # u_0 = 1 / sqrt(1 + 99 * 0.0025) ~ 0.9 > 0.4
    model = TopTwoModel(p, np.full(20, 0.8), TopTwoModel.random(1, 20, 4, rng=0).top_two, 4)
    X = centred_expectations(model, 0.5)
    res = spectral_from_matrices(X, X, 0.5, eta=eta)
    assert (res.left_vectors[:, 0] > 0.4).all()
    assert (res.trimmed[:, 0] == 0).all()
    np.testing.assert_array_equal(res.trimmed[:, 1:], res.left_vectors[:, 1:])
    untrimmed = spectral_from_matrices(X, X, 0.5, eta=0.1)   # threshold 2.0: nothing trimmed
    np.testing.assert_array_equal(untrimmed.trimmed, untrimmed.left_vectors)


# ------------------------------------------------------ eigen-solver paths
def test_gram_and_arpack_paths_agree(small_responses, monkeypatch, precise_iterative):
    R = small_responses
    for centering in ("paper", "observed"):
        _check_paths_agree(R, monkeypatch, centering)


@pytest.mark.parametrize("centering", ["paper", "observed"])
def test_iterative_path_at_statistical_precision(small_responses, monkeypatch, centering):
    """At the default stop (||r|| <= 1e-7 theta_1) u is within ITERATIVE_U_TOL of the
    dense path's (measured 3e-8) and the labels are the same."""
    R = small_responses
    monkeypatch.setattr(_linalg, "DENSE_GRAM_MAX_WORKERS", 400)
    dense = spectral_mod.spectral_estimate(R, R, eta=0.1, centering=centering)
    monkeypatch.setattr(_linalg, "DENSE_GRAM_MAX_WORKERS", 0)
    lz = spectral_mod.spectral_estimate(R, R, eta=0.1, centering=centering)
    err = np.abs(lz.left_vectors - dense.left_vectors).max()
    assert err <= _linalg.ITERATIVE_U_TOL, (err, _linalg.ITERATIVE_U_TOL)
    np.testing.assert_array_equal(lz.top, dense.top)
    # twin: the stop does matter; at a relative residual of 1e-2 u is far off
    monkeypatch.setattr(_linalg, "LANCZOS_TOL", 1e-2)
    loose = spectral_mod.spectral_estimate(R, R, eta=0.1, centering=centering)
    assert np.abs(loose.left_vectors - dense.left_vectors).max() > _linalg.ITERATIVE_U_TOL


def _check_paths_agree(R, monkeypatch, centering):
    monkeypatch.setattr(_linalg, "DENSE_GRAM_MAX_WORKERS", 400)
    dense = spectral_mod.spectral_estimate(R, R, eta=0.1, centering=centering)
    monkeypatch.setattr(_linalg, "DENSE_GRAM_MAX_WORKERS", 0)
    arpack = spectral_mod.spectral_estimate(R, R, eta=0.1, centering=centering)
    np.testing.assert_allclose(arpack.left_vectors, dense.left_vectors, atol=1e-8)
    np.testing.assert_allclose(arpack.singular_values, dense.singular_values, rtol=1e-8)
    np.testing.assert_array_equal(arpack.top, dense.top)
    assert arpack.norm_p == pytest.approx(dense.norm_p, rel=1e-8)


def test_singular_values_match_dense_svd(small_responses):
    R = small_responses
    res = spectral_mod.spectral_estimate(R, R, centering="paper")
    K, s = R.n_labels, R.observed_rate
    for k in range(1, K):
        X = toptwo.to_binary(R, k).toarray() - s * (K - 2 * k) / K
        U, S, _ = np.linalg.svd(X)
        assert res.singular_values[k - 1] == pytest.approx(S[0], rel=1e-10)
        np.testing.assert_allclose(res.left_vectors[k - 1], fix_sign(U[:, 0]), atol=1e-10)


def test_spectral_estimate_matches_dense_algorithm(small_responses):
    """The implicit rank-one centring equals Algorithm 1 on the dense centred matrices."""
    R = small_responses
    K, s = R.n_labels, R.observed_rate
    X = [toptwo.to_binary(R, k).toarray() - s * (K - 2 * k) / K for k in range(1, K)]
    dense = spectral_from_matrices(X, X, s)
    sparse = spectral_mod.spectral_estimate(R, R, centering="paper")
    np.testing.assert_allclose(sparse.v, dense.v, atol=1e-10)
    np.testing.assert_array_equal(sparse.top, dense.top)


# ------------------------------------------------------------ split_entries
def test_split_entries_partition(small_responses):
    R = small_responses
    B, C = toptwo.split_entries(R, 0.3, np.random.default_rng(0))
    assert B.nnz + C.nnz == R.nnz and B.shape == C.shape == R.shape
    both = np.zeros(R.shape, int)
    both[B.workers, B.tasks] += 1
    both[C.workers, C.tasks] += 1
    np.testing.assert_array_equal(both, (R.toarray() > 0).astype(int))
    np.testing.assert_array_equal(B.toarray() + C.toarray(), R.toarray())
    # Binomial(nnz, 0.3): within 6 sd
    assert abs(B.nnz - 0.3 * R.nnz) <= 6 * np.sqrt(R.nnz * 0.3 * 0.7)


# ------------------------------------------------------- estimator contract
def test_toptwo1_attributes(small_model, small_responses):
    est = toptwo.TopTwo1().fit(small_responses)
    m, K = small_model.n_tasks, small_model.n_labels
    assert est.top_two_.shape == (m, 2) and est.top_two_.dtype == np.int64
    assert est.confusion_.shape == (m,)
    assert ((est.confusion_ >= 0.5) & (est.confusion_ <= 1.0)).all()
    np.testing.assert_array_equal(est.confusion_, np.clip(est.confusion_raw_, 0.5, 1.0))
    assert est.norm_p_ == est.result_.norm_p > 0
    assert est.observed_rate_ == small_responses.observed_rate
    assert (est.n_workers_in_, est.n_tasks_in_, est.n_labels_in_) == (30, m, K)
    soft = est.soft_labels()
    assert soft.shape == (m, K)
    np.testing.assert_allclose(soft.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.fit_predict(small_responses), est.top_two_[:, 0])
    assert est.confusions_ is None


def test_toptwo1_unanswered_task_and_silent_worker(small_responses):
    R = with_gaps(small_responses, empty_worker=3, empty_task=7)
    for split in (False, True):
        est = toptwo.TopTwo1(sample_splitting=split, rng=1).fit(R)
        np.testing.assert_array_equal(est.top_two_[7], [0, 0])
        assert np.isnan(est.confusion_[7]) and np.isnan(est.confusion_raw_[7])
        assert np.isnan(est.soft_labels()[7]).all()
        others = np.delete(np.arange(R.n_tasks), 7)
        assert (est.top_two_[others] > 0).all()
        assert np.isfinite(est.confusion_[others]).all()
        assert np.isfinite(est.norm_p_)


def test_toptwo1_sample_splitting_seeded(small_responses):
    a = toptwo.TopTwo1(sample_splitting=True, rng=3).fit(small_responses)
    b = toptwo.TopTwo1(sample_splitting=True, rng=3).fit(small_responses)
    np.testing.assert_array_equal(a.top_two_, b.top_two_)
    np.testing.assert_array_equal(a.confusion_raw_, b.confusion_raw_)
    assert a.result_.s_prime_x + a.result_.s_prime_y == pytest.approx(
        small_responses.observed_rate)


def test_toptwo1_split_too_small():
    A = np.zeros((3, 3), int)
    A[0, 0], A[1, 1], A[2, 2] = 1, 3, 2
    with pytest.raises(ValueError, match=r"TopTwo1: the B/C split left one half empty \(3 "
                                         r"responses\); use sample_splitting=False"):
        toptwo.TopTwo1(sample_splitting=True, rng=4).fit(A, n_labels=3)


def test_toptwo1_top_t(small_responses):
    R = toptwo.TopTwoModel.random(30, 60, 6, n_top=3, rng=1).sample(0.6, rng=2)
    est = toptwo.TopTwo1(n_top=3).fit(R)
    assert est.top_.shape == (60, 3) and est.confusions_.shape == (60, 3)
    np.testing.assert_array_equal(est.top_two_, est.top_[:, :2])
    assert (np.sort(est.top_, axis=1)[:, 1:] != np.sort(est.top_, axis=1)[:, :-1]).all()


def test_sign_rule_sum_option():
    u = np.array([0.9, 0.1, -0.05, -0.05, -0.02])     # majority negative, sum positive
    np.testing.assert_array_equal(fix_sign(u, "sum"), u)
    np.testing.assert_array_equal(fix_sign(u, "paper"), -u)
    np.testing.assert_array_equal(fix_sign(-u, "sum"), u)
    with pytest.raises(ValueError, match=r"'sign_rule' parameter of TopTwo1 must be one of "
                                         r"'auto', 'paper', 'sum'; got 'max'"):
        toptwo.TopTwo1(sign_rule="max").fit(np.array([[1, 2, 3], [1, 2, 3]]))
    with pytest.raises(ValueError, match=r"'sign_rule' parameter of TopTwo2"):
        toptwo.TopTwo2(sign_rule=None).fit(np.array([[1, 2, 3], [1, 2, 3]]))


def _dense_observed_centering(R, eta=0.1, n_top=2):
    """Dense reference for ``centering="observed"``: Algorithm 1 with the shift (K-2k)/K
    subtracted on observed entries only, built from the dense n x m label array.

    M^(k) = 1{A > k} - 1{0 < A <= k} - (K - 2k)/K on observed entries, 0 elsewhere;
    u = leading eigenvector of the dense Gram M M^T (np.linalg.eigh), sign rule and
    trimming of Algorithm 1, v^(k) = M^T u~ / (2 s_hat); steps 4-6 as in the core
    (``top_from_projections``). Independent of the sparse/Lanczos code paths.
    """
    A = R.toarray()
    n, m = A.shape
    K = R.n_labels
    observed = A > 0
    s_hat = observed.sum() / (n * m)
    v = np.empty((m, K - 1))
    for k in range(1, K):
        M = np.where(observed, np.where(A > k, 1.0, -1.0) - (K - 2 * k) / K, 0.0)
        _, V = np.linalg.eigh(M @ M.T)
        ut = trim(fix_sign(V[:, -1]), float(eta))
        v[:, k - 1] = (M.T @ ut) / (2.0 * s_hat)
    answered = observed.any(axis=0)
    top, q_raw, _, _, _ = top_from_projections(v, n_top, active=answered)
    top[~answered] = 0
    q_raw = np.where(answered[:, None], q_raw, np.nan)
    return top.astype(np.int64), q_raw


def test_observed_centering_matches_dense_reference(precise_iterative):
    """centering='observed' (sparse core) equals the dense reference computation, on
    both eigen-solver paths (the iterative one at machine precision)."""
    model = TopTwoModel.scenario("hard", 60, 200, 5, rng=21)
    R = model.sample(0.3, rng=22)
    ref_top, ref_q = _dense_observed_centering(R)
    # the reference is Algorithm 1's per-k vectors (the pooled one: tests/test_stage1.py)
    est = toptwo.TopTwo1(centering="observed", left_vector="per_k").fit(R)
    np.testing.assert_array_equal(est.top_two_, ref_top)
    np.testing.assert_allclose(est.confusion_raw_, ref_q[:, 0], rtol=1e-8)
    old = _linalg.DENSE_GRAM_MAX_WORKERS
    try:
        _linalg.DENSE_GRAM_MAX_WORKERS = 0
        joint = toptwo.TopTwo1(centering="observed", left_vector="per_k").fit(R)
    finally:
        _linalg.DENSE_GRAM_MAX_WORKERS = old
    np.testing.assert_array_equal(joint.top_two_, ref_top)
    np.testing.assert_allclose(joint.confusion_raw_, ref_q[:, 0], rtol=1e-7)
    # negative twin: the paper's centring is a different estimator on the same data
    paper = toptwo.TopTwo1(centering="paper").fit(R)
    assert not np.allclose(paper.confusion_raw_, ref_q[:, 0])
    with pytest.raises(ValueError, match=r"'centering' parameter of TopTwo1 must be one of "
                                         r"'observed', 'paper'"):
        toptwo.TopTwo1(centering="none").fit(R)


def test_split_leaves_tasks_without_projection_data_unresolved():
    """With the B/C split, a task answered only in B has no data in v^(k): it gets no
    estimate (0 / NaN) instead of the tie rule's (1, 2)."""
    model = TopTwoModel.scenario("hard", 50, 300, 5, rng=31)
    R = model.sample(0.04, rng=32)               # ~2 answers per task: many B-only tasks
    gen = np.random.default_rng(33)
    B, C = toptwo.split_entries(R, 0.5, gen)
    res = spectral_mod.spectral_estimate(B, C)
    no_c = C.task_counts() == 0
    assert no_c.any()
    assert (res.top[no_c] == 0).all() and np.isnan(res.confusion_raw[no_c]).all()
    assert (res.top[~no_c] > 0).all()
    # negative twin: the old rule (any response in B or C) would have resolved them
    assert ((B.task_counts() + C.task_counts())[no_c] > 0).any()


def test_fix_sign_unidentified_sign_gives_zero():
    # u and -u equally supported (equal counts, zero sum): no sign can be chosen without
    # looking at the order of the workers, so the direction is dropped.
    u = np.array([0.6, -0.6, 0.0, 1e-12])
    np.testing.assert_array_equal(fix_sign(u), np.zeros(4))
    np.testing.assert_array_equal(fix_sign(u, "sum"), np.zeros(4))
    # entries within U_ABS_TOL of 0 do not vote: here the count decides
    v = np.array([0.5, 0.5, -0.7, -1e-12, -1e-12])
    np.testing.assert_array_equal(fix_sign(v), v)


@pytest.mark.parametrize("centering", ["observed", "paper"])
def test_idle_workers_at_statistical_precision(monkeypatch, centering):
    # the instance below at the default Lanczos stop: no sign flip (u within
    # ITERATIVE_U_TOL of the dense path's), the same labels
    model = toptwo.TopTwoModel.random(450, 200, 4, rng=0)
    A = model.sample(0.1, rng=100)
    A = A.subset(A.workers < 200)
    lanczos, dense = _fit_both_paths(monkeypatch, A, centering=centering)
    err = np.abs(lanczos.result_.left_vectors - dense.result_.left_vectors).max()
    assert err <= _linalg.ITERATIVE_U_TOL, err
    np.testing.assert_array_equal(lanczos.top_, dense.top_)


def _fit_both_paths(monkeypatch, A, **kw):
    """TopTwo1 on the joint-Lanczos path (n > 400) and on the dense-Gram path."""
    out = []
    for limit in (400, 10**6):
        monkeypatch.setattr(_linalg, "DENSE_GRAM_MAX_WORKERS", limit)
        out.append(toptwo.TopTwo1(**kw).fit(A))
    return out


@pytest.mark.parametrize("centering", ["observed", "paper"])
def test_paths_agree_when_many_workers_are_idle(monkeypatch, centering, precise_iterative):
    # 450 workers, 250 of them without a single response: their rows of X^(k) are zero
    # (observed centring), so the exact u^(k) is 0 there. Rounding noise of the Lanczos
    # path on those entries used to decide the paper's sign rule (count of positive
    # entries) and flip u^(k): g error 0.755 (n > 400 path) vs 0.155 (dense path).
    model = toptwo.TopTwoModel.random(450, 200, 4, rng=0)
    A = model.sample(0.1, rng=100)
    A = A.subset(A.workers < 200)
    lanczos, dense = _fit_both_paths(monkeypatch, A, centering=centering)
    assert np.array_equal(lanczos.top_, dense.top_)
    np.testing.assert_allclose(lanczos.confusion_raw_, dense.confusion_raw_, atol=1e-8)
    np.testing.assert_allclose(lanczos.result_.left_vectors, dense.result_.left_vectors,
                               atol=1e-8)
    # companion: the check above does detect a sign flip
    flipped = -dense.result_.left_vectors
    assert not np.allclose(lanczos.result_.left_vectors, flipped, atol=1e-8)


def test_idle_workers_get_exact_zero_in_u(monkeypatch):
    model = toptwo.TopTwoModel.random(450, 200, 4, rng=1)
    A = model.sample(0.1, rng=101)
    A = A.subset(A.workers < 200)
    for est in _fit_both_paths(monkeypatch, A):
        assert (est.result_.left_vectors[:, 200:] == 0).all()


# ----------------------------------------------------------- review findings
def test_eq4_gives_nan_where_the_components_l_is_not_positive():
    """Every l_j >= 0 in exact arithmetic (the T smallest Delta v of a row summing to 0
    have a sum <= 0), but with the tie tolerance eq. (3) may pick values that are not
    the smallest, and l_j can be 0 or negative: eq. (4) is then undefined."""
    eps = 1e-9
    # Delta v = [eps, eps, -eps, -eps] (all within the tolerance): (g, h) = (1, 2) by the
    # tie rule, l = 4/2 (-2 eps) < 0; Delta v = [eps, -eps, 0, 0]: l = 0
    v = np.array([[eps, 2 * eps, eps], [eps, 0.0, 0.0], [3.0, 2.0, 1.0]])
    top, q, _, l_j, _, l_task = top_from_projections(
        v, tie_tol=np.array([1e-6, 1e-6, 0.0]), groups=np.array([0, 1, 2]),
        return_l_task=True)
    assert l_task[0] < 0 and l_task[1] == 0 and l_task[2] > 0
    np.testing.assert_array_equal(top[:2], [[1, 2], [1, 2]])      # labels stay
    assert np.isnan(q[:2]).all() and np.isfinite(q[2]).all()
    # twin: the raw eq. (4) at these l is a finite-looking 0.5 and -inf
    with np.errstate(divide="ignore"):
        raw = 1 / 4 - np.array([eps, eps]) / l_task[:2]
    assert raw[0] == pytest.approx(0.5) and raw[1] == -np.inf
    # without groups (one l for all tasks) the same guard applies
    _, q1, *_ = top_from_projections(v[:2], tie_tol=1e-6)
    assert np.isnan(q1).all()


def test_confusion_at_is_nan_where_l_is_not_positive():
    v = np.array([[1e-9, 2e-9, 1e-9], [3.0, 2.0, 1.0]])
    top, q, dv, l_j, l, l_task = top_from_projections(
        v, tie_tol=np.array([1e-6, 0.0]), groups=np.array([0, 1]), return_l_task=True)
    res = spectral_mod.SpectralResult(top, q, dv, v, np.zeros((3, 1)), np.zeros((3, 1)),
                                      np.zeros(3), l_j, l, 1.0, 1.0, np.array([0, 1]),
                                      None, l_task)
    q_at = spectral_mod.confusion_at(res, top)
    assert np.isnan(q_at[0]).all() and np.isfinite(q_at[1]).all()


def _c_only_instance():
    """B and C of a split where workers 3, 4 (tasks 5, 6) and worker 5 (task 7) have
    responses in C only: components without any data for u^(k)."""
    K = 4
    wb = [0, 0, 1, 1, 2, 2, 0, 1]
    tb = [0, 1, 0, 2, 1, 3, 4, 4]
    lb = [1, 2, 1, 3, 2, 4, 3, 3]
    wc = [0, 1, 2, 2, 3, 4, 3, 4, 5, 5]
    tc = [0, 1, 2, 3, 5, 5, 6, 6, 7, 8]
    lc = [1, 2, 3, 4, 2, 2, 3, 1, 4, 3]
    shape = dict(n_workers=6, n_tasks=9, n_labels=K)
    B = toptwo.Responses.from_triples(wb, tb, lb, **shape)
    C = toptwo.Responses.from_triples(wc, tc, lc, **shape)
    return B, C


def test_components_with_responses_only_in_c_get_no_stage1_estimate():
    """Sample splitting can leave a component with C responses but none in B: X^(k) = 0
    there and u^(k) is not identified, so its tasks get no stage-1 estimate (documented
    in spectral_estimate), and the other components are unaffected."""
    B, C = _c_only_instance()
    res = spectral_mod.spectral_estimate(B, C)
    assert (res.top[5:] == 0).all() and np.isnan(res.confusion_raw[5:]).all()
    assert (res.components[5:] == -1).all()
    assert (res.top[:4] > 0).all() and (res.top[4] == 0).all()   # task 4: no answer in C
    # the component with data in B gets exactly the estimate of its data alone
    alone = spectral_mod.spectral_estimate(
        toptwo.Responses.from_triples(B.workers, B.tasks, B.labels, n_workers=3,
                                      n_tasks=5, n_labels=4),
        toptwo.Responses.from_triples(C.workers[:4], C.tasks[:4], C.labels[:4],
                                      n_workers=3, n_tasks=5, n_labels=4))
    np.testing.assert_array_equal(res.top[:5], alone.top)
    np.testing.assert_allclose(res.confusion_raw[:5], alone.confusion_raw, rtol=1e-12)


def test_split_tasks_of_c_only_components_toptwo1_unresolved_toptwo2_ranked():
    # the estimator-level behaviour: TopTwo1 leaves them unresolved (0, NaN); TopTwo2's
    # eq. (6) ranks every answered task, with the median q and a NaN confusion_raw_
    model = TopTwoModel.spammer_hammer(50, 300, 5, hammer_fraction=0.5, rng=0)
    R = model.sample(0.01, rng=100)
    B, C = toptwo.split_entries(R, 0.5, np.random.default_rng(1))
    n_comp, wcomp, _ = _components._components(B, C)
    nB = np.bincount(wcomp[B.workers], minlength=n_comp)
    nC = np.bincount(wcomp[C.workers], minlength=n_comp)
    c_only = np.flatnonzero((nB == 0) & (nC > 0))
    assert c_only.size                                          # the case occurs here
    tasks = np.unique(C.tasks[np.isin(wcomp[C.workers], c_only)])
    t1 = toptwo.TopTwo1(sample_splitting=True, rng=1).fit(R)
    assert (t1.top_two_[tasks] == 0).all() and np.isnan(t1.confusion_[tasks]).all()
    assert (t1.top_two_[C.task_counts() > 0] > 0).sum() > 0
    t2 = toptwo.TopTwo2(sample_splitting=True, rng=1).fit(R)
    assert (t2.top_two_[tasks] > 0).all() and np.isnan(t2.confusion_raw_[tasks]).all()
    # issue 27: never NaN for an answered task: the q eq. (6) used (the median q_hat)
    assert np.isfinite(t2.confusion_[tasks]).all()


def test_tolerant_smallest_refuses_nan():
    with pytest.raises(ValueError, match=r"`values` of tolerant_smallest must not be NaN "
                                         r".*found NaN at row 1, column 2"):
        spectral_mod.tolerant_smallest(np.array([[0.0, 1.0, 2.0], [0.0, 1.0, np.nan]]), 2, 0.0)
    with pytest.raises(ValueError, match=r"`tol` of tolerant_smallest must be finite and "
                                         r">= 0; found nan at row 0"):
        spectral_mod.tolerant_smallest(np.zeros((1, 3)), 2, np.nan)
    # an infinite tolerance with a -inf value would make -inf + inf = NaN the floor
    with pytest.raises(ValueError, match=r"must be finite and >= 0; found inf at row 0"):
        spectral_mod.tolerant_smallest(np.array([[-np.inf, 0.0, 1.0]]), 2, np.inf)
    with pytest.raises(ValueError, match=r"`n_pick` of tolerant_smallest must be in 0..3"):
        spectral_mod.tolerant_smallest(np.zeros((1, 3)), 4, 0.0)


def test_tolerant_smallest_orders_infinities_without_repeating_an_index():
    v = np.array([[np.inf, 1.0, np.inf, 0.0], [-np.inf, np.inf, -np.inf, 2.0]])
    out = spectral_mod.tolerant_smallest(v, 4, 0.0)
    np.testing.assert_array_equal(out, [[3, 1, 0, 2], [0, 2, 3, 1]])
    # every row is a permutation (the old loop picked index 0 twice in the first row)
    assert all(sorted(r) == [0, 1, 2, 3] for r in out.tolist())


@pytest.mark.parametrize("seed", range(3))
def test_tolerant_smallest_matches_a_row_by_row_scan(seed):
    rng = np.random.default_rng(seed)
    v = rng.integers(0, 4, size=(300, 5)).astype(float) + rng.normal(0, 1e-12, (300, 5))
    tol = rng.choice([0.0, 1e-9], size=300)
    out = spectral_mod.tolerant_smallest(v, 3, tol)
    for j in range(300):
        left, want = list(range(5)), []
        for _ in range(3):
            low = min(v[j, k] for k in left)
            k = min(k for k in left if v[j, k] <= low + tol[j])
            want.append(k)
            left.remove(k)
        assert out[j].tolist() == want


def _with_single_worker_components(n_single: int, seed: int = 0):
    """A connected crowd plus ``n_single`` workers who each answered tasks nobody else
    answered (one-worker components)."""
    model = TopTwoModel.scenario("hard", 30, 100, 5, rng=seed)
    R = model.sample(0.3, rng=seed + 1)
    rng = np.random.default_rng(seed + 2)
    w, t, lab = [R.workers], [R.tasks], [R.labels]
    m = R.n_tasks
    for i in range(n_single):
        d = int(rng.integers(1, 4))
        w.append(np.full(d, 30 + i))
        t.append(np.arange(m, m + d))
        lab.append(rng.integers(1, 6, size=d))
        m += d
    return toptwo.Responses.from_triples(np.concatenate(w), np.concatenate(t),
                                         np.concatenate(lab), n_workers=30 + n_single,
                                         n_tasks=m, n_labels=5)


def test_one_worker_components_are_handled_in_one_pass(monkeypatch):
    R = _with_single_worker_components(300)
    # the per-component loop for the connected crowd (30 workers would be batched,
    # tests/test_components_batched.py)
    monkeypatch.setattr(_batched, "BATCH_MAX_WORKERS", 0)
    calls = []
    original = spectral_mod._spectral_block
    monkeypatch.setattr(spectral_mod, "_spectral_block",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    res = spectral_mod.spectral_estimate(R, R)
    assert len(calls) == 1          # the connected crowd only; 300 before
    # each one-worker component gets exactly the estimate of its data alone
    n_comp, wcomp, tcomp = _components._components(R, R)
    for c in np.unique(tcomp[100:])[:25]:
        tasks = np.flatnonzero(tcomp == c)
        sel = np.isin(R.tasks, tasks)
        alone = toptwo.Responses.from_triples(
            np.zeros(sel.sum(), int), np.searchsorted(tasks, R.tasks[sel]), R.labels[sel],
            n_workers=1, n_tasks=tasks.size, n_labels=5)
        one = spectral_mod.spectral_estimate(alone, alone)
        np.testing.assert_array_equal(res.top[tasks], one.top)
        np.testing.assert_allclose(res.v[tasks], one.v, rtol=0, atol=0)
        np.testing.assert_allclose(res.confusion_raw[tasks], one.confusion_raw, rtol=1e-12)
        np.testing.assert_array_equal(res.v_error[tasks], one.v_error)


def test_single_worker_component_reports_sigma_when_it_is_the_largest():
    # only one-worker components: the one with most responses reports sigma_1 and s'
    R = toptwo.Responses.from_triples([0, 0, 1, 1, 1], [0, 1, 2, 3, 4], [1, 3, 2, 2, 4],
                                      n_labels=4)
    res = spectral_mod.spectral_estimate(R, R)
    K = 4
    lab = np.array([2, 2, 4])
    want = [np.sqrt(np.sum((np.where(lab > k, 1.0, -1.0) - (K - 2 * k) / K) ** 2))
            for k in range(1, K)]
    np.testing.assert_allclose(res.singular_values, want, rtol=1e-15)
    assert res.s_prime_x == 1.0 and res.s_prime_y == 1.0
    np.testing.assert_array_equal(res.top[:, 0], [1, 3, 2, 2, 4])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("s", [0.01, 0.03, 0.3])
def test_component_paths_agree(seed, s, monkeypatch):
    """The worker-pair table, min-label propagation and scipy's connected_components
    give the same numbering."""
    model = TopTwoModel.random(60, 200, 4, rng=seed)
    R = model.sample(s, rng=seed + 5)
    B, C = toptwo.split_entries(R, 0.5, np.random.default_rng(seed))
    for pair in ((R, R), (B, C)):
        table = _components._components(*pair)
        monkeypatch.setattr(_components, "_PAIR_TABLE_PER_RESPONSE", 0)
        monkeypatch.setattr(_components, "_PAIR_TABLE_MIN", 0)
        monkeypatch.setattr(_components, "_components_by_first_worker",
                            lambda *a: pytest.fail("table path used"))
        other = _components._components(*pair)
        monkeypatch.undo()
        assert table[0] == other[0]
        np.testing.assert_array_equal(table[1], other[1])
        np.testing.assert_array_equal(table[2], other[2])


@pytest.mark.parametrize("K", [3, 5, 7, 8, 10])
@pytest.mark.parametrize("n_top", [2, 3])
def test_chunked_steps_4_5_equal_the_reference_bit_for_bit(K, n_top, monkeypatch):
    """The chunked eq. (3) / step 5 path must give the reference path's bits, also across
    chunk boundaries and with exact ties and ties within the tolerance."""
    from toptwo import spectral

    if n_top >= K:
        pytest.skip("n_top < K")
    gen = np.random.default_rng(K * 10 + n_top)
    m = 53
    v = gen.normal(size=(m, K - 1))
    v[::5] = np.round(v[::5], 1)                      # exact ties in Delta v
    v[1::7, 0] = v[1::7, 1] + 1e-13                   # ties within the tolerance
    tol4 = np.full(m, 1e-10)
    ref = spectral._steps_4_5(v, n_top, tol4)
    monkeypatch.setattr(_chunks, "TASK_CHUNK", 7)    # many chunks, a partial last one
    got = _chunks._steps_4_5_chunked(v, n_top, tol4)
    assert got is not None
    for a, b in zip(ref, got):
        assert a.dtype.kind == b.dtype.kind and np.array_equal(a, b), (a, b)
    # negative twin: a NaN sends the chunked path back to the reference (which raises)
    bad = v.copy()
    bad[3, 0] = np.nan
    assert _chunks._steps_4_5_chunked(bad, n_top, tol4) is None


def test_fits_do_not_depend_on_the_chunk_sizes(monkeypatch):
    """The chunked passes (eq. (5), eq. (6), components, steps 4-5) give the bits of one
    whole pass: the same fits with tiny chunks (many chunk boundaries) are identical."""

    def fits():
        out = []
        for seed in range(3):
            model = toptwo.TopTwoModel.scenario("hard", 40, 300, 5, rng=seed)
            A = model.sample(0.1, rng=seed + 10)
            for est in (toptwo.TopTwo2(rng=0), toptwo.TopTwo2(n_top=3, rng=0),
                        toptwo.TopTwo1(rng=0)):
                est.fit(A)
                out.append((est.top_two_.tobytes(), est.confusion_.tobytes(),
                            getattr(est, "reliability_", np.zeros(1)).tobytes()))
        return out

    whole = fits()
    monkeypatch.setattr(_chunks, "CHUNK_RESPONSES", 37)
    monkeypatch.setattr(_chunks, "TASK_CHUNK", 11)
    assert fits() == whole
