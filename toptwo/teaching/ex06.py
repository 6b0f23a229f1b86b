"""Exercise 6: how the queries per task scale with the hammer fraction (Sec. 5).

6a and 6b are checked on inputs drawn afresh at every run: random power laws for the fit,
random error curves (grid, replicates, curve shape) for the scan.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .report import (CheckResult, ExerciseCheckFailed, _as_float_scalar, _call, _close, _Grader,
                     _join, _rng, _student, _tolerance)

__all__ = ["check_fit_exponent", "check_ns_needed", "check_scaling_exponents",
           "MV_EXPONENT_RANGE", "TT2_EXPONENT_RANGE", "MIN_EXPONENT_GAP"]


def check_fit_exponent(student_fn: Callable, *, rng: Any = None) -> CheckResult:
    """Exercise 6a: ``student_fn(alphas, ns)`` -> b in the power law ns = c alpha^b.

    The least-squares slope of log(ns) against log(alpha), on random power laws with
    noise (random number of points, alphas, c and b). Diagnoses: the intercept returned,
    the sign flipped, logs left out on one axis, the regression reversed (log alpha on
    log ns).
    """
    ex = "ex6 scaling exponent fit"
    gen = _rng(rng)
    hint = ("a power law ns = c alpha^b is a straight line on log-log axes; b is the slope "
            "of that line, fitted by least squares.")
    grader = _Grader(ex, hint)
    with _student(ex, student_fn) as student:
        _check_6a(ex, gen, grader, student, hint)
    return grader.finish(CheckResult("ex6 exponent fit", grader.n_cases))


def _check_6a(ex: str, gen: np.random.Generator, grader: _Grader, student: Any,
              hint: str) -> None:
    for _ in range(4):
        k = int(gen.integers(4, 8))
        a = np.sort(np.round(gen.uniform(0.05, 0.95, k), 3))
        b, c = float(gen.uniform(-2.5, -0.5)), float(gen.uniform(2, 20))
        ns = np.round(c * a ** b * np.exp(0.15 * gen.standard_normal(k)), 3)
        case = f"alphas={a.tolist()}, ns={ns.tolist()}"
        try:
            got = _as_float_scalar(ex, case, _call(ex, student, case, a.copy(), ns.copy()),
                                   "the exponent b", hint)
        except ExerciseCheckFailed:
            if grader.failed:
                continue
            raise
        la, ln = np.log(a), np.log(ns)
        slope = float(np.sum((la - la.mean()) * (ln - ln.mean())) / np.sum((la - la.mean()) ** 2))
        icpt = float(ln.mean() - slope * la.mean())

        def fit(x: np.ndarray, y: np.ndarray) -> float:
            return float(np.sum((x - x.mean()) * (y - y.mean())) / np.sum((x - x.mean()) ** 2))

        variants = [
            ("return the intercept log(c) instead of the slope", icpt),
            ("flip the sign (report b, not -b: ns grows as alpha shrinks, so b < 0)", -slope),
            ("fit ns (without log) against log(alpha)", fit(la, ns)),
            ("fit log(ns) against alpha (without log)", fit(a, ln)),
            ("regress log(alpha) on log(ns) (the reversed regression)", fit(ln, la)),
            ("fit ns against 1/alpha; use logs on both axes", fit(1 / a, ns)),
            ("take log10 of alpha but the natural log of ns (use the same log on both axes; "
             "the slope does not depend on the base then)", fit(np.log10(a), ln)),
            ("take the natural log of alpha but log10 of ns (use the same log on both "
             "axes; the slope does not depend on the base then)", fit(la, np.log10(ns))),
        ]
        grader.compare(case, got, slope, variants, rtol=1e-6, atol=1e-6)


def check_ns_needed(student_fn: Callable, *, rng: Any = None) -> CheckResult:  # noqa: C901
    """Exercise 6b: ``ns_needed(method, alpha, rng)`` scans n s and interpolates.

    The student's function is run with the notebook's ``pair_error``, ``NS_GRID``,
    ``REPS``, ``TARGET`` and ``N_WORKERS`` replaced (in the function's globals, restored
    afterwards) by random test error curves whose replicates differ, a random geometric
    grid and a random number of replicates, so the exact answer is known to the check
    only: the average over ``REPS`` replicates on ``NS_GRID`` first falls to ``TARGET``
    between two grid points, and the answer interpolates linearly in log(n s).
    Diagnoses: no interpolation (the first grid point at or below the target, or the last
    one above it), linear instead of log-linear interpolation, s = ns / n returned
    instead of n s, a 20% or 5% target, one replicate (or a fixed number) instead of the
    average of REPS, numbers returned without calling ``pair_error`` (hard-coded).
    """
    ex = "ex6 queries per task for 10% error"
    hint = ("scan NS_GRID in order, average REPS calls of pair_error at each point, stop at "
            "the first average <= TARGET and interpolate between that point and the one "
            "before it on a log scale of n s; return n s itself.")
    if not isinstance(getattr(student_fn, "__globals__", None), dict):
        raise ExerciseCheckFailed(ex, "your ns_needed", "pass your Python function ns_needed "
                                  f"itself; got {type(student_fn).__name__} instead.")
    gen = _rng(rng)
    target = 0.1
    reps = int(gen.integers(2, 4))
    n_workers = int(gen.integers(400, 900))
    grid = np.geomspace(float(gen.uniform(4, 10)), float(n_workers), int(gen.integers(12, 20)))
    d = float(gen.uniform(0.02, 0.04))
    offsets = d * np.array([1.0, -1.0, 0.5])[:reps]    # replicates differ
    curves: dict = {}
    calls: dict = {}

    def curve(method: str, alpha: float) -> tuple[float, float]:
        key = (method, float(alpha))
        if key not in curves:          # the error crosses TARGET well inside the grid
            beta = float(gen.uniform(1.2, 2.0))
            crossing = float(np.exp(gen.uniform(np.log(grid[3]), np.log(grid[-4]))))
            curves[key] = (crossing * target ** (1 / beta), beta)
        return curves[key]

    def error(method: str, alpha: float, ns: float, rep: int) -> float:
        ns0, beta = curve(method, alpha)
        return float(min(1.0, (ns0 / ns) ** beta) + offsets[rep % reps])

    def fake_pair_error(method: Any, alpha: Any, ns: Any, *_rng: Any) -> float:
        if len(calls) > 10_000:
            raise RuntimeError("too many calls")
        method, alpha, ns = str(method), float(alpha), float(ns)
        key = (method, float(alpha), float(ns))
        rep = calls.get(key, 0)
        calls[key] = rep + 1
        return error(method, float(alpha), float(ns), rep)

    def scan(method: str, alpha: float, *, tgt: float = target, use: tuple | None = None,
             interpolate: str = "log", mean: str = "arithmetic") -> float:
        previous = None
        for ns in grid:
            errs = np.array([error(method, alpha, ns, r) for r in (use or range(reps))])
            with np.errstate(divide="ignore", invalid="ignore"):
                err = float(np.mean(errs) if mean == "arithmetic"
                            else np.exp(np.mean(np.log(errs))))
            if err <= tgt:
                if previous is None or interpolate == "none":
                    return float(ns)
                ns0, err0 = previous
                if interpolate == "previous":
                    return float(ns0)
                t = (err0 - tgt) / (err0 - err)
                if interpolate == "linear":
                    return float(ns0 + t * (ns - ns0))
                return float(np.exp(np.log(ns0) + t * np.log(ns / ns0)))
            previous = (ns, err)
        return float("nan")

    # the test curves stay here: pair_error runs in this process, called by name from the
    # student's function (in its own process), whose globals NS_GRID, REPS, TARGET and
    # N_WORKERS are replaced by the test values there
    patch = {"NS_GRID": grid.copy(), "TARGET": target, "REPS": reps, "N_WORKERS": n_workers}
    failure: tuple | None = None
    mismatched: set[str] = set()
    cases = [("mv", float(np.round(gen.uniform(0.2, 0.4), 2))),
             ("tt2", float(np.round(gen.uniform(0.2, 0.4), 2))),
             ("mv", float(np.round(gen.uniform(0.5, 0.8), 2)))]
    with _student(ex, student_fn, rpc={"pair_error": fake_pair_error},
                  patch_globals=patch) as student:
        for method, alpha in cases:
            case = (f"ns_needed({method!r}, {alpha}, rng) on a test error curve "
                    f"({len(grid)}-point grid, REPS={reps})")
            calls.clear()
            try:
                got = _as_float_scalar(ex, case, _call(ex, student, case, method, alpha,
                                                       np.random.default_rng(0)),
                                       "the n s needed", hint)
            except ExerciseCheckFailed:
                if failure is not None:
                    continue
                raise
            tol = _tolerance(got, rtol=1e-6, atol=1e-9)
            ref = scan(method, alpha)
            variants = [
                ("return a value without calling pair_error (hard-coded numbers cannot "
                 "follow the error curve)", got if not calls else None),
                ("return the first grid point at or below the target without interpolating",
                 scan(method, alpha, interpolate="none")),
                ("return the last grid point above the target without interpolating",
                 scan(method, alpha, interpolate="previous")),
                ("interpolate linearly in n s instead of in log(n s)",
                 scan(method, alpha, interpolate="linear")),
                ("return s = ns / n instead of the queries per task n s", ref / n_workers),
                ("use a 20% target instead of TARGET = 10%", scan(method, alpha, tgt=0.2)),
                ("use a 5% target instead of TARGET = 10%", scan(method, alpha, tgt=0.05)),
                ("use one replicate per grid point instead of the average of REPS",
                 scan(method, alpha, use=(0,))),
                ("use two replicates instead of REPS", scan(method, alpha, use=(0, 1))
                 if reps != 2 else None),
                ("average the REPS replicates with a geometric mean instead of the "
                 "arithmetic mean", scan(method, alpha, mean="geometric")),
            ]
            matches = [d for d, v in variants if v is not None and _close(got, v, **tol)]
            mismatched |= {d for d, v in variants
                           if v is not None and not _close(got, v, **tol)}
            if failure is None and not _close(got, ref, **tol):
                failure = (case, got, matches)
    if failure is not None:
        case, got, matches = failure
        consistent = [d for d in matches if d not in mismatched]
        raise ExerciseCheckFailed(ex, case, "wrong n s.", got=got, hint=hint,
                                  diagnosis=_join(consistent or matches))
    return CheckResult("ex6 queries per task", len(cases))


#: Ranges for the two exponents at the notebook's size (n = 600 workers, m = 150 tasks,
#: K = 3, q in (0.65, 0.75], alpha in {0.2, 0.3, 0.45, 0.7}, 2 replicates per point).
#: Seeds 0-19 gave b_MV in [-2.24, -1.98] and b_TopTwo2 in [-1.04, -0.80]; the ranges
#: leave a wide margin around those. Sec. 5 predicts -2 and -1.
MV_EXPONENT_RANGE = (-2.8, -1.4)
TT2_EXPONENT_RANGE = (-1.4, -0.5)
MIN_EXPONENT_GAP = 0.5


def check_scaling_exponents(mv_exponent: float, tt2_exponent: float) -> CheckResult:
    """Exercise 6b: exponents b of n s ~ alpha^b for majority vote and TopTwo2 (Sec. 5).

    Sec. 5: in the spammer-hammer model majority vote needs n s = Theta(alpha^-2 log(1/eps))
    and the spectral algorithm n s = Theta(alpha^-1 log(1/eps)). At classroom sizes only
    coarse statements are robust, so the check asks: majority vote's exponent lies in
    ``MV_EXPONENT_RANGE``, TopTwo2's in ``TT2_EXPONENT_RANGE``, and majority vote's is
    steeper by at least ``MIN_EXPONENT_GAP``.
    """
    ex = "ex6 scaling exponents (Sec. 5)"
    mv, tt = float(mv_exponent), float(tt2_exponent)
    case = f"majority vote b={mv:.3g}, TopTwo2 b={tt:.3g}"
    hint = ("Sec. 5: majority vote needs n s ~ 1/alpha^2, TopTwo ~ 1/alpha, so b_MV ~ -2 "
            "and b_TopTwo2 ~ -1 (b is the slope of log(ns) against log(alpha)).")
    lo, hi = MV_EXPONENT_RANGE
    tlo, thi = TT2_EXPONENT_RANGE
    if mv > 0 or tt > 0:
        raise ExerciseCheckFailed(ex, case, "an exponent is positive: fewer hammers cannot "
                                  "need fewer queries.", hint=hint, diagnosis=(
                                      "report 2 and 1 for 1/alpha^2 and 1/alpha (b is the "
                                      "exponent of alpha itself, so it is negative), or fit "
                                      "against 1/alpha"))
    if lo <= tt <= hi and tlo <= mv <= thi:
        raise ExerciseCheckFailed(ex, case, "the exponents look swapped.", hint=hint,
                                  diagnosis="pass the two methods' exponents in the wrong order")
    if not lo <= mv <= hi:
        raise ExerciseCheckFailed(ex, case, f"majority vote's exponent should lie in "
                                  f"[{lo}, {hi}].", hint=hint + " Check the error target "
                                  "(10%) and that n s covers the crossing for every alpha.")
    if not tlo <= tt <= thi:
        raise ExerciseCheckFailed(ex, case, f"TopTwo2's exponent should lie in [{tlo}, {thi}].",
                                  hint=hint + " Check the error target (10%) and that n s "
                                  "covers the crossing for every alpha.")
    if not mv <= tt - MIN_EXPONENT_GAP:
        raise ExerciseCheckFailed(ex, case, f"majority vote's exponent should be steeper by at "
                                  f"least {MIN_EXPONENT_GAP}.", hint=hint)
    return CheckResult("ex6 scaling exponents", 1)
