"""Exercise 4: the reliability estimator of eq. (5) [`eqn:hatpi`] and its unbiasedness.

Inputs are drawn afresh at every run. In 4b the student's simulation receives only a
function that draws responses of a hidden model, the true top two and a correct eq. (5)
estimator; the true reliabilities stay inside the check.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .report import (CheckResult, ExerciseCheckFailed, _as_float_array, _call, _close,
                     _Grader, _rng, _student, _tolerance)

__all__ = ["check_reliability_estimator", "check_unbiased_simulation"]


_HINT_EQ5 = ("compare your code with eq. (5) [`eqn:hatpi`] in the handout term by term: "
             "a hit is an answer equal to g_j or h_j, `rate` is s (1 - s_1), and the "
             "denominator is m s (1 - s_1), the expected number of answers in A2.")


def _draw_dense(gen: np.random.Generator, p: np.ndarray, q: np.ndarray, top: np.ndarray,
                K: int, rate: float) -> np.ndarray:
    """Responses of the top-two model, eq. (1), dense (0 = not answered)."""
    n, m = p.size, q.size
    reliable = gen.random((n, m)) < p[:, None]
    truthful = np.where(gen.random((n, m)) < q[None, :], top[None, :, 0], top[None, :, 1])
    A = np.where(reliable, truthful, gen.integers(1, K + 1, (n, m)))
    return np.where(gen.random((n, m)) < rate, A, 0)


def check_reliability_estimator(student_fn: Callable, *, rng: Any = None) -> CheckResult:
    """Exercise 4a: ``student_fn(A2, top_two, rate, K)`` -> p_hat (n_workers,), eq. (5).

    ``A2`` is a dense (n_workers, n_tasks) response matrix drawn afresh, ``top_two`` the
    (n_tasks, 2) array of (g_j, h_j) and ``rate`` = s (1 - s_1). The denominator
    m s (1 - s_1) may also be estimated from the data as nnz(A2)/n (the average number
    of answers per worker, what ``estimate_reliability(normalization="paper")`` does).
    Diagnoses: dividing by K instead of K - 2, factor 1/(K-2) or K/(K-1), the -2/K left
    out or written -1/K, only hits on g counted, not dividing by the rate, dividing by n
    instead of m, dividing by each worker's own number of answers.
    """
    ex = "ex4 reliability estimator (eq. (5))"
    gen = _rng(rng)
    grader = _Grader(ex, _HINT_EQ5)
    with _student(ex, student_fn) as student:
        _check_4a(ex, gen, grader, student)
    return grader.finish(CheckResult("ex4 reliability estimator", grader.n_cases))


def _check_4a(ex: str, gen: np.random.Generator, grader: _Grader, student: Any) -> None:
    for i in range(8):
        K = int(gen.integers(4, 7)) if i % 2 == 0 else 3 + int(gen.integers(0, 2)) * 2
        n, m = int(gen.integers(4, 12)), int(gen.integers(20, 60))
        rate = float(np.round(gen.uniform(0.2, 0.7), 3))
        top = np.array([gen.choice(K, 2, replace=False) + 1 for _ in range(m)])
        A2 = _draw_dense(gen, gen.uniform(0, 1, n), gen.uniform(0.5, 1, m), top, K, rate)
        case = f"A2 of shape {A2.shape}, K={K}, rate=s(1-s_1)={rate}"
        try:
            got = _as_float_array(ex, case, _call(ex, student, case, A2.copy(), top.copy(),
                                                  rate, K), (n,), _HINT_EQ5, {
                (m,): "compute one value per task (a column of A2) instead of per worker (a "
                      "row of A2): sum each worker's hits over the tasks, axis 1"})
        except ExerciseCheckFailed:
            if grader.failed:
                continue
            raise
        answered = A2 > 0
        hit_g = (A2 == top[None, :, 0]) & answered
        hits = (hit_g | ((A2 == top[None, :, 1]) & answered)).sum(axis=1).astype(float)
        hits_g = hit_g.sum(axis=1).astype(float)
        frac = hits / (m * rate)
        ref = K / (K - 2) * (frac - 2 / K)                                     # eq. (5)
        ref_nnz = K / (K - 2) * (hits / (answered.sum() / n) - 2 / K)          # same, m s(1-s1) estimated
        if _close(got, ref_nnz) and not _close(got, ref):
            ref = ref_nnz
        with np.errstate(divide="ignore", invalid="ignore"):
            per_worker = K / (K - 2) * (hits / answered.sum(axis=1) - 2 / K)
        variants = [
            ("divide by K instead of K - 2 (factor K/K = 1)", frac - 2 / K),
            ("use the factor 1/(K - 2) instead of K/(K - 2)", (frac - 2 / K) / (K - 2)),
            ("use the factor K/(K - 1) instead of K/(K - 2)", K / (K - 1) * (frac - 2 / K)),
            ("leave out the -2/K (the spammers' chance of hitting the top two)",
             K / (K - 2) * frac),
            ("subtract 1/K instead of 2/K (two labels can be hit by chance)",
             K / (K - 2) * (frac - 1 / K)),
            ("count only answers equal to g_j (h_j counts as a hit too)",
             K / (K - 2) * (hits_g / (m * rate) - 2 / K)),
            ("divide the hits by m instead of m s (1 - s_1)", K / (K - 2) * (hits / m - 2 / K)),
            ("divide the hits by n s (1 - s_1) instead of m s (1 - s_1)",
             K / (K - 2) * (hits / (n * rate) - 2 / K)),
            ("divide by each worker's own number of answers (a fine estimator, but eq. (5) "
             "divides by m s (1 - s_1))", per_worker),
        ]
        grader.compare(case, got, ref, variants)
        if i >= 2 and grader.separated:
            break


def check_unbiased_simulation(student_fn: Callable, *, rng: Any = None) -> CheckResult:
    """Exercise 4b: ``student_fn(draw, estimate, top_two, K, s, s1, R, rng)`` -> mean p_hat.

    The check draws a hidden model (random sizes, K, reliabilities p, s and s_1) and
    passes ``draw(rng)`` (a fresh response matrix of that model at rate s, a
    ``toptwo.Responses``), a correct eq. (5) ``estimate(A2, top_two, rate, K)`` (so a
    mistake in 4a does not cost 4b), the true top two, K, s, s_1, R and a generator. The
    student's function must draw R replicates, split each with ``toptwo.split_entries``,
    apply ``estimate`` to the dense held-out half A^2 with rate s (1 - s_1) and return the
    average over the replicates. p never reaches the student's code.

    Since hits_i ~ Binomial(m, sigma_i) with sigma_i = s(1-s_1)(p_i + 2(1-p_i)/K), one
    p_hat_i has standard deviation K/(K-2) sqrt(sigma_i(1-sigma_i)/m)/(s(1-s_1)); the
    average must lie within 5 of those over sqrt(R) of p_i (normal tail 6e-7 per worker).
    Diagnoses (from what the function passes to ``estimate`` and how often it draws):
    another number of replicates than R, the rate s (or s s_1) instead of s (1 - s_1),
    the stage-1 half A^1 or the unsplit matrix, not the true top two, and an average that
    is not the mean of the estimates.
    """
    from ..model import TopTwoModel
    ex = "ex4 unbiasedness by simulation (Lemma 1)"
    gen = _rng(rng)
    n, m, K = int(gen.integers(5, 10)), int(gen.integers(150, 250)), int(gen.integers(3, 6))
    s = float(np.round(gen.uniform(0.5, 0.8), 2))
    s1 = float(gen.choice([0.2, 0.25, 0.3]))
    R = int(gen.integers(150, 260))
    model = TopTwoModel.random(n, m, K, reliability_range=(0.0, 1.0), rng=gen)
    top = model.top_two.copy()
    rate2 = s * (1 - s1)
    case = f"a hidden model with {n} workers, m={m}, K={K}, s={s}, s_1={s1}, R={R}"
    hint = ("draw R fresh response matrices with draw(rng), split each with "
            "toptwo.split_entries(A, s1, rng) into (A1, A2), apply estimate to the dense "
            "held-out half A2 with the true top two and rate s (1 - s_1), and average.")
    draws: list[int] = []
    seen: dict[str, Any] = {"rates": set(), "fill": [], "top_ok": True, "estimates": []}
    draw_gen = np.random.default_rng(gen.integers(2 ** 32))

    # draw and estimate run here, in the check's process: the student's function (in its
    # own process) calls them by name, and the hidden model never reaches it
    def draw(*_rng: Any) -> Any:
        draws.append(1)
        if len(draws) > 4 * R + 100:
            raise RuntimeError("too many draws")
        return model.sample(s, rng=draw_gen)

    def estimate(A2: Any, top_two: Any, rate: Any, K_: Any) -> np.ndarray:
        A2 = np.asarray(A2, dtype=float)
        top_two = np.asarray(top_two)
        rate, K_ = float(rate), int(K_)
        if A2.ndim != 2 or A2.shape != (n, m):
            raise ValueError(f"estimate expects the dense {n} x {m} matrix A2; got shape "
                             f"{A2.shape}")
        seen["rates"].add(round(rate, 12))
        seen["fill"].append(float((A2 > 0).mean()))
        if top_two.shape != top.shape or not np.array_equal(top_two, top):
            seen["top_ok"] = False
            top_two = top_two.reshape(top.shape) if top_two.size == top.size else top
        answered = A2 > 0
        hits = (((A2 == top_two[None, :, 0]) | (A2 == top_two[None, :, 1]))
                & answered).sum(axis=1)
        value = K_ / (K_ - 2) * (hits / (A2.shape[1] * rate) - 2 / K_)          # eq. (5)
        seen["estimates"].append(value)
        return value

    with _student(ex, student_fn, rpc={"draw": draw, "estimate": estimate},
                  preload=("toptwo",)) as student:
        got = _call(ex, student, case, ("toptwo-rpc", "draw"), ("toptwo-rpc", "estimate"),
                    top.copy(), K, s, s1, R, np.random.default_rng(gen.integers(2 ** 32)))

    def fail(problem: str, diagnosis: str | None = None) -> None:
        raise ExerciseCheckFailed(ex, case, problem, got=got, hint=hint, diagnosis=diagnosis)

    if not draws:
        fail(f"your function drew no response matrix; it should draw R = {R}.",
             "return numbers without simulating (hard-coded or copied values, or the true "
             "p of another model, cannot follow a model drawn afresh)")
    if len(draws) != R:
        fail(f"your function drew {len(draws)} response matrices; it should draw R = {R}.",
             "use a fixed number of replicates (or one matrix for all) instead of the "
             "argument R, a fresh draw(rng) per replicate")
    got = _as_float_array(ex, case, got, (n,), hint)
    rates = seen["rates"]
    if rates and rates != {round(rate2, 12)}:
        r = next(iter(rates))
        diag = ("pass the rate s instead of s (1 - s_1) (A^2 keeps each answer with "
                "probability 1 - s_1)" if abs(r - s) < 1e-9 else
                "pass the rate s s_1 of A^1 instead of s (1 - s_1)" if abs(r - s * s1) < 1e-9
                else None)
        fail(f"your function passes rate={r:.4g} to estimate; the held-out half A^2 has "
             "answer rate s (1 - s_1).", diag)
    if not seen["top_ok"]:
        fail("your function passes another top_two to estimate than the true one it was "
             "given.", "estimate the top two instead of using the true (g, h) given to you")
    fill = float(np.mean(seen["fill"])) if seen["fill"] else float("nan")
    if seen["fill"] and abs(fill - rate2) > 0.25 * s * min(s1, 1 - s1):
        diag = ("apply eq. (5) to the stage-1 half A^1 instead of the held-out half A^2 "
                "(toptwo.split_entries returns (A^1, A^2); A^1 has answer rate s s_1)"
                if abs(fill - s * s1) < abs(fill - s) else
                "apply eq. (5) to the whole response matrix instead of the held-out half A^2")
        fail("the matrices passed to estimate have the wrong share of answers for A^2.", diag)
    if len(seen["fill"]) != R:
        fail(f"your function called estimate {len(seen['fill'])} times for R = {R} "
             "replicates.", "use another estimator than the `estimate` passed in (your 4a "
             "function, say), or not call it once per replicate")
    tol = _tolerance(got, rtol=1e-9, atol=1e-9)
    estimates = np.array(seen["estimates"])
    if not _close(got, estimates.mean(axis=0), **tol):
        diag = ("return the median of the R estimates instead of their mean (Lemma 1 is "
                "about the expectation: average them)"
                if _close(got, np.median(estimates, axis=0), **tol) else
                "return the last estimate instead of the mean of the R estimates"
                if _close(got, estimates[-1], **tol) else
                "return something other than the mean of the R estimates returned by "
                "estimate")
        fail("your function does not return the average of the R estimates it got from "
             "estimate.", diag)
    p = model.reliability
    sigma = rate2 * (p + 2 * (1 - p) / K)
    sd = K / (K - 2) * np.sqrt(sigma * (1 - sigma) / m) / rate2
    z = np.abs(got - p) / (sd / np.sqrt(R))
    if (z > 5).any():
        i = int(np.argmax(z))
        fail(f"the average p_hat of worker {i} is {z[i]:.1f} standard errors away from the "
             f"worker's reliability (at most 5 expected with R = {R} replicates).",
             "return something other than the mean of the R estimates (e.g. the last "
             "estimate, or a median)" if len(seen["fill"]) == R else None)
    return CheckResult("ex4 unbiased simulation", n)
