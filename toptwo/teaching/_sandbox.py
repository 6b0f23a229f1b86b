"""Run a student's function in a separate process (the parent side).

A check opens one :class:`Student` per graded function: a child interpreter
(``python -I toptwo/teaching/_child.py``, started without ``toptwo``) receives the
function, pickled by value with cloudpickle, and then the inputs of each call. The child
runs only the student's code and sends back what it returned as plain data (JSON: numbers,
arrays, lists, tuples, SymPy trees; nothing the parent has to execute to read). The parent
(the check, in the grading kernel) draws the inputs, holds every reference value, compares
and names the mistake.

Time limits: each call may take :func:`call_limit` seconds (default 5 s;
``TOPTWO_CALL_TIMEOUT``), all calls of one check together :func:`check_limit` seconds
(default 20 s; ``TOPTWO_CHECK_TIMEOUT``), counted in the child's CPU time (read from
``/proc``; wall-clock time where there is none), so that a loaded grading machine does not
fail a correct function; a call that waits is stopped after ``WALL_FACTOR`` (4) times its
limit of wall-clock time. A call over the limit is stopped (the child is killed) and
reported as "your function took more than N s"; a child that dies (``os._exit``, a
crash, the kernel's out-of-memory killer) is reported with its exit status.

What the exercise hands the function (ex04's ``draw``/``estimate``, ex06's ``pair_error``)
runs in the parent, called from the child by name (``rpc``): the hidden model and the test
curves never reach the child.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

import numpy as np

__all__ = ["Student", "call_limit", "check_limit", "SandboxError"]

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_child.py")
DEFAULT_CALL_LIMIT = 5.0
DEFAULT_CHECK_LIMIT = 20.0
WALL_FACTOR = 4.0            # wall-clock allowance of a call, in multiples of its CPU limit
_START_CPU = 60.0
_START_LIMIT = 600.0         # starting the child and importing numpy/SymPy (not the student's)

#: Names in the student's code that only serve to reach around the grading rules.
SUSPICIOUS = {
    "_getframe": "walk the interpreter's frames (sys._getframe)",
    "f_back": "walk the interpreter's frames (f_back)",
    "f_locals": "read another frame's variables (f_locals)",
    "f_globals": "read another frame's globals (f_globals)",
    "setprofile": "change the profile hook (sys.setprofile)",
    "settrace": "change the trace hook (sys.settrace)",
    "__closure__": "read a function's closure (__closure__)",
    "cell_contents": "read a function's closure (cell_contents)",
    "getsource": "copy library source (inspect.getsource)",
    "addaudithook": "change the grading rules (sys.addaudithook)",
    "fork_exec": "start a process (_posixsubprocess.fork_exec)",
    "_posixsubprocess": "start a process (_posixsubprocess)",
    "start_new_thread": "start a thread (_thread)",
    "reload": "re-import a module (importlib.reload)",
}


def _env_seconds(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number of seconds.") from None
    if not value > 0:
        raise ValueError(f"{name}={raw!r} must be a positive number of seconds.")
    return value


def call_limit() -> float:
    """Seconds one call of a student's function may take (``TOPTWO_CALL_TIMEOUT``, 5)."""
    return _env_seconds("TOPTWO_CALL_TIMEOUT", DEFAULT_CALL_LIMIT)


def check_limit() -> float:
    """Seconds all calls of one check may take together (``TOPTWO_CHECK_TIMEOUT``, 20)."""
    return _env_seconds("TOPTWO_CHECK_TIMEOUT", DEFAULT_CHECK_LIMIT)


class SandboxError(Exception):
    """A call did not return a value: ``kind`` is one of ``"refused"``, ``"raised"``,
    ``"timeout"``, ``"budget"``, ``"died"``, ``"load"``; ``message`` says it for a student."""

    def __init__(self, kind: str, message: str, *, exc_type: str = "",
                 key_error: bool = False):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.exc_type = exc_type
        self.key_error = key_error


def library_dirs() -> list[str]:
    import importlib.util
    dirs = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    spec = importlib.util.find_spec("theory_checks")
    if spec is not None and spec.submodule_search_locations:
        dirs.extend(os.path.abspath(p) for p in spec.submodule_search_locations)
    return [d + os.sep for d in dirs]


_FINGERPRINTS: dict[tuple, tuple[list, list]] = {}


def _digest(item: Any) -> bytes:
    import hashlib
    return hashlib.blake2b(repr(item).encode("utf-8", "replace"), digest_size=8).digest()


def library_fingerprints() -> tuple[list, list]:
    """Digests of every library function's code (bytecode, names, constants) and of the
    library's distinctive source lines, for the child's copied-code rule. Read from the
    bytecode cache where it is fresh (compiled otherwise), once per process."""
    import importlib.util
    import marshal
    dirs = tuple(library_dirs())
    files: list[str] = []
    for top in dirs:
        for folder, _dirs, names in os.walk(top):
            files.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(".py"))
    key = tuple((f, os.stat(f).st_mtime_ns) for f in files)
    if key in _FINGERPRINTS:
        return _FINGERPRINTS[key]
    codes: set[bytes] = set()
    lines: set[bytes] = set()
    for path in files:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        for line in text.split("\n"):
            line = line.strip()
            if len(line) >= 30 and not line.startswith(("#", '"', "'", "import ", "from ",
                                                        "return ")):
                lines.add(_digest(line))
        code = None
        try:
            cached = importlib.util.cache_from_source(path)
            with open(cached, "rb") as fh:
                data = fh.read()
            st = os.stat(path)
            if (len(data) > 16 and data[8:12] == struct.pack("<I", int(st.st_mtime) & 0xFFFFFFFF)
                    and data[12:16] == struct.pack("<I", st.st_size & 0xFFFFFFFF)):
                code = marshal.loads(data[16:])
        except (OSError, ValueError, EOFError, TypeError, NotImplementedError):
            code = None
        if code is None:
            try:
                code = compile(text, path, "exec", dont_inherit=True)
            except (SyntaxError, ValueError):
                continue
        stack = [code]
        while stack:
            c = stack.pop()
            # whole functions only (not comprehensions or lambdas, which a student may
            # well write identically), and not the trivial ones
            if c is not code and len(c.co_code) >= 40 and not c.co_name.startswith("<"):
                # names, variables, constants (the docstring among them) and arguments:
                # not the bytecode, which depends on how and where the source was compiled
                consts = tuple(k for k in c.co_consts if not hasattr(k, "co_code"))
                codes.add(_digest((c.co_names, c.co_varnames, consts, c.co_argcount)))
            stack.extend(k for k in c.co_consts if hasattr(k, "co_code"))
    _FINGERPRINTS.clear()
    _FINGERPRINTS[key] = (sorted(codes), sorted(lines))
    return _FINGERPRINTS[key]


# ------------------------------------------------------------------ decoding (safe)
class Opaque:
    """A returned object the parent does not rebuild (shown by type and repr only)."""

    def __init__(self, type_name: str, text: str):
        self.type_name = type_name
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _decode(obj: Any, depth: int = 0) -> Any:
    if depth > 8 or not isinstance(obj, dict):
        raise ValueError("malformed result")
    t = obj.get("t")
    if t == "py":
        v = obj["v"]
        if v is not None and not isinstance(v, (bool, int, float, str)):
            raise ValueError("malformed result")
        return v
    if t == "complex":
        return complex(float(obj["v"][0]), float(obj["v"][1]))
    if t == "ndarray":
        dtype = np.dtype(str(obj["dtype"]))
        if dtype.kind not in "biufc":
            raise ValueError("malformed result")
        shape = tuple(int(x) for x in obj["shape"])
        data = base64.b64decode(obj["data"])
        return np.frombuffer(data, dtype=dtype).reshape(shape).copy()
    if t == "objarray":
        items = [_decode(v, depth + 1) for v in obj["items"]]
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out.reshape(tuple(int(x) for x in obj["shape"]))
    if t in ("list", "tuple"):
        items = [_decode(v, depth + 1) for v in obj["items"]]
        return items if t == "list" else tuple(items)
    if t == "sparse":
        return _decode(obj["dense"], depth + 1)
    if t == "pandas":
        return _decode(obj["values"], depth + 1)
    if t == "sympy":
        return _sympy(obj["tree"])
    return Opaque(str(obj.get("type", "?")), str(obj.get("repr", "?"))[:200])


_SYMPY_FUNCS = ("Add", "Mul", "Pow", "exp", "log", "Abs", "sqrt", "Max", "Min", "sin", "cos",
                "Piecewise", "ExprCondPair", "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "And", "Or",
                "Not")


def _sympy(tree: Any) -> Any:
    """Rebuild a SymPy expression from the child's tree, from a fixed list of classes."""
    import sympy as sp
    if not isinstance(tree, list) or not tree or not isinstance(tree[0], str):
        raise ValueError("malformed expression")
    head, rest = tree[0], tree[1:]
    if head == "Symbol":
        return sp.Symbol(str(rest[0]))
    if head == "Integer":
        return sp.Integer(int(rest[0]))
    if head == "Rational":
        return sp.Rational(int(rest[0]), int(rest[1]))
    if head == "Float":
        return sp.Float(str(rest[0]))
    special = {"Half": sp.S.Half, "One": sp.S.One, "Zero": sp.S.Zero,
               "NegativeOne": sp.S.NegativeOne, "Pi": sp.pi, "Exp1": sp.E,
               "BooleanTrue": sp.true, "BooleanFalse": sp.false, "Infinity": sp.oo,
               "NegativeInfinity": -sp.oo, "NaN": sp.nan, "ImaginaryUnit": sp.I}
    if head in special and not rest:
        return special[head]
    if head in _SYMPY_FUNCS:
        return getattr(sp, head)(*[_sympy(a) for a in rest])
    return Opaque(f"SymPy {head}", f"a SymPy {head} expression")


# ------------------------------------------------------------------ the child
class Student:
    """The student's function ``fn``, run in a child process; use as a context manager.

    Parameters
    ----------
    exercise : str
        Shown in reports.
    fn : callable
        The student's function (pickled by value with cloudpickle).
    rpc : dict, optional
        Functions the exercise hands over, run *here* when the child calls them; the
        function's global of that name is replaced in the child (``patch_globals``) or
        passed as an argument (:meth:`handle`).
    patch_globals : dict, optional
        Globals of the student's function replaced in the child for the check (ex06:
        ``NS_GRID``, ``REPS``); a name in ``rpc`` becomes the child-side stub of that
        function.
    preload : tuple of str
        Packages imported in the child before the rules apply (ex04 4b: ``("toptwo",)``,
        for ``toptwo.split_entries`` and ``toptwo.Responses``).
    """

    def __init__(self, exercise: str, fn: Callable, *, rpc: dict | None = None,
                 patch_globals: dict | None = None, preload: tuple = ()):
        self.exercise = exercise
        self.fn = fn
        # a function already pickled by value elsewhere (toptwo.teaching.verify: sent by
        # the notebook's kernel, never unpickled here)
        self.payload: bytes | None = getattr(fn, "payload", None)
        self.cwd: str | None = getattr(fn, "cwd", None)
        self.rpc = dict(rpc or {})
        self.patch_globals = dict(patch_globals or {})
        self.preload = tuple(preload)
        self.proc: subprocess.Popen | None = None
        self.stderr: Any = None
        self.used = 0.0            # seconds of student time so far
        self.calls = 0
        self.load_problem: SandboxError | None = None
        self._cpu_deadline: float | None = None

    # -- lifecycle
    def __enter__(self) -> "Student":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        proc = self.proc
        if proc is None:
            return
        try:
            if proc.poll() is None:
                self._write({"stop": True})
                proc.wait(timeout=2)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            pass
        self.proc = None
        self._kill(proc)
        if self.stderr is not None:
            self.stderr.close()
            self.stderr = None

    @staticmethod
    def _kill(proc: subprocess.Popen) -> None:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def _pickled_function(self) -> bytes:
        try:
            import cloudpickle
        except ImportError as exc:
            raise ImportError("the checks run your function in a separate process and need "
                              "cloudpickle: pip install \"toptwo[student]\" (students) or "
                              "\"toptwo[teaching]\" (instructors).") from exc
        # the function travels by value even when it is defined in an importable module
        # (a test file, a student's helper module): the child must not import that module
        module = sys.modules.get(getattr(self.fn, "__module__", None) or "")
        by_value = module is not None and module.__name__ != "__main__" and \
            module.__name__ not in cloudpickle.list_registry_pickle_by_value()
        if by_value:
            cloudpickle.register_pickle_by_value(module)
        try:
            return self._dumps(cloudpickle)
        finally:
            if by_value:
                cloudpickle.unregister_pickle_by_value(module)

    def _dumps(self, cloudpickle: Any) -> bytes:
        """The function by value; the globals that name a handed-over function (``rpc``)
        are replaced by a marker first, so the notebook's own version (which may use
        ``toptwo``) does not travel; the child puts the callers of the check in place."""
        glb = getattr(self.fn, "__globals__", None)
        patch = {name: ("toptwo-rpc", name) for name in self.rpc}
        if not patch or not isinstance(glb, dict):
            return cloudpickle.dumps(self.fn)
        missing = object()
        saved = {k: glb.get(k, missing) for k in patch}
        try:
            glb.update(patch)
            return cloudpickle.dumps(self.fn)
        finally:
            for k, v in saved.items():
                if v is missing:
                    glb.pop(k, None)
                else:
                    glb[k] = v

    def _start(self) -> None:
        if self.proc is not None:
            return
        if self.payload is not None:
            payload = self.payload
        else:
            try:
                payload = self._pickled_function()
            except ImportError:
                raise
            except Exception as exc:  # noqa: BLE001 - an unpicklable function is the student's
                raise SandboxError("load", f"your function could not be sent to the grading "
                                   f"process ({type(exc).__name__}: {exc}); keep it a plain "
                                   "function of NumPy code.") from None
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-u", CHILD], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.stderr, cwd=self.cwd or os.getcwd(),
            start_new_session=True)
        codes, lines = library_fingerprints()
        values = {k: v for k, v in self.patch_globals.items() if k not in self.rpc}
        self._write({"sys_path": [p for p in sys.path if p], "library_dirs": library_dirs(),
                     "library_codes": codes, "library_lines": lines, "suspicious": SUSPICIOUS,
                     "preload": self.preload, "function": payload, "patch": values,
                     "rpc": sorted(self.rpc)})
        # loading (imports of NumPy/SymPy, unpickling) is not the student's time, but an
        # endless load must end: START_CPU seconds of the child's CPU time (a loaded machine
        # does not cut it short), _START_LIMIT of wall-clock time at most
        cpu0 = self._cpu()
        self._cpu_deadline = None if cpu0 is None else cpu0 + _START_CPU
        try:
            ready = self._read(time.monotonic() + _START_LIMIT)
        except TimeoutError:
            proc, self.proc = self.proc, None
            if proc is not None:
                self._kill(proc)
            raise SandboxError("load", "your function took too long to load in the grading "
                               "process (its globals?)") from None
        if ready.get("refused"):
            self.load_problem = SandboxError("refused", self._refusal(ready["refused"]))
        elif ready.get("load_error"):
            err = ready["load_error"]
            self.load_problem = SandboxError(
                "load", f"your function could not be loaded in the grading process "
                f"({err['type']}: {err['message']}).")

    def _refusal(self, what: list) -> str:
        kinds: dict[str, str] = {}
        for w in map(str, what):             # one entry per kind ("read a closure (...)")
            kinds.setdefault(w.split(" (")[0], w)
        return ("your function tried to " + "; ".join(kinds.values())
                + ", which is not allowed while it is graded")

    # -- framing
    def _write(self, obj: Any) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        self.proc.stdin.write(struct.pack("<Q", len(data)) + data)
        self.proc.stdin.flush()

    def _cpu(self) -> float | None:
        """CPU seconds the child has used (user + system), or None where /proc is absent."""
        if self.proc is None:
            return None
        try:
            with open(f"/proc/{self.proc.pid}/stat", encoding="ascii") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None

    def _read_exact(self, n: int, deadline: float, starting: bool) -> bytes:
        """Read ``n`` bytes; TimeoutError past the wall-clock ``deadline`` or when the
        child's CPU time passes ``self._cpu_deadline`` (checked every 0.1 s)."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        chunks: list[bytes] = []
        while n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([fd], [], [], min(left, 0.1))
            if not ready:
                limit = None if starting else self._cpu_deadline
                cpu = None if limit is None else self._cpu()
                if cpu is not None and limit is not None and cpu > limit:
                    raise TimeoutError
                continue
            chunk = os.read(fd, min(n, 1 << 20))
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def _read(self, deadline: float, starting: bool = False) -> dict:
        try:
            (n,) = struct.unpack("<Q", self._read_exact(8, deadline, starting))
            if n > 1 << 31:
                raise ValueError("frame too large")
            msg = json.loads(self._read_exact(n, deadline, starting))
            if not isinstance(msg, dict):
                raise ValueError("malformed message")
            return msg
        except TimeoutError:
            raise
        except (EOFError, OSError) as exc:
            raise self._died() from exc
        except ValueError as exc:
            raise SandboxError("died", f"the grading process sent an unreadable reply "
                               f"({exc}).") from None

    def _died(self) -> SandboxError:
        proc = self.proc
        code = proc.wait() if proc is not None else None
        tail = ""
        if self.stderr is not None:
            self.stderr.seek(0)
            text = self.stderr.read().decode("utf-8", "replace").strip().splitlines()
            tail = text[-1][:200] if text else ""
        self.close()
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            how = f"the process running your function was killed by {name}"
            how += (" (out of memory?)" if name == "SIGKILL" else
                    " (a crash in compiled code)" if name in ("SIGSEGV", "SIGBUS", "SIGABRT")
                    else "")
        else:
            how = (f"the process running your function ended (exit status {code}) without "
                   "returning: your function (or code it calls) ends the interpreter, e.g. "
                   "with os._exit or sys.exit")
        if tail and "Traceback" not in tail:
            how += f"; last line it printed: {tail!r}"
        return SandboxError("died", how)

    # -- calls
    def call(self, *args: Any, limit: float | None = None) -> Any:
        """Run the student's function on ``args`` in the child; return what it returned
        (rebuilt from data) or raise :class:`SandboxError`."""
        if self.proc is None:
            self._start()
        if self.load_problem is not None:
            raise self.load_problem
        per_call = call_limit() if limit is None else limit
        budget = check_limit() - self.used
        if budget <= 0:
            raise SandboxError("budget", f"your function took {self.used:.1f} s over "
                               f"{self.calls} calls, more than the {check_limit():g} s "
                               "allowed for one check.")
        this = min(per_call, budget)
        self.calls += 1
        # the limits count the child's CPU time (a loaded machine does not make a function
        # slow); a function that waits (sleep, input) is stopped after WALL_FACTOR times
        # the limit of wall-clock time. Without /proc, wall-clock time counts.
        cpu0 = self._cpu()
        start = time.monotonic()
        if cpu0 is None:
            deadline, self._cpu_deadline = start + this, None
        else:
            deadline, self._cpu_deadline = start + WALL_FACTOR * this, cpu0 + this
        try:
            self._write({"args": args})
        except (OSError, ValueError) as exc:
            raise self._died() from exc

        def spent() -> float:
            cpu = self._cpu() if cpu0 is not None else None
            return cpu - cpu0 if cpu is not None and cpu0 is not None else (
                time.monotonic() - start)

        try:
            while True:
                msg = self._read(deadline)
                if "rpc" in msg:
                    self._serve(msg)
                    continue
                break
        except TimeoutError:
            self.used += max(spent(), this if cpu0 is not None else 0.0)
            proc = self.proc
            self.proc = None
            if proc is not None:
                self._kill(proc)
            if this < per_call:
                raise SandboxError("budget", f"your function took more than {check_limit():g}"
                                   f" s over {self.calls} calls (the limit for one check); "
                                   "make it faster.") from None
            raise SandboxError("timeout", f"your function took more than {per_call:g} s "
                               "(the time limit of one call); make it faster.") from None
        self.used += spent()
        if msg.get("refused"):
            raise SandboxError("refused", self._refusal(msg["refused"]))
        if "error" in msg:
            err = msg["error"]
            if err.get("not_implemented"):
                raise NotImplementedError(err.get("message", ""))
            raise SandboxError("raised", f"your function raised {err['type']}: "
                               f"{err['message']}", exc_type=str(err["type"]),
                               key_error=bool(err.get("key_error")))
        return _decode(msg["value"])

    def _serve(self, msg: dict) -> None:
        name = msg["rpc"]
        fn = self.rpc.get(name)
        try:
            if fn is None:
                raise ValueError(f"no function {name!r} is handed over")
            args = _decode(msg.get("args"))
            reply = {"value": fn(*args)}
        except Exception as exc:  # noqa: BLE001 - reported to the student's code
            reply = {"error": f"{name} raised {type(exc).__name__}: {exc}"}
        self._write(reply)
