"""Exercise 1: the answer distribution of eq. (1) [`eqn:A_dist`] and its empirical version.

Inputs are drawn afresh at every run (sizes, labels and probabilities); the right answers
are computed inline from eq. (1) with NumPy.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .report import (CheckResult, ExerciseCheckFailed, _as_float_array, _call, _eps_of, _Grader,
                     _rng, _student)

__all__ = ["check_answer_distribution", "check_ex1_empirical_distribution",
           "check_empirical_distribution"]


_HINT_EQ1 = ("re-read eq. (1) [`eqn:A_dist`] at the top of the notebook and divide it by s; "
             "a worker is reliable with probability p and guesses among all K labels "
             "otherwise; label c is stored at index c - 1.")


def check_answer_distribution(student_fn: Callable, *, rng: Any = None) -> CheckResult:
    """Exercise 1a: ``student_fn(p, q, g, h, K)`` -> the K probabilities of eq. (1).

    The vector holds P(A_ij = c | answered) for c = 1..K at index c - 1 (eq. (1)
    divided by s); a list, a 1-D array or a (K, 1) column are accepted. Inputs are drawn
    at random (``rng``; fresh entropy by default) until every typical mistake has been
    told apart. Diagnoses: q and 1 - q swapped, labels shifted by one, spammer mass
    (1-p)/K left off g and h, spread over the K - 2 wrong labels only, or not divided by
    K, and g and h swapped.
    """
    ex = "ex1 answer distribution (eq. (1))"
    gen = _rng(rng)
    grader = _Grader(ex, _HINT_EQ1)
    with _student(ex, student_fn) as student:
        return _check_1a(ex, gen, grader, student)


def _check_1a(ex: str, gen: np.random.Generator, grader: _Grader, student: Any) -> CheckResult:
    for i in range(40):
        K = int(gen.integers(3, 8))
        g, h = (int(x) + 1 for x in gen.choice(K, 2, replace=False))
        p = float(np.round(gen.uniform(0.05, 0.95), 3)) if i else 1.0
        q = float(np.round(gen.uniform(0.55, 0.95), 3))
        case = f"p={p}, q={q}, (g, h)=({g}, {h}), K={K}"
        try:
            got = _as_float_array(
                ex, case, _call(ex, student, case, p, q, g, h, K), (K,), _HINT_EQ1,
                {(K + 1,): "add an entry for label 0 ('not answered'); the vector covers "
                 "labels 1..K only"})
        except ExerciseCheckFailed:
            if grader.failed:
                continue
            raise
        c = np.arange(1, K + 1)
        top = p * (q * (c == g) + (1 - q) * (c == h))
        ref = top + (1 - p) / K                                    # eq. (1) / s
        swapped_q = p * ((1 - q) * (c == g) + q * (c == h)) + (1 - p) / K
        swapped_gh = p * (q * (c == h) + (1 - q) * (c == g)) + (1 - p) / K
        others = (c != g) & (c != h)
        variants = [
            ("swap q and 1 - q (q is the weight of the ground truth g)", swapped_q),
            ("swap g and h", swapped_gh),
            ("store label c at index c instead of c - 1 (labels are 1..K)", np.roll(ref, 1)),
            ("store label c at index c - 2 (off by one in the label index)", np.roll(ref, -1)),
            ("leave the spammer share (1-p)/K off the labels g and h",
             top + (1 - p) / K * others),
            ("spread the spammer share over the K - 2 wrong labels only (a spammer "
             "guesses uniformly among all K labels)", top + (1 - p) / (K - 2) * others),
            ("give every label the spammer share 1 - p instead of (1 - p)/K (a spammer "
             "picks each of the K labels with probability 1/K)", top + (1 - p)),
        ]
        total = float(np.sum(got))
        note = (f"Your probabilities sum to {total:.4g}, not 1."
                if abs(total - 1) > 32 * max(_eps_of(got), 1e-11) else "")
        grader.compare(case, got, ref, variants, note=note)
        if i >= 5 and grader.separated:
            break
    return grader.finish(CheckResult("ex1 answer distribution", grader.n_cases))


def _random_responses(gen: np.random.Generator, n: int, m: int, K: int,
                      s: float) -> np.ndarray:
    """A dense response matrix of the top-two model with random parameters (eq. (1))."""
    p = gen.uniform(0, 1, n)
    q = gen.uniform(0.5, 1, m)
    gh = np.array([gen.choice(K, 2, replace=False) + 1 for _ in range(m)])
    u = gen.random((n, m))
    reliable = u < p[:, None]
    pick_g = gen.random((n, m)) < q[None, :]
    truthful = np.where(pick_g, gh[None, :, 0], gh[None, :, 1])
    guess = gen.integers(1, K + 1, (n, m))
    A = np.where(reliable, truthful, guess)
    return np.where(gen.random((n, m)) < s, A, 0)


def check_ex1_empirical_distribution(student_fn: Callable, *, rng: Any = None) -> CheckResult:
    """Exercise 1b: ``student_fn(A, K)`` -> each task's empirical answer distribution.

    Called on response matrices drawn afresh (random sizes, K and answer rate; a task
    may have a single answer, never none). Row j of the (n_tasks, K) result holds the
    fraction of task j's *answers* (entries != 0) equal to each label 1..K. Diagnoses:
    dividing by the number of workers (counting unanswered entries), raw counts, workers
    in rows, a column for label 0, labels shifted by one.
    """
    ex = "ex1 empirical answer distribution"
    gen = _rng(rng)
    hint = ("row j is the histogram of task j's answers (column j of A, zeros left out) "
            "divided by the number of answers, so each row sums to 1; compare it with the "
            "average of eq. (1) over the workers who answered.")
    grader = _Grader(ex, hint)
    with _student(ex, student_fn) as student:
        return _check_1b(ex, gen, grader, hint, student)


def _check_1b(ex: str, gen: np.random.Generator, grader: _Grader, hint: str,
              student: Any) -> CheckResult:
    for i in range(12):
        n, m = int(gen.integers(5, 30)), int(gen.integers(3, 12))
        while m == n:
            m = int(gen.integers(3, 12))
        K = int(gen.integers(3, 7))
        A = _random_responses(gen, n, m, K, float(gen.uniform(0.3, 0.9)))
        empty = (A > 0).sum(axis=0) == 0
        A[0, empty] = gen.integers(1, K + 1, int(empty.sum()))      # every task answered
        case = f"A of shape {A.shape} (workers x tasks), K={K}"
        try:
            got = _as_float_array(ex, case, _call(ex, student, case, A.copy(), K), (m, K),
                                  hint, {
                (K, m): "put labels in rows and tasks in columns (return shape (n_tasks, K))",
                (n, K): "compute one histogram per worker (row of A) instead of per task "
                        "(column of A)",
                (m, K + 1): "keep a column for label 0 ('not answered'); leave zeros out"})
        except ExerciseCheckFailed:
            if grader.failed:
                continue
            raise
        counts = np.stack([(A == c).sum(axis=0) for c in range(1, K + 1)], axis=1).astype(float)
        ref = counts / counts.sum(axis=1, keepdims=True)
        variants = [
            ("divide by the number of workers n (unanswered entries counted) instead of "
             "the number of answers", counts / n),
            ("return raw counts instead of fractions", counts),
            ("store label c at index c instead of c - 1 (labels are 1..K)",
             np.roll(ref, 1, axis=1)),
            ("store label c at index c - 2 (off by one in the label index)",
             np.roll(ref, -1, axis=1)),
        ]
        grader.compare(case, got, ref, variants)
        if i >= 2 and grader.separated:
            break
    return grader.finish(CheckResult("ex1 empirical distribution", grader.n_cases))


check_empirical_distribution = check_ex1_empirical_distribution
