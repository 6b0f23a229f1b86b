"""Triples in: (worker, task, label) arrays or a pandas DataFrame of them, as Responses.

Private: the body of :meth:`toptwo.Responses.from_triples` (``_from_triples``) and the
DataFrame branch of :func:`toptwo.responses.as_responses` (pandas is optional and never
imported here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._validation import (INT32_MAX, _is_dataframe, _is_missing,  # noqa: F401
                          _resolve_n_labels, _show, as_int_array, check_choice,
                          check_id_names, check_int)
from ._gate import DUPLICATE_POLICIES, _duplicates_error, _find_duplicates

if TYPE_CHECKING:
    from .responses import Responses

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
    first: list[Any] = []                 # each id as first given, and where
    where: list[int] = []
    codes = np.empty(arr.shape[0], dtype=np.int64)
    for e, v in enumerate(arr.tolist() if arr.dtype.kind != "O" else arr):
        if _is_missing(v):
            raise ValueError(f"`{name}` passed to {owner} has a missing id ({v!r}) in triple "
                             f"{e}; every row is an answer by a known worker to a known "
                             f"task: leave such rows out (e.g. df.dropna()). If the ids "
                             f"came from a file in which an id is written NA, N/A, null or "
                             f"None, pd.read_csv turned it into a missing value: read the "
                             f"file with pd.read_csv(..., keep_default_na=False, dtype=str) "
                             f"or toptwo.io.read_triples_csv.")
        try:
            k = index.get(v)
        except TypeError:
            raise TypeError(f"`{name}` passed to {owner} must hold hashable ids; got "
                            f"{type(v).__name__} {_show(v)} in triple {e}.") from None
        if k is None:
            if isinstance(v, str) and (not v or v != v.strip()):
                what = "an empty id" if not v.strip() else f"the id {v!r}, with spaces at an end"
                raise ValueError(f"`{name}` passed to {owner} has {what} in triple {e}; "
                                 f"ids are compared as given, while the CSV reader strips "
                                 f"spaces and refuses blank ids: strip them first "
                                 f"(df[column].str.strip()) and leave rows without an id out.")
            k = index[v] = len(first)
            first.append(v)
            where.append(e)
        elif type(v) is not type(first[k]) and _id_kind(v) != _id_kind(first[k]):
            raise ValueError(f"`{name}` passed to {owner} holds {_show_id(first[k])} "
                             f"({type(first[k]).__name__}, triple {where[k]}) and "
                             f"{_show_id(v)} ({type(v).__name__}, triple {e}), which Python "
                             f"counts as one id; the CSV reader keeps them apart. Give the "
                             f"ids one type (e.g. df[column].astype(str)).")
        codes[e] = k
    ids = np.empty(len(first), dtype=object)
    ids[:] = first
    return codes, ids


def _id_kind(v: Any) -> str:
    """The kind of an id whose equal values would merge: bool, int, float or other."""
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int"
    if isinstance(v, (float, np.floating)):
        return "float"
    return type(v).__name__


def _from_triples(cls: Any, workers: Any, tasks: Any, labels: Any, *,  # noqa: C901 - every accepted input form in one gate
                  n_workers: int | None, n_tasks: int | None, n_labels: int | None,
                  duplicates: Any, worker_ids: Any, task_ids: Any,
                  columns: Any, owner: str) -> Responses:
    """:meth:`Responses.from_triples`, with the name used in messages (``owner``)."""
    check_choice(duplicates, "duplicates", DUPLICATE_POLICIES, owner=owner)
    if _is_dataframe(workers):
        if tasks is not None or labels is not None:
            raise TypeError(f"{owner} takes either one DataFrame of triples or three "
                            f"arrays (workers, tasks, labels); got a DataFrame and more.")
        workers, tasks, labels = _frame_triples(workers, columns, owner)
    w_named = t_named = None
    if tasks is None and labels is None:
        arr = as_int_array(workers, "triples", owner=owner, masked="refuse")
        if arr.ndim != 2 or arr.shape[1] != 3:
            raise ValueError(f"`triples` passed to {owner} must have shape (N, 3) with "
                             f"columns worker, task, label; got shape {arr.shape} instead.")
        w, t, lab = arr[:, 0], arr[:, 1], arr[:, 2]
    elif tasks is None or labels is None:
        raise TypeError(f"{owner} takes either one (N, 3) array or three arrays "
                        f"(workers, tasks, labels); got only two of them.")
    else:
        w, w_named = _ids_or_ints(workers, "workers", owner)
        t, t_named = _ids_or_ints(tasks, "tasks", owner)
        lab = as_int_array(_values(labels), "labels", owner=owner, masked="refuse",
                           nan_hint=" In triples every row is an answer: leave "
                                    "unanswered pairs out.")
        for name, named, given in (("workers", w_named, worker_ids),
                                   ("tasks", t_named, task_ids)):
            if named is not None and given is not None:
                raise TypeError(f"`{name[:-1]}_ids` passed to {owner} names the rows of "
                                f"integer indices; `{name}` holds non-integer ids "
                                f"already. Pass one or the other.")
        if w_named is not None:
            worker_ids = w_named
            if n_workers is not None and int(n_workers) != len(w_named):
                raise ValueError(f"`n_workers` passed to {owner} is {n_workers} but "
                                 f"`workers` holds {len(w_named)} distinct ids.")
        if t_named is not None:
            task_ids = t_named
            if n_tasks is not None and int(n_tasks) != len(t_named):
                raise ValueError(f"`n_tasks` passed to {owner} is {n_tasks} but "
                                 f"`tasks` holds {len(t_named)} distinct ids.")
        for name, a in (("workers", w), ("tasks", t), ("labels", lab)):
            if a.ndim != 1:
                raise ValueError(f"`{name}` passed to {owner} must be 1-D; got shape "
                                 f"{a.shape} instead.")
        if not (w.shape == t.shape == lab.shape):
            raise ValueError(f"`workers`, `tasks` and `labels` passed to {owner} must have "
                             f"the same length; got {w.shape[0]}, {t.shape[0]} and "
                             f"{lab.shape[0]}.")
    if w.shape[0] == 0:
        raise ValueError(f"{owner} got no responses (empty input); at least one "
                         f"(worker, task, label) triple is needed.")
    if n_workers is not None:
        n_workers = check_int(n_workers, "n_workers", owner=owner, minimum=1)
    if n_tasks is not None:
        n_tasks = check_int(n_tasks, "n_tasks", owner=owner, minimum=1)
    w_ids = check_id_names(worker_ids, "worker_ids", n_workers, "n_workers", owner)
    t_ids = check_id_names(task_ids, "task_ids", n_tasks, "n_tasks", owner)
    if n_workers is None and w_ids is not None:
        n_workers = len(w_ids)
    if n_tasks is None and t_ids is not None:
        n_tasks = len(t_ids)
    w0, t0 = w, t                                  # ids as given, for messages
    compact: dict[str, Any] = {}
    for name, a, size in (("worker", w, n_workers), ("task", t, n_tasks)):
        if a.min() < 0:
            e = int(np.argmax(a < 0))
            what = "indices" if size is not None else "ids"
            raise ValueError(f"{name} {what} passed to {owner} must be >= 0; found "
                             f"{int(a[e])} in triple {e} (a negative id usually marks "
                             f"a missing value: leave such rows out).")
        if size is None:
            continue
        bound = check_int(size, f"n_{name}s", owner=owner, minimum=1)
        if bound > INT32_MAX:
            raise ValueError(f"The 'n_{name}s' parameter of {owner} must be an int <= "
                             f"{INT32_MAX} (indices are stored as int32); got n_{name}s="
                             f"{bound} instead.")
        if a.max() >= bound:
            e = int(np.argmax(a >= bound))
            raise ValueError(f"{name} index {int(a[e])} in triple {e} is out of range "
                             f"for n_{name}s={bound} (indices are 0-based; leave "
                             f"n_{name}s out to relabel arbitrary ids compactly).")
        compact[name] = (a, bound, None)
    for name, a in (("worker", w), ("task", t)):
        if name not in compact:                    # arbitrary ids -> 0..n-1, O(N log N)
            ids, inv = np.unique(a, return_inverse=True)
            compact[name] = (inv.reshape(-1), len(ids), ids)
    w, nw, w_new = compact["worker"]
    t, nt, t_new = compact["task"]
    if w_ids is None:
        w_ids = w_new
    if t_ids is None:
        t_ids = t_new

    def name_of(named: np.ndarray | None, a0: np.ndarray, e: int) -> Any:
        return int(a0[e]) if named is None else _show_id(named[a0[e]])

    def where(e: int) -> str:
        return f"triple {e} (worker {name_of(w_named, w0, e)}, task {name_of(t_named, t0, e)})"

    zero = lab == 0
    if zero.any():
        e = int(np.argmax(zero))
        raise ValueError(f"labels passed to {owner} must be in 1..n_labels; found 0 in "
                         f"{where(e)}. In triples every row is an answer: leave "
                         f"unanswered pairs out; if your labels are numbered from 0, "
                         f"add 1 to them (e.g. df['label'] + 1).")
    K = _resolve_n_labels(lab, n_labels, owner=owner, where=where)
    dups = _find_duplicates(w, t, nt)
    order = dups.order
    if dups.n_pairs:
        if duplicates == "error":
            raise _duplicates_error(
                dups, source=owner, unit="triples", where=lambda e: f"in triple {e}",
                show=lambda e: (name_of(w_named, w0, e), name_of(t_named, t0, e),
                                int(lab[e])))
        order = dups.kept(duplicates)
    return cls(w[order].astype(np.int32), t[order].astype(np.int32),
               lab[order].astype(np.int32), shape=(nw, nt), n_labels=K,
               worker_ids=w_ids, task_ids=t_ids)
