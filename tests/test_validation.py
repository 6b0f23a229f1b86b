"""Parameter validation: every message of toptwo._validation and of the estimators'
parameter checks, asserted with ``match=``."""

from __future__ import annotations

from numbers import Real

import numpy as np
import pytest

import toptwo
from toptwo._validation import (Interval, check_bool, check_choice, check_int, check_parameter,
                                check_probability_vector, check_rng, check_sampling_rate)

from conftest import TOY_A


# ------------------------------------------------------------------ check_rng
@pytest.mark.parametrize("rng", [None, 0, 7, np.int64(3), np.random.default_rng(1),
                                 np.random.SeedSequence(5)])
def test_check_rng_accepts(rng):
    assert isinstance(check_rng(rng, owner="f"), np.random.Generator)


def test_check_rng_int_is_reproducible_and_generator_is_shared():
    assert check_rng(3, owner="f").random() == check_rng(3, owner="f").random()
    g = np.random.default_rng(0)
    assert check_rng(g, owner="f") is g


@pytest.mark.parametrize("rng, exc, msg", [
    (True, TypeError, r"The 'rng' parameter of f must be None, a non-negative int or a "
                      r"numpy.random.Generator; got True instead"),
    (-1, ValueError, r"The 'rng' parameter of f must be a non-negative int seed; got -1"),
    (1.5, TypeError, r"got float 1.5 instead"),
    ("0", TypeError, r"got str '0' instead"),
    (np.random.RandomState(0), TypeError, r"got RandomState"),
])
def test_check_rng_refuses(rng, exc, msg):
    with pytest.raises(exc, match=msg):
        check_rng(rng, owner="f")


@pytest.mark.parametrize("est", [toptwo.TopTwo1, toptwo.TopTwo2, toptwo.baselines.MajorityVote])
@pytest.mark.parametrize("rng, exc", [(np.random.RandomState(0), TypeError), (-3, ValueError),
                                      ("seed", TypeError)])
def test_estimators_refuse_bad_rng(est, rng, exc):
    with pytest.raises(exc, match=rf"The 'rng' parameter of {est.__name__}"):
        est(rng=rng).fit(TOY_A, n_labels=4)


def test_model_and_sampler_refuse_bad_rng():
    with pytest.raises(TypeError, match=r"'rng' parameter of TopTwoModel.scenario"):
        toptwo.TopTwoModel.scenario("easy", 5, 5, 3, rng=np.random.RandomState(0))
    m = toptwo.TopTwoModel.scenario("easy", 5, 5, 3, rng=0)
    with pytest.raises(TypeError, match=r"'rng' parameter of TopTwoModel.sample"):
        m.sample(0.5, rng=0.5)


# ------------------------------------------------------- scalar parameters
def check_open_unit(value, name, *, owner):
    return check_parameter(value, [Interval(Real, 0, 1, closed="neither")], name, owner=owner)


def check_positive(value, name, *, owner):
    return check_parameter(value, [Interval(Real, 0, None, closed="neither")], name, owner=owner)


@pytest.mark.parametrize("value", [0, 1, 1.5, -0.2, 0.0, 1.0])
def test_open_unit_refuses_outside(value):
    with pytest.raises(ValueError, match=r"The 'split_rate' parameter of g must be a float in "
                                         r"the open interval \(0, 1\); got .* instead"):
        check_open_unit(value, "split_rate", owner="g")


@pytest.mark.parametrize("value, exc, msg", [
    (float("nan"), ValueError, r"'split_rate' parameter of g must be a finite float in the "
                               r"open interval \(0, 1\); got nan"),
    (float("inf"), ValueError, r"must be a finite float in .*; got inf"),
    ("0.5", TypeError, r"must be a float in the open interval \(0, 1\); got str '0.5' instead"),
    (True, TypeError, r"must be a float in the open interval \(0, 1\); got bool True"),
    (None, TypeError, r"must be a float in .*; got NoneType None"),
])
def test_open_unit_refuses_non_reals(value, exc, msg):
    with pytest.raises(exc, match=msg):
        check_open_unit(value, "split_rate", owner="g")


def test_open_unit_accepts_inside():
    assert check_open_unit(0.3, "split_rate", owner="g") == 0.3
    assert check_open_unit(np.float32(0.5), "split_rate", owner="g") == 0.5


@pytest.mark.parametrize("value", [0, -1.0, 1.5])
def test_sampling_rate(value):
    with pytest.raises(ValueError, match=r"'sampling_rate' parameter of h must be a float in the "
                                         r"interval \(0, 1\]"):
        check_sampling_rate(value, owner="h")
    assert check_sampling_rate(1, owner="h") == 1.0


@pytest.mark.parametrize("value", [0, 0.0, -0.1])
def test_positive_refuses(value):
    with pytest.raises(ValueError, match=r"The 'eta' parameter of h must be a float > 0; got"):
        check_positive(value, "eta", owner="h")


def test_check_choice_lists_allowed():
    with pytest.raises(ValueError, match=r"The 'mode' parameter of h must be one of 'a', 'b'; "
                                         r"got 'c' instead"):
        check_choice("c", "mode", ("a", "b"), owner="h")


@pytest.mark.parametrize("value, exc, msg", [
    (1.0, TypeError, r"'k' parameter of h must be an int >= 2; got float 1.0 instead"),
    (True, TypeError, r"got bool True instead"),
    (1, ValueError, r"'k' parameter of h must be an int >= 2; got 1 instead"),
])
def test_check_int(value, exc, msg):
    with pytest.raises(exc, match=msg):
        check_int(value, "k", owner="h", minimum=2)


def test_check_bool():
    with pytest.raises(TypeError, match=r"'flag' parameter of h must be True or False; got 1"):
        check_bool(1, "flag", owner="h")
    assert check_bool(np.True_, "flag", owner="h") is True


def test_check_probability_vector():
    with pytest.raises(ValueError, match=r"`p` of h must lie in \[0.0, 1.0\]; found 1.5 at "
                                         r"index 1 \(2 entries out of range\)"):
        check_probability_vector([0.5, 1.5, -1], "p", owner="h", low=0.0, high=1.0)
    with pytest.raises(ValueError, match=r"must lie in \(0.5, 1.0\]; found 0.5 at index 0"):
        check_probability_vector([0.5], "q", owner="h", low=0.5, high=1.0, low_open=True)
    with pytest.raises(ValueError, match=r"found nan at index 0"):
        check_probability_vector([np.nan], "p", owner="h", low=0.0, high=1.0)
    with pytest.raises(ValueError, match=r"`p` of h must be 1-D; got an array with shape \(1, 2\)"):
        check_probability_vector([[0.1, 0.2]], "p", owner="h", low=0.0, high=1.0)
    with pytest.raises(ValueError, match=r"`p` of h must have length 3; got length 2"):
        check_probability_vector([0.1, 0.2], "p", owner="h", low=0.0, high=1.0, length=3)
    with pytest.raises(TypeError, match=r"`p` of h must be an array of real numbers; got dtype"):
        check_probability_vector(["a"], "p", owner="h", low=0.0, high=1.0)


# --------------------------------------------------- estimator parameters
@pytest.mark.parametrize("split_rate", [0, 1, 1.5, -0.5])
def test_toptwo2_split_rate_range(split_rate):
    with pytest.raises(ValueError, match=rf"The 'split_rate' parameter of TopTwo2 must be a float "
                                         rf"in the open interval \(0, 1\); got {split_rate}"):
        toptwo.TopTwo2(split_rate=split_rate).fit(TOY_A)


def test_toptwo2_split_rate_nan():
    with pytest.raises(ValueError, match=r"'split_rate' parameter of TopTwo2 must be a finite "
                                         r"float in the open interval \(0, 1\); got nan"):
        toptwo.TopTwo2(split_rate=float("nan")).fit(TOY_A)


@pytest.mark.parametrize("est", [toptwo.TopTwo1, toptwo.TopTwo2])
@pytest.mark.parametrize("eta", [0, -1.0, 0.0, 1.5])
def test_eta_must_be_in_unit_interval(est, eta):
    with pytest.raises(ValueError, match=rf"The 'eta' parameter of {est.__name__} must be a "
                                         rf"float in \(0, 1\]; got {eta} instead\. Algorithm 1 "
                                         rf"assumes"):
        est(eta=eta).fit(TOY_A)


@pytest.mark.parametrize("est", [toptwo.TopTwo1, toptwo.TopTwo2])
def test_eta_nan_and_sample_splitting_type(est):
    with pytest.raises(ValueError, match=rf"'eta' parameter of {est.__name__} must be a finite "
                                         rf"float in \(0, 1\]; got nan"):
        est(eta=float("nan")).fit(TOY_A)
    with pytest.raises(TypeError, match=rf"'sample_splitting' parameter of {est.__name__} must "
                                        rf"be True or False; got str 'yes'"):
        est(sample_splitting="yes").fit(TOY_A)
    with pytest.raises(TypeError, match=rf"'n_top' parameter of {est.__name__} must be an int "
                                        rf">= 2; got float 2.0"):
        est(n_top=2.0).fit(TOY_A)


def test_reliability_normalization_choice():
    with pytest.raises(ValueError, match=r"The 'reliability_normalization' parameter of TopTwo2 "
                                         r"must be one of 'per_worker', 'paper'; got 'global'"):
        toptwo.TopTwo2(reliability_normalization="global").fit(TOY_A)


def test_constructor_stores_only():
    # Bad parameters are accepted by the constructor and refused by fit (sklearn contract).
    est = toptwo.TopTwo2(split_rate=3.0, eta=-1, rng="x")
    assert est.split_rate == 3.0 and est.eta == -1 and est.rng == "x"


@pytest.mark.parametrize("est", [toptwo.TopTwo1, toptwo.TopTwo2])
def test_k2_refused_as_not_identifiable(est):
    A = np.array([[1, 2, 1], [2, 2, 1]])
    with pytest.raises(ValueError, match=rf"{est.__name__} needs n_labels >= 3; got n_labels=2\. "
                                         rf"With K = 2 .* not identifiable"):
        est().fit(A)


@pytest.mark.parametrize("est", [toptwo.TopTwo1, toptwo.TopTwo2])
def test_top_t_must_be_below_k(est):
    A = np.array([[1, 2, 3], [2, 3, 1]])
    with pytest.raises(ValueError, match=rf"{est.__name__} needs n_top < n_labels \(T < K\); "
                                         rf"got n_top=3 with n_labels=3"):
        est(n_top=3).fit(A)
    with pytest.raises(ValueError, match=r"got n_top=4 with n_labels=3"):
        est(n_top=4).fit(A)
