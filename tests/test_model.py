"""The top-two model (eq. (1) [`eqn:A_dist`]), its scenarios (Table 1), the top-T
generalisation, and the Proposition 1 quantities r^(k), Delta r (eq. (2)), E[A^(k)]."""

from __future__ import annotations

import numpy as np
import pytest

import toptwo
from toptwo import TopTwoModel, label_distribution
from toptwo.model import answer_frequencies

K4 = 4


# ------------------------------------------------- eq. (1), literally, by hand
def eq1_probabilities(p, q, g, h, K, s):
    """P(A_ij = c) for c = 0..K, written out from eq. (1) of the paper."""
    out = np.empty(K + 1)
    out[0] = 1 - s
    for c in range(1, K + 1):
        if c == g:
            out[c] = s * (p * q + (1 - p) / K)
        elif c == h:
            out[c] = s * (p * (1 - q) + (1 - p) / K)
        else:
            out[c] = s * (1 - p) / K
    return out


#: Two worker types x two task types, each block of 200 x 20 = 4000 i.i.d. entries.
P_TYPES = (0.2, 0.9)
TASK_TYPES = ((1, 3, 0.7), (4, 2, 0.95))   # (g, h, q)
N_PER, M_PER, S_RATE = 200, 20, 0.6


def two_type_model():
    p = np.repeat(P_TYPES, N_PER)
    g = np.repeat([t[0] for t in TASK_TYPES], M_PER)
    h = np.repeat([t[1] for t in TASK_TYPES], M_PER)
    q = np.repeat([t[2] for t in TASK_TYPES], M_PER)
    return TopTwoModel(p, q, np.column_stack([g, h]), K4)


def block_frequencies(A: np.ndarray) -> np.ndarray:
    """(2, 2, K+1) empirical frequencies of 0..K in each (worker type, task type) block."""
    out = np.empty((2, 2, K4 + 1))
    for a in range(2):
        for b in range(2):
            blk = A[a * N_PER:(a + 1) * N_PER, b * M_PER:(b + 1) * M_PER]
            out[a, b] = np.bincount(blk.ravel(), minlength=K4 + 1) / blk.size
    return out


def frequencies_match(freq: np.ndarray, probs: np.ndarray, n_per_block: int,
                      delta: float = 1e-6) -> bool:
    """Hoeffding: |freq - P| <= sqrt(log(2/delta') / (2N)) for every block and outcome,
    with delta' = delta / (number of checks) (union bound)."""
    tol = np.sqrt(np.log(2 * probs.size / delta) / (2 * n_per_block))
    return bool(np.all(np.abs(freq - probs) <= tol))


def expected_block_probs(swap_q: bool = False) -> np.ndarray:
    out = np.empty((2, 2, K4 + 1))
    for a, p in enumerate(P_TYPES):
        for b, (g, h, q) in enumerate(TASK_TYPES):
            out[a, b] = eq1_probabilities(p, 1 - q if swap_q else q, g, h, K4, S_RATE)
    return out


@pytest.fixture(scope="module")
def two_type_sample():
    return two_type_model().sample(S_RATE, rng=2024).toarray()


def test_eq1_sampling_frequencies(two_type_sample):
    freq = block_frequencies(two_type_sample)
    assert frequencies_match(freq, expected_block_probs(), N_PER * M_PER)


def test_eq1_checker_rejects_swapped_q(two_type_sample):
    # negative twin: the same checker rejects eq. (1) with q and 1 - q exchanged
    freq = block_frequencies(two_type_sample)
    assert not frequencies_match(freq, expected_block_probs(swap_q=True), N_PER * M_PER)


def test_eq1_checker_rejects_missing_sampling_rate(two_type_sample):
    freq = block_frequencies(two_type_sample)
    wrong = expected_block_probs()
    wrong[..., 1:] /= S_RATE   # as if every pair were observed
    wrong[..., 0] = 0.0
    assert not frequencies_match(freq, wrong, N_PER * M_PER)


def test_label_distribution_is_eq1():
    K = 5
    for p, q, a, b in [(0.0, 0.6, 1, 2), (1.0, 0.9, 5, 3), (0.37, 0.55, 2, 4)]:
        mu = label_distribution(p, q, a, b, K)
        np.testing.assert_allclose(mu, eq1_probabilities(p, q, a, b, K, 1.0)[1:], rtol=1e-15)
        assert np.isclose(mu.sum(), 1.0)
    # broadcasting: (n, 1) x (m,) -> (n, m, K), and it equals label_probabilities
    m = TopTwoModel.scenario("hard", 7, 9, 5, rng=3)
    mu = label_distribution(m.reliability[:, None], m.confusion, m.top_two[:, 0],
                            m.top_two[:, 1], 5)
    np.testing.assert_allclose(mu, m.label_probabilities(), rtol=1e-14)


def test_top_t_sampling_frequencies():
    # top-T model, T = 3: reliable draws pick g_jt with probability q_jt
    n, m, K, s = 2000, 2, 5, 1.0
    W = np.array([[0.5, 0.3, 0.2], [0.6, 0.4, 0.0]])
    top = np.array([[2, 5, 1], [3, 1, 4]])
    p = np.full(n, 0.8)
    A = TopTwoModel(p, W, top, K).sample(s, rng=5).toarray()
    freq = np.stack([np.bincount(A[:, j], minlength=K + 1)[1:] / n for j in range(m)])
    expected = np.full((m, K), (1 - 0.8) / K)
    for j in range(m):
        expected[j, top[j] - 1] += 0.8 * W[j]
    tol = np.sqrt(np.log(2 * expected.size / 1e-6) / (2 * n))     # Hoeffding, union bound
    assert np.all(np.abs(freq - expected) <= tol)
    wrong = expected.copy()
    wrong[:, :] = expected[:, ::-1]
    assert not np.all(np.abs(freq - wrong) <= tol)


def test_sample_is_reproducible_and_sparse():
    m = TopTwoModel.scenario("easy", 20, 30, 4, rng=0)
    A1, A2 = m.sample(0.3, rng=9), m.sample(0.3, rng=9)
    assert isinstance(A1, toptwo.Responses)
    np.testing.assert_array_equal(A1.toarray(), A2.toarray())
    assert A1.n_labels == 4 and A1.shape == (20, 30)
    assert not np.array_equal(A1.toarray(), m.sample(0.3, rng=10).toarray())
    full = m.sample(1.0, rng=1)
    assert full.nnz == 20 * 30


@pytest.mark.parametrize("s", [0, 1.2, -0.1])
def test_sample_rate_validated(s):
    m = TopTwoModel.scenario("easy", 5, 5, 3, rng=0)
    with pytest.raises(ValueError, match=r"The 'sampling_rate' parameter of TopTwoModel.sample "
                                         r"must be a float in the interval \(0, 1\]"):
        m.sample(s, rng=0)


# ------------------------------------------------------- Table 1 scenarios
N_SC, M_SC = 200, 2000


@pytest.mark.parametrize("name", toptwo.SCENARIOS)
def test_scenario_ranges(name):
    m = TopTwoModel.scenario(name, N_SC, M_SC, 5, rng=1)
    p, q = m.reliability, m.confusion
    assert m.n_workers == N_SC and m.n_tasks == M_SC and m.n_labels == 5
    assert ((m.top_two >= 1) & (m.top_two <= 5)).all()
    assert (m.top_two[:, 0] != m.top_two[:, 1]).all()
    if name == "few_smart":
        smart = p >= 0.9
        assert smart.sum() == round(0.1 * N_SC)                   # exact split
        assert (p[~smart] <= 0.1).all() and (p[smart] <= 1.0).all()
        assert (q > 0.5).all() and (q <= 1.0).all()
    else:
        assert (p >= 0).all() and (p <= 1).all()
        assert p.min() < 0.05 and p.max() > 0.95                  # fills [0, 1]
    if name == "easy":
        assert (q > 0.9).all() and (q <= 1.0).all()
    if name == "hard":
        assert (q > 0.5).all() and (q <= 0.6).all()
    if name == "high_variance":
        low, high = (q > 0.5) & (q <= 0.6), (q > 0.9) & (q <= 1.0)
        assert (low | high).all()
        # half and half: binomial(2000, 1/2) sd = 22.4, allow 6 sd
        assert abs(low.sum() - M_SC / 2) <= 6 * np.sqrt(M_SC / 4)


def test_scenario_errors():
    with pytest.raises(ValueError, match=r"Unknown scenario 'medium' for TopTwoModel.scenario; "
                                         r"choose one of easy, hard, few_smart, high_variance"):
        TopTwoModel.scenario("medium")
    with pytest.raises(ValueError, match=r"'n_labels' parameter of TopTwoModel.scenario must be "
                                         r"an int >= 3; got 2"):
        TopTwoModel.scenario("easy", n_labels=2)


def test_scenario_seeded():
    a = TopTwoModel.scenario("hard", 10, 10, 4, rng=5)
    b = TopTwoModel.scenario("hard", 10, 10, 4, rng=5)
    np.testing.assert_array_equal(a.reliability, b.reliability)
    np.testing.assert_array_equal(a.top_two, b.top_two)


def test_random_knobs_and_spammer_fraction():
    m = TopTwoModel.random(50, 300, 6, reliability_range=(0.2, 0.4),
                           confusion_range=(0.7, 0.8), spammer_fraction=0.3, rng=4)
    p = m.reliability
    assert (p == 0).sum() == 15                                   # round(0.3 * 50)
    assert ((p[p > 0] >= 0.2) & (p[p > 0] <= 0.4)).all()
    assert (m.confusion > 0.7).all() and (m.confusion <= 0.8).all()
    assert TopTwoModel.random(7, 5, 3, spammer_fraction=0.5, rng=0).reliability.tolist().count(
        0.0) == 4                                                  # round(3.5) = 4


@pytest.mark.parametrize("kw, msg", [
    (dict(spammer_fraction=1.5), r"'spammer_fraction' parameter of TopTwoModel.random must be "
                                 r"in \[0, 1\]; got 1.5"),
    (dict(reliability_range=(0.5, 0.2)), r"'reliability_range' parameter of TopTwoModel.random "
                                         r"must satisfy 0.0 <= low <= high <= 1.0"),
    (dict(confusion_range=(0.3, 0.9)), r"'confusion_range' .* must satisfy 0.5 <= low"),
    (dict(n_top=5), r"TopTwoModel.random needs n_top < n_labels; got n_top=5, n_labels=5"),
])
def test_random_errors(kw, msg):
    with pytest.raises(ValueError, match=msg):
        TopTwoModel.random(5, 5, 5, **kw)
    with pytest.raises(TypeError, match=r"'reliability_range' parameter of TopTwoModel.random "
                                        r"must be a pair \(low, high\); got 3"):
        TopTwoModel.random(5, 5, 5, reliability_range=3)


@pytest.mark.parametrize("n, alpha", [(10, 0.3), (50, 0.1), (7, 0.5), (20, 0.0), (20, 1.0)])
def test_spammer_hammer_exact_counts(n, alpha):
    m = TopTwoModel.spammer_hammer(n, 40, 4, hammer_fraction=alpha, rng=2)
    p = m.reliability
    assert set(np.unique(p)) <= {0.0, 1.0}
    assert (p == 1).sum() == int(round(alpha * n))
    assert m.p_bar == pytest.approx(int(round(alpha * n)) / n)
    assert m.norm_p == pytest.approx(np.sqrt(int(round(alpha * n))))


def test_spammer_hammer_errors():
    with pytest.raises(ValueError, match=r"'hammer_fraction' parameter of "
                                         r"TopTwoModel.spammer_hammer must be in \[0, 1\]; got -0.1"):
        TopTwoModel.spammer_hammer(5, 5, 4, hammer_fraction=-0.1)


# ------------------------------------------------- model validation (incl. top-T)
@pytest.mark.parametrize("args, exc, msg", [
    (([0.5, 1.2], [0.7], [[1, 2]], 3), ValueError,
     r"`reliability` of TopTwoModel must lie in \[0.0, 1.0\]; found 1.2 at index 1"),
    (([0.5], [0.5], [[1, 2]], 3), ValueError,
     r"`confusion` of TopTwoModel must lie in \(0.5, 1.0\]; found 0.5 at index 0"),
    (([0.5], [0.7, 0.8], [[1, 2]], 3), ValueError,
     r"`confusion` of TopTwoModel must have length 1; got length 2"),
    (([0.5], [0.7], [1, 2], 3), ValueError,
     r"`top_two` of TopTwoModel must have shape \(n_tasks, T\) with T >= 2; got shape \(2,\)"),
    (([0.5], [0.7], [[1.0, 2.0]], 3), TypeError, r"`top_two` of TopTwoModel must hold integer"),
    (([0.5], [0.7], [[1, 4]], 3), ValueError,
     r"`top_two` of TopTwoModel must hold labels in 1..3; found 4 at task 0, column 1"),
    (([0.5], [0.7], [[0, 2]], 3), ValueError, r"found 0 at task 0, column 0"),
    (([0.5], [0.7], [[2, 2]], 3), ValueError,
     r"must hold distinct labels per task \(g_j != h_j\); task 0 has \[2, 2\]"),
    (([0.5], [0.7], [[1, 2]], 2), ValueError,
     r"TopTwoModel needs T < K \(at least one label outside the top T\); got T=2 with "
     r"n_labels=2"),
    (([0.5], [[0.5, 0.3, 0.2]], [[1, 2, 3]], 3), ValueError, r"got T=3 with n_labels=3"),
    (([0.5], [[0.2, 0.3, 0.5]], [[1, 2, 3]], 4), ValueError,
     r"`confusion` of TopTwoModel must be non-increasing along each row \(q_j1 >= ... >= "
     r"q_jT\); task 0 has \[0.2, 0.3, 0.5\]"),
    (([0.5], [[0.5, 0.3, 0.1]], [[1, 2, 3]], 4), ValueError,
     r"each row of `confusion` of TopTwoModel must sum to 1 .* task 0 sums to 0.9"),
    (([0.5], [[0.5, 0.3]], [[1, 2, 3]], 4), ValueError,
     r"`confusion` of TopTwoModel must have shape \(n_tasks,\) for the top-two model or "
     r"\(n_tasks, T\) = \(1, 3\); got shape \(1, 2\)"),
    (([0.5], [[0.5, np.nan, 0.5]], [[1, 2, 3]], 4), ValueError,
     r"`confusion` of TopTwoModel must hold finite weights >= 0"),
])
def test_model_validation(args, exc, msg):
    with pytest.raises(exc, match=msg):
        TopTwoModel(*args)


def test_top_t_model_attributes_and_t2_equivalence():
    m = TopTwoModel([0.3, 0.9], [[0.5, 0.3, 0.2]], [[4, 1, 2]], 5)
    assert m.n_top == 3
    np.testing.assert_allclose(m.label_weights(), [[0.3, 0.2, 0, 0.5, 0]])
    two = TopTwoModel([0.3], [[0.8, 0.2]], [[2, 1]], 3)      # T = 2 given as weights
    assert two.confusion.shape == (1,) and two.confusion[0] == 0.8
    np.testing.assert_allclose(two.weights, [[0.8, 0.2]])


def test_top_t_random():
    m = TopTwoModel.random(5, 50, 6, n_top=3, rng=0)
    assert m.weights.shape == (50, 3) and m.top_two.shape == (50, 3)
    np.testing.assert_allclose(m.weights.sum(axis=1), 1.0)
    assert (np.diff(m.weights, axis=1) <= 0).all()
    assert (np.sort(m.top_two, axis=1)[:, 1:] != np.sort(m.top_two, axis=1)[:, :-1]).all()


# -------------------------------------- Proposition 1 case table and eq. (2)
def r_case_table(k, g, h, q, K):
    """r_j^(k) exactly as printed in Proposition 1 [`eqn:defr`] (1 <= k < K)."""
    if g > h:                     # Case I
        if k < h:
            return k / K
        if k < g:                 # h <= k < g
            return k / K - (1 - q)
        return k / K - 1          # g <= k
    if k < g:                     # Case II
        return k / K
    if k < h:                     # g <= k < h
        return k / K - q
    return k / K - 1              # h <= k


def delta_r_eq2(k, g, h, q, K):
    """Delta r_j^(k) of eq. (2) [`eqn:delta_r`]."""
    if k == g:
        return 1 / K - q
    if k == h:
        return 1 / K - (1 - q)
    return 1 / K


@pytest.mark.parametrize("K", [3, 4, 6])
def test_r_matches_proposition1_case_table(K):
    m = TopTwoModel.random(3, 60, K, rng=K)
    for k in range(1, K):
        expected = [r_case_table(k, g, h, q, K) for (g, h), q in zip(m.top_two, m.confusion)]
        np.testing.assert_allclose(m.r(k), expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(m.r(0), 0.0, atol=1e-15)
    np.testing.assert_allclose(m.r(K), 0.0, atol=1e-15)


@pytest.mark.parametrize("K", [3, 5])
def test_delta_r_matches_eq2(K):
    m = TopTwoModel.random(3, 60, K, rng=10 + K)
    expected = np.array([[delta_r_eq2(k, g, h, q, K) for k in range(1, K + 1)]
                         for (g, h), q in zip(m.top_two, m.confusion)])
    np.testing.assert_allclose(m.delta_r(), expected, atol=1e-15)
    # and Delta r is the difference of the r^(k) with r^(0) = r^(K) = 0
    r = np.column_stack([m.r(k) for k in range(K + 1)])
    np.testing.assert_allclose(np.diff(r, axis=1), expected, atol=1e-15)
    # eq. (2) note: minimum at g, second smallest at h
    order = np.argsort(expected, axis=1, kind="stable")[:, :2] + 1
    np.testing.assert_array_equal(order, m.top_two)


def test_r_errors():
    m = TopTwoModel.random(3, 4, 4, rng=0)
    with pytest.raises(ValueError, match=r"k must be in 0..K=4; got k=5"):
        m.r(5)
    with pytest.raises(ValueError, match=r"'k' parameter of TopTwoModel.r must be an int >= 0"):
        m.r(-1)


@pytest.mark.parametrize("K, s", [(3, 0.3), (5, 1.0)])
def test_expected_binary_from_label_probabilities(K, s):
    m = TopTwoModel.random(6, 9, K, rng=K)
    mu = m.label_probabilities()                        # (n, m, K)
    np.testing.assert_allclose(mu.sum(axis=2), 1.0)
    for k in range(1, K):
        direct = s * (mu[:, :, k:].sum(axis=2) - mu[:, :, :k].sum(axis=2))
        np.testing.assert_allclose(m.expected_binary(k, s), direct, atol=1e-14)


def test_norm_p_and_p_bar():
    m = TopTwoModel([0.6, 0.8, 0.0], [0.7], [[1, 2]], 3)
    assert m.norm_p == pytest.approx(1.0)
    assert m.p_bar == pytest.approx(1.0 / 3)
    assert repr(m) == "TopTwoModel(n_workers=3, n_tasks=1, n_labels=3, n_top=2)"


def test_sampler_large_path_matches_eq1_frequencies(monkeypatch):
    """The per-worker sampling path (n m above DENSE_MASK_MAX_PAIRS) keeps the rate s."""
    import toptwo.model as tm

    monkeypatch.setattr(tm, "DENSE_MASK_MAX_PAIRS", 0)
    model = TopTwoModel.random(40, 2000, 5, rng=3)
    A = model.sample(0.1, rng=4)
    counts = A.worker_counts()
    # each worker: Binomial(2000, 0.1), sd = sqrt(2000 * 0.1 * 0.9) = 13.4; 6 sd bound
    assert np.all(np.abs(counts - 200) <= 6 * 13.42)
    # no (worker, task) pair twice, tasks sorted within each worker
    key = A.workers.astype(np.int64) * A.n_tasks + A.tasks
    assert np.all(np.diff(key) > 0)
    # negative twin: the same bound rejects a sampler that ignored s (rate 0.2)
    assert not np.all(np.abs(2 * counts - 200) <= 6 * 13.42)


def test_add_answers_draws_new_workers_from_eq1():
    model = TopTwoModel.scenario("hard", n_workers=6, n_tasks=10, n_labels=5, rng=0)
    R = model.sample(0.3, rng=1)
    more = model.add_answers(R, np.array([0, 0, 3, 9]), rng=2)
    assert more.nnz == R.nnz + 4 and more.task_counts()[0] == R.task_counts()[0] + 2
    pairs = set(zip(more.workers.tolist(), more.tasks.tolist()))
    assert len(pairs) == more.nnz                       # nobody answers a task twice
    full = model.sample(1.0, rng=3)
    assert model.add_answers(full, np.array([1]), rng=0).nnz == full.nnz   # no free worker
    with pytest.raises(ValueError, match=r"`tasks` of TopTwoModel.add_answers must hold indices "
                                         r"in 0..9; found 10"):
        model.add_answers(R, np.array([10]))
    with pytest.raises(TypeError, match=r"1-D array of task indices"):
        model.add_answers(R, np.array([0.5]))


@pytest.mark.parametrize("kw", [{"spammer_fraction": "a"}])
def test_model_random_fraction_message(kw):
    with pytest.raises(TypeError, match=r"'spammer_fraction' parameter of TopTwoModel.random"):
        toptwo.TopTwoModel.random(5, 5, 3, rng=0, **kw)


def test_spammer_hammer_fraction_message():
    with pytest.raises(TypeError, match=r"'hammer_fraction' parameter of "
                                        r"TopTwoModel.spammer_hammer"):
        toptwo.TopTwoModel.spammer_hammer(5, 5, 3, hammer_fraction="a", rng=0)


# ------------------------------------------- answer_frequencies: data against eq. (1)
def _tiny_af_model():
    # 3 workers x 2 tasks, K = 4: p = (1, 0, 0.5); task 0 (g,h)=(2,1) q=0.75; task 1 (4,3) q=1.
    return toptwo.TopTwoModel([1.0, 0.0, 0.5], [0.75, 1.0], [[2, 1], [4, 3]], 4)


def test_answer_frequencies_hand_computed():
    model = _tiny_af_model()
    A = np.array([[2, 4], [3, 0], [1, 3]])
    emp, exp, n = answer_frequencies(model, A, 0)
    assert n == 3
    np.testing.assert_allclose(emp, [1 / 3, 1 / 3, 1 / 3, 0])
    # worker 0 (p=1): (1/4, 3/4, 0, 0); worker 1 (p=0): 1/4 each; worker 2 (p=1/2):
    # 1/8 + (1/8, 3/8, 0, 0).  Mean of the three rows:
    rows = np.array([[0.25, 0.75, 0, 0], [0.25] * 4, [0.25, 0.5, 0.125, 0.125]])
    np.testing.assert_allclose(exp, rows.mean(axis=0))
    emp1, exp1, n1 = answer_frequencies(model, A, 1)
    assert n1 == 2
    np.testing.assert_allclose(emp1, [0, 0, 0.5, 0.5])
    np.testing.assert_allclose(exp1, np.mean([[0, 0, 0, 1], [0.125, 0.125, 0.125, 0.625]], axis=0))


def test_answer_frequencies_no_answer_and_validation():
    model = _tiny_af_model()
    A = np.array([[2, 0], [3, 0], [1, 0]])
    emp, exp, n = answer_frequencies(model, A, 1)
    assert n == 0 and np.isnan(emp).all() and np.isnan(exp).all()
    with pytest.raises(ValueError, match="must be in 0..1; got 2 instead"):
        answer_frequencies(model, A, 2)
    with pytest.raises(TypeError, match="must be a TopTwoModel; got list instead"):
        answer_frequencies([1], A, 0)
    with pytest.raises(ValueError, match=r"must have the model's shape \(3, 2\); got \(2, 2\)"):
        answer_frequencies(model, A[:2], 0)


def test_answer_frequencies_match_model_in_expectation_and_reject_wrong_model():
    model = toptwo.TopTwoModel.scenario("hard", n_workers=400, n_tasks=3, n_labels=5, rng=3)
    A = model.sample(1.0, rng=4)
    emp, exp, n = answer_frequencies(model, A, 0)
    # Each count is a sum of n independent Bernoullis: sd <= sqrt(n)/2, so 4 sd in frequency.
    tol = 4 * 0.5 / np.sqrt(n)
    assert np.abs(emp - exp).max() < tol
    # The same check rejects a model whose top two are swapped with two other labels.
    g, h = model.top_two[0]
    others = [c for c in range(1, 6) if c not in (g, h)]
    top = model.top_two.copy()
    top[0] = others[:2]
    wrong = toptwo.TopTwoModel(model.reliability, model.confusion, top, 5)
    _, exp_wrong, _ = answer_frequencies(wrong, A, 0)
    assert np.abs(emp - exp_wrong).max() > tol
