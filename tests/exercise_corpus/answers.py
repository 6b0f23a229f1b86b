"""The mistake corpus: answer sets run through ``nbgrader autograde`` (tests/test_nbgrader.py).

Each answer set is one student's submission of one exercise: the instructor solution with
some solution regions replaced. ``edits`` maps a piece of a solution cell's source to the
new lines of its solution region (indented like the region), or, under a key starting
with ``cell:``, to the whole new cell source (a student may write anything in a solution
cell, e.g. code that rebinds a check). ``fails`` maps each grade cell the answer must fail
to a regular expression its feedback must contain (the diagnosis naming the mistake); every
other autograded cell must score full marks.

Kinds: ``solution`` (the instructor's), ``unusual`` (correct, another form or dtype),
``math`` (a typical mathematical mistake), ``process`` (a library call, hard-coded or
copied numbers, copied library code, threads, processes, frame or closure walking,
patching a check, using the truth), ``limit`` (too slow, exiting, crashing).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Answer:
    name: str
    kind: str
    edits: dict = field(default_factory=dict)
    fails: dict = field(default_factory=dict)

    @property
    def assignment(self) -> str:
        return self.name.split("-")[0]


CALLS = r"your function tried to .*(toptwo|theory_checks|library)"
#: any refusal of the process that runs the student's function (imports of the library,
#: threads, processes, copied library code, frame or closure walking, hook changes)
RULES = r"your function .*which is not allowed while it is graded"

A = Answer
ANSWERS = [
    # ------------------------------------------------------------------ ex01
    A("ex01-solution", "solution"),
    A("ex01-list-and-bincount", "unusual", {
        "def answer_distribution": """
return [p * q * (c == g) + p * (1 - q) * (c == h) + (1 - p) / K for c in range(1, K + 1)]""",
        "def empirical_distribution": """
out = np.zeros((A.shape[1], K))
for j in range(A.shape[1]):
    answers = A[:, j][A[:, j] > 0]
    out[j] = np.bincount(answers, minlength=K + 1)[1:] / len(answers)
return out"""}),
    A("ex01-column-vector", "unusual", {"def answer_distribution": """
mu = np.full((K, 1), (1.0 - p) / K)
mu[g - 1, 0] += p * q
mu[h - 1, 0] += p * (1.0 - q)
return mu"""}),
    A("ex01-q-swapped", "math", {"def answer_distribution": """
mu = np.full(K, (1.0 - p) / K)
mu[g - 1] += p * (1 - q)
mu[h - 1] += p * q
return mu"""}, {"ex01-1a-check": r"swap q and 1 - q"}),
    A("ex01-label-index", "math", {"def answer_distribution": """
mu = np.full(K, (1.0 - p) / K)
mu[g % K] += p * q
mu[h % K] += p * (1.0 - q)
return mu"""}, {"ex01-1a-check": r"index c instead of c - 1"}),
    A("ex01-spammer-share-off-top", "math", {"def answer_distribution": """
mu = np.full(K, (1.0 - p) / K)
mu[g - 1] = p * q
mu[h - 1] = p * (1.0 - q)
return mu"""}, {"ex01-1a-check": r"spammer share \(1-p\)/K off the labels g and h"}),
    A("ex01-spread-over-k-minus-2", "math", {"def answer_distribution": """
mu = np.full(K, (1.0 - p) / (K - 2))
mu[g - 1] = p * q
mu[h - 1] = p * (1.0 - q)
return mu"""}, {"ex01-1a-check": r"K - 2 wrong labels only"}),
    A("ex01-share-not-divided-by-k", "math", {"def answer_distribution": """
mu = np.full(K, 1.0 - p)
mu[g - 1] += p * q
mu[h - 1] += p * (1.0 - q)
return mu"""}, {"ex01-1a-check": r"spammer share 1 - p instead of \(1 - p\)/K"}),
    A("ex01-divide-by-n", "math", {"def empirical_distribution": """
counts = np.stack([(A == label).sum(axis=0) for label in range(1, K + 1)], axis=1)
return counts / A.shape[0]"""}, {"ex01-1b-check": r"divide by the number of workers n"}),
    A("ex01-raw-counts", "math", {"def empirical_distribution": """
return np.stack([(A == label).sum(axis=0) for label in range(1, K + 1)], axis=1)"""},
      {"ex01-1b-check": r"return raw counts"}),
    A("ex01-per-worker", "math", {"def empirical_distribution": """
counts = np.stack([(A == label).sum(axis=1) for label in range(1, K + 1)], axis=1)
return counts / counts.sum(axis=1, keepdims=True)"""},
      {"ex01-1b-check": r"one histogram per worker"}),
    A("ex01-label-zero-column", "math", {"def empirical_distribution": """
counts = np.stack([(A == label).sum(axis=0) for label in range(0, K + 1)], axis=1)
return counts / counts.sum(axis=1, keepdims=True)"""},
      {"ex01-1b-check": r"column for label 0"}),
    A("ex01-calls-label-distribution", "process", {"def answer_distribution": """
return toptwo.label_distribution(p, q, g, h, K)"""}, {"ex01-1a-check": CALLS}),
    A("ex01-lookup-table", "process", {"def answer_distribution": """
table = {(0.6, 0.9, 1, 3, 4): [0.64, 0.1, 0.16, 0.1], (0.8, 0.7, 2, 4, 5): [0.04, 0.6, 0.04, 0.28, 0.04]}
return np.array(table[(p, q, g, h, K)])"""},
      {"ex01-1a-check": r"look answers up in a table"}),
    A("ex01-rebinds-the-check", "process", {"cell:def answer_distribution": """
def answer_distribution(p, q, g, h, K):
    mu = np.full(K, (1.0 - p) / K)
    mu[g - 1] += p * (1 - q)
    mu[h - 1] += p * q
    return mu


teaching.check_answer_distribution = lambda f: "passed"
import toptwo.teaching.ex01
toptwo.teaching.ex01.check_answer_distribution = lambda f: "passed\""""},
      {"ex01-1a-check": r"swap q and 1 - q"}),
    # -- correct forms, attack routes and limits (issue 38)
    A("ex01-float32-and-series", "unusual", {
        "def answer_distribution": """
import pandas as pd
mu = np.full(K, (1.0 - p) / K, dtype=np.float32)
mu[g - 1] += p * q
mu[h - 1] += p * (1.0 - q)
return pd.Series(mu, index=range(1, K + 1))""",
        "def empirical_distribution": """
counts = np.stack([(A == label).sum(axis=0) for label in range(1, K + 1)], axis=1)
return (counts / counts.sum(axis=1, keepdims=True)).astype(np.float32)"""}),
    A("ex01-tuple", "unusual", {"def answer_distribution": """
return tuple(p * q * (c == g) + p * (1 - q) * (c == h) + (1 - p) / K for c in range(1, K + 1))"""}),
    A("ex01-uniform-constant", "math", {"def answer_distribution": """
return np.full(K, 1 / K)"""}, {"ex01-1a-check": r"ignores its input"}),
    A("ex01-all-zero", "math", {"def empirical_distribution": """
return np.zeros((A.shape[1], K))"""}, {"ex01-1b-check": r"ignores its input"}),
    A("ex01-threads", "process", {"def answer_distribution": """
from concurrent.futures import ThreadPoolExecutor
with ThreadPoolExecutor(1) as pool:
    return pool.submit(lambda: __import__("toptwo").label_distribution(p, q, g, h, K)).result()"""},
      {"ex01-1a-check": r"tried to start a thread"}),
    A("ex01-subprocess", "process", {"def answer_distribution": """
import subprocess, sys
code = f"import toptwo; print(list(toptwo.label_distribution({p}, {q}, {g}, {h}, {K})))"
out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
return np.array(eval(out))"""}, {"ex01-1a-check": r"tried to start a process"}),
    A("ex01-copied-source", "process", {"cell:def answer_distribution": """
import inspect
SOURCE = inspect.getsource(toptwo.model.label_distribution)   # the library's code, as text


def answer_distribution(p, q, g, h, K):
    namespace = {"np": np}
    exec(SOURCE, namespace)
    return namespace["label_distribution"](p, q, g, h, K)"""}, {"ex01-1a-check": CALLS}),
    A("ex01-copied-function", "process", {"cell:def answer_distribution": """
import inspect
from typing import Any
exec(inspect.getsource(toptwo.model.label_distribution))     # defines label_distribution here


def answer_distribution(p, q, g, h, K):
    return label_distribution(p, q, g, h, K)"""}, {"ex01-1a-check": CALLS}),
    A("ex01-slow", "limit", {"def empirical_distribution": """
import time
start = time.process_time()
while time.process_time() - start < 6:    # a correct but slow function: 6 s of computing
    pass
counts = np.stack([(A == label).sum(axis=0) for label in range(1, K + 1)], axis=1)
return counts / counts.sum(axis=1, keepdims=True)"""},
      {"ex01-1b-check": r"your function took more than 5 s"}),
    A("ex01-exits", "limit", {"def answer_distribution": """
import os
os._exit(0)"""}, {"ex01-1a-check": r"ended \(exit status 0\) without returning"}),
    A("ex01-crashes", "limit", {"def empirical_distribution": """
import faulthandler
if A.shape[0] < 1000:              # a crash in compiled code, on the check's small inputs
    faulthandler._sigsegv()        # (the notebook's own 2000-worker call would kill the kernel)
counts = np.stack([(A == label).sum(axis=0) for label in range(1, K + 1)], axis=1)
return counts / counts.sum(axis=1, keepdims=True)"""},
      {"ex01-1b-check": r"killed by SIGSEGV"}),
    # ------------------------------------------------------------------ ex02
    A("ex02-solution", "solution"),
    A("ex02-own-symbols-and-case-line", "unusual", {
        "def expected_binary_by_hand": """
P, Q, S = sp.symbols("p q s")
probs = {c: S * (P * Q * sp.KroneckerDelta(c, g) + P * (1 - Q) * sp.KroneckerDelta(c, h)
                 + (1 - P) / sp.S(K)) for c in range(1, K + 1)}
return sum(probs[c] if c > k else -probs[c] for c in probs)""",
        "def r_case_one": """
return sp.Rational(k, K) - 1 + q if h <= k < g else sp.Rational(k, K) - int(k >= g)"""}),
    A("ex02-shift-left-out", "math", {"def expected_binary_by_hand": """
r = sp.Rational(k, K) - q * int(g <= k) - (1 - q) * int(h <= k)
return 2 * s * p * r"""},
      {"ex02-2a-check": r"leave out the shift s\(K - 2k\)/K"}),
    A("ex02-q-swapped", "math", {"def expected_binary_by_hand": """
total = 0
for c in range(1, K + 1):
    prob = s * (p * (1 - q) * int(c == g) + p * q * int(c == h) + (1 - p) / sp.Integer(K))
    total += prob if c > k else -prob
return total"""},
      {"ex02-2a-check": r"swap q and 1 - q"}),
    A("ex02-float-third", "math", {"def expected_binary_by_hand": """
total = 0
for c in range(1, K + 1):
    prob = s * (p * q * int(c == g) + p * (1 - q) * int(c == h) + (1 - p) * (1 / K))
    total += prob if c > k else -prob
return total"""},
      {"ex02-2a-check": r"use sp.Rational\(1, 3\)"}),
    A("ex02-sign-reversed", "math", {"def expected_binary_by_hand": """
total = 0
for c in range(1, K + 1):
    prob = s * (p * q * int(c == g) + p * (1 - q) * int(c == h) + (1 - p) / sp.Integer(K))
    total += -prob if c > k else prob
return total"""},
      {"ex02-2a-check": r"reverse the sign convention"}),
    A("ex02-factor-two-slip", "math", {"def r_case_one": """
return 2 * (sp.Rational(k, K) - q * int(g <= k) - (1 - q) * int(h <= k))"""},
      {"ex02-2b-check": r"factor-2 slip"}),
    A("ex02-wrong-case", "math", {"def r_case_one": """
return sp.Rational(k, K) - 1"""}, {"ex02-2b-check": r"use the case g <= k"}),
    A("ex02-case-two-formula", "math", {"def r_case_one": """
return sp.Rational(k, K) - q"""}, {"ex02-2b-check": r"Case II's formula"}),
    A("ex02-float-k-over-K", "math", {"def r_case_one": """
return k / K - q * int(g <= k) - (1 - q) * int(h <= k)"""}, {"ex02-2b-check": r"use sp.Rational"}),
    A("ex02-calls-theory-checks", "process", {"def expected_binary_by_hand": """
from theory_checks.model import symbolic_expected_binary
return symbolic_expected_binary(K, g, h, k, p, q, s)"""}, {"ex02-2a-check": CALLS}),
    A("ex02-calls-symbolic-r", "process", {"def r_case_one": """
import theory_checks.model
return theory_checks.model.symbolic_r(K, g, h, k, q)"""}, {"ex02-2b-check": CALLS}),
    # the library called at cell level for the handout's example (K = 3, (g, h) = (3, 1)),
    # the stored expressions returned: the check draws other configurations
    A("ex02-precomputed-fixed-inputs", "process", {"cell:def expected_binary_by_hand": """
from theory_checks.model import symbolic_expected_binary
STORED = {k: symbolic_expected_binary(3, 3, 1, k, p, q, s) for k in (1, 2)}


def expected_binary_by_hand(k, g, h, K):
    return STORED[k]"""}, {"ex02-2a-check": r"look answers up|differs from E"}),
    A("ex02-reload-rebinding", "process", {"cell:def expected_binary_by_hand": """
def expected_binary_by_hand(k, g, h, K):
    return 2 * s * p * (sp.Rational(k, K) - q)          # wrong


import importlib
import toptwo.teaching.ex02 as ex02_checks
ex02_checks.check_expected_binary = lambda f, **kw: "passed: ex2 E[A^(k)]"
importlib.reload = lambda module: module            # the grade cell's "afresh" undone"""},
      {"ex02-2a-check": r"tamper|differs from E"}),
    # ------------------------------------------------------------------ ex03
    A("ex03-solution", "solution"),
    A("ex03-sparse-and-subtract", "unusual", {
        "def binary_conversion": """
import scipy.sparse
return scipy.sparse.csr_matrix(np.sign(A - k - 0.5) * (A > 0))""",
        "def center": """
return np.subtract(EA, s * (1 - 2 * k / K))"""}),
    A("ex03-a-at-least-k", "math", {"def binary_conversion": """
return np.where(A == 0, 0, np.where(A >= k, 1, -1))"""},
      {"ex03-3a-check": r"test A >= k instead of A > k"}),
    A("ex03-signs-reversed", "math", {"def binary_conversion": """
return np.where(A == 0, 0, np.where(A > k, -1, 1))"""}, {"ex03-3a-check": r"reverse the signs"}),
    A("ex03-unanswered-minus-one", "math", {"def binary_conversion": """
return np.where(A > k, 1, -1)"""}, {"ex03-3a-check": r"unanswered entries \(A = 0\) to -1"}),
    A("ex03-indicator", "math", {"def binary_conversion": """
return (A > k).astype(int)"""}, {"ex03-3a-check": r"0/1 indicator"}),
    A("ex03-k-minus-two", "math", {"def center": """
return EA - s * (K - 2 * k) / (K - 2)"""}, {"ex03-3b-check": r"divide by K - 2 instead of K"}),
    A("ex03-no-s", "math", {"def center": """
return EA - (K - 2 * k) / K"""}, {"ex03-3b-check": r"without the factor s"}),
    A("ex03-no-shift", "math", {"def center": """
return EA"""}, {"ex03-3b-check": r"leave out the shift"}),
    A("ex03-calls-to-binary", "process", {"def binary_conversion": """
return toptwo.to_binary(toptwo.as_responses(A, int(A.max())), k).toarray()"""},
      {"ex03-3a-check": CALLS}),
    A("ex03-rebinds-module-check", "process", {"cell:def center": """
def center(EA, k, s, K):
    return EA - s * (K - 2 * k) / (K - 2)


import toptwo.teaching.ex03 as ex03_checks
ex03_checks.check_centered_binary = lambda f: "passed"
teaching.check_centered_binary = lambda f: "passed\""""},
      {"ex03-3b-check": r"divide by K - 2 instead of K"}),
    A("ex03-tuple-and-float32", "unusual", {
        "def binary_conversion": """
return tuple(tuple(int(np.sign(a - k - 0.5)) if a else 0 for a in row) for row in A)""",
        "def center": """
return (EA - s * (K - 2 * k) / K).astype(np.float32)"""}),
    A("ex03-setprofile", "process", {"def binary_conversion": """
import sys
sys.setprofile(None)               # the old profile-hook defence switched off
import toptwo
return toptwo.to_binary(toptwo.as_responses(A, int(A.max())), k).toarray()"""},
      {"ex03-3a-check": RULES}),
    # ------------------------------------------------------------------ ex04
    A("ex04-solution", "solution"),
    A("ex04-estimated-denominator-and-vstack", "unusual", {
        "def reliability_estimate": """
hits = ((A2 == top_two[:, 0]) | (A2 == top_two[:, 1])).sum(axis=1)
per_worker = (A2 > 0).sum() / A2.shape[0]          # m s (1 - s1), estimated
return K / (K - 2) * (hits / per_worker - 2 / K)""",
        "def simulate_mean_p_hat": """
rows = None
for _ in range(R):
    A1, A2 = toptwo.split_entries(draw(rng), s1, rng)
    row = estimate(A2.toarray(), top_two, s * (1 - s1), K)
    rows = row if rows is None else np.vstack([rows, row])
return rows.mean(axis=0)"""}),
    A("ex04-k-instead-of-k-minus-2", "math", {"def reliability_estimate": """
hits = ((A2 == top_two[:, 0]) | (A2 == top_two[:, 1])).sum(axis=1)
return hits / (A2.shape[1] * rate) - 2 / K"""}, {"ex04-4a-check": r"divide by K instead of K - 2"}),
    A("ex04-no-two-over-k", "math", {"def reliability_estimate": """
hits = ((A2 == top_two[:, 0]) | (A2 == top_two[:, 1])).sum(axis=1)
return K / (K - 2) * hits / (A2.shape[1] * rate)"""}, {"ex04-4a-check": r"leave out the -2/K"}),
    A("ex04-only-g-hits", "math", {"def reliability_estimate": """
hits = (A2 == top_two[:, 0]).sum(axis=1)
return K / (K - 2) * (hits / (A2.shape[1] * rate) - 2 / K)"""},
      {"ex04-4a-check": r"count only answers equal to g_j"}),
    A("ex04-own-answer-count", "math", {"def reliability_estimate": """
hits = ((A2 == top_two[:, 0]) | (A2 == top_two[:, 1])).sum(axis=1)
return K / (K - 2) * (hits / np.maximum((A2 > 0).sum(axis=1), 1) - 2 / K)"""},
      {"ex04-4a-check": r"own number of answers"}),
    A("ex04-stage-one-half", "math", {"def simulate_mean_p_hat": """
estimates = []
for _ in range(R):
    A1_rep, _ = toptwo.split_entries(draw(rng), s1, rng)
    estimates.append(estimate(A1_rep.toarray(), top_two, s * (1 - s1), K))
return np.mean(estimates, axis=0)"""}, {"ex04-4b-check": r"stage-1 half A\^1"}),
    A("ex04-rate-s", "math", {"def simulate_mean_p_hat": """
estimates = []
for _ in range(R):
    _, A2_rep = toptwo.split_entries(draw(rng), s1, rng)
    estimates.append(estimate(A2_rep.toarray(), top_two, s, K))
return np.mean(estimates, axis=0)"""}, {"ex04-4b-check": r"rate s instead of s \(1 - s_1\)"}),
    A("ex04-thirty-replicates", "math", {"def simulate_mean_p_hat": """
estimates = []
for _ in range(30):
    _, A2_rep = toptwo.split_entries(draw(rng), s1, rng)
    estimates.append(estimate(A2_rep.toarray(), top_two, s * (1 - s1), K))
return np.mean(estimates, axis=0)"""}, {"ex04-4b-check": r"fixed number of replicates"}),
    A("ex04-calls-estimate-reliability", "process", {"def reliability_estimate": """
R2 = toptwo.as_responses(A2, K)
return toptwo.estimate_reliability(R2, top_two, normalization="paper")"""},
      {"ex04-4a-check": CALLS}),
    A("ex04-copies-printed-averages", "process", {"def simulate_mean_p_hat": """
return np.array([0.713, 0.147, 0.176, 0.028, 0.735, 0.871, 0.554, 0.806])"""},
      {"ex04-4b-check": r"without simulating"}),
    A("ex04-uses-the-truth", "process", {"def simulate_mean_p_hat": """
return model.reliability"""}, {"ex04-4b-check": r"true p of another model"}),
    A("ex04-transposed", "math", {"def reliability_estimate": """
n_workers = A2.shape[0]
in_top_two = (A2 == top_two[:, 0]) | (A2 == top_two[:, 1])
return K / (K - 2) * (in_top_two.sum(axis=0) / (n_workers * rate) - 2 / K)"""},
      {"ex04-4a-check": r"one value per task"}),
    A("ex04-median", "math", {"def simulate_mean_p_hat": """
estimates = []
for _ in range(R):
    _, A2_rep = toptwo.split_entries(draw(rng), s1, rng)
    estimates.append(estimate(A2_rep.toarray(), top_two, s * (1 - s1), K))
return np.median(estimates, axis=0)"""}, {"ex04-4b-check": r"median of the R estimates"}),
    A("ex04-frame-walking", "process", {"def reliability_estimate": """
import sys
frame = sys._getframe(1)
while frame is not None:           # look for the check's expected value
    if "ref" in frame.f_locals:
        return frame.f_locals["ref"]
    frame = frame.f_back
return np.zeros(A2.shape[0])"""}, {"ex04-4a-check": RULES}),
    A("ex04-closure-reading", "process", {"def simulate_mean_p_hat": """
for cell in draw.__closure__:      # the hidden model of the check
    if hasattr(cell.cell_contents, "reliability"):
        return cell.cell_contents.reliability
return np.zeros(len(top_two))"""}, {"ex04-4b-check": RULES}),
    # ------------------------------------------------------------------ ex05
    A("ex05-solution", "solution"),
    A("ex05-score-matrix", "unusual", {"def plugin_mle_one_task": """
wa = np.log1p(K * p * q / (1 - p))
wb = np.log1p(K * p * (1 - q) / (1 - p))
ga = np.array([wa[answers == a].sum() for a in range(1, K + 1)])
gb = np.array([wb[answers == b].sum() for b in range(1, K + 1)])
scores = ga[:, None] + gb[None, :]
np.fill_diagonal(scores, -np.inf)
a, b = np.unravel_index(np.argmax(scores), scores.shape)
return [a + 1, b + 1]"""}),
    A("ex05-majority-vote", "math", {"def plugin_mle_one_task": """
counts = np.bincount(answers[answers > 0], minlength=K + 1)[1:]
order = np.argsort(-counts, kind="stable")
return int(order[0]) + 1, int(order[1]) + 1"""}, {"ex05-5a-check": r"use majority vote"}),
    A("ex05-q-swapped", "math", {"def plugin_mle_one_task": """
weight_g = np.log(K * p * (1 - q) / (1 - p) + 1)
weight_h = np.log(K * p * q / (1 - p) + 1)
best_score, best_pair = -np.inf, None
for a in range(1, K + 1):
    for b in range(1, K + 1):
        if a != b:
            score = weight_g[answers == a].sum() + weight_h[answers == b].sum()
            if score > best_score:
                best_score, best_pair = score, (a, b)
return best_pair"""}, {"ex05-5a-check": r"swap q and 1 - q"}),
    A("ex05-no-plus-one", "math", {"def plugin_mle_one_task": """
with np.errstate(divide="ignore"):
    weight_g = np.log(K * p * q / (1 - p))
    weight_h = np.log(K * p * (1 - q) / (1 - p))
scores = {(a, b): weight_g[answers == a].sum() + weight_h[answers == b].sum()
          for a in range(1, K + 1) for b in range(1, K + 1) if a != b}
return max(scores, key=scores.get)"""}, {"ex05-5a-check": r"'\+ 1' inside the log"}),
    A("ex05-no-factor-k", "math", {"def plugin_mle_one_task": """
weight_g = np.log(p * q / (1 - p) + 1)
weight_h = np.log(p * (1 - q) / (1 - p) + 1)
scores = {(a, b): weight_g[answers == a].sum() + weight_h[answers == b].sum()
          for a in range(1, K + 1) for b in range(1, K + 1) if a != b}
return max(scores, key=scores.get)"""}, {"ex05-5a-check": r"factor K inside the log"}),
    A("ex05-example-agrees", "math", {"example_answers =": """
example_answers = np.array([1, 1, 1, 2, 2, 3])
example_p = np.array([0.9, 0.9, 0.9, 0.5, 0.5, 0.1])
example_q, example_K = 0.7, 3"""}, {"ex05-5b-check": r"majority vote and eq. \(6\) agree"}),
    A("ex05-calls-plugin-mle", "process", {"def plugin_mle_one_task": """
R = toptwo.as_responses(answers[:, None], K)
return tuple(toptwo.plugin_mle(R, p, np.array([q]))[0])"""}, {"ex05-5a-check": CALLS}),
    A("ex05-patches-the-reporter", "process", {"cell:def plugin_mle_one_task": """
def plugin_mle_one_task(answers, p, q, K):
    counts = np.bincount(answers[answers > 0], minlength=K + 1)[1:]
    order = np.argsort(-counts, kind="stable")
    return int(order[0]) + 1, int(order[1]) + 1


import toptwo.teaching.report
toptwo.teaching.report._Grader.finish = lambda self, result: result
teaching.check_plugin_mle = lambda f: "passed\""""}, {"ex05-5a-check": r"use majority vote"}),
    A("ex05-list-pair-float32-weights", "unusual", {"def plugin_mle_one_task": """
weight_g = np.log(K * p * q / (1 - p) + 1).astype(np.float32)
weight_h = np.log(K * p * (1 - q) / (1 - p) + 1).astype(np.float32)
scores = {(a, b): weight_g[answers == a].sum() + weight_h[answers == b].sum()
          for a in range(1, K + 1) for b in range(1, K + 1) if a != b}
return list(max(scores, key=scores.get))"""}),
    # ------------------------------------------------------------------ ex06
    A("ex06-solution", "solution"),
    A("ex06-cov-slope-and-interp", "unusual", {
        "def fit_exponent": """
x, y = np.log(alphas), np.log(ns)
return np.cov(x, y)[0, 1] / np.var(x, ddof=1)""",
        "def ns_needed": """
errors = []
for ns in NS_GRID:
    errors.append(np.mean([pair_error(method, alpha, ns, rng) for _ in range(REPS)]))
    if errors[-1] <= TARGET:
        break
else:
    return float("nan")
if len(errors) == 1:
    return float(NS_GRID[0])
i = len(errors) - 1
log_ns = np.interp(TARGET, [errors[i], errors[i - 1]], np.log(NS_GRID[[i, i - 1]]))
return float(np.exp(log_ns))"""}),
    A("ex06-intercept", "math", {"def fit_exponent": """
return float(np.polyfit(np.log(alphas), np.log(ns), 1)[1])"""},
      {"ex06-6a-check": r"return the intercept"}),
    A("ex06-sign-flipped", "math", {"def fit_exponent": """
return -float(np.polyfit(np.log(alphas), np.log(ns), 1)[0])"""},
      {"ex06-6a-check": r"flip the sign"}),
    A("ex06-reversed-regression", "math", {"def fit_exponent": """
return float(np.polyfit(np.log(ns), np.log(alphas), 1)[0])"""},
      {"ex06-6a-check": r"reversed regression"}),
    A("ex06-no-interpolation", "math", {"def ns_needed": """
for ns in NS_GRID:
    if np.mean([pair_error(method, alpha, ns, rng) for _ in range(REPS)]) <= TARGET:
        return float(ns)
return float("nan")"""}, {"ex06-6b-scan-check": r"without interpolating"}),
    A("ex06-returns-s", "math", {"def ns_needed": """
previous = None
for ns in NS_GRID:
    err = np.mean([pair_error(method, alpha, ns, rng) for _ in range(REPS)])
    if err <= TARGET:
        if previous is None:
            return float(ns) / N_WORKERS
        ns_before, err_before = previous
        t = (err_before - TARGET) / (err_before - err)
        return float(np.exp(np.log(ns_before) + t * np.log(ns / ns_before))) / N_WORKERS
    previous = (ns, err)
return float("nan")"""}, {"ex06-6b-scan-check": r"return s = ns / n"}),
    A("ex06-one-replicate", "math", {"def ns_needed": """
previous = None
for ns in NS_GRID:
    err = pair_error(method, alpha, ns, rng)
    if err <= TARGET:
        if previous is None:
            return float(ns)
        ns_before, err_before = previous
        t = (err_before - TARGET) / (err_before - err)
        return float(np.exp(np.log(ns_before) + t * np.log(ns / ns_before)))
    previous = (ns, err)
return float("nan")"""}, {"ex06-6b-scan-check": r"one replicate per grid point"}),
    A("ex06-twenty-percent", "math", {"def ns_needed": """
previous = None
for ns in NS_GRID:
    err = np.mean([pair_error(method, alpha, ns, rng) for _ in range(REPS)])
    if err <= 0.2:
        if previous is None:
            return float(ns)
        ns_before, err_before = previous
        t = (err_before - 0.2) / (err_before - err)
        return float(np.exp(np.log(ns_before) + t * np.log(ns / ns_before)))
    previous = (ns, err)
return float("nan")"""}, {"ex06-6b-scan-check": r"20% target"}),
    A("ex06-hard-coded", "process", {"def ns_needed": """
table = {("mv", 0.2): 391.5, ("mv", 0.3): 173.0, ("mv", 0.45): 68.1, ("mv", 0.7): 29.7,
         ("tt2", 0.2): 83.2, ("tt2", 0.3): 57.3, ("tt2", 0.45): 44.6, ("tt2", 0.7): 29.8}
return table.get((method, float(alpha)), 100.0)"""},
      {"ex06-6b-scan-check": r"without calling pair_error"}),
    A("ex06-builds-its-own-model", "process", {"def ns_needed": """
model = toptwo.TopTwoModel.spammer_hammer(N_WORKERS, 50, 3, hammer_fraction=alpha, rng=rng)
return float(4 / alpha ** 2 * model.n_labels / 3)"""}, {"ex06-6b-scan-check": CALLS}),
    A("ex06-float32", "unusual", {"def fit_exponent": """
slope, _ = np.polyfit(np.log(alphas).astype(np.float32), np.log(ns).astype(np.float32), 1)
return np.float32(slope)"""}),
    A("ex06-log10-one-axis", "math", {"def fit_exponent": """
slope, _intercept = np.polyfit(np.log10(alphas), np.log(ns), 1)
return float(slope)"""}, {"ex06-6a-check": r"log10 of alpha"}),
    A("ex06-constant", "math", {"def fit_exponent": """
return -2.0"""}, {"ex06-6a-check": r"ignores its input"}),
    A("ex06-geometric-mean", "math", {"def ns_needed": """
previous = None
for ns in NS_GRID:
    with np.errstate(divide="ignore", invalid="ignore"):
        err = np.exp(np.mean(np.log([pair_error(method, alpha, ns, rng) for _ in range(REPS)])))
    if err <= TARGET:
        if previous is None:
            return float(ns)
        ns_before, err_before = previous
        t = (err_before - TARGET) / (err_before - err)
        return float(np.exp(np.log(ns_before) + t * np.log(ns / ns_before)))
    previous = (ns, err)
return float("nan")"""}, {"ex06-6b-scan-check": r"geometric mean"}),
    A("ex06-calls-the-checks-scan", "process", {"def ns_needed": """
import toptwo.teaching.ex06 as checks_module      # the check's own helpers
return checks_module.check_ns_needed(lambda m, a, r: 1.0)"""},
      {"ex06-6b-scan-check": CALLS}),
]
