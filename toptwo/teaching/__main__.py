"""Command line for instructors.

``python -m toptwo.teaching metadata [--check] FOLDER``
    write nbgrader cell metadata into the exercise notebooks from ``GRADED``
    (``--check``: only report notebooks whose metadata is out of date; exit 1 if any).
``python -m toptwo.teaching student SRC OUTDIR``
    write nbgrader's release version of every notebook in SRC into OUTDIR (solutions
    and hidden tests removed, outputs cleared, cells locked); needs nbgrader
    (``pip install "toptwo[teaching]"``). In an nbgrader course use
    ``nbgrader generate_assignment`` instead; both run the same nbgrader preprocessors.
"""

from __future__ import annotations

import argparse
import sys

from ._nbgrader import make_student_versions, write_metadata


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toptwo.teaching",
                                     description="Course tools for the toptwo exercises.")
    sub = parser.add_subparsers(dest="command", required=True)
    meta = sub.add_parser("metadata", help="write nbgrader cell metadata into the exercises")
    meta.add_argument("folder", help="folder of instructor notebooks (notebooks/exercises)")
    meta.add_argument("--check", action="store_true",
                      help="write nothing; exit 1 if a notebook's metadata is out of date")
    student = sub.add_parser("student", help="write nbgrader release versions of the notebooks")
    student.add_argument("source", help="folder of instructor notebooks (e.g. notebooks/exercises)")
    student.add_argument("outdir", help="output folder (created if missing, but not its "
                                        "parents; must be outside SOURCE)")
    args = parser.parse_args(argv)
    try:
        if args.command == "metadata":
            changed = write_metadata(args.folder, check=args.check)
            verb = "out of date" if args.check else "updated"
            for path in changed:
                print(f"{verb}: {path}")
            return 1 if (args.check and changed) else 0
        written = make_student_versions(args.source, args.outdir)
    except (OSError, ValueError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
