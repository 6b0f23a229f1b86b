"""Where a triples file comes from: a file, a compressed file, a pipe or standard input.

Private: used by :func:`toptwo.io.read_triples_csv`. The parsers there may read a file
more than once (the header, then the rows), so anything that cannot be read twice is
read here exactly once, into memory:

* a regular uncompressed file is read by name, as often as the parsers need;
* a pipe, a named pipe (FIFO), ``/dev/stdin``, a process substitution ``<(...)`` or
  standard input (``"-"``) is read once, whole (a second open of a pipe would find it
  empty, or wait for ever for a writer);
* a gzip, bzip2 or xz file (recognised by its first bytes, whatever its name) is
  decompressed once, whole.

Memory: a pipe or a compressed file is held once as bytes (its uncompressed size); a
regular file is not held. A name ending in ``.gz``, ``.bz2`` or ``.xz`` whose content is
not compressed that way is refused with a message naming the file (it is almost always a
mislabelled file, and reading it as text would hide that).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import sys
import zlib
from typing import IO, Any

__all__ = ["Source", "open_source", "COMPRESSIONS"]

#: compression -> (first bytes, file-name suffix, command that tests a file)
COMPRESSIONS = {"gzip": (b"\x1f\x8b", ".gz", "gzip -t"),
                "bzip2": (b"BZh", ".bz2", "bzip2 -t"),
                "xz": (b"\xfd7zXZ\x00", ".xz", "xz -t")}

#: The name standard input goes by in messages.
STDIN_NAME = "standard input"


class Source:
    """One input, readable as often as needed: by path (a regular file) or from bytes."""

    def __init__(self, name: str, *, path: str | None = None, data: bytes | None = None,
                 compression: str | None = None):
        self.name, self.path, self.data, self.compression = name, path, data, compression

    def binary(self) -> IO[bytes]:
        """A new binary handle at the start of the input."""
        if self.path is not None:
            return open(self.path, "rb")
        return io.BytesIO(self.data or b"")

    def text(self) -> IO[str]:
        """A new text handle: UTF-8 (a byte-order mark dropped), undecodable bytes kept as
        lone surrogates so that they are reported with their line."""
        return io.TextIOWrapper(self.binary(), encoding="utf-8-sig",
                                errors="surrogateescape", newline="")

    def arrow_input(self, pa: Any) -> Any:
        """What pyarrow's CSV reader opens: the path, or a zero-copy buffer."""
        return self.path if self.path is not None else pa.BufferReader(self.data or b"")

    def pandas_input(self) -> Any:
        return self.path if self.path is not None else io.BytesIO(self.data or b"")


def _magic(head: bytes) -> str | None:
    for kind, (magic, _, _) in COMPRESSIONS.items():
        if head.startswith(magic):
            return kind
    return None


def _suffix_kind(name: str) -> str | None:
    low = name.lower()
    for kind, (_, suffix, _) in COMPRESSIONS.items():
        if low.endswith(suffix):
            return kind
    return None


def _decompress(name: str, kind: str, fh: IO[bytes]) -> bytes:
    """The whole decompressed content, or a ValueError naming the file."""
    try:
        z: Any
        if kind == "gzip":
            z = gzip.GzipFile(fileobj=fh, mode="rb")
        elif kind == "bzip2":
            z = bz2.BZ2File(fh)
        else:
            z = lzma.LZMAFile(fh)
        with z:
            return z.read()
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
        tool = COMPRESSIONS[kind][2]
        raise ValueError(f"{name}: the file starts as a {kind}-compressed file but cannot "
                         f"be decompressed ({exc}); it is damaged or cut short (check it "
                         f"with '{tool}').") from None


def _mislabelled(name: str, head: bytes) -> ValueError:
    kind = _suffix_kind(name)
    suffix = COMPRESSIONS[kind][1] if kind else ""
    return ValueError(f"{name}: the name ends in '{suffix}' but the file is not "
                      f"{kind}-compressed (it begins with {head[:16]!r}); if it is a plain "
                      f"text file, rename it without '{suffix}', or compress it.")


def _from_bytes(name: str, raw: bytes, *, by_name: str | None) -> Source:
    kind = _magic(raw[:8])
    if kind is None:
        if by_name is not None and _suffix_kind(by_name) is not None:
            raise _mislabelled(name, raw)
        return Source(name, data=raw)
    return Source(name, data=_decompress(name, kind, io.BytesIO(raw)), compression=kind)


def open_source(path: Any) -> Source:
    """The input named by ``path``: a path, ``"-"`` (standard input) or a file object.

    Raises ValueError (naming the input) for a terminal on standard input, a damaged
    compressed file or a mislabelled one; OSError if it cannot be opened.
    """
    if hasattr(path, "read"):                 # an open file object: read it once
        raw = path.read()
        if isinstance(raw, str):
            raw = raw.encode("utf-8", errors="surrogateescape")
        name = getattr(path, "name", None)
        name = name if isinstance(name, str) else "<stream>"
        return _from_bytes(name, raw, by_name=name)
    name = os.fspath(path)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if name == "-":
        stream = sys.stdin
        if stream is None:
            raise ValueError("standard input is closed; give the file name instead of '-'.")
        if stream.isatty():
            raise ValueError("standard input is a terminal, not a file: pipe the answers in "
                             "(e.g. 'cat answers.csv | python -m toptwo infer -') or give "
                             "the file name instead of '-'.")
        buffer = getattr(stream, "buffer", None)
        raw = buffer.read() if buffer is not None else stream.read().encode(
            "utf-8", errors="surrogateescape")
        return _from_bytes(STDIN_NAME, raw, by_name=None)
    st = os.stat(name)                        # FileNotFoundError, PermissionError, ...
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "Is a directory", name)
    if stat.S_ISREG(st.st_mode):
        with open(name, "rb") as fh:
            head = fh.read(16)
            kind = _magic(head)
            if kind is None:
                if _suffix_kind(name) is not None:
                    raise _mislabelled(name, head)
                return Source(name, path=name)
            fh.seek(0)
            return Source(name, data=_decompress(name, kind, fh), compression=kind)
    # a pipe, a FIFO, a character device (/dev/stdin, <(...)): one open, one read
    with open(name, "rb") as fh:
        raw = fh.read()
    return _from_bytes(name, raw, by_name=name)
