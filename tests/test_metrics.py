"""top_two_errors: the paper's error rates for g, h and the pair; sin_theta."""

from __future__ import annotations

import math

import numpy as np
import pytest

import toptwo

from toptwo import top_two_errors
from toptwo.metrics import sin_theta


def test_known_small_case():
    truth = np.array([[1, 2], [3, 1], [2, 4], [4, 3]])
    est = np.array([[1, 2], [3, 2], [4, 2], [4, 3]])
    err = top_two_errors(est, truth)
    assert err == {"g": 0.25, "h": 0.5, "pair": 0.5, "n_scored": 4}


def test_swapped_pair_counts_as_two_errors():
    err = top_two_errors(np.array([[2, 1]]), np.array([[1, 2]]))
    assert err["g"] == err["h"] == err["pair"] == 1.0


def test_unknown_truth_is_left_out():
    truth = np.array([[1, 2], [0, 0], [3, 0], [2, 1]])
    est = np.array([[1, 3], [4, 4], [3, 1], [1, 2]])
    err = top_two_errors(est, truth)
    # g scored on tasks 0, 2, 3: wrong on 3 -> 1/3; h and pair on tasks 0, 3: both wrong -> ...
    assert err["n_scored"] == 3
    assert err["g"] == pytest.approx(1 / 3)
    assert err["h"] == pytest.approx(1.0)          # task 0: 3 != 2; task 3: 2 != 1
    assert err["pair"] == pytest.approx(1.0)


def test_estimate_zero_counts_as_wrong():
    err = top_two_errors(np.array([[0, 0], [1, 2]]), np.array([[1, 2], [1, 2]]))
    assert err["g"] == 0.5 and err["pair"] == 0.5


def test_nothing_scored_gives_nan():
    err = top_two_errors(np.array([[1, 2]]), np.array([[0, 0]]))
    assert math.isnan(err["g"]) and math.isnan(err["h"]) and math.isnan(err["pair"])
    assert err["n_scored"] == 0


def test_one_column_inputs():
    err = top_two_errors(np.array([1, 2, 3]), np.array([1, 2, 2]))
    assert err["g"] == pytest.approx(1 / 3) and np.isnan(err["pair"]) and np.isnan(err["h"])


def test_shape_mismatch():
    with pytest.raises(ValueError, match=r"top_two_errors: estimate has 3 tasks, truth has 2; "
                                         r"they must describe the same tasks"):
        top_two_errors(np.ones((3, 2), int), np.ones((2, 2), int))


def test_non_integer_labels():
    with pytest.raises(TypeError, match=r"top_two_errors needs integer labels; got dtypes "
                                        r"float64 and int64"):
        top_two_errors(np.ones((2, 2)), np.ones((2, 2), dtype=np.int64))


def test_top_two_errors_always_has_h_and_pair():
    out = toptwo.top_two_errors(np.array([1, 2]), np.array([[1, 3], [1, 2]]))
    assert out["g"] == 0.5 and np.isnan(out["h"]) and np.isnan(out["pair"])
    out2 = toptwo.top_two_errors(np.array([[1, 3], [2, 1]]), np.array([[1, 3], [1, 2]]))
    assert out2 == {"g": 0.5, "h": 0.5, "pair": 0.5, "n_scored": 2}


# ------------------------------------------------------------------------ sin_theta
def test_sin_theta():
    assert sin_theta([1, 0], [0, 3]) == pytest.approx(1.0)
    assert sin_theta([1, 1], [-2, -2]) == pytest.approx(0.0, abs=1e-8)
    assert sin_theta([1, 0], [1, 1]) == pytest.approx(np.sqrt(0.5))
    with pytest.raises(ValueError, match="two nonzero vectors"):
        sin_theta([0, 0], [1, 1])
    with pytest.raises(ValueError, match="same length; got 2 and 3"):
        sin_theta([1, 0], [1, 1, 1])
