"""Reading response triples from CSV and writing results as CSV.

The file format is the one of the command line (``python -m toptwo infer FILE``)::

    worker,task,label
    alice,q1,3
    bob,q1,2
    alice,q2,5

* By default a header row names the three columns ``worker``, ``task`` and ``label``
  exactly, in any order; any other column is refused (no silent dropping of data).
  ``columns=`` names the three among others (the others are then ignored), ``order=``
  reads a file without a header (the paper's ``task worker label`` files).
* Fields are separated by a comma, a tab, a semicolon or one space: sniffed from the
  first line, or ``sep=``. gzip, bzip2 and xz files are decompressed; ``"-"`` is standard
  input; pipes are read once (:mod:`toptwo._sources`).
* Worker and task ids are arbitrary strings (leading and trailing spaces are
  stripped). Row ``i`` of the response matrix A (shape ``(n_workers, n_tasks)``,
  the paper's orientation, eq. (1) [`eqn:A_dist`]) is the ``i``-th distinct worker in
  order of first appearance in the file, and likewise for the tasks; the ids are kept
  in :attr:`toptwo.Responses.worker_ids` / :attr:`~toptwo.Responses.task_ids`.
* Labels are integers ``label_base .. label_base + K - 1`` (by default ``1..K``, the
  paper's convention). Every row is an answer: a blank label, or ``0`` with
  ``label_base=1``, is refused; leave unanswered pairs out of the file.
* A (worker, task) pair given twice is handled by the ``duplicates`` policy of
  :meth:`toptwo.Responses.from_triples` (``"error"`` by default).

Every error message names the file, the line number, the offending value and what is
allowed. Empty lines (or lines of spaces only) are skipped; a line of empty
fields such as ``,,`` is refused. Labels may have any number of digits (``0002`` is 2).

Speed: the rows are parsed by pyarrow's CSV reader when pyarrow is installed (the
``fast`` extra), else by pandas' C parser, else by the ``csv`` module; the library
parsers' output is checked column-wise and any file with something unusual goes to the
strict ``csv``-module reader, so results and messages do not depend on the parser
(``engine`` of :func:`read_triples_csv`; ``benchmarks/bench_csv.py`` measures it).
"""

from __future__ import annotations

import csv
import re
import math
import os
from collections.abc import Sequence
from typing import IO, Any

import numpy as np

from ._csv_parse import (_SPACE, _UTF8_MSG, _Fallback, _clean_ids, _not_utf8,  # noqa: F401
                         _object_array, _parse_columns, _show, _unquote)
from ._sources import Source, open_source
from ._validation import check_choice, check_int
from .responses import (DUPLICATE_POLICIES, INT32_MAX, MAX_INFERRED_LABELS, Responses,
                        _duplicates_error, _find_duplicates, exceeds_label_bound)

__all__ = ["read_triples_csv", "read_gold_csv", "write_results_csv", "write_reliability_csv",
           "REQUIRED_COLUMNS", "GOLD_COLUMNS"]

#: The columns of a triples file, in the order used by the error messages.
REQUIRED_COLUMNS = ("worker", "task", "label")

_INT_RE = re.compile(r"-?[0-9]+")
_OWNER = "read_triples_csv"


def _fail(path: str, line: int | None, message: str) -> ValueError:
    where = f"{path}" if line is None else f"{path}, line {line}"
    return ValueError(f"{where}: {message}")


def read_triples_csv(path: str | os.PathLike | IO[Any], *, n_labels: int | None = None,
                     duplicates: str = "error", label_base: int = 1,
                     engine: str = "auto", sep: str | None = None,
                     columns: Sequence[str] | None = None,
                     order: Sequence[str | None] | None = None) -> Responses:
    """Read ``worker,task,label`` triples from a CSV or TSV file.

    Parameters
    ----------
    path : str, path-like or file object
        The file (UTF-8, an optional byte-order mark is ignored); ``"-"`` is standard
        input. A gzip, bzip2 or xz file is decompressed (recognised by its first bytes;
        a name ending in ``.gz``/``.bz2``/``.xz`` whose content is not compressed is
        refused). Pipes, named pipes and file objects are read once, whole
        (:mod:`toptwo._sources`). By default the first non-empty line is a header
        naming exactly the columns ``worker``, ``task`` and ``label`` (any order).
    sep : {",", "\\t", ";", " "}, optional
        The field separator (also by name: ``"comma"``, ``"tab"``, ``"semicolon"``,
        ``"space"``). By default it is sniffed from the first non-empty line: the one of
        comma, tab and semicolon it holds (two of them: refused, pass ``sep``), else a
        single space if it holds one, else a comma.
    columns : sequence of three str, optional
        The header's names of the worker, task and label columns, in that order (e.g.
        ``("annotator", "item", "answer")``); the file's other columns are then ignored
        (but every row must have the header's number of fields).
    order : sequence of str or None, optional
        For a file without a header row (the paper's ``task worker label`` files): the
        role of each field, e.g. ``("task", "worker", "label")``; ``None`` or ``"-"``
        for a field to ignore. ``worker``, ``task`` and ``label`` occur once each.
        Not together with ``columns``.
    n_labels : int, optional
        K, the number of answer choices. When omitted it is inferred as the largest
        label in the file, which under-counts K if the highest choice never occurs:
        pass it whenever you know it.
    duplicates : {"error", "first", "last"}, default="error"
        What to do when one worker answered one task on more than one row: raise
        (the message counts the repeated pairs and shows one with its line numbers),
        keep the first row in file order, or keep the last.
    label_base : int, default=1
        The smallest label in the file's numbering: 1 for labels ``1..K`` (the
        paper's), 0 for files numbering choices ``0..K-1``. Labels are shifted to
        ``1..K`` inside :class:`~toptwo.Responses`; add ``label_base - 1`` to get the
        file's numbering back (:func:`write_results_csv` does so).
    engine : {"auto", "pyarrow", "pandas", "python"}, default="auto"
        Which parser reads the rows. ``"python"`` is the strict reader (the ``csv``
        module, one check per field, every error located). ``"pyarrow"`` and
        ``"pandas"`` parse with the library's C/C++ reader (10-50x faster) and check
        the result column-wise; whenever they meet anything unusual (a quote, a blank
        id, a bad label, a repeated pair, a parse error) they hand the file to the
        strict reader, so the result and every message are the same for every engine.
        ``"auto"`` uses pyarrow if it is installed (``pip install toptwo[fast]``), else
        pandas, else the strict reader.

    Returns
    -------
    Responses
        ``(n_workers, n_tasks)`` responses with labels ``1..K``; ``worker_ids[i]`` and
        ``task_ids[j]`` (object arrays of str) give the ids of row ``i`` and column
        ``j``, numbered in order of first appearance.

    Raises
    ------
    ValueError
        On a missing or malformed header, extra columns, a row with the wrong number
        of fields, an empty id, a label that is not an integer in the allowed range,
        an empty file, or repeated (worker, task) pairs with ``duplicates="error"``.
        The message names the file and the line.
    OSError
        If the file cannot be opened.
    """
    check_choice(duplicates, "duplicates", DUPLICATE_POLICIES, owner=_OWNER)
    base = check_int(label_base, "label_base", owner=_OWNER, minimum=0)
    K_given = None if n_labels is None else check_int(n_labels, "n_labels", owner=_OWNER,
                                                      minimum=2)
    check_choice(engine, "engine", ENGINES, owner=_OWNER)
    layout = _Layout(sep, columns, order)
    src = open_source(path)
    layout.sep = _sniff(src, layout.sep)
    if engine != "python":
        R = _read_fast(src, layout, engine, base, K_given, duplicates)
        if R is not None:
            return R
    return _read_strict(src, layout, base, K_given, duplicates)


#: The columns of a gold file (``read_gold_csv``), in the order of a file without header.
GOLD_COLUMNS = ("task", "label")


def read_gold_csv(path: str | os.PathLike | IO[Any], task_ids: Sequence[Any] | np.ndarray,
                  n_labels: int, *, label_base: int = 1, sep: str | None = None
                  ) -> np.ndarray:
    """Read known answers of some tasks (gold tasks): one ``task label`` pair per line.

    The layout of the paper's truth files (``adult2_truth.txt``, ``web_truth.txt``...):
    two fields, the task id and its true label, separated by a comma, a tab, a
    semicolon or one space (sniffed from the first line, or ``sep``), with or without a
    header row naming the columns ``task`` and ``label`` (any order). gzip, bzip2 and
    xz files and ``"-"`` (standard input) are read as by :func:`read_triples_csv`. A
    task may be listed more than once with the same label (``dog_truth.txt`` repeats
    each task once per answer); with two different labels it is refused.

    Parameters
    ----------
    path : str, path-like or file object
        The gold file.
    task_ids : sequence of length n_tasks
        The task ids of the answers (:attr:`toptwo.Responses.task_ids` of
        :func:`read_triples_csv`); every task of the gold file must be one of them.
    n_labels : int
        K; labels are ``label_base .. label_base + K - 1`` as in the answers file.
    label_base : int, default=1
        As in :func:`read_triples_csv`.
    sep : {",", "\\t", ";", " "}, optional
        The field separator (default: sniffed).

    Returns
    -------
    ndarray of int64, shape (n_tasks,)
        The known label of each task shifted to 1..K, 0 where the file gives none.

    Raises
    ------
    ValueError
        On an empty file, a line without exactly two fields, an unknown task id, a
        label that is not an integer in range, or a task given two labels; the message
        names the file and the line.
    """
    owner = "read_gold_csv"
    base = check_int(label_base, "label_base", owner=owner, minimum=0)
    K = check_int(n_labels, "n_labels", owner=owner, minimum=2)
    layout = _Layout(sep, None, None)
    src = open_source(path)
    sep = _sniff(src, layout.sep)
    name = src.name
    index = {str(t): j for j, t in enumerate(list(task_ids))}
    out = np.zeros(len(index), dtype=np.int64)
    first_line = np.zeros(len(index), dtype=np.int64)
    hi = base + K - 1
    it, il = 0, 1
    seen_row = False
    with src.text() as fh:
        reader = csv.reader(fh, delimiter=sep)
        try:
            for row in reader:
                line = reader.line_num
                if not row or all(not f.strip() for f in row) and (len(row) == 1 or sep == " "):
                    continue
                fields = [f.strip() for f in row]
                if any(_not_utf8(f) for f in fields):
                    raise _fail(name, line, f"{_UTF8_MSG} ({_show(row)}).")
                if not seen_row:
                    seen_row = True
                    if sorted(fields) == sorted(GOLD_COLUMNS):       # a header row
                        it, il = fields.index("task"), fields.index("label")
                        continue
                    if len(fields) == 2 and not _INT_RE.fullmatch(fields[1]):
                        raise _fail(name, line, f"the first line {_show(row)} is neither a "
                                    f"header naming the columns task and label nor a gold "
                                    f"answer 'task{_sep_name(sep)}label' with an integer "
                                    f"label.")
                if len(row) != 2:
                    raise _fail(name, line, f"expected 2 fields (task and label) separated by "
                                f"{_sep_name(sep)!r}; got {len(row)}: {_show(row)}."
                                f"{_width_hint(row, sep, 2)}")
                t, lab = fields[it], fields[il]
                j = index.get(t)
                if j is None:
                    raise _fail(name, line, f"task {_show(t)} is not among the {len(index)} "
                                f"tasks of the answers; a gold task must be one of them "
                                f"(the same id as written there).")
                if not _INT_RE.fullmatch(lab) or not base <= _label_value(lab) <= hi:
                    hint = (" If the file numbers the choices from 0 (0..K-1), pass "
                            "label_base=0 (CLI: --label-base 0)."
                            if _INT_RE.fullmatch(lab) and _label_value(lab) == base - 1 == 0
                            else "")
                    raise _fail(name, line, f"the label of task {_show(t)} must be an integer "
                                f"in {base}..{hi} (K={K}, as in the answers); got "
                                f"{_show(lab)}.{hint}")
                value = _label_value(lab) - base + 1
                if out[j] and out[j] != value:
                    raise _fail(name, line, f"task {_show(t)} is given label {_show_int(lab)} here "
                                f"and {out[j] + base - 1} on line {first_line[j]}; a gold "
                                f"task has one known answer.")
                if not out[j]:
                    out[j], first_line[j] = value, line
        except csv.Error as exc:
            raise _fail(name, reader.line_num or None, f"not a readable CSV row ({exc}).") \
                from None
    if not out.any():
        raise _fail(name, None, "the file holds no gold answers; expected one line "
                    "'task label' per task with a known answer.")
    return out


#: The parsers of :func:`read_triples_csv`.
ENGINES = ("auto", "pyarrow", "pandas", "python")


class _Labels:
    """The checks of one label field, shared by the strict and the fast readers."""

    def __init__(self, base: int, K_given: int | None):
        self.base, self.K_given = base, K_given
        self.hi = hi = base + K_given - 1 if K_given is not None else None
        self.allowed = (f"an integer in {base}..{hi} (n_labels={K_given})" if hi is not None
                        else f"an integer >= {base}")
        # Largest label accepted on a line: K is stored as int32, and without n_labels a
        # label beyond MAX_INFERRED_LABELS is a stray value (K would be that large).
        self.top_ok = (min(hi, base + INT32_MAX - 1) if hi is not None
                       else base + MAX_INFERRED_LABELS - 1)

    def problem(self, lab: str, w: str, t: str) -> str | None:
        """The message for label field ``lab`` (stripped) of worker w, task t, or None."""
        if not lab:
            return (f"the label must be {self.allowed}; got a blank label (worker {_show(w)}, "
                    f"task {_show(t)}). Every row is an answer: leave unanswered pairs out of "
                    f"the file.")
        if not _INT_RE.fullmatch(lab):     # int() would accept "1_0" and "+3"
            what = _UTF8_MSG if _not_utf8(lab) else f"the label must be {self.allowed}"
            return f"{what}; got {_show(lab)} (worker {_show(w)}, task {_show(t)})."
        value = _label_value(lab)
        if self.base <= value <= self.top_ok:
            return None
        if value > self.top_ok and self.hi is None:
            K = value - self.base + 1
            K_text = str(K) if len(lab) <= 40 else f"a number of {len(str(K))} digits"
            return (f"n_labels was not given and the label {_show_int(lab)} (worker {_show(w)}, "
                    f"task {_show(t)}) would make K = {K_text} > {MAX_INFERRED_LABELS}, which "
                    f"is almost always a stray value; pass n_labels=K (CLI: --n-labels K) if "
                    f"K is really that large.")
        hint = ""
        if value == self.base - 1:
            hint = " Every row is an answer: leave unanswered pairs out of the file."
            if value == 0:
                hint += (" If the file numbers the choices from 0 (0..K-1), pass "
                         "label_base=0 (CLI: --label-base 0).")
        return (f"the label must be {self.allowed}; got {_show(lab)} (worker {_show(w)}, "
                f"task {_show(t)}).{hint}")


def _label_value(lab: str) -> int:
    """The value of a label matching ``-?[0-9]+``, whatever its number of digits.

    Leading zeros are dropped first (``000...0002`` is 2). A value of more than 40
    digits is out of every allowed range; it is returned as +-10**40 so that no
    conversion (Python refuses to convert strings of more than 4300 digits) is needed.
    """
    negative = lab.startswith("-")
    digits = (lab[1:] if negative else lab).lstrip("0") or "0"
    value = int(digits) if len(digits) <= 40 else 10 ** 40
    return -value if negative else value


def _show_int(lab: str) -> str:
    """A label field as text, shortened past 40 characters."""
    return lab if len(lab) <= 40 else f"{lab[:20]}...({len(lab)} characters)"


#: Field separators: the character and its name (``sep`` takes either).
SEPARATORS = {",": "comma", "\t": "tab", ";": "semicolon", " ": "space"}

#: Header names often given to the three columns (compared in lower case); used only to
#: suggest ``columns=`` / ``--columns`` in a message, never to pick columns silently.
_SYNONYMS = {
    "worker": ("worker", "worker_id", "workerid", "annotator", "annotator_id", "rater",
               "user", "user_id", "labeler", "labeller", "contributor", "_worker_id"),
    "task": ("task", "task_id", "taskid", "question", "question_id", "item", "item_id",
             "example", "object", "image", "unit", "_unit_id"),
    "label": ("label", "answer", "response", "annotation", "choice", "class", "label_id",
              "value", "rating"),
}


def _sep_name(sep: str) -> str:
    return {"\t": "tab", " ": "space"}.get(sep, sep)


class _Layout:
    """How the fields of a file are laid out: separator, header, which field is which."""

    def __init__(self, sep: Any, columns: Any, order: Any):
        if sep is not None:
            by_name = {v: k for k, v in SEPARATORS.items()}
            sep = by_name.get(sep, "\t" if sep == "\\t" else sep)
            if sep not in SEPARATORS:
                raise ValueError(f"The 'sep' parameter of {_OWNER} (CLI: --sep) must be one "
                                 f"of ',', tab, ';' or a space (or by name: comma, tab, "
                                 f"semicolon, space); got {sep!r} instead.")
        if columns is not None and order is not None:
            raise TypeError(f"{_OWNER} takes 'columns' (names in a header row) or 'order' "
                            f"(the fields of a file without a header; CLI: --no-header), "
                            f"not both.")
        if columns is not None:
            if (isinstance(columns, (str, bytes)) or len(columns) != 3
                    or not all(isinstance(c, str) and c.strip() for c in columns)
                    or len({c.strip() for c in columns}) != 3):
                raise ValueError(f"The 'columns' parameter of {_OWNER} (CLI: --columns "
                                 f"WORKER,TASK,LABEL) must be three distinct non-empty "
                                 f"column names, of the worker, task and label columns in "
                                 f"that order; got {columns!r} instead.")
            columns = tuple(c.strip() for c in columns)
        if order is not None:
            roles = [None if r in (None, "-", "") else r for r in
                     (order if not isinstance(order, str) else order.split(","))]
            if (any(r not in REQUIRED_COLUMNS + (None,) for r in roles)
                    or sorted(r for r in roles if r) != sorted(REQUIRED_COLUMNS)):
                raise ValueError(f"The 'order' parameter of {_OWNER} (CLI: --no-header "
                                 f"ORDER) must name the role of each field of a file without "
                                 f"a header: worker, task and label once each, '-' for a "
                                 f"field to ignore (e.g. task,worker,label); got {order!r} "
                                 f"instead.")
            order = tuple(roles)
        self.sep, self.columns, self.order = sep, columns, order

    @property
    def names(self) -> tuple[str, str, str]:
        return self.columns or REQUIRED_COLUMNS


def _sniff(src: Source, sep: str | None) -> str:
    """The separator: ``sep`` if given, else from the first non-empty line."""
    if sep is not None:
        return sep
    with src.text() as fh:
        line_no, line = 0, ""
        for line_no, line in enumerate(fh, 1):
            if line.strip():
                break
            if line_no > 1000:
                break
    found = [c for c in (",", "\t", ";") if c in line]
    if len(found) > 1:
        raise _fail(src.name, line_no, f"cannot tell the field separator: the line holds "
                    f"both {_sep_name(found[0])!r} and {_sep_name(found[1])!r} "
                    f"({_show(line.rstrip())}); pass sep= (CLI: --sep comma, --sep tab or "
                    f"--sep ';').")
    if found:
        return found[0]
    return " " if " " in line.strip() else ","


def _looks_like_data(fields: list[str]) -> bool:
    return len(fields) >= 3 and all(_INT_RE.fullmatch(f) for f in fields)


def _suggest_columns(header: list[str]) -> str:
    """A ``--columns`` suggestion from the header's names, or ''."""
    low = [h.lower() for h in header]
    pick = []
    for role in REQUIRED_COLUMNS:
        hits = [header[k] for k, h in enumerate(low) if h in _SYNONYMS[role]]
        if len(hits) != 1:
            return ""
        pick.append(hits[0])
    if len(set(pick)) != 3 or any("," in p for p in pick):
        return ""
    return (f" If they are {', '.join(repr(p) for p in pick)}, pass columns="
            f"{tuple(pick)!r} (CLI: --columns {','.join(pick)}).")


_NO_HEADER_FIX = ("pass order=(...) with the role of each field (CLI: --no-header ORDER, "
                  "e.g. --no-header worker,task,label as in the paper's adult2, color, flag, "
                  "food and plot files, or --no-header task,worker,label as in dog and web)")


def _header(reader: Any, name: str, layout: _Layout
            ) -> tuple[list[str] | None, int, tuple[int, int, int], int]:
    """Read and check the header row (if the layout has one).

    Returns (raw header fields or None, its line number or 0, the field indices of
    worker, task and label, the number of fields of every row).
    """
    if layout.order is not None:
        roles = list(layout.order)
        iw, it, il = (roles.index(c) for c in REQUIRED_COLUMNS)
        return None, 0, (iw, it, il), len(roles)
    header = None
    for row in reader:
        if not row or all(not f.strip() for f in row):
            continue
        header = [f.strip() for f in row]
        header_line = reader.line_num
        break
    want = layout.names
    if header is None:
        raise _fail(name, None, f"the file is empty; expected a header row "
                    f"'{','.join(want)}' followed by one row per answer.")
    if any(_not_utf8(h) for h in header):
        raise _fail(name, header_line, f"{_UTF8_MSG} (header {_show(row)}).")
    if _looks_like_data(header) and not set(want) & set(header):
        raise _fail(name, header_line, f"the first line {_show(row)} looks like an answer, "
                    f"not a header naming the columns {', '.join(want)}; if the file has "
                    f"no header row, {_NO_HEADER_FIX}.")
    missing = [c for c in want if c not in header]
    repeated = sorted({c for c in want if header.count(c) > 1})
    if layout.columns is None:
        extra = [h for h in header if h not in REQUIRED_COLUMNS]
        if extra and not missing:
            raise _fail(name, header_line,
                        f"the header {_show(row)} has column(s) "
                        f"{', '.join(repr(h) for h in extra)} besides worker, task and label; "
                        f"nothing is dropped silently: to read those three and ignore the "
                        f"others, pass columns=('worker', 'task', 'label') (CLI: --columns "
                        f"worker,task,label).")
    if missing:
        hint = _suggest_columns(header) or (
            f" Name the worker, task and label columns with columns=(WORKER, TASK, LABEL) "
            f"(CLI: --columns WORKER,TASK,LABEL); the header's names are "
            f"{', '.join(repr(h) for h in header)}.")
        given = "" if layout.columns is None else " (as given by columns / --columns)"
        if len(missing) == 3:
            hint += f" If the file has no header row, {_NO_HEADER_FIX}."
        raise _fail(name, header_line,
                    f"the header {_show(row)} has no column(s) "
                    f"{', '.join(repr(c) for c in missing)}{given}.{hint}")
    if repeated:
        raise _fail(name, header_line,
                    f"the header {_show(row)} names column(s) "
                    f"{', '.join(repr(c) for c in repeated)} more than once; each of "
                    f"{', '.join(want)} must occur once (rename the others).")
    iw, it, il = (header.index(c) for c in want)
    return row, header_line, (iw, it, il), len(header)


def _read_strict(src: Source, layout: _Layout, base: int,  # noqa: C901 - one pass over the file with a check per field
                 K_given: int | None, duplicates: str) -> Responses:
    """The strict reader: the csv module, one check per field, every error located."""
    name = src.name
    worker_index: dict[str, int] = {}
    task_index: dict[str, int] = {}
    w_list: list[int] = []
    t_list: list[int] = []
    lab_list: list[int] = []
    line_list: list[int] = []
    check = _Labels(base, K_given)
    base_m1 = base - 1
    sep = layout.sep
    with src.text() as fh:
        reader = csv.reader(fh, delimiter=sep)
        try:
            raw_header, _, (iw, it, il), n_fields = _header(reader, name, layout)
            where = "as in the header" if raw_header is not None else "as in order / --no-header"
            for row in reader:
                line = reader.line_num
                if not row or all(not f.strip() for f in row) and (len(row) == 1 or sep == " "):
                    continue                          # an empty (or all-space) line
                if len(row) != n_fields:
                    raise _fail(name, line, f"expected {n_fields} fields separated by "
                                f"{_sep_name(sep)!r} {where}; got {len(row)}: {_show(row)}."
                                f"{_width_hint(row, sep, n_fields)}")
                w, t, lab = row[iw].strip(), row[it].strip(), row[il].strip()
                if not w or not t:
                    col = "worker" if not w else "task"
                    raise _fail(name, line, f"the {col} id must be a non-empty string; got "
                                f"{row[iw if col == 'worker' else it]!r} in row {_show(row)}.")
                problem = check.problem(lab, w, t)
                if problem is not None:
                    if raw_header is None and not lab_list and \
                            {f.strip() for f in row} & set(REQUIRED_COLUMNS):
                        problem += (" The line looks like a header: if the file has one, "
                                    "leave out order (CLI: --no-header).")
                    raise _fail(name, line, problem)
                w_list.append(worker_index.setdefault(w, len(worker_index)))
                t_list.append(task_index.setdefault(t, len(task_index)))
                lab_list.append(_label_value(lab) - base_m1)
                line_list.append(line)
        except csv.Error as exc:
            raise _fail(name, reader.line_num or None, f"not a readable CSV row ({exc}).") \
                from None
    if not lab_list:
        if layout.order is not None:
            raise _fail(name, None, "the file is empty; expected one row per answer.")
        raise _fail(name, None, "the file has a header but no answers; expected at least "
                    "one row 'worker,task,label' after the header.")
    for kind, index, col_list in (("worker", worker_index, w_list),
                                  ("task", task_index, t_list)):
        bad = next((k for k in index if _not_utf8(k)), None)
        if bad is not None:                    # rare: find its first line
            e = col_list.index(index[bad])
            raise _fail(name, line_list[e], f"{_UTF8_MSG} (the {kind} id {_show(bad)}).")
    labels = np.asarray(lab_list, dtype=np.int64)
    del lab_list
    workers = np.asarray(w_list, dtype=np.int64)
    tasks = np.asarray(t_list, dtype=np.int64)
    del w_list, t_list
    worker_ids = _object_array(list(worker_index))
    task_ids = _object_array(list(task_index))
    lines = np.asarray(line_list, dtype=np.int64)
    del line_list
    return _finish(name, workers, tasks, labels, worker_ids, task_ids, base, K_given,
                   duplicates, lines)


def _width_hint(row: list[str], sep: str, n_fields: int) -> str:
    """A hint when a row's width suggests another separator or a space too many."""
    text = sep.join(row)
    others = [c for c in SEPARATORS if c != sep and c in text and c != " "]
    if others:
        return (f" The row holds {_sep_name(others[0])!r}: if that is the separator, pass "
                f"sep= (CLI: --sep {_sep_name(others[0])}).")
    if sep == " " and "" in row:
        return (" With sep=' ' fields are separated by exactly one space, with none at "
                "either end of the line; this row has an empty field.")
    return ""


def _finish(name: str, workers: np.ndarray, tasks: np.ndarray, labels: np.ndarray,
            worker_ids: np.ndarray, task_ids: np.ndarray, base: int, K_given: int | None,
            duplicates: str, lines: np.ndarray | None) -> Responses:
    """The checks that need the whole file, then the :class:`Responses`.

    ``lines`` gives the line of every row (the strict reader); without it (the fast
    reader), a check that needs a line raises :class:`_Fallback` instead.
    """
    top = int(labels.max())
    if K_given is None and top < 2:
        if lines is None:
            raise _Fallback
        e = int(np.argmax(labels))
        raise _fail(name, int(lines[e]), f"n_labels was not given and the largest label in "
                    f"the file is {base + top - 1}, so K would be "
                    f"{top} < 2; pass n_labels=K (CLI: --n-labels K).")
    if K_given is not None and exceeds_label_bound(K_given, top):
        raise _fail(name, None, f"n_labels={K_given} (CLI: --n-labels) but the largest "
                    f"label in the file is {base + top - 1}; a K above "
                    f"{MAX_INFERRED_LABELS} is accepted only when the file contains a "
                    f"label that large (the estimators allocate n_tasks x K arrays). "
                    f"Pass the real number of choices.")
    if duplicates == "error" and lines is not None:
        dups = _find_duplicates(workers, tasks, len(task_ids))
        if dups.n_pairs:
            raise _duplicates_error(
                dups, source=name, unit="rows", where=lambda e: f"on line {lines[e]}",
                show=lambda e: (_show(worker_ids[workers[e]]), _show(task_ids[tasks[e]]),
                                int(labels[e]) + base - 1),
                fix="Pass duplicates='first' or duplicates='last' (CLI: --duplicates "
                    "first|last) to keep one answer per pair.")
    # Every check that needs a line number was made above, so nothing below can fail
    # (the fast reader lets from_triples find repeated pairs, and falls back if it does).
    try:
        return Responses.from_triples(workers, tasks, labels, n_workers=len(worker_ids),
                                      n_tasks=len(task_ids), n_labels=K_given,
                                      duplicates=duplicates,  # type: ignore[arg-type]
                                      worker_ids=worker_ids, task_ids=task_ids)
    except ValueError:
        if lines is None:
            raise _Fallback from None
        raise


# ------------------------------------------------------------------ the fast reader
def _read_fast(src: Source, layout: _Layout, engine: str, base: int,
               K_given: int | None, duplicates: str) -> Responses | None:
    """Parse with pyarrow or pandas and check column-wise; None: use the strict reader.

    The parse is accepted only where it provably gives the strict reader's rows: the
    library reads with quoting off and the strict reader's dialect otherwise (the same
    separator, CR/LF/CRLF line ends, empty lines skipped), and every distinct raw field (a few per
    worker, task and label) is checked in Python as the strict reader would check it.
    A quote, NUL, a field over the csv module's limit, a blank id, a bad label, a row
    of the wrong width, undecodable bytes or a repeated pair -> None.
    """
    name, sep = src.name, layout.sep
    with src.text() as fh:                        # the header's errors, as in the strict reader
        try:
            row, header_line, picks, n_fields = _header(csv.reader(fh, delimiter=sep), name,
                                                        layout)
        except csv.Error:
            return None
    if row is None:                               # no header row: names of our own
        raw_header = [f"field{k}" for k in range(n_fields)]
    else:
        with src.text() as fh:                    # the header line as the library sees it
            for _ in range(header_line):
                text = fh.readline()
        raw_header = text.rstrip("\r\n").split(sep)
    try:
        if row is not None and ([_unquote(f) for f in raw_header] != row
                                or len(set(raw_header)) != len(raw_header)):
            return None
        columns = _parse_columns(src, engine, raw_header, sep, row is not None,
                                 [raw_header[k] for k in picks])
    except _Fallback:
        return None
    if columns is None:
        return None
    try:
        (w_codes, w_raw), (t_codes, t_raw), (l_codes, l_raw) = columns
        if len(l_codes) == 0:
            return None
        limit = csv.field_size_limit()
        worker_map, worker_ids = _clean_ids(w_raw, limit)
        task_map, task_ids = _clean_ids(t_raw, limit)
        check = _Labels(base, K_given)
        value = np.empty(len(l_raw), dtype=np.int64)
        for k, raw in enumerate(l_raw):
            lab = _unquote(raw).strip()
            if len(raw) > limit or check.problem(lab, "", "") is not None:
                raise _Fallback
            value[k] = _label_value(lab) - (base - 1)
        workers = w_codes if worker_map is None else worker_map[w_codes]
        tasks = t_codes if task_map is None else task_map[t_codes]
        labels = value[l_codes]
        del w_codes, t_codes, l_codes
        return _finish(name, workers, tasks, labels, worker_ids, task_ids, base, K_given,
                       duplicates, None)
    except _Fallback:
        return None


def _fmt_float(x: float, decimals: int | None = None) -> str:
    """A float as text: NaN becomes an empty field.

    ``decimals=None``: shortest round-trip repr. Otherwise rounded to ``decimals``
    decimal places with trailing zeros dropped ("0.25", "1", never "-0"), so that the
    text does not depend on the last bits of the value.
    """
    x = float(x)
    if math.isnan(x):
        return ""
    if decimals is None:
        return repr(x)
    text = f"{x:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _open_out(dest: str | os.PathLike | IO[str]):
    if hasattr(dest, "write"):
        return dest, False
    return open(os.fspath(dest), "w", newline="", encoding="utf-8"), True


def write_results_csv(dest: str | os.PathLike | IO[str], task_ids: Sequence[Any] | np.ndarray,
                      top_two: np.ndarray, confusion: np.ndarray, *,
                      label_base: int = 1, decimals: int | None = None,
                      probabilities: dict[str, np.ndarray] | None = None) -> None:
    """Write per-task results as CSV with the header ``task,g,h,confusion``.

    With ``probabilities`` (e.g. ``{"p_g": ..., "p_pair": ...}`` of
    :func:`toptwo.posterior.task_probabilities`) one more column per entry follows, in
    the dict's order (NaN as an empty field; a column of strings, such as
    ``p_g_source`` of :func:`toptwo.posterior.gold_probabilities`, as written).

    Parameters
    ----------
    dest : path or text file object
        Where to write (a file object such as ``sys.stdout`` is written to and left
        open).
    task_ids : sequence of length n_tasks
        Ids of the tasks (``Responses.task_ids``).
    top_two : ndarray of shape (n_tasks, 2)
        Estimated (g_j, h_j), labels 1..K (0 for a task without responses). Written in
        the file's numbering, i.e. shifted by ``label_base - 1``; 0 is written as an
        empty field.
    confusion : ndarray of shape (n_tasks,)
        q_hat_j (eq. (4) [`eqn:est_q`] for TopTwo1/TopTwo2, the vote ratio for
        majority vote); NaN is written as an empty field.
    label_base : int, default=1
        As in :func:`read_triples_csv`.
    decimals : int, optional
        Round ``confusion`` to this many decimal places (trailing zeros dropped); the
        command line uses 6 so that files are identical across machines. By default
        the shortest text that reads back as the same float.
    probabilities : dict of str to ndarray of shape (n_tasks,), optional
        Further columns, named by the keys (numbers rounded like ``confusion``, strings
        as they are).
    """
    top_two = np.asarray(top_two)
    confusion = np.asarray(confusion, dtype=float)
    if top_two.ndim != 2 or top_two.shape[1] < 2 or top_two.shape[0] != len(task_ids) \
            or confusion.shape != (len(task_ids),):
        raise ValueError(f"write_results_csv needs top_two of shape (n_tasks, 2) and "
                         f"confusion of shape (n_tasks,) with n_tasks={len(task_ids)}; got "
                         f"{top_two.shape} and {confusion.shape} instead.")
    extra = {} if probabilities is None else dict(probabilities)
    cols = []
    for name, col in extra.items():
        col = np.asarray(col)
        text = col.dtype.kind in "OUS"                  # a text column (p_g_source)
        if not text:
            col = col.astype(float)
        if col.shape != confusion.shape:
            raise ValueError(f"write_results_csv needs probabilities[{name!r}] of shape "
                             f"(n_tasks,) with n_tasks={len(task_ids)}; got {col.shape} "
                             f"instead.")
        cols.append([str(v) for v in col.tolist()] if text else
                    [_fmt_float(v, decimals) for v in col.tolist()])
    shift = int(label_base) - 1
    fh, close = _open_out(dest)
    try:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(["task", "g", "h", "confusion", *extra])
        for e, (tid, (g, h), q) in enumerate(zip(task_ids, top_two[:, :2].tolist(),
                                                 confusion.tolist())):
            out.writerow([tid, g + shift if g else "", h + shift if h else "",
                          _fmt_float(q, decimals), *(c[e] for c in cols)])
    finally:
        if close:
            fh.close()


def write_reliability_csv(dest: str | os.PathLike | IO[str], worker_ids: Sequence[Any] | np.ndarray,
                          reliability: np.ndarray, *, decimals: int | None = None) -> None:
    """Write per-worker reliabilities p_hat_i (e.g. TopTwo2's step 3, eq. (5) [`eqn:hatpi`]
    left one out) as ``worker,reliability``.

    ``reliability`` is written as estimated, without eq. (6)'s clip (TopTwo2's may fall
    outside [0, 1]);
    NaN (a worker without usable answers) is written as an empty field. ``decimals`` as
    in :func:`write_results_csv`.
    """
    rel = np.asarray(reliability, dtype=float)
    if rel.shape != (len(worker_ids),):
        raise ValueError(f"write_reliability_csv needs reliability of shape (n_workers,) "
                         f"with n_workers={len(worker_ids)}; got {rel.shape} instead.")
    fh, close = _open_out(dest)
    try:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(["worker", "reliability"])
        for wid, p in zip(worker_ids, rel.tolist()):
            out.writerow([wid, _fmt_float(p, decimals)])
    finally:
        if close:
            fh.close()
