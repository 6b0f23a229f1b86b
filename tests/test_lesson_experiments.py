"""The library functions that notebooks 02-04 and their seed sweeps share."""

import numpy as np
import pytest

import toptwo
from toptwo import experiments as ex
from toptwo import theory


def test_binary_sample_mean_is_the_average_of_the_binary_matrices():
    model = toptwo.TopTwoModel.random(6, 8, 4, rng=0)
    mean = theory.binary_sample_mean(model, 0.5, 3, rng=1)
    rng = np.random.default_rng(1)
    by_hand = sum(np.stack([toptwo.to_binary(A, k).toarray() for k in range(1, 4)])
                  for A in (model.sample(0.5, rng=rng) for _ in range(3))) / 3
    assert mean.shape == (3, 6, 8)
    np.testing.assert_allclose(mean, by_hand, rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="n_samples"):
        theory.binary_sample_mean(model, 0.5, 0)


def test_singular_vector_errors_rows_and_first_order():
    model = toptwo.TopTwoModel.random(20, 60, 3, reliability_range=(0.7, 1.0), rng=2)
    rows = theory.singular_vector_errors(model, [0.3, 0.6], 2, rng=3)
    assert rows.shape == (2 * 2 * 2, 5)                    # rates x reps x (K - 1)
    assert set(rows[:, 1]) == {1.0, 2.0}
    assert np.all((rows[:, 3] >= 0) & (rows[:, 3] <= 1))   # sin theta
    first = theory.first_order_sin_theta(model, [0.3, 0.6])
    assert first.shape == (2,) and first[1] < first[0]     # more data, smaller angle


def test_paired_tolerance():
    a = np.array([[1, 2], [2, 3], [3, 1], [1, 3]])
    b = a.copy()
    assert ex.paired_tolerance(a, b) == 0.0
    b[0] = [2, 1]
    assert ex.paired_tolerance(a, b) == pytest.approx(2 * np.sqrt(0.25 / 4))
    with pytest.raises(ValueError, match=r"one shape; got \(4, 2\) and \(3, 2\)"):
        ex.paired_tolerance(a, b[:3])


def test_stored_paired_differences_with_new_x():
    from toptwo.experiments import paper

    run = paper.load("reproduce_real")
    rows = run.paired("err_pair", "color")
    xs = sorted({r[0] for v in rows.values() for r in v})
    moved = run.paired("err_pair", "color", x={x: 10 * x for x in xs})
    assert {m: [[10 * r[0], *r[1:]] for r in v] for m, v in rows.items()} == moved
    with pytest.raises(KeyError, match=r"`x` has no entry for the stored x \[4\.0"):
        run.paired("err_pair", "color", x={xs[0]: 1.0})
