"""Issue 27: 10^5 connected components in one vectorised pass (``toptwo._batched``).

Stage 1 runs Algorithm 1 on every connected component; the components with 2 to
``BATCH_MAX_WORKERS`` workers now go through one batched computation instead of a Python
loop (0.6 ms per component before). The batched path is compared with the
per-component loop kept as the reference (``BATCH_MAX_WORKERS = 0``): every label and
component exactly, every number of the stage-1 result to round-off (measured
bit-identical on this machine), for every left vector, sign rule, with and without the
B/C split, and for TopTwo1 and TopTwo2.
"""

from __future__ import annotations

import numpy as np
import pytest

import toptwo
from toptwo import _batched
from toptwo import spectral as spectral_mod

FLOATS = ("confusion_raw", "delta_v", "v", "left_vectors", "trimmed", "singular_values",
          "l_per_task", "v_error", "l_task")


def _many_components(seed: int, n_comp: int = 80, K: int = 4, max_workers: int = 6,
                     big: bool = True) -> toptwo.Responses:
    """``n_comp`` small components (1..max_workers workers, 1..4 tasks each), plus a
    connected 80 x 100 crowd when ``big``; rows shuffled."""
    gen = np.random.default_rng(seed)
    w, t, lab = [], [], []
    W = T = 0
    for _ in range(n_comp):
        nw, nt = int(gen.integers(1, max_workers + 1)), int(gen.integers(1, 5))
        for j in range(nt):
            d = int(gen.integers(1, nw + 1))
            w.append(W + gen.choice(nw, d, replace=False))
            t.append(np.full(d, T + j))
            lab.append(gen.integers(1, K + 1, size=d))
        W, T = W + nw, T + nt
    if big:
        R = toptwo.TopTwoModel.random(80, 100, K, rng=seed).sample(0.3, rng=seed)
        w.append(R.workers + W)
        t.append(R.tasks + T)
        lab.append(R.labels)
        W, T = W + 80, T + 100
    w, t, lab = np.concatenate(w), np.concatenate(t), np.concatenate(lab)
    p = gen.permutation(w.size)
    return toptwo.Responses.from_triples(w[p], t[p], lab[p], n_workers=W, n_tasks=T,
                                         n_labels=K)


def _both(monkeypatch, fit):
    """(batched, per-component loop) results of ``fit()``."""
    monkeypatch.setattr(_batched, "BATCH_MAX_WORKERS", 64)
    batched = fit()
    monkeypatch.setattr(_batched, "BATCH_MAX_WORKERS", 0)
    loop = fit()
    return batched, loop


def _assert_same_stage1(a, b):
    np.testing.assert_array_equal(a.top, b.top)
    np.testing.assert_array_equal(a.components, b.components)
    for f in FLOATS:
        np.testing.assert_allclose(getattr(a, f), getattr(b, f), rtol=1e-12, atol=1e-14,
                                   err_msg=f)
    for f in ("norm_p", "s_prime_x", "s_prime_y"):
        np.testing.assert_allclose(getattr(a, f), getattr(b, f), rtol=1e-12, err_msg=f)


@pytest.mark.parametrize("left_vector", ["stacked", "averaged", "per_k"])
@pytest.mark.parametrize("sign_rule", ["paper", "sum"])
@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("seed,K,max_workers,big", [(0, 4, 6, True), (1, 3, 40, False),
                                                    (2, 12, 20, True), (3, 30, 9, False)])
def test_batched_components_equal_the_per_component_loop(monkeypatch, left_vector,
                                                          sign_rule, split, seed, K,
                                                          max_workers, big):
    R = _many_components(seed, K=K, max_workers=max_workers, big=big)
    B, C = (toptwo.split_entries(R, 0.5, np.random.default_rng(seed)) if split
            else (R, R))
    calls = []
    original = _batched.small_components
    monkeypatch.setattr(_batched, "small_components",
                        lambda *a, **k: calls.append(a[2].size) or original(*a, **k))
    a, b = _both(monkeypatch, lambda: spectral_mod.spectral_estimate(
        B, C, left_vector=left_vector, sign_rule=sign_rule))
    assert calls and calls[0] > 20                   # the batched path did the work
    _assert_same_stage1(a, b)


def test_the_largest_component_reports_when_it_is_batched(monkeypatch):
    # no big crowd: the component with most responses in B is a batched one
    R = _many_components(5, n_comp=40, max_workers=8, big=False)
    a, b = _both(monkeypatch, lambda: spectral_mod.spectral_estimate(R, R))
    assert np.isfinite(a.singular_values).all()
    _assert_same_stage1(a, b)


@pytest.mark.parametrize("budget", [1, 37, 400])
def test_batches_and_budget_do_not_change_the_result(monkeypatch, budget):
    # small budgets: one component per batch, components over the budget to the loop
    R = _many_components(6, K=5, max_workers=12)
    ref = spectral_mod.spectral_estimate(R, R, left_vector="per_k")
    monkeypatch.setattr(_batched, "BATCH_BUDGET", budget)
    _assert_same_stage1(spectral_mod.spectral_estimate(R, R, left_vector="per_k"), ref)


@pytest.mark.parametrize("make", [lambda lv: toptwo.TopTwo1(left_vector=lv),
                                  lambda lv: toptwo.TopTwo2(left_vector=lv, rng=0),
                                  lambda lv: toptwo.TopTwo2(left_vector=lv, rng=0,
                                                            sample_splitting=True)],
                         ids=["TopTwo1", "TopTwo2", "TopTwo2-split"])
@pytest.mark.parametrize("left_vector", ["stacked", "averaged", "per_k"])
def test_estimators_equal_with_and_without_batching(monkeypatch, make, left_vector):
    R = _many_components(7, n_comp=150)
    a, b = _both(monkeypatch, lambda: make(left_vector).fit(R))
    np.testing.assert_array_equal(a.top_two_, b.top_two_)
    np.testing.assert_allclose(a.confusion_, b.confusion_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a.norm_p_, b.norm_p_, rtol=1e-12)


def test_small_components_skip_the_per_component_loop(monkeypatch):
    # 2000 components of 3 workers x 1 task plus one crowd: Algorithm 1's per-part
    # block runs once (the crowd); it ran 2001 times before
    gen = np.random.default_rng(0)
    n_comp = 2000
    w = np.arange(3 * n_comp)
    t = np.repeat(np.arange(n_comp), 3)
    crowd = toptwo.TopTwoModel.random(80, 50, 3, rng=1).sample(0.5, rng=2)   # > 64
    R = toptwo.Responses.from_triples(
        np.concatenate([w, crowd.workers + w.size]),
        np.concatenate([t, crowd.tasks + n_comp]),
        np.concatenate([gen.integers(1, 4, size=w.size), crowd.labels]), n_labels=3)
    calls = []
    original = spectral_mod._spectral_block
    monkeypatch.setattr(spectral_mod, "_spectral_block",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    res = spectral_mod.spectral_estimate(R, R, left_vector="stacked")
    assert len(calls) == 1
    assert (res.top[:n_comp] > 0).all()


def test_forced_iterative_solvers_keep_the_per_component_path(monkeypatch):
    R = _many_components(8, n_comp=20)
    calls = []
    monkeypatch.setattr(_batched, "small_components",
                        lambda *a, **k: calls.append(1))
    spectral_mod.spectral_estimate(R, R, solver="lanczos")
    assert calls == []


def test_fix_sign_rows_equals_fix_sign():
    gen = np.random.default_rng(0)
    rows = gen.normal(size=(400, 6))
    rows[gen.random(rows.shape) < 0.3] = 0.0
    rows[:50] = np.abs(rows[:50]) * np.where(np.arange(6) % 2, 1, -1)   # count ties
    rows[50:60] = 0.0
    for rule in ("paper", "sum"):
        out = _batched.fix_sign_rows(rows, rule)
        want = np.array([spectral_mod.fix_sign(r, rule) for r in rows])
        np.testing.assert_array_equal(out, want)


def test_degenerate_gap_rule_is_the_per_component_one():
    from toptwo._ties import _degenerate_gap
    theta = np.array([0.0, 1e-300, 0.37, 2.0, 123.456, 1e12])
    for n in (2, 3, 17, 64):
        G = np.zeros((theta.size, n, n))
        G[:, 0, 0] = theta                       # w[-1] = theta, w[-2] = 0
        u, sigma = _batched._leading(G, n)
        want_zero = np.array([theta[i] <= _degenerate_gap(n, theta[i])
                              for i in range(theta.size)])
        np.testing.assert_array_equal((u == 0).all(axis=1), want_zero)
        np.testing.assert_allclose(sigma, np.sqrt(theta), rtol=1e-14)
