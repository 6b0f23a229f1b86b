"""Input validation shared by every public entry point (scipy ``_iv`` style).

One function per kind of argument; every message names the argument, quotes the
constraint and shows the offending value, in scikit-learn's phrasing
"must be ...; got ... instead".
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

def check_rng(rng: Any, *, owner: str) -> np.random.Generator:
    """Resolve ``rng`` (None, a non-negative int, or a Generator) to a Generator.

    ``numpy.random.RandomState`` and the global seed are refused on purpose
    (Scientific Python SPEC 7): every random draw in ``toptwo`` comes from an explicit Generator.
    """
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"The 'rng' parameter of {owner} must be None, a non-negative int "
                        f"or a numpy.random.Generator; got {rng!r} instead.")
    if isinstance(rng, numbers.Integral):
        if rng < 0:
            raise ValueError(f"The 'rng' parameter of {owner} must be a non-negative int seed; "
                             f"got {rng} instead.")
        return np.random.default_rng(int(rng))
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    raise TypeError(f"The 'rng' parameter of {owner} must be None, a non-negative int "
                    f"or a numpy.random.Generator; got {type(rng).__name__} {rng!r} instead.")


def _rectangular(x: Any, subject: str, what: str) -> np.ndarray:
    """``np.asarray(x)``; a ragged or unconvertible input becomes a ValueError naming
    ``subject`` (e.g. "`A` of TopTwo2.fit") and the ``what`` it must hold."""
    try:
        return np.asarray(x)
    except (ValueError, TypeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{subject} must be a rectangular array of {what} (every row the "
                         f"same length); numpy could not build one: {first}") from None


def check_open_unit(value: Any, name: str, *, owner: str) -> float:
    """A float in the open interval (0, 1) (split rates, sampling rates below 1)."""
    v = _check_real(value, name, owner=owner)
    if not 0.0 < v < 1.0:
        raise ValueError(f"The '{name}' parameter of {owner} must be a float in the open "
                         f"interval (0, 1); got {value!r} instead.")
    return v


def check_sampling_rate(value: Any, name: str = "sampling_rate", *, owner: str) -> float:
    """A float in (0, 1]: the probability s that a (worker, task) pair is observed."""
    v = _check_real(value, name, owner=owner)
    if not 0.0 < v <= 1.0:
        raise ValueError(f"The '{name}' parameter of {owner} must be a float in the interval "
                         f"(0, 1]; got {value!r} instead.")
    return v


def check_positive(value: Any, name: str, *, owner: str) -> float:
    """A finite float > 0 (for example eta in eta*sqrt(n) <= ||p||_2)."""
    v = _check_real(value, name, owner=owner)
    if not v > 0.0:
        raise ValueError(f"The '{name}' parameter of {owner} must be a float > 0; "
                         f"got {value!r} instead.")
    return v


def check_choice(value: Any, name: str, choices: tuple, *, owner: str) -> Any:
    if value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"The '{name}' parameter of {owner} must be one of {allowed}; "
                         f"got {value!r} instead.")
    return value


def check_int(value: Any, name: str, *, owner: str, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"The '{name}' parameter of {owner} must be an int >= {minimum}; "
                        f"got {type(value).__name__} {value!r} instead.")
    if value < minimum:
        raise ValueError(f"The '{name}' parameter of {owner} must be an int >= {minimum}; "
                         f"got {value} instead.")
    return int(value)


def check_n_top(value: Any, n_labels: int, *, owner: str, minimum: int) -> int:
    """T, a number of answers ranked per task: an int in ``minimum..n_labels``."""
    T = check_int(value, "n_top", owner=owner, minimum=minimum)
    if T > n_labels:
        raise ValueError(f"The 'n_top' parameter of {owner} must be <= n_labels={n_labels}; "
                         f"got {T} instead.")
    return T


def check_bool(value: Any, name: str, *, owner: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"The '{name}' parameter of {owner} must be True or False; "
                        f"got {value!r} instead.")
    return bool(value)


def check_probability_vector(x: Any, name: str, *, owner: str, low: float, high: float,
                             low_open: bool = False, length: int | None = None) -> np.ndarray:
    """A 1-D float array with entries in [low, high] (or (low, high] if ``low_open``)."""
    arr = as_float_array(x, name, owner=owner)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` of {owner} must be 1-D; got an array with shape "
                         f"{arr.shape} instead.")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"`{name}` of {owner} must have length {length}; "
                         f"got length {arr.shape[0]} instead.")
    bad = ~np.isfinite(arr) | (arr > high) | ((arr <= low) if low_open else (arr < low))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        lo = "(" if low_open else "["
        raise ValueError(f"`{name}` of {owner} must lie in {lo}{low}, {high}]; found "
                         f"{float(arr[i])!r} at index {i} ({int(bad.sum())} entries out of range).")
    return arr


def as_float_array(x: Any, name: str, *, owner: str) -> np.ndarray:
    """A float array from array-like, refused with the argument's name when it is not one.

    Strings, booleans-as-objects, complex numbers, dates, ragged nested lists and masked
    arrays with masked entries are refused (TypeError / ValueError naming ``name`` and
    ``owner``) instead of numpy's "could not convert string to float".
    """
    if isinstance(x, (str, bytes)):
        raise TypeError(f"`{name}` of {owner} must be an array of real numbers; got a "
                        f"{type(x).__name__}.")
    if np.ma.isMaskedArray(x):
        if np.ma.getmaskarray(x).any():
            raise ValueError(f"`{name}` of {owner} is a masked array with "
                             f"{int(np.ma.getmaskarray(x).sum())} masked entries; every "
                             f"entry is needed.")
        x = np.ma.getdata(x)
    arr = _rectangular(x, f"`{name}` of {owner}", "real numbers")
    if arr.dtype == object:
        bads = [v for v in arr.reshape(-1).tolist()
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real)]
        if bads:
            bad = bads[0]
            raise TypeError(f"`{name}` of {owner} must be an array of real numbers; found "
                            f"{bad!r} ({type(bad).__name__}).")
        return arr.astype(float)
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_) \
            or np.issubdtype(arr.dtype, np.complexfloating) or arr.dtype.kind in "mM":
        raise TypeError(f"`{name}` of {owner} must be an array of real numbers; "
                        f"got dtype {arr.dtype} instead.")
    return arr.astype(float)


def check_id_names(ids: Any, name: str, size: Any, size_name: str, owner: str):
    """``worker_ids``/``task_ids``: a 1-D sequence whose length matches ``size`` if given."""
    if ids is None:
        return None
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"`{name}` passed to {owner} must be a 1-D sequence of ids; got a "
                        f"{type(ids).__name__}.")
    try:
        n = len(ids)
    except TypeError:
        raise TypeError(f"`{name}` passed to {owner} must be a 1-D sequence of ids; got "
                        f"{type(ids).__name__} instead.") from None
    if np.ndim(ids) != 1:
        raise ValueError(f"`{name}` passed to {owner} must be 1-D; got shape "
                         f"{np.shape(ids)} instead.")
    if size is not None and not isinstance(size, (bool, np.bool_)) and n != size:
        raise ValueError(f"`{name}` passed to {owner} has length {n} but {size_name}={size}; "
                         f"there must be one id per row/column.")
    return ids


_INT64_LIMIT = 2 ** 63


def _is_missing(x: Any) -> bool:
    """None, float NaN, pandas.NA or NaT (without importing pandas)."""
    if x is None:
        return True
    if isinstance(x, float) and x != x:
        return True
    return type(x).__name__ in ("NAType", "NaTType")


def default_where(pos: tuple[int, ...]) -> str:
    return f"index {pos[0]}" if len(pos) == 1 else f"position {pos}"


def as_int_array(x: Any, name: str, *, owner: str, where=None, masked: str = "refuse",
                  nan_hint: str = "") -> np.ndarray:
    """Integer (int64) array from array-like; integral floats accepted, anything else refused.

    ``where(pos)`` turns a position tuple into the location used in messages (default
    "index i" / "position (i, j)"). A masked array is refused (``masked="refuse"``) or its
    masked entries become 0, "not answered" (``masked="unanswered"``). Values are reported
    as given: nothing is wrapped around to int64 before a message is written.
    """
    where = default_where if where is None else where
    if isinstance(x, (str, bytes)):
        raise TypeError(f"`{name}` passed to {owner} must be an array of integers; got a "
                        f"{type(x).__name__}.")
    if np.ma.isMaskedArray(x):
        mask = np.ma.getmaskarray(x)
        if mask.any() and masked == "refuse":
            pos = tuple(int(i) for i in np.argwhere(mask)[0])
            raise ValueError(f"`{name}` passed to {owner} is a masked array with "
                             f"{int(mask.sum())} masked entries (first at {where(pos)}); "
                             f"triples cannot mark an answer as missing: leave those rows "
                             f"out (e.g. x.compressed()).")
        x = x.filled(0) if mask.any() else np.ma.getdata(x)
    arr = _rectangular(x, f"`{name}` passed to {owner}", "integers")
    kind = arr.dtype.kind
    if kind == "b":
        raise TypeError(f"`{name}` passed to {owner} must hold integer labels; got a boolean "
                        f"array.")
    if kind in "mM":
        raise TypeError(f"`{name}` passed to {owner} must be an array of integers; got dtype "
                        f"{arr.dtype} (dates and durations are not labels or ids).")
    if kind == "O":
        arr = _object_to_int(arr, name, owner=owner, where=where, nan_hint=nan_hint)
        kind = "i"
    if kind == "u":
        big = arr > _INT64_LIMIT - 1
        if big.any():
            pos = tuple(int(i) for i in np.argwhere(big)[0])
            raise ValueError(f"`{name}` passed to {owner} holds {int(arr[pos])} at "
                             f"{where(pos)}, which is too large (integers must be below "
                             f"2**63).")
        return arr.astype(np.int64)
    if kind == "i":
        return arr.astype(np.int64, copy=False)
    if kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            pos = tuple(int(i) for i in np.argwhere(bad)[0])
            value = arr[pos].item()
            hint = nan_hint if value != value else ""
            raise ValueError(f"`{name}` passed to {owner} must hold integers; found "
                             f"{value!r} at {where(pos)} ({int(bad.sum())} non-integer or "
                             f"NaN entries).{hint}")
        big = np.abs(arr) >= _INT64_LIMIT
        if big.any():
            pos = tuple(int(i) for i in np.argwhere(big)[0])
            raise ValueError(f"`{name}` passed to {owner} holds {arr[pos].item()!r} at "
                             f"{where(pos)}, which is too large (integers must be below "
                             f"2**63 in absolute value).")
        return arr.astype(np.int64)
    raise TypeError(f"`{name}` passed to {owner} must be an array of integers; got dtype "
                    f"{arr.dtype} instead.")


def _object_to_int(arr: np.ndarray, name: str, *, owner: str, where, nan_hint: str) -> np.ndarray:
    """Object array (pandas nullable Int64, lists of Python ints) to int64, element-wise."""
    out = np.empty(arr.shape, dtype=np.int64)
    flat = arr.reshape(-1)
    for k, v in enumerate(flat.tolist()):
        pos = tuple(int(i) for i in np.unravel_index(k, arr.shape)) if arr.ndim else (k,)
        if isinstance(v, (bool, np.bool_)) or _is_missing(v):
            if _is_missing(v):
                raise ValueError(f"`{name}` passed to {owner} holds a missing value ({v!r}) "
                                 f"at {where(pos)}; missing values are not labels or ids."
                                 f"{nan_hint}")
            raise TypeError(f"`{name}` passed to {owner} must hold integers; found {v!r} "
                            f"at {where(pos)}.")
        if isinstance(v, numbers.Integral):
            iv = int(v)
        elif isinstance(v, numbers.Real) and math.isfinite(v) and float(v).is_integer():
            iv = int(float(v))
        else:
            kind = "number" if isinstance(v, numbers.Number) else type(v).__name__
            exc = ValueError if isinstance(v, numbers.Number) else TypeError
            raise exc(f"`{name}` passed to {owner} must hold integers; found {v!r} ({kind}) "
                      f"at {where(pos)}.")
        if not -_INT64_LIMIT <= iv < _INT64_LIMIT:
            raise ValueError(f"`{name}` passed to {owner} holds {v!r} at {where(pos)}, which "
                             f"is too large (integers must be below 2**63 in absolute value).")
        out.reshape(-1)[k] = iv
    return out


def _check_real(value: Any, name: str, *, owner: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"The '{name}' parameter of {owner} must be a real number; "
                        f"got {type(value).__name__} {value!r} instead.")
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"The '{name}' parameter of {owner} must be finite; "
                         f"got {value!r} instead.")
    return v


class NotFittedError(ValueError, AttributeError):
    """An estimator's fitted attribute was read before ``fit`` was called.

    Subclasses both ValueError and AttributeError, like scikit-learn's
    ``sklearn.exceptions.NotFittedError``: ``hasattr(est, "top_two_")`` stays False
    before fit, and ``except ValueError`` catches it.
    """


def not_fitted_message(owner: str) -> str:
    """The one wording of the not-fitted error: "<Owner> is not fitted yet; call fit first."."""
    return f"{owner} is not fitted yet; call fit first."


def check_is_fitted(estimator: Any, attribute: str, owner: str | None = None) -> None:
    """Raise :class:`NotFittedError` unless ``estimator`` has the fitted ``attribute``.

    Parameters
    ----------
    estimator : object
        The estimator whose fitted attribute is read.
    attribute : str
        An attribute set by ``fit`` (e.g. ``"top_two_"``).
    owner : str, optional
        Name used in the message; defaults to the class name.
    """
    if attribute not in getattr(estimator, "__dict__", {}):
        raise NotFittedError(not_fitted_message(owner or type(estimator).__name__))


class FittedAttributesMixin:
    """Turns reading a missing fitted attribute (name ending in ``_``) into NotFittedError.

    ``__getattr__`` runs only when normal lookup fails, so fitted attributes cost
    nothing; reading ``est.top_two_`` before ``fit`` gives "<Class> is not fitted yet;
    call fit first." instead of a bare AttributeError.
    """

    def __getattr__(self, name: str) -> Any:
        if name.endswith("_") and not name.startswith("__"):
            raise NotFittedError(not_fitted_message(type(self).__name__))
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
