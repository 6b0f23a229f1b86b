"""toptwo.reference (Algorithms 1 and 2 as printed, dense) equals the fast estimators.

Every configuration runs on N_INSTANCES small random instances of eq. (1) (6-15 workers,
10-39 tasks, K = 3..5, s = 0.5-0.9, every worker and task answered, one connected
worker-task graph: the reference's stated domain). Labels must be identical. q_hat and
the package's q (``confusion_raw_``) may differ only by round-off: both take u^(k) from a
dense LAPACK routine (SVD here, eigh of the Gram matrix there), which agree to about
1e-13 on these sizes, so Q_TOL = 1e-9 leaves a factor > 1000. p_hat is a ratio of
counts computed the same way: P_TOL = 1e-12. The leave-one-out p_hat (the package's
default) divides by a sum of chances c_ij, real numbers like q_hat that the package adds
on a grid of 2^-32 (an error of at most 2^-33 per answer, so that the sum is exact in any
order): LOO_P_RTOL = 1e-7 relative leaves a factor > 100 over the largest difference
measured on these instances (4e-10).
"""

import numpy as np
import pytest

from toptwo import OracleMLE, TopTwo1, TopTwo2, TopTwoModel
from toptwo import reference as ref

N_INSTANCES = 24
Q_TOL = 1e-9
P_TOL = 1e-12
LOO_P_RTOL = 1e-7


def instances(count=N_INSTANCES):
    """(seed, A, K, model) for the first ``count`` seeds whose A answers every worker and task."""
    out, seed = [], 0
    while len(out) < count:
        g = np.random.default_rng(seed)
        n, m, K = int(g.integers(6, 16)), int(g.integers(10, 40)), int(g.integers(3, 6))
        model = TopTwoModel.random(n, m, K, reliability_range=(0.2, 1.0), rng=g)
        A = model.sample(float(g.uniform(0.5, 0.9)), rng=g).toarray()
        if (A > 0).any(axis=0).all() and (A > 0).any(axis=1).all():
            out.append((seed, A, K, model))
        seed += 1
    return out


INSTANCES = instances()

# name: (TopTwo1 parameters, algorithm1 options); "paper" is Algorithm 1 as printed
PER_K = dict(left_vector="per_k")                  # Algorithm 1's own u^(k)
POOLED = dict(left_vector="stacked", sign_rule="sum")  # the package's default stage 1
CONFIGS_1 = {
    "paper": (dict(sample_splitting=True, centering="paper", **PER_K), dict()),
    "paper_eta1": (dict(sample_splitting=True, centering="paper", eta=1.0, **PER_K),
                   dict(eta=1.0)),
    "defaults": (dict(), dict(sample_splitting=False, centering="observed", **POOLED)),
    "defaults_eta1": (dict(eta=1.0), dict(sample_splitting=False, centering="observed",
                                          eta=1.0, **POOLED)),
    "per_k": (PER_K, dict(sample_splitting=False, centering="observed")),
    "sign_sum": (dict(sign_rule="sum", **PER_K),
                 dict(sample_splitting=False, centering="observed", sign_rule="sum")),
    "averaged": (dict(left_vector="averaged", sign_rule="paper"),
                 dict(sample_splitting=False, centering="observed", left_vector="averaged")),
    "stacked_paper_sign": (dict(left_vector="stacked", sign_rule="paper"),
                           dict(sample_splitting=False, centering="observed",
                                left_vector="stacked")),
    "observed_split": (dict(sample_splitting=True, **PER_K), dict(centering="observed")),
}
# name: (TopTwo2 parameters, algorithm2 options); "paper" is Algorithm 2 as printed up to
# the package's clipping of p_hat and q_hat before eq. (6) (needed for its logarithms)
CONFIGS_2 = {
    "paper": (dict(sample_splitting=True, centering="paper", reliability_normalization="paper",
                   reliability_estimator="moment", **PER_K), dict()),
    "defaults": (dict(), dict(sample_splitting=False, centering="observed",
                              reliability="leave_one_out", **POOLED)),
    "moment": (dict(reliability_estimator="moment"),
               dict(sample_splitting=False, centering="observed", normalization="per_worker",
                    **POOLED)),
    "per_k": (PER_K, dict(sample_splitting=False, centering="observed",
                          reliability="leave_one_out")),
    "paper_centring_loo": (dict(centering="paper", **PER_K),
                           dict(sample_splitting=False, reliability="leave_one_out")),
    "observed_split": (dict(sample_splitting=True, **PER_K), dict(centering="observed",
                                                                  reliability="leave_one_out")),
}


def assert_same_q(q_package, q_reference, where):
    assert np.array_equal(np.isnan(q_package), np.isnan(q_reference)), where
    diff = np.nanmax(np.abs(q_package - q_reference), initial=0.0)
    assert diff <= Q_TOL, f"{where}: |q_package - q_reference| = {diff:.2e} > {Q_TOL:.0e}"


@pytest.mark.parametrize("name", CONFIGS_1)
def test_algorithm1_equals_toptwo1(name):
    params, options = CONFIGS_1[name]
    for seed, A, K, _ in INSTANCES:
        est = TopTwo1(rng=seed, **params).fit(A, K)
        out = ref.algorithm1(A, K, rng=seed, **options)
        where = f"config {name}, seed {seed}"
        assert (est.result_.components <= 0).all(), f"{where}: not one component"
        np.testing.assert_array_equal(out.top_two, est.top_two_, err_msg=where)
        assert_same_q(est.confusion_raw_, out.q_hat, where)
        if not params.get("sample_splitting"):
            # the package divides v by 2 s' (its l estimates ||p||_2; see design notes)
            assert abs(out.l - 2 * est.norm_p_) <= Q_TOL * out.l, where


@pytest.mark.parametrize("name", CONFIGS_2)
def test_algorithm2_equals_toptwo2(name):
    params, options = CONFIGS_2[name]
    for seed, A, K, _ in INSTANCES:
        est = TopTwo2(rng=seed, **params).fit(A, K)
        out = ref.algorithm2(A, K, rng=seed, **options)
        where = f"config {name}, seed {seed}"
        np.testing.assert_array_equal(out.top_two, est.top_two_, err_msg=where)
        np.testing.assert_array_equal(out.stage1.top_two, est.stage1_.top[:, :2], err_msg=where)
        assert_same_q(est.confusion_raw_, out.q_hat, where)
        if est.reliability_estimator == "leave_one_out":
            np.testing.assert_allclose(out.p_hat, est.reliability_, rtol=LOO_P_RTOL,
                                       atol=P_TOL, err_msg=where)
        else:
            np.testing.assert_allclose(out.p_hat, est.reliability_, rtol=0, atol=P_TOL,
                                       err_msg=where)


def test_oracle_mle_equals_package():
    for seed, A, K, model in INSTANCES:
        est = OracleMLE(model.reliability, model.confusion).fit(A, K)
        top_two = ref.oracle_mle(A, model.reliability, model.confusion, K)
        np.testing.assert_array_equal(top_two, est.top_two_, err_msg=f"seed {seed}")


def test_instances_exercise_the_special_cases():
    """The instances reach trimming, tasks without data in C, and ties of eq. (6)."""
    trimmed = unseen = ties = 0
    for seed, A, K, _ in INSTANCES:
        out = ref.algorithm1(A, K, eta=1.0, rng=seed)
        trimmed += bool((out.u != out.u_tilde).any())
        unseen += bool((out.top_two == 0).any())
        # a task answered with one label only: h of eq. (6) is decided by the tie rule
        ties += any(np.unique(A[A[:, j] > 0, j]).size == 1 for j in range(A.shape[1]))
    assert trimmed >= 5 and unseen >= 3 and ties >= 3, (trimmed, unseen, ties)


def test_comparison_detects_a_different_algorithm():
    """The equality checks can fail: the paper's centring vs TopTwo1's default differ."""
    differ = 0
    for _, A, K, _ in INSTANCES:
        out = ref.algorithm1(A, K, sample_splitting=False, centering="paper")
        est = TopTwo1().fit(A, K)
        differ += not (np.array_equal(out.top_two, est.top_two_)
                       and np.allclose(out.q_hat, est.confusion_raw_, atol=Q_TOL))
    assert differ >= N_INSTANCES // 2, f"only {differ} of {N_INSTANCES} instances differ"


def test_paper_presets_are_the_printed_algorithms():
    # TopTwo1.paper() / TopTwo2.paper(): Algorithms 1 and 2 as printed, one call away
    for seed, A, K, _ in INSTANCES[:8]:
        where = f"seed {seed}"
        est1 = TopTwo1.paper(rng=seed).fit(A, K)
        out1 = ref.algorithm1(A, K, rng=seed)
        np.testing.assert_array_equal(out1.top_two, est1.top_two_, err_msg=where)
        assert_same_q(est1.confusion_raw_, out1.q_hat, where)
        est2 = TopTwo2.paper(rng=seed).fit(A, K)
        out2 = ref.algorithm2(A, K, rng=seed)
        np.testing.assert_array_equal(out2.top_two, est2.top_two_, err_msg=where)
        np.testing.assert_allclose(out2.p_hat, est2.reliability_, rtol=0, atol=P_TOL,
                                   err_msg=where)
    assert TopTwo2.paper(eta=0.5).eta == 0.5                    # the others stay settable
