"""Every estimator has the same surface (shared base in toptwo._base)."""

from __future__ import annotations

import collections
import inspect
import math
import numbers
import re

import numpy as np
import pytest

import toptwo
import toptwo._base
from toptwo import TopTwoModel
from toptwo._base import BaseEstimator, ParamsBase
from toptwo.baselines._base import ScoreOutputMixin
from toptwo._validation import (InstanceOf, Interval, NotFittedError, RealArray, StrOptions,
                                check_parameter, make_constraint)
from toptwo.softlabels import MLP, SoftmaxRegression

MODEL = TopTwoModel.scenario("hard", n_workers=12, n_tasks=40, n_labels=5, rng=0)
A = MODEL.sample(0.5, rng=1)

ESTIMATORS = {name: (lambda name=name: toptwo.experiments.paper.make(name, rng=0))
              for name in toptwo.experiments.paper.ESTIMATOR_NAMES}
ESTIMATORS.update({
    "MV top3": lambda: toptwo.baselines.MajorityVote(n_top=3, rng=0),
    "OneCoinDawidSkene": lambda: toptwo.baselines.OneCoinDawidSkene(),
    "OracleMLE": lambda: toptwo.OracleMLE(MODEL.reliability, MODEL.confusion),
    "TopTwo2 split": lambda: toptwo.TopTwo2(sample_splitting=True, rng=3),
    "TopTwoEM": lambda: toptwo.TopTwoEM(max_iter=20),
})


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_same_surface(name):
    est = ESTIMATORS[name]()
    with pytest.raises(NotFittedError, match=r"is not fitted yet; call fit first"):
        est.top_two_  # noqa: B018 (the access is the test)
    params = est.get_params()
    assert isinstance(params, dict) and type(est)(**params).get_params().keys() == params.keys()
    assert repr(est).startswith(type(est).__name__ + "(")
    assert est.fit(A) is est
    m, K = A.n_tasks, A.n_labels
    assert est.top_two_.shape == (m, 2) and est.top_two_.dtype.kind == "i"
    assert (est.n_workers_in_, est.n_tasks_in_, est.n_labels_in_) == (A.n_workers, m, K)
    np.testing.assert_array_equal(est.fit_predict(A), est.top_two_[:, 0])
    S = est.soft_labels()
    answered = A.task_counts() > 0
    assert S.shape == (m, K)
    np.testing.assert_allclose(S[answered].sum(axis=1), 1.0)
    assert np.isnan(S[~answered]).all()


def test_set_params_and_repr():
    est = toptwo.TopTwo2().set_params(n_refinements=3, centering="paper")
    assert est.get_params()["n_refinements"] == 3
    assert repr(est) == "TopTwo2(centering='paper', n_refinements=3)"
    with pytest.raises(ValueError, match=r"TopTwo2 has no parameter 'refine'; valid parameters"):
        est.set_params(refine=3)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_sklearn_clone(name):
    base = pytest.importorskip("sklearn.base")
    est = ESTIMATORS[name]()
    twin = base.clone(est)
    assert type(twin) is type(est) and twin is not est
    assert repr(twin) == repr(est)


# --------------------------------------------------- declared parameter constraints
# Every estimator declares ``_parameter_constraints`` (toptwo._validation's vocabulary)
# and checks them once, at the start of fit (ParamsBase._validate_params).
def _estimator_classes():
    """Every public class of toptwo with constructor parameters (ParamsBase subclasses)."""
    found, stack = set(), [ParamsBase]
    while stack:
        for sub in stack.pop().__subclasses__():
            stack.append(sub)
            if sub.__module__.startswith("toptwo.") and not sub.__name__.startswith("_") \
                    and sub not in (BaseEstimator, ScoreOutputMixin):
                found.add(sub)
    return sorted(found, key=lambda c: c.__name__)


CLASSES = _estimator_classes()
_X = np.random.default_rng(0).normal(size=(30, 3))
_T = np.eye(2)[np.arange(30) % 2]


def _make(cls, **params):
    if cls is toptwo.OracleMLE:
        params = {"reliability": MODEL.reliability, "confusion": MODEL.confusion, **params}
    return cls(**params)


def _fit(est):
    if isinstance(est, (SoftmaxRegression, MLP)):
        return est.fit(_X, _T)
    return est.fit(A)


def test_every_estimator_class_is_enumerated():
    names = {c.__name__ for c in CLASSES}
    assert names >= {"TopTwo1", "TopTwo2", "TopTwoEM", "OracleMLE", "MajorityVote",
                     "DawidSkene", "OneCoinDawidSkene", "OptDawidSkene", "EBCC", "GLAD",
                     "MACE", "MMSR", "MultiSPA", "PGD", "SoftmaxRegression", "MLP"}


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_constraints_cover_exactly_the_init_parameters(cls):
    declared = cls._parameter_constraints
    assert list(declared) and set(declared) == set(cls._param_names())
    sig = inspect.signature(cls.__init__)
    for name, constraints in declared.items():
        assert isinstance(constraints, list) and constraints, name
        for c in constraints:
            make_constraint(c)                      # a known kind of constraint
        default = sig.parameters[name].default
        if default is not inspect.Parameter.empty:  # the defaults are allowed values
            check_parameter(default, constraints, name, owner=cls.__name__)


def _invalid_values(constraints):
    """(value, text its message must show) pairs that no constraint of the list accepts."""
    out = [("bad", "'bad'")]
    for c in map(make_constraint, constraints):
        if isinstance(c, Interval):
            lo_open = c.closed in ("right", "neither")
            hi_open = c.closed in ("left", "neither")
            if c.left is not None:
                v = c.left if lo_open else c.left - 1
                out.append((v, repr(v)))
            if c.right is not None:
                v = c.right if hi_open else c.right + 1
                out.append((v, repr(v)))
            if c.kind is numbers.Integral:
                out.append((2.5, "2.5"))
            else:
                out.append((math.nan, "nan"))
        elif str(c) == "True or False":
            out.append((1, "1"))
        elif str(c).startswith("None, a non-negative int"):
            out += [(-1, "-1"), (1.5, "1.5")]
        elif isinstance(c, InstanceOf):
            out.append((toptwo.TopTwo1(), "TopTwo1()"))
        elif isinstance(c, RealArray):
            out.append(([0.7, None], "None") if c.low is None else ([0.5, 2.0], "2.0"))
        else:
            assert c is make_constraint(None) or isinstance(c, StrOptions)
    return [(v, text) for v, text in out
            if not any(make_constraint(c).accepts(v) for c in constraints)]


CASES = [(cls, name, value, text) for cls in CLASSES
         for name, cs in cls._parameter_constraints.items()
         for value, text in _invalid_values(cs)]


@pytest.mark.parametrize("cls, name, value, text", CASES,
                         ids=[f"{c.__name__}-{n}-{v!r}" for c, n, v, _ in CASES])
def test_invalid_parameter_is_refused_at_fit(cls, name, value, text):
    est = _make(cls, **{name: value})               # the constructor only stores it
    assert est.get_params()[name] is value
    with pytest.raises((TypeError, ValueError)) as info:
        _fit(est)
    msg = str(info.value)
    assert cls.__name__ in msg and (f"'{name}'" in msg or f"`{name}`" in msg), msg
    assert text in msg, msg
    # the same value through set_params on a valid estimator
    with pytest.raises(type(info.value), match=re.escape(msg.split(";")[0])):
        _fit(_make(cls).set_params(**{name: value}))


@pytest.fixture
def check_calls(monkeypatch):
    """Counts ``check_parameter`` calls per (owner, parameter) during the test."""
    calls = collections.Counter()
    real = toptwo._base.check_parameter

    def counting(value, constraints, name, *, owner):
        calls[owner, name] += 1
        return real(value, constraints, name, owner=owner)

    monkeypatch.setattr(toptwo._base, "check_parameter", counting)
    return calls


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_defaults_fit_and_each_parameter_is_checked_once(cls, check_calls):
    calls = check_calls
    _fit(_make(cls))
    own = {(cls.__name__, name): 1 for name in cls._parameter_constraints}
    # TopTwoEM fits its initial TopTwo2, which checks its own parameters in its own fit
    nested = ({("TopTwo2", name): 1 for name in toptwo.TopTwo2._parameter_constraints}
              if cls is toptwo.TopTwoEM else {})
    assert dict(calls) == {**own, **nested}


def test_nested_stages_do_not_validate_again(check_calls):
    calls = check_calls
    toptwo.baselines.MultiSPA(refine="em", max_iter=5).fit(A)             # runs DawidSkene's EM inside
    assert dict(calls) == {("MultiSPA", n): 1 for n in toptwo.baselines.MultiSPA._parameter_constraints}
    calls.clear()
    toptwo.TopTwo2(sample_splitting=True, rng=0).fit(A)          # runs Algorithm 1 inside
    assert dict(calls) == {("TopTwo2", n): 1 for n in toptwo.TopTwo2._parameter_constraints}
    # stage 1's parameters are declared once, by TopTwo1, and shared (no second literal)
    t1, t2 = toptwo.TopTwo1._parameter_constraints, toptwo.TopTwo2._parameter_constraints
    for name in t1:
        assert t2[name] is t1[name], name
    ds = toptwo.baselines.DawidSkene._parameter_constraints
    for cls in (toptwo.baselines.OneCoinDawidSkene, toptwo.baselines.OptDawidSkene):
        for name, cs in cls._parameter_constraints.items():
            assert name not in ds or cs is ds[name], (cls, name)


def test_validated_values_are_normalised():
    est = toptwo.TopTwo2(n_top=np.int64(2), eta=np.float32(0.5), sample_splitting=np.True_,
                         rng=3)
    params = est._validate_params()
    assert type(params["n_top"]) is int and type(params["eta"]) is float
    assert params["sample_splitting"] is True
    assert isinstance(params["rng"], np.random.Generator)
    assert est.n_top == np.int64(2) and est.rng == 3           # attributes unchanged
    assert toptwo.baselines.MMSR()._validate_params()["n_trim"] is None


@pytest.mark.parametrize("constraints, value, exc, msg", [
    ([None, Interval(numbers.Integral, 0, None)], -1, ValueError,
     r"The 'k' parameter of E must be None or an int >= 0; got -1 instead\."),
    ([None, Interval(numbers.Integral, 0, None)], "x", TypeError,
     r"must be None or an int >= 0; got str 'x' instead\."),
    ([Interval(numbers.Real, 0, 1, closed="left")], 1.0, ValueError,
     r"must be a float in \[0, 1\); got 1\.0 instead\."),
    ([Interval(numbers.Real, 0, None, closed="neither")], math.inf, ValueError,
     r"must be a finite float > 0; got inf instead\."),
    ([Interval(numbers.Integral, 1, None)], True, TypeError,
     r"must be an int >= 1; got bool True instead\."),
    ([StrOptions(("a", "b"))], ["a"], ValueError, r"must be one of 'a', 'b'; got \['a'\]"),
    (["boolean"], 0, TypeError, r"must be True or False; got int 0 instead\."),
    ([RealArray()], None, TypeError, r"must be an array of real numbers; got NoneType None"),
    ([RealArray(0.0, 1.0)], [[0.5]], ValueError, r"`k` of E must be 1-D"),
])
def test_constraint_messages(constraints, value, exc, msg):
    with pytest.raises(exc, match=msg):
        check_parameter(value, constraints, "k", owner="E")
