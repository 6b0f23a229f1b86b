"""Exercise 5: the plug-in MLE of eq. (6) [`eqn:plug-in-mle`] against majority vote."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..mle import plugin_mle
from ..responses import as_responses
from .report import CheckResult, ExerciseCheckFailed, _call, _join

__all__ = ["check_plugin_mle", "check_mle_differs_from_majority"]


_HINT_EQ6 = ("compare your weights with eq. (6) [`eqn:plug-in-mle`] in the handout: which "
             "one carries q and which 1 - q, the factor K and the '+ 1' inside the log; "
             "return (g_hat, h_hat) as labels 1..K.")

#: (answers, p, q, K): literal one-task inputs. Unanswered = 0.
_EX5_CASES = [
    # one near-hammer answers 3 (x2), three spammers answer 1
    (np.array([3, 1, 1, 1, 3, 0, 2]), np.array([0.95, 0.0, 0.05, 0.0, 0.9, 0.3, 0.2]), 0.7, 4),
    # reliable workers split 2/4, noisy majority on 4
    (np.array([2, 2, 4, 4, 4, 4, 1]), np.array([0.9, 0.85, 0.8, 0.1, 0.1, 0.1, 0.2]), 0.8, 5),
    (np.array([1, 3, 3, 2, 2, 2, 0, 3]), np.array([0.6, 0.9, 0.9, 0.2, 0.3, 0.25, 0.5, 0.1]),
     0.6, 3),
    (np.array([5, 5, 1, 1, 1, 4, 4, 4, 4]),
     np.array([0.97, 0.97, 0.7, 0.6, 0.65, 0.05, 0.1, 0.02, 0.04]), 0.55, 5),
]


def _mle_pair(answers: np.ndarray, p: np.ndarray, q: float, K: int, *,
              weight: Callable | None = None) -> tuple[int, int]:
    """Brute force over ordered pairs (a, b), a != b (ties: smallest a, then b)."""
    if weight is None:
        def weight(pp: np.ndarray, qq: float) -> np.ndarray:
            return np.log1p(K * pp * qq / (1.0 - pp))
    best, arg = -np.inf, (0, 0)
    wa, wb = weight(p, q), weight(p, 1 - q)
    for a in range(1, K + 1):
        for b in range(1, K + 1):
            if a == b:
                continue
            score = wa[answers == a].sum() + wb[answers == b].sum()
            if score > best + 1e-12:
                best, arg = score, (a, b)
    return arg


def _majority_pair(answers: np.ndarray, K: int) -> tuple[int, int] | None:
    counts = np.bincount(answers[answers > 0], minlength=K + 1)[1:]
    order = np.argsort(-counts, kind="stable")
    if counts[order[1]] == counts[order[2]] or counts[order[0]] == counts[order[1]]:
        return None       # ambiguous majority vote
    return int(order[0]) + 1, int(order[1]) + 1


def check_plugin_mle(student_fn: Callable) -> CheckResult:
    """Exercise 5a: ``student_fn(answers, p, q, K)`` -> (g_hat, h_hat) of eq. (6).

    ``answers`` holds one task's column of A (0 = not answered), ``p`` the workers'
    reliabilities (all < 1), ``q`` the task's confusion probability. Diagnoses:
    majority vote, q and 1 - q swapped, the pair returned as (h, g), 0-based labels,
    the "+ 1" inside the log left out, the factor K left out, weights log p.
    """
    ex = "ex5 plug-in MLE (eq. (6))"
    # consistency of the literal cases with the package's eq. (6)
    for answers, p, q, K in _EX5_CASES:
        R = as_responses(answers[:, None], K, owner="teaching")
        assert tuple(plugin_mle(R, p, np.array([q]))[0]) == _mle_pair(answers, p, q, K)
    failure: tuple | None = None
    mismatched: set[str] = set()
    for answers, p, q, K in _EX5_CASES:
        case = f"answers={answers.tolist()}, p={p.tolist()}, q={q}, K={K}"
        try:
            got = _call(ex, student_fn, case, answers.copy(), p.copy(), q, K,
                        forbidden=("plugin_mle", "best_pairs", "reference.plugin_mle"))
        except ExerciseCheckFailed:
            if failure is not None:
                continue
            raise
        try:
            got_pair = tuple(int(v) for v in np.asarray(got).ravel())
        except (TypeError, ValueError):
            got_pair = None
        if got_pair is None or len(got_pair) != 2:
            if failure is not None:
                continue
            raise ExerciseCheckFailed(ex, case, "your function must return a pair (a, b) of "
                                      f"labels; got {got!r} instead.", hint=_HINT_EQ6)
        ref = _mle_pair(answers, p, q, K)
        with np.errstate(divide="ignore"):
            variants = [
                ("use majority vote (most and second most frequent answers) instead of "
                 "weighting each answer by the worker's reliability",
                 _majority_pair(answers, K)),
                ("swap q and 1 - q (the weight with q belongs to a = g)",
                 _mle_pair(answers, p, 1 - q, K)),
                ("return (h, g) instead of (g, h)", ref[::-1]),
                ("return 0-based labels (labels are 1..K)", (ref[0] - 1, ref[1] - 1)),
                ("leave out the '+ 1' inside the log (spammers then get weight -inf "
                 "instead of 0)",
                 _mle_pair(answers, p, q, K, weight=lambda pp, qq: np.log(K * pp * qq / (1 - pp)))),
                ("leave out the factor K inside the log",
                 _mle_pair(answers, p, q, K, weight=lambda pp, qq: np.log1p(pp * qq / (1 - pp)))),
                ("weight answers by log(p_i) or p_i alone (the weight must depend on q too)",
                 _mle_pair(answers, p, q, K, weight=lambda pp, qq: pp + 0 * qq)),
            ]
        matches = [d for d, v in variants if v is not None and tuple(v) == got_pair]
        mismatched |= {d for d, v in variants if v is not None and tuple(v) != got_pair}
        if failure is None and got_pair != ref:
            failure = (case, ref, got_pair, matches)
    if failure is not None:
        case, ref, got_pair, matches = failure
        consistent = [d for d in matches if d not in mismatched]
        raise ExerciseCheckFailed(ex, case, "wrong pair.", expected=ref, got=got_pair,
                                  hint=_HINT_EQ6, diagnosis=_join(consistent or matches))
    return CheckResult("ex5 plug-in MLE", len(_EX5_CASES))


def check_mle_differs_from_majority(answers: Any, p: Any, q: float, K: int) -> CheckResult:
    """Exercise 5b: a concrete task where eq. (6) and majority vote disagree.

    ``answers`` is one task's column of A (labels 1..K, 0 = not answered), ``p`` the
    reliabilities (in [0, 1)), ``q`` in (1/2, 1]. The majority vote must be unambiguous
    (no ties among the top three counts) and differ from the plug-in MLE pair.
    """
    ex = "ex5 MLE is not majority vote"
    answers = np.asarray(answers)
    p = np.asarray(p, dtype=float)
    case = f"answers={answers.tolist()}, p={np.round(p, 4).tolist()}, q={q}, K={K}"
    if answers.ndim != 1 or p.shape != answers.shape:
        raise ExerciseCheckFailed(ex, case, "answers and p must be 1-D arrays of the same "
                                  "length (one entry per worker).")
    if not ((answers >= 0) & (answers <= K)).all():
        raise ExerciseCheckFailed(ex, case, f"answers must be labels in 1..{K} or 0.")
    if not ((p >= 0) & (p < 1)).all() or not 0.5 < q <= 1:
        raise ExerciseCheckFailed(ex, case, "p must lie in [0, 1) and q in (1/2, 1].")
    mv = _majority_pair(answers, K)
    if mv is None:
        raise ExerciseCheckFailed(ex, case, "the majority vote of this task has a tie "
                                  "among its top three counts; pick an example where "
                                  "majority vote is unambiguous.", hint=_HINT_EQ6)
    mle = _mle_pair(answers, p, q, K)
    if mle == mv:
        raise ExerciseCheckFailed(ex, case, "majority vote and eq. (6) agree here.",
                                  expected="a different pair", got=mle, hint=(
                                      "give the minority answers to workers with p close "
                                      "to 1 and the majority answers to spammers (p = 0): "
                                      "eq. (6) gives a spammer's answer weight log(1) = 0."))
    return CheckResult(f"ex5 MLE {mle} vs majority {mv}", 1)
