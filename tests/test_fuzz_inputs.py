"""Adversarial inputs, table-driven: every bad input raises ValueError or TypeError with a
message naming the value and where it was found; arbitrary triples (huge ids, repeated
pairs) give the same result as their canonical dense form, in memory that does not grow
with the value of an id."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import toptwo
from toptwo import Responses, as_responses
from toptwo._validation import (NotFittedError, as_float_array, check_is_fitted,
                                check_probability_vector)
from toptwo.responses import (MAX_INFERRED_LABELS, binary_labels_message,
                              check_labels_used)
from test_permutation_property import ESTIMATORS, instance  # the 16 estimators

T = Responses.from_triples


class _NA:                      # stands in for pandas.NA (same type name)
    def __repr__(self):
        return "<NA>"


_NA.__name__ = "NAType"


# (label, callable, exception type, message fragment as a regex)
CASES = [
    # -------- sizes: nothing allocates by the value of an id or of n_labels
    ("n_labels 2**40", lambda: T([0, 1], [0, 0], [1, 2], n_labels=2**40), ValueError,
     r"'n_labels' parameter of Responses.from_triples is 1099511627776, but the largest "
     r"label in the data is 2; a K above 1000 is accepted only when the data contain"),
    ("n_labels 1e8 dense", lambda: as_responses(np.array([[1, 2]]), n_labels=10**8),
     ValueError, r"'n_labels' parameter of fit is 100000000, but the largest label"),
    ("n_labels 1e8 on Responses", lambda: as_responses(T([0], [0], [2]), n_labels=10**8,
                                                        owner="TopTwo2.fit"),
     ValueError, r"'n_labels' parameter of TopTwo2.fit is 100000000"),
    ("stray label 5000", lambda: T([0, 1], [0, 0], [1, 5000]), ValueError,
     r"largest label in the data is 5000 \(at triple 1 \(worker 1, task 0\)\), so K would "
     r"be 5000 > 1000"),
    ("index mode out of range", lambda: T([0, 5], [0, 0], [1, 2], n_workers=3), ValueError,
     r"worker index 5 in triple 1 is out of range for n_workers=3"),
    ("worker_ids wrong length", lambda: T([0, 1], [0, 0], [1, 2], n_workers=2,
                                          worker_ids=["a", "b", "c"]), ValueError,
     r"`worker_ids` passed to Responses.from_triples has length 3 but n_workers=2"),
    ("n_workers a string with worker_ids", lambda: T([0], [0], [2], n_workers="1",
                                                     worker_ids=["a"]), TypeError,
     r"The 'n_workers' parameter of Responses.from_triples must be an int >= 1; got str '1'"),
    ("worker_ids too short", lambda: T([0, 1], [0, 0], [1, 2], worker_ids=["a"]), ValueError,
     r"worker index 1 in triple 1 is out of range for n_workers=1"),
    ("task_ids a string", lambda: T([0], [0], [2], task_ids="abc"), TypeError,
     r"`task_ids` passed to Responses.from_triples must be a 1-D sequence of ids; got a str"),
    # -------- values reported as given (no int64 wrap-around)
    ("uint64 label 2**63+5", lambda: as_responses(np.array([[1, 2**63 + 5]], dtype=np.uint64)),
     ValueError, r"holds 9223372036854775813 at worker 0, task 1, which is too large"),
    ("float label 1e19", lambda: as_responses(np.array([[1.0, 1e19]])), ValueError,
     r"holds 1e\+19 at worker 0, task 1, which is too large"),
    ("uint64 id 2**64-1", lambda: T(np.array([0, 2**64 - 1], dtype=np.uint64), [0, 0], [1, 2]),
     ValueError, r"`workers` passed to Responses.from_triples holds 18446744073709551615 at "
                 r"index 1, which is too large"),
    ("python int 2**70 label", lambda: as_responses([[1, 2**70]]), ValueError,
     r"holds 1180591620717411303424 at worker 0, task 1, which is too large"),
    ("int64 label above int32", lambda: as_responses(np.array([[1, 2**33]])), ValueError,
     r"found 8589934592 at worker 0, task 1"),
    # -------- dtypes
    ("timedelta labels", lambda: as_responses(np.array([[1, 2]], dtype="timedelta64[s]")),
     TypeError, r"`A` passed to fit must be an array of integers; got dtype timedelta64\[s\] "
                r"\(dates and durations"),
    ("datetime triples", lambda: T([0], [0], np.array(["2020-01-01"], dtype="datetime64[D]")),
     TypeError, r"`labels` passed to Responses.from_triples .* got dtype datetime64\[D\]"),
    ("bool matrix", lambda: as_responses(np.array([[True, False]])), TypeError,
     r"`A` passed to fit must hold integer labels; got a boolean array"),
    ("string matrix", lambda: as_responses(np.array([["1", "2"]])), TypeError,
     r"`A` passed to fit must be an array of integers; got dtype <U1"),
    ("complex matrix", lambda: as_responses(np.array([[1 + 0j, 2]])), TypeError,
     r"got dtype complex128"),
    ("str instead of array", lambda: as_responses("12"), TypeError, r"got a str"),
    ("object with a string", lambda: as_responses(np.array([[1, "x"]], dtype=object)),
     TypeError, r"must hold integers; found 'x' \(str\) at worker 0, task 1"),
    ("object with 1.5", lambda: as_responses(np.array([[1, 1.5]], dtype=object)), ValueError,
     r"must hold integers; found 1.5 \(number\) at worker 0, task 1"),
    ("pandas-like Int64 with NA", lambda: as_responses(np.array([[1, _NA()], [2, 3]],
                                                                 dtype=object)),
     ValueError, r"holds a missing value \(<NA>\) at worker 0, task 1; .*Use 0 for 'not "
                 r"answered'.*df.fillna\(0\)"),
    ("None in a list", lambda: as_responses([[1, None], [2, 3]]), ValueError,
     r"holds a missing value \(None\) at worker 0, task 1"),
    # -------- shapes and locations
    ("ragged lists", lambda: as_responses([[1, 2], [1]]), ValueError,
     r"`A` passed to fit must be a rectangular array of integers \(every row the same "
     r"length\); numpy could not build one"),
    ("ragged triples", lambda: T([[0, 0, 1], [1, 0]]), ValueError,
     r"`triples` passed to Responses.from_triples must be a rectangular array"),
    ("NaN as unanswered", lambda: as_responses(np.array([[1.0, np.nan]])), ValueError,
     r"found nan at worker 0, task 1 .*Use 0 for 'not answered', not NaN"),
    ("NaN label in triples", lambda: T([0, 1], [0, 0], [1.0, np.nan]), ValueError,
     r"found nan at index 1 .*In triples every row is an answer: leave unanswered pairs out"),
    ("sparse NaN names worker/task",
     lambda: as_responses(sp.csr_array(np.array([[0, 0, 1.0], [0, np.nan, 2]]))), ValueError,
     r"found nan at worker 1, task 1 .*Leave unanswered entries unstored"),
    ("sparse 1.5 names worker/task",
     lambda: as_responses(sp.coo_array((np.array([1.0, 1.5]), (np.array([0, 3]),
                                                               np.array([2, 4]))),
                                       shape=(5, 5))), ValueError,
     r"found 1.5 at worker 3, task 4"),
    ("sparse uint64 huge", lambda: as_responses(sp.coo_array(
        (np.array([1, 2**64 - 1], dtype=np.uint64), (np.array([0, 2]), np.array([0, 1]))),
        shape=(3, 3))), ValueError, r"holds 18446744073709551615 at worker 2, task 1"),
    # -------- masks
    ("masked triples", lambda: T([0, 1], [0, 0], np.ma.masked_array([1, 2], mask=[0, 1])),
     ValueError, r"`labels` passed to Responses.from_triples is a masked array with 1 masked "
                 r"entries \(first at index 1\); triples cannot mark an answer as missing"),
    ("negative id", lambda: T([0, -1], [0, 0], [1, 2]), ValueError,
     r"worker ids passed to Responses.from_triples must be >= 0; found -1 in triple 1"),
    # -------- float parameters (OracleMLE's p and q go through these helpers)
    ("string confusions", lambda: as_float_array(["0.9", "a"], "confusion", owner="OracleMLE"),
     TypeError, r"`confusion` of OracleMLE must be an array of real numbers; got dtype <U3"),
    ("ragged confusions", lambda: as_float_array([[0.9, 0.1], [1.0]], "confusion",
                                                 owner="OracleMLE"),
     ValueError, r"`confusion` of OracleMLE must be a rectangular array of real numbers"),
    ("None in reliabilities", lambda: check_probability_vector([0.5, None], "reliability",
                                                               owner="OracleMLE", low=0, high=1),
     TypeError, r"`reliability` of OracleMLE must be an array of real numbers; found None"),
    ("complex reliabilities", lambda: as_float_array([1j], "reliability", owner="OracleMLE"),
     TypeError, r"got dtype complex128"),
    ("masked reliabilities", lambda: as_float_array(np.ma.masked_array([0.5, 0.7], mask=[0, 1]),
                                                    "reliability", owner="OracleMLE"),
     ValueError, r"`reliability` of OracleMLE is a masked array with 1 masked entries"),
    # -------- estimators before fit
    ("MajorityVote not fitted", lambda: toptwo.baselines.MajorityVote().top_two_, NotFittedError,
     r"^MajorityVote is not fitted yet; call fit first\.$"),
    ("DawidSkene soft_labels not fitted", lambda: toptwo.baselines.DawidSkene().soft_labels(),
     NotFittedError, r"^DawidSkene is not fitted yet; call fit first\.$"),
    ("OneCoin not fitted", lambda: toptwo.baselines.OneCoinDawidSkene().reliability_, NotFittedError,
     r"^OneCoinDawidSkene is not fitted yet; call fit first\.$"),
    ("DawidSkene too many confusion entries",
     lambda: toptwo.baselines.DawidSkene().fit(T(np.arange(300), np.zeros(300, int),
                                       np.r_[1000, np.ones(299, int)])),
     ValueError, r"DawidSkene.fit would allocate n_workers x K x K = 300 x 1000 x 1000 = "
                 r"300000000 confusion-matrix entries .*use OneCoinDawidSkene"),
]


@pytest.mark.parametrize("make, exc, msg", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_table(make, exc, msg):
    with pytest.raises(exc, match=msg):
        make()


def test_not_fitted_error_is_value_and_attribute_error():
    est = toptwo.baselines.MajorityVote()
    assert not hasattr(est, "top_two_")
    with pytest.raises(ValueError):
        est.confusion_  # noqa: B018 (the access is the test)
    with pytest.raises(AttributeError, match=r"'MajorityVote' object has no attribute 'nope'"):
        est.nope  # noqa: B018 (the access is the test)
    est.fit(np.array([[1, 2], [1, 1]]))
    check_is_fitted(est, "top_two_")               # no error once fitted
    with pytest.raises(NotFittedError, match=r"^TopTwo9 is not fitted yet; call fit first\.$"):
        check_is_fitted(toptwo.baselines.MajorityVote(), "top_two_", "TopTwo9")


# ----------------------------------------------------------------- masked arrays
def test_masked_matrix_entries_are_unanswered():
    data = np.array([[1, 2, 3], [3, 99, 1]])
    mask = np.array([[0, 1, 0], [0, 1, 0]], dtype=bool)   # 2 and 99 masked
    R = as_responses(np.ma.masked_array(data, mask=mask), n_labels=3)
    np.testing.assert_array_equal(R.toarray(), [[1, 0, 3], [3, 0, 1]])
    # no masked entry: the data are used as they are
    R2 = as_responses(np.ma.masked_array(data[:, [0, 2]]))
    np.testing.assert_array_equal(R2.toarray(), data[:, [0, 2]])
    # masked NaN is fine (it is not an answer); unmasked NaN is refused
    f = np.ma.masked_array([[1.0, np.nan]], mask=[[0, 1]])
    assert as_responses(f, n_labels=2).nnz == 1
    with pytest.raises(ValueError, match=r"found nan at worker 0, task 1"):
        as_responses(np.ma.masked_array([[1.0, np.nan]], mask=[[1, 0]]))


# ------------------------------------------------------------ compact relabelling
def test_arbitrary_ids_are_relabelled_compactly_and_kept():
    R = T([10**8, 7, 2**31 - 2, 7], [2**40, 5, 5, 2**40], [1, 2, 3, 1])
    assert R.shape == (3, 2)
    np.testing.assert_array_equal(R.worker_ids, [7, 10**8, 2**31 - 2])
    np.testing.assert_array_equal(R.task_ids, [5, 2**40])
    A = R.toarray()
    assert A[1, 1] == 1 and A[0, 0] == 2 and A[2, 0] == 3 and A[0, 1] == 1


def test_dense_ids_keep_their_positions():
    w, t, lab = [2, 0, 1, 0], [1, 0, 1, 2], [3, 1, 2, 2]
    R = T(w, t, lab)
    np.testing.assert_array_equal(R.worker_ids, [0, 1, 2])
    np.testing.assert_array_equal(R.toarray(), [[1, 0, 2], [0, 2, 0], [0, 3, 0]])
    # explicit shape: positions as given, idle workers keep their rows
    R = T([0, 3], [0, 0], [1, 2], n_workers=5)
    assert R.shape == (5, 1) and R.worker_counts().tolist() == [1, 0, 0, 1, 0]


def test_duplicate_message_shows_original_ids():
    with pytest.raises(ValueError, match=r"e.g. worker 100000000 answered task 99 in triple "
                                         r"0 \(label 1\) and in triple 2 \(label 2\)"):
        T([10**8, 3, 10**8], [99, 99, 99], [1, 2, 2])


@pytest.mark.parametrize("big", [10**8, 2**31 - 2, 2**40, 2**62])
def test_no_allocation_scales_with_an_id(big):
    w = np.array([0, big, 5, big])
    t = np.array([big, 1, big, 3])
    lab = np.array([1, 2, 3, 2])
    tracemalloc.start()
    try:
        R = T(w, t, lab)
        est = toptwo.baselines.MajorityVote(rng=0).fit(R)
        ds = toptwo.baselines.OneCoinDawidSkene().fit(R)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * 2**20, peak               # < 2 MiB whatever the id
    assert R.shape == (3, 3) and est.top_two_.shape == (3, 2) and ds.top_two_.shape == (3, 2)


def test_label_bound_allows_up_to_1000_and_large_used_labels():
    assert T([0, 1], [0, 0], [1, 2], n_labels=MAX_INFERRED_LABELS).n_labels == 1000
    with pytest.raises(ValueError, match=r"is 1001, but the largest label in the data is 2"):
        T([0, 1], [0, 0], [1, 2], n_labels=MAX_INFERRED_LABELS + 1)
    # K really that large (a label 5000 occurs): accepted when passed explicitly
    assert T([0, 1], [0, 0], [1, 5000], n_labels=5000).n_labels == 5000
    with pytest.raises(ValueError, match=r"is 5001, but the largest label in the data is 5000"):
        T([0, 1], [0, 0], [1, 5000], n_labels=5001)


# ----------------------------------------------------------------- unused labels
def test_unused_labels_and_check():
    R = T([0, 1, 2], [0, 0, 1], [1, 2, 1], n_labels=3)          # binary padded to K = 3
    np.testing.assert_array_equal(R.unused_labels(), [3])
    with pytest.raises(ValueError, match=r"TopTwo2.fit needs every label 1..3 to occur in the "
                                         r"data; label\(s\) 3 never occur .* every answer "
                                         r"counts as a hit in eq. \(5\).*padding binary data "
                                         r"to K = 3.*toptwo.baselines.MajorityVote or "
                                         r"toptwo.baselines.OneCoinDawidSkene"):
        check_labels_used(R, "TopTwo2.fit")
    with pytest.raises(ValueError, match=r"--method majority or --method onecoin"):
        check_labels_used(R, "infer", cli=True)
    with pytest.warns(UserWarning, match=r"label\(s\) 3 never occur"):
        check_labels_used(R, "TopTwo2.fit", action="warn")
    with pytest.raises(ValueError, match=r"'action' parameter of check_labels_used"):
        check_labels_used(R, "TopTwo2.fit", action="ignore")
    full = T([0, 1, 2], [0, 0, 1], [1, 2, 3])
    assert full.unused_labels().size == 0
    check_labels_used(full, "TopTwo2.fit")                      # no error


def test_binary_message_names_alternatives():
    msg = binary_labels_message("TopTwo1.fit")
    assert msg.startswith("TopTwo1.fit needs n_labels >= 3; got n_labels=2.")
    assert "toptwo.baselines.MajorityVote or toptwo.baselines.OneCoinDawidSkene" in msg
    assert "--method majority" in binary_labels_message("infer", cli=True)


# ------------------------------------------------------------------- hypothesis
ids = st.one_of(st.integers(0, 5), st.integers(0, 2**62), st.sampled_from([2**31 - 2, 10**8]))


@st.composite
def messy_triples(draw):
    n = draw(st.integers(1, 12))
    w = draw(st.lists(ids, min_size=n, max_size=n))
    t = draw(st.lists(ids, min_size=n, max_size=n))
    lab = draw(st.lists(st.integers(-2, 7), min_size=n, max_size=n))
    dup = draw(st.sampled_from(["error", "first", "last"]))
    K = draw(st.one_of(st.none(), st.integers(0, 9), st.just(2**40)))
    return w, t, lab, dup, K


@settings(max_examples=150, deadline=None)
@given(messy_triples())
def test_triples_only_value_or_type_errors_and_match_dense_form(data):
    w, t, lab, dup, K = data
    try:
        R = T(w, t, lab, n_labels=K, duplicates=dup)
    except (ValueError, TypeError):
        return
    # canonical dense form: rank of each id, the kept answer per pair
    wi = {v: i for i, v in enumerate(sorted(set(w)))}
    ti = {v: j for j, v in enumerate(sorted(set(t)))}
    dense = np.zeros((len(wi), len(ti)), dtype=np.int64)
    seen = set()
    for a, b, c in zip(w, t, lab):
        if dup == "first" and (a, b) in seen:
            continue
        seen.add((a, b))
        dense[wi[a], ti[b]] = c
    np.testing.assert_array_equal(R.toarray(), dense)
    np.testing.assert_array_equal(R.worker_ids, sorted(wi))
    np.testing.assert_array_equal(R.task_ids, sorted(ti))
    D = as_responses(dense, n_labels=R.n_labels)
    a = toptwo.baselines.MajorityVote(rng=3).fit(R)
    b = toptwo.baselines.MajorityVote(rng=3).fit(D)
    np.testing.assert_array_equal(a.top_two_, b.top_two_)
    np.testing.assert_array_equal(a.confusion_, b.confusion_)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.one_of(st.integers(-3, 2**64), st.floats(allow_nan=True),
                                   st.none(), st.text(max_size=2)),
                         min_size=1, max_size=4), min_size=1, max_size=4),
       st.one_of(st.none(), st.integers(-1, 2**41)))
def test_any_nested_list_gives_value_or_type_error(rows, K):
    try:
        R = as_responses(rows, n_labels=K)
    except (ValueError, TypeError):
        return
    assert R.nnz >= 1 and R.n_labels >= 2


def test_pandas_nullable_int64_dataframe():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"t0": [1, 2, None], "t1": [2, 3, 1]}, dtype="Int64")
    with pytest.raises(ValueError, match=r"holds a missing value \(<NA>\) at worker 2, task 0; "
                                         r".*df.fillna\(0\)"):
        as_responses(df)
    np.testing.assert_array_equal(as_responses(df.fillna(0)).toarray(), [[1, 2], [2, 3], [0, 1]])
    full = pd.DataFrame({"t0": [1, 2, 3], "t1": [2, 3, 1]}, dtype="Int64")
    np.testing.assert_array_equal(as_responses(full).toarray(), [[1, 2], [2, 3], [3, 1]])


@pytest.mark.parametrize("cls", [toptwo.TopTwo1, toptwo.TopTwo2, toptwo.baselines.MajorityVote])
def test_huge_ids_small_memory_same_result_as_dense(cls):
    """Worker or task id 2**31-2 costs memory for the responses only, not for the id.

    An allocation sized by the id would take 16 GiB in TopTwo2, 64 GiB in MajorityVote.
    """
    model = toptwo.TopTwoModel.scenario("easy", n_workers=20, n_tasks=40, n_labels=4, rng=1)
    A = model.sample(0.7, rng=2)
    w = A.workers.astype(np.int64)
    t = A.tasks.astype(np.int64)
    w[w == 3], w[w == 5] = 2**31 - 2, 10**8
    t[t == 7], t[t == 8] = 2**40, 2**31 - 2
    tracemalloc.start()
    try:
        R = T(w, t, A.labels)
        est = cls(rng=0).fit(R)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20, peak
    assert R.shape == (20, 40)
    dense = cls(rng=0).fit(as_responses(R.toarray(), n_labels=R.n_labels))
    np.testing.assert_array_equal(est.top_two_, dense.top_two_)
    np.testing.assert_allclose(est.confusion_, dense.confusion_, rtol=0, atol=0)


def test_memory_check_would_catch_a_size_set_by_an_id():
    """Negative twin: sizing the matrix by an id (index mode, task 10**6) is visible."""
    tracemalloc.start()
    try:
        R = T([0, 1, 2], [0, 10**6, 5], [1, 2, 3], n_tasks=10**6 + 1)
        toptwo.baselines.MajorityVote(rng=0).fit(R)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak > 4 * 2**20


# ===================================================================== issue 27 classes
# One generator per class of finding of issue 27, so that they stay fixed.

@st.composite
def tie_heavy_matrices(draw):
    """Small response matrices with few answers per task (many ties), K in 3..6."""
    seed = draw(st.integers(0, 2**32 - 1))
    gen = np.random.default_rng(seed)
    K = int(gen.integers(3, 7))
    n, m = int(gen.integers(2, 9)), int(gen.integers(2, 15))
    A = np.where(gen.random((n, m)) < gen.uniform(0.2, 0.8), gen.integers(1, K + 1, (n, m)), 0)
    A[gen.integers(0, n), :] = np.where(A.any(axis=0), A[gen.integers(0, n)], 1)
    A[:, (A > 0).sum(axis=0) == 0] = 1
    return A, K, gen


@settings(max_examples=60, deadline=None)
@given(tie_heavy_matrices())
def test_fuzz_majority_vote_equivariant_under_permutations(data):
    A, K, gen = data
    ref = toptwo.baselines.MajorityVote(rng=7, tie_break="content").fit(A, n_labels=K)
    pw, pt = gen.permutation(A.shape[0]), gen.permutation(A.shape[1])
    est = toptwo.baselines.MajorityVote(rng=7, tie_break="content").fit(A[pw][:, pt], n_labels=K)
    np.testing.assert_array_equal(est.top_two_, ref.top_two_[pt])
    # triples in a shuffled order, with ids: the same answer per task id
    w, t = np.nonzero(A)
    o = gen.permutation(w.size)
    R = T(w[o] * 7 + 3, t[o] * 5 + 1, A[w, t][o], n_labels=K)
    got = dict(zip(R.task_ids.tolist(), toptwo.baselines.MajorityVote(rng=7, tie_break="content").fit(R)
                   .top_two_.tolist()))
    assert got == {5 * j + 1: ref.top_two_[j].tolist() for j in np.unique(t)}


SINGLE_ANSWER_ESTIMATORS = {
    "MajorityVote": lambda: toptwo.baselines.MajorityVote(rng=0),
    "MMSR": lambda: toptwo.baselines.MMSR(rng=0),
    "PGD": lambda: toptwo.baselines.PGD(),
    "MultiSPA": lambda: toptwo.baselines.MultiSPA(),
    "OptDawidSkene": lambda: toptwo.baselines.OptDawidSkene(),
}


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(sorted(SINGLE_ANSWER_ESTIMATORS)))
def test_fuzz_single_answers_are_used(seed, name):
    # a lone worker, or one answer per task: the answer given is the estimate
    gen = np.random.default_rng(seed)
    K, m = int(gen.integers(3, 7)), int(gen.integers(1, 8))
    labels = gen.integers(1, K + 1, m)
    lone = labels[None, :]
    diagonal = np.diag(labels) if m > 1 else lone
    for A in (lone, diagonal):
        with np.errstate(all="ignore"):
            est = SINGLE_ANSWER_ESTIMATORS[name]().fit(A, n_labels=K)
        np.testing.assert_array_equal(est.top_two_[:, 0], labels, err_msg=name)
        assert np.isfinite(est.confusion_).all(), name


@settings(max_examples=40, deadline=None)
@given(tie_heavy_matrices(), st.sampled_from(["TopTwo1", "TopTwo2"]))
def test_fuzz_no_nan_confusion_for_answered_tasks(data, name):
    A, K, _ = data
    R = as_responses(A, n_labels=K)
    if R.unused_labels().size:
        return                                   # refused by check_labels_used
    est = {"TopTwo1": toptwo.TopTwo1, "TopTwo2": lambda: toptwo.TopTwo2(rng=0)}[name]()
    try:
        est.fit(A, n_labels=K)
    except ValueError:
        return                                   # e.g. too few answers: a clear refusal
    answered = R.task_counts() > 0
    ranked = answered & (est.top_two_[:, 0] > 0)
    assert np.isfinite(est.confusion_[ranked]).all()
    assert np.isfinite(est.soft_labels()[ranked]).all()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["label", "worker", "task", "order"]))
def test_fuzz_corrupt_responses_refused_at_the_gate(seed, what):
    gen = np.random.default_rng(seed)
    R = toptwo.TopTwoModel.random(6, 10, 4, rng=gen).sample(0.8, rng=gen)
    w, t, lab = R.workers.copy(), R.tasks.copy(), R.labels.copy()
    e = int(gen.integers(0, R.nnz))
    with pytest.raises(ValueError, match="read-only"):
        R.labels[e] = 9                           # the gate's arrays cannot change
    if what == "label":
        lab[e] = int(gen.choice([0, 5, 99, -1]))
    elif what == "worker":
        w[e] = 6 + int(gen.integers(0, 3))
    elif what == "task":
        t[e] = -1
    else:
        if R.nnz < 2:
            return
        w, t = w[::-1].copy(), t[::-1].copy()
    bad = Responses(w, t, lab, shape=R.shape, n_labels=4)
    with pytest.raises(ValueError, match=r"`A` passed to MajorityVote\.fit \(a Responses\)"):
        toptwo.baselines.MajorityVote(rng=0).fit(bad)


@settings(max_examples=3, deadline=None)
@given(st.integers(500, 1000), st.integers(0, 2**32 - 1))
def test_fuzz_large_k_memory_bounded(K, seed):
    gen = np.random.default_rng(seed)
    n, m = int(gen.integers(50, 120)), 120
    w = np.concatenate([gen.choice(n, 10, replace=False) for _ in range(m)])
    t = np.repeat(np.arange(m), 10)
    lab = gen.integers(1, K + 1, w.size)
    R = T(w, t, lab, n_labels=K)
    tracemalloc.start()
    try:
        toptwo.TopTwo1().fit(R, n_labels=K) if not R.unused_labels().size else \
            toptwo.baselines.MajorityVote(rng=0).fit(R)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 40 * (R.nnz + (n + m) * K) + 64 * 2**20


# ------------------------------------------------------------- the CLI's promises
_NAME_CHARS = st.sampled_from(list("ab-_.é \n\t\r\x1b") + ["\u2028"])


@settings(max_examples=40, deadline=None)
@given(st.text(_NAME_CHARS, min_size=1, max_size=12), st.sampled_from(["", "/", "x" * 260]))
def test_fuzz_cli_output_names_one_line_nothing_written(tmp_path_factory, name, tail):
    from toptwo.__main__ import main
    import contextlib
    import io
    import os
    folder = tmp_path_factory.mktemp("names")
    src = folder / "in.csv"
    src.write_text("worker,task,label\na,t1,1\nb,t1,2\nc,t2,3\na,t2,3\n")
    out = (os.path.join(str(folder), "missing dir", name) if tail == ""
           else os.path.join(str(folder), name) + tail)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(["infer", str(src), "--method", "majority", "-o", out])
    assert status == 2
    assert len(err.getvalue().splitlines()) == 1, err.getvalue()
    assert sorted(os.listdir(folder)) == ["in.csv"]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_fuzz_cli_shuffled_file_same_rows(tmp_path_factory, seed):
    # the CLI numbers tasks by first appearance: a shuffled file must give the same
    # line for every task (majority vote's ties were broken by position)
    from toptwo.__main__ import main
    import contextlib
    import io
    gen = np.random.default_rng(seed)
    K = int(gen.integers(3, 6))
    rows = [f"w{i},t{j},{gen.integers(1, K + 1)}" for j in range(12)
            for i in gen.choice(8, int(gen.integers(1, 4)), replace=False)]
    folder = tmp_path_factory.mktemp("shuffle")
    outs = []
    for k in range(2):
        order = gen.permutation(len(rows)) if k else np.arange(len(rows))
        path = folder / f"in{k}.csv"
        path.write_text("worker,task,label\n" + "\n".join(rows[i] for i in order) + "\n")
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
            assert main(["infer", str(path), "--method", "majority", "--n-labels",
                         str(K)]) == 0
        outs.append(sorted(buf.getvalue().splitlines()[1:]))
    assert outs[0] == outs[1]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["infer", "demo", "--method", "x", "--seed", "-3", "--force",
                                 "--uncertain", "0", "--n-labels", "k", "-o", "--bogus",
                                 "--label-base", "2", "\n"]), max_size=5))
def test_fuzz_cli_argument_errors_are_one_line(argv):
    from toptwo.__main__ import main
    import contextlib
    import io
    if argv[:1] == ["demo"] and all(a in ("demo", "--force") for a in argv):
        return
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            status = main(argv)
        except SystemExit as exc:          # never: main returns a status
            raise AssertionError(f"SystemExit {exc.code}") from None
    if status == 2:
        lines = err.getvalue().strip().splitlines()
        assert len(lines) == 1 and "error" in lines[0] or argv == [], err.getvalue()


@settings(max_examples=48, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(sorted(ESTIMATORS)))
def test_fuzz_every_estimator_equivariant_under_permutations(seed, name):
    # issue 27: the seeded property test (tests/test_permutation_property.py) on instances
    # hypothesis draws: permuting workers and tasks permutes every estimator's top two
    A, K = instance(seed)
    ref = ESTIMATORS[name](seed % 7).fit(A, n_labels=K)
    gen = np.random.default_rng(seed)
    pw, pt = gen.permutation(A.shape[0]), gen.permutation(A.shape[1])
    est = ESTIMATORS[name](seed % 7).fit(A[pw][:, pt], n_labels=K)
    np.testing.assert_array_equal(est.top_two_, ref.top_two_[pt],
                                  err_msg=f"{name}, instance seed {seed}")
