"""Every estimator has the same surface (shared base in toptwo._base)."""

from __future__ import annotations

import numpy as np
import pytest

import toptwo
from toptwo import TopTwoModel
from toptwo._validation import NotFittedError

MODEL = TopTwoModel.scenario("hard", n_workers=12, n_tasks=40, n_labels=5, rng=0)
A = MODEL.sample(0.5, rng=1)

ESTIMATORS = {name: (lambda name=name: toptwo.paper.make(name, rng=0))
              for name in toptwo.paper.ESTIMATOR_NAMES}
ESTIMATORS.update({
    "MV top3": lambda: toptwo.MajorityVote(n_top=3, rng=0),
    "OneCoinDawidSkene": lambda: toptwo.OneCoinDawidSkene(),
    "OracleMLE": lambda: toptwo.OracleMLE(MODEL.reliability, MODEL.confusion),
    "TopTwo2 split": lambda: toptwo.TopTwo2(sample_splitting=True, rng=3),
    "TopTwoEM": lambda: toptwo.TopTwoEM(max_iter=20),
})


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_same_surface(name):
    est = ESTIMATORS[name]()
    with pytest.raises(NotFittedError, match=r"is not fitted yet; call fit first"):
        est.top_two_
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
