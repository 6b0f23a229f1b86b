"""Crowdsourced responses: the response matrix A of the paper, stored sparsely.

The paper's convention is kept everywhere (Sec. 3, eq. (1) [`eqn:A_dist`]): ``A`` has
shape ``(n_workers, n_tasks)``; ``A[i, j]`` is the label in ``1..K`` that worker ``i``
gave task ``j``, and ``0`` means "not answered". Workers are rows, tasks are columns
(crowd-kit and scikit-learn put items in rows; we do not).

:class:`Responses` holds the observed entries only, as three aligned 1-D arrays
(worker, task, label) sorted by worker and then task. Nothing in the core ever builds
the dense ``n_workers x n_tasks`` array; :meth:`Responses.toarray` exists for small
teaching examples only.

:func:`as_responses` is the single gate through which every estimator reads data. It
accepts a dense integer array, a scipy sparse matrix/array, or a :class:`Responses`,
and refuses bad input with a message that names the value, where it was found, and
what is allowed. :meth:`Responses.from_triples` builds responses from
(worker, task, label) triples and applies an explicit policy to repeated
(worker, task) pairs.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from ._validation import (INT32_MAX, _is_dataframe, _resolve_n_labels, as_int_array,
                          check_int, check_n_labels_bound, default_where)
from ._validation import MAX_INFERRED_LABELS, exceeds_label_bound  # noqa: F401 (re-exported)
from ._frames import TRIPLE_COLUMNS, _frame_triples, _from_triples
from ._gate import (Duplicates, _check_consistent, _duplicates_error, _find_duplicates,
                    binary_labels_message, check_labels_used)
from ._gate import DUPLICATE_POLICIES  # noqa: F401 (re-exported)

__all__ = ["Responses", "as_responses", "check_labels_used", "check_n_labels_bound",
           "binary_labels_message", "TRIPLE_COLUMNS"]



class Responses:
    """Observed entries of a response matrix A (n_workers x n_tasks, labels 1..K).

    Build one with :func:`as_responses` (from a dense array or a sparse matrix) or
    :meth:`Responses.from_triples`. The constructor itself trusts its arguments and is
    meant for internal use.

    Parameters
    ----------
    workers, tasks, labels : ndarray of shape (nnz,)
        Row index i, column index j and label A_ij in 1..n_labels of each response,
        sorted by (worker, task), no (worker, task) pair twice.
    shape : tuple of int
        ``(n_workers, n_tasks)``.
    n_labels : int
        K, the number of answer choices (>= 2). A label may never occur in the data.
    worker_ids, task_ids : ndarray, optional
        Original identifiers (e.g. strings read from a CSV file); row i of A is
        ``worker_ids[i]``.

    Attributes
    ----------
    nnz : int
        Number of responses.
    shape : tuple of int
    n_workers, n_tasks, n_labels : int
    """

    __slots__ = ("workers", "tasks", "labels", "n_workers", "n_tasks", "n_labels",
                 "worker_ids", "task_ids", "_checked")
    workers: np.ndarray
    tasks: np.ndarray
    labels: np.ndarray
    n_workers: int
    n_tasks: int
    n_labels: int
    worker_ids: np.ndarray | None
    task_ids: np.ndarray | None
    _checked: bool

    def __init__(self, workers: np.ndarray, tasks: np.ndarray, labels: np.ndarray, *,
                 shape: tuple[int, int], n_labels: int,
                 worker_ids: np.ndarray | None = None, task_ids: np.ndarray | None = None):
        # Immutable: the arrays are made read-only and the attributes cannot
        # be rebound, so what passed the gate (as_responses, from_triples) stays valid.
        # Arrays that are views of someone else's writeable memory are copied first.
        init = object.__setattr__
        init(self, "workers", self._frozen(workers))
        init(self, "tasks", self._frozen(tasks))
        init(self, "labels", self._frozen(labels))
        init(self, "n_workers", int(shape[0]))
        init(self, "n_tasks", int(shape[1]))
        init(self, "n_labels", int(n_labels))
        init(self, "worker_ids", None if worker_ids is None else self._frozen(worker_ids))
        init(self, "task_ids", None if task_ids is None else self._frozen(task_ids))
        init(self, "_checked", False)      # set by the gate once; the data cannot change

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Responses are immutable: '{name}' cannot be set (build new "
                             f"responses with Responses.from_triples or as_responses).")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Responses are immutable: '{name}' cannot be deleted.")

    def __reduce__(self):
        return (_rebuild, (type(self) if type(self) is Responses else Responses,
                           self.workers, self.tasks, self.labels, self.shape, self.n_labels,
                           self.worker_ids, self.task_ids))

    def _memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()``; a :class:`_FitView` keeps the result for the rest of the fit."""
        return compute()

    def _memoized(self, key: str) -> bool:
        return False

    @staticmethod
    def _read_only(a: np.ndarray) -> np.ndarray:
        a.flags.writeable = False
        return a

    @staticmethod
    def _frozen(a: Any) -> np.ndarray:
        """``a`` as a read-only array: in place if it owns its memory, else a read-only copy.

        A view (of a user's array, or a slice) cannot be protected by clearing its own flag,
        since its base stays writeable; it is copied once.
        """
        a = np.asarray(a)
        if not a.flags.writeable:
            if a.base is None or not Responses._writeable_base(a):
                return a
        elif a.base is None:
            a.flags.writeable = False
            return a
        a = a.copy()
        a.flags.writeable = False
        return a

    @staticmethod
    def _writeable_base(a: np.ndarray) -> bool:
        base = a.base
        while isinstance(base, np.ndarray):
            if base.flags.writeable:
                return True
            base = base.base
        return base is not None and not isinstance(base, (bytes,))

    # ------------------------------------------------------------------ basics
    @property
    def shape(self) -> tuple[int, int]:
        return (self.n_workers, self.n_tasks)

    @property
    def nnz(self) -> int:
        return int(self.labels.shape[0])

    @property
    def observed_rate(self) -> float:
        """Fraction of (worker, task) pairs answered: the estimate s_hat = nnz / (n m)."""
        return self.nnz / (self.n_workers * self.n_tasks)

    def __repr__(self) -> str:
        return (f"Responses(n_workers={self.n_workers}, n_tasks={self.n_tasks}, "
                f"n_labels={self.n_labels}, nnz={self.nnz})")

    def __len__(self) -> int:
        return self.nnz

    def tocsr(self) -> sp.csr_array:
        """A as a scipy CSR array of int32 labels (0 = not answered)."""
        def build() -> sp.csr_array:
            # the responses are sorted by worker: the row pointers are where each
            # worker's run starts (n + 1 binary searches instead of a pass over them)
            # 32-bit row pointers where they fit: scipy then keeps 32-bit indices in the
            # task-major transposition too (half the memory traffic of every later pass)
            idx = np.int32 if self.nnz <= INT32_MAX else np.int64
            indptr = np.searchsorted(self.workers, np.arange(self.n_workers + 1,
                                                             dtype=self.workers.dtype)
                                     ).astype(idx)
            return sp.csr_array((self.labels.astype(np.int32, copy=False),
                                 self.tasks.astype(np.int32, copy=False), indptr),
                                shape=self.shape)
        return self._memo("csr", build)

    def task_major(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(indptr, workers, labels) of the responses grouped by task (A^T in CSR form).

        ``workers[indptr[j]:indptr[j+1]]`` are the workers who answered task j, in
        increasing order; one O(nnz + m) transposition (once per fit).
        """
        def build() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            csr = self.tocsr()
            if self.n_labels <= np.iinfo(np.int8).max:
                # the transposition scatters every label: as int8 it moves a quarter of
                # the bytes (scipy keeps the data's dtype); the same values, widened after
                small = sp.csr_array((csr.data.astype(np.int8), csr.indices, csr.indptr),
                                     shape=csr.shape).tocsc()
                return (small.indptr, small.indices, small.data.astype(np.int32))
            csc = csr.tocsc()
            return (csc.indptr, csc.indices, csc.data)
        return self._memo("task_major", build)

    def task_major_tasks(self) -> np.ndarray:
        """Task index of every response in task-major order (non-decreasing)."""
        return self._memo("task_major_tasks", lambda: np.repeat(
            np.arange(self.n_tasks, dtype=np.int32), np.diff(self.task_major()[0])))

    def toarray(self) -> np.ndarray:
        """Dense ``(n_workers, n_tasks)`` int array. For small teaching examples only."""
        out = np.zeros(self.shape, dtype=np.int64)
        out[self.workers, self.tasks] = self.labels
        return out

    def subset(self, mask: np.ndarray) -> "Responses":
        """The responses selected by a boolean mask over entries (same shape and K)."""
        return Responses(self.workers[mask], self.tasks[mask], self.labels[mask],
                         shape=self.shape, n_labels=self.n_labels,
                         worker_ids=self.worker_ids, task_ids=self.task_ids)

    def with_n_labels(self, n_labels: int) -> "Responses":
        return Responses(self.workers, self.tasks, self.labels, shape=self.shape,
                         n_labels=n_labels, worker_ids=self.worker_ids, task_ids=self.task_ids)

    def task_label_counts(self, weights: np.ndarray | None = None) -> np.ndarray:
        """``(n_tasks, K)`` array: (weighted) number of responses with each label.

        Column ``c - 1`` of row ``j`` is ``sum_i weights[e] * 1(A_ij = c)``; one pass over
        the responses (``np.bincount``), O(nnz + m K) time and memory.
        """
        if weights is None and self._memoized("tl_index_tm"):
            return self.task_label_counts_task_major(None)   # counts are order-free
        K = self.n_labels
        index = self._memo("tl_index",                  # flat index j*K + (c-1)
                           lambda: self.tasks.astype(np.int64) * K + (self.labels - 1))
        return np.bincount(index, weights=weights, minlength=self.n_tasks * K).reshape(
            self.n_tasks, K).astype(float, copy=False)

    def task_label_counts_task_major(self, weights: np.ndarray | None) -> np.ndarray:
        """As :meth:`task_label_counts`, with ``weights`` in task-major order.

        Task-major order is that of :meth:`task_major` (by task, then worker). Within a
        task both orders list workers increasingly, so every (task, label) sum adds the
        same numbers in the same order as the worker-major version: bit-identical
        results, with sequential memory access.
        """
        K = self.n_labels
        index = self._memo("tl_index_tm", lambda: self.task_major_tasks().astype(np.int64) * K
                           + (self.task_major()[2] - 1))
        return np.bincount(index, weights=weights, minlength=self.n_tasks * K).reshape(
            self.n_tasks, K).astype(float, copy=False)

    def task_counts(self) -> np.ndarray:
        """Number of responses per task, shape (n_tasks,) (read-only).

        Read off the task-major index pointers when this fit has built them (no extra pass).
        """
        def build() -> np.ndarray:
            if self._memoized("task_major"):
                return self._read_only(np.diff(self.task_major()[0]))
            return self._read_only(np.bincount(self.tasks, minlength=self.n_tasks))
        return self._memo("task_counts", build)

    def worker_counts(self) -> np.ndarray:
        """Number of responses per worker, shape (n_workers,) (read-only).

        Read off the CSR index pointers when this fit has built them (no extra pass).
        """
        def build() -> np.ndarray:
            if self._memoized("csr"):
                return self._read_only(np.diff(self.tocsr().indptr))
            return self._read_only(np.bincount(self.workers, minlength=self.n_workers))
        return self._memo("worker_counts", build)

    def unused_labels(self) -> np.ndarray:
        """Labels in ``1..n_labels`` that no worker gave (sorted int array, maybe empty).

        Counted label by label for K <= 16, else with one ``np.bincount``: O(nnz K) or
        O(nnz + K). A label that never occurs is a
        choice the data say nothing about; TopTwo1/TopTwo2 refuse it through
        :func:`check_labels_used` (eq. (5) counts every answer as a hit on it).
        """
        if self.n_labels <= 16:         # a few counting passes, no conversion to intp
            counts = np.array([np.count_nonzero(self.labels == c)
                               for c in range(1, self.n_labels + 1)])
        else:
            counts = np.bincount(self.labels, minlength=self.n_labels + 1)[1:]
        return np.flatnonzero(counts == 0) + 1

    # ------------------------------------------------------------ construction
    @classmethod
    def from_triples(cls, workers: Any, tasks: Any = None, labels: Any = None, *,  # noqa: C901 - every accepted input form in one gate
                     n_workers: int | None = None, n_tasks: int | None = None,
                     n_labels: int | None = None, duplicates: Duplicates = "error",
                     worker_ids: Any = None, task_ids: Any = None,
                     columns: tuple[str, str, str] = TRIPLE_COLUMNS) -> "Responses":
        """Responses from (worker, task, label) triples.

        Parameters
        ----------
        workers, tasks, labels : array-like
            Worker id, task id and label in 1..K of each answer. Alternatively pass one
            ``(N, 3)`` array, or a pandas DataFrame with the columns named by
            ``columns``, as ``workers`` and leave the others ``None``. Integer ids are
            non-negative integers; how they become rows and columns of A depends on
            ``n_workers`` / ``n_tasks`` (below). Any other hashable ids (strings,
            tuples, ...; as the command line reads them) are numbered in order of first
            appearance, row ``i`` being the ``i``-th distinct worker met, and kept in
            ``worker_ids`` / ``task_ids``; a missing id (None, NaN) is refused.
        n_workers, n_tasks : int, optional
            When given, worker ids are 0-based row indices ``0 .. n_workers - 1`` (so a
            worker who answered nothing still has a row). When omitted (and no
            ``worker_ids`` is given), ids are arbitrary non-negative integers, e.g.
            ``[7, 100000000]``: they are relabelled compactly, row ``i`` being the
            ``i``-th smallest distinct id, and the ids are kept in ``worker_ids``. Memory
            and time are O(N + number of distinct ids), never the value of an id.
            Likewise for tasks.
        n_labels : int, optional
            K. When omitted it is inferred as the largest label present, which is wrong
            if the highest choice never occurs: pass it whenever you know it. A K above
            ``MAX_INFERRED_LABELS`` (1000) is accepted only if the data contain a label
            that large (estimators allocate ``n_tasks x K`` arrays).
        duplicates : {"error", "first", "last"}, default="error"
            What to do when the same (worker, task) pair occurs more than once:
            raise (the message counts them and shows one), keep the first occurrence in
            input order, or keep the last one. Nothing is dropped silently.
        worker_ids, task_ids : array-like, optional
            Names of the rows / columns (e.g. strings read from a file): worker index
            ``i`` is ``worker_ids[i]``. Giving them makes the ids 0-based indices into
            them; their length must equal ``n_workers`` / ``n_tasks`` when both are given.
        columns : tuple of three str, default=("worker", "task", "label")
            The names of the worker, task and label columns when ``workers`` is a
            DataFrame (crowd-kit's names are the default). Other columns are refused.

        Returns
        -------
        Responses
            With ``worker_ids`` / ``task_ids`` set to the given names or, for compacted
            ids, to the original ids (int64 arrays, sorted; object arrays in order of
            first appearance for non-integer ids).

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"worker": ["ann", "bob", "ann"], "task": ["q1", "q1", "q2"],
        ...                    "label": [3, 2, 1]})
        >>> R = Responses.from_triples(df)
        >>> R.shape, list(R.worker_ids), list(R.task_ids)
        ((2, 2), ['ann', 'bob'], ['q1', 'q2'])
        """
        return _from_triples(cls, workers, tasks, labels, n_workers=n_workers,
                             n_tasks=n_tasks, n_labels=n_labels, duplicates=duplicates,
                             worker_ids=worker_ids, task_ids=task_ids, columns=columns,
                             owner="Responses.from_triples")


class _FitView(Responses):
    """The :class:`Responses` one fit reads: the same arrays, plus the derived arrays.

    :func:`as_responses` hands every fit a fresh view, so the derived arrays (CSR form,
    task-major order, flat indices, counts; several times the size of the responses)
    live as long as the fit, not as long as the user's :class:`Responses`.
    """

    __slots__ = ("_cache",)
    _cache: dict[str, Any]

    def __init__(self, R: Responses):
        super().__init__(R.workers, R.tasks, R.labels, shape=R.shape, n_labels=R.n_labels,
                         worker_ids=R.worker_ids, task_ids=R.task_ids)
        object.__setattr__(self, "_cache", {})

    def _memo(self, key: str, compute: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def _memoized(self, key: str) -> bool:
        return key in self._cache


def _csr_entries(A: Any) -> tuple | None:
    """(rows, cols, data, shape, indptr) of a well-formed 2-D CSR matrix, without a COO copy.

    Well-formed: row pointers from 0 to nnz, non-decreasing, column indices inside the
    shape. Anything else returns None and goes through scipy's COO conversion (and its
    own checks and messages), as every other sparse format does.
    """
    if getattr(A, "format", None) != "csr" or len(A.shape) != 2:
        return None
    indptr, cols, data = A.indptr, A.indices, A.data
    n, m = A.shape
    if (indptr.shape != (n + 1,) or cols.ndim != 1 or data.shape != cols.shape
            or indptr[0] != 0 or indptr[-1] != cols.size):
        return None
    counts = np.diff(indptr)
    if (counts < 0).any() or (cols.size and (cols.min() < 0 or cols.max() >= m)):
        return None
    rows = np.repeat(np.arange(n, dtype=cols.dtype), counts)
    return rows, cols, data, (int(n), int(m)), indptr


def _sorted_pairs(rows: np.ndarray, cols: np.ndarray, indptr: np.ndarray | None = None
                  ) -> bool:
    """True if the (row, col) pairs strictly increase: sorted, each pair once.

    Compares neighbours in the arrays' own dtype (no int64 key), O(nnz). With the row
    pointers of a CSR matrix (non-decreasing, so the rows are sorted) only the columns
    within each row are compared.
    """
    if rows.size < 2:
        return True
    increasing = cols[1:] > cols[:-1]
    if indptr is None:
        if not (rows[1:] >= rows[:-1]).all():
            return False
        increasing |= rows[1:] != rows[:-1]
    else:                                  # a new row starts after position indptr[i] - 1
        starts = indptr[1:-1]
        increasing[starts[(starts > 0) & (starts < rows.size)] - 1] = True
    return bool(increasing.all())


def _rebuild(cls, workers, tasks, labels, shape, n_labels, worker_ids, task_ids):
    return cls(workers, tasks, labels, shape=shape, n_labels=n_labels,
               worker_ids=worker_ids, task_ids=task_ids)


#: Lower-case column names that mean worker / task / label in a frame of triples (as in
#: toptwo.io's suggestions); a frame named this way is never read as a matrix.
_TRIPLE_SYNONYMS = (
    ("worker", "worker_id", "workerid", "annotator", "annotator_id", "rater", "user",
     "user_id", "labeler", "labeller", "contributor"),
    ("task", "task_id", "taskid", "question", "question_id", "item", "item_id", "example",
     "object", "image", "unit"),
    ("label", "answer", "response", "annotation", "choice", "class", "label_id", "value",
     "rating"),
)


def _refuse_likely_triples(df: Any, cols: list, owner: str) -> None:
    """Refuse a 3-column frame that is almost surely triples, not a 3-task matrix.

    Either its column names mean worker, task and label in some spelling
    (``Worker/Task/Label``, ``annotator/item/answer``), or it is integer-valued with a
    third column in 1..max (no 0 = "not answered") and ids in the first two columns
    beyond every value of the third (as a matrix, those ids would be labels: K = 60 from
    a 599 x 3 frame of triples).
    """
    if len(cols) != 3:
        return
    names = [str(c).strip().lower() for c in cols]
    roles = [next((r for r, syn in enumerate(_TRIPLE_SYNONYMS) if n in syn), None)
             for n in names]
    fix = (f"Read it as triples with Responses.from_triples(df, columns=(worker_column, "
           f"task_column, label_column)), or as a response matrix (workers in rows, tasks "
           f"in columns, 0 = not answered) with {owner.split('.')[0]}.fit(df.to_numpy()).")
    if sorted(r for r in roles if r is not None) == [0, 1, 2]:
        order = tuple(cols[roles.index(r)] for r in range(3))
        raise ValueError(f"The DataFrame passed to {owner} has the columns {cols!r}, which "
                         f"name (worker, task, label) triples {order!r}, but not as "
                         f"'worker', 'task', 'label' exactly; nothing is guessed. Read it with "
                         f"Responses.from_triples(df, columns={order!r}), or rename the "
                         f"columns to 'worker', 'task', 'label'; to fit it as a 3-task "
                         f"response matrix, pass df.to_numpy().")
    if any(getattr(df[c].dtype, "kind", "O") not in "iuf" for c in cols) or len(df) < 2:
        return
    try:                                  # nullable dtypes too: <NA> becomes NaN
        arr = df.to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):
        return
    if not np.isfinite(arr).all() or (arr != np.round(arr)).any():
        return
    third = arr[:, 2]
    if third.min() < 1 or arr[:, :2].min() < 0:
        return
    if arr[:, :2].max() > third.max():
        raise ValueError(f"The DataFrame passed to {owner} ({arr.shape[0]} x 3, columns "
                         f"{cols!r}) looks like (worker, task, label) triples, not a response "
                         f"matrix: its third column holds 1..{int(third.max())} with no 0, and "
                         f"its first two hold ids up to {int(arr[:, :2].max())}, which as a "
                         f"matrix would be labels (K = {int(arr.max())}). {fix}")


def _frame_responses(df: Any, n_labels: int | None, owner: str) -> Responses:
    """A DataFrame passed to ``fit``: triples by their column names, else a numeric matrix."""
    cols = list(df.columns)
    named = [c for c in TRIPLE_COLUMNS if c in cols]
    if named:
        if len(named) < 3 or len(cols) > 3:
            _frame_triples(df, TRIPLE_COLUMNS, owner)          # raises with the details
        return _from_triples(Responses, df, None, None, n_workers=None, n_tasks=None,
                             n_labels=n_labels, duplicates="error", worker_ids=None,
                             task_ids=None, columns=TRIPLE_COLUMNS, owner=owner)
    _refuse_likely_triples(df, cols, owner)
    kinds = {c: df[c].dtype for c in cols} if len(set(cols)) == len(cols) else {}
    bad = [c for c, dt in kinds.items()
           if getattr(dt, "kind", "O") not in "iuf" or str(dt) == "boolean"]
    if bad or not kinds:
        what = (f"column {bad[0]!r} has dtype {kinds[bad[0]]}" if bad
                else "its column names repeat")
        raise TypeError(f"The DataFrame passed to {owner} is neither a frame of triples nor "
                        f"a numeric response matrix ({what}). Expected either columns "
                        f"'worker', 'task', 'label' (one row per answer; other names: "
                        f"Responses.from_triples(df, columns=(worker, task, label))), or a "
                        f"numeric n_workers x n_tasks matrix, workers in rows, tasks in "
                        f"columns, labels 1..K and 0 for 'not answered'.")
    R = as_responses(df.to_numpy(), n_labels, owner=owner)
    # Responses are immutable: a new one with the frame's ids, same arrays
    return _FitView(Responses(R.workers, R.tasks, R.labels, shape=R.shape,
                              n_labels=R.n_labels,
                              worker_ids=np.asarray(df.index, dtype=object),
                              task_ids=np.asarray(df.columns, dtype=object)))


def as_responses(A: Any, n_labels: int | None = None, *, owner: str = "fit") -> Responses:  # noqa: C901 - every accepted input kind in one gate
    """Validate a response matrix and return it as :class:`Responses`.

    Parameters
    ----------
    A : array-like of int, scipy sparse matrix/array, pandas DataFrame, or Responses
        A DataFrame with the columns ``worker``, ``task`` and ``label`` (and no others)
        is read as triples (:meth:`Responses.from_triples`, any hashable ids, kept in
        ``worker_ids`` / ``task_ids``); any other DataFrame must be a numeric matrix,
        its index and columns kept as the worker and task ids. Otherwise
        ``(n_workers, n_tasks)`` with labels in 1..K and 0 for "not answered". Float
        arrays are accepted only when every entry is a whole number (the conversion is
        then exact); NaN, non-integers, negative labels and labels above ``n_labels`` are
        refused. In a numpy masked array, masked entries mean "not answered". In a
        sparse matrix, stored zeros mean "not answered"; note that scipy *adds* the
        labels of repeated (row, column) pairs when it converts COO input (1 + 2
        becomes 3) before toptwo sees them: build responses from triples with
        :meth:`Responses.from_triples` instead, which refuses or resolves duplicates.
        Rows and columns keep their positions (no relabelling).
    n_labels : int, optional
        K. When omitted it is inferred as the largest label present (for a
        :class:`Responses`, its own ``n_labels``), which under-counts K if the highest
        choice never occurs: pass it whenever you know it. A K above 1000 is accepted
        only when the data contain a label that large.
    owner : str
        Name of the calling function, used in messages.

    Returns
    -------
    Responses
        A private view for one fit: the same arrays (no copy), plus room for the
        arrays the fit derives from them (CSR form, task-major order, counts).
    """
    if isinstance(A, Responses):
        if not isinstance(A, _FitView) and not A._checked:
            _check_consistent(A, owner)
            object.__setattr__(A, "_checked", True)     # immutable: checked once
        K = A.n_labels if n_labels is None else check_int(n_labels, "n_labels", owner=owner,
                                                           minimum=2)
        if K == A.n_labels:
            return A if isinstance(A, _FitView) else _FitView(A)
        top = int(A.labels.max()) if A.nnz else 0
        check_n_labels_bound(K, top, owner=owner)
        if A.nnz and top > K:
            e = int(np.argmax(A.labels > K))
            raise ValueError(f"`A` passed to {owner}: labels must be in 1..n_labels with 0 "
                             f"for 'not answered'; found {int(A.labels[e])} at worker "
                             f"{int(A.workers[e])}, task {int(A.tasks[e])} with n_labels={K}.")
        return _FitView(A.with_n_labels(K))
    if sp.issparse(A):
        entries = _csr_entries(A)
        fresh_rows = entries is not None       # built here, not the caller's array
        if entries is None:                    # any other format, or a malformed CSR
            coo = sp.coo_array(A)
            if coo.ndim != 2:
                raise ValueError(f"`A` passed to {owner} must be 2-D with shape (n_workers, "
                                 f"n_tasks); got shape {coo.shape} instead.")
            entries = (coo.row, coo.col, coo.data, coo.shape, None)
        rows, cols, raw, shape, indptr = entries   # scipy's index dtype (int64 if needed)
        # signed integers need no conversion (as_int_array would only widen them; the
        # label checks below are the same on any integer dtype)
        data = raw if raw.dtype.kind == "i" else as_int_array(
            raw, "A", owner=owner,
            where=lambda pos: f"worker {int(rows[pos[0]])}, task {int(cols[pos[0]])}",
            nan_hint=" Leave unanswered entries unstored (or store 0).")
        answered = data != 0
        stored = None                          # positions of the stored nonzeros, if any 0
        own = (True, True, True)               # which arrays are this function's own
        if not answered.all():
            stored = np.flatnonzero(answered)
            rows, cols, data = rows[stored], cols[stored], data[stored]
        # Sorted by (worker, task) with each pair once -- a canonical CSR matrix, checked
        # here in a few O(nnz) comparisons, never trusted from scipy's flag -- needs no
        # reordering (a stable sort would return the identity); anything else is sorted
        # and searched for repeated pairs.
        if not _sorted_pairs(rows, cols, indptr if stored is None else None):
            dups = _find_duplicates(rows, cols, shape[1])
            if dups.n_pairs:
                at = (lambda e: e) if stored is None else (lambda e: int(stored[e]))
                raise _duplicates_error(
                    dups, source=f"The sparse matrix passed to {owner}",
                    unit="stored entries", where=lambda e: f"in stored entry {at(e)}",
                    show=lambda e: (int(rows[e]), int(cols[e]), int(data[e])),
                    fix="scipy would add the labels of a repeated pair; build the responses "
                        "from triples instead (Responses.from_triples with "
                        "duplicates='first' or 'last').")
            rows, cols, data = rows[dups.order], cols[dups.order], data[dups.order]
            own = (True, True, True)
        elif stored is None:   # the caller's arrays (but rows of a CSR): copied below
            own = (fresh_rows, False, False)
    else:
        if _is_dataframe(A):          # neither Responses nor scipy sparse
            return _frame_responses(A, n_labels, owner)
        if isinstance(A, (list, tuple)) and len(A) == 0:
            raise ValueError(f"`A` passed to {owner} is empty; it must be a 2-D array of shape "
                             f"(n_workers, n_tasks) with at least one response.")

        def where(pos: tuple[int, ...]) -> str:
            if len(pos) == 2:
                return f"worker {pos[0]}, task {pos[1]}"
            return default_where(pos)

        arr = as_int_array(A, "A", owner=owner, where=where, masked="unanswered",
                           nan_hint=" Use 0 for 'not answered', not NaN or a missing value "
                                    "(e.g. np.nan_to_num(A, nan=0), or df.fillna(0) for a "
                                    "pandas DataFrame).")
        if arr.ndim != 2:
            raise ValueError(f"`A` passed to {owner} must be 2-D with shape (n_workers, "
                             f"n_tasks); got an array with shape {arr.shape} instead.")
        shape = arr.shape
        own = (True, True, True)
        rows, cols = np.nonzero(arr)
        data = arr[rows, cols]
        if (arr < 0).any():
            i, j = (int(v) for v in np.argwhere(arr < 0)[0])
            raise ValueError(f"`A` passed to {owner} must hold labels in 1..n_labels with 0 "
                             f"for 'not answered'; found {int(arr[i, j])} at worker {i}, "
                             f"task {j}.")
    if shape[0] == 0 or shape[1] == 0:
        raise ValueError(f"`A` passed to {owner} is empty: shape {tuple(shape)}; it needs at "
                         f"least one worker and one task.")
    if max(shape) > INT32_MAX:
        raise ValueError(f"`A` passed to {owner} has shape {tuple(shape)}; each dimension "
                         f"must be at most {INT32_MAX} (indices are stored as int32).")
    if data.size == 0:
        raise ValueError(f"`A` passed to {owner} holds no responses (every entry is 0, "
                         f"'not answered'); nothing to estimate from.")
    K = _resolve_n_labels(data, n_labels, owner=owner,
                          where=lambda e: f"worker {int(rows[e])}, task {int(cols[e])}",
                          subject=f"`A` passed to {owner}")
    # int32 arrays (labels checked <= INT32_MAX above); the caller's own arrays are copied,
    # so that freezing the responses never touches the caller's data
    return _FitView(Responses(rows.astype(np.int32, copy=not own[0]),
                              cols.astype(np.int32, copy=not own[1]),
                              data.astype(np.int32, copy=not own[2]),
                              shape=(int(shape[0]), int(shape[1])), n_labels=K))
