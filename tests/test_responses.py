"""Responses: the gate through which every estimator reads data (as_responses,
Responses.from_triples). Every refusal is asserted with its message."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import toptwo
from toptwo import Responses, as_responses

from conftest import TOY_A


# ------------------------------------------------------------ accepted input
def test_dense_roundtrip_and_attributes(toy):
    A, K, _, _ = toy
    R = as_responses(A)
    assert R.shape == (5, 4) and R.n_labels == 4 and R.nnz == 19 and len(R) == 19
    np.testing.assert_array_equal(R.toarray(), A)
    np.testing.assert_array_equal(R.tocsr().toarray(), A)
    assert R.observed_rate == 19 / 20
    np.testing.assert_array_equal(R.task_counts(), [5, 5, 5, 4])
    np.testing.assert_array_equal(R.worker_counts(), [4, 4, 4, 4, 3])
    np.testing.assert_array_equal(R.task_label_counts()[0], [3, 2, 0, 0])
    np.testing.assert_array_equal(R.task_label_counts()[3], [0, 0, 1, 3])
    assert repr(R) == "Responses(n_workers=5, n_tasks=4, n_labels=4, nnz=19)"


def test_entries_sorted_by_worker_then_task(toy):
    R = as_responses(toy[0])
    key = R.workers.astype(np.int64) * R.n_tasks + R.tasks
    assert (np.diff(key) > 0).all()


def test_integral_floats_accepted():
    R = as_responses(TOY_A.astype(float))
    np.testing.assert_array_equal(R.toarray(), TOY_A)


@pytest.mark.parametrize("convert", [sp.csr_matrix, sp.csr_array, sp.coo_matrix, sp.coo_array,
                                     sp.csc_matrix, lambda a: as_responses(a)])
def test_dense_sparse_and_responses_agree(convert):
    R = as_responses(convert(TOY_A))
    D = as_responses(TOY_A)
    for attr in ("workers", "tasks", "labels"):
        np.testing.assert_array_equal(getattr(R, attr), getattr(D, attr))
    assert R.shape == D.shape and R.n_labels == D.n_labels


def test_sparse_explicit_zero_means_not_answered():
    M = sp.coo_array((np.array([2, 0, 3]), (np.array([0, 1, 1]), np.array([0, 0, 1]))),
                     shape=(2, 2))
    R = as_responses(M)
    assert R.nnz == 2
    np.testing.assert_array_equal(R.toarray(), [[2, 0], [0, 3]])


def test_n_labels_given_larger_than_data():
    R = as_responses(TOY_A, n_labels=7)
    assert R.n_labels == 7
    assert R.task_label_counts().shape == (4, 7)
    R2 = as_responses(as_responses(TOY_A), n_labels=6)
    assert R2.n_labels == 6


def test_responses_passthrough_is_identity():
    R = as_responses(TOY_A)
    assert as_responses(R) is R
    assert as_responses(R, n_labels=4) is R


def test_fit_caches_live_in_a_per_fit_view_not_in_the_value():
    R = Responses.from_triples([0, 1, 2, 0], [0, 0, 1, 1], [1, 2, 2, 3], n_labels=3)
    assert not hasattr(R, "_cache") and not hasattr(R, "__dict__")   # value fields only
    V = as_responses(R)
    assert V is not R and V.workers is R.workers and V.labels is R.labels   # no copy
    assert V.tocsr() is V.tocsr() and V.task_major() is V.task_major()   # kept for the fit
    assert R.tocsr() is not R.tocsr()                                     # recomputed
    np.testing.assert_array_equal(V.task_label_counts(), R.task_label_counts())
    toptwo.baselines.MajorityVote(rng=0).fit(R)
    assert not hasattr(R, "_cache")
    assert not R.task_counts().flags.writeable


def test_n_labels_checked_the_same_for_every_input_kind():
    # n_labels=4.0 is refused for a Responses exactly as for a dense array (no int(4.0))
    for A in (TOY_A, as_responses(TOY_A)):
        with pytest.raises(TypeError, match=r"The 'n_labels' parameter of fit must be an int "
                                            r">= 2; got float 4.0 instead"):
            as_responses(A, n_labels=4.0)


def test_subset_keeps_shape_and_k():
    R = as_responses(TOY_A)
    S = R.subset(R.labels == 1)
    assert S.shape == R.shape and S.n_labels == 4 and S.nnz == 3


# ---------------------------------------------------------- refused: values
@pytest.mark.parametrize("bad, msg", [
    (1.5, r"`A` passed to fit must hold integers; found 1.5 at worker 1, task 2 "
          r"\(1 non-integer or NaN entries\)\.$"),
    (np.nan, r"`A` passed to fit must hold integers; found nan at worker 1, task 2 .* "
             r"Use 0 for 'not answered', not NaN"),
    (np.inf, r"found inf at worker 1, task 2 \(1 non-integer or NaN entries\)\.$"),
])
def test_dense_non_integer_or_nan(bad, msg):
    A = TOY_A.astype(float)
    A[1, 2] = bad
    with pytest.raises(ValueError, match=msg):
        as_responses(A)


def test_sparse_non_integer():
    M = sp.csr_array(TOY_A.astype(float))
    M.data[0] = 2.5
    with pytest.raises(ValueError, match=r"`A` passed to fit must hold integers; found 2.5"):
        as_responses(M)


@pytest.mark.parametrize("A, exc, msg", [
    (np.array([["a", "b"]]), TypeError, r"`A` passed to fit must be an array of integers; "
                                         r"got dtype <U1"),
    (np.array([[True, False]]), TypeError, r"`A` passed to fit must hold integer labels; got "
                                            r"a boolean array"),
    ("12", TypeError, r"`A` passed to fit must be an array of integers; got a str"),
])
def test_dense_wrong_types(A, exc, msg):
    with pytest.raises(exc, match=msg):
        as_responses(A)


def test_negative_label_dense_and_sparse():
    A = TOY_A.copy()
    A[2, 3] = -1
    with pytest.raises(ValueError, match=r"`A` passed to fit must hold labels in 1..n_labels "
                                         r"with 0 for 'not answered'; found -1 at worker 2, "
                                         r"task 3"):
        as_responses(A)
    with pytest.raises(ValueError, match=r"labels must be in 1..n_labels with 0 for 'not "
                                         r"answered'; found -1 at worker 2, task 3"):
        as_responses(sp.csr_array(A))


def test_label_above_n_labels():
    msg = (r"labels must be in 1..n_labels with 0 for 'not answered'; found 4 at worker 0, "
           r"task 3 with n_labels=3")
    with pytest.raises(ValueError, match=msg):
        as_responses(TOY_A, n_labels=3)
    with pytest.raises(ValueError, match=msg):
        as_responses(sp.csr_matrix(TOY_A), n_labels=3)
    with pytest.raises(ValueError, match=msg):
        as_responses(as_responses(TOY_A), n_labels=3)


def test_owner_named_in_message():
    with pytest.raises(ValueError, match=r"`A` passed to MajorityVote.fit must be 2-D"):
        toptwo.baselines.MajorityVote().fit(np.array([1, 2, 3]))
    with pytest.raises(ValueError, match=r"found 4 at worker 0, task 3 with n_labels=3"):
        toptwo.TopTwo2().fit(TOY_A, n_labels=3)


# ------------------------------------------------------- refused: structure
@pytest.mark.parametrize("A, msg", [
    (np.array([1, 2, 3]), r"`A` passed to fit must be 2-D with shape \(n_workers, n_tasks\); "
                          r"got an array with shape \(3,\) instead"),
    (np.ones((2, 2, 2), dtype=int), r"must be 2-D .* got an array with shape \(2, 2, 2\)"),
    (np.int64(3), r"must be 2-D .* shape \(\) instead"),
])
def test_wrong_dimensions(A, msg):
    with pytest.raises(ValueError, match=msg):
        as_responses(A)


@pytest.mark.parametrize("A, msg", [
    (np.zeros((0, 3), dtype=int), r"`A` passed to fit is empty: shape \(0, 3\); it needs at "
                                  r"least one worker and one task"),
    (np.zeros((3, 0), dtype=int), r"is empty: shape \(3, 0\)"),
    (sp.csr_array((0, 4), dtype=int), r"is empty: shape \(0, 4\)"),
    ([], r"`A` passed to fit is empty; it must be a 2-D array"),
    (np.zeros((3, 4), dtype=int), r"`A` passed to fit holds no responses \(every entry is 0, "
                                  r"'not answered'\)"),
    (sp.csr_array((3, 4), dtype=float), r"holds no responses"),
])
def test_empty_input(A, msg):
    with pytest.raises(ValueError, match=msg):
        as_responses(A)


def test_k_below_two():
    with pytest.raises(ValueError, match=r"n_labels was not given and the largest label in the "
                                         r"data is 1, so K would be 1 < 2; pass n_labels=K"):
        as_responses(np.array([[1, 0], [1, 1]]))
    with pytest.raises(ValueError, match=r"'n_labels' parameter of fit must be an int >= 2; "
                                         r"got 1 instead"):
        as_responses(np.array([[1, 0], [1, 1]]), n_labels=1)
    assert as_responses(np.array([[1, 0], [1, 1]]), n_labels=2).n_labels == 2


def test_coo_duplicate_coordinates():
    M = sp.coo_array((np.array([1, 2, 3]), (np.array([0, 1, 1]), np.array([2, 0, 0]))),
                     shape=(2, 3))
    with pytest.raises(ValueError, match=r"The sparse matrix passed to fit: 1 \(worker, task\) "
                                         r"pair\(s\) occur more than once \(1 extra stored "
                                         r"entries out of 3\); e.g. worker 1 answered task 0 in "
                                         r"stored entry 1 \(label 2\) and in stored entry 2 "
                                         r"\(label 3\)\. scipy would add the labels"):
        as_responses(M)



def _csr_parts(indptr, indices, data, shape):
    """A CSR matrix taken as given (unsorted, repeated or explicit-zero entries kept)."""
    M = sp.csr_matrix(shape, dtype=np.asarray(data).dtype)
    M.indptr, M.indices, M.data = (np.asarray(indptr, np.int32), np.asarray(indices, np.int32),
                                   np.asarray(data))
    return M


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, float])
def test_csr_fast_path_equals_the_general_path(dtype):
    # the CSR read (no COO copy, one O(nnz) sortedness check) gives exactly what the
    # COO path gives, for canonical, unsorted and explicit-zero CSR input (issue 29)
    rng = np.random.default_rng(3)
    A = rng.integers(0, 5, size=(30, 40)) * (rng.random((30, 40)) < 0.3)
    canonical = sp.csr_matrix(A.astype(dtype))
    order = [rng.permutation(np.arange(canonical.indptr[i], canonical.indptr[i + 1]))
             for i in range(30)]
    perm = np.concatenate(order)
    unsorted = _csr_parts(canonical.indptr, canonical.indices[perm], canonical.data[perm],
                          A.shape)
    zeros = sp.csr_matrix(A.astype(dtype) + 0)
    zeros.data[::7] = 0                               # stored zeros: not answered
    for M, dense in ((canonical, A), (unsorted, A), (zeros, zeros.toarray())):
        R, C = as_responses(M), as_responses(sp.coo_array(M))
        for attr in ("workers", "tasks", "labels"):
            np.testing.assert_array_equal(getattr(R, attr), getattr(C, attr))
            assert getattr(R, attr).dtype == np.int32
        np.testing.assert_array_equal(R.toarray(), dense)


def test_csr_input_is_neither_frozen_nor_changed():
    M = sp.csr_array(TOY_A)
    before = (M.indptr.copy(), M.indices.copy(), M.data.copy())
    as_responses(M)
    for a, b in zip((M.indptr, M.indices, M.data), before):
        assert a.flags.writeable
        np.testing.assert_array_equal(a, b)


def test_csr_repeated_pair_and_malformed_csr():
    # a repeated column within a row: the duplicates message of every sparse input
    M = _csr_parts([0, 1, 3], [2, 0, 0], np.array([1, 2, 3]), (2, 3))
    with pytest.raises(ValueError, match=r"1 \(worker, task\) pair\(s\) occur more than "
                                         r"once .* e.g. worker 1 answered task 0 in stored "
                                         r"entry 1 \(label 2\) and in stored entry 2"):
        as_responses(M)
    # a column index outside the shape: left to scipy's own check (COO conversion)
    M = _csr_parts([0, 1, 2], [2, 5], np.array([1, 2]), (2, 3))
    with pytest.raises(ValueError, match="index 5 exceeds matrix dimension"):
        as_responses(M)
    # labels beyond int32 are refused with their value, not wrapped around
    M = sp.csr_array(np.array([[1, 2**40], [2, 0]], dtype=np.int64))
    with pytest.raises(ValueError, match=str(2**40)):
        as_responses(M, n_labels=3)


# ------------------------------------------------------------------ triples
def test_triples_three_arrays_and_n_by_3():
    w, t, lab = [2, 0, 1, 0], [1, 0, 1, 2], [3, 1, 2, 2]
    R = Responses.from_triples(w, t, lab)
    R2 = Responses.from_triples(np.column_stack([w, t, lab]))
    for X in (R, R2):
        assert X.shape == (3, 3) and X.n_labels == 3
        np.testing.assert_array_equal(X.toarray(), [[1, 0, 2], [0, 2, 0], [0, 3, 0]])


def test_triples_explicit_shape_and_k():
    R = Responses.from_triples([0], [0], [2], n_workers=4, n_tasks=5, n_labels=6)
    assert R.shape == (4, 5) and R.n_labels == 6 and R.nnz == 1


def test_triples_non_integer_and_nan():
    with pytest.raises(ValueError, match=r"`labels` passed to Responses.from_triples must hold "
                                         r"integers; found nan at index 1 \(1 non-integer or NaN"):
        Responses.from_triples([0, 1], [0, 0], [1.0, np.nan])
    with pytest.raises(ValueError, match=r"`tasks` passed to Responses.from_triples must hold "
                                         r"integers; found 0.5 at index 0"):
        Responses.from_triples([0, 1], [0.5, 0], [1, 2])
    with pytest.raises(ValueError, match=r"`triples` passed to Responses.from_triples must hold "
                                         r"integers; found nan at position \(0, 2\)"):
        Responses.from_triples(np.array([[0, 0, np.nan]]))


def test_triples_label_errors():
    with pytest.raises(ValueError, match=r"labels must be in 1..n_labels with 0 for 'not "
                                         r"answered'; found -2 at triple 1 \(worker 1, task 0\)"):
        Responses.from_triples([0, 1], [0, 0], [1, -2])
    with pytest.raises(ValueError, match=r"labels passed to Responses.from_triples must be in "
                                         r"1..n_labels; found 0 in triple 1 \(worker 1, task 0\)"
                                         r".*leave unanswered pairs out"):
        Responses.from_triples([0, 1], [0, 0], [1, 0])
    with pytest.raises(ValueError, match=r"found 5 at triple 1 \(worker 1, task 0\) with "
                                         r"n_labels=4"):
        Responses.from_triples([0, 1], [0, 0], [1, 5], n_labels=4)


def test_triples_index_errors():
    with pytest.raises(ValueError, match=r"worker ids passed to Responses.from_triples must "
                                         r"be >= 0; found -1 in triple 1 \(a negative id"):
        Responses.from_triples([0, -1], [0, 0], [1, 2])
    with pytest.raises(ValueError, match=r"task indices passed to Responses.from_triples must "
                                         r"be >= 0; found -3 in triple 0"):
        Responses.from_triples([0], [-3], [1], n_tasks=3, n_labels=2)
    with pytest.raises(ValueError, match=r"task index 3 in triple 0 is out of range for "
                                         r"n_tasks=3 \(indices are 0-based; leave n_tasks "
                                         r"out to relabel arbitrary ids compactly\)"):
        Responses.from_triples([0], [3], [1], n_tasks=3, n_labels=2)


def test_triples_structure_errors():
    with pytest.raises(ValueError, match=r"Responses.from_triples got no responses \(empty "
                                         r"input\)"):
        Responses.from_triples([], [], [])
    with pytest.raises(ValueError, match=r"got no responses"):
        Responses.from_triples(np.zeros((0, 3), dtype=int))
    with pytest.raises(ValueError, match=r"`triples` passed to Responses.from_triples must have "
                                         r"shape \(N, 3\) .* got shape \(2, 2\)"):
        Responses.from_triples(np.ones((2, 2), dtype=int))
    with pytest.raises(TypeError, match=r"takes either one \(N, 3\) array or three arrays"):
        Responses.from_triples([0], [0])
    with pytest.raises(ValueError, match=r"`workers`, `tasks` and `labels` passed to "
                                         r"Responses.from_triples must have the same length; got "
                                         r"2, 1 and 1"):
        Responses.from_triples([0, 1], [0], [1])
    with pytest.raises(ValueError, match=r"`workers` passed to Responses.from_triples must be "
                                         r"1-D; got shape \(1, 1\)"):
        Responses.from_triples([[0]], [0], [1])


def test_duplicates_policy_value():
    with pytest.raises(ValueError, match=r"The 'duplicates' parameter of Responses.from_triples "
                                         r"must be one of 'error', 'first', 'last'; got 'mean'"):
        Responses.from_triples([0], [0], [1], duplicates="mean")


DUP_W = [0, 1, 0, 2, 1, 0]
DUP_T = [0, 0, 0, 1, 0, 0]
DUP_L = [1, 2, 3, 1, 3, 2]   # (0, 0) answered 1, 3, 2 in that order; (1, 0) answered 2, 3


def test_duplicates_error_counts_and_shows_one():
    with pytest.raises(ValueError, match=r"^Responses.from_triples: 2 \(worker, task\) pair\(s\) "
                                         r"occur more than once \(3 extra triples out of 6\); "
                                         r"e.g. worker 0 answered task 0 in triple 0 \(label 1\) "
                                         r"and in triple 2 \(label 3\)\. Pass "
                                         r"duplicates='first' or duplicates='last'"):
        Responses.from_triples(DUP_W, DUP_T, DUP_L, n_labels=3)


@pytest.mark.parametrize("policy, expected", [("first", [[1, 0], [2, 0], [0, 1]]),
                                              ("last", [[2, 0], [3, 0], [0, 1]])])
def test_duplicates_first_last(policy, expected):
    R = Responses.from_triples(DUP_W, DUP_T, DUP_L, n_labels=3, duplicates=policy)
    assert R.nnz == 3
    np.testing.assert_array_equal(R.toarray(), expected)


# ------------------------------------------------------- round trips (hypothesis)
@st.composite
def unique_triples(draw):
    n = draw(st.integers(1, 6))
    m = draw(st.integers(1, 6))
    K = draw(st.integers(2, 5))
    cells = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, m - 1)),
                          min_size=1, max_size=n * m, unique=True))
    labels = draw(st.lists(st.integers(1, K), min_size=len(cells), max_size=len(cells)))
    w, t = (np.array(c) for c in zip(*cells))
    return n, m, K, w, t, np.array(labels)


@settings(max_examples=60, deadline=None)
@given(unique_triples())
def test_triples_matrix_triples_roundtrip(data):
    n, m, K, w, t, lab = data
    R = Responses.from_triples(w, t, lab, n_workers=n, n_tasks=m, n_labels=K)
    A = R.toarray()
    assert A.shape == (n, m)
    np.testing.assert_array_equal(A[w, t], lab)
    assert np.count_nonzero(A) == len(lab)
    back = as_responses(A, n_labels=K)
    order = np.lexsort((t, w))
    np.testing.assert_array_equal(back.workers, w[order])
    np.testing.assert_array_equal(back.tasks, t[order])
    np.testing.assert_array_equal(back.labels, lab[order])
    # and through scipy sparse
    S = as_responses(sp.coo_array((lab, (w, t)), shape=(n, m)), n_labels=K)
    np.testing.assert_array_equal(S.labels, back.labels)


@settings(max_examples=40, deadline=None)
@given(unique_triples(), st.randoms(use_true_random=False))
def test_duplicates_first_last_match_python_dict(data, rnd):
    n, m, K, w, t, lab = data
    # add repeated pairs with fresh labels at random positions
    extra = [rnd.randrange(len(w)) for _ in range(3)]
    w2 = np.r_[w, w[extra]]
    t2 = np.r_[t, t[extra]]
    l2 = np.r_[lab, [rnd.randint(1, K) for _ in extra]]
    perm = list(range(len(w2)))
    rnd.shuffle(perm)
    w2, t2, l2 = w2[perm], t2[perm], l2[perm]
    first, last = {}, {}
    for a, b, c in zip(w2, t2, l2):
        first.setdefault((a, b), c)
        last[(a, b)] = c
    for policy, ref in (("first", first), ("last", last)):
        A = Responses.from_triples(w2, t2, l2, n_workers=n, n_tasks=m, n_labels=K,
                                   duplicates=policy).toarray()
        for (a, b), c in ref.items():
            assert A[a, b] == c
        assert np.count_nonzero(A) == len(ref)


def test_label_above_int32_is_refused_not_wrapped():
    big = 2**33                      # cast to int32 it would wrap around to label 0
    with pytest.raises(ValueError, match=r"8589934592.*worker 0, task 1"):
        toptwo.as_responses(np.array([[1, big]]))
    with pytest.raises(ValueError, match=r"8589934592.*triple 1"):
        toptwo.Responses.from_triples([0, 1], [0, 0], [1, big])


def test_index_above_int32_is_refused_not_wrapped():
    with pytest.raises(ValueError, match=r"worker index 4294967296 in triple 1"):
        toptwo.Responses.from_triples([0, 2**32], [0, 0], [1, 2], n_workers=3)
    # without n_workers the ids are relabelled compactly: accepted, 2 rows
    R = toptwo.Responses.from_triples([0, 2**32], [0, 0], [1, 2])
    assert R.shape == (2, 1) and list(R.worker_ids) == [0, 2**32]
    with pytest.raises(ValueError, match=r"n_tasks=4294967297"):
        toptwo.Responses.from_triples([0, 0], [0, 1], [1, 2], n_tasks=2**32 + 1)


def test_inferred_n_labels_refuses_a_stray_huge_label():
    A = np.array([[1, 2], [3, 1_000_000]])
    with pytest.raises(ValueError, match=r"largest label in the data is 1000000 \(at worker "
                                         r"1, task 1\).*pass n_labels=K explicitly"):
        toptwo.as_responses(A)
    assert toptwo.as_responses(A, n_labels=1_000_000).n_labels == 1_000_000
    assert toptwo.as_responses(np.array([[1, 2], [3, 1000]])).n_labels == 1000
