"""Command line of toptwo: ``python -m toptwo demo``, ``infer FILE`` and ``diagnose FILE``.

``demo`` draws one synthetic instance of the top-two model (eq. (1) [`eqn:A_dist`],
a scenario of Table 1) and prints the error rates of majority vote, TopTwo1
(Algorithm 1), TopTwo2 (Algorithm 2) and the oracle MLE (eq. (6) with the true p, q).

``infer`` reads ``worker,task,label`` triples (see :mod:`toptwo.io`) and writes, per
task, the estimated top two (g, h) and the confusion probability q_hat as CSV; per
worker, the reliability p_hat on request.

Exit status: 0 on success, 2 on bad input or bad arguments, or when numpy/scipy cannot
be loaded or memory runs out (message on stderr, one line, no traceback; see
``toptwo._startup``).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import os
import secrets
import signal
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

from ._cli import Parser as _Parser, UsageError as _UsageError, add_input_arguments, \
    input_name, one_line as _one_line, positive_int as _positive_int, read_input, \
    seed as _seed, show as _show
from ._startup import address_space_limit, cli_imports, restore_interrupts

with cli_imports():             # a failed import: one line, exit status 2 (issue 27)
    import numpy as np

    from .baselines.majority import MajorityVote
    from .baselines.dawid_skene import OneCoinDawidSkene
    from .extensions.em import TopTwoEM
    from .io import read_gold_csv, write_reliability_csv, write_results_csv
    from .metrics import top_two_errors
    from .mle import OracleMLE, TopTwo2
    from .posterior import MIN_GOLD, gold_probabilities, relabel_rows, task_probabilities
    from .diagnose import add_parser as add_diagnose_parser, run as run_diagnose
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


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``python -m toptwo`` (sub-commands demo, infer and diagnose)."""
    parser = _Parser(
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
        "infer", help="estimate top-two answers from a file of worker,task,label answers",
        description="Read answers from a CSV or TSV file (or .gz/.bz2/.xz, or standard "
                    "input '-') with a header row naming the columns worker, task and label "
                    "(any order; other names or extra columns: --columns; no header: "
                    "--no-header ORDER; ids may be any strings; labels are integers 1..K, "
                    "or 0..K-1 with --label-base 0) and "
                    "write one row per task: task,g,h,confusion,p_g,p_pair -- the most "
                    "plausible answer g, the most confusing one h, the estimated "
                    "probability q that a reliable worker answers g rather than h, the "
                    "posterior probability p_g that g is the task's true answer and p_pair "
                    "that (g, h) is its pair, under the top-two model (one meaning for "
                    "every method; em: its own posterior; the others: reliabilities from "
                    "eq. (5) at their own pairs and a prior over q fitted to the crowd). "
                    "How well calibrated they are on real crowds: docs/calibration.md. "
                    "With --gold, p_g and p_pair are recalibrated on the tasks whose answer "
                    "is known and a column p_g_source follows (calibrated, or gold: the "
                    "known answer, p_g = 1 if g is it, else 0).",
        epilog="Bad input (malformed file, labels out of range, repeated answers with "
               "--duplicates error, an output that cannot be written) is reported on stderr "
               "with exit status 2, before any output file is written. Output files are "
               "written atomically (a temporary file renamed into place) and never "
               f"overwritten without --force. Probabilities are written rounded to "
               f"{DECIMALS} decimal places (trailing zeros dropped), so outputs are "
               f"identical across machines. A closed standard output (e.g. '| head') ends "
               f"the command quietly with status 0.")
    add_input_arguments(infer)
    infer.add_argument("--method", choices=_METHODS, default="toptwo2",
                       help="toptwo2: spectral + plug-in MLE (Algorithm 2, default); "
                            "toptwo1: spectral only (Algorithm 1); em: EM on the full top-two "
                            "likelihood from TopTwo2 (slower; posteriors calibrated on "
                            "crowds drawn from the model, see docs/calibration.md); "
                            "majority: majority vote; "
                            "onecoin: one-coin Dawid-Skene (EM; also for binary tasks, K = 2)")
    infer.add_argument("--seed", type=_seed, default=0,
                       help="seed of the random sample splits and tie-breaking (default: 0)")
    infer.add_argument("--output", "-o", metavar="OUT.csv", default=None,
                       help="write the per-task CSV here instead of standard output ('-': "
                            "standard output; the folder must exist; an existing file needs "
                            "--force)")
    infer.add_argument("--workers-output", metavar="W.csv", default=None,
                       help="also write per-worker reliabilities (worker,reliability; "
                            "toptwo2: eq. (5) with each answer left out of its task's "
                            "pair, in [-2/(K-2), 1], not clipped for eq. (6)) to this file; "
                            "needs --method toptwo2, em or onecoin; '-': standard output, "
                            "when --output names a file")
    infer.add_argument("--gold", metavar="GOLDFILE", default=None,
                       help="known answers of some tasks (gold questions), one 'task label' "
                            "per line, as the paper's truth files (comma, tab, semicolon or "
                            "space; an optional header 'task,label'; labels numbered as in "
                            "FILE): p_g and p_pair of the other tasks are recalibrated on "
                            f"them (Platt scaling, at least {MIN_GOLD} gold tasks; "
                            "toptwo.posterior.gold_probabilities) and a column p_g_source "
                            "says which tasks are gold")
    infer.add_argument("--uncertain", type=_positive_int, default=None, metavar="N",
                       help="also print to standard error the N tasks whose re-labelling "
                            "is expected to lower the g error most (task,expected_gain,p_g; "
                            "toptwo.posterior.relabel_order)")
    infer.add_argument("--force", action="store_true",
                       help="overwrite existing output files (refused without it)")
    add_diagnose_parser(sub, _positive_int, _seed)
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
               "majority": ("MajorityVote",
                            lambda seed: MajorityVote(rng=seed, tie_break="content")),
               "onecoin": ("OneCoinDawidSkene", lambda seed: OneCoinDawidSkene()),
               "em": ("TopTwoEM", lambda seed: TopTwoEM(rng=seed))}

#: Methods that estimate worker reliabilities (--workers-output).
_RELIABILITY_METHODS = ("toptwo2", "onecoin", "em")


class _Output:
    """One output file: checked before the run, written to a temporary file, committed.

    ``path`` is the name given; ``target`` the file really written: a symbolic link is
    followed (``--force`` writes through it to its target, as ``>`` in a shell does).
    """

    def __init__(self, path: str, flag: str):
        self.path, self.flag = path, flag
        self.target = os.path.realpath(path)
        self.special = False          # a device or pipe: written directly, no rename
        self.existing: os.stat_result | None = None
        self.tmp: str | None = None
        self.backup: str | None = None
        self.committed = False

    def name(self) -> str:
        return f"{self.flag} {_show(self.path)}"


def _check_output(out: _Output, force: bool, others: dict[str, str]) -> None:  # noqa: C901 - every check in one place
    """Refuse an output that cannot be written, before anything is read or written."""
    path, flag = out.path, out.flag
    if path == "":
        raise _UsageError(f"{flag} needs a file name; got an empty one.")
    if path.endswith(os.sep) or (os.altsep and path.endswith(os.altsep)):
        raise _UsageError(f"{out.name()} ends with '{os.sep}', which names a folder; give a "
                          f"file name.")
    if os.path.basename(path) in (".", ".."):
        raise _UsageError(f"{out.name()} ends with '{os.path.basename(path)}', which names a "
                          f"folder; give a file name.")
    real = out.target
    for other_flag, other in others.items():
        if real == os.path.realpath(other):
            raise _UsageError(f"{out.name()} is the same file as {other_flag} "
                              f"{_show(other)}; choose another name.")
    if os.path.isdir(real):
        raise _UsageError(f"{out.name()} is a directory; give a file name.")
    folder = os.path.dirname(real) or "."
    shown_folder = _show(os.path.dirname(path) or ".")
    if not os.path.isdir(folder):
        try:
            os.stat(folder)
        except PermissionError:
            raise _UsageError(f"{out.name()}: the folder {shown_folder} is not accessible "
                              f"(permission denied on it or on a folder above it); write "
                              f"somewhere you can enter.") from None
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise _UsageError(f"{out.name()}: the folder {shown_folder} cannot be used: "
                              f"{exc.strerror or exc}.") from None
        else:
            raise _UsageError(f"{out.name()}: {shown_folder} is not a folder.")
        raise _UsageError(f"{out.name()}: the folder {shown_folder} does not exist (it is not "
                          f"created).")
    try:
        name_max = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):   # pragma: no cover - not POSIX
        name_max = 255
    base = os.path.basename(real)
    if name_max and len(os.fsencode(base)) > name_max:
        raise _UsageError(f"{out.name()}: the file name is {len(os.fsencode(base))} bytes "
                          f"long; this file system allows at most {name_max}.")
    try:
        st = os.stat(path)           # follows links, as open() would
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _UsageError(f"{out.name()}: {exc.strerror or exc}.") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        out.special = True            # /dev/stdout, a FIFO: opened and written directly
        out.target = path             # by the name given (/proc/self/fd/1 is no path)
        if not os.access(path, os.W_OK):
            raise _UsageError(f"{out.name()} is not writable.")
        return
    if not os.access(folder, os.W_OK | os.X_OK):
        raise _UsageError(f"{out.name()}: the folder {shown_folder} is not writable.")
    if st is not None:
        if not force:
            raise _UsageError(f"{out.name()} already exists; pass --force to overwrite it.")
        fst = os.stat(folder)
        uid = os.geteuid() if hasattr(os, "geteuid") else None
        if (fst.st_mode & stat.S_ISVTX and uid not in (None, 0)
                and st.st_uid != uid and fst.st_uid != uid):
            raise _UsageError(f"{out.name()} belongs to another user in a folder with the "
                              f"sticky bit set ({shown_folder}), so it cannot be replaced.")
        out.existing = st


def _os_error(out: _Output, exc: OSError) -> _UsageError:
    """An OSError while writing an output, as a message naming the output."""
    what = exc.strerror or str(exc) or type(exc).__name__
    code = f" [Errno {exc.errno}]" if exc.errno else ""
    return _UsageError(f"{out.name()} could not be written: {what}{code}; no output was "
                       f"changed.")


def _temp_in(folder: str, mode: int = 0o666) -> tuple[int, str]:
    """Create a new hidden temporary file in ``folder``, with ``mode`` minus the umask.

    The name is short whatever the output's name (the output's own length was checked).
    """
    for _ in range(100):
        tmp = os.path.join(folder, f".toptwo-{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", folder)


_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _write_atomically(outputs: list[tuple[_Output, Callable[[IO[str]], None]]],  # noqa: C901 - write, commit, undo
                      force: bool) -> None:
    """Write every output to a temporary file next to it, then commit them all or none.

    * A new file gets the mode 0666 minus the umask (as ``>`` in a shell); with
      ``--force`` an existing file keeps its mode (and owner and group where allowed).
    * Commit: without ``--force`` by a hard link (fails if the name appeared during the
      run: never overwritten), else ``os.replace``. An existing file is first linked to
      a hidden backup, so a failure in a later commit restores every earlier one: both
      outputs or neither.
    * Temporary files are removed on any failure, and on SIGINT/SIGTERM/SIGHUP (the
      handlers of :func:`main` raise).
    """
    try:
        for out, write in outputs:
            if out.special:
                continue
            folder = os.path.dirname(out.target) or "."
            try:
                fd, out.tmp = _temp_in(folder)
                if out.existing is not None:
                    os.fchmod(fd, stat.S_IMODE(out.existing.st_mode))
                    try:
                        os.fchown(fd, out.existing.st_uid, out.existing.st_gid)
                    except OSError:
                        pass                  # not allowed: keep ours, as cp does
                with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
                    write(fh)
                    fh.flush()
                    os.fsync(fh.fileno())
            except OSError as exc:
                raise _os_error(out, exc) from None
        for out, _ in outputs:          # devices and pipes last: nothing to undo there
            if not out.special:
                _commit(out, force)
        for out, write in outputs:
            if out.special:
                try:
                    with open(out.target, "w", newline="", encoding="utf-8") as fh:
                        write(fh)
                except OSError as exc:
                    raise _os_error(out, exc) from None
    except BaseException:
        for out, _ in reversed(outputs):
            _rollback(out)
        raise
    finally:
        for out, _ in outputs:
            for name in (out.tmp, out.backup):
                if name is not None:
                    try:
                        os.unlink(name)
                    except OSError:
                        pass
            out.tmp = out.backup = None


def _commit(out: _Output, force: bool) -> None:
    assert out.tmp is not None
    created = ("was created by someone else during the run; it is left as it is (pass "
               "--force to overwrite it).")
    try:
        if not force:
            try:
                os.link(out.tmp, out.target)          # fails if the name exists now
            except FileExistsError:
                raise _UsageError(f"{out.name()} {created}") from None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP,
                                     errno.EMLINK, errno.ENOSYS):
                    raise
                # no hard links on this file system: reserve the name exclusively
                try:
                    os.close(os.open(out.target, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
                except FileExistsError:
                    raise _UsageError(f"{out.name()} {created}") from None
                out.committed = True
                os.replace(out.tmp, out.target)
                out.tmp = None
                return
            out.committed = True
            return
        if os.path.lexists(out.target):
            fd, backup = _temp_in(os.path.dirname(out.target) or ".")
            os.close(fd)
            os.unlink(backup)
            try:
                os.link(out.target, backup)
                out.backup = backup
            except OSError:
                out.backup = None                 # best effort: no undo for this one
        os.replace(out.tmp, out.target)
        out.tmp = None
        out.committed = True
    except OSError as exc:
        raise _os_error(out, exc) from None


def _rollback(out: _Output) -> None:
    """Undo a commit: restore the backup of a replaced file, or remove a new one."""
    if not out.committed:
        return
    try:
        if out.backup is not None:
            os.replace(out.backup, out.target)
            out.backup = None
        elif out.existing is None:
            os.unlink(out.target)
    except OSError:
        pass
    out.committed = False


def _check_stdout() -> None:
    """Refuse to start when there is no standard output (started with ``>&-``)."""
    if sys.stdout is None:
        raise _UsageError("standard output is closed; write the results to a file with "
                          "--output FILE.")


@contextlib.contextmanager
def _utf8_stdout() -> Iterator[IO[str]]:
    """Standard output as UTF-8 text (like the output files), whatever the locale."""
    _check_stdout()
    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        yield stream
        return
    stream.flush()
    wrapper = io.TextIOWrapper(buffer, encoding="utf-8", newline="")
    try:
        yield wrapper
        wrapper.flush()
    finally:
        try:
            wrapper.detach()                # leave sys.stdout's buffer open
        except (ValueError, OSError):
            pass


def _to_stdout(write: Callable[[IO[str]], object], what: str, fix: str) -> None:
    """Write ``what`` to standard output with ``write``; an OS error (a full disk, an I/O
    error; not a closed pipe) becomes a message naming standard output and ``fix``."""
    try:
        with _utf8_stdout() as stdout:
            write(stdout)
    except BrokenPipeError:
        raise
    except OSError as exc:
        _silence_stdout()                 # the unflushed rest must not fail again at exit
        reason = exc.strerror or str(exc) or type(exc).__name__
        code = f" (errno {exc.errno})" if exc.errno else ""
        raise _UsageError(f"standard output could not be written ({what}): {reason}{code}; "
                          f"what it received is incomplete. {fix}") from None


def _silence_stdout() -> None:
    """Point file descriptor 1 at the null device (nothing more can be written there)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


_STDOUT_FIX = ("Free space where standard output goes, or write to a file with --output "
               "FILE (written completely or not at all).")
_STDOUT_FIX_NO_OPTION = ("Free space where standard output goes, or redirect it to another "
                         "device.")


#: Inputs with more answers than this report their progress on standard error (when it
#: is a terminal): reading, fitting and writing each take seconds from here on.
PROGRESS_ROWS = 10**6


def _progress(R_nnz: int, text: str) -> None:
    if R_nnz > PROGRESS_ROWS and sys.stderr is not None and sys.stderr.isatty():
        print(f"toptwo: {text}", file=sys.stderr, flush=True)


def _run_infer(args: argparse.Namespace) -> None:  # noqa: C901 - the command's steps in order
    if args.workers_output is not None and args.method not in _RELIABILITY_METHODS:
        raise _UsageError(f"--workers-output needs --method toptwo2, em or onecoin "
                          f"(only TopTwo2's step 3, TopTwoEM and one-coin Dawid-Skene "
                          f"estimate worker reliabilities); got --method {args.method}.")
    # Every output is checked before the (possibly long) run and before any is written.
    others = {"FILE": args.file} if args.file != "-" else {}
    if args.gold not in (None, "", "-"):
        others["--gold"] = args.gold
    if args.gold is not None:
        if args.gold == "":
            raise _UsageError("--gold needs a file name; got an empty one.")
        if args.gold == "-" and args.file == "-":
            raise _UsageError("FILE and --gold cannot both be standard input ('-'); give "
                              "one of them as a file.")
    outputs: list[_Output] = []
    results_to_stdout = args.output in (None, "-")
    if args.workers_output == "-" and results_to_stdout:
        raise _UsageError("--workers-output - and the per-task results cannot both go to "
                          "standard output; give --output FILE or --workers-output FILE.")
    for path, flag in ((args.output, "--output"), (args.workers_output, "--workers-output")):
        if path is None or path == "-":           # '-': standard output
            continue
        out = _Output(path, flag)
        _check_output(out, args.force, others)
        others[flag] = path
        outputs.append(out)
    if results_to_stdout or args.workers_output == "-":
        _check_stdout()
    R = read_input(args)
    if args.uncertain is not None and args.uncertain > R.n_tasks:
        raise _UsageError(f"--uncertain {args.uncertain} is more than the {R.n_tasks} "
                          f"task(s) in {input_name(args)}; give at most {R.n_tasks}.")
    # the CSV reader always keeps the ids as written
    task_ids = R.task_ids if R.task_ids is not None else np.arange(R.n_tasks)
    gold = None
    if args.gold is not None:
        gold = read_gold_csv(args.gold, task_ids, R.n_labels, label_base=args.label_base)
        if int((gold > 0).sum()) < MIN_GOLD:
            gname = "standard input" if args.gold == "-" else _show(args.gold)
            raise _UsageError(f"{gname}: {int((gold > 0).sum())} gold task(s); at least "
                              f"{MIN_GOLD} are needed to calibrate p_g on them "
                              f"(toptwo.posterior.MIN_GOLD).")
    name, make = _ESTIMATORS[args.method]
    _progress(R.nnz, f"read {R.nnz} answers ({R.n_workers} workers, {R.n_tasks} tasks, "
                     f"K={R.n_labels}); fitting {name}...")
    try:
        if args.method in ("toptwo1", "toptwo2", "em"):
            if R.n_labels == 2:
                raise ValueError(binary_labels_message(name, cli=True))
            check_labels_used(R, name, cli=True, label_base=args.label_base)
        est = make(args.seed)
        est.fit(R)
    except ValueError as exc:
        raise ValueError(f"{input_name(args)}: {exc}") from None
    worker_ids = R.worker_ids if R.worker_ids is not None else np.arange(R.n_workers)
    # everything that can fail is computed before anything is written
    probs = task_probabilities(est, R) if gold is None else gold_probabilities(est, gold, R)
    relabel = (relabel_rows(est, R, task_ids, args.uncertain, DECIMALS, pg=probs["p_g"],
                            known=None if gold is None else gold > 0)
               if args.uncertain is not None else None)

    def results(fh: IO[str]) -> None:
        write_results_csv(fh, task_ids, est.top_two_, est.confusion_,
                          label_base=args.label_base, decimals=DECIMALS,
                          probabilities=probs)

    def reliabilities(fh: IO[str]) -> None:
        write_reliability_csv(fh, worker_ids, est.reliability_, decimals=DECIMALS)

    _progress(R.nnz, "writing the results...")
    writers = {"--output": results, "--workers-output": reliabilities}
    _write_atomically([(out, writers[out.flag]) for out in outputs], args.force)
    if results_to_stdout:
        _to_stdout(results, "the per-task results", _STDOUT_FIX)
    elif args.workers_output == "-":
        _to_stdout(reliabilities, "the per-worker reliabilities",
                   _STDOUT_FIX.replace("--output", "--workers-output"))
    if relabel is not None:
        print("\n".join(relabel), file=sys.stderr)


class _Signalled(BaseException):
    """SIGTERM or SIGHUP arrived: unwind (removing temporary files) and exit 128 + n."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise_signalled(signum: int, frame: Any) -> None:
    raise _Signalled(signum)


def _install_signal_handlers() -> dict[int, Any]:
    """SIGTERM/SIGHUP raise :class:`_Signalled` (as SIGINT raises KeyboardInterrupt)."""
    old: dict[int, Any] = {}
    for name in ("SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is None:
            continue
        try:
            if signal.getsignal(signum) is signal.SIG_IGN:
                continue                        # e.g. under nohup: keep ignoring it
            old[signum] = signal.signal(signum, _raise_signalled)
        except (ValueError, OSError):           # not the main thread
            pass
    return old


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m toptwo`` and of the ``toptwo`` console script.

    Returns the exit status: 0 on success, 2 on bad arguments or bad input (the
    message goes to stderr, on one line, without a traceback); 128 + n on signal n
    (SIGINT: 130), after removing temporary files.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:           # --help (0) or an argparse usage error (2)
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    old_handlers = _install_signal_handlers()
    try:
        restore_interrupts()            # from here on, Ctrl-C is KeyboardInterrupt below
        if args.command == "demo":
            _check_stdout()
            _, text = run_demo(args.scenario, args.queries_per_task, args.seed)
            _to_stdout(lambda fh: fh.write(text + "\n"), "the demo's table",
                       _STDOUT_FIX_NO_OPTION)
        elif args.command == "diagnose":
            _check_stdout()
            text = run_diagnose(args, read_input, lambda _: input_name(args))
            _to_stdout(lambda fh: fh.write(text + "\n"), "the diagnosis",
                       _STDOUT_FIX_NO_OPTION)
        else:
            _run_infer(args)
    except BrokenPipeError:
        # The reader of standard output went away (e.g. `| head -1`): normal in a shell
        # pipeline. Point stdout at devnull so that the final flush does not complain.
        _silence_stdout()
        return 0
    except KeyboardInterrupt:
        _error(f"{parser.prog} {args.command}: interrupted")
        return 130
    except _Signalled as exc:
        _error(f"{parser.prog} {args.command}: terminated by signal {exc.signum}; no output "
               f"was written")
        return 128 + exc.signum
    except (_UsageError, ValueError, TypeError, OSError, OverflowError, MemoryError) as exc:
        _error(f"{parser.prog} {args.command}: error: "
               f"{_one_line(str(exc) or type(exc).__name__)}")
        return 2
    except ImportError as exc:          # a module loaded on first use (e.g. ulimit -v)
        limit = address_space_limit()
        _error(f"{parser.prog} {args.command}: error: cannot load a module: "
               f"{_one_line(str(exc) or type(exc).__name__)}"
               + (f"; the address space is limited to {limit // 1024} KiB (ulimit -v): "
                  f"raise the limit" if limit is not None else ""))
        return 2
    finally:
        for signum, handler in old_handlers.items():
            try:
                signal.signal(signum, handler)
            except (ValueError, OSError, TypeError):
                pass
    return 0


def _error(text: str) -> None:
    if sys.stderr is not None:
        try:
            print(text, file=sys.stderr)
        except (OSError, ValueError):
            pass


if __name__ == "__main__":
    sys.exit(main())
