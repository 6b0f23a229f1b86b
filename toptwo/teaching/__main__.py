"""Command line: ``python -m toptwo.teaching student SRC OUTDIR``.

Writes the student handout of every instructor notebook in SRC into OUTDIR (solutions
replaced by ``raise NotImplementedError()``, outputs cleared, checks kept). OUTDIR is a
build artefact: keep it out of the repository.
"""

from __future__ import annotations

import argparse
import sys

from ._student import SolutionMarkerError, make_student_versions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toptwo.teaching",
                                     description="Course tools for the toptwo exercises.")
    sub = parser.add_subparsers(dest="command", required=True)
    student = sub.add_parser("student", help="write student versions of instructor notebooks")
    student.add_argument("source", help="folder of instructor notebooks (e.g. notebooks/exercises)")
    student.add_argument("outdir", help="output folder (created if missing, but not its "
                                        "parents; must be outside SOURCE)")
    args = parser.parse_args(argv)
    try:
        written = make_student_versions(args.source, args.outdir)
    except (OSError, SolutionMarkerError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
