"""Stage 1 with one left vector for all k (``left_vector``, issue 25).

Against a dense prototype written from Proposition 1 (stacked SVD / mean of the per-k
vectors, sign rule, clip at 0, trimming, v^(k) = X^(k)T u~ / (2 s')); invariance under
the order of workers and tasks and the eigen-solver's sign; sparse solver paths equal to
the dense one; ``per_k`` unchanged; trimming exercised where 2/(eta sqrt(n)) binds.
"""

import hashlib

import numpy as np
import pytest

import toptwo
from toptwo import Responses
from toptwo._linalg import ITERATIVE_U_TOL
from toptwo._ties import U_ABS_TOL
from toptwo.spectral import fix_sign as _fix_sign, spectral_estimate, trim as _trim


def _dense_X(R):
    """X^(k) with the "observed" centring, dense (tests only)."""
    A = R.toarray()
    K = R.n_labels
    obs = A > 0
    return [np.where(obs, np.where(A <= k, -1.0, 1.0) - (K - 2 * k) / K, 0.0)
            for k in range(1, K)]


def _prototype(R, mode, eta=0.1):
    """Algorithm 1 steps 2-5 with one left vector, dense NumPy (the reference)."""
    X = _dense_X(R)
    n, m = R.shape
    if mode == "stacked":
        u = np.linalg.svd(np.hstack(X), full_matrices=False)[0][:, 0]
        u = _fix_sign(np.where(np.abs(u) <= U_ABS_TOL, 0.0, u))
    else:
        us = [np.linalg.svd(Xk, full_matrices=False)[0][:, 0] for Xk in X]
        us = [_fix_sign(np.where(np.abs(u) <= U_ABS_TOL, 0.0, u)) for u in us]
        u = np.mean(us, axis=0)
    u = np.maximum(u, 0.0)
    ut = _trim(u, eta)
    s = R.nnz / (n * m)
    v = np.column_stack([Xk.T @ ut / (2 * s) for Xk in X])
    dv = np.diff(np.hstack([np.zeros((m, 1)), v, np.zeros((m, 1))]), axis=1)
    order = np.argsort(dv, axis=1, kind="stable")
    top = order[:, :2] + 1
    srt = np.take_along_axis(dv, order, axis=1)
    clear = (np.diff(srt[:, :3], axis=1) > 1e-9).all(axis=1)   # no tie among the top 3
    return u, ut, v, np.where(clear[:, None], top, 0)


def _draw(name="few_smart", s=0.3, seed=0, n=50, m=300):
    model = toptwo.TopTwoModel.scenario(name, n, m, 5, rng=seed)
    return model, model.sample(s, rng=seed + 100)


@pytest.mark.parametrize("mode", ["stacked", "averaged"])
@pytest.mark.parametrize("name", ["few_smart", "hard", "easy"])
def test_matches_dense_prototype(mode, name):
    _, R = _draw(name)
    assert (R.worker_counts() > 0).all() and (R.task_counts() > 0).all()
    u, ut, v, top = _prototype(R, mode)
    res = spectral_estimate(R, R, left_vector=mode)
    for k in range(R.n_labels - 1):                      # one vector for every k
        np.testing.assert_allclose(res.left_vectors[k], u, atol=1e-9)
        np.testing.assert_allclose(res.trimmed[k], ut, atol=1e-9)
    assert (res.left_vectors >= 0).all(), "the clip at 0 (projection onto p >= 0)"
    np.testing.assert_allclose(res.v, v, atol=1e-8)
    # labels: equal wherever the prototype's Delta v is not within round-off of a tie
    clear = top[:, 0] > 0
    assert clear.mean() > 0.9
    np.testing.assert_array_equal(res.top[clear], top[clear])


def test_stacked_singular_value_is_the_stacked_matrix_norm():
    _, R = _draw()
    sv = np.linalg.svd(np.hstack(_dense_X(R)), compute_uv=False)[0]
    res = spectral_estimate(R, R, left_vector="stacked")
    np.testing.assert_allclose(res.singular_values, sv, rtol=1e-10)


@pytest.mark.parametrize("mode", ["stacked", "averaged", "per_k"])
def test_invariant_to_worker_and_task_order(mode):
    _, R = _draw(seed=3)
    gen = np.random.default_rng(7)
    pw, pt = gen.permutation(R.n_workers), gen.permutation(R.n_tasks)
    inv_w, inv_t = np.argsort(pw), np.argsort(pt)
    P = Responses.from_triples(inv_w[R.workers], inv_t[R.tasks], R.labels,
                               n_workers=R.n_workers, n_tasks=R.n_tasks, n_labels=R.n_labels)
    a = toptwo.TopTwo2(left_vector=mode).fit(R)
    b = toptwo.TopTwo2(left_vector=mode).fit(P)
    np.testing.assert_array_equal(b.top_two_[inv_t], a.top_two_)
    np.testing.assert_allclose(b.stage1_.left_vectors[:, inv_w], a.stage1_.left_vectors,
                               atol=1e-12)


@pytest.mark.parametrize("mode", ["stacked", "averaged"])
def test_sign_of_the_solver_does_not_matter(mode, monkeypatch):
    """The eigen-solver may return -u: the result is the same."""
    from toptwo import spectral as _mod   # where pooled_left_vector looks its solvers up
    _, R = _draw(seed=4)
    ref = spectral_estimate(R, R, left_vector=mode)
    if mode == "stacked":
        orig = _mod.stacked_leading_left
        monkeypatch.setattr(_mod, "stacked_leading_left",
                            lambda *a, **k: (lambda u, s: (-u, s))(*orig(*a, **k)))
    else:
        orig = _mod.leading_left_singular_vectors
        monkeypatch.setattr(_mod, "leading_left_singular_vectors",
                            lambda *a, **k: (lambda U, s: (-U, s))(*orig(*a, **k)))
    flipped = spectral_estimate(R, R, left_vector=mode)
    np.testing.assert_array_equal(flipped.top, ref.top)
    np.testing.assert_array_equal(flipped.left_vectors, ref.left_vectors)


@pytest.mark.parametrize("solver", ["lanczos", "svds"])
@pytest.mark.parametrize("mode", ["stacked", "averaged"])
def test_sparse_paths_equal_dense_path(solver, mode):
    for seed in range(3):
        _, R = _draw(["few_smart", "hard", "high_variance"][seed], seed=seed)
        de = spectral_estimate(R, R, left_vector=mode, solver="dense")
        sp_ = spectral_estimate(R, R, left_vector=mode, solver=solver)
        assert np.abs(sp_.left_vectors - de.left_vectors).max() <= ITERATIVE_U_TOL
        np.testing.assert_array_equal(sp_.top, de.top)


def test_lanczos_path_many_workers_equals_dense():
    """Above DENSE_GRAM_MAX_WORKERS "auto" takes Lanczos on sum_k X^(k) X^(k)T."""
    model = toptwo.TopTwoModel.scenario("hard", 450, 200, 5, rng=1)
    R = model.sample(0.1, rng=2)
    auto = spectral_estimate(R, R, left_vector="stacked")
    de = spectral_estimate(R, R, left_vector="stacked", solver="dense")
    assert np.abs(auto.left_vectors - de.left_vectors).max() <= ITERATIVE_U_TOL
    np.testing.assert_array_equal(auto.top, de.top)


def test_paper_centering_and_components():
    """The rank-one centring and disconnected data go through the same pooled step."""
    _, R = _draw(seed=5)
    for mode in ("stacked", "averaged"):
        paper = spectral_estimate(R, R, left_vector=mode, centering="paper")
        assert (paper.left_vectors >= 0).all()
    # two disjoint copies: every component gets its own vector, the same as alone
    n, m = R.shape
    D = Responses.from_triples(np.concatenate([R.workers, R.workers + n]),
                               np.concatenate([R.tasks, R.tasks + m]),
                               np.concatenate([R.labels, R.labels]), n_workers=2 * n,
                               n_tasks=2 * m, n_labels=R.n_labels)
    one = spectral_estimate(R, R, left_vector="stacked")
    two = spectral_estimate(D, D, left_vector="stacked")
    np.testing.assert_array_equal(two.top[:m], one.top)
    np.testing.assert_array_equal(two.top[m:], one.top)


def _fingerprint(top):
    return hashlib.sha256(np.ascontiguousarray(top, dtype=np.int64).tobytes()).hexdigest()[:16]


#: Labels of TopTwo1 / TopTwo2 on these draws before the option existed (commit f1adf6e).
PER_K_FINGERPRINTS = {
    ("few_smart", 0.1): ("1773041c24dbb20f", "6783b15c5681c104"),
    ("hard", 0.3): ("06edee80ac6be2c0", "799bee923f789510"),
    ("high_variance", 0.2): ("0c574605a392efaf", "7170c59d9f66f8c7"),
}


def test_per_k_is_unchanged():
    """``left_vector="per_k"`` is Algorithm 1 as printed, bit for bit as before (TopTwo2
    with eq. (5) as printed, ``reliability_estimator="moment"``)."""
    for (name, s), (h1, h2) in PER_K_FINGERPRINTS.items():
        _, R = _draw(name, s, seed=11)
        assert _fingerprint(toptwo.TopTwo1(left_vector="per_k").fit(R).top_two_) == h1
        assert _fingerprint(toptwo.TopTwo2(left_vector="per_k", reliability_estimator="moment"
                                           ).fit(R).top_two_) == h2


def test_bad_left_vector_is_refused():
    _, R = _draw()
    with pytest.raises(ValueError, match="left_vector"):
        toptwo.TopTwo1(left_vector="pooled").fit(R)
    with pytest.raises(ValueError, match="left_vector"):
        toptwo.TopTwo2(left_vector="mean").fit(R)
    with pytest.raises(ValueError, match="left_vector.*one of"):
        spectral_estimate(R, R, left_vector="x")


def heavy_worker_crowd(n=400, m=1000, K=5, heavy=3, s=0.03, rng=0):
    """p_i ~ U[0.3, 0.8] (so ||p|| >= 0.5 sqrt(n)); ``heavy`` workers answer every task,
    the others each task with probability s. The heavy workers' rows dominate
    X^(k) X^(k)T and capture u."""
    gen = np.random.default_rng(rng)
    p = gen.uniform(0.3, 0.8, n)
    top = np.array([gen.choice(K, 2, replace=False) + 1 for _ in range(m)])
    model = toptwo.TopTwoModel(p, gen.uniform(0.5, 1.0, m), top, K)
    A, F = model.sample(s, rng=gen), model.sample(1.0, rng=gen)
    ka, kf = A.workers >= heavy, F.workers < heavy
    R = Responses.from_triples(np.concatenate([F.workers[kf], A.workers[ka]]),
                               np.concatenate([F.tasks[kf], A.tasks[ka]]),
                               np.concatenate([F.labels[kf], A.labels[ka]]),
                               n_workers=n, n_tasks=m, n_labels=K)
    return model, R


@pytest.mark.parametrize("mode", ["stacked", "per_k"])
def test_trimming_binds_and_helps(mode):
    """eta = 0.5, n = 400: threshold 2/(eta sqrt(n)) = 0.2, and ||p|| >= eta sqrt(n)
    holds. Three workers who answer everything capture u (entries ~0.6, far above any
    entry of p/||p||, at most 1/(eta sqrt(n)) = 0.1); trimming zeroes exactly them and
    brings u~ closer to p/||p||: cos angle(u~, u*) rises, and the g error falls."""
    for seed in range(2):
        model, R = heavy_worker_crowd(rng=seed)
        p = model.reliability
        assert np.linalg.norm(p) >= 0.5 * np.sqrt(400)
        u_star = p / np.linalg.norm(p)
        assert u_star.max() <= 0.1
        res = spectral_estimate(R, R, eta=0.5, left_vector=mode)
        loose = spectral_estimate(R, R, eta=0.1, left_vector=mode)   # threshold 1: no-op
        cut = (res.left_vectors[0] > 0.2)
        assert np.flatnonzero(cut).tolist() == [0, 1, 2]
        assert (res.trimmed[0][cut] == 0).all() and (loose.trimmed[0] == loose.left_vectors[0]).all()
        c_tight, c_loose = (float(r.trimmed[0] @ u_star / np.linalg.norm(r.trimmed[0]))
                            for r in (res, loose))
        assert c_tight > c_loose + 0.3, (c_tight, c_loose)
        e_tight, e_loose = (float(np.mean(r.top[:, 0] != model.top_two[:, 0]))
                            for r in (res, loose))
        assert e_tight < e_loose - 0.02, (e_tight, e_loose)


@pytest.mark.parametrize("mode", ["stacked", "averaged"])
@pytest.mark.parametrize("seed", range(4))
def test_labels_survive_round_off_noise_in_the_pooled_vector(monkeypatch, seed, mode):
    """Noise of 1e-12 in the solver's vector (a stand-in for another BLAS kernel) leaves
    the labels of spammer-hammer crowds (many entries that are 0 in exact arithmetic)
    unchanged."""
    from toptwo import spectral
    model = toptwo.TopTwoModel.spammer_hammer(40, 200, 4, hammer_fraction=0.2, rng=seed)
    R = model.sample(0.1, rng=seed + 50)
    make = [lambda: toptwo.TopTwo1(left_vector=mode), lambda: toptwo.TopTwo2(left_vector=mode)]
    ref = [f().fit(R).top_two_ for f in make]
    gen = np.random.default_rng(seed)
    if mode == "stacked":
        orig = spectral.stacked_leading_left
        monkeypatch.setattr(spectral, "stacked_leading_left", lambda *a, **k: (
            lambda u, s: (u + 1e-12 * gen.standard_normal(u.shape), s))(*orig(*a, **k)))
    else:
        orig_lv = spectral._leading_vectors
        monkeypatch.setattr(spectral, "_leading_vectors", lambda *a, **k: (
            lambda U, s: (U + 1e-12 * gen.standard_normal(U.shape), s))(*orig_lv(*a, **k)))
    for f, r in zip(make, ref):
        np.testing.assert_array_equal(f().fit(R).top_two_, r)
