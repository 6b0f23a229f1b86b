"""Regression tests for the lead's follow-ups to the core review."""

from __future__ import annotations

import numpy as np
import pytest

import toptwo
from toptwo.io import read_triples_csv


@pytest.mark.parametrize("bad", ["1_0", "+3", "2.0", " 3x"])
def test_csv_labels_must_be_plain_integers(tmp_path, bad):
    f = tmp_path / "a.csv"
    f.write_text(f"worker,task,label\na,t1,1\nb,t1,{bad}\n")
    with pytest.raises(ValueError, match=r"a\.csv, line 3: the label must be"):
        read_triples_csv(f)
    f.write_text("worker,task,label\na,t1,1\nb,t1,3\n")          # the valid twin passes
    assert read_triples_csv(f).nnz == 2


def test_inferred_n_labels_refuses_a_stray_huge_label():
    A = np.array([[1, 2], [3, 1_000_000]])
    with pytest.raises(ValueError, match=r"largest label in the data is 1000000 \(at worker "
                                         r"1, task 1\).*pass n_labels=K explicitly"):
        toptwo.as_responses(A)
    assert toptwo.as_responses(A, n_labels=1_000_000).n_labels == 1_000_000
    assert toptwo.as_responses(np.array([[1, 2], [3, 1000]])).n_labels == 1000


def test_top_two_errors_always_has_h_and_pair():
    out = toptwo.top_two_errors(np.array([1, 2]), np.array([[1, 3], [1, 2]]))
    assert out["g"] == 0.5 and np.isnan(out["h"]) and np.isnan(out["pair"])
    out2 = toptwo.top_two_errors(np.array([[1, 3], [2, 1]]), np.array([[1, 3], [1, 2]]))
    assert out2 == {"g": 0.5, "h": 0.5, "pair": 0.5, "n_scored": 2}


def test_top_t_confusion_clipped_to_the_models_range():
    model = toptwo.TopTwoModel.random(60, 300, 5, n_top=3, rng=5)
    A = model.sample(0.3, rng=6)
    for est in (toptwo.TopTwo1(n_top=3).fit(A), toptwo.TopTwo2(n_top=3).fit(A)):
        q = est.confusion_[np.isfinite(est.confusion_)]
        assert q.min() >= 1 / 3 and q.max() <= 1
        # the first weight of a top-3 task can be below 1/2: not clipped up to 1/2
        assert (q < 0.5).any()
