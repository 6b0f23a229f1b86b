"""Messages for failed claims in the notebooks: what was measured and what it was held to.

Every claim a notebook states is asserted next to it. When a reader changes a parameter
and a claim stops holding, the assert's message says which comparison failed and with
which values, instead of a bare ``AssertionError``::

    assert err2 < err1, toptwo.report.failed("err2 < err1", err2, err1)

The message is built only when the assert fails (Python evaluates an assert's message
lazily), so it costs nothing otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["brief", "failed"]

_MISSING = object()


def brief(x: Any, digits: int = 4) -> str:
    """A short description of a value: rounded numbers, or an array's shape and range."""
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.{digits}g}"
    if isinstance(x, dict):
        items = list(x.items())[:6]
        inner = ", ".join(f"{k!r}: {brief(v, digits)}" for k, v in items)
        return "{" + inner + (", ..." if len(x) > 6 else "") + "}"
    try:
        arr = np.asarray(x)
    except Exception:                      # pragma: no cover - exotic objects
        return repr(x)[:200]
    if arr.dtype == object or arr.ndim == 0:
        return repr(x)[:200]
    if arr.size == 0:
        return f"empty array of shape {arr.shape}"
    if arr.dtype == bool:
        return f"bool array of shape {arr.shape}, {int(arr.sum())} True, {int((~arr).sum())} False"
    if np.issubdtype(arr.dtype, np.number):
        flat = arr.ravel()
        head = ", ".join(f"{v:.{digits}g}" for v in flat[:6].astype(float))
        more = ", ..." if flat.size > 6 else ""
        finite = flat[np.isfinite(flat)] if np.issubdtype(arr.dtype, np.floating) else flat
        rng = (f"; min {float(finite.min()):.{digits}g}, max {float(finite.max()):.{digits}g}"
               if finite.size and flat.size > 1 else "")
        return f"[{head}{more}] (shape {arr.shape}{rng})"
    return repr(x)[:200]


def failed(claim: str, left: Any = _MISSING, right: Any = _MISSING, *,
           note: str | None = None) -> str:
    """The message of a failed ``assert``: the claim and the values it compared.

    Parameters
    ----------
    claim : str
        The asserted expression, as written.
    left, right : optional
        The two sides of the comparison (measured value and bound), when there are two.
    note : str, optional
        What a reader who changed a parameter should know: for which setting the tolerance
        was derived and how the claim is expected to move with that parameter.

    Examples
    --------
    >>> print(failed("err < 0.1", 0.25, 0.1, note="derived for s = 0.3"))
    claim `err < 0.1` does not hold; left side = 0.25; right side = 0.1; derived for s = 0.3
    """
    parts = [f"claim `{claim}` does not hold"]
    if left is not _MISSING:
        parts.append(f"left side = {brief(left)}")
    if right is not _MISSING:
        parts.append(f"right side = {brief(right)}")
    if note is not None:
        parts.append(note)
    elif left is _MISSING and right is _MISSING:
        parts.append("(see the values printed above; a changed parameter may need the "
                     "tolerance re-derived, as the text explains)")
    return "; ".join(parts)
