"""Binary conversion A^(k) (Sec. 3) and Proposition 1 [`prop:binary`] by Monte Carlo."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

import toptwo
from toptwo import TopTwoModel, binary_stack, from_binary, to_binary

from conftest import TOY_A


def test_to_binary_literal():
    A = np.array([[1, 0, 3], [2, 4, 0]])
    np.testing.assert_array_equal(to_binary(A, 1, n_labels=4).toarray(),
                                  [[-1, 0, 1], [1, 1, 0]])
    np.testing.assert_array_equal(to_binary(A, 2, n_labels=4).toarray(),
                                  [[-1, 0, 1], [-1, 1, 0]])
    np.testing.assert_array_equal(to_binary(A, 3, n_labels=4).toarray(),
                                  [[-1, 0, -1], [-1, 1, 0]])
    B = to_binary(A, 1)
    assert isinstance(B, sp.csr_array) and B.dtype == np.float64 and B.nnz == 4


def test_to_binary_k_range():
    with pytest.raises(ValueError, match=r"to_binary needs 1 <= k < K=4; got k=4"):
        to_binary(TOY_A, 4)
    with pytest.raises(ValueError, match=r"'k' parameter of to_binary must be an int >= 1; "
                                         r"got 0"):
        to_binary(TOY_A, 0)
    with pytest.raises(ValueError, match=r"`A` passed to to_binary must be 2-D"):
        to_binary(np.array([1, 2]), 1)


def test_binary_stack_length_and_input_kinds():
    stack = binary_stack(TOY_A, n_labels=6)
    assert len(stack) == 5
    for M in (sp.csr_matrix(TOY_A), toptwo.as_responses(TOY_A)):
        for a, b in zip(binary_stack(M), binary_stack(TOY_A)):
            np.testing.assert_array_equal(a.toarray(), b.toarray())


def test_from_binary_errors():
    with pytest.raises(ValueError, match=r"from_binary needs at least one matrix"):
        from_binary([])
    a1 = np.array([[1.0, -1.0]])
    with pytest.raises(ValueError, match=r"from_binary: A\^\(2\) has shape \(1, 3\), A\^\(1\) "
                                         r"has \(1, 2\)"):
        from_binary([a1, np.zeros((1, 3))])
    with pytest.raises(ValueError, match=r"from_binary: A\^\(1\) must hold only -1, 0 and \+1"):
        from_binary([np.array([[2.0, -1.0]])])
    with pytest.raises(ValueError, match=r"from_binary: A\^\(2\) is nonzero on a different set "
                                         r"of entries than A\^\(1\)"):
        from_binary([a1, np.array([[1.0, 0.0]])])
    with pytest.raises(ValueError, match=r"from_binary: entries must be non-increasing in k"):
        from_binary([np.array([[-1.0, -1.0]]), np.array([[1.0, -1.0]])])


@st.composite
def response_matrices(draw):
    K = draw(st.integers(2, 6))
    shape = draw(st.tuples(st.integers(1, 6), st.integers(1, 6)))
    A = draw(arrays(np.int64, shape, elements=st.integers(0, K)))
    if not A.any():
        A.flat[0] = draw(st.integers(1, K))
    return A, K


@settings(max_examples=60, deadline=None)
@given(response_matrices())
def test_binary_roundtrip(data):
    A, K = data
    stack = binary_stack(A, n_labels=K)
    assert len(stack) == K - 1
    dense = np.stack([M.toarray() for M in stack])            # (K-1, n, m)
    # definition: -1 if 1 <= A <= k, +1 if A > k, 0 if unanswered
    for k in range(1, K):
        expected = np.where(A == 0, 0, np.where(A > k, 1, -1))
        np.testing.assert_array_equal(dense[k - 1], expected)
    # non-increasing in k
    assert (np.diff(dense, axis=0) <= 0).all()
    back = from_binary(stack)
    assert back.n_labels == K
    np.testing.assert_array_equal(back.toarray(), A)


# ----------------------------------------------- Proposition 1 by Monte Carlo
N_REP = 20000        # independent copies of A
DELTA = 1e-6         # overall failure probability of the check


def prop1_model():
    p = np.linspace(0.1, 1.0, 8)
    q = np.array([0.75, 0.8, 0.9, 0.95, 1.0, 0.7])
    top = np.array([[1, 2], [4, 1], [2, 3], [3, 4], [1, 3], [4, 2]])
    return TopTwoModel(p, q, top, 4)


@pytest.fixture(scope="module")
def prop1_average():
    """Average of N_REP independent A^(k), for every k: shape (K-1, n, m)."""
    model = prop1_model()
    n, m, K = model.n_workers, model.n_tasks, model.n_labels
    big = TopTwoModel(np.tile(model.reliability, N_REP), model.confusion, model.top_two, K)
    A = big.sample(0.7, rng=77)
    return np.stack([to_binary(A, k, n_labels=K).toarray().reshape(N_REP, n, m).mean(axis=0)
                     for k in range(1, K)])


def within_hoeffding(average: np.ndarray, expected: np.ndarray, n_rep: int,
                     delta: float = DELTA) -> bool:
    """Hoeffding for entries in [-1, 1]: P(|mean - E| >= t) <= 2 exp(-N t^2 / 2), so
    t = sqrt(2 log(2/delta') / N) with delta' = delta / (#entries) (union bound)."""
    t = np.sqrt(2 * np.log(2 * average.size / delta) / n_rep)
    return bool(np.all(np.abs(average - expected) <= t))


def test_proposition1_monte_carlo(prop1_average):
    model, s, K = prop1_model(), 0.7, 4
    expected = np.stack([model.expected_binary(k, s) for k in range(1, K)])
    assert within_hoeffding(prop1_average, expected, N_REP)
    # and expected_binary is the rank-one form of Proposition 1
    for k in range(1, K):
        np.testing.assert_allclose(expected[k - 1] - s * (K - 2 * k) / K,
                                   2 * s * np.outer(model.reliability, model.r(k)), atol=1e-15)


def test_proposition1_checker_rejects_missing_shift(prop1_average):
    # negative twin: E[A^(k)] = 2 s p r^T without the - s (K - 2k)/K shift is rejected
    model, s, K = prop1_model(), 0.7, 4
    wrong = np.stack([2 * s * np.outer(model.reliability, model.r(k)) for k in range(1, K)])
    assert not within_hoeffding(prop1_average, wrong, N_REP)


def test_proposition1_checker_rejects_swapped_q(prop1_average):
    model, s, K = prop1_model(), 0.7, 4
    # q and 1 - q exchanged == g and h exchanged (q = 1 - q' with q' < 1/2 is not allowed)
    swapped = TopTwoModel(model.reliability, model.confusion, model.top_two[:, ::-1], K)
    wrong = np.stack([swapped.expected_binary(k, s) for k in range(1, K)])
    assert not within_hoeffding(prop1_average, wrong, N_REP)


# ------------------------------------------------- the one implementation of the rule
def test_binary_sign_table():
    table = toptwo.binary.binary_sign(np.arange(1, 5)[:, None], np.arange(1, 4)[None, :])
    np.testing.assert_array_equal(table, [[-1, -1, -1], [1, -1, -1], [1, 1, -1], [1, 1, 1]])


@pytest.mark.parametrize("offset", [0.0, 0.4])
def test_binary_csr_and_its_transpose(offset):
    model = TopTwoModel.random(7, 11, 5, rng=3)
    R = model.sample(0.5, rng=4)
    for k in range(1, 5):
        ref = to_binary(R, k).toarray()
        want = np.where(ref != 0, ref - offset, 0.0)
        M = toptwo.binary._binary_csr(R, k, offset)
        MT = toptwo.binary._binary_csr(R, k, offset, transpose=True)
        np.testing.assert_array_equal(M.toarray(), want)
        np.testing.assert_array_equal(MT.toarray(), want.T)


@pytest.mark.parametrize("offsets", [None, np.array([0.6, 0.2, -0.2, -0.6])])
def test_label_blocks_multiply_every_binary_matrix(offsets):
    model = TopTwoModel.random(9, 13, 5, rng=5)
    R = model.sample(0.4, rng=6)
    blocks = toptwo.binary.LabelBlocks(R, offsets)
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(9, 4)), rng.normal(size=(13, 4))
    F, Bk = blocks.forward(Y), blocks.backward(X)
    for k in range(1, 5):
        A = to_binary(R, k).toarray()
        if offsets is not None:
            A = np.where(A != 0, A - offsets[k - 1], 0.0)
        np.testing.assert_allclose(F[:, k - 1], A @ Y[:, k - 1], atol=1e-12)
        np.testing.assert_allclose(Bk[:, k - 1], A.T @ X[:, k - 1], atol=1e-12)
    assert blocks.Lt.indices.dtype == np.int32          # 32-bit indices where they fit


def test_both_stages_take_the_conversion_from_binary(monkeypatch):
    """Proposition 1's rule lives in toptwo.binary only: replacing it there changes what
    the spectral stage multiplies by (no second copy of the rule elsewhere)."""
    from toptwo import spectral
    assert spectral.LabelBlocks is toptwo.binary.LabelBlocks
    assert not hasattr(spectral, "_SignedPattern")
    R = TopTwoModel.random(6, 8, 4, rng=7).sample(0.6, rng=8)
    monkeypatch.setattr(toptwo.binary, "binary_sign",
                        lambda labels, k: np.where(np.asarray(labels) >= np.asarray(k),
                                                   1.0, -1.0))
    assert (toptwo.binary.LabelBlocks(R).sign[:, 0] == 1).all()        # the patched rule
    assert np.array_equal(np.unique(toptwo.binary._binary_csr(R, 1).data), [1.0])
