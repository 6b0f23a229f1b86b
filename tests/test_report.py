"""Messages of failed notebook claims (``toptwo.report``)."""

import numpy as np
import pytest

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


def test_claim_passes_silently_and_fails_with_values():
    from toptwo.report import ClaimFailed, claim

    assert claim(0.02, "<", 0.05) is None
    claim(np.array([1.0, np.nan]), "==", np.array([1.0, np.nan]))     # NaN equals NaN
    claim(0.3001, "close", 0.3, atol=1e-3)
    with pytest.raises(ClaimFailed, match=r"claim `measured >= bound` does not hold at 1 of "
                                          r"2 entries \(first at index \(0,\): 0\.5 vs 0\.6\); "
                                          r"measured = \[0\.5, 0\.7\].*bound = 0\.6; the sign rule$"):
        claim([0.5, 0.7], ">=", 0.6, why="the sign rule")
    with pytest.raises(AssertionError, match=r"measured < bound.*measured = 0\.2; bound = 0\.1$"):
        claim(0.2, "<", 0.1)
    with pytest.raises(ClaimFailed, match=r"shapes differ: \(2,\) vs \(3,\)"):
        claim([1, 2], "==", [1, 2, 3])
    with pytest.raises(ClaimFailed, match=r"close to bound` does not hold \(rtol=1e-05"):
        claim(0.3, "close", 0.31)


def test_claim_refuses_an_unknown_comparison():
    from toptwo.report import claim

    with pytest.raises(ValueError, match=r"`op` of claim must be one of .*; got '=<' instead"):
        claim(1, "=<", 2)


def test_claim_compares_objects_with_python_operators():
    import sympy as sp

    from toptwo.report import ClaimFailed, claim

    x = sp.Symbol("x")
    claim(sp.expand((x + 1) ** 2 - x ** 2 - 2 * x - 1), "==", 0)
    with pytest.raises(ClaimFailed, match="measured == bound"):
        claim(sp.expand((x + 1) ** 2 - x ** 2), "==", 0)
