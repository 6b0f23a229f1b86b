"""Estimates that do not depend on floating-point round-off.

Every discrete decision of TopTwo1/TopTwo2 (sign of u^(k), the pair of eq. (3), the
pair of eq. (6)) must be decided by the model's numbers, never by the last bits of a
BLAS kernel, a thread count, a solver path or the order of the responses. These tests
perturb the float path on purpose and require identical labels; each has a twin that
shows the check would catch a decision made by round-off.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import toptwo
from toptwo import TopTwoModel, _components, _linalg, _ties, spectral
from toptwo.mle import best_pairs, _best_tuples
from toptwo._ties import tolerant_smallest


# ------------------------------------------------------------------ fixtures
def spammer_hammer_instance(seed: int, s: float = 0.02):
    """The crowd where the kernel dependence was found: 50 workers, 300 tasks, K = 5,
    s = 0.02 (one answer per task on average: many small connected components)."""
    model = TopTwoModel.spammer_hammer(50, 300, 5, hammer_fraction=0.5, rng=seed)
    return model, model.sample(s, rng=seed + 100)


def block_diagonal(R: toptwo.Responses, copies: int) -> toptwo.Responses:
    """``copies`` disjoint copies of the same responses (independent experiments)."""
    n, m = R.shape
    w = np.concatenate([R.workers + c * n for c in range(copies)])
    t = np.concatenate([R.tasks + c * m for c in range(copies)])
    lab = np.tile(R.labels, copies)
    return toptwo.Responses.from_triples(w, t, lab, n_workers=n * copies,
                                         n_tasks=m * copies, n_labels=R.n_labels)


# ------------------------------------------------------------------ tie rules
def test_tolerant_smallest_ties_go_to_the_smaller_index():
    v = np.array([[1.0, 1.0 + 1e-13, 0.5, 0.5 - 1e-13],
                  [3.0, 2.0, 1.0, 0.0]])
    np.testing.assert_array_equal(tolerant_smallest(v, 2, 1e-12), [[2, 3], [3, 2]])
    # twin: without the tolerance the 1e-13 difference decides
    np.testing.assert_array_equal(tolerant_smallest(v, 2, 0.0), [[3, 2], [3, 2]])


def test_best_pairs_ties_within_tolerance():
    Sa = np.array([[1.0, 1.0 + 1e-14, 0.0]])
    Sb = np.array([[0.2, 0.2, 0.2 - 1e-14]])
    a, b, _ = best_pairs(Sa, Sb, tol=np.array([1e-12]))
    assert (a[0], b[0]) == (0, 1)                     # smallest a, then smallest b
    a0, b0, _ = best_pairs(Sa, Sb)                    # twin: round-off decides
    assert (a0[0], b0[0]) == (1, 0)


def test_best_pairs_matches_brute_force():
    rng = np.random.default_rng(0)
    Sa = rng.integers(0, 4, size=(400, 5)).astype(float)   # many exact ties
    Sb = rng.integers(0, 4, size=(400, 5)).astype(float)
    a, b, score = best_pairs(Sa, Sb)
    for j in range(400):
        best = max((Sa[j, x] + Sb[j, y], -x, -y) for x in range(5) for y in range(5) if x != y)
        assert (a[j], b[j], score[j]) == (-best[1], -best[2], best[0])


def test_best_tuples_is_lexicographic_among_ties():
    S = np.zeros((1, 3, 5))
    S[0, 0, [1, 3]] = 1.0
    S[0, 1, [2, 4]] = 1.0
    S[0, 2, [0, 4]] = 0.5
    np.testing.assert_array_equal(_best_tuples(S, np.zeros(1)), [[1, 2, 0]])


# ------------------------------------------------------------------ components
def test_task_seen_only_by_an_isolated_worker_gets_its_answer():
    # worker 2 alone answered task 3 (label 4): its own component. Algorithm 1 on the
    # whole matrix would leave v_3 = 0 (tie rule: (1, 2), confidence 1/2); run on the
    # component it returns the answer, as majority vote does.
    model = TopTwoModel.random(2, 3, 5, rng=0)
    R = model.sample(1.0, rng=1)
    w = np.append(R.workers, 2)
    t = np.append(R.tasks, 3)
    lab = np.append(R.labels, 4)
    A = toptwo.Responses.from_triples(w, t, lab, n_labels=5)
    for est in (toptwo.TopTwo1(), toptwo.TopTwo2()):
        est.fit(A)
        assert est.top_two_[3, 0] == 4
    res = toptwo.TopTwo1().fit(A).result_
    assert res.components.tolist() == [0, 0, 0, 1]


@pytest.mark.parametrize("make", [lambda: toptwo.TopTwo1(), lambda: toptwo.TopTwo2(),
                                  lambda: toptwo.TopTwo2(n_refinements=3)],
                         ids=["TopTwo1", "TopTwo2", "TopTwo2-refined"])
@pytest.mark.parametrize("seed", [0, 3])
def test_independent_copies_get_the_same_estimate(make, seed):
    # Two disjoint copies of one data set are two independent experiments: each copy
    # must get exactly the estimate of the data set alone.
    _, R = spammer_hammer_instance(seed, s=0.05)
    one = make().fit(R)
    two = make().fit(block_diagonal(R, 2))
    m = R.n_tasks
    for c in range(2):
        np.testing.assert_array_equal(two.top_two_[c * m:(c + 1) * m], one.top_two_)
        np.testing.assert_allclose(two.confusion_[c * m:(c + 1) * m], one.confusion_,
                                   rtol=1e-7, equal_nan=True)


def test_repeated_singular_value_drops_the_direction():
    # two workers, two tasks, K = 4: X^(2) = [[1, -1], [1, 1]] has orthogonal rows of
    # equal norm, sigma_1 = sigma_2, and u^(2) is not identified (eigh's choice would
    # follow the order of the workers). The direction is dropped: u^(2) = 0.
    # (worker 2 answers task 2 with label 1 in a component of its own: three labels used)
    A = toptwo.Responses.from_triples([0, 0, 1, 1, 2], [0, 1, 0, 1, 2], [4, 2, 4, 4, 1],
                                      n_labels=4)
    per_k = lambda: toptwo.TopTwo1(left_vector="per_k")  # noqa: E731  (the u^(k) of Alg. 1)
    res = per_k().fit(A).result_
    np.testing.assert_array_equal(res.left_vectors[1, :2], [0.0, 0.0])
    swapped = toptwo.Responses.from_triples([1, 1, 0, 0, 2], [0, 1, 0, 1, 2], [4, 2, 4, 4, 1],
                                            n_labels=4)
    np.testing.assert_array_equal(per_k().fit(swapped).top_two_, per_k().fit(A).top_two_)
    np.testing.assert_array_equal(toptwo.TopTwo1().fit(swapped).top_two_,
                                  toptwo.TopTwo1().fit(A).top_two_)


# ------------------------------------------------------------------ perturbations
def _perturbed(monkeypatch, scale: float, seed: int):
    """Add noise of size ``scale`` to every u^(k) a solver returns (a stand-in for
    another BLAS kernel, whose u differs in the last bits)."""
    original = spectral._leading_vectors
    rng = np.random.default_rng(seed)

    def noisy(*args, **kwargs):
        U, sv = original(*args, **kwargs)
        return U + scale * rng.standard_normal(U.shape), sv

    monkeypatch.setattr(spectral, "_leading_vectors", noisy)


@pytest.mark.parametrize("seed", range(6))
def test_labels_survive_round_off_noise_in_u(monkeypatch, seed):
    # the per-k vectors (the pooled vector's twin: tests/test_stage1.py)
    _, R = spammer_hammer_instance(seed)
    t1 = lambda: toptwo.TopTwo1(left_vector="per_k")  # noqa: E731
    t2 = lambda: toptwo.TopTwo2(left_vector="per_k")  # noqa: E731
    ref1, ref2 = t1().fit(R), t2().fit(R)
    _perturbed(monkeypatch, 1e-12, seed)
    np.testing.assert_array_equal(t1().fit(R).top_two_, ref1.top_two_)
    np.testing.assert_array_equal(t2().fit(R).top_two_, ref2.top_two_)


def test_without_the_tolerances_round_off_noise_changes_labels(monkeypatch):
    # Twin of the test above, and a check that the problem is real: with exact-zero
    # detection and tie tolerances switched off, noise of 1e-12 in u changes TopTwo1's
    # labels on these crowds (the estimate depended on round-off).
    monkeypatch.setattr(spectral, "U_ABS_TOL", 0.0)
    monkeypatch.setattr(_ties, "U_ABS_TOL", 0.0)
    monkeypatch.setattr(_linalg, "_degenerate_gap", lambda n, theta: -1.0)
    monkeypatch.setattr(_components, "_components",
                        lambda B, C: (1, np.zeros(B.n_workers, int), np.zeros(B.n_tasks, int)))
    changed = 0
    for seed in range(6):
        _, R = spammer_hammer_instance(seed)
        ref = toptwo.TopTwo1(left_vector="per_k").fit(R).top_two_
        with monkeypatch.context() as mp:
            _perturbed(mp, 1e-12, seed)
            changed += int((toptwo.TopTwo1(left_vector="per_k").fit(R).top_two_ != ref)
                           .any(axis=1).sum())
    assert changed > 0


@pytest.mark.parametrize("centering", ["observed", "paper"])
@pytest.mark.parametrize("seed", [0, 1, 3])
def test_solver_paths_agree(seed, centering, monkeypatch):
    """Every solver path against the dense one: the same labels at the default
    (statistical) precision of the iterative paths, and q to 1e-6 relative when they run
    to machine precision."""
    model = TopTwoModel.scenario("hard", n_workers=60, n_tasks=200, n_labels=5, rng=seed)
    for s in (0.03, 0.2):
        R = model.sample(s, rng=seed + 10)
        res = {solver: spectral.spectral_estimate(R, R, centering=centering, solver=solver)
               for solver in _linalg.SOLVERS}
        for solver, r in res.items():
            np.testing.assert_array_equal(r.top, res["dense"].top, err_msg=solver)
        with monkeypatch.context() as mp:
            mp.setattr(_linalg, "LANCZOS_TOL", 1e-10)
            mp.setattr(_linalg, "ARPACK_TOL", 1e-10)
            res = {solver: spectral.spectral_estimate(R, R, centering=centering, solver=solver)
                   for solver in _linalg.SOLVERS}
        for solver, r in res.items():
            np.testing.assert_array_equal(r.top, res["dense"].top, err_msg=solver)
            np.testing.assert_allclose(r.confusion_raw, res["dense"].confusion_raw,
                                       rtol=1e-6, atol=1e-8, err_msg=solver)


# ------------------------------------------------------------------ equivariance
@st.composite
def permuted_instances(draw):
    seed = draw(st.integers(0, 10_000))
    rng = np.random.default_rng(seed)
    K = int(rng.integers(3, 6))
    n, m = int(rng.integers(6, 40)), int(rng.integers(10, 60))
    if draw(st.booleans()):
        model = TopTwoModel.spammer_hammer(n, m, K, hammer_fraction=0.3, rng=rng)
    else:
        model = TopTwoModel.random(n, m, K, rng=rng)
    s = draw(st.sampled_from([0.03, 0.08, 0.2, 0.6]))        # sparse: many components
    R = model.sample(s, rng=rng)
    assume(np.unique(R.labels).size >= 3)        # two labels used of K >= 3: refused
    return R, rng.permutation(n), rng.permutation(m)


def _relabelled(R, pw, pt):
    """The same responses with worker i renamed inv_w[i] and task j renamed inv_t[j]."""
    inv_w, inv_t = np.argsort(pw), np.argsort(pt)
    return toptwo.Responses.from_triples(inv_w[R.workers], inv_t[R.tasks], R.labels,
                                         n_workers=R.n_workers, n_tasks=R.n_tasks,
                                         n_labels=R.n_labels)


@settings(max_examples=40, deadline=None)
@given(permuted_instances())
def test_relabelling_permutes_the_estimates(inst):
    R, pw, pt = inst
    P = _relabelled(R, pw, pt)
    for make in (toptwo.TopTwo1, toptwo.TopTwo2, lambda: toptwo.TopTwo2(n_refinements=2),
                 lambda: toptwo.TopTwo1(sign_rule="sum")):
        ref, perm = make().fit(R), make().fit(P)
        np.testing.assert_array_equal(perm.top_two_, ref.top_two_[pt])
        np.testing.assert_allclose(perm.confusion_, ref.confusion_[pt], rtol=1e-7,
                                   equal_nan=True)
        if hasattr(ref, "reliability_"):
            np.testing.assert_array_equal(perm.reliability_, ref.reliability_[pw])


# ------------------------------------------------------------------ real kernels
def _openblas_x86() -> bool:
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        blas = np.__config__.CONFIG["Build Dependencies"]["blas"]["name"]
    except Exception:          # pragma: no cover - older numpy
        return False
    return "openblas" in str(blas).lower()


_FIT_SCRIPT = """
import hashlib, json, sys
import numpy as np, toptwo
out = {}
for seed in range(8):
    model = toptwo.TopTwoModel.spammer_hammer(50, 300, 5, hammer_fraction=0.5, rng=seed)
    R = model.sample(0.02, rng=seed + 100)
    for name, est in (("T1", toptwo.TopTwo1()), ("T2", toptwo.TopTwo2())):
        top = est.fit(R).top_two_
        out[f"{name}{seed}"] = hashlib.sha256(np.ascontiguousarray(top).tobytes()).hexdigest()
    # TopTwoEM: its labels, E-step count and least certain tasks (every discrete decision
    # of its EM: extrapolations kept or not, the stop, the ties, the ranking)
    em = toptwo.TopTwoEM().fit(R)
    key = np.concatenate([em.top_two_.ravel(), [em.n_iter_], em.uncertain_tasks(100)])
    out[f"EM{seed}"] = hashlib.sha256(np.ascontiguousarray(key).tobytes()).hexdigest()
# n > 400: the Lanczos path, stopped at statistical precision (LANCZOS_TOL)
for seed in range(3):
    model = toptwo.TopTwoModel.scenario("few_smart", n_workers=450, n_tasks=2000, n_labels=5,
                                        rng=seed)
    R = model.sample(0.03, rng=seed + 100)
    for name, est in (("T1", toptwo.TopTwo1()), ("T2", toptwo.TopTwo2())):
        top = est.fit(R).top_two_
        out[f"{name}L{seed}"] = hashlib.sha256(np.ascontiguousarray(top).tobytes()).hexdigest()
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.skipif(not _openblas_x86(), reason="forcing kernels needs OpenBLAS on x86-64")
def test_identical_labels_under_other_blas_kernels():
    """The real thing: the same fits (TopTwo1, TopTwo2, TopTwoEM) under kernels every
    x86-64 CPU runs, with one and two BLAS threads, and with numpy's AVX-512 code paths
    disabled; on the dense path (n = 50) and on the Lanczos path (n = 450), whose stop at
    statistical precision must not let the kernel decide anything."""
    def run(**env):
        e = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", **env}
        out = subprocess.run([sys.executable, "-c", _FIT_SCRIPT], env=e, check=True,
                             capture_output=True, text=True)
        return json.loads(out.stdout)

    ref = run()
    variants = [dict(OPENBLAS_CORETYPE=k) for k in ("Prescott", "Nehalem", "Sandybridge")]
    variants += [dict(OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2"),
                 dict(NPY_DISABLE_CPU_FEATURES="AVX512F AVX512CD AVX512_SKX AVX512_CLX "
                                               "AVX512_CNL AVX512_ICL AVX512_SPR")]
    for env in variants:
        assert run(**env) == ref, env


# ------------------------------------------------------------------ solver accuracy
def _lanczos_vs_dense(seed: int):
    model = TopTwoModel.scenario("hard", n_workers=450, n_tasks=300, n_labels=5, rng=seed)
    R = model.sample(0.08, rng=seed + 1)
    lz = spectral.spectral_estimate(R, R, solver="lanczos")
    de = spectral.spectral_estimate(R, R, solver="dense")
    return lz, de


@pytest.mark.parametrize("seed", [0, 1])
def test_lanczos_stopping_rule_keeps_u_within_the_zeroing_tolerance(seed):
    """The Lanczos path stops at ||r|| <= 1e-7 theta_1 (``LANCZOS_TOL``): every entry of u
    then agrees with the dense eigen-solver's to within ITERATIVE_U_TOL (measured 3e-8),
    and the labels are the same."""
    lz, de = _lanczos_vs_dense(seed)
    err = np.abs(lz.left_vectors - de.left_vectors).max()
    assert err <= _linalg.ITERATIVE_U_TOL / 5, err
    np.testing.assert_array_equal(lz.top, de.top)


def test_a_looser_lanczos_stop_would_break_the_zeroing_tolerance(monkeypatch):
    # twin: stopping at a relative residual of 1e-2 leaves errors far above
    # ITERATIVE_U_TOL in u
    monkeypatch.setattr(_linalg, "LANCZOS_TOL", 1e-2)
    lz, de = _lanczos_vs_dense(0)
    assert np.abs(lz.left_vectors - de.left_vectors).max() > 10 * _linalg.ITERATIVE_U_TOL


def test_lanczos_stays_accurate_on_a_near_degenerate_spectrum():
    """Top two eigenvalues of the Gram matrix within a relative 1e-7 to 1e-2 of each
    other: the stopping rule must not stop early. A rule on the Ritz gap theta_1 - theta_2
    did (error 2e-5 in u at a relative gap of 3e-6 where the residual rule gave 1e-11),
    because early Ritz values underestimate lambda_2. The residual rule keeps the
    Davis-Kahan bound ||u - u_exact||_2 <= LANCZOS_TOL theta_1 / gap at every gap; it is
    within ITERATIVE_U_TOL only for theta_1 / gap <= 100 (no degeneracy check on this
    path, unlike the dense path's ``_degenerate_gap``)."""
    class Blocks:
        def __init__(self, M):
            self.M, self.n, self.K = M, M.shape[0], 2

        def forward(self, Y):
            return self.M @ Y

        def backward(self, X):
            return self.M.T @ X

    rng = np.random.default_rng(0)
    n, bad = 60, []
    for trial in range(50):
        Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
        gap = 10 ** rng.uniform(-7, -2)
        ev = np.concatenate([[1.0, 1.0 - gap], rng.uniform(0, 0.9, n - 2) ** 3])
        Q[:, 0] = np.ones(n) / np.sqrt(n) * 0.999 + Q[:, 0] * 0.01
        Q, _ = np.linalg.qr(Q)
        M = Q * np.sqrt(ev)
        U, sv, _ = _linalg._joint_leading_left(Blocks(M), np.zeros(1))
        err = min(np.abs(U[:, 0] - Q[:, 0]).max(), np.abs(U[:, 0] + Q[:, 0]).max())
        # the stop's own promise, checked on the true residual of the returned pair (a
        # rule that stops early, such as the Ritz-gap rule, breaks this)
        theta = sv[0] ** 2
        resid = np.linalg.norm(M @ (M.T @ U[:, 0]) - theta * U[:, 0])
        if resid > 2 * _linalg.LANCZOS_TOL * theta + 1e-13:
            bad.append((trial, gap, "residual", resid))
        # Davis-Kahan with the true gap (theta_1 = 1); the max-norm error is at most the
        # 2-norm one, and the gap closes in sign: min over +-u
        if err > _linalg.LANCZOS_TOL / gap:
            bad.append((trial, gap, err))
    assert not bad, bad
