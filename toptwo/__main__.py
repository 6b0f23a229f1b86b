"""Command line of toptwo: ``python -m toptwo demo`` and ``python -m toptwo infer FILE.csv``.

``demo`` draws one synthetic instance of the top-two model (eq. (1) [`eqn:A_dist`],
a scenario of Table 1) and prints the error rates of majority vote, TopTwo1
(Algorithm 1), TopTwo2 (Algorithm 2) and the oracle MLE (eq. (6) with the true p, q).

``infer`` reads ``worker,task,label`` triples (see :mod:`toptwo.io`) and writes, per
task, the estimated top two (g, h) and the confusion probability q_hat as CSV; per
worker, the reliability p_hat on request.

Exit status: 0 on success, 2 on bad input or bad arguments (message on stderr, no
traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import IO

import numpy as np

from .baselines.majority import MajorityVote
from .baselines.dawid_skene import OneCoinDawidSkene
from .extensions.em import TopTwoEM
from .io import read_triples_csv, write_reliability_csv, write_results_csv
from .metrics import top_two_errors
from .mle import OracleMLE, TopTwo2
from .model import SCENARIOS, TopTwoModel
from .responses import binary_labels_message, check_labels_used
from .spectral import TopTwo1

__all__ = ["main", "run_demo", "build_parser"]

#: The embedded demo instance: (n_workers, n_tasks, n_labels), as in the paper's Sec. 6.1.
DEMO_SHAPE = (50, 500, 5)

_METHODS = ("toptwo2", "toptwo1", "em", "majority", "onecoin")

#: Decimal places of the floats written by ``infer`` (trailing zeros dropped), so that
#: output files are identical across machines whatever the last bits of the estimate.
DECIMALS = 6


class _UsageError(Exception):
    """Bad command-line input: reported on stderr with exit status 2."""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1; got {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer; got {text!r}") \
            from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer; got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``python -m toptwo`` (sub-commands demo and infer)."""
    parser = argparse.ArgumentParser(
        prog="python -m toptwo",
        description="Top-two answers and confusion probabilities in multi-choice "
                    "crowdsourcing (Jeong & Chung, ICML 2023).",
        epilog="Run 'python -m toptwo COMMAND --help' for the options of a command.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    n, m, K = DEMO_SHAPE
    demo = sub.add_parser(
        "demo", help="compare the estimators on a synthetic instance (no files needed)",
        description=f"Draw one synthetic instance of the top-two model (n={n} workers, "
                    f"m={m} tasks, K={K} labels; a scenario of the paper's Table 1) and "
                    f"print the error rates of majority vote, TopTwo1 (Algorithm 1), "
                    f"TopTwo2 (Algorithm 2) and the oracle MLE that knows the true "
                    f"reliabilities and confusions.")
    demo.add_argument("--scenario", choices=sorted(SCENARIOS), default="hard",
                      help="worker/task parameter scenario of Table 1 (default: hard)")
    demo.add_argument("--queries-per-task", type=_positive_int, default=10, metavar="Q",
                      help=f"expected number of answers per task, Q = n s with n={n} "
                           f"workers; 1..{n} (default: 10, i.e. s = 0.2)")
    demo.add_argument("--seed", type=_seed, default=0,
                      help="seed of the instance and of the estimators (default: 0)")

    infer = sub.add_parser(
        "infer", help="estimate top-two answers from a worker,task,label CSV file",
        description="Read answers from a CSV file with a header row naming the columns "
                    "worker, task and label (any order, no other columns; ids may be any "
                    "strings; labels are integers 1..K, or 0..K-1 with --label-base 0) and "
                    "write one row per task: task,g,h,confusion -- the most plausible "
                    "answer g, the most confusing one h, and the estimated probability q "
                    "that a reliable worker answers g rather than h.",
        epilog="Bad input (malformed file, labels out of range, repeated answers with "
               "--duplicates error, an output that cannot be written) is reported on stderr "
               "with exit status 2, before any output file is written. Output files are "
               "written atomically (a temporary file renamed into place) and never "
               f"overwritten without --force. Probabilities are written rounded to "
               f"{DECIMALS} decimal places (trailing zeros dropped), so outputs are "
               f"identical across machines. A closed standard output (e.g. '| head') ends "
               f"the command quietly with status 0.")
    infer.add_argument("file", metavar="FILE.csv", help="CSV file of worker,task,label rows")
    infer.add_argument("--n-labels", type=_positive_int, default=None, metavar="K",
                       help="number of answer choices K (default: the largest label in "
                            "the file, which is too small if the highest choice never "
                            "occurs)")
    infer.add_argument("--duplicates", choices=("error", "first", "last"), default="error",
                       help="what to do when a worker answered a task on more than one "
                            "row: refuse (default), keep the first or the last row")
    infer.add_argument("--method", choices=_METHODS, default="toptwo2",
                       help="toptwo2: spectral + plug-in MLE (Algorithm 2, default); "
                            "toptwo1: spectral only (Algorithm 1); em: EM on the full top-two "
                            "likelihood from TopTwo2 (slower; calibrated posteriors); "
                            "majority: majority vote; "
                            "onecoin: one-coin Dawid-Skene (EM; also for binary tasks, K = 2)")
    infer.add_argument("--label-base", type=int, choices=(0, 1), default=1,
                       help="smallest label in the file: 1 for labels 1..K (default), 0 "
                            "for 0..K-1; output labels use the same numbering")
    infer.add_argument("--seed", type=_seed, default=0,
                       help="seed of the random sample splits and tie-breaking (default: 0)")
    infer.add_argument("--output", "-o", metavar="OUT.csv", default=None,
                       help="write the per-task CSV here instead of standard output (the "
                            "folder must exist; an existing file needs --force)")
    infer.add_argument("--workers-output", metavar="W.csv", default=None,
                       help="also write per-worker reliabilities (worker,reliability; "
                            "eq. (5), unclipped) to this file; needs --method toptwo2 or "
                            "onecoin")
    infer.add_argument("--uncertain", type=_positive_int, default=None, metavar="N",
                       help="with --method em: also print to standard error the N tasks "
                            "whose pair is least certain (lowest posterior), which need more "
                            "answers first")
    infer.add_argument("--force", action="store_true",
                       help="overwrite existing output files (refused without it)")
    return parser


# ------------------------------------------------------------------------ demo
def run_demo(scenario: str = "hard", queries_per_task: int = 10, seed: int = 0
             ) -> tuple[dict[str, dict[str, float]], str]:
    """Fit the four estimators on one synthetic instance; return (errors, table text).

    One :class:`numpy.random.SeedSequence` of ``seed`` is spawned into independent
    streams for the instance, the sample and each randomised estimator.
    """
    n, m, K = DEMO_SHAPE
    if not 1 <= queries_per_task <= n:
        raise _UsageError(f"--queries-per-task must be an integer in 1..{n} (the number "
                          f"of workers); got {queries_per_task} instead.")
    s = queries_per_task / n
    g_model, g_sample, g_mv, g_t1, g_t2 = (np.random.default_rng(c) for c in
                                           np.random.SeedSequence(seed).spawn(5))
    model = TopTwoModel.scenario(scenario, n_workers=n, n_tasks=m, n_labels=K, rng=g_model)
    A = model.sample(s, rng=g_sample)
    estimators = {
        "MajorityVote": MajorityVote(rng=g_mv),
        "TopTwo1": TopTwo1(rng=g_t1),
        "TopTwo2": TopTwo2(rng=g_t2),
        "OracleMLE": OracleMLE(model.reliability, model.confusion),
    }
    errors = {}
    for name, est in estimators.items():
        est.fit(A, n_labels=K)
        errors[name] = top_two_errors(est.top_two_, model.top_two)
    lines = [f"toptwo demo: scenario {scenario!r}, n={n} workers, m={m} tasks, K={K} "
             f"labels, {queries_per_task} answers per task on average (s={s:g}), "
             f"{A.nnz} answers, seed {seed}",
             "",
             f"{'method':<14}{'pair':>7}{'g':>7}{'h':>7}"]
    for name, e in errors.items():
        lines.append(f"{name:<14}{e['pair']:>7.3f}{e['g']:>7.3f}{e['h']:>7.3f}")
    lines += ["",
              f"Error rates over the {m} tasks (lower is better): fraction whose estimated "
              f"(g, h) pair / most plausible answer g / most confusing answer h differs "
              f"from the truth. OracleMLE knows the true worker reliabilities and task "
              f"confusions (the paper's reference)."]
    return errors, "\n".join(lines)


# ----------------------------------------------------------------------- infer
_ESTIMATORS = {"toptwo2": ("TopTwo2", lambda seed: TopTwo2(rng=seed)),
               "toptwo1": ("TopTwo1", lambda seed: TopTwo1(rng=seed)),
               "majority": ("MajorityVote", lambda seed: MajorityVote(rng=seed)),
               "onecoin": ("OneCoinDawidSkene", lambda seed: OneCoinDawidSkene()),
               "em": ("TopTwoEM", lambda seed: TopTwoEM(rng=seed))}

#: Methods that estimate worker reliabilities (--workers-output).
_RELIABILITY_METHODS = ("toptwo2", "onecoin", "em")


def _check_output(path: str, flag: str, force: bool, others: dict[str, str]) -> str:
    """Refuse an output path that cannot be written, before anything is written."""
    real = os.path.realpath(path)
    for other_flag, other in others.items():
        if real == os.path.realpath(other):
            raise _UsageError(f"{flag} {path} is the same file as {other_flag} {other}; "
                              f"choose another name.")
    if os.path.isdir(real):
        raise _UsageError(f"{flag} {path} is a directory; give a file name.")
    parent = os.path.dirname(real) or "."
    if not os.path.isdir(parent):
        raise _UsageError(f"{flag} {path}: the folder {os.path.dirname(path) or '.'} does not "
                          f"exist (it is not created).")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise _UsageError(f"{flag} {path}: the folder {os.path.dirname(path) or '.'} is not "
                          f"writable.")
    if os.path.lexists(path) and _is_regular(path) and not force:
        raise _UsageError(f"{flag} {path} already exists; pass --force to overwrite it.")
    return path


def _is_regular(path: str) -> bool:
    """True for a regular file (or a dangling link); False for /dev/stdout, a FIFO, ..."""
    return os.path.isfile(path) or not os.path.exists(path)


def _write_atomically(outputs: list[tuple[str, Callable[[IO[str]], None]]]) -> None:
    """Write every output to a temporary file next to it, then rename them all.

    A failure while writing leaves the existing files untouched and removes the
    temporary files; the renames (os.replace) happen only once every file is complete.
    """
    temps: list[tuple[str, str]] = []
    try:
        for path, write in outputs:
            if not _is_regular(path):          # a device or pipe: no rename possible
                with open(path, "w", newline="", encoding="utf-8") as fh:
                    write(fh)
                continue
            folder = os.path.dirname(os.path.abspath(path))
            fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                       dir=folder)
            temps.append((tmp, path))
            with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
                write(fh)
        for tmp, path in temps:
            os.replace(tmp, path)
        temps = []
    finally:
        for tmp, _ in temps:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _run_infer(args: argparse.Namespace) -> None:
    if args.workers_output is not None and args.method not in _RELIABILITY_METHODS:
        raise _UsageError(f"--workers-output needs --method toptwo2, em or onecoin "
                          f"(only TopTwo2, eq. (5), TopTwoEM and one-coin Dawid-Skene "
                          f"estimate worker reliabilities); got --method {args.method}.")
    if args.uncertain is not None and args.method != "em":
        raise _UsageError(f"--uncertain needs --method em (the posterior of each pair comes "
                          f"from TopTwoEM); got --method {args.method}.")
    # Every output is checked before the (possibly long) run and before any is written.
    others = {"FILE.csv": args.file}
    if args.output is not None:
        _check_output(args.output, "--output", args.force, others)
        others["--output"] = args.output
    if args.workers_output is not None:
        _check_output(args.workers_output, "--workers-output", args.force, others)
    R = read_triples_csv(args.file, n_labels=args.n_labels, duplicates=args.duplicates,
                         label_base=args.label_base)
    name, make = _ESTIMATORS[args.method]
    try:
        if args.method in ("toptwo1", "toptwo2", "em"):
            if R.n_labels == 2:
                raise ValueError(binary_labels_message(name, cli=True))
            check_labels_used(R, name, cli=True)
        est = make(args.seed)
        est.fit(R)
    except ValueError as exc:
        raise ValueError(f"{args.file}: {exc}") from None
    # the CSV reader always keeps the ids as written
    task_ids = R.task_ids if R.task_ids is not None else np.arange(R.n_tasks)
    worker_ids = R.worker_ids if R.worker_ids is not None else np.arange(R.n_workers)

    def results(fh: IO[str]) -> None:
        write_results_csv(fh, task_ids, est.top_two_, est.confusion_,
                          label_base=args.label_base, decimals=DECIMALS)

    def reliabilities(fh: IO[str]) -> None:
        write_reliability_csv(fh, worker_ids, est.reliability_, decimals=DECIMALS)

    files: list[tuple[str, Callable[[IO[str]], None]]] = []
    if args.output is not None:
        files.append((args.output, results))
    if args.workers_output is not None:
        files.append((args.workers_output, reliabilities))
    _write_atomically(files)
    if args.output is None:
        results(sys.stdout)
        sys.stdout.flush()
    if args.uncertain is not None:
        order = est.uncertain_tasks(args.uncertain)
        ids = R.task_ids if R.task_ids is not None else np.arange(R.n_tasks)
        print("task,pair_probability", file=sys.stderr)
        for j in order:
            print(f"{ids[j]},{round(float(est.pair_proba_[j]), DECIMALS)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m toptwo`` and of the ``toptwo`` console script.

    Returns the exit status: 0 on success, 2 on bad arguments or bad input (the
    message goes to stderr, without a traceback).
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:           # --help (0) or an argparse usage error (2)
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        if args.command == "demo":
            _, text = run_demo(args.scenario, args.queries_per_task, args.seed)
            print(text)
        else:
            _run_infer(args)
    except BrokenPipeError:
        # The reader of standard output went away (e.g. `| head -1`): normal in a shell
        # pipeline. Point stdout at devnull so that the final flush does not complain.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 0
    except KeyboardInterrupt:
        print(f"{parser.prog} {args.command}: interrupted", file=sys.stderr)
        return 130
    except (_UsageError, ValueError, TypeError, OSError, OverflowError, MemoryError) as exc:
        print(f"{parser.prog} {args.command}: error: {str(exc) or type(exc).__name__}",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
