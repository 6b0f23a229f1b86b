"""Issue 27: memory bounded by the data, O(nnz + (n + m) K), for the paper's estimators
and majority vote whatever K <= 1000; the dense baselines refuse up front, naming the
size they would need."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import toptwo
from toptwo import baselines, binary


def _big_K(K=1000, n=100, rows=3000, seed=0):
    gen = np.random.default_rng(seed)
    m = rows // 10
    w = np.concatenate([gen.choice(n, 10, replace=False) for _ in range(m)])
    t = np.repeat(np.arange(m), 10)
    lab = gen.integers(1, K + 1, size=w.size)
    lab[:K] = np.arange(1, K + 1)                      # every label occurs
    return toptwo.Responses.from_triples(w, t, lab, n_labels=K)


@pytest.mark.parametrize("make", [lambda: toptwo.TopTwo1(), lambda: toptwo.TopTwo2(rng=0),
                                  lambda: baselines.MajorityVote(rng=0)],
                         ids=["TopTwo1", "TopTwo2", "MajorityVote"])
def test_k1000_in_bounded_memory(make):
    # was 1.6 GB for TopTwo1/TopTwo2 (Xe = sign x X, O(n K^2) = 10^8 floats)
    R = _big_K()
    tracemalloc.start()
    try:
        est = make().fit(R)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    n, m, K = R.n_workers, R.n_tasks, R.n_labels
    bound = 8 * 40 * (R.nnz + (n + m) * K) + 64 * 2**20     # O(nnz + (n+m) K), 32 MiB chunks
    assert peak < bound, (peak, bound)
    assert (est.top_two_ > 0).all()


@pytest.mark.parametrize("offsets", [None, "random"])
def test_per_entry_products_equal_the_label_block_products(monkeypatch, offsets):
    model = toptwo.TopTwoModel.random(15, 40, 6, rng=1)
    R = toptwo.as_responses(model.sample(0.5, rng=2))
    off = None if offsets is None else np.random.default_rng(3).uniform(-0.5, 0.5, 5)
    blocks = binary.LabelBlocks(R, off)
    assert not blocks.per_entry
    monkeypatch.setattr(binary, "BLOCK_BUDGET", 7)            # force the other path
    monkeypatch.setattr(binary, "_use_per_entry", lambda *a: True)
    entries = binary.LabelBlocks(R, off)
    assert entries.per_entry and entries._chunk == 1
    gen = np.random.default_rng(4)
    Y, X = gen.normal(size=(40, 5)), gen.normal(size=(15, 5))
    np.testing.assert_allclose(entries.forward(Y), blocks.forward(Y), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(entries.backward(X), blocks.backward(X), rtol=1e-12,
                               atol=1e-12)
    ks = np.array([3, 1])
    np.testing.assert_array_equal(entries.forward(Y[:, ks], ks), entries.forward(Y)[:, ks])
    # and against the definition, A^(k) Y[:, k] with A^(k) from to_binary
    for k in range(1, 6):
        Ak = binary.to_binary(R, k).toarray()
        if off is not None:
            Ak = np.where(Ak != 0, Ak - off[k - 1], 0.0)
        np.testing.assert_allclose(entries.forward(Y)[:, k - 1], Ak @ Y[:, k - 1], atol=1e-12)
        np.testing.assert_allclose(entries.backward(X)[:, k - 1], Ak.T @ X[:, k - 1],
                                   atol=1e-12)


def test_estimates_agree_on_both_product_paths(monkeypatch):
    model = toptwo.TopTwoModel.scenario("easy", n_workers=600, n_tasks=300, n_labels=5, rng=0)
    R = model.sample(0.05, rng=1)          # > 400 workers: the Lanczos path uses the blocks
    ref = toptwo.TopTwo2(rng=0).fit(R)
    monkeypatch.setattr(binary, "BLOCK_BUDGET", 7)
    monkeypatch.setattr(binary, "_use_per_entry", lambda *a: True)
    est = toptwo.TopTwo2(rng=0).fit(R)
    np.testing.assert_array_equal(est.top_two_, ref.top_two_)
    np.testing.assert_allclose(est.confusion_, ref.confusion_, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("cls, shape, msg", [
    (baselines.MMSR, (5000, 3), r"MMSR\.fit would build the n_workers x n_workers worker "
                                r"covariance \(5000 x 5000\) = 25,000,000 entries \(8 copies"),
    (baselines.PGD, (5000, 3), r"PGD\.fit would build the n_workers x n_workers worker "
                               r"covariance \(5000 x 5000\)"),
    (baselines.MultiSPA, (3000, 3), r"MultiSPA\.fit would build the \(n_workers K\) x "
                                    r"\(n_workers K\) co-occurrence counts \(9000 x 9000\)"),
    (baselines.OptDawidSkene, (30, 300), r"OptDawidSkene\.fit would need about .* "
                                         r"multiply-adds for the K x K x K third-order "
                                         r"moment tensors \(300 x 300 x 300"),
    (baselines.EBCC, (30, 300), r"EBCC\.fit would need about .* multiply-adds for the "
                                r"n_tasks x K x n_subtypes posteriors"),
])
def test_dense_baselines_refuse_up_front(cls, shape, msg):
    n, K = shape
    gen = np.random.default_rng(0)
    m = 400
    w = gen.integers(0, n, 4 * m)
    t = np.repeat(np.arange(m), 4)
    lab = gen.integers(1, K + 1, 4 * m)
    R = toptwo.Responses.from_triples(w, t, lab, n_workers=n, n_tasks=m, n_labels=K,
                                      duplicates="first")
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=msg):
            cls().fit(R)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, peak                            # refused before allocating


def _peak_mb(fit) -> float:
    tracemalloc.start()
    try:
        fit()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


# per_k: one singular vector per label, 1000 of them (most of the test's CPU): slow
@pytest.mark.parametrize("make", [
    lambda: toptwo.TopTwo1(), lambda: toptwo.TopTwo2(rng=0),
    pytest.param(lambda: toptwo.TopTwo1(left_vector="per_k"), marks=pytest.mark.slow)],
    ids=["TopTwo1", "TopTwo2", "TopTwo1-per_k"])
def test_memory_does_not_grow_with_k_squared_at_fixed_nnz(make):
    # the same 3000 answers with K = 200 and K = 1000: O(n K^2) (Xe of the label
    # blocks, 800 MB at K = 1000) would be 25 times more; O(nnz + (n + m) K) at most 5
    small, big = _big_K(K=200), _big_K(K=1000)
    p200 = _peak_mb(lambda: make().fit(small))
    p1000 = _peak_mb(lambda: make().fit(big))
    assert p1000 < 5 * p200 + 16, (p200, p1000)


@pytest.mark.parametrize("left_vector", ["stacked", "averaged", "per_k"])
def test_many_components_at_k1000_in_bounded_memory(left_vector):
    # 500 components of 3 workers x 1 task (the batched path, toptwo._batched)
    gen = np.random.default_rng(0)
    n_comp, K = 500, 1000
    w = np.arange(3 * n_comp)
    t = np.repeat(np.arange(n_comp), 3)
    lab = gen.integers(1, K + 1, size=w.size)
    lab[:K] = np.arange(1, K + 1)
    R = toptwo.Responses.from_triples(w, t, lab, n_labels=K)
    n, m = R.shape
    peak = _peak_mb(lambda: toptwo.TopTwo1(left_vector=left_vector).fit(R)) * 2**20
    bound = 8 * 12 * (R.nnz + (n + m) * K) + 48 * 2**20      # batches of 2^21 elements
    assert peak < bound, (peak, bound)


def test_the_probability_columns_are_computed_in_chunks(monkeypatch):
    """``p_g`` and ``p_pair`` (``toptwo.posterior``, the CLI's columns) build no float
    array of the size of the data and no (task, a, b, node) array: with chunks of 2^12
    (label, task, node) entries the peak is below 16 bytes per answer plus 32 per (task
    or worker, label) plus 3 x 80 per task (the node likelihoods, the grid weights'
    Newton work array and a copy); the values do not depend on the chunk size. (The
    former whole-array confidence column raised ``infer``'s peak RSS at 10^7 rows from
    848 to 1272 MiB, above the CLI's 1 GiB target.)"""
    from toptwo import posterior

    R = toptwo.TopTwoModel.scenario("hard", 200, 40000, 5, rng=0).sample(0.05, rng=1)
    est = toptwo.TopTwo2().fit(R)
    want = posterior.task_probabilities(est, R)
    R.task_major()                                  # built by the fit in the CLI
    monkeypatch.setattr(posterior, "_NODE_CHUNK", 4096)
    est.__dict__.pop("_task_probabilities")
    tracemalloc.start()
    try:
        got = posterior.task_probabilities(est, R)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    for key in ("p_g", "p_pair"):
        np.testing.assert_allclose(got[key], want[key], rtol=1e-12)
    G = posterior._nodes().size
    bound = (16 * R.nnz + 32 * (R.n_workers + R.n_tasks) * R.n_labels
             + 3 * 8 * G * R.n_tasks)
    assert peak < bound, (peak, bound)
