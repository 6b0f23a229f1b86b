"""pandas in: a DataFrame of (worker, task, label) triples, or a numeric worker x task frame.

Private: the DataFrame branch of :func:`toptwo.responses.as_responses` and
:meth:`toptwo.Responses.from_triples` (pandas is optional and never imported here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._validation import (_is_dataframe, _is_missing, _show,  # noqa: F401
                          as_int_array)

if TYPE_CHECKING:
    pass

#: The columns of a DataFrame of triples (crowd-kit's names), in the order worker, task,
#: label; :meth:`Responses.from_triples` takes other names through ``columns``.
TRIPLE_COLUMNS = ("worker", "task", "label")



# ------------------------------------------------------------------ pandas (optional)


def _values(x: Any) -> Any:
    """A pandas Series/Index as a NumPy array (nullable dtypes become object arrays)."""
    if type(x).__module__.split(".")[0] == "pandas" and hasattr(x, "to_numpy"):
        return x.to_numpy()
    return x


def _show_id(x: Any) -> str:
    return repr(x.item() if isinstance(x, np.generic) else x)


def _frame_triples(df: Any, columns: Any, owner: str) -> tuple[Any, Any, Any]:
    """The worker, task and label columns of a DataFrame of triples, nothing dropped."""
    if (not isinstance(columns, (tuple, list)) or len(columns) != 3
            or len(set(map(str, columns))) != 3):
        raise TypeError(f"The 'columns' parameter of {owner} must be three distinct column "
                        f"names (worker, task, label); got {columns!r} instead.")
    present = list(df.columns)
    missing = [c for c in columns if c not in present]
    if missing:
        raise ValueError(f"The DataFrame passed to {owner} has no column(s) "
                         f"{', '.join(repr(c) for c in missing)}; a frame of triples needs the "
                         f"columns {', '.join(repr(c) for c in columns)} (one row per answer), "
                         f"got columns {present!r}. For other names use "
                         f"Responses.from_triples(df, columns=(worker_column, task_column, "
                         f"label_column)).")
    extra = [c for c in present if c not in columns]
    if extra:
        raise ValueError(f"The DataFrame passed to {owner} has column(s) "
                         f"{', '.join(repr(c) for c in extra)} besides the triples "
                         f"{', '.join(repr(c) for c in columns)}; nothing is dropped "
                         f"silently: select the three columns first "
                         f"(df[{list(columns)!r}]).")
    if len(set(present)) != len(present):
        raise ValueError(f"The DataFrame passed to {owner} repeats a column name "
                         f"({present!r}); each of {', '.join(map(repr, columns))} must "
                         f"occur once.")
    return tuple(df[c] for c in columns)  # type: ignore[return-value]


def _ids_or_ints(x: Any, name: str, owner: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Integer ids as int64 (``None`` names), or other hashable ids numbered by first
    appearance (the codes and the object array of distinct ids), as the CLI reads them."""
    x = _values(x)
    if isinstance(x, (str, bytes)):
        raise TypeError(f"`{name}` passed to {owner} must be a 1-D array of ids; got a "
                        f"{type(x).__name__}.")
    try:
        arr = np.asarray(x) if not isinstance(x, np.ndarray) else x
    except ValueError:                   # ragged: e.g. a list among strings
        items = list(x)
        arr = np.empty(len(items), dtype=object)
        for e, v in enumerate(items):
            arr[e] = v
    if arr.dtype.kind in "iufb" or np.ma.isMaskedArray(x) or arr.ndim != 1:
        return as_int_array(x, name, owner=owner, masked="refuse"), None
    if arr.dtype.kind == "O" and all(isinstance(v, (int, np.integer)) and not isinstance(
            v, (bool, np.bool_)) for v in arr):
        return as_int_array(arr, name, owner=owner, masked="refuse"), None
    index: dict[Any, int] = {}
    codes = np.empty(arr.shape[0], dtype=np.int64)
    for e, v in enumerate(arr.tolist() if arr.dtype.kind != "O" else arr):
        if _is_missing(v):
            raise ValueError(f"`{name}` passed to {owner} has a missing id ({v!r}) in triple "
                             f"{e}; every row is an answer by a known worker to a known "
                             f"task: leave such rows out (e.g. df.dropna()).")
        try:
            codes[e] = index.setdefault(v, len(index))
        except TypeError:
            raise TypeError(f"`{name}` passed to {owner} must hold hashable ids; got "
                            f"{type(v).__name__} {_show(v)} in triple {e}.") from None
    ids = np.empty(len(index), dtype=object)
    ids[:] = list(index)
    return codes, ids
