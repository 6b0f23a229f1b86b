"""Checked claims in the notebooks: what was measured and what it was held to.

Every claim a notebook states is checked next to it, by :func:`claim`, which writes its
own message (the measured value, the comparison, the bound and why the bound is what
it is), so no expression is typed twice::

    claim(err2, "<", err1, why="TopTwo2 refines TopTwo1's labels")

When a reader changes a parameter and the claim stops holding, :class:`ClaimFailed`
says which comparison failed, with which values and (for arrays) at how many entries.
:func:`failed` builds the same kind of message for a plain ``assert`` (older notebooks).
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

__all__ = ["ClaimFailed", "brief", "claim", "failed"]

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


class ClaimFailed(AssertionError):
    """A notebook claim that does not hold (an ``AssertionError``, so pytest reports it)."""


#: The comparisons :func:`claim` knows, each applied entry by entry.
_COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
    "==": lambda a, b: (a == b) | (_isnan(a) & _isnan(b)),
    "!=": lambda a, b: ~((a == b) | (_isnan(a) & _isnan(b))),
}


_PLAIN = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
          "==": operator.eq, "!=": operator.ne}


def _isnan(x: np.ndarray) -> np.ndarray:
    return np.isnan(x) if np.issubdtype(x.dtype, np.inexact) else np.zeros(x.shape, bool)


def claim(value: Any, op: str, bound: Any, *, why: str | None = None,
          rtol: float = 1e-5, atol: float = 1e-8) -> None:
    """Check that ``value op bound`` holds (for every entry); raise :class:`ClaimFailed` if not.

    Parameters
    ----------
    value : scalar or array-like
        The measured quantity.
    op : {"<", "<=", ">", ">=", "==", "!=", "close"}
        The comparison, applied entry by entry (``value`` and ``bound`` broadcast; with
        "==" and "close" their shapes must be equal, and NaN equals NaN). "close" is
        ``numpy.isclose(value, bound, rtol, atol)``.
    bound : scalar or array-like
        What the value is held to.
    why : str, optional
        Where the bound comes from (a theorem, a derived tolerance, the setting it was
        derived for), added to the message.
    rtol, atol : float
        Tolerances of "close" (numpy's defaults).

    Examples
    --------
    >>> claim(0.02, "<", 0.05, why="Hoeffding at delta = 1e-6")
    >>> claim([0.5, 0.7], ">=", 0.6, why="the sign rule")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    toptwo.report.ClaimFailed: claim `measured >= bound` does not hold at 1 of 2 entries (first...
    """
    if op not in _COMPARISONS and op != "close":
        raise ValueError(f"`op` of claim must be one of {sorted(_COMPARISONS) + ['close']}; "
                         f"got {op!r} instead.")
    a, b = np.asarray(value), np.asarray(bound)
    if op in ("==", "close") and a.shape != b.shape and a.ndim and b.ndim:
        ok, detail = np.zeros(1, bool), f" (shapes differ: {a.shape} vs {b.shape})"
    else:
        if op == "close":
            ok = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        elif a.dtype == object or b.dtype == object:         # e.g. SymPy expressions
            ok = np.asarray(bool(_PLAIN[op](value, bound)))
        else:
            ok = np.asarray(_COMPARISONS[op](a, b))
        detail = ""
        if ok.ndim and not ok.all():
            first = tuple(int(i) for i in np.argwhere(~ok)[0])
            va = np.broadcast_to(a, ok.shape)[first]
            vb = np.broadcast_to(b, ok.shape)[first]
            detail = (f" at {int((~ok).sum())} of {ok.size} entries (first at index {first}: "
                      f"{brief(va)} vs {brief(vb)})")
    if ok.all():
        return
    parts = [f"claim `measured {'close to' if op == 'close' else op} bound` does not "
             f"hold{detail}",
             f"measured = {brief(value)}", f"bound = {brief(bound)}"]
    if op == "close":
        parts[0] += f" (rtol={rtol:g}, atol={atol:g})"
    if why is not None:
        parts.append(why)
    raise ClaimFailed("; ".join(parts))
