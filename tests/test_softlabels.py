"""toptwo.softlabels: targets, calibration error and the two small models of notebook 11."""

import numpy as np
import pytest

import toptwo
from toptwo.softlabels import MLP, SoftmaxRegression, answer_distribution, expected_calibration_error


def test_answer_distribution_rows_sum_to_one_and_nan_for_unanswered():
    A = np.array([[1, 2, 0], [1, 3, 0]])
    D = answer_distribution(A, 3)
    np.testing.assert_allclose(D[0], [1, 0, 0])
    np.testing.assert_allclose(D[1], [0, 0.5, 0.5])
    assert np.isnan(D[2]).all()


def test_expected_calibration_error_on_known_inputs():
    y = np.array([0, 0, 1, 1])
    perfect = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    assert expected_calibration_error(perfect, y) == 0.0
    # confidence 0.9 everywhere, half right: |0.5 - 0.9| = 0.4
    half = np.array([[0.9, 0.1], [0.1, 0.9], [0.9, 0.1], [0.1, 0.9]])
    assert expected_calibration_error(half, y) == pytest.approx(0.4)
    with pytest.raises(ValueError, match=r"probs of shape \(n, K\) and y of shape \(n,\)"):
        expected_calibration_error(perfect, y[:3])


@pytest.mark.parametrize("make", [lambda: SoftmaxRegression(rng=0), lambda: MLP(rng=0, max_iter=60)])
def test_models_learn_separable_data_deterministically(make):
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-2, 1, (50, 2)), rng.normal(2, 1, (50, 2))])
    y = np.repeat([0, 1], 50)
    T = np.eye(2)[y]
    a, b = make().fit(X, T), make().fit(X, T)
    assert (a.predict_proba(X).argmax(axis=1) == y).mean() > 0.95
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    soft = make().fit(X, 0.7 * T + 0.15)            # soft targets: less confident outputs
    assert soft.predict_proba(X).max(axis=1).mean() < a.predict_proba(X).max(axis=1).mean()


def test_targets_must_be_distributions():
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"targets that are distributions"):
        SoftmaxRegression().fit(X, np.array([[0.5, 0.4], [1, 0], [0, 1]]))
    with pytest.raises(ValueError, match=r"X of shape \(n, d\) and targets of shape \(n, K\)"):
        MLP().fit(X, np.eye(2))
    est = toptwo.TopTwo2().fit(toptwo.TopTwoModel.random(10, 20, 4, rng=0).sample(0.5, rng=1))
    S = est.soft_labels()
    ok = ~np.isnan(S).any(axis=1)
    SoftmaxRegression(max_iter=5).fit(np.ones((ok.sum(), 2)), S[ok])   # TopTwo2's soft labels fit


def test_calibration_of_an_event_and_its_bins():
    from toptwo.softlabels import calibration_bins

    prob = np.array([0.9, 0.9, 0.2, 0.2, 1.0])
    ok = np.array([True, False, False, False, True])
    count, conf, acc = calibration_bins(prob, ok, n_bins=10)
    assert count.tolist() == [0, 0, 2, 0, 0, 0, 0, 0, 0, 3]       # 1.0 in the last bin
    assert np.isnan(conf[0]) and conf[2] == pytest.approx(0.2) and acc[9] == pytest.approx(2 / 3)
    # the same bins as the (n, K) form with the event as class 0
    two = np.column_stack([prob, 1 - prob])[:4]
    assert expected_calibration_error(prob[:4], ok[:4], n_bins=10) == pytest.approx(0.3)
    assert expected_calibration_error(two[:2], (~ok[:2]).astype(int), n_bins=10) == \
        pytest.approx(expected_calibration_error(prob[:2], ok[:2], n_bins=10))
    with pytest.raises(ValueError, match=r"one shape \(n,\); got \(5,\) and \(4,\)"):
        calibration_bins(prob, ok[:4])
