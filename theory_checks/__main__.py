"""``python -m theory_checks``: run every check, print a table and the notes; exit 1 on failure."""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from collections.abc import Sequence

from . import CHECKS, CheckRecord, ClaimFailed


def format_table(rows: list[tuple[str, str, str, str, str]]) -> str:
    """Plain-text (Markdown-compatible) table with columns name | reference | method/scope | seconds | OK."""
    header = ("check", "reference", "method / scope", "seconds", "OK")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *map(line, rows)])


def build_parser() -> argparse.ArgumentParser:
    """``python -m theory_checks [--mutants]`` (and --help)."""
    parser = argparse.ArgumentParser(
        prog="python -m theory_checks",
        description="Run every numerical check of the paper's claims, print a table and the "
                    "notes; exit status 0 if all pass, 1 if a claim fails, 2 on a usage "
                    "error.")
    parser.add_argument("--long", action="store_true",
                        help="run only the long Monte-Carlo checks (theory_checks.LONG_CHECKS), which the default "
                             "run leaves out to stay within a minute; CI runs both")
    parser.add_argument("--all", action="store_true", help="run every check, the long ones included")
    parser.add_argument("--mutants", action="store_true",
                        help="run every check's mutants instead and print the kill rates "
                             "(exit 1 if a mutant survives)")
    parser.add_argument("--status-page", metavar="PATH",
                        help="write the theory status page (Markdown) generated from the checks")
    parser.add_argument("--readme-table", metavar="PATH",
                        help="write the README's short theory table (same source as the status page); given the README, "
                             "replace the block between its theory-table markers")
    return parser


def main_status(page: str | None, table: str | None) -> int:
    """Write the status page (and the dependency graph beside it, ``_generated/theory_graph.svg``) and/or the
    README table: into a file holding the README's ``<!-- theory-table`` markers, between them; else the whole
    file. Exit 1 if a check failed."""
    from pathlib import Path

    from .status import counts, dependency_svg, readme_table, status_page, sync_readme

    root = Path(__file__).resolve().parent.parent
    if page:
        Path(page).parent.mkdir(parents=True, exist_ok=True)
        Path(page).write_text(status_page(root), encoding="utf-8")
        graph = Path(page).parent / "_generated" / "theory_graph.svg"
        graph.parent.mkdir(parents=True, exist_ok=True)
        graph.write_text(dependency_svg(), encoding="utf-8")
        print(f"wrote {page} and {graph}")
    if table:
        path = Path(table)
        text = readme_table(root)
        if path.exists() and "<!-- theory-table" in path.read_text(encoding="utf-8"):
            sync_readme(path, text)
            print(f"updated the theory table in {table}")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {table}")
    c = counts(root)
    return 0 if c["passed"] == c["checks"] else 1


def main_mutants() -> int:
    """Run every check's mutants; print the kill-rate table; exit 1 if a mutant survives."""
    from .mutants import format_kill_table, kill_rates

    t0 = time.perf_counter()
    rows = kill_rates()
    print(format_kill_table(rows))
    total = sum(r["mutants"] for r in rows)
    killed = sum(r["killed"] for r in rows)
    print(f"\n{killed}/{total} mutants killed in {time.perf_counter() - t0:.2f} s")
    missing = [r["check"] for r in rows if r["mutants"] == 0]
    for r in rows:
        for name, msg in r["survivors"]:
            print(f"SURVIVED {r['check']} / {name}: {msg}", file=sys.stderr)
    for name in missing:
        print(f"NO MUTANTS for {name}", file=sys.stderr)
    return 0 if killed == total and not missing else 1


def main(argv: Sequence[str] = ()) -> int:
    """Run all checks; return the process exit code.

    ``argv`` are the command-line arguments (none are accepted: an unknown one is a
    usage error, exit status 2, instead of being ignored).
    """
    try:
        args = build_parser().parse_args(list(argv))
    except SystemExit as exc:           # --help (0) or a usage error (2, message printed)
        return exc.code if isinstance(exc.code, int) else 2
    if args.mutants:
        return main_mutants()
    if args.status_page or args.readme_table:
        return main_status(args.status_page, args.readme_table)
    from . import LONG_CHECKS
    from ._core import pinned_blas

    rows: list[tuple[str, str, str, str, str]] = []
    records: list[CheckRecord] = []
    failures: list[tuple[str, str]] = []
    if args.all:
        selected = dict(CHECKS)
    else:
        selected = {n: fn for n, fn in CHECKS.items() if (n in LONG_CHECKS) == args.long}
    t0 = time.perf_counter()
    c0 = time.process_time()
    with pinned_blas():      # one BLAS thread: the checks run one after another on a shared machine
        _run(selected, rows, records, failures)
    total, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(format_table(rows))
    which = "long checks" if args.long and not args.all else "checks"
    left = "" if args.all or args.long else f" ({len(LONG_CHECKS)} long Monte-Carlo checks: --long)"
    print(f"\n{len(records)}/{len(selected)} {which} passed in {total:.2f} s ({cpu:.2f} s CPU){left}")
    notes = [r for r in records if r.note]
    if notes:
        print("\nNotes (where the paper is imprecise or false, and the correct statement):")
        for r in notes:
            print("\n".join(textwrap.wrap(f"- {r.name}: {r.note}", width=110, subsequent_indent="  ")))
    for name, msg in failures:
        print(f"\nFAILED {name}: {msg}", file=sys.stderr)
    return 1 if failures else 0


def _run(selected: dict, rows: list, records: list, failures: list) -> None:
    for name, fn in selected.items():
        t1 = time.perf_counter()
        try:
            rec = fn()
        except ClaimFailed as exc:  # a failed claim: report it, keep going
            failures.append((name, str(exc)))
            rows.append((name, "", "", f"{time.perf_counter() - t1:.2f}", "FAIL"))
            continue
        records.append(rec)
        rows.append((name, rec.reference, f"{rec.method}; {rec.scope}", f"{rec.seconds:.2f}", "yes"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
