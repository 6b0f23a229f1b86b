"""The child process that runs a student's function (started by :mod:`toptwo.teaching._sandbox`).

Run as a script (``python -I -u _child.py``), never imported: the child starts without
``toptwo`` in ``sys.modules`` and holds no reference value, expected answer or checker
state. It receives (pickled, from the parent, which it trusts) the student's function
(cloudpickle, by value) and the inputs of each call; it runs only the student's code and
writes back (JSON, which the parent parses without executing anything) what the function
returned, what it raised, or which rule it broke.

Before any student code is unpickled, an audit hook (:func:`sys.addaudithook`, which
Python code cannot remove) refuses

* imports of ``toptwo`` and ``theory_checks`` (except, when the exercise hands it over,
  the already imported ``toptwo`` of ex04 4b; ``toptwo.teaching`` never),
* starting processes (``subprocess``, ``os.system``/``fork``/``exec``/``spawn``,
  ``multiprocessing``) and threads (``threading``, ``_thread``, ``concurrent.futures``),
* compiling or executing library code: source text holding lines of ``toptwo`` /
  ``theory_checks`` (``inspect.getsource`` + ``exec``), or code objects whose bytecode or
  file name is the library's (a copied function shipped by value),
* ``ctypes`` and ``gc`` object walks (ways around the rules above).

A refusal raises in the student's code *and* is recorded outside its reach, so catching
the exception does not hide it: the call is reported as the named process mistake.
Protocol: length-prefixed frames; parent -> child pickles on stdin, child -> parent JSON on
the original stdout (the student's prints go to stderr).
"""

import base64
import hashlib
import json
import os
import pickle
import struct
import sys
import time

_IN = os.fdopen(os.dup(0), "rb", buffering=0)
_OUT = os.fdopen(os.dup(1), "wb", buffering=0)
_devnull = os.open(os.devnull, os.O_RDONLY)
os.dup2(_devnull, 0)
os.dup2(2, 1)                         # the student's prints go to stderr, not the protocol
sys.stdout = sys.stderr


def _read_exact(n):
    chunks = []
    while n:
        chunk = _IN.read(n)
        if not chunk:
            raise SystemExit(0)
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _receive():
    (n,) = struct.unpack("<Q", _read_exact(8))
    return pickle.loads(_read_exact(n))


def _send(obj):
    data = json.dumps(obj).encode()
    _OUT.write(struct.pack("<Q", len(data)) + data)


# ------------------------------------------------------------------ setup (trusted)
_setup = _receive()
sys.path[:] = [p for p in _setup["sys_path"] if p]
os.environ.pop("PYTHONSTARTUP", None)
import numpy  # noqa: E402,F401  - numpy's own imports (threading, ctypes) happen here
import cloudpickle  # noqa: E402

for _name in _setup.get("preload", ()):        # what the exercise hands over (ex04: toptwo)
    __import__(_name)
import threading  # noqa: E402
import _thread  # noqa: E402

_LIBRARY_DIRS = tuple(_setup["library_dirs"])
_ALLOWED_TOP = set(_setup.get("preload", ()))


def _in_library(filename):
    return bool(filename) and os.path.abspath(filename).startswith(_LIBRARY_DIRS)


def _digest(item):
    return hashlib.blake2b(repr(item).encode("utf-8", "replace"), digest_size=8).digest()


def _code_key(code):
    """What identifies a function's code across files and compilations: its names,
    variables, constants (the docstring among them) and arguments."""
    consts = tuple(c for c in code.co_consts if not hasattr(c, "co_code"))
    return _digest((code.co_names, code.co_varnames, consts, code.co_argcount))


_LIB_CODES = set(_setup["library_codes"])      # from the parent: toptwo / theory_checks
_LIB_LINES = set(_setup["library_lines"])


_REFUSED: list = []           # what the student's code tried; read only by this file
_ACTIVE = [False]             # True while student code (or its unpickling) runs
_PROCESS_EVENTS = {"os.system", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn",
                   "os.exec", "os.startfile", "subprocess.Popen", "pty.spawn"}
# fresh loads of the modules whose start functions are replaced below
_BLOCKED_IMPORTS = {"_posixsubprocess": "start a process", "_thread": "start a thread"}


class RuleBroken(RuntimeError):
    """Raised inside the student's code when it breaks a grading rule."""


def _refuse(what):
    if what not in _REFUSED:
        _REFUSED.append(what)
    raise RuleBroken(f"not allowed while your function is graded: {what}")


_INSTALLED = tuple(os.path.join(os.path.abspath(p), "") for p in {sys.prefix, sys.base_prefix})


def _code_is_library(code):
    stack = [code]
    while stack:
        c = stack.pop()
        if _in_library(c.co_filename):
            return True
        installed = os.path.abspath(c.co_filename).startswith(_INSTALLED) and os.path.isfile(
            c.co_filename)                  # an installed package's own module being imported
        if not installed and _code_key(c) in _LIB_CODES:
            return True
        stack.extend(k for k in c.co_consts if hasattr(k, "co_code"))
    return False


def _source_is_library(source):
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source).decode("utf-8", "replace")
    if not isinstance(source, str):
        return False
    hits = 0
    for line in source.split("\n"):
        if _digest(line.strip()) in _LIB_LINES:
            hits += 1
            if hits >= 2:
                return True
    return False


def _hook(event, args):  # noqa: C901 - one branch per audited event
    if not _ACTIVE[0]:
        return
    if event == "import":
        name = str(args[0])
        top = name.split(".")[0]
        if top in ("toptwo", "theory_checks"):
            if top not in _ALLOWED_TOP or name.startswith("toptwo.teaching"):
                _refuse(f"import {name}")
            return
        if top in _BLOCKED_IMPORTS and sys.modules.get(top) is not _STUBS.get(top):
            _refuse(_BLOCKED_IMPORTS[top])
    elif event in ("os.kill", "os.killpg"):
        if args[0] != os.getpid():
            _refuse(f"signal another process ({event})")
    elif event in _PROCESS_EVENTS:
        _refuse(f"start a process ({event})")
    elif event == "compile":
        if _source_is_library(args[0]) or _in_library(str(args[1])):
            _refuse("compile library source (copied toptwo / theory_checks code)")
    elif event == "exec":
        if _code_is_library(args[0]):
            _refuse("execute library code (copied toptwo / theory_checks code)")
    elif event == "code.__new__":
        if _in_library(str(args[1])):
            _refuse("rebuild a library function (copied toptwo / theory_checks code)")
    elif event.startswith("ctypes.") or event.startswith("gc.get_"):
        _refuse(f"{event.split('.')[0]} ({event})")
    elif event in ("sys.addaudithook", "cpython.PyInterpreterState_Clear"):
        _refuse("change the grading rules (audit hooks)")


def _no_thread(*_args, **_kwargs):
    _refuse("start a thread")


def _no_process(*_args, **_kwargs):
    _refuse("start a process")


# Threads and processes started without an audit event in Python 3.11 (threading,
# _thread, concurrent.futures; multiprocessing's spawn/forkserver via
# _posixsubprocess.fork_exec): their start functions are replaced here, in the real
# modules, before any student code runs (subprocess, os.fork/exec/spawn/system and
# posix_spawn raise audit events, refused by the hook).
import _posixsubprocess  # noqa: E402

_thread.start_new_thread = _no_thread
_thread.start_new = _no_thread
threading._start_new_thread = _no_thread  # type: ignore[attr-defined]
for _attr in ("start_joinable_thread",):
    if hasattr(_thread, _attr):
        setattr(_thread, _attr, _no_thread)
_posixsubprocess.fork_exec = _no_process
_STUBS = {"_thread": _thread, "_posixsubprocess": _posixsubprocess}
sys.addaudithook(_hook)


# ------------------------------------------------------------------ results as data
def _encode(value, depth=0):
    """A JSON description of ``value``; the parent rebuilds only numbers and arrays."""
    if depth > 6:
        return {"t": "other", "type": type(value).__name__, "repr": "(nested too deep)"}
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2 ** 62:
            return {"t": "other", "type": "int", "repr": str(value)[:80]}
        return {"t": "py", "v": value}
    if isinstance(value, complex):
        return {"t": "complex", "v": [value.real, value.imag]}
    mod = type(value).__module__ or ""
    if isinstance(value, numpy.generic):
        value = numpy.asarray(value)
    if isinstance(value, numpy.ndarray):
        if value.dtype.kind in "biufc" and value.size <= 10 ** 7:
            arr = numpy.ascontiguousarray(value)
            return {"t": "ndarray", "dtype": arr.dtype.str, "shape": list(arr.shape),
                    "data": base64.b64encode(arr.tobytes()).decode()}
        if value.dtype.kind == "O" and value.size <= 10 ** 4:
            return {"t": "objarray", "shape": list(value.shape),
                    "items": [_encode(v, depth + 1) for v in value.ravel().tolist()]}
    if isinstance(value, (list, tuple)) and len(value) <= 10 ** 6:
        return {"t": "list" if isinstance(value, list) else "tuple",
                "items": [_encode(v, depth + 1) for v in value]}
    if hasattr(value, "toarray") and (mod.startswith("scipy.sparse") or mod.startswith("toptwo")):
        return {"t": "sparse", "dense": _encode(numpy.asarray(value.toarray()), depth + 1)}
    if mod.startswith("pandas") and hasattr(value, "to_numpy") and type(value).__name__ in (
            "Series", "DataFrame", "Index"):
        return {"t": "pandas", "kind": type(value).__name__,
                "values": _encode(value.to_numpy(), depth + 1)}
    if mod.startswith("sympy") and hasattr(value, "func") and hasattr(value, "args"):
        return {"t": "sympy", "tree": _sympy_tree(value, 0)}
    if isinstance(value, numpy.ndarray) or type(value).__name__ == "matrix":
        return {"t": "other", "type": type(value).__name__, "repr": repr(value)[:200]}
    return {"t": "other", "type": type(value).__name__, "repr": repr(value)[:200]}


def _sympy_tree(expr, depth):
    if depth > 200:
        raise ValueError("expression nested too deep")
    name = type(expr).__name__
    if getattr(expr, "is_Symbol", False):
        return ["Symbol", str(expr.name)]
    if getattr(expr, "is_Integer", False):
        return ["Integer", str(int(expr))]
    if getattr(expr, "is_Rational", False):
        return ["Rational", str(int(expr.p)), str(int(expr.q))]
    if getattr(expr, "is_Float", False):
        return ["Float", str(expr)]
    return [name] + [_sympy_tree(a, depth + 1) for a in expr.args]


def _describe(exc):
    return {"type": type(exc).__name__, "message": str(exc)[:500],
            "key_error": isinstance(exc, KeyError),
            "not_implemented": isinstance(exc, NotImplementedError)}


# ------------------------------------------------------------------ the calls
def _rpc_stub(name):
    def call(*args):
        _send({"rpc": name, "args": _encode(list(args))})
        reply = _receive()
        if reply.get("error"):
            raise RuntimeError(reply["error"])
        return reply["value"]
    call.__name__ = name
    return call


def _reachable_code(fn):
    """The code objects of the student's function and of every function it reaches
    through its globals and closure (all sent by value), each once."""
    seen, todo = set(), [fn]
    while todo:
        f = todo.pop()
        code = getattr(f, "__code__", None)
        if code is None or id(code) in seen:
            continue
        seen.add(id(code))
        yield code
        for value in (getattr(f, "__globals__", None) or {}).values():
            if callable(value) and hasattr(value, "__code__"):
                todo.append(value)
        for cell in getattr(f, "__closure__", None) or ():
            try:
                todo.append(cell.cell_contents)
            except ValueError:
                pass


def _ships_library_code(fn):
    """Whether the student's function, or a function it reaches through its globals or
    closure, is a copy of a library function (its code shipped by value)."""
    return any(_code_is_library(code) for code in _reachable_code(fn))


def _code_names(fn):
    """Every name the student's code mentions: the function, the functions it reaches
    through its globals and closure (all sent by value), their nested code."""
    names = set()
    for code in _reachable_code(fn):
        stack = [code]
        while stack:
            c = stack.pop()
            names.update(c.co_names)
            names.update(c.co_varnames)
            names.update(c.co_freevars)
            for k in c.co_consts:
                if hasattr(k, "co_code"):
                    stack.append(k)
                elif isinstance(k, str) and k.isidentifier():
                    names.add(k)
    return names


def _main():  # noqa: C901 - the protocol loop
    _ACTIVE[0] = True
    try:
        fn = cloudpickle.loads(_setup["function"])
        loaded = None
    except RuleBroken:
        fn, loaded = None, None
    except BaseException as exc:  # noqa: BLE001 - anything the student's pickle raises
        fn, loaded = None, exc
    finally:
        _ACTIVE[0] = False
    if fn is not None and _ships_library_code(fn):
        _REFUSED.append("run a copy of a library function (copied toptwo / theory_checks code)")
    if fn is not None:
        names = _code_names(fn)
        for name, why in _setup.get("suspicious", {}).items():
            if name in names and why not in _REFUSED:
                _REFUSED.append(why)
        glb = getattr(fn, "__globals__", None)
        if isinstance(glb, dict):
            glb.update(_setup.get("patch") or {})
            for name in _setup.get("rpc") or ():
                glb[name] = _rpc_stub(name)
            for key, value in list(glb.items()):
                if isinstance(value, tuple) and len(value) == 2 and value[0] == "toptwo-rpc":
                    glb[key] = _rpc_stub(value[1])
    _send({"ready": True, "refused": list(_REFUSED),
           "load_error": None if loaded is None else _describe(loaded)})
    while True:
        request = _receive()
        if request.get("stop"):
            return
        refused_before = len(_REFUSED)
        start = time.perf_counter()
        _ACTIVE[0] = True
        try:
            args = [_rpc_stub(a[1]) if isinstance(a, tuple) and len(a) == 2
                    and a[0] == "toptwo-rpc" else a for a in request["args"]]
            result = fn(*args)
            _ACTIVE[0] = False
            reply = {"value": _encode(result)}
        except RuleBroken:
            _ACTIVE[0] = False
            reply = {"value": None}
        except BaseException as exc:  # noqa: BLE001 - the student's crash becomes a report
            _ACTIVE[0] = False
            if isinstance(exc, SystemExit):
                reply = {"error": {"type": "SystemExit", "message": f"exit({exc.code!r})",
                                   "key_error": False, "not_implemented": False}}
            else:
                reply = {"error": _describe(exc)}
        reply["seconds"] = time.perf_counter() - start
        reply["refused"] = _REFUSED[refused_before:]
        try:
            _send(reply)
        except (TypeError, ValueError) as exc:
            _send({"error": {"type": "TypeError", "message": f"could not send the result "
                             f"back: {exc}", "key_error": False, "not_implemented": False},
                   "refused": [], "seconds": 0.0})


_main()
