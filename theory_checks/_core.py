"""Records, failures and the registry shared by every check.

A *check* is a function that raises :class:`ClaimFailed` when the claim it
verifies does not hold and returns a :class:`CheckRecord` when it does.
Checks are registered, in definition order, in :data:`CHECKS`.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import sympy as sp

__all__ = [
    "CHECKS",
    "CheckRecord",
    "ClaimFailed",
    "check",
    "require_zero",
    "require",
    "pinned_blas",
    "single_threaded",
]


class ClaimFailed(AssertionError):
    """A claim did not hold; the message says what differed and where."""


@dataclass(frozen=True)
class CheckRecord:
    """What one successful check established.

    Attributes
    ----------
    name
        Registry key, e.g. ``"proposition1_exhaustive"``.
    statement
        The claim, in words and formulas, as verified.
    reference
        Paper location: equation number and LaTeX label, e.g. ``"eq. (2) [eqn:delta_r]"``.
    method
        How it was decided, e.g. ``"expand(lhs-rhs)==0, exhaustive K=3..8"``.
    scope
        Which concrete values stand in for symbols (or ``"symbolic"``).
    seconds
        Wall-clock time of the check.
    note
        Where the paper is imprecise or false and the correct statement, or ``""``.
    """

    name: str
    statement: str
    reference: str
    method: str
    scope: str
    seconds: float
    note: str = ""


#: Ordered registry ``name -> check function``; filled by :func:`check`.
CHECKS: dict[str, Callable[..., CheckRecord]] = {}


def check(
    name: str, *, statement: str, reference: str, method: str, scope: str
) -> Callable[[Callable[..., Any]], Callable[..., CheckRecord]]:
    """Register a check and wrap it so it returns a :class:`CheckRecord`.

    The wrapped function may return ``None`` or a ``dict`` with keys ``note``
    and/or ``scope`` (overriding the registered scope, e.g. when arguments
    change which K are covered).
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., CheckRecord]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> CheckRecord:
            t0 = time.perf_counter()
            out = fn(*args, **kwargs) or {}
            seconds = time.perf_counter() - t0
            return CheckRecord(
                name=name,
                statement=statement,
                reference=reference,
                method=method,
                scope=out.get("scope", scope),
                seconds=seconds,
                note=out.get("note", ""),
            )

        if name in CHECKS:
            raise ValueError(f"duplicate check name {name!r}")
        CHECKS[name] = wrapper
        return wrapper

    return decorate


def require_zero(expr: sp.Expr, what: str) -> None:
    """Raise :class:`ClaimFailed` unless ``expr`` reduces to 0.

    ``expr`` is ``lhs - rhs``; it is reduced with ``sp.expand`` (decides
    polynomial identities) and, if that leaves a residual, ``sp.cancel``
    (decides rational-function identities: numerator and denominator become
    expanded coprime polynomials).
    """
    residual = sp.expand(expr)
    if residual != 0:
        residual = sp.cancel(residual)
    if residual != 0:
        raise ClaimFailed(f"{what}: lhs - rhs = {residual} (expected 0)")


def require(condition: bool, what: str) -> None:
    """Raise :class:`ClaimFailed` with message ``what`` unless ``condition``."""
    if not condition:
        raise ClaimFailed(what)


def pinned_blas() -> Any:
    """A context with one BLAS thread (threadpoolctl): the Monte-Carlo checks run their dense products on a
    shared 2-core machine, where BLAS's own threads only oversubscribe it. A no-op without threadpoolctl."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn (the test extra)
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1)


def single_threaded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``fn`` under :func:`pinned_blas`."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with pinned_blas():
            return fn(*args, **kwargs)

    return wrapper


def pairs(K: int) -> Iterable[tuple[int, int]]:
    """All ordered top-two pairs ``(g, h)`` with ``g != h`` in ``[K]``."""
    return ((g, h) for g in range(1, K + 1) for h in range(1, K + 1) if g != h)
