"""Issue 27: a Responses cannot be changed behind the gate; the gate's messages name
"`A` passed to X.fit" for every input kind; Decimal and Fraction are treated alike."""

from __future__ import annotations

import copy
import pickle
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

import toptwo
from toptwo import Responses, as_responses

from test_permutation_property import ESTIMATORS


@pytest.fixture
def R():
    return toptwo.TopTwoModel.random(8, 12, 4, rng=0).sample(0.7, rng=1)


def test_arrays_are_read_only_and_attributes_cannot_be_rebound(R):
    for name in ("workers", "tasks", "labels"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(R, name)[0] = 9
    with pytest.raises(AttributeError, match="Responses are immutable: 'labels' cannot be set"):
        R.labels = np.full(R.nnz, 9)
    with pytest.raises(AttributeError, match="immutable"):
        R.n_labels = 2
    V = as_responses(R)                                     # the fit's view, too
    with pytest.raises(ValueError, match="read-only"):
        V.labels[0] = 9
    # from_triples on the user's arrays leaves those arrays writeable
    w, t, lab = np.array([0, 1, 1]), np.array([0, 0, 1]), np.array([1, 2, 3])
    Responses.from_triples(w, t, lab)
    lab[0] = 2


def test_copies_and_pickles_keep_working(R):
    for S in (pickle.loads(pickle.dumps(R)), copy.deepcopy(R), copy.copy(R),
              pickle.loads(pickle.dumps(as_responses(R)))):
        np.testing.assert_array_equal(S.toarray(), R.toarray())
        assert S.n_labels == R.n_labels and not S.labels.flags.writeable


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_directly_built_bad_responses_are_refused_at_the_gate(name):
    bad = Responses(np.array([0, 0, 1, 2]), np.array([0, 1, 0, 1]), np.array([1, 9, 2, 3]),
                    shape=(3, 2), n_labels=4)
    with pytest.raises(ValueError, match=r"`A` passed to \w+\.fit \(a Responses\) holds "
                                         r"label 9 at entry 1 \(worker 0, task 1\); "
                                         r"allowed: 1\.\.4"):
        ESTIMATORS[name]().fit(bad)
    unsorted = Responses(np.array([1, 0]), np.array([0, 0]), np.array([1, 2]), shape=(2, 1),
                         n_labels=3)
    with pytest.raises(ValueError, match="not sorted by \\(worker, task\\)"):
        ESTIMATORS[name]().fit(unsorted)


@pytest.mark.parametrize("kind", ["dense", "csr", "coo"])
def test_label_messages_name_the_argument_for_every_input_kind(kind):
    A = np.array([[1, 7], [2, 0]])
    A = {"dense": A, "csr": sp.csr_array(A), "coo": sp.coo_matrix(A)}[kind]
    with pytest.raises(ValueError, match=r"^`A` passed to TopTwo2\.fit: labels must be in "
                                         r"1\.\.n_labels .*found 7 at worker 0, task 1 with "
                                         r"n_labels=4\."):
        toptwo.TopTwo2().fit(A, n_labels=4)
    B = sp.csr_array(np.array([[1, -1], [2, 0]])) if kind != "dense" else np.array([[1, 3000]])
    with pytest.raises(ValueError, match=r"^`A` passed to TopTwo2\.fit"):
        toptwo.TopTwo2().fit(B)


def test_decimal_and_fraction_alike():
    for kind in (Decimal, Fraction):
        A = [[kind(1), kind(2)], [kind(3), kind(0)]]
        np.testing.assert_array_equal(as_responses(A).toarray(), [[1, 2], [3, 0]])
        with pytest.raises(ValueError, match="must hold integers"):
            as_responses([[kind(1), kind(3) / kind(2)]])
    # exact: a Fraction whose float is whole is still not a whole number
    with pytest.raises(ValueError, match="must hold integers"):
        as_responses([[Fraction(2**60 + 1, 2), 1]])
    with pytest.raises(ValueError, match="must hold integers"):
        as_responses([[Decimal("NaN"), 1]])
