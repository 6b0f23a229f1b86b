"""Exercise 1: the answer distribution of eq. (1) [`eqn:A_dist`] and its empirical version."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..model import label_distribution
from ..responses import as_responses
from .report import CheckResult, ExerciseCheckFailed, _as_float_array, _call, _Grader

__all__ = ["check_answer_distribution", "check_ex1_empirical_distribution",
           "check_empirical_distribution"]


_HINT_EQ1 = ("re-read eq. (1) [`eqn:A_dist`] at the top of the notebook and divide it by s; "
             "a worker is reliable with probability p and guesses among all K labels "
             "otherwise; label c is stored at index c - 1.")


def _mu(p: float, q: float, g: int, h: int, K: int) -> np.ndarray:
    return label_distribution(p, q, g, h, K)


def check_answer_distribution(student_fn: Callable) -> CheckResult:
    """Exercise 1a: ``student_fn(p, q, g, h, K)`` -> the K probabilities of eq. (1).

    The vector holds P(A_ij = c | answered) for c = 1..K at index c - 1 (eq. (1)
    divided by s). Diagnoses: q and 1 - q swapped, labels shifted by one (0-based
    labels), spammer mass (1-p)/K left off g and h, spammer mass spread over the K - 2
    wrong labels only, and g and h swapped.
    """
    ex = "ex1 answer distribution (eq. (1))"
    cases = [(0.8, 0.7, 2, 4, 5), (0.5, 0.9, 3, 1, 3), (0.3, 0.6, 1, 2, 4),
             (1.0, 0.75, 4, 2, 4), (0.0, 0.8, 2, 3, 3)]
    grader = _Grader(ex, _HINT_EQ1)
    for p, q, g, h, K in cases:
        case = f"p={p}, q={q}, (g, h)=({g}, {h}), K={K}"
        try:
            got = _as_float_array(
                ex, case, _call(ex, student_fn, case, p, q, g, h, K,
                                forbidden=("label_distribution", "label_probabilities")),
                (K,), _HINT_EQ1, {(K + 1,): "add an entry for label 0 ('not answered'); "
                                  "the vector covers labels 1..K only"})
        except ExerciseCheckFailed:
            if grader.failed:
                continue
            raise
        ref = _mu(p, q, g, h, K)
        c = np.arange(1, K + 1)
        no_spam_top = p * (q * (c == g) + (1 - q) * (c == h)) + (1 - p) / K * ((c != g) & (c != h))
        spread = p * (q * (c == g) + (1 - q) * (c == h)) + (1 - p) / (K - 2) * ((c != g) & (c != h))
        variants = [
            ("swap q and 1 - q (q is the weight of the ground truth g)", _mu(p, 1 - q, g, h, K)),
            ("swap g and h", _mu(p, q, h, g, K)),
            ("store label c at index c instead of c - 1 (labels are 1..K)", np.roll(ref, 1)),
            ("store label c at index c - 2 (off by one in the label index)", np.roll(ref, -1)),
            ("leave the spammer share (1-p)/K off the labels g and h", no_spam_top),
            ("spread the spammer share over the K - 2 wrong labels only (a spammer "
             "guesses uniformly among all K labels)", spread),
            ("give every label the spammer share 1 - p instead of (1 - p)/K (a spammer "
             "picks each of the K labels with probability 1/K)",
             ref - (1 - p) / K + (1 - p)),
        ]
        total = float(np.sum(got))
        note = (f"Your probabilities sum to {total:.4g}, not 1."
                if abs(total - 1) > 1e-9 else "")
        grader.compare(case, got, ref, variants, note=note)
    return grader.finish(CheckResult("ex1 answer distribution", len(cases)))


def _empirical_reference(A: np.ndarray, K: int) -> np.ndarray:
    R = as_responses(A, K, owner="teaching")
    counts = R.task_label_counts()
    return counts / counts.sum(axis=1, keepdims=True)


_EX1_A = np.array([
    [1, 3, 2, 4, 0],
    [1, 3, 0, 4, 2],
    [2, 3, 2, 3, 2],
    [1, 0, 3, 4, 2],
    [2, 4, 2, 0, 1],
    [1, 3, 1, 4, 2],
])


def check_ex1_empirical_distribution(student_fn_or_values: Any, A: Any = None,
                                     n_labels: int | None = None) -> CheckResult:
    """Exercise 1b: each task's empirical answer distribution, shape (n_tasks, K).

    Pass either the student's function ``f(A, K)`` (called on a literal 6 x 5 matrix and
    on a sample of the model) or the values it returned for ``A`` together with ``A``
    and ``n_labels``. Row j holds the fraction of task j's *answers* (entries != 0)
    equal to each label 1..K. Diagnoses: dividing by the number of workers (counting
    unanswered entries), raw counts, workers in rows, a column for label 0, labels
    shifted by one.
    """
    ex = "ex1 empirical answer distribution"
    if callable(student_fn_or_values):
        from ..model import TopTwoModel
        model = TopTwoModel.scenario("easy", n_workers=20, n_tasks=8, n_labels=4, rng=3)
        inputs = [(_EX1_A, 4), (model.sample(0.7, rng=4).toarray(), 4)]
    else:
        if A is None or n_labels is None:
            raise TypeError("check_ex1_empirical_distribution: pass the student's function, "
                            "or the values together with A=... and n_labels=....")
        inputs = [(np.asarray(A), int(n_labels))]
    hint = ("row j is the histogram of task j's answers (column j of A, zeros left out) "
            "divided by the number of answers, so each row sums to 1; compare it with the "
            "average of eq. (1) over the workers who answered.")
    grader = _Grader(ex, hint)
    for A_case, K in inputs:
        n, m = A_case.shape
        case = f"A of shape {A_case.shape} (workers x tasks), K={K}"
        if grader.failed:
            try:
                got = _as_float_array(ex, case, _call(ex, student_fn_or_values, case,
                                                      A_case.copy(), K), (m, K), hint)
            except ExerciseCheckFailed:
                continue
        elif callable(student_fn_or_values):
            got = _call(ex, student_fn_or_values, case, A_case.copy(), K,
                        forbidden=("task_label_counts", "label_distribution"))
        else:
            got = student_fn_or_values
        if not grader.failed:
            got = _as_float_array(ex, case, got, (m, K), hint, {
                (K, m): "put labels in rows and tasks in columns (return shape (n_tasks, K))",
                (n, K): "compute one histogram per worker (row of A) instead of per task "
                        "(column of A)",
                (m, K + 1): "keep a column for label 0 ('not answered'); leave zeros out",
            })
        ref = _empirical_reference(A_case, K)
        counts = ref * (A_case > 0).sum(axis=0)[:, None]
        variants = [
            ("divide by the number of workers n (unanswered entries counted) instead of "
             "the number of answers", counts / n),
            ("return raw counts instead of fractions", counts),
            ("store label c at index c instead of c - 1 (labels are 1..K)", np.roll(ref, 1, axis=1)),
            ("store label c at index c - 2 (off by one in the label index)", np.roll(ref, -1, axis=1)),
        ]
        grader.compare(case, got, ref, variants)
    return grader.finish(CheckResult("ex1 empirical distribution", len(inputs)))


check_empirical_distribution = check_ex1_empirical_distribution
