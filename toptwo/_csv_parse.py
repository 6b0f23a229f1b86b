"""The quote-blind column parsers behind :func:`toptwo.io.read_triples_csv`'s fast path.

pyarrow's or pandas' parse of a CSV file, accepted only where every distinct raw field
checks as the strict ``csv``-module reader would read it (:func:`_unquote`,
:func:`_clean_ids`); anything unusual raises :class:`_Fallback` and the file goes to the
strict reader in :mod:`toptwo.io`.
"""
from __future__ import annotations

import csv
import re
from typing import Any

import numpy as np

from ._sources import Source


def _object_array(items: list[Any]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


class _Fallback(Exception):
    """Raised inside the fast reader: hand the file to the strict reader."""


def _unquote(raw: str) -> str:
    """A raw field of the quote-blind parse as the csv module reads it, or _Fallback.

    With quoting off, a field is split exactly as the csv module splits it when it has
    no quote, or when it is one quoted string ``"..."`` without quotes inside (the
    module then reads the inside); anything else (escaped quotes, a quoted comma, text
    around the quotes) goes to the strict reader, as do NUL, CR and LF.
    """
    if "\x00" in raw or "\r" in raw or "\n" in raw:
        raise _Fallback
    if '"' not in raw:
        return raw
    if len(raw) >= 2 and raw[0] == raw[-1] == '"' and '"' not in raw[1:-1]:
        return raw[1:-1]
    raise _Fallback


# The characters str.strip() removes (str.isspace(); tests/test_io_engines.py checks the
# list against Python's), without LF, which cannot occur inside a field of a parsed row.
_SPACE = "\t\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# In the distinct values joined by LF: one that needs the careful path (empty, space at
# either end, a quote, NUL or CR).
_UNUSUAL = re.compile(f"(?m)^[{_SPACE}]|[{_SPACE}]$|^$|[\"\x00\r]")
_ALL_QUOTED = re.compile(r'"[^"\n]*"(?:\n"[^"\n]*")*')


def _clean_ids(raw: list[str], limit: int) -> tuple[np.ndarray | None, np.ndarray]:
    """Strip the distinct raw ids (in order of first appearance) and merge equal ones.

    Returns (map from raw code to id index, or None if it is the identity; the ids).
    One regular-expression scan finds whether any id needs more than a copy (the usual
    case: none does); only then are the ids stripped one by one.
    """
    if max(map(len, raw)) > limit:
        raise _Fallback
    joined = "\n".join(raw)
    if _ALL_QUOTED.fullmatch(joined):             # every id quoted, as R writes them
        raw = [r[1:-1] for r in raw]
        joined = "\n".join(raw)
    if not _UNUSUAL.search(joined) and joined.count("\n") == len(raw) - 1:
        return None, _object_array(raw)
    del joined
    index: dict[str, int] = {}
    codes = []
    for r in raw:
        s = _unquote(r).strip()
        if not s or _not_utf8(s):
            raise _Fallback
        codes.append(index.setdefault(s, len(index)))
    ids = _object_array(list(index))
    if len(index) == len(raw):
        return None, ids
    return np.asarray(codes, dtype=np.int64), ids


def _parse_columns(src: Source, engine: str, raw_header: list[str], sep: str,
                   has_header: bool, picks: list[str]
                   ) -> list[tuple[np.ndarray, list[str]]] | None:
    """The columns ``picks`` (worker, task, label) as (codes, distinct raw values in order
    of first appearance), parsed by pyarrow or pandas; None if neither is available.
    ``raw_header`` names every field (the header's, or names of our own without one)."""
    if engine in ("auto", "pyarrow"):
        try:
            import pyarrow as pa
            import pyarrow.csv as pacsv
        except ImportError:
            if engine == "pyarrow":
                raise ImportError("read_triples_csv(engine='pyarrow') needs pyarrow "
                                  "(pip install pyarrow, or toptwo[fast]).") from None
        else:
            return _parse_pyarrow(src, raw_header, sep, has_header, picks, pa, pacsv)
    try:
        import pandas as pd
    except ImportError:
        if engine == "pandas":
            raise ImportError("read_triples_csv(engine='pandas') needs pandas.") from None
        return None
    return _parse_pandas(src, raw_header, sep, has_header, picks, pd)


#: Bytes per block of pyarrow's streaming CSV reader.
_BLOCK_SIZE = 1 << 22


def _parse_pyarrow(src: Source, raw_header: list[str], sep: str, has_header: bool,
                   picks: list[str], pa: Any, pacsv: Any
                   ) -> list[tuple[np.ndarray, list[str]]]:
    as_dict = pa.dictionary(pa.int32(), pa.string())
    pool = pa.default_memory_pool()
    try:
        # the streaming reader: each block is dictionary-encoded as it is parsed, so the
        # parsed text of the whole file is never held at once (read_csv holds it: 800 MiB
        # at 1e7 rows against 300 MiB here)
        reader = pacsv.open_csv(
            src.arrow_input(pa),
            read_options=pacsv.ReadOptions(use_threads=True, block_size=_BLOCK_SIZE,
                                           column_names=None if has_header else raw_header),
            parse_options=pacsv.ParseOptions(delimiter=sep, quote_char=False,
                                              escape_char=False,
                                              newlines_in_values=False,
                                              ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types={c: as_dict for c in picks}, strings_can_be_null=False,
                quoted_strings_can_be_null=False, check_utf8=True,
                include_columns=list(picks)))
        if reader.schema.names != list(picks):
            raise _Fallback
        table = reader.read_all()
    except (pa.ArrowException, ValueError):
        raise _Fallback from None
    out = []
    for c in picks:
        col = table.column(c)
        table = table.drop_columns([c])
        if col.null_count or col.num_chunks == 0:
            raise _Fallback
        out.append(_unify(col.chunks, pa))
        del col
    pool.release_unused()           # give the parser's memory back before the fit
    return out


def _unify(chunks: list[Any], pa: Any) -> tuple[np.ndarray, list[str]]:
    """Codes and distinct values (in order of first appearance) of a column read as
    dictionary arrays with one dictionary per block.

    The blocks' dictionaries, concatenated in file order, are dictionary-encoded once:
    a value's first occurrence there is in the dictionary of the first block holding it,
    at its first appearance in that block, so the encoding numbers the values in order
    of first appearance in the file. (pyarrow's ``unify_dictionaries`` gives the same
    codes, at twice the memory and time.)
    """
    sizes = np.array([len(ch.dictionary) for ch in chunks], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    merged = pa.concat_arrays([ch.dictionary for ch in chunks]).dictionary_encode()
    to_global = merged.indices.to_numpy()
    codes = np.empty(sum(len(ch) for ch in chunks), dtype=np.int32)
    pos = 0
    for ch, start in zip(chunks, starts):
        n = len(ch)
        codes[pos:pos + n] = to_global[start + ch.indices.to_numpy()]
        pos += n
    return codes, merged.dictionary.to_pylist()


def _parse_pandas(src: Source, raw_header: list[str], sep: str, has_header: bool,
                  picks: list[str], pd: Any) -> list[tuple[np.ndarray, list[str]]]:
    try:
        frame = pd.read_csv(src.pandas_input(), sep=sep, dtype=str, quoting=csv.QUOTE_NONE,
                            na_filter=False, keep_default_na=False, skip_blank_lines=True,
                            engine="c", encoding="utf-8-sig", encoding_errors="strict",
                            compression=None, header=0 if has_header else None,
                            names=None if has_header else raw_header)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError):
        raise _Fallback from None
    # a RangeIndex: pandas did not take a first column as the index (rows one field
    # longer than the header), which would shift the columns silently
    if list(frame.columns) != list(raw_header) or not isinstance(frame.index, pd.RangeIndex):
        raise _Fallback
    if len(picks) < len(raw_header) and frame.isna().to_numpy().any():
        raise _Fallback                           # a short row: its missing fields are NaN
    out = []
    for c in picks:
        codes, uniques = pd.factorize(frame[c].to_numpy(dtype=object), sort=False)
        if (codes < 0).any():
            raise _Fallback
        out.append((codes, list(uniques)))
    return out


_UTF8_MSG = ("the file is not valid UTF-8 (save it as UTF-8; undecodable bytes are shown "
             "as \\udcXX)")


def _not_utf8(text: str) -> bool:
    """True if ``text`` holds bytes that did not decode (lone surrogates)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _show(x: Any) -> str:
    """repr of an id, field or row, cut to 80 characters (a stray 1 MB field stays short)."""
    r = repr(x)
    return r if len(r) <= 80 else r[:77] + "..."
