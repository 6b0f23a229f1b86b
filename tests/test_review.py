"""Regression tests from the pre-release review of the core (one test per defect found)."""

import numpy as np
import pytest

import toptwo
from toptwo import spectral


# ---------------------------------------------------------------- spectral paths
def _fit_both_paths(monkeypatch, A, **kw):
    """TopTwo1 on the joint-Lanczos path (n > 400) and on the dense-Gram path."""
    out = []
    for limit in (400, 10**6):
        monkeypatch.setattr(spectral, "DENSE_GRAM_MAX_WORKERS", limit)
        out.append(toptwo.TopTwo1(**kw).fit(A))
    return out


@pytest.mark.parametrize("centering", ["observed", "paper"])
def test_paths_agree_when_many_workers_are_idle(monkeypatch, centering):
    # 450 workers, 250 of them without a single response: their rows of X^(k) are zero
    # (observed centring), so the exact u^(k) is 0 there. Rounding noise of the Lanczos
    # path on those entries used to decide the paper's sign rule (count of positive
    # entries) and flip u^(k): g error 0.755 (n > 400 path) vs 0.155 (dense path).
    model = toptwo.TopTwoModel.random(450, 200, 4, rng=0)
    A = model.sample(0.1, rng=100)
    A = A.subset(A.workers < 200)
    lanczos, dense = _fit_both_paths(monkeypatch, A, centering=centering)
    assert np.array_equal(lanczos.top_, dense.top_)
    np.testing.assert_allclose(lanczos.confusion_raw_, dense.confusion_raw_, atol=1e-8)
    np.testing.assert_allclose(lanczos.result_.left_vectors, dense.result_.left_vectors,
                               atol=1e-8)
    # companion: the check above does detect a sign flip
    flipped = -dense.result_.left_vectors
    assert not np.allclose(lanczos.result_.left_vectors, flipped, atol=1e-8)


def test_idle_workers_get_exact_zero_in_u(monkeypatch):
    model = toptwo.TopTwoModel.random(450, 200, 4, rng=1)
    A = model.sample(0.1, rng=101)
    A = A.subset(A.workers < 200)
    for est in _fit_both_paths(monkeypatch, A):
        assert (est.result_.left_vectors[:, 200:] == 0).all()


# ---------------------------------------------------------------- int32 storage
def test_label_above_int32_is_refused_not_wrapped():
    big = 2**33                      # stored as int32 this used to become label 0
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


# ---------------------------------------------------------------- messages
@pytest.mark.parametrize("bad, exc", [("a", TypeError), (None, TypeError),
                                      (-1.0, ValueError), (float("nan"), ValueError)])
def test_refinement_shrinkage_message(bad, exc):
    with pytest.raises(exc, match=r"'refinement_shrinkage' parameter of TopTwo2"):
        toptwo.TopTwo2(refinement_shrinkage=bad).fit(np.array([[1, 2, 3], [1, 2, 2]]))


A_SMALL = np.array([[1, 2, 3], [1, 2, 2]])


def test_oracle_refuses_scalar_confusion():
    with pytest.raises(ValueError, match=r"`confusion` of OracleMLE.*shape \(3,\) or "
                                         r"\(3, T\).*got shape \(\)"):
        toptwo.OracleMLE([0.5, 0.5], 0.7).fit(A_SMALL)


def test_oracle_refuses_one_column_confusion():
    # used to return a (3, 1) "top_two_"
    with pytest.raises(ValueError, match=r"2 <= T < K=3.*got shape \(3, 1\)"):
        toptwo.OracleMLE([0.5, 0.5], np.ones((3, 1))).fit(A_SMALL)


def test_oracle_refuses_out_of_range_weights():
    with pytest.raises(ValueError, match=r"`confusion` of OracleMLE.*\[0, 1\].*1.5"):
        toptwo.OracleMLE([0.5, 0.5], np.array([[1.5, -0.5]] * 3)).fit(A_SMALL)


def test_plugin_mle_validates_reliability_length():
    R = toptwo.as_responses(A_SMALL)
    with pytest.raises(ValueError, match=r"`reliability` of plugin_mle must have length 2"):
        toptwo.plugin_mle(R, np.array([0.5, 0.5, 0.5]), np.full(3, 0.7))
    with pytest.raises(ValueError, match=r"`reliability` of plugin_mle.*\[0, 1\).*1.0"):
        toptwo.plugin_mle(R, np.array([1.0, 0.5]), np.full(3, 0.7))


def test_plugin_mle_accepts_dense_input_like_every_entry_point():
    R = toptwo.as_responses(A_SMALL)
    p, q = np.array([0.5, 0.4]), np.full(3, 0.7)
    assert np.array_equal(toptwo.plugin_mle(A_SMALL, p, q), toptwo.plugin_mle(R, p, q))
    # NaN reliabilities stay allowed (documented: weight 0)
    toptwo.plugin_mle(R, np.array([np.nan, 0.4]), q)


def test_estimate_reliability_validates_top_shape():
    R = toptwo.as_responses(A_SMALL)
    with pytest.raises(ValueError, match=r"`top` of estimate_reliability must have shape "
                                         r"\(n_tasks, T\) = \(3, T\).*got shape \(1, 2\)"):
        toptwo.estimate_reliability(R, np.array([[1, 2]]))


@pytest.mark.parametrize("kw", [{"spammer_fraction": "a"}])
def test_model_random_fraction_message(kw):
    with pytest.raises(TypeError, match=r"'spammer_fraction' parameter of TopTwoModel.random"):
        toptwo.TopTwoModel.random(5, 5, 3, rng=0, **kw)


def test_spammer_hammer_fraction_message():
    with pytest.raises(TypeError, match=r"'hammer_fraction' parameter of "
                                        r"TopTwoModel.spammer_hammer"):
        toptwo.TopTwoModel.spammer_hammer(5, 5, 3, hammer_fraction="a", rng=0)
