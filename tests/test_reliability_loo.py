"""TopTwo2's default step 3: eq. (5) left one out (:func:`estimate_reliability_loo`).

The formula itself is checked against the dense reference (``toptwo.reference``,
``tests/test_reference.py``: configurations "defaults", "per_k", "paper_centring_loo",
"observed_split"). Here: what the reference cannot see (disconnected data, one-worker
components, the order of the answers, the chunking), the statistical claim with a wrong
answer that fails it, and the messages.
"""

import numpy as np
import pytest

import toptwo
from toptwo import _chunks
from toptwo.reliability import estimate_reliability_loo
from toptwo.spectral import spectral_estimate


def _stage1(R, centering="observed"):
    return spectral_estimate(R, R, left_vector="stacked", sign_rule="sum", centering=centering)


def _join(parts):
    """Disjoint crowds side by side: workers and tasks of part b after those of part a."""
    w, t, c = [], [], []
    n0 = m0 = 0
    for R in parts:
        w.append(R.workers + n0)
        t.append(R.tasks + m0)
        c.append(R.labels)
        n0, m0 = n0 + R.n_workers, m0 + R.n_tasks
    return toptwo.Responses.from_triples(np.concatenate(w), np.concatenate(t),
                                         np.concatenate(c), n_workers=n0, n_tasks=m0,
                                         n_labels=parts[0].n_labels)


def test_components_are_separate_experiments():
    """On two disjoint crowds each worker's p_hat is the one of its own crowd fitted alone:
    the answer taken out is divided by its own component's s' (a wrong s', the whole
    matrix's, moves every p_hat of both parts)."""
    a = toptwo.TopTwoModel.random(20, 120, 4, rng=0).sample(0.4, rng=1)
    b = toptwo.TopTwoModel.random(12, 60, 4, rng=2).sample(0.7, rng=3)
    both = _join([a, b])
    res = _stage1(both)
    assert set(np.unique(res.components)) == {0, 1}
    p = estimate_reliability_loo(both, res)
    alone = np.concatenate([estimate_reliability_loo(a, _stage1(a)),
                            estimate_reliability_loo(b, _stage1(b))])
    np.testing.assert_allclose(p, alone, rtol=1e-7, atol=1e-12)


def test_a_lone_worker_has_no_usable_answer():
    """A worker alone on its tasks (a one-worker component): without its answer those
    tasks have no data, so the worker gets NaN (eq. (5) would give it p = 1)."""
    a = toptwo.TopTwoModel.random(20, 100, 4, rng=4).sample(0.5, rng=5)
    lone = toptwo.Responses.from_triples(np.zeros(6, int), np.arange(6), np.array([1, 2] * 3),
                                         n_workers=1, n_tasks=6, n_labels=4)
    both = _join([a, lone])
    res = _stage1(both)
    p = estimate_reliability_loo(both, res)
    assert np.isnan(p[-1])
    assert np.isfinite(p[:-1]).all()
    eq5 = toptwo.estimate_reliability(both, res.top, normalization="per_worker")
    assert eq5[-1] == 1.0                      # the self-confirmation left one out removes


@pytest.mark.parametrize("centering", ["observed", "paper"])
def test_the_order_of_the_answers_does_not_matter(centering):
    """Workers and tasks relabelled: the same p_hat per worker (a real number like q_hat:
    equal to round-off, 1e-9) and the same labels of TopTwo2, bit for bit."""
    model = toptwo.TopTwoModel.scenario("few_smart", 40, 200, 5, rng=6)
    R = model.sample(0.3, rng=7)
    gen = np.random.default_rng(8)
    pw, pt = gen.permutation(R.n_workers), gen.permutation(R.n_tasks)
    Rp = toptwo.Responses.from_triples(pw[R.workers], pt[R.tasks], R.labels,
                                       n_workers=R.n_workers, n_tasks=R.n_tasks, n_labels=5)
    est = toptwo.TopTwo2(centering=centering).fit(R)
    other = toptwo.TopTwo2(centering=centering).fit(Rp)
    np.testing.assert_allclose(other.reliability_[pw], est.reliability_, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(other.top_two_[pt], est.top_two_)


def test_chunk_sizes_do_not_change_a_bit(monkeypatch):
    """The chances are added as integers (2^-32 units), so chunking changes nothing."""
    model = toptwo.TopTwoModel.scenario("hard", 30, 400, 5, rng=9)
    R = model.sample(0.3, rng=10)
    res = _stage1(R)
    whole = estimate_reliability_loo(R, res)
    for size in (7, 64, 1000):
        monkeypatch.setattr(_chunks, "CHUNK_RESPONSES", size)
        monkeypatch.setattr(_chunks, "TASK_CHUNK", max(1, size // 3))
        assert estimate_reliability_loo(R, res).tobytes() == whole.tobytes(), size


def _spammer_means(estimator, seeds):
    """(mean, s.e.) of p_hat over the 45 spammers of a 5-hammer crowd at s = 0.1."""
    out = []
    for seed in seeds:
        model = toptwo.TopTwoModel.spammer_hammer(50, 500, 5, hammer_fraction=0.1, rng=seed)
        A = model.sample(0.1, rng=100 + seed)
        p = toptwo.TopTwo2(reliability_estimator=estimator).fit(A).reliability_
        out.append(p[model.reliability == 0])
    v = np.concatenate(out)
    v = v[np.isfinite(v)]
    return v.mean(), v.std(ddof=1) / np.sqrt(v.size)


@pytest.mark.parametrize("seeds", [range(0, 4), range(4, 8)])
def test_spammers_get_p_near_zero(seeds):
    """Left one out, a spammer's answer lands in its task's pair with probability 2/K
    whatever the pair (eq. (1) with p = 0, and the pair no longer depends on the answer),
    so the numerator of p_hat has mean 0: the mean over 180 spammers is within 3 s.e. of 0
    (a z-test at 0.3%), on two sets of seeds. Eq. (5), the wrong answer here, fails the same
    test: its spammers' mean is about 0.3, more than 10 s.e. away."""
    mean, se = _spammer_means("leave_one_out", seeds)
    assert abs(mean) <= 3 * se, f"leave-one-out spammers' mean p_hat {mean:.3f}, 3 s.e. {3 * se:.3f}"
    mean5, se5 = _spammer_means("moment", seeds)
    assert mean5 > 10 * se5, f"eq. (5) spammers' mean {mean5:.3f} should fail (s.e. {se5:.3f})"


def test_with_sample_splitting_nothing_is_taken_out():
    """With sample splitting A2 is not in stage 1: ``in_stage1=False`` scores each answer
    against stage 1's own pair; then with c_ij = 1 it would be eq. (5), and p_hat differs
    from eq. (5) only through c_ij (here: every worker's p_hat at least eq. (5)'s, since
    c_ij <= 1 makes the denominator smaller)."""
    model = toptwo.TopTwoModel.random(30, 300, 4, rng=12)
    R = model.sample(0.5, rng=13)
    res = _stage1(R)
    p = estimate_reliability_loo(R, res, in_stage1=False)
    eq5 = toptwo.estimate_reliability(R, res.top, normalization="per_worker")
    pos = eq5 > 0
    assert (p[pos] >= eq5[pos] - 1e-12).all()
    assert (p[pos] > eq5[pos] + 1e-6).any()


def test_the_stored_runs_name_their_step_3():
    """``toptwo.paper``'s "TopTwo2" is Algorithm 2 with eq. (5) as printed (the stored
    reproductions), "TopTwo2 LOO" is ``toptwo.TopTwo2()`` with its defaults."""
    from toptwo.experiments import paper

    assert paper.make("TopTwo2").reliability_estimator == "moment"
    assert paper.make("TopTwo2 LOO").get_params() == toptwo.TopTwo2().get_params()
    assert toptwo.TopTwo2().reliability_estimator == "leave_one_out"
    assert paper.load("reliability").config["chosen_on_key"] == 25


def test_the_design_page_quotes_the_stored_run():
    """docs/design_stage1.md's table of step 3 is reliability.json's (a stale figure fails)."""
    from pathlib import Path

    from toptwo.experiments import paper

    page = (Path(__file__).resolve().parent.parent / "docs" / "design_stage1.md").read_text()
    run = paper.load("reliability")
    syn = run["synthetic"]
    for name in ("eq. (5)", "leave one out (default)", "MLE"):
        for sc in ("hammer5", "few_smart", "easy", "hard", "high_variance"):
            cell = " / ".join(f"{syn[k][sc][name]['gap']:+.4f}" for k in ("25", "26", "27", "28"))
            assert cell in page, (name, sc, cell)
    real = run["real"]
    row = " | ".join(f"{real[d]['leave one out (default)']:.4f}" for d in real)
    assert row in page, row


def _brute_force(R, res, centering, T):
    """The definition, answer by answer, built independently of the package's pass: the
    components by scipy, s' = nnz / (n_c m_c) of each, v_j rebuilt from the answers, then
    for every usable answer its task's v without it, eq. (3) by argmin with a tolerance,
    c_ij by eq. (4) summed over the pair, and the ratio clipped to eq. (5)'s range."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    n, m, K = R.n_workers, R.n_tasks, R.n_labels
    w, t, c = R.workers, R.tasks, R.labels
    G = sp.coo_array((np.ones(w.size), (w, t + n)), shape=(n + m, n + m)).tocsr()
    _, lab = connected_components(G, directed=False)
    lw, lt = lab[:n], lab[n:]
    cnt = np.bincount(t, minlength=m)
    if centering == "observed":
        s_prime = np.zeros(m)
        for comp in np.unique(lt[cnt > 0]):
            tasks = np.flatnonzero((lt == comp) & (cnt > 0))
            workers = np.flatnonzero((lw == comp) & (np.bincount(w, minlength=n) > 0))
            s_prime[tasks] = np.isin(t, tasks).sum() / (len(tasks) * len(workers))
    else:
        s_prime = np.full(m, R.nnz / (n * m))
    Ut = res.trimmed
    shifts = (K - 2 * np.arange(1, K)) / K
    X = np.where(c[:, None] > np.arange(1, K)[None, :], 1.0, -1.0)     # A^(k) = +1 iff A > k
    if centering == "observed":
        X = X - shifts
    v = np.zeros((m, K - 1))
    for e in range(w.size):
        v[t[e]] += Ut[:, w[e]] * X[e] / (2 * s_prime[t[e]])
    if centering == "paper":
        v -= shifts * Ut.sum(axis=1) / 2
    active = res.top[:, 0] > 0
    np.testing.assert_allclose(v[active], res.v[active], rtol=0, atol=1e-12)
    hits, used, chance = np.zeros(n), np.zeros(n), np.zeros(n)
    for e in range(w.size):
        i, j = w[e], t[e]
        if not (active[j] and cnt[j] > 1):
            continue
        dv = np.diff(np.concatenate([[0], res.v[j] - Ut[:, i] * X[e] / (2 * s_prime[j]), [0]]))
        d, pick = dv.copy(), []
        for _ in range(T):
            k = int(np.argmax(d <= d.min() + 1e-9))
            pick.append(k)
            d[k] = np.inf
        lj = res.l_task[j]
        hits[i] += (c[e] - 1) in pick
        used[i] += 1
        chance[i] += 1.0 if not lj > 0 else float(np.clip(T / K - dv[pick].sum() / lj, T / K, 1))
    with np.errstate(all="ignore"):
        excess = chance - T / K * used
        p = np.clip((hits - T / K * used) / excess, -T / (K - T), 1)
    p[(used == 0) | ~(excess > 1e-12)] = np.nan
    return p


@pytest.mark.parametrize("K, T", [(5, 2), (6, 3)])
@pytest.mark.parametrize("centering", ["observed", "paper"])
@pytest.mark.parametrize("left_vector", ["stacked", "per_k"])
def test_equals_the_definition_answer_by_answer(K, T, centering, left_vector):
    """A crowd of 30, six components of 2-7 workers (the batched path), a lone worker and
    one-answer tasks; K = 5 with T = 2 and K = 6 with T = 3; both centrings; pooled and
    per-k vectors: the package's pass equals the brute force to 1e-8 (the chances are added
    on a 2^-32 grid), with the same NaN."""
    parts = [toptwo.TopTwoModel.random(30, 150, K, rng=1).sample(0.3, rng=2)]
    parts += [toptwo.TopTwoModel.random(2 + s, 8, K, rng=10 + s).sample(0.7, rng=20 + s)
              for s in range(6)]
    parts.append(toptwo.Responses.from_triples(np.zeros(4, int), np.arange(4),
                                               np.array([1, 2, 3, 1]), n_workers=1,
                                               n_tasks=4, n_labels=K))
    R = _join(parts)
    res = spectral_estimate(R, R, left_vector=left_vector, n_top=T, centering=centering,
                            sign_rule="sum" if left_vector != "per_k" else "paper")
    if centering == "observed":                 # "paper" couples them: one part
        assert len(np.unique(res.components)) > 2
    p = estimate_reliability_loo(R, res)
    ref = _brute_force(R, res, centering, T)
    np.testing.assert_array_equal(np.isnan(p), np.isnan(ref))
    np.testing.assert_allclose(p, ref, rtol=0, atol=1e-8)
    assert np.nanmin(p) >= -T / (K - T) and np.nanmax(p) <= 1


def test_refuses_what_it_cannot_use():
    R = toptwo.TopTwoModel.random(10, 30, 4, rng=14).sample(0.6, rng=15)
    res = _stage1(R)
    with pytest.raises(ValueError, match=r"`centering` of estimate_reliability_loo must be "
                                         r"'observed' or 'paper'; got 'none' instead"):
        estimate_reliability_loo(R, res, centering="none")
    other = toptwo.TopTwoModel.random(10, 30, 5, rng=14).sample(0.6, rng=15)
    with pytest.raises(ValueError, match=r"`stage1` of estimate_reliability_loo is for 30 "
                                         r"tasks and 4 labels; the responses have 30 and 5"):
        estimate_reliability_loo(other, res)
    with pytest.raises(ValueError, match=r"`centering` of estimate_reliability_loo is 'paper' "
                                         r"but stage 1 used 'observed'; leave it out"):
        estimate_reliability_loo(R, res, centering="paper")
    with pytest.raises(TypeError, match=r"`in_stage1` of estimate_reliability_loo must be True "
                                        r"or False; got 'no'"):
        estimate_reliability_loo(R, res, in_stage1="no")
    with pytest.raises(ValueError, match=r"n_responses"):
        estimate_reliability_loo(R, res, n_responses=np.ones(3, dtype=int))
    with pytest.raises(TypeError, match=r"`stage1` of estimate_reliability_loo must be a "
                                        r"SpectralResult .*; got TopTwo1"):
        estimate_reliability_loo(R, toptwo.TopTwo1().fit(R))
    from toptwo.spectral import spectral_from_matrices
    mats = [toptwo.binary.to_binary(R, k).toarray() for k in range(1, 4)]
    bare = spectral_from_matrices(mats, mats, s_prime=0.6)
    with pytest.raises(ValueError, match=r"must come from toptwo.spectral_estimate"):
        estimate_reliability_loo(R, bare)


@pytest.mark.parametrize("seeds", [range(5, 10), range(10, 15)])
def test_lesson04_spammer_claims_hold_for_other_seeds(seeds):
    """Lesson 4b's section on eq. (5) left one out asserts, on seeds 0-4: eq. (5)'s spammers' mean p_hat > 0.2,
    the leave-one-out one within 0.1 of 0 (5 hammers, 45 spammers, s = 0.1)."""
    means = {"moment": [], "leave_one_out": []}
    for seed in seeds:
        crowd = toptwo.TopTwoModel.spammer_hammer(50, 500, 5, hammer_fraction=0.1, rng=seed)
        A = crowd.sample(0.1, rng=100 + seed)
        for est in means:
            p = toptwo.TopTwo2(reliability_estimator=est).fit(A).reliability_
            means[est].append(np.nanmean(p[crowd.reliability == 0]))
    assert np.mean(means["moment"]) > 0.2, means
    assert abs(np.mean(means["leave_one_out"])) < 0.1, means
