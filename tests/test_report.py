"""Messages of failed notebook claims (``toptwo.report``)."""

import numpy as np

from toptwo.report import brief, failed


def test_failed_names_claim_values_and_note():
    msg = failed("err < 0.1", 0.25, 0.1, note="derived for s = 0.3")
    assert msg == "claim `err < 0.1` does not hold; left side = 0.25; right side = 0.1; derived for s = 0.3"


def test_failed_without_values_points_at_printed_values():
    assert "see the values printed above" in failed("a and b")
    assert failed("a and b", note="only for K = 5").endswith("only for K = 5")


def test_brief_arrays_skip_nan_in_range():
    text = brief(np.array([np.nan, 0.5, 1.0]))
    assert "min 0.5, max 1" in text and text.startswith("[nan, 0.5, 1]")
    assert brief(np.array([True, False, True])) == "bool array of shape (3,), 2 True, 1 False"
