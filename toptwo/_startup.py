"""Start-up of the command line under tight limits; standard library only.

``python -m toptwo`` imports the package (numpy, scipy) before ``toptwo.__main__``
runs, so a failure there would end in a traceback. :func:`cli_imports` wraps those
imports: when the process is the command line (``python -m toptwo`` or the ``toptwo``
script), a failed import or memory exhausted while loading numpy/scipy becomes one line
on standard error and exit status 2. Under an address-space limit (``ulimit -v``) it
also starts one BLAS thread instead of one per core (unless the environment says
otherwise): OpenBLAS reserves a buffer per thread at load time, and with a few hundred
MB of address space its thread start failed, retried for ever or exited from C
(measured: ``ulimit -v 250000`` hung, 300000 exited "Memory allocation still failed").
The outputs do not depend on the thread count. Even with one thread, OpenBLAS ends the
process from C (status 1, no Python handler runs) when its buffer does not fit at load
time, or retries for ever (measured, one thread: ``ulimit -v`` 62000 to 90000 KiB
exited while numpy loaded, 170000 and 180000 hung while scipy.linalg loaded): under a
limit the imports are therefore rehearsed first in a forked child (:func:`cli_imports`),
and a child ended or hung that way becomes the same one line and status 2. The library (``import toptwo``) is
unchanged: there an ImportError stays an ImportError.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Iterator

PROG = "python -m toptwo"
#: BLAS thread variables set to 1 under an address-space limit (when not set already).
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_NAMES = ("toptwo", "toptwo.__main__")


def running_as_cli() -> bool:
    """True when this process is ``python [options] -m toptwo ...`` or the ``toptwo``
    console script."""
    argv = list(getattr(sys, "orig_argv", None) or [])
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "-m":
            return i + 1 < len(argv) and argv[i + 1] in _NAMES
        if a.startswith("-m"):
            return a[2:] in _NAMES
        if a in ("-X", "-W"):                   # options with a separate argument
            i += 2
            continue
        if a == "-c" or a == "-" or not a.startswith("-"):
            break                               # a command or a script
        i += 1
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return script in ("toptwo", "toptwo.exe", "toptwo-script.py")


def address_space_limit() -> int | None:
    """The soft RLIMIT_AS in bytes, or None (no limit, or not POSIX)."""
    try:
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        return None if soft == resource.RLIM_INFINITY or soft < 0 else int(soft)
    except (ImportError, OSError, ValueError, AttributeError):
        return None


def _one_line(text: str) -> str:
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def _reason(exc: BaseException) -> str:
    """The cause in a few words: numpy's multi-line ImportError ends with "Original
    error was: ...", which is the part that says what failed."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    if not lines:
        return type(exc).__name__
    text = next((ln for ln in lines if ln.startswith("Original error was:")), lines[0])
    text = _one_line(text)
    return text if len(text) <= 300 else text[:297] + "..."


def _fail(exc: BaseException) -> None:
    limit = address_space_limit()
    note = (f"; the address space is limited to {limit // 1024} KiB (ulimit -v): raise "
            f"the limit" if limit is not None else "")
    what = ("out of memory" if isinstance(exc, MemoryError) and not str(exc)
            else _reason(exc))
    try:
        if sys.stderr is not None:
            print(f"{PROG}: error: cannot start: numpy/scipy could not be loaded "
                  f"({what}){note}", file=sys.stderr)
    except (OSError, ValueError, MemoryError):
        pass


#: Seconds the forked rehearsal of the imports (:func:`cli_imports`) may take (about
#: 0.5 s unloaded) before it counts as hung.
REHEARSAL_SECONDS = 30.0


def _rehearse() -> int | None:
    """Fork: 0 in the child, which runs the imports with its output discarded and then
    exits (see :func:`cli_imports`); the child's pid in the parent; None when there is
    nothing to rehearse (numpy loaded already) or no ``fork``."""
    if "numpy" in sys.modules or not hasattr(os, "fork"):
        return None
    try:
        pid = os.fork()
    except OSError:
        return None
    if pid == 0:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
        except OSError:
            os._exit(0)
    return pid


def _rehearsal_problem(pid: int) -> str | None:
    """How the rehearsal in child ``pid`` ended: None when it finished the imports or
    failed in Python (the imports here then report that in one line); the reason in a
    few words when it was ended from C (OpenBLAS: "Memory allocation still failed after
    10 retries, giving up", status 1) or ran past :data:`REHEARSAL_SECONDS`."""
    import time
    deadline = time.monotonic() + REHEARSAL_SECONDS
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                return (f"out of memory: loading the BLAS library did not finish in "
                        f"{REHEARSAL_SECONDS:g} s")
            time.sleep(0.02)
    except OSError:
        return None
    if os.waitstatus_to_exitcode(status) == 0:
        return None
    return "out of memory: the BLAS library could not allocate its buffer"


def _interrupted(signum: int, frame: object) -> None:
    """SIGINT before the command's own handling starts: one line, exit status 130."""
    try:
        if sys.stderr is not None:
            print(f"{PROG}: interrupted", file=sys.stderr)
    except (OSError, ValueError):
        pass
    raise SystemExit(130)


def quiet_interrupts() -> None:
    """As the command line, Ctrl-C during start-up (imports, argument parsing) ends the
    process with one line and status 130 instead of a KeyboardInterrupt traceback;
    :func:`toptwo.__main__.main` hands SIGINT back to Python's
    handler (KeyboardInterrupt, with its clean-up) once its own handling is in place."""
    try:
        import signal
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _interrupted)
    except (ImportError, ValueError, OSError, AttributeError):   # not the main thread
        pass


def restore_interrupts() -> None:
    """Undo :func:`quiet_interrupts` (only if its handler is still in place)."""
    try:
        import signal
        if signal.getsignal(signal.SIGINT) is _interrupted:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except (ImportError, ValueError, OSError, AttributeError):
        pass


@contextlib.contextmanager
def cli_imports() -> Iterator[None]:
    """Around the package's imports of numpy and scipy (see the module docstring).

    Under an address-space limit the command line first rehearses the imports in a
    forked child (:func:`_rehearse`): OpenBLAS can end a process from C or hang in it,
    which no handler here would see."""
    cli = running_as_cli()
    if cli:
        quiet_interrupts()
    rehearsal = None
    if cli and address_space_limit() is not None:
        for var in THREAD_VARIABLES:
            os.environ.setdefault(var, "1")
        rehearsal = _rehearse()
        if rehearsal:
            problem = _rehearsal_problem(rehearsal)
            if problem is not None:
                _fail(MemoryError(problem))
                raise SystemExit(2)
    try:
        yield
    except (ImportError, MemoryError, OSError) as exc:
        if rehearsal == 0:
            os._exit(0)
        if not cli:
            raise
        _fail(exc)
        raise SystemExit(2) from None
    except KeyboardInterrupt:           # Ctrl-C before the handler above was installed
        if rehearsal == 0:
            os._exit(0)
        if not cli:
            raise
        _interrupted(2, None)
    except BaseException:
        if rehearsal == 0:
            os._exit(0)
        raise
    if rehearsal == 0:                  # the child: the imports ran to the end
        os._exit(0)
