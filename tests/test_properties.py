"""Cross-cutting properties: every input kind gives identical results, and the
estimators are equivariant under relabelling workers and tasks."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import toptwo
from toptwo import TopTwoModel

INPUT_KINDS = {
    "dense": lambda R: R.toarray(),
    "csr_matrix": lambda R: sp.csr_matrix(R.toarray()),
    "csr_array": lambda R: R.tocsr(),
    "coo_array": lambda R: sp.coo_array(R.toarray()),
    "coo_matrix": lambda R: sp.coo_matrix(R.toarray()),
    "Responses": lambda R: R,
}


def estimators(model):
    return {
        "TopTwo1": lambda: toptwo.TopTwo1(),
        "TopTwo1-split": lambda: toptwo.TopTwo1(sample_splitting=True, rng=3),
        "TopTwo2": lambda: toptwo.TopTwo2(rng=0),
        "TopTwo2-split": lambda: toptwo.TopTwo2(sample_splitting=True, rng=4),
        "MajorityVote": lambda: toptwo.baselines.MajorityVote(rng=1),
        "OracleMLE": lambda: toptwo.OracleMLE(model.reliability, model.confusion),
    }


ESTIMATOR_NAMES = ["TopTwo1", "TopTwo1-split", "TopTwo2", "TopTwo2-split", "MajorityVote",
                   "OracleMLE"]


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_input_kinds_give_identical_results(name, small_model, small_responses):
    make = estimators(small_model)[name]
    ref = make().fit(small_responses.toarray(), n_labels=small_model.n_labels)
    for kind, convert in INPUT_KINDS.items():
        est = make().fit(convert(small_responses), n_labels=small_model.n_labels)
        np.testing.assert_array_equal(est.top_two_, ref.top_two_, err_msg=kind)
        np.testing.assert_array_equal(est.confusion_, ref.confusion_, err_msg=kind)
        if hasattr(ref, "reliability_"):
            np.testing.assert_array_equal(est.reliability_, ref.reliability_, err_msg=kind)


def test_n_labels_never_observed_is_respected():
    # label 5 never occurs: passing n_labels=5 changes K (and the shift of Alg. 1)
    model = TopTwoModel.random(20, 40, 5, rng=0)
    R = model.sample(0.6, rng=1)
    R4 = R.subset(R.labels < 5)
    est = toptwo.TopTwo2(rng=0).fit(R4.toarray(), n_labels=5)
    assert est.n_labels_in_ == 5 and est.soft_labels().shape == (40, 5)
    assert toptwo.TopTwo2(rng=0).fit(R4.toarray()).n_labels_in_ == 4


# ------------------------------------------------------------ equivariance
@st.composite
def permuted_instances(draw):
    seed = draw(st.integers(0, 10_000))
    rng = np.random.default_rng(seed)
    K = int(rng.integers(3, 6))
    model = TopTwoModel.random(int(rng.integers(8, 25)), int(rng.integers(10, 40)), K,
                               rng=rng)
    R = model.sample(float(rng.uniform(0.4, 0.9)), rng=rng)
    pw = rng.permutation(model.n_workers)
    pt = rng.permutation(model.n_tasks)
    return model, R.toarray(), pw, pt


def no_tie_tasks(A, K):
    """Tasks whose top-three label counts are strictly ordered (no tie affects the top two)."""
    counts = toptwo.as_responses(A, n_labels=K).task_label_counts()
    c = -np.sort(-counts, axis=1)
    return (c[:, 0] > c[:, 1]) & (c[:, 1] > c[:, 2])


@settings(max_examples=15, deadline=None)
@given(permuted_instances())
def test_majority_vote_equivariance(inst):
    model, A, pw, pt = inst
    K = model.n_labels
    ref = toptwo.baselines.MajorityVote(rng=0).fit(A, n_labels=K)
    # permuting workers leaves every count, hence the whole output, unchanged
    same = toptwo.baselines.MajorityVote(rng=0).fit(A[pw], n_labels=K)
    np.testing.assert_array_equal(same.top_two_, ref.top_two_)
    # permuting tasks permutes the output (tasks free of ties; ties are random per task)
    perm = toptwo.baselines.MajorityVote(rng=0).fit(A[:, pt], n_labels=K)
    np.testing.assert_array_equal(perm.counts_, ref.counts_[pt])
    ok = no_tie_tasks(A, K)[pt]
    np.testing.assert_array_equal(perm.top_two_[ok], ref.top_two_[pt][ok])


@settings(max_examples=15, deadline=None)
@given(permuted_instances())
def test_oracle_mle_equivariance(inst):
    model, A, pw, pt = inst
    K = model.n_labels
    ref = toptwo.OracleMLE(model.reliability, model.confusion).fit(A, n_labels=K)
    perm = toptwo.OracleMLE(model.reliability[pw], model.confusion[pt]).fit(A[pw][:, pt],
                                                                              n_labels=K)
    np.testing.assert_array_equal(perm.top_two_, ref.top_two_[pt])


@settings(max_examples=15, deadline=None)
@given(permuted_instances())
def test_toptwo1_equivariance_without_splitting(inst):
    model, A, pw, pt = inst
    K = model.n_labels
    ref = toptwo.TopTwo1().fit(A, n_labels=K)
    perm = toptwo.TopTwo1().fit(A[pw][:, pt], n_labels=K)
    np.testing.assert_array_equal(perm.top_two_, ref.top_two_[pt])
    np.testing.assert_allclose(perm.confusion_raw_, ref.confusion_raw_[pt], rtol=1e-8,
                               atol=1e-10)
    assert perm.norm_p_ == pytest.approx(ref.norm_p_, rel=1e-8)
    np.testing.assert_allclose(perm.result_.left_vectors, ref.result_.left_vectors[:, pw],
                               atol=1e-10)
