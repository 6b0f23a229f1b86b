"""Pieces of the command line shared by its sub-commands: argument types, one-line errors,
and the input side (the options that say how a file of answers is laid out, and the one
function that reads it).

Private: used by :mod:`toptwo.__main__`. A sub-command that reads answers calls
:func:`add_input_arguments` on its parser and :func:`read_input` on the parsed
arguments, so every sub-command reads the same formats with the same messages.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn

__all__ = ["UsageError", "Parser", "positive_int", "seed", "one_line", "show",
           "add_input_arguments", "read_input", "input_name"]


class UsageError(Exception):
    """Bad command-line input: reported on stderr with exit status 2."""


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1; got {text!r}")
    return value


def seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer; got {text!r}") \
            from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer; got {text!r}")
    return value


def one_line(text: str) -> str:
    """A message on one line: newlines and other control characters escaped."""
    if all(ch.isprintable() for ch in text):
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def show(path: str) -> str:
    """A file name as it goes into a one-line message: control characters escaped."""
    path = os.fspath(path)
    if any(not ch.isprintable() for ch in path):
        return repr(path)[1:-1]
    return path


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``PROG: error: MESSAGE (see PROG --help)``."""

    def error(self, message: str) -> NoReturn:
        if sys.stderr is not None:
            try:
                print(f"{self.prog}: error: {one_line(message)} (see '{self.prog} --help')",
                      file=sys.stderr)
            except (OSError, ValueError):
                pass
        raise SystemExit(2)


# ------------------------------------------------------------------ the input side
def _separator(text: str) -> str:
    from .io import SEPARATORS
    names = {v: k for k, v in SEPARATORS.items()}
    sep = names.get(text.lower(), "\t" if text == "\\t" else text)
    if sep not in SEPARATORS:
        raise argparse.ArgumentTypeError(f"must be one of comma, tab, semicolon, space (or "
                                         f"',', ';', a tab, a space); got {text!r}")
    return sep


def _three_names(text: str) -> tuple[str, str, str]:
    names = [t.strip() for t in text.split(",")]
    if len(names) != 3 or not all(names) or len(set(names)) != 3:
        raise argparse.ArgumentTypeError(f"must be three distinct column names separated by "
                                         f"commas, of the worker, task and label columns in "
                                         f"that order (e.g. annotator,item,answer); got "
                                         f"{text!r}")
    return names[0], names[1], names[2]


def _order(text: str) -> tuple[str | None, ...]:
    roles = [t.strip() for t in text.split(",")]
    if (any(r not in ("worker", "task", "label", "-") for r in roles)
            or sorted(r for r in roles if r != "-") != ["label", "task", "worker"]):
        raise argparse.ArgumentTypeError(f"must give the role of each field, separated by "
                                         f"commas: worker, task and label once each, '-' for "
                                         f"a field to ignore (e.g. task,worker,label); got "
                                         f"{text!r}")
    return tuple(None if r == "-" else r for r in roles)


def add_input_arguments(p: argparse.ArgumentParser) -> None:
    """The input file and the options that say how it is laid out."""
    p.add_argument("file", metavar="FILE",
                   help="answers, one per row: a CSV or TSV file (also .gz, .bz2, .xz; '-' "
                        "for standard input; a pipe or named pipe is read once)")
    p.add_argument("--sep", type=_separator, default=None, metavar="SEP",
                   help="field separator: comma, tab, semicolon or space (default: sniffed "
                        "from the first line)")
    layout = p.add_mutually_exclusive_group()
    layout.add_argument("--columns", type=_three_names, default=None,
                        metavar="WORKER,TASK,LABEL",
                        help="the header's names of the worker, task and label columns (the "
                             "file's other columns are then ignored); default: the header "
                             "must name exactly worker, task and label, in any order")
    layout.add_argument("--no-header", type=_order, default=None, metavar="ORDER",
                        dest="no_header",
                        help="the file has no header row; ORDER gives the role of each "
                             "field, e.g. task,worker,label (the paper's dog and web files) "
                             "or worker,task,label (adult2, color, flag, food, plot); '-' "
                             "skips a field")
    p.add_argument("--n-labels", type=positive_int, default=None, metavar="K",
                   help="number of answer choices K (default: the largest label in the "
                        "file, which is too small if the highest choice never occurs)")
    p.add_argument("--duplicates", choices=("error", "first", "last"), default="error",
                   help="what to do when a worker answered a task on more than one row: "
                        "refuse (default), keep the first or the last row")
    p.add_argument("--label-base", type=int, choices=(0, 1), default=1,
                   help="smallest label in the file: 1 for labels 1..K (default), 0 for "
                        "0..K-1 (the paper's adult2, color, flag, food and plot files); "
                        "output labels use the same numbering")


def input_name(args: argparse.Namespace) -> str:
    """The input as messages name it."""
    return "standard input" if args.file == "-" else show(args.file)


def read_input(args: argparse.Namespace) -> Any:
    """The :class:`~toptwo.Responses` named by the input arguments (any sub-command)."""
    from .io import read_triples_csv
    return read_triples_csv(args.file, n_labels=args.n_labels, duplicates=args.duplicates,
                            label_base=args.label_base, sep=args.sep, columns=args.columns,
                            order=args.no_header)
