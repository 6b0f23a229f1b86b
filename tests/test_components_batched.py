"""10^5 connected components in one vectorised pass (``toptwo._batched``).

Stage 1 runs Algorithm 1 on every connected component; the components with 2 to
``BATCH_MAX_WORKERS`` workers now go through one batched computation instead of a Python
loop (0.6 ms per component before). The batched path is compared with the
per-component loop kept as the reference (``BATCH_MAX_WORKERS = 0``): every label and
component exactly, every number of the stage-1 result to round-off (measured
bit-identical on this machine), for every left vector, sign rule, with and without the
B/C split, and for TopTwo1 and TopTwo2; also where every rule of step 2 decides
(entries trimmed, signs and directions unidentified), and with each rule changed in its
one definition (both paths follow).
"""

from __future__ import annotations

import numpy as np
import pytest

import toptwo
from toptwo import _batched, _components, _step2, _ties, binary
from toptwo import spectral as spectral_mod
from toptwo._step2 import average_signed, clip_nonnegative, fix_sign
from toptwo._ties import _EPS, U_ABS_TOL, _clean

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
    """(batched, per-component loop) results of ``fit()``; the loop also does the
    one-worker components."""
    monkeypatch.setattr(_batched, "BATCH_MAX_WORKERS", 64)
    monkeypatch.setattr(_components, "SINGLE_WORKERS_AT_ONCE", True)
    batched = fit()
    monkeypatch.setattr(_batched, "BATCH_MAX_WORKERS", 0)
    monkeypatch.setattr(_components, "SINGLE_WORKERS_AT_ONCE", False)
    loop = fit()
    monkeypatch.setattr(_components, "SINGLE_WORKERS_AT_ONCE", True)
    return batched, loop


def _binding_components(seed: int, K: int = 4) -> toptwo.Responses:
    """Components where every rule of step 2 decides something: crowds of 8 to 40
    workers with a few reliable ones (entries above the trimming threshold at eta = 1),
    symmetric pairs (two workers, one task, opposite binary answers: sign not
    identified), Latin squares (repeated singular values: the degenerate-gap rule),
    identical workers, one-worker components; rows shuffled."""
    gen = np.random.default_rng(seed)
    w, t, lab = [], [], []
    W = T = 0

    def add(ws, ts, ls, nw, nt):
        nonlocal W, T
        w.append(np.asarray(ws) + W)
        t.append(np.asarray(ts) + T)
        lab.append(np.asarray(ls))
        W, T = W + nw, T + nt

    for c in range(30):                                  # one or a few experts
        nw, nt = int(gen.integers(8, 41)), int(gen.integers(3, 12))
        p = np.where(gen.random(nw) < 0.2, 0.95, 0.0) if c % 2 else np.eye(nw)[0]
        truth = gen.integers(1, K + 1, size=nt)
        ws, ts = np.nonzero(gen.random((nw, nt)) < 0.6)
        right = gen.random(ws.size) < p[ws]
        ls = np.where(right, truth[ts], gen.integers(1, K + 1, size=ws.size))
        add(ws, ts, ls, nw, nt)
    for _ in range(10):                                  # symmetric pairs
        add([0, 1], [0, 0], [1, K], 2, 1)
    for n in (3, 4, 5):                                  # Latin squares
        ws, ts = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        add(ws.ravel(), ts.ravel(), (ws + ts).ravel() % K + 1, n, n)
    for _ in range(5):                                   # identical workers
        nt = int(gen.integers(2, 6))
        ls = gen.integers(1, K + 1, size=nt)
        add(np.repeat([0, 1, 2], nt), np.tile(np.arange(nt), 3), np.tile(ls, 3), 3, nt)
    for _ in range(10):                                  # one worker
        nt = int(gen.integers(1, 4))
        add(np.zeros(nt, int), np.arange(nt), gen.integers(1, K + 1, size=nt), 1, nt)
    w, t, lab = np.concatenate(w), np.concatenate(t), np.concatenate(lab)
    p = gen.permutation(w.size)
    return toptwo.Responses.from_triples(w[p], t[p], lab[p], n_workers=W, n_tasks=T,
                                         n_labels=K)


def _assert_same_stage1(a, b):
    np.testing.assert_array_equal(a.top, b.top)
    np.testing.assert_array_equal(a.components, b.components)
    for f in FLOATS:
        np.testing.assert_allclose(getattr(a, f), getattr(b, f), rtol=1e-12, atol=1e-14,
                                   err_msg=f)
    for f in ("norm_p", "s_prime_x", "s_prime_y"):
        np.testing.assert_allclose(getattr(a, f), getattr(b, f), rtol=1e-12, err_msg=f)


_CONFIGS = [(0, 4, 6, True), (1, 3, 40, False), (2, 12, 20, True), (3, 30, 9, False)]


def _grid():
    """Every (left_vector, sign_rule, split) x every instance; the not-slow suite keeps a
    cover (each combination once, each instance with every left vector: 12 of 48, ~3 s
    of the 12 s), the rest is marked slow (CI's slow stage runs the whole grid)."""
    for lv in ["stacked", "averaged", "per_k"]:
        for j, sign_rule in enumerate(["paper", "sum"]):
            for k, split in enumerate([False, True]):
                for c, config in enumerate(_CONFIGS):
                    keep = c == 2 * j + k
                    yield pytest.param(lv, sign_rule, split, *config,
                                       marks=() if keep else pytest.mark.slow)


@pytest.mark.parametrize("left_vector,sign_rule,split,seed,K,max_workers,big", list(_grid()))
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


def test_fix_sign_on_rows_equals_fix_sign_on_each_row():
    from toptwo._step2 import fix_sign
    gen = np.random.default_rng(0)
    rows = gen.normal(size=(400, 6))
    rows[gen.random(rows.shape) < 0.3] = 0.0
    rows[:50] = np.abs(rows[:50]) * np.where(np.arange(6) % 2, 1, -1)   # count ties
    rows[50:60] = 0.0
    for rule in ("paper", "sum"):
        out = fix_sign(rows, rule)
        want = np.array([fix_sign(r, rule) for r in rows])
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


@pytest.mark.parametrize("left_vector", ["stacked", "averaged", "per_k"])
@pytest.mark.parametrize("sign_rule", ["paper", "sum"])
@pytest.mark.parametrize("split", [False, True])
def test_batched_equal_where_every_rule_binds(monkeypatch, left_vector, sign_rule, split):
    # eta = 1: entries are trimmed in the batched components; symmetric pairs and Latin
    # squares leave the sign or the direction unidentified; the split leaves idle rows
    R = _binding_components(11)
    B, C = (toptwo.split_entries(R, 0.5, np.random.default_rng(3)) if split else (R, R))
    a, b = _both(monkeypatch, lambda: spectral_mod.spectral_estimate(
        B, C, eta=1.0, left_vector=left_vector, sign_rule=sign_rule))
    _assert_same_stage1(a, b)
    small = np.zeros(R.n_workers, dtype=bool)          # workers of batched components
    wc = np.full(R.n_workers, -1)
    wc[R.workers] = a.components[R.tasks]
    sizes = np.bincount(wc[wc >= 0])
    small[wc >= 0] = (sizes[wc[wc >= 0]] >= 2) & (sizes[wc[wc >= 0]] <= 64)
    trimmed = (a.left_vectors != a.trimmed)[:, small]
    assert trimmed.any()                                # the trimming binds
    zero = (a.left_vectors == 0).all(axis=0) & small & (np.bincount(
        R.workers, minlength=R.n_workers) > 0)
    assert zero.any()                                   # unidentified sign / direction


def _trim_factor_3(u, eta, n=None):
    out = np.array(u, dtype=float, copy=True)
    out[out > 3.0 / (eta * np.sqrt(out.shape[-1] if n is None else n))] = 0.0
    return out


def _sign_by_negatives(u, rule="paper"):
    u = np.asarray(u, dtype=float)
    big = np.abs(u) > U_ABS_TOL
    pos = (big & (u > 0)).sum(axis=-1)
    neg = (big & (u < 0)).sum(axis=-1)
    keep = np.where(neg > pos, 1.0, np.where(pos > neg, -1.0, 0.0))   # more negatives
    return u * keep[..., None]


def _clip_by_abs(u):
    return np.abs(u)


def _average_median(U, rule):
    return _clean(np.median(fix_sign(U, rule), axis=0))


def _clean_coarse(u):
    out = np.array(u, dtype=float, copy=True)
    out[np.abs(out) <= 0.05] = 0.0
    return out


def _shifts_halved(n_labels):
    K = n_labels
    return (K - 2 * np.arange(1, K)) / (2 * K)


def _gap_wide(n, theta):
    return 0.5 * np.maximum(theta, 0.0)


def _no_clip_when_stacked(U, left_vector, rule):
    u = _clean(U)
    if left_vector == "per_k" or left_vector == "stacked":
        return fix_sign(u, rule)
    return clip_nonnegative(average_signed(u, rule))


def _v_error_wide(task_counts, s_prime, extra=0.0):
    d = task_counts.astype(float)
    return 1e7 * d * (U_ABS_TOL + d * _EPS) / s_prime + extra


RULE_CHANGES = {          # (module, rule, changed code, left vectors where it binds)
    "trim": (_step2, "trim", _trim_factor_3, ("per_k", "stacked")),
    "fix_sign": (_step2, "fix_sign", _sign_by_negatives, ("per_k", "averaged")),
    "clip_nonnegative": (_step2, "clip_nonnegative", _clip_by_abs, ("stacked",)),
    "average_signed": (_step2, "average_signed", _average_median, ("averaged",)),
    "clean": (_ties, "_clean", _clean_coarse, ("per_k", "stacked")),
    "centring_shifts": (binary, "centring_shifts", _shifts_halved, ("per_k", "stacked")),
    "degenerate_gap": (_ties, "_degenerate_gap", _gap_wide, ("per_k", "stacked")),
    "signed_left": (_step2, "signed_left", _no_clip_when_stacked, ("stacked",)),
    "v_error_bound": (_ties, "_v_error_bound", _v_error_wide, ("per_k", "stacked")),
}


@pytest.mark.parametrize("name", sorted(RULE_CHANGES))
def test_changing_a_rule_in_its_one_definition_changes_every_path(monkeypatch, name):
    # the rule's code object is replaced, so every caller, however it imported the
    # function, runs the changed rule: the batched and the per-component path (and the
    # one-worker components) must still agree, and the result must change
    module, attr, changed, left_vectors = RULE_CHANGES[name]
    R = _binding_components(12)
    for left_vector in left_vectors:
        def run(lv=left_vector):
            return spectral_mod.spectral_estimate(R, R, eta=1.0, left_vector=lv,
                                                  sign_rule="paper")
        before = run()
        with monkeypatch.context() as m:
            m.setattr(getattr(module, attr), "__code__", changed.__code__)
            a, b = _both(m, run)
        _assert_same_stage1(a, b)
        assert not all(np.array_equal(getattr(a, f), getattr(before, f))
                       for f in ("v", "trimmed", "top", "v_error")), (name, left_vector)
