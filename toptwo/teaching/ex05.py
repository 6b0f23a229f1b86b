"""Exercise 5: the plug-in MLE of eq. (6) [`eqn:plug-in-mle`] against majority vote.

Tasks are drawn afresh at every run; the right pairs (and the pairs of the typical
mistakes) are computed inside the check by a brute force over the ordered pairs.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .report import CheckResult, ExerciseCheckFailed, _call, _join, _rng, _student

__all__ = ["check_plugin_mle", "check_mle_differs_from_majority"]


_HINT_EQ6 = ("compare your weights with eq. (6) [`eqn:plug-in-mle`] in the handout: which "
             "one carries q and which 1 - q, the factor K and the '+ 1' inside the log; "
             "return (g_hat, h_hat) as labels 1..K.")


def _scores(answers: np.ndarray, wa: np.ndarray, wb: np.ndarray, K: int) -> np.ndarray:
    """S[a-1, b-1] = sum of wa over answers a + sum of wb over answers b (-inf on a = b)."""
    ga = np.array([wa[answers == a].sum() for a in range(1, K + 1)])
    gb = np.array([wb[answers == b].sum() for b in range(1, K + 1)])
    S = ga[:, None] + gb[None, :]
    np.fill_diagonal(S, -np.inf)
    return S


def _argmax_pair(S: np.ndarray) -> tuple[int, int] | None:
    """The maximising ordered pair, or None when the maximum is not unique."""
    flat = np.sort(S.ravel())
    if not np.isfinite(flat[-1]) or flat[-1] - flat[-2] < 1e-6 * max(1.0, abs(flat[-1])):
        return None
    a, b = np.unravel_index(int(np.argmax(S)), S.shape)
    return int(a) + 1, int(b) + 1


def _majority_pair(answers: np.ndarray, K: int) -> tuple[int, int] | None:
    counts = np.bincount(answers[answers > 0], minlength=K + 1)[1:]
    order = np.argsort(-counts, kind="stable")
    if counts[order[1]] == counts[order[2]] or counts[order[0]] == counts[order[1]]:
        return None       # ambiguous majority vote
    return int(order[0]) + 1, int(order[1]) + 1


def check_plugin_mle(student_fn: Callable, *, rng: Any = None) -> CheckResult:
    """Exercise 5a: ``student_fn(answers, p, q, K)`` -> (g_hat, h_hat) of eq. (6).

    ``answers`` holds one task's column of A (0 = not answered), ``p`` the workers'
    reliabilities (all < 1), ``q`` the task's confusion probability; tasks are drawn at
    random (with a unique maximiser) until every typical mistake has given another pair
    on some task. Any pair form is accepted (tuple, list, array). Diagnoses: majority
    vote, q and 1 - q swapped, the pair returned as (h, g), 0-based labels, the "+ 1"
    inside the log left out, the factor K left out, weights p alone.
    """
    ex = "ex5 plug-in MLE (eq. (6))"
    gen = _rng(rng)
    with _student(ex, student_fn) as student:
        return _check_5a(ex, gen, student)


def _check_5a(ex: str, gen: np.random.Generator, student: Any) -> CheckResult:  # noqa: C901
    failure: tuple | None = None
    mismatched: set[str] = set()
    matched: set[str] = set()
    unseparated: set[str] | None = None
    n_cases = 0
    for _ in range(400):
        K = int(gen.integers(3, 7))
        n = int(gen.integers(4, 14))
        answers = gen.integers(1, K + 1, n) * (gen.random(n) < 0.85)
        p = np.round(np.where(gen.random(n) < 0.3, 0.0, gen.uniform(0, 0.97, n)), 3)
        q = float(np.round(gen.uniform(0.5, 1.0), 3))
        with np.errstate(divide="ignore"):
            def pair(weight: Callable) -> tuple[int, int] | None:
                return _argmax_pair(_scores(answers, weight(p, q), weight(p, 1 - q), K))

            ref = pair(lambda pp, qq: np.log(K * pp * qq / (1 - pp) + 1))       # eq. (6)
            if ref is None or _majority_pair(answers, K) is None:
                continue
            variants = [
                ("use majority vote (most and second most frequent answers) instead of "
                 "weighting each answer by the worker's reliability", _majority_pair(answers, K)),
                ("swap q and 1 - q (the weight with q belongs to a = g)",
                 pair(lambda pp, qq: np.log(K * pp * (1 - qq) / (1 - pp) + 1))),
                ("return (h, g) instead of (g, h)", ref[::-1]),
                ("return 0-based labels (labels are 1..K)", (ref[0] - 1, ref[1] - 1)),
                ("leave out the '+ 1' inside the log (spammers then get weight -inf "
                 "instead of 0)", pair(lambda pp, qq: np.log(K * pp * qq / (1 - pp)))),
                ("leave out the factor K inside the log",
                 pair(lambda pp, qq: np.log(pp * qq / (1 - pp) + 1))),
                ("weight answers by p_i q and p_i (1 - q) (eq. (6) weighs them by "
                 "log(K p_i q/(1 - p_i) + 1))", pair(lambda pp, qq: pp * qq)),
            ]
        defined: list[tuple[str, tuple]] = [(d, tuple(v)) for d, v in variants if v is not None]
        case = f"answers={answers.tolist()}, p={p.tolist()}, q={q}, K={K}"
        n_cases += 1
        try:
            got = _call(ex, student, case, answers.copy(), p.copy(), q, K)
            got_pair = tuple(int(v) for v in np.asarray(got).ravel())
            if len(got_pair) != 2:
                raise ValueError
        except ExerciseCheckFailed:
            if failure is not None:
                continue
            raise
        except (TypeError, ValueError):
            if failure is not None:
                continue
            raise ExerciseCheckFailed(ex, case, "your function must return a pair (a, b) of "
                                      f"labels; got {got!r} instead.", hint=_HINT_EQ6) from None
        if unseparated is None:
            unseparated = {d for d, _ in defined}
        unseparated -= {d for d, v in defined if v != ref}
        matches = [d for d, v in defined if v == got_pair]
        if got_pair != ref:
            matched |= set(matches)
        mismatched |= {d for d, v in defined if v != got_pair}
        if failure is None and got_pair != ref:
            failure = (case, got_pair, matches)
        if n_cases >= 8 and not unseparated:
            break
    if failure is not None:
        case, got_pair, matches = failure
        # a variant can be undefined on some tasks (a tie): name those that matched
        # wherever they were defined and the answer was wrong
        consistent = [d for d in matches if d not in mismatched] or sorted(
            d for d in matched if d not in mismatched)
        raise ExerciseCheckFailed(ex, case, "wrong pair.", got=got_pair, hint=_HINT_EQ6,
                                  diagnosis=_join(consistent or matches))
    return CheckResult("ex5 plug-in MLE", n_cases)


def check_mle_differs_from_majority(answers: Any, p: Any, q: float, K: int) -> CheckResult:
    """Exercise 5b: a concrete task where eq. (6) and majority vote disagree.

    ``answers`` is one task's column of A (labels 1..K, 0 = not answered), ``p`` the
    reliabilities (in [0, 1)), ``q`` in (1/2, 1]. The majority vote must be unambiguous
    (no ties among the top three counts), eq. (6) must have a unique maximiser, and the
    two pairs must differ. (A construction: every correct example passes, whatever it is.)
    """
    ex = "ex5 MLE is not majority vote"
    try:
        answers = np.asarray(answers)
        p = np.asarray(p, dtype=float)
        q, K = float(q), int(K)
    except (TypeError, ValueError) as exc:
        raise ExerciseCheckFailed(ex, "your example", f"could not read the example ({exc}): "
                                  "answers and p must be sequences of numbers, q a number "
                                  "and K an integer.") from None
    case = f"answers={answers.tolist()}, p={np.round(p, 4).tolist()}, q={q}, K={K}"
    if answers.ndim != 1 or p.shape != answers.shape:
        raise ExerciseCheckFailed(ex, case, "answers and p must be 1-D arrays of the same "
                                  "length (one entry per worker).")
    if K < 3 or not ((answers >= 0) & (answers <= K) & (answers == np.round(answers))).all():
        raise ExerciseCheckFailed(ex, case, "K must be at least 3 and answers labels in "
                                  "1..K or 0.")
    answers = answers.astype(int)
    if not ((p >= 0) & (p < 1)).all() or not 0.5 < q <= 1:
        raise ExerciseCheckFailed(ex, case, "p must lie in [0, 1) and q in (1/2, 1].")
    mv = _majority_pair(answers, K)
    if mv is None:
        raise ExerciseCheckFailed(ex, case, "the majority vote of this task has a tie "
                                  "among its top three counts; pick an example where "
                                  "majority vote is unambiguous.", hint=_HINT_EQ6)
    w = np.log(K * p * q / (1 - p) + 1), np.log(K * p * (1 - q) / (1 - p) + 1)    # eq. (6)
    mle = _argmax_pair(_scores(answers, w[0], w[1], K))
    if mle is None:
        raise ExerciseCheckFailed(ex, case, "eq. (6) has several maximising pairs here; "
                                  "pick an example where its maximiser is unique.")
    if mle == mv:
        raise ExerciseCheckFailed(ex, case, "majority vote and eq. (6) agree here.", got=mle,
                                  hint=("give the minority answers to workers with p close "
                                        "to 1 and the majority answers to spammers (p = 0): "
                                        "eq. (6) gives a spammer's answer weight log(1) = 0."))
    return CheckResult(f"ex5 MLE {mle} vs majority {mv}", 1)
