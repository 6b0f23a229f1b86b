"""TopTwoEM: EM on the full likelihood of eq. (1) (beyond the paper)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import toptwo
from toptwo.extensions.em import _task_scores, em_posteriors


def _scenario(name, seed, s=0.2, n=50, m=500, K=5):
    model = toptwo.TopTwoModel.scenario(name, n_workers=n, n_tasks=m, n_labels=K, rng=seed)
    return model, model.sample(s, rng=10_000 + seed)


def _pair_error(est, model):
    return toptwo.top_two_errors(est.top_two_, model.top_two)["pair"]


def _log_posterior(R, p, q, em):
    """The objective of the module docstring, computed independently of fit's loop."""
    K = R.n_labels
    Sa, Sb, C, _, _ = _task_scores(R, p, q)
    _, _, logZ = em_posteriors(Sa, Sb)
    answered = R.task_counts() > 0
    mu = 2.0 * em.confusion_prior_mode_ - 1.0
    nu_q, nu_p = em.confusion_prior_strength, em.reliability_prior_strength
    t = 2.0 * q[answered] - 1.0
    pa = p[R.worker_counts() > 0]
    return ((C + logZ)[answered].sum() - answered.sum() * np.log(K * (K - 1))
            + nu_q * mu * np.log(t).sum() + nu_q * (1 - mu) * np.log1p(-t).sum()
            + nu_p / 2 * (np.log(pa).sum() + np.log1p(-pa).sum()))


# ------------------------------------------------------------------ exact cases
def test_noise_free_hammers_recover_every_pair():
    """All workers hammers (p = 1) and every task answered by all: g and h are the two
    answers given, g the more frequent one; EM recovers every pair and q close to the
    observed share (shrunk a little by the prior). (If the same workers always gave h,
    "those workers are spammers and q is near 1" would explain the data as well.)"""
    n, m, K = 30, 40, 5
    rng = np.random.default_rng(0)
    top = np.argsort(rng.random((m, K)), axis=1)[:, :2] + 1
    share = rng.integers(18, 26, size=m)           # workers answering g (of 30): q in 0.6-0.87
    A = np.zeros((n, m), dtype=int)
    for j in range(m):                             # which workers pick g: random per task
        who = rng.permutation(n)
        A[who[:share[j]], j] = top[j, 0]
        A[who[share[j]:], j] = top[j, 1]
    em = toptwo.TopTwoEM(confusion="map").fit(A, n_labels=K)
    np.testing.assert_array_equal(em.top_two_, top)
    assert np.all(em.pair_proba_ > 0.95)
    assert np.abs(em.confusion_ - share / n).max() < 0.05     # the prior: 4 pseudo-answers
    assert np.all(em.reliability_ > 0.9)


def test_agrees_with_oracle_when_data_are_plentiful():
    model, A = _scenario("easy", 0, s=1.0, n=60, m=200)
    em = toptwo.TopTwoEM(confusion="map").fit(A)
    oracle = toptwo.OracleMLE(model.reliability, model.confusion).fit(A)
    # q_j in (0.9, 1] leaves h weakly identified, so compare g and the error rates
    assert np.mean(em.top_two_[:, 0] == oracle.top_two_[:, 0]) > 0.99
    assert _pair_error(em, model) - _pair_error(oracle, model) < 0.05
    assert np.corrcoef(em.reliability_, model.reliability)[0, 1] > 0.95


# ------------------------------------------------------------------ EM properties
@pytest.mark.parametrize("name, seed, s", [("hard", 1, 0.1), ("few_smart", 2, 0.2),
                                           ("high_variance", 3, 0.05), ("easy", 4, 0.3)])
def test_log_posterior_is_monotone_and_recomputed(name, seed, s):
    model, A = _scenario(name, seed, s=s)
    em = toptwo.TopTwoEM(confusion="map").fit(A)
    ll = em.log_likelihood_
    assert ll.shape == (em.n_iter_ + 1,) and em.n_iter_ >= 1
    assert np.diff(ll).min() >= -1e-9 * np.abs(ll).max()
    assert ll[-1] > ll[0]
    # the recorded final value is the objective at the returned parameters
    got = _log_posterior(A, em.reliability_, em.confusion_, em)
    assert got == pytest.approx(ll[-1], rel=1e-10)


@pytest.mark.parametrize("name, seed, s", [("hard", 1, 0.1), ("few_smart", 2, 0.2)])
def test_grid_variant_monotone_and_consistent(name, seed, s):
    model, A = _scenario(name, seed, s=s)
    em = toptwo.TopTwoEM(confusion="grid", max_iter=40).fit(A)
    ll = em.log_likelihood_
    assert np.diff(ll).min() >= -1e-9 * np.abs(ll).max() and ll[-1] > ll[0]
    w = em.confusion_weights_
    assert w.shape == em.confusion_grid_.shape == (toptwo.extensions.em.GRID_NODES,)
    assert w.sum() == pytest.approx(1.0) and (w > 0).all()
    ok = np.isfinite(em.pair_proba_)
    assert np.all(em.pair_proba_[ok] <= em.g_proba_[ok] + 1e-12)
    assert np.all((em.confusion_[ok] > 0.5) & (em.confusion_[ok] < 1.0))
    assert np.isnan(em.confusion_prior_mode_)
    # the estimated distribution of q matches the scenario: hard has q in (0.5, 0.6]
    mean_q = float(w @ em.confusion_grid_)
    if name == "hard":
        assert mean_q < 0.65
    t2 = toptwo.TopTwo2().fit(A)
    assert _pair_error(em, model) <= _pair_error(t2, model) + 0.02


def test_fixed_point_is_a_stationary_point_of_the_log_posterior(monkeypatch):
    """At convergence the gradient of the observed log-posterior vanishes (checked by
    central differences); a perturbed point has a clearly non-zero gradient. (EM run
    far past its default stop: the gain rule EM_TOL per response set to 1e-14.)"""
    from toptwo.extensions import em as em_module

    monkeypatch.setattr(em_module, "EM_TOL", 1e-14)
    model, A = _scenario("hard", 5, s=0.3, n=20, m=60)
    em = toptwo.TopTwoEM(confusion="map", tol=1e-10, max_iter=2000).fit(A)
    assert em.converged_
    p, q = em.reliability_.copy(), em.confusion_.copy()

    def grad(p, q, idx_p, idx_q, h=1e-6):
        out = []
        for i in idx_p:
            e = np.zeros_like(p)
            e[i] = h
            out.append((_log_posterior(A, p + e, q, em) - _log_posterior(A, p - e, q, em)) / (2 * h))
        for j in idx_q:
            e = np.zeros_like(q)
            e[j] = h
            out.append((_log_posterior(A, p, q + e, em) - _log_posterior(A, p, q - e, em)) / (2 * h))
        return np.array(out)

    idx_p, idx_q = range(0, 20, 4), range(0, 60, 12)
    at_fit = np.abs(grad(p, q, idx_p, idx_q)).max()
    assert at_fit < 1e-2
    assert np.abs(grad(p * 0.9, q, idx_p, idx_q)).max() > 30 * at_fit


def test_max_iter_zero_is_the_initial_posterior():
    _, A = _scenario("hard", 6)
    em = toptwo.TopTwoEM(max_iter=0).fit(A)
    assert em.n_iter_ == 0 and not em.converged_ and em.log_likelihood_.shape == (1,)
    # the initial E-step ranks pairs by eq. (6) with TopTwo2's parameters (clipped alike)
    assert np.mean((em.top_two_ == em.init_.top_two_).all(axis=1)) > 0.95


# ------------------------------------------------------------------ accuracy
@pytest.mark.parametrize("name", ["hard", "few_smart"])
def test_beats_toptwo2_on_paired_seeds(name):
    """Paired over 8 seeds at (50, 500, 5), s = 0.2: EM's pair error is below TopTwo2's
    (one-sided paired t-test at 5%) and within 0.025 of the oracle MLE on average (the
    issue's target of 0.015 per cell is measured by benchmarks/em.py). The
    same test applied to TopTwo1 (stage 1 alone) against TopTwo2 does not pass."""
    em_e, t2_e, t1_e, or_e = [], [], [], []
    for seed in range(8):
        model, A = _scenario(name, seed)
        # the paper's Algorithm 2 (stage 1 with left_vector="per_k", eq. (5) as printed):
        # with the pooled default on "hard" EM's gain over 8 seeds is not significant
        # (p = 0.14, issue 25), nor with the leave-one-out p on "few_smart" (p = 0.12 when
        # it became the default)
        paper = dict(left_vector="per_k", reliability_estimator="moment")
        t2 = toptwo.TopTwo2(**paper).fit(A)
        em = toptwo.TopTwoEM(confusion="map", init=toptwo.TopTwo2(**paper)).fit(A)
        oracle = toptwo.OracleMLE(model.reliability, model.confusion).fit(A)
        em_e.append(_pair_error(em, model))
        t2_e.append(_pair_error(t2, model))
        t1_e.append(toptwo.top_two_errors(t2.stage1_.top, model.top_two)["pair"])
        or_e.append(_pair_error(oracle, model))
    em_e, t2_e, t1_e, or_e = map(np.array, (em_e, t2_e, t1_e, or_e))
    assert stats.ttest_rel(em_e, t2_e, alternative="less").pvalue < 0.05
    assert em_e.mean() - or_e.mean() < 0.025
    assert stats.ttest_rel(t1_e, t2_e, alternative="less").pvalue > 0.05   # wrong claim fails


def _calibration_z(confusion, **kw):
    correct, pp = [], []
    for seed, name in enumerate(["easy", "hard", "few_smart", "high_variance"] * 2):
        model, A = _scenario(name, 20 + seed, s=0.1)
        em = toptwo.TopTwoEM(confusion=confusion, **kw).fit(A)
        ok = A.task_counts() > 0
        correct.append((em.top_two_ == model.top_two).all(axis=1)[ok])
        pp.append(em.pair_proba_[ok])
    correct, pp = np.concatenate(correct).astype(float), np.concatenate(pp)

    def z(prob):
        return (correct - prob).sum() / np.sqrt((prob * (1 - prob)).sum())

    return z(pp), z(pp ** 2), (pp - correct).mean()


def test_pair_posterior_calibration_on_average():
    """Under calibration, sum_j (1(pair correct) - pp_j) has mean 0 and variance at most
    sum_j pp_j (1 - pp_j). The plug-in posterior of confusion="map" (q_j fixed at its MAP
    from about 10 answers) is overconfident: z < -3, by 0.02 to 0.1 on average over the
    four scenarios at s = 0.1. Integrating q_j over its estimated population distribution
    (confusion="grid") leaves less than 0.03 and less than half of it (measured 0.023
    vs 0.080; z = -3.5: still measurably overconfident). A posterior distorted to pp^2 is rejected (z > 3)."""
    z_grid, z_wrong, over_grid = _calibration_z("grid", max_iter=50)
    z_map, _, over_map = _calibration_z("map")
    assert z_map < -3 and 0.02 < over_map < 0.1
    assert abs(over_grid) < 0.03 and abs(over_grid) < over_map / 2
    assert z_wrong > 3


def test_g_proba_bounds_and_soft_labels():
    model, A = _scenario("high_variance", 7, s=0.05)
    em = toptwo.TopTwoEM(confusion="map").fit(A)
    K = 5
    ok = np.isfinite(em.pair_proba_)
    assert np.all(em.pair_proba_[ok] <= em.g_proba_[ok] + 1e-12)
    assert np.all(em.pair_proba_[ok] >= 1.0 / (K * (K - 1)) - 1e-12)
    assert np.all((em.confusion_[ok] > 0.5) & (em.confusion_[ok] < 1.0))
    sl = em.soft_labels()
    unanswered = A.task_counts() == 0
    assert np.isnan(sl[unanswered]).all() and np.isfinite(sl[~unanswered]).all()
    np.testing.assert_allclose(sl[~unanswered].sum(axis=1), 1.0)
    np.testing.assert_array_equal(em.fit_predict(A), em.top_two_[:, 0])


def test_init_is_copied_and_split_init_works():
    """A TopTwo2 with sample splitting leaves some tasks without a stage-1 q (NaN): EM
    starts them at the prior's mode. The init object passed is not fitted in place."""
    model, A = _scenario("hard", 12, s=0.1)
    init = toptwo.TopTwo2(sample_splitting=True, rng=3)
    em = toptwo.TopTwoEM(confusion="map", init=init).fit(A)
    assert not hasattr(init, "top_two_") and hasattr(em.init_, "top_two_")
    assert np.isnan(em.init_.confusion_).any()
    answered = A.task_counts() > 0
    assert np.isfinite(em.confusion_[answered]).all() and (em.top_two_[answered] > 0).all()
    assert _pair_error(em, model) <= _pair_error(em.init_, model) + 0.01


@pytest.mark.parametrize("confusion", ["map", "grid"])
def test_unanswered_tasks_and_idle_workers(confusion):
    A = np.array([[1, 2, 0, 1], [1, 1, 0, 3], [2, 1, 0, 1], [0, 0, 0, 0]])
    em = toptwo.TopTwoEM(confusion=confusion).fit(A, n_labels=3)
    assert em.top_two_[2].tolist() == [0, 0]
    assert np.isnan(em.pair_proba_[2]) and np.isnan(em.g_proba_[2]) and np.isnan(em.confusion_[2])
    assert np.isnan(em.reliability_[3]) and np.isfinite(em.reliability_[:3]).all()
    assert em.uncertain_tasks(1).tolist() == [2]
    assert (em.n_workers_in_, em.n_tasks_in_, em.n_labels_in_) == (4, 4, 3)


def test_uncertain_tasks_order_and_ties():
    _, A = _scenario("hard", 8, s=0.1)
    em = toptwo.TopTwoEM(confusion="map").fit(A)
    idx = em.uncertain_tasks(20)
    assert idx.shape == (20,)
    pp = np.nan_to_num(em.pair_proba_, nan=0.0)
    # in increasing order up to the rounding to UNCERTAIN_DECIMALS (ties by index)
    assert np.all(np.diff(pp[idx]) >= -1e-12)
    assert pp[idx].max() <= np.sort(pp)[20] + 1e-12
    assert em.uncertain_tasks(0).shape == (0,)
    em.pair_proba_ = np.full(em.n_tasks_in_, 0.5)        # all tied -> by index
    assert em.uncertain_tasks(5).tolist() == [0, 1, 2, 3, 4]
    # round-off-sized differences (as between BLAS builds) do not reorder; real ones do
    em.pair_proba_ = 0.5 + np.random.default_rng(0).normal(0.0, 1e-13, em.n_tasks_in_)
    assert em.uncertain_tasks(5).tolist() == [0, 1, 2, 3, 4]
    em.pair_proba_ = 0.5 - 1e-6 * np.arange(em.n_tasks_in_)
    assert em.uncertain_tasks(3).tolist() == [em.n_tasks_in_ - 1, em.n_tasks_in_ - 2, em.n_tasks_in_ - 3]


# ------------------------------------------------------------------ symmetries
@pytest.mark.parametrize("confusion", ["map", "grid"])
def test_worker_and_task_order_do_not_matter(confusion):
    _, A = _scenario("hard", 9)
    rng = np.random.default_rng(1)
    pw, pt = rng.permutation(A.n_workers), rng.permutation(A.n_tasks)
    B = toptwo.Responses.from_triples(pw[A.workers], pt[A.tasks], A.labels,
                                      n_workers=A.n_workers, n_tasks=A.n_tasks, n_labels=5)
    em = toptwo.TopTwoEM(confusion=confusion, max_iter=30).fit(A)
    em2 = toptwo.TopTwoEM(confusion=confusion, max_iter=30).fit(B)
    np.testing.assert_array_equal(em2.top_two_[pt], em.top_two_)
    np.testing.assert_allclose(em2.pair_proba_[pt], em.pair_proba_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(em2.reliability_[pw], em.reliability_, rtol=1e-9)


@pytest.mark.parametrize("name", ["hard", "few_smart"])
def test_relabelling_the_answers_relabels_the_estimate(name):
    """The likelihood and the prior are invariant under relabelling, so EM's fixed points
    are equivariant; only the start (TopTwo2's binary conversion uses the label order)
    is not, so a few tasks may end at another fixed point. At least 98% agree, and a
    relabelling that is not applied to the estimate agrees on far fewer."""
    _, A = _scenario(name, 11)
    sigma = np.array([3, 5, 1, 2, 4])                  # label c -> sigma[c - 1]
    B = toptwo.Responses(A.workers, A.tasks, sigma[A.labels - 1], shape=A.shape, n_labels=5)
    top, top_b = toptwo.TopTwoEM(confusion="map").fit(A).top_two_, toptwo.TopTwoEM(confusion="map").fit(B).top_two_
    assert np.mean((sigma[top - 1] == top_b).all(axis=1)) >= 0.98
    assert np.mean((top == top_b).all(axis=1)) < 0.5


# ------------------------------------------------------------------ sparse input
def test_sparse_input_with_huge_shape():
    rng = np.random.default_rng(2)
    N, n = 3000, 10**6
    R = toptwo.Responses.from_triples(rng.integers(0, 50, N), rng.integers(0, n, N),
                                      rng.integers(1, 5, N), n_workers=50, n_tasks=n,
                                      n_labels=4, duplicates="first")
    em = toptwo.TopTwoEM(max_iter=5).fit(R)
    assert em.top_two_.shape == (n, 2)
    assert (em.top_two_[R.task_counts() > 0] > 0).all()


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(max_iter=-1), ValueError, "'max_iter' parameter of TopTwoEM must be an int >= 0"),
    (dict(max_iter=2.5), TypeError, "'max_iter' parameter of TopTwoEM must be an int"),
    (dict(tol=0.0), ValueError, "'tol' parameter of TopTwoEM must be a float > 0; got 0.0"),
    (dict(tol="small"), TypeError, "'tol' parameter of TopTwoEM must be a float > 0; got str 'small'"),
    (dict(tol=float("nan")), ValueError, "'tol' parameter of TopTwoEM must be a finite float > 0; got nan"),
    (dict(posterior_tol=-0.1), ValueError,
     r"'posterior_tol' parameter of TopTwoEM must be a float in \[0, 1\); got -0.1"),
    (dict(posterior_tol=1.0), ValueError, "'posterior_tol' parameter of TopTwoEM must be a float in"),
    (dict(posterior_tol="x"), TypeError,
     r"'posterior_tol' parameter of TopTwoEM must be a float in \[0, 1\); got str 'x'"),
    (dict(confusion_prior_strength=-1.0), ValueError,
     "'confusion_prior_strength' parameter of TopTwoEM must be a float > 0; got -1.0"),
    (dict(reliability_prior_strength=0), ValueError,
     "'reliability_prior_strength' parameter of TopTwoEM must be a float > 0"),
    (dict(confusion="beta"), ValueError,
     "'confusion' parameter of TopTwoEM must be one of 'map', 'grid'; got 'beta'"),
    (dict(init="TopTwo2"), TypeError, "'init' parameter of TopTwoEM must be None or a toptwo.TopTwo2"),
    (dict(init=toptwo.TopTwo2(n_top=3)), ValueError, "TopTwo2 with n_top=2; got n_top=3"),
])
def test_parameter_validation(kwargs, exc, match):
    _, A = _scenario("easy", 0, s=0.1, n=10, m=20)
    with pytest.raises(exc, match=match):
        toptwo.TopTwoEM(**kwargs).fit(A)


def test_two_labels_refused():
    A = np.array([[1, 2], [2, 1], [1, 1]])
    with pytest.raises(ValueError, match="TopTwoEM needs n_labels >= 3; got n_labels=2"):
        toptwo.TopTwoEM(confusion="map").fit(A)


def test_bad_input_matrix_refused():
    with pytest.raises(ValueError, match="labels must be in 1..n_labels"):
        toptwo.TopTwoEM(confusion="map").fit(np.array([[1, 4], [2, 1]]), n_labels=3)


def test_uncertain_tasks_validation():
    em = toptwo.TopTwoEM(confusion="map")
    with pytest.raises(RuntimeError, match="TopTwoEM.uncertain_tasks needs a fitted estimator"):
        em.uncertain_tasks(3)
    with pytest.raises(RuntimeError, match="TopTwoEM.soft_labels needs a fitted estimator"):
        em.soft_labels()
    _, A = _scenario("easy", 0, s=0.3, n=10, m=20)
    em.fit(A)
    with pytest.raises(ValueError, match="'n' parameter of TopTwoEM.uncertain_tasks must be at "
                                         "most n_tasks=20; got 21"):
        em.uncertain_tasks(21)
    with pytest.raises(TypeError, match="'n' parameter of TopTwoEM.uncertain_tasks must be an int"):
        em.uncertain_tasks(2.0)
    with pytest.raises(ValueError, match="must be an int >= 0; got -1"):
        em.uncertain_tasks(-1)


# ------------------------------------------------------------------ grid internals
def _node_terms_brute(Sa, Sb):
    """All (k, a, b) terms of the grid posterior, shifted by their largest (a != b)."""
    K = Sa.shape[0]
    L = Sa[:, None] + Sb[None, :]                       # (a, b, task, node)
    L[np.arange(K), np.arange(K)] = -np.inf
    M = L.max(axis=(0, 1, 3))
    E = np.exp(L - M[None, None, :, None])
    return E.sum(axis=1), E.sum(axis=0), M


def test_grid_node_terms_match_all_pairs_including_extreme_tasks():
    """The O(m K G) exclusive-sum E-step equals the sum over all K(K-1) pairs, also for
    tasks whose scores favour one label by hundreds in both slots (the shifted terms
    would underflow; those tasks take the exact path). A version that forgets to exclude
    the diagonal (a = b) is far off."""
    from toptwo.extensions._em_grid import _exclusive_sums, _grid_node_terms

    rng = np.random.default_rng(0)
    K, m, G = 5, 400, 10
    Sa, Sb = rng.gamma(1.0, 3.0, (K, m, G)), rng.gamma(1.0, 2.0, (K, m, G))
    Sa[:, :5] *= 300
    Sb[:, :5] *= 300
    Sa[0, 5:10] = Sb[0, 5:10] = 900.0             # both slots peak at label 1 by 900
    W, Z, M = _grid_node_terms(np.concatenate([Sa, Sb], axis=2))
    Gb, Hb, Mb = _node_terms_brute(Sa, Sb)
    shift = np.exp(M - Mb)[None, :, None]
    np.testing.assert_allclose(W[..., :G] * shift, Gb, rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(W[..., G:] * shift, Hb, rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(Z * shift[0], Gb.sum(axis=0), rtol=1e-10, atol=1e-300)
    assert np.isfinite(W).all() and (Z.max(axis=1) > 0).all()
    E = rng.random((K, 7, 3))
    np.testing.assert_allclose(_exclusive_sums(E), E.sum(axis=0) - E, atol=1e-15)
    with_diag = np.exp(Sa[:, 20:] + Sb.sum(axis=0)[None, 20:])    # a = b not excluded
    assert not np.allclose(with_diag / with_diag.sum(axis=(0, 2))[None, :, None],
                           Gb[:, 20:] / Gb[:, 20:].sum(axis=(0, 2))[None, :, None], rtol=1e-3)


def test_pi_newton_reaches_the_constrained_optimum_monotonely():
    """F(pi) = sum_j log(Z_j . pi) + delta sum log pi on the simplex: at the returned pi
    the gradient is constant across nodes (Lagrange condition), F is not below the start,
    and the plain EM update from the start is further from the optimum than one call."""
    from toptwo.extensions._em_grid import _pi_newton

    rng = np.random.default_rng(1)
    Z = rng.gamma(0.5, 1.0, (3000, 10))
    pi0 = np.full(10, 0.1)
    F = lambda w: np.log(Z @ w).sum() + 0.1 * np.log(w).sum()     # noqa: E731
    pi = pi0
    for _ in range(5):
        pi, f = _pi_newton(Z, pi, 0.1)
    g = (Z / (Z @ pi)[:, None]).sum(axis=0) + 0.1 / pi
    assert pi.sum() == pytest.approx(1.0) and (pi > 0).all()
    assert np.ptp(g) < 1e-6 * g.mean()
    assert f == pytest.approx(F(pi)) and f >= F(pi0)
    r = pi0 * Z / (Z @ pi0)[:, None]
    em_step = (r.sum(axis=0) + 0.1) / (Z.shape[0] + 1.0)
    assert F(em_step) < f


def test_grid_stopping_on_the_posterior_and_acceleration_history():
    """posterior_tol = 1e-3 stops no later than the default (which stops on the EM gain);
    the labels agree on at least 95% of the tasks (pairs within 2 posterior_tol are
    ties) and the pair errors within 0.01. The recorded log-posterior never decreases:
    an accepted step raises it by at least the EM step's guaranteed gain, a rejected
    extrapolation repeats the current value."""
    model, A = _scenario("few_smart", 3, s=0.1)
    a = toptwo.TopTwoEM(posterior_tol=1e-3).fit(A)
    b = toptwo.TopTwoEM().fit(A)
    assert a.converged_ and b.converged_ and a.n_iter_ <= b.n_iter_
    for em in (a, b):
        ll = em.log_likelihood_
        assert ll.shape == (em.n_iter_ + 1,) and np.diff(ll).min() >= 0.0
    assert np.mean((a.top_two_ == b.top_two_).all(axis=1)) > 0.95
    assert abs(_pair_error(a, model) - _pair_error(b, model)) < 0.01


def _grid_brute(A, p, pi, nu_p):
    """Log-posterior, pair posterior (m, K, K) and posterior mean of q of the grid model
    at (p, pi), by enumerating every (node, a, b) of every task."""
    from toptwo.extensions._em_grid import GRID_NODES, GRID_PSEUDO

    K, X = A.n_labels, A.toarray()
    G = GRID_NODES
    q_nodes = 0.5 * (1.0 + (np.arange(G) + 0.5) / G)
    m = X.shape[1]
    lp, pairs, qmean = 0.0, np.full((m, K, K), np.nan), np.full(m, np.nan)
    for j in range(m):
        who = np.flatnonzero(X[:, j])
        if not who.size:
            continue
        c, pw = X[who, j] - 1, p[who]
        L = np.full((G, K, K), -np.inf)
        for k, qk in enumerate(q_nodes):
            for a in range(K):
                for b in range(K):
                    if a != b:
                        pr = (1 - pw) / K + pw * qk * (c == a) + pw * (1 - qk) * (c == b)
                        L[k, a, b] = np.log(pi[k] / (K * (K - 1))) + np.log(pr).sum()
        top = L.max()
        w = np.exp(L - top)
        lp += top + np.log(w.sum())
        pairs[j] = w.sum(axis=0) / w.sum()
        qmean[j] = w.sum(axis=(1, 2)) @ q_nodes / w.sum()
    pa = p[(X > 0).any(axis=1)]
    lp += GRID_PSEUDO * np.log(pi).sum() + nu_p / 2 * (np.log(pa).sum() + np.log1p(-pa).sum())
    return lp, pairs, qmean


@pytest.mark.parametrize("name, seed, s", [("hard", 13, 0.4), ("few_smart", 14, 0.3)])
def test_grid_fit_matches_enumeration_of_every_node_and_pair(name, seed, s):
    """The recorded log-posterior, pair_proba_, g_proba_, confusion_ and the chosen pairs
    equal a brute-force enumeration of the grid model at the returned (p, pi): checks the
    blocked E-step, the exclusive sums, the grid weights' term and the label pass."""
    model, A = _scenario(name, seed, s=s, n=12, m=40, K=4)
    em = toptwo.TopTwoEM().fit(A)
    p = np.nan_to_num(em.reliability_, nan=0.5)
    lp, pairs, qmean = _grid_brute(A, p, em.confusion_weights_, em.reliability_prior_strength)
    assert em.log_likelihood_[-1] == pytest.approx(lp, rel=1e-11)
    ok = np.isfinite(em.pair_proba_)
    rows = np.flatnonzero(ok)
    a, b = em.top_two_[ok, 0] - 1, em.top_two_[ok, 1] - 1
    np.testing.assert_allclose(em.pair_proba_[ok], pairs[rows, a, b], rtol=1e-9)
    np.testing.assert_allclose(em.g_proba_[ok], pairs[rows, a].sum(axis=1), rtol=1e-9)
    np.testing.assert_allclose(em.confusion_[ok], qmean[ok], rtol=1e-10)
    best = pairs[rows].reshape(rows.size, -1).max(axis=1)
    assert np.all(pairs[rows, a, b] >= best * (1 - 1e-3))        # the mode (up to ties)


@pytest.mark.parametrize("name, seed, s", [("hard", 1, 0.1), ("few_smart", 3, 0.2),
                                           ("high_variance", 3, 0.05)])
def test_grid_gain_rule_stops_near_the_maximum(name, seed, s, monkeypatch):
    """EM stops when the EM step from the current point is guaranteed to raise the
    log-posterior by at most EM_GAIN_TOL = 1e-6 per response (EM_TOL / 10); the rise still
    possible is about that gain over (1 - the largest fraction of missing information).
    Against the same fit run to 1e-13 per response: within 20 EM_TOL nnz of the maximum
    (a fraction of missing information up to 0.95; measured 0.003-0.042 against bounds
    0.05-0.10) and the same pair on at least 97% of the tasks (measured 97.8-100%),
    while the starting point is more than 10 below it (so a rule that stopped early would show)."""
    from toptwo.extensions import _em_grid

    _, A = _scenario(name, seed, s=s)
    a = toptwo.TopTwoEM().fit(A)
    bound = 20 * _em_grid.EM_GAIN_TOL * A.nnz
    monkeypatch.setattr(_em_grid, "EM_GAIN_TOL", 1e-13)
    b = toptwo.TopTwoEM(max_iter=2000, tol=1e-14).fit(A)
    assert a.converged_ and b.converged_ and a.n_iter_ < b.n_iter_
    top = b.log_likelihood_[-1]
    assert 0.0 <= top - a.log_likelihood_[-1] <= bound
    assert top - a.log_likelihood_[0] > 10.0
    assert np.mean((a.top_two_ == b.top_two_).all(axis=1)) >= 0.97


def test_grid_iterations_do_not_grow_with_the_data_size(monkeypatch):
    """The stop is a gain per response: on the same responses repeated r = 16 times (16
    copies of every task: about the same information per response, every gain about 16
    times larger) EM takes at most 4 more E-steps than on the original (measured 7 -> 10
    and 7 -> 8 on two seeds with 10 grid nodes, 6 -> 10 on this one with 5; the priors
    weigh less against 16 times the data), where the absolute gain 1e-3 used until
    2026-11-25 took 14-17 (a check that can fail)."""
    from toptwo.extensions import _em_grid

    _, A = _scenario("hard", 4, s=0.1)
    r = 16
    B = toptwo.Responses.from_triples(
        np.tile(A.workers, r), np.concatenate([A.tasks + k * A.n_tasks for k in range(r)]),
        np.tile(A.labels, r), n_workers=A.n_workers, n_tasks=r * A.n_tasks, n_labels=5)
    one, many = toptwo.TopTwoEM().fit(A).n_iter_, toptwo.TopTwoEM().fit(B).n_iter_
    assert many <= one + 4, (one, many)
    monkeypatch.setattr(_em_grid, "EM_GAIN_TOL", 1e-3 / B.nnz)      # the absolute rule
    absolute = toptwo.TopTwoEM().fit(B).n_iter_
    assert absolute >= one + 6 and absolute > many, (one, many, absolute)


@pytest.mark.parametrize("case", ["no cache", "half the blocks", "int64 sort"])
def test_grid_without_the_cache_gives_the_same_bits(monkeypatch, case):
    """Beyond _GRID_CACHE_BYTES the E-step recomputes the g and h terms of the blocks it
    does not keep (memory O(nnz + m G) beyond the budget), and beyond _RADIX_KEYS the
    incidence is sorted by its int64 rows instead of a 16-bit key: the same fit, bit for
    bit."""
    from toptwo.extensions import _em_grid

    _, A = _scenario("few_smart", 7, s=0.2)
    G, K = _em_grid.GRID_NODES, A.n_labels
    monkeypatch.setattr(_em_grid, "_GRID_CHUNK", 40 * K * G)        # blocks of 40 tasks
    a = toptwo.TopTwoEM().fit(A)
    if case == "no cache":
        monkeypatch.setattr(_em_grid, "_GRID_CACHE_BYTES", 0)
    elif case == "half the blocks":
        budget = (A.n_tasks // 2) * 2 * K * G * 8
        monkeypatch.setattr(_em_grid, "_GRID_CACHE_BYTES", budget)
        R = toptwo.responses.as_responses(A)
        kept = _em_grid._GridEM(R, 0.25, 0.25, 0.0).n_kept
        assert 0 < kept < int((R.task_counts() > 0).sum())
    else:
        monkeypatch.setattr(_em_grid, "_RADIX_KEYS", 0)
    b = toptwo.TopTwoEM().fit(A)
    assert a.n_iter_ == b.n_iter_
    for key in ("top_two_", "pair_proba_", "g_proba_", "reliability_", "confusion_",
                "log_likelihood_", "confusion_weights_"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key), err_msg=key)


def test_grid_blocks_do_not_change_the_fit(monkeypatch):
    """The E-step runs over blocks of tasks; blocks of 3 tasks give the same pairs, the
    same number of E-steps and the same posteriors (to round-off) as the default size."""
    from toptwo.extensions import em as em_module

    _, A = _scenario("hard", 15, s=0.1)
    a = toptwo.TopTwoEM().fit(A)
    from toptwo.extensions import _em_grid
    monkeypatch.setattr(_em_grid, "_GRID_CHUNK", 3 * 5 * em_module.GRID_NODES)
    b = toptwo.TopTwoEM().fit(A)
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_array_equal(a.top_two_, b.top_two_)
    np.testing.assert_allclose(a.pair_proba_, b.pair_proba_, rtol=1e-9)
    np.testing.assert_allclose(a.reliability_, b.reliability_, rtol=1e-9)
