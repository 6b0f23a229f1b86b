"""Input validation shared by every public entry point (scipy ``_iv`` style).

The checks of values: parameters, and the entries of the arrays the gate
(:func:`toptwo.as_responses`) reads -- integer conversion, labels and K
(``_resolve_n_labels``) -- so that reading a response matrix is one visit here.
One function per kind of argument; every message names the argument, quotes the
constraint and shows the offending value, in scikit-learn's phrasing
"must be ...; got ... instead". Estimators declare their constructor parameters with
the constraint objects at the end of the module (``Interval``, ``StrOptions``,
``InstanceOf``, ``RealArray``, None, "boolean", "random_state"), checked by
:func:`check_parameter` from ``toptwo._base.ParamsBase._validate_params``.
"""

from __future__ import annotations

import decimal
import math
import numbers
from typing import Any

import numpy as np

def check_rng(rng: Any, *, owner: str, name: str = "rng") -> np.random.Generator:
    """Resolve ``rng`` (None, a non-negative int, or a Generator) to a Generator.

    ``numpy.random.RandomState`` and the global seed are refused on purpose
    (Scientific Python SPEC 7): every random draw in ``toptwo`` comes from an explicit Generator.
    """
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"The '{name}' parameter of {owner} must be None, a non-negative int "
                        f"or a numpy.random.Generator; got {rng!r} instead.")
    if isinstance(rng, numbers.Integral):
        if rng < 0:
            raise ValueError(f"The '{name}' parameter of {owner} must be a non-negative int "
                             f"seed; got {rng} instead.")
        return np.random.default_rng(int(rng))
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    raise TypeError(f"The '{name}' parameter of {owner} must be None, a non-negative int "
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


def check_sampling_rate(value: Any, name: str = "sampling_rate", *, owner: str) -> float:
    """A float in (0, 1]: the probability s that a (worker, task) pair is observed."""
    v = _check_real(value, name, owner=owner)
    if not 0.0 < v <= 1.0:
        raise ValueError(f"The '{name}' parameter of {owner} must be a float in the interval "
                         f"(0, 1]; got {value!r} instead.")
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


#: Largest K inferred from the data without an explicit ``n_labels`` (the estimators
#: allocate n_tasks x K arrays, so one stray label of 10^6 must not set K silently).
MAX_INFERRED_LABELS = 1000

#: Indices and labels are stored as int32 (CSR indices, compact arrays); anything larger
#: is refused instead of being wrapped around.
INT32_MAX = int(np.iinfo(np.int32).max)


def _resolve_n_labels(labels: np.ndarray, n_labels: Any, *, owner: str, where,
                      subject: str | None = None) -> int:
    """Check labels >= 1 and <= K; infer K as the largest label when not given.

    An explicit K above :data:`MAX_INFERRED_LABELS` is accepted only when a label that
    large occurs in the data (see :func:`check_n_labels_bound`). ``subject`` (e.g.
    "`A` passed to TopTwo2.fit") starts every message.
    """
    lead = f"{subject}: " if subject else ""
    neg = labels < 0
    if neg.any():
        e = int(np.argmax(neg))
        raise ValueError(f"{lead}labels must be in 1..n_labels with 0 for 'not answered'; found "
                         f"{int(labels[e])} at {where(e)}.")
    top = int(labels.max())
    if top > INT32_MAX:
        e = int(np.argmax(labels > INT32_MAX))
        raise ValueError(f"{lead}labels must be in 1..n_labels with n_labels <= {INT32_MAX} "
                         f"(stored as int32); found {int(labels[e])} at {where(e)}.")
    if n_labels is None:
        if top > MAX_INFERRED_LABELS:
            e = int(np.argmax(labels))
            raise ValueError(f"{lead}n_labels was not given and the largest label in the data is "
                             f"{top} (at {where(e)}), so K would be {top} > "
                             f"{MAX_INFERRED_LABELS}, which is almost always a stray value; "
                             f"pass n_labels=K explicitly if K is really that large.")
        if top < 2:
            raise ValueError(f"{lead}n_labels was not given and the largest label in the data is "
                             f"{top}, so K would be {top} < 2; pass n_labels=K explicitly.")
        return top
    K = check_int(n_labels, "n_labels", owner=owner, minimum=2)
    check_n_labels_bound(K, top, owner=owner)
    if top > K:
        e = int(np.argmax(labels > K))
        raise ValueError(f"{lead}labels must be in 1..n_labels with 0 for 'not answered'; found "
                         f"{int(labels[e])} at {where(e)} with n_labels={K}.")
    return K


def exceeds_label_bound(K: int, top: int) -> bool:
    """True if K is refused for data whose largest label is ``top`` (see below)."""
    return K > max(MAX_INFERRED_LABELS, top)


def check_n_labels_bound(K: int, top: int, *, owner: str, name: str = "n_labels") -> None:
    """Refuse an explicit K far beyond the data: K > max(MAX_INFERRED_LABELS, top).

    The estimators allocate ``n_tasks x K`` arrays and loop over the K labels, so a K
    the data do not use (``n_labels=2**40``, ``--n-labels 100000000``) would exhaust
    memory or run for hours. Up to :data:`MAX_INFERRED_LABELS` choices are accepted
    whatever the data; beyond, K must equal the largest label present.
    """
    if exceeds_label_bound(K, top):
        raise ValueError(f"The '{name}' parameter of {owner} is {K}, but the largest label in "
                         f"the data is {top}; a K above {MAX_INFERRED_LABELS} is accepted "
                         f"only when the data contain a label that large (the estimators "
                         f"allocate n_tasks x K arrays). Pass the real number of choices.")


def check_n_top(value: Any, n_labels: int, *, owner: str, minimum: int) -> int:
    """T, a number of answers ranked per task: an int in ``minimum..n_labels``."""
    T = check_int(value, "n_top", owner=owner, minimum=minimum)
    check_n_top_bound(T, n_labels, owner=owner)
    return T


def check_n_top_bound(T: int, n_labels: int, *, owner: str) -> None:
    """The data-dependent half of :func:`check_n_top`: ``T <= n_labels``."""
    if T > n_labels:
        raise ValueError(f"The 'n_top' parameter of {owner} must be <= n_labels={n_labels}; "
                         f"got {T} instead.")


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
    if length is not None:
        check_length(arr, name, owner=owner, length=length)
    bad = ~np.isfinite(arr) | (arr > high) | ((arr <= low) if low_open else (arr < low))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        lo = "(" if low_open else "["
        raise ValueError(f"`{name}` of {owner} must lie in {lo}{low}, {high}]; found "
                         f"{float(arr[i])!r} at index {i} ({int(bad.sum())} entries out of range).")
    return arr


def check_length(arr: np.ndarray, name: str, *, owner: str, length: int) -> None:
    """A 1-D array of ``length`` entries (the data-dependent part of an array parameter)."""
    if arr.shape[0] != length:
        raise ValueError(f"`{name}` of {owner} must have length {length}; "
                         f"got length {arr.shape[0]} instead.")


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
                if isinstance(v, (bool, np.bool_))
                or not isinstance(v, (numbers.Real, decimal.Decimal))]
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


def _is_dataframe(x: Any) -> bool:
    """A pandas DataFrame, recognised without importing pandas (an optional extra)."""
    return type(x).__module__.split(".")[0] == "pandas" and type(x).__name__ == "DataFrame"


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


def _exact_whole(v: Any) -> bool:
    """True for a finite real number that is exactly a whole number.

    ``fractions.Fraction`` and ``decimal.Decimal`` are treated alike, and exactly:
    Fraction(2**60 + 1, 2) is not whole even though its float is.
    """
    if isinstance(v, numbers.Rational):
        return v.denominator == 1
    if isinstance(v, decimal.Decimal):
        return v.is_finite() and v == v.to_integral_value()
    if isinstance(v, numbers.Real):
        return math.isfinite(v) and float(v).is_integer()
    return False


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
        elif _exact_whole(v):
            iv = int(v)                     # exact: Fraction, Decimal and float alike
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


# ------------------------------------------------------ declarative parameter constraints
# A small counterpart of scikit-learn's ``sklearn/utils/_param_validation.py``: every
# estimator declares ``_parameter_constraints = {name: [constraint, ...]}`` and
# ``_base.ParamsBase._validate_params`` checks them all with :func:`check_parameter`
# at the start of ``fit``. A constraint is one of the objects below, None (the value
# None) or the strings "boolean" and "random_state". A value is valid when one
# constraint of its list accepts it; the message names the parameter, the owner, the
# value as given and what is allowed: "The 'tol' parameter of GLAD must be a float > 0;
# got 0.0 instead." A wrong kind of value is a TypeError, a value of the right kind
# outside the allowed set a ValueError.

def _show(value: Any, limit: int = 80) -> str:
    """``repr(value)``, shortened to ``limit`` characters (an array can be long)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _prefix(name: str, owner: str) -> str:
    return f"The '{name}' parameter of {owner} must be"


class _Constraint:
    """One allowed set of values: ``accepts_type``, ``check`` and a description."""

    def accepts_type(self, value: Any) -> bool:
        """Whether ``value`` is of the kind this constraint is about (else TypeError)."""
        raise NotImplementedError

    def check(self, value: Any, name: str, owner: str) -> Any:
        """The normalised value, or a TypeError/ValueError naming ``name`` and ``owner``."""
        raise NotImplementedError

    def accepts(self, value: Any) -> bool:
        try:
            self.check(value, "", "")
        except (TypeError, ValueError):
            return False
        return True

    def _type_error(self, value: Any, name: str, owner: str) -> TypeError:
        return TypeError(f"{_prefix(name, owner)} {self}; got {type(value).__name__} "
                         f"{_show(value)} instead.")


class Interval(_Constraint):
    """Integers (``numbers.Integral``) or finite reals (``numbers.Real``) in an interval.

    Parameters
    ----------
    kind : numbers.Integral or numbers.Real
        Booleans are refused for both; numpy integers and floats are accepted. The
        value is returned as ``int`` or ``float``.
    left, right : float or None
        Bounds; None for no bound on that side.
    closed : {"left", "right", "both", "neither"}, default="left"
        Which bounds belong to the interval.
    note : str, default=""
        Sentence appended to the message of a value outside the interval (why the
        bound is there).

    Examples
    --------
    ``Interval(Integral, 1, None)`` is "an int >= 1"; ``Interval(Real, 0, 1,
    closed="right")`` is "a float in (0, 1]". NaN and infinities are refused by every
    real interval ("must be a finite float > 0; got inf instead.").
    """

    def __init__(self, kind: type, left: float | None, right: float | None, *,
                 closed: str = "left", note: str = ""):
        if kind not in (numbers.Integral, numbers.Real):
            raise TypeError(f"Interval kind must be numbers.Integral or numbers.Real; got {kind!r}.")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"Interval closed must be 'left', 'right', 'both' or 'neither'; "
                             f"got {closed!r}.")
        self.kind, self.left, self.right, self.closed, self.note = kind, left, right, closed, note

    def accepts_type(self, value: Any) -> bool:
        return not isinstance(value, (bool, np.bool_)) and isinstance(value, self.kind)

    def _inside(self, v: float) -> bool:
        lo_ok = self.left is None or (v >= self.left if self.closed in ("left", "both")
                                      else v > self.left)
        hi_ok = self.right is None or (v <= self.right if self.closed in ("right", "both")
                                       else v < self.right)
        return lo_ok and hi_ok

    def check(self, value: Any, name: str, owner: str) -> Any:
        if not self.accepts_type(value):
            raise self._type_error(value, name, owner)
        v = int(value) if self.kind is numbers.Integral else float(value)
        if not math.isfinite(v):
            raise ValueError(f"{_prefix(name, owner)} {self._describe(finite=True)}; got "
                             f"{_show(value)} instead.")
        if not self._inside(v):
            raise ValueError(f"{_prefix(name, owner)} {self}; got {_show(value)} instead."
                             + (f" {self.note}" if self.note else ""))
        return v

    def __str__(self) -> str:
        return self._describe()

    def _describe(self, finite: bool = False) -> str:
        noun = "an int" if self.kind is numbers.Integral else \
            ("a finite float" if finite else "a float")
        lc, rc = self.closed in ("left", "both"), self.closed in ("right", "both")
        if self.right is None:
            return f"{noun} {'>=' if lc else '>'} {self.left}" if self.left is not None \
                else noun
        if self.left is None:
            return f"{noun} {'<=' if rc else '<'} {self.right}"
        if self.closed == "neither":
            return f"{noun} in the open interval ({self.left}, {self.right})"
        return f"{noun} in {'[' if lc else '('}{self.left}, {self.right}{']' if rc else ')'}"


class StrOptions(_Constraint):
    """One of a few strings (listed in the given order in messages)."""

    def __init__(self, options: tuple[str, ...]):
        self.options = tuple(options)

    def accepts_type(self, value: Any) -> bool:
        return True          # any other value is a ValueError, as from check_choice

    def check(self, value: Any, name: str, owner: str) -> Any:
        if not (isinstance(value, str) and value in self.options):
            raise ValueError(f"{_prefix(name, owner)} {self}; got {_show(value)} instead.")
        return value

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(o) for o in self.options)


class InstanceOf(_Constraint):
    """An instance of ``cls`` (described as ``label`` in messages)."""

    def __init__(self, cls: type, label: str | None = None):
        self.cls, self.label = cls, label or cls.__name__

    def accepts_type(self, value: Any) -> bool:
        return isinstance(value, self.cls)

    def check(self, value: Any, name: str, owner: str) -> Any:
        if not self.accepts_type(value):
            raise self._type_error(value, name, owner)
        return value

    def __str__(self) -> str:
        return f"a {self.label}"


class RealArray(_Constraint):
    """An array of real numbers; with ``low``/``high``, a 1-D one with entries in range.

    None, a string or bytes is a TypeError in the style of the other constraints; the
    conversion and its messages are those of :func:`as_float_array` and
    :func:`check_probability_vector` ("`reliability` of OracleMLE must ..."). Shapes
    that depend on the data (one entry per worker) are checked by ``fit``.
    """

    def __init__(self, low: float | None = None, high: float | None = None):
        self.low, self.high = low, high

    def accepts_type(self, value: Any) -> bool:
        return value is not None and not isinstance(value, (str, bytes))

    def check(self, value: Any, name: str, owner: str) -> Any:
        if not self.accepts_type(value):
            raise self._type_error(value, name, owner)
        if self.low is None or self.high is None:
            return as_float_array(value, name, owner=owner)
        return check_probability_vector(value, name, owner=owner, low=self.low, high=self.high)

    def __str__(self) -> str:
        if self.low is None or self.high is None:
            return "an array of real numbers"
        return f"a 1-D array of real numbers in [{self.low}, {self.high}]"


class _NoneConstraint(_Constraint):
    def accepts_type(self, value: Any) -> bool:
        return value is None

    def check(self, value: Any, name: str, owner: str) -> Any:
        if value is not None:
            raise self._type_error(value, name, owner)
        return None

    def __str__(self) -> str:
        return "None"


class _Boolean(_Constraint):
    def accepts_type(self, value: Any) -> bool:
        return isinstance(value, (bool, np.bool_))

    def check(self, value: Any, name: str, owner: str) -> Any:
        if not self.accepts_type(value):
            raise self._type_error(value, name, owner)
        return bool(value)

    def __str__(self) -> str:
        return "True or False"


class _RandomState(_Constraint):
    """None, a non-negative int seed, a Generator or a SeedSequence: :func:`check_rng`,
    which returns a Generator."""

    def accepts_type(self, value: Any) -> bool:
        return (value is None or isinstance(value, (np.random.Generator, np.random.SeedSequence))
                or (isinstance(value, numbers.Integral)
                    and not isinstance(value, (bool, np.bool_))))

    def check(self, value: Any, name: str, owner: str) -> Any:
        return check_rng(value, owner=owner, name=name)

    def __str__(self) -> str:
        return "None, a non-negative int or a numpy.random.Generator"


_MARKERS: dict[Any, _Constraint] = {None: _NoneConstraint(), "boolean": _Boolean(),
                                    "random_state": _RandomState()}


def make_constraint(constraint: Any) -> _Constraint:
    """A constraint object from a declaration entry (None, "boolean", "random_state" or
    an object above)."""
    if isinstance(constraint, _Constraint):
        return constraint
    if constraint is None or (isinstance(constraint, str) and constraint in _MARKERS):
        return _MARKERS[constraint]
    raise ValueError(f"Unknown parameter constraint {constraint!r}.")


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def check_parameter(value: Any, constraints: list, name: str, *, owner: str) -> Any:
    """Check ``value`` against a list of constraints; return its normalised form.

    With one constraint its own message is used (an int, a float, a Generator, ...
    come back as such). With several the first that accepts ``value`` normalises it,
    and a refusal lists them all: "must be None or an int >= 0; got -1 instead."
    (TypeError if no constraint is about values of this kind, else ValueError).
    """
    cs = [make_constraint(c) for c in constraints]
    if len(cs) == 1:
        return cs[0].check(value, name, owner)
    for c in cs:
        if c.accepts(value):
            return c.check(value, name, owner)
    allowed = _join([str(c) for c in cs])
    if any(c.accepts_type(value) for c in cs):
        raise ValueError(f"{_prefix(name, owner)} {allowed}; got {_show(value)} instead.")
    raise TypeError(f"{_prefix(name, owner)} {allowed}; got {type(value).__name__} "
                    f"{_show(value)} instead.")
