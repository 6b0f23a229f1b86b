"""Issue 27: every estimator uses every answer (a lone worker, one answer per task) and
never returns NaN for an answered task."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from test_permutation_property import ESTIMATORS

#: Models that cannot be identified from one worker or one answer per task and learn a
#: relabelling (EM on confusion matrices / subtypes): known limit, see the report.
#: OPT-D&S and MultiSPA-EM with confusion="one_coin" end in OneCoinDawidSkene's EM.
RELABELLING = {"DawidSkene", "OneCoinDawidSkene", "EBCC", "OptDawidSkene one_coin",
               "MultiSPA em"}
#: TopTwo1/TopTwo2/TopTwoEM need every label to occur (check_labels_used): [[3]] refused.
NEEDS_ALL_LABELS = {"TopTwo1", "TopTwo2", "TopTwoEM"}

CASES = {
    "lone answer": (np.array([[3]]), 3),
    "one answer per task": (np.array([[3, 0, 0], [0, 1, 0], [0, 0, 2]]), 3),
    "lone worker": (np.array([[3, 1, 2, 2]]), 3),
}


def _fit(name, A, K):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ESTIMATORS[name]().fit(A, n_labels=K)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", [n for n in ESTIMATORS if n not in RELABELLING])
def test_single_answers_are_used(name, case):
    A, K = CASES[case]
    if name in NEEDS_ALL_LABELS and len(np.unique(A[A > 0])) < K:
        with pytest.raises(ValueError, match="needs every label"):
            _fit(name, A, K)
        return
    est = _fit(name, A, K)
    for j in range(A.shape[1]):
        given = np.unique(A[:, j][A[:, j] > 0])
        if given.size == 1:
            assert est.top_two_[j, 0] == given[0], (name, case, j, est.top_two_[j])
    assert np.isfinite(np.asarray(est.confusion_, float)).all(), (name, case)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_never_nan_for_an_answered_task(name):
    # a Latin square: every label equally often from every worker, so the spectral
    # step sees no signal (l <= 0) and eq. (4) is undefined
    A = np.array([[1, 2, 3], [2, 3, 1], [3, 1, 2]])
    est = _fit(name, A, 3)
    assert (est.top_two_ > 0).all()
    assert np.isfinite(np.asarray(est.confusion_, float)).all(), est.confusion_
    if hasattr(est, "soft_labels"):
        assert np.isfinite(est.soft_labels()).all()


def test_toptwo1_latin_square_confusion_is_one_half():
    import toptwo
    A = np.array([[1, 2, 3], [2, 3, 1], [3, 1, 2]])
    est = toptwo.TopTwo1().fit(A)
    assert np.isnan(est.confusion_raw_).all()          # eq. (4) undefined: l = 0
    np.testing.assert_array_equal(est.confusion_, 0.5)  # "cannot separate": equal shares
