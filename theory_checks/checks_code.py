"""The checks bind to the code: the package's functions equal the proved expressions.

The other modules prove the paper's identities about SymPy models of eq. (1). The checks
here evaluate the *package's* implementation (``toptwo``) at exact rational points and
compare it with the same SymPy expressions, so that a change to the code (a wrong constant,
q and 1 − q swapped, a dropped step) fails ``python -m theory_checks`` too. The mutant runner
(``python -m theory_checks.mutate``) shows which code changes these checks catch.

Floating point. ``toptwo`` computes in IEEE doubles; its value at a rational point must equal
the exact rational (or the exact real, for logarithms and exponentials) to a relative error of
``REL_TOL`` = 1e-12 (``SVD_TOL`` = 1e-9 where an SVD is involved). That is thousands of times
the round-off of these short computations and millions of times smaller than the effect of any
semantic change (the smallest difference a mutant makes at these points is above 1e-4), so the
comparison decides equality of the formulas, not of the bits. Labels, argmins and argmaxes are
compared exactly, including the tie rule.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import sympy as sp

from ._core import CHECKS, check, pairs, require
from .checks_algorithm import paper_p_hat
from .checks_divergence import _atoms_subs, kl_direct
from .checks_top_t import corrected_delta_r_other, corrected_other_prob, top_t_probabilities
from .model import answer_probabilities, p, paper_delta_r, paper_shift, q, symbolic_expected_binary, symbolic_r

__all__ = ["REL_TOL", "SVD_TOL", "CODE_CHECKS", "exact_mle_pair"]

#: Relative tolerance for a float computed by ``toptwo`` against the exact value.
REL_TOL = 1e-12
#: The same after a (LAPACK) SVD.
SVD_TOL = 1e-9

#: Rational reliabilities and confusions where the code is evaluated.
P_POINTS = (sp.Integer(0), sp.Rational(1, 4), sp.Rational(3, 5), sp.Rational(9, 10), sp.Integer(1))
Q_POINTS = (sp.Rational(11, 20), sp.Rational(3, 4), sp.Rational(9, 10), sp.Integer(1))


def _toptwo() -> Any:
    import toptwo  # the package under test (imported lazily: `import theory_checks` stays light)

    return toptwo


def _close(value: Any, exact: sp.Expr, what: str, tol: float = REL_TOL) -> None:
    """Require float ``value`` == ``exact`` to relative error ``tol`` (absolute below 1)."""
    x = float(value)
    e = _f(exact)
    require(np.isfinite(x) and abs(x - e) <= tol * max(1.0, abs(e)),
            f"{what}: the code gives {x!r}, the proved expression {exact} = {e!r}")


def _f(x: sp.Expr) -> float:
    """The nearest double to an exact value (rationals exactly rounded, other reals via 30 digits)."""
    x = sp.sympify(x)
    if x.is_Rational:
        return int(x.p) / int(x.q)
    return float(sp.N(x, 30))


@check(
    "code_eq1_answer_distribution",
    statement=(
        "toptwo.label_distribution and TopTwoModel.label_probabilities equal eq. (1)'s mu_(g,h) "
        "(answer_probabilities given an answer) label by label"
    ),
    reference="eq. (1) [eqn:A_dist]; toptwo.model.label_distribution, TopTwoModel.label_probabilities",
    method="code at exact rational points vs the SymPy expression (rel. error <= 1e-12)",
    scope="K=3..6, every ordered pair (g,h), p in {0,1/4,3/5,9/10,1}, q in {11/20,3/4,9/10,1}",
)
def check_code_eq1_answer_distribution(Ks: range = range(3, 7)):
    """Eq. (1) in the code: ``label_distribution`` and ``TopTwoModel.label_probabilities``."""
    tt = _toptwo()
    for K in Ks:
        prs = list(pairs(K))
        g = np.array([a for a, _ in prs])
        h = np.array([b for _, b in prs])
        for qv in Q_POINTS:
            model = tt.TopTwoModel([_f(x) for x in P_POINTS], np.full(len(prs), _f(qv)), np.column_stack([g, h]), K)
            mu_model = model.label_probabilities()                     # (n, m, K)
            for i, pv in enumerate(P_POINTS):
                mu = tt.label_distribution(_f(pv), _f(qv), g, h, K)    # (m, K)
                for j, (a, b) in enumerate(prs):
                    exact = answer_probabilities(K, a, b, p=pv, q=qv, s=sp.Integer(1))
                    for c in range(1, K + 1):
                        where = f"K={K}, (g,h)=({a},{b}), p={pv}, q={qv}, label {c}"
                        _close(mu[j, c - 1], exact[c], f"label_distribution at {where}")
                        _close(mu_model[i, j, c - 1], exact[c], f"TopTwoModel.label_probabilities at {where}")


@check(
    "code_prop1_binary_and_r",
    statement=(
        "toptwo.binary's conversion (binary_sign, to_binary) is Sec. 3's rule; TopTwoModel.r(k), delta_r() and "
        "expected_binary(k, s) equal Prop. 1's r^(k), eq. (2)'s Delta r^(k) and E[A^(k)] summed from eq. (1)"
    ),
    reference="Sec. 3 binary conversion, Prop. 1 [prop:binary], eq. (2) [eqn:delta_r]; toptwo.binary, toptwo.model",
    method="code at exact rational points vs SymPy (rel. error <= 1e-12); conversion table compared exactly",
    scope="K=3..6, every (g,h) and k, p in {0,1/4,3/5,9/10,1}, q in {11/20,3/4,9/10,1}, s in {1/3,1}",
)
def check_code_prop1_binary_and_r(Ks: range = range(3, 7)):
    """Proposition 1 and eq. (2) in the code."""
    tt = _toptwo()
    for K in Ks:
        labels = np.arange(1, K + 1)
        for k in range(1, K):
            signs = tt.binary.binary_sign(labels, k)
            want = [-1 if b <= k else 1 for b in labels]
            require(list(map(float, signs)) == want, f"binary_sign(1..{K}, k={k}) = {list(signs)}, rule gives {want}")
        # to_binary on a matrix holding every label once (and an unanswered entry)
        A = np.array([list(range(1, K + 1)) + [0]])
        for k in range(1, K):
            Ak = tt.to_binary(A, k, n_labels=K).toarray()
            require(Ak.tolist() == [[-1 if b <= k else 1 for b in range(1, K + 1)] + [0]],
                    f"to_binary(k={k}) on labels 1..{K}, 0 gives {Ak.tolist()}")
        prs = list(pairs(K))
        top = np.array(prs)
        for qv in Q_POINTS:
            model = tt.TopTwoModel([_f(x) for x in P_POINTS], np.full(len(prs), _f(qv)), top, K)
            dr = model.delta_r()
            for j, (g, h) in enumerate(prs):
                for k in range(1, K + 1):
                    _close(dr[j, k - 1], paper_delta_r(K, g, h, k, q=qv), f"delta_r at K={K}, ({g},{h}), k={k}, q={qv}")
            for k in range(0, K + 1):
                rk = model.r(k)
                for j, (g, h) in enumerate(prs):
                    _close(rk[j], symbolic_r(K, g, h, k, q=qv), f"TopTwoModel.r({k}) at K={K}, ({g},{h}), q={qv}")
            for sv in ((sp.Rational(1, 3), sp.Integer(1)) if qv == Q_POINTS[0] else (sp.Rational(1, 3),)):
                for k in range(1, K):
                    EA = model.expected_binary(k, _f(sv))
                    for i, pv in enumerate(P_POINTS):
                        for j, (g, h) in enumerate(prs):
                            exact = symbolic_expected_binary(K, g, h, k, p=pv, q=qv, s=sv)
                            _close(EA[i, j], exact, f"expected_binary({k}, s={sv}) at K={K}, ({g},{h}), p={pv}, q={qv}")
                            # and the rule as the code applies it, summed over eq. (1)
                            mu = tt.label_distribution(_f(pv), _f(qv), g, h, K)
                            via_code = _f(sv) * float(np.dot(tt.binary.binary_sign(labels, k), mu))
                            _close(via_code, exact, f"sum_b binary_sign(b,{k}) s mu_b at K={K}, ({g},{h})")
                            _close(EA[i, j] - _f(sv * paper_shift(K, k)), 2 * sv * pv * symbolic_r(K, g, h, k, q=qv),
                                   f"Prop. 1 centring at K={K}, ({g},{h}), k={k}")


#: Reliabilities with three levels so that trimming at eta = 1 (threshold 2/sqrt(16) = 1/2)
#: removes only the first entry of u = p/||p|| (u = 0.83, 0.33, 0.33, 0.08, ...), while half or
#: twice the threshold, or a threshold in 1/n instead of 1/sqrt(n), removes a different set.
TRIM_P = [sp.Integer(1), sp.Rational(2, 5), sp.Rational(2, 5)] + [sp.Rational(1, 10)] * 13


def _population_matrices(tt: Any, K: int, pv: list[sp.Expr], prs: list[tuple[int, int]], qs: list[sp.Expr],
                         s_prime: sp.Expr) -> list[np.ndarray]:
    """E[X^(k)] - s'(K-2k)/K = 2 s' p (r^(k))^T as float matrices, k = 1..K-1 (Prop. 1, exact entries)."""
    out = []
    for k in range(1, K):
        M = np.array([[_f(2 * s_prime * pi * symbolic_r(K, g, h, k, q=qj)) for (g, h), qj in zip(prs, qs)] for pi in pv])
        out.append(M)
    return out


@check(
    "code_algorithm1_population",
    statement=(
        "at the population level (X^(k) = Y^(k) = E[X^(k)] - s'(K-2k)/K = 2 s' p r^T) the package's Algorithm 1 "
        "(spectral_from_matrices: SVD, sign rule, trimming u_i > 2/(eta sqrt n), v = Y^T u~/(2s'), steps 4-6, eq. (4)) "
        "returns (g,h) exactly, l = ||p~||^2/||p|| (p~ = p with the trimmed entries zeroed; = ||p|| without trimming) "
        "and q_hat = q; top_from_projections(v = ||p|| r) returns (g,h), l_j = ||p||, q_hat = q for every pair, and at "
        "q = 1 (h ties with every other label) the smallest label other than g"
    ),
    reference="Alg. 1 [alg:top_two] steps 1-6; eq. (3), eq. (4) [eqn:est_q]; toptwo.spectral",
    method="code on exact population inputs vs exact labels and SymPy values (rel. error <= 1e-9 after the SVD)",
    scope=(
        "K=3..6, every (g,h) with q in {11/20, 3/4, 9/10}; population n=16 with three reliability levels, "
        "eta in {1, 1/10}, s' in {1/8, 1}"
    ),
)
def check_code_algorithm1_population(Ks: range = range(3, 7)):
    """Algorithm 1 steps 2–6 and eq. (4) in the code, fed the population matrices."""
    tt = _toptwo()
    norm = sp.sqrt(sum(x**2 for x in TRIM_P))
    n = len(TRIM_P)
    for K in Ks:
        prs = list(pairs(K))
        for qv in (sp.Rational(11, 20), sp.Rational(3, 4), sp.Rational(9, 10)):
            qs = [qv] * len(prs)
            # steps 4-6 and eq. (4) from exact projections v = ||p|| r
            v = np.array([[_f(norm * symbolic_r(K, g, h, k, q=qv)) for k in range(1, K)] for g, h in prs])
            top, q_raw, _, l_j, l = tt.spectral.top_from_projections(v, 2)[:5]
            require(top.tolist() == [list(gh) for gh in prs], f"eq. (3) on v = ||p|| r at K={K}, q={qv}: {top.tolist()}")
            for j, (g, h) in enumerate(prs):
                _close(l_j[j], norm, f"step 5 l_j at K={K}, ({g},{h}), q={qv}")
                _close(q_raw[j, 0], qv, f"eq. (4) q_hat at K={K}, ({g},{h})")
                _close(q_raw[j, 1], 1 - qv, f"eq. (4) at h (1 - q) at K={K}, ({g},{h})")
            _close(l, norm, f"step 5 l at K={K}")
            # the whole of Algorithm 1 from the population matrices
            for eta, s_prime in ((sp.Integer(1), sp.Rational(1, 8)), (sp.Rational(1, 10), sp.Integer(1))):
                X = _population_matrices(tt, K, TRIM_P, prs, qs, s_prime)
                res = tt.spectral_from_matrices(X, X, _f(s_prime), eta=_f(eta))
                thr = 2 / (eta * sp.sqrt(n))
                kept = [x for x in TRIM_P if x / norm <= thr]
                require(all(abs(_f(x / norm - thr)) > 1e-3 for x in TRIM_P), "trimming test point too close to the threshold")
                l_exact = sum(x**2 for x in kept) / norm
                require(res.top.tolist() == [list(gh) for gh in prs], f"Algorithm 1 labels at K={K}, q={qv}, eta={eta}")
                for kk in range(K - 1):
                    for i, x in enumerate(TRIM_P):
                        _close(res.left_vectors[kk, i], x / norm, f"u^({kk + 1})_{i} (sign rule) at K={K}", SVD_TOL)
                        _close(res.trimmed[kk, i], x / norm if x in kept else 0, f"trimmed u~^({kk + 1})_{i} at eta={eta}", SVD_TOL)
                _close(res.norm_p, l_exact, f"l (estimate of ||p||) at K={K}, eta={eta}, s'={s_prime}", SVD_TOL)
                for j in range(len(prs)):
                    _close(res.confusion_raw[j, 0], qv, f"q_hat at K={K}, task {j}, eta={eta}", SVD_TOL)
        # q = 1: Delta r^(h) = 1/K = Delta r^(c), an exact tie of eq. (3) that goes to the smallest label
        # other than g (the documented tie rule); tie_tol bounds the round-off of v
        v = np.array([[_f(norm * symbolic_r(K, g, h, k, q=sp.Integer(1))) for k in range(1, K)] for g, h in prs])
        top = tt.spectral.top_from_projections(v, 2, tie_tol=1e-12)[0]
        want = [[g, min(c for c in range(1, K + 1) if c != g)] for g, _ in prs]
        require(top.tolist() == want, f"tie rule of eq. (3) at q=1, K={K}: {top.tolist()} instead of {want}")


def _responses_fixture(rng: random.Random, n: int, m: int, K: int, rate: float) -> np.ndarray:
    A = np.zeros((n, m), dtype=np.int64)
    for i in range(n):
        for j in range(m):
            if rng.random() < rate:
                A[i, j] = rng.randint(1, K)
    return A


@check(
    "code_eq5_reliability",
    statement=(
        "toptwo.estimate_reliability is eq. (5) (and its top-T form): p_hat_i = K/(K-T) (hits_i/(m sigma) - T/K) "
        "with m sigma = nnz(A2)/n ('paper'), or hits_i/N_i for 'per_worker'; a hit is an answer in {g_j, h_j}"
    ),
    reference="eq. (5) [eqn:hatpi], Alg. 2 step 3, top-T [eqn:hatpi_T]; toptwo.mle.estimate_reliability",
    method="code vs the exact rational value of the formula on fixed response matrices",
    scope="K=3..6, T=2,3, 7 workers x 25 tasks, 3 fixed response matrices each",
)
def check_code_eq5_reliability():
    """Eq. (5) in the code: hits counted against the given top labels, the normalisation, K/(K−T)."""
    tt = _toptwo()
    rng = random.Random(5)
    for K in range(3, 7):
        for T in (2, 3):
            if T >= K:
                continue
            for rep in range(3):
                n, m = 7, 25
                A = _responses_fixture(rng, n, m, K, 0.5)
                top = np.array([rng.sample(range(1, K + 1), T) for _ in range(m)])
                R = tt.as_responses(A, n_labels=K)
                nnz = int((A > 0).sum())
                hits = [sum(1 for j in range(m) if A[i, j] in top[j]) for i in range(n)]
                N = [int((A[i] > 0).sum()) for i in range(n)]
                p_paper = tt.estimate_reliability(R, top, normalization="paper")
                p_pw = tt.estimate_reliability(R, top, normalization="per_worker")
                Ks = sp.Integer(K)
                for i in range(n):
                    where = f"K={K}, T={T}, fixture {rep}, worker {i}"
                    if T == 2:
                        exact = paper_p_hat(Ks, sp.Integer(hits[i]), sp.Integer(m), sp.Rational(nnz, n * m))
                    else:
                        exact = Ks / (K - T) * (sp.Rational(hits[i] * n, nnz) - sp.Rational(T, K))
                    _close(p_paper[i], exact, f"estimate_reliability(paper) at {where}")
                    if N[i]:
                        _close(p_pw[i], Ks / (K - T) * (sp.Rational(hits[i], N[i]) - sp.Rational(T, K)),
                               f"estimate_reliability(per_worker) at {where}")
                    else:
                        require(np.isnan(p_pw[i]), f"per_worker p_hat of a worker without answers is not NaN at {where}")


def exact_mle_pair(K: int, answers: list[tuple[sp.Expr, int]], qv: sp.Expr) -> tuple[int, int]:
    """argmax over ordered pairs (a, b), a != b, of prod_i P(A_ij | (a, b)) under eq. (1) (exact).

    ``answers`` are (p_i, label) of the workers who answered. Ties go to the smallest a, then
    the smallest b (the package's documented tie rule). The product of the eq. (1) probabilities
    is the likelihood whose logarithm eq. (6) maximises (check ``eq6_loglik_decomposition``).
    """
    best: tuple[sp.Expr, tuple[int, int]] | None = None
    for a, b in sorted(pairs(K)):
        lik = sp.Integer(1)
        for pv, c in answers:
            lik *= answer_probabilities(K, a, b, p=pv, q=qv, s=sp.Integer(1))[c]
        if best is None or lik > best[0]:
            best = (lik, (a, b))
    assert best is not None
    return best[1]


@check(
    "code_eq6_plugin_mle",
    statement=(
        "toptwo.plugin_mle returns, for every task, the exact maximiser of the eq. (1) likelihood over ordered "
        "pairs a != b (equivalently of eq. (6)'s score), ties to the smallest a then b"
    ),
    reference="eq. (6) [eqn:plug-in-mle], Alg. 2 step 4; toptwo.mle.plugin_mle",
    method="exact rational likelihoods of every ordered pair vs the code's labels (exact equality, ties included)",
    scope="K=3,4,5, 6 workers x 40 tasks per K, p in {0,1/10,1/4,1/2,3/4,9/10}, q in {11/20,3/5,3/4,9/10,1}",
)
def check_code_eq6_plugin_mle(Ks: tuple[int, ...] = (3, 4, 5)):
    """Eq. (6) in the code: the plug-in MLE's argmax, including its tie rule."""
    tt = _toptwo()
    rng = random.Random(6)
    p_vals = [sp.Integer(0), sp.Rational(1, 10), sp.Rational(1, 4), sp.Rational(1, 2), sp.Rational(3, 4), sp.Rational(9, 10)]
    q_vals = [sp.Rational(11, 20), sp.Rational(3, 5), sp.Rational(3, 4), sp.Rational(9, 10), sp.Integer(1)]
    for K in Ks:
        n, m = 6, 40
        A = _responses_fixture(rng, n, m, K, 0.6)
        A[:, 0] = 0
        A[0, 0] = 1                     # a task with a single answer (ties among all (1, b))
        pv = [rng.choice(p_vals) for _ in range(n)]
        qv = [rng.choice(q_vals) for _ in range(m)]
        got = tt.plugin_mle(tt.as_responses(A, n_labels=K), np.array([_f(x) for x in pv]), np.array([_f(x) for x in qv]))
        for j in range(m):
            answers = [(pv[i], int(A[i, j])) for i in range(n) if A[i, j] > 0]
            if not answers:
                require(got[j].tolist() == [0, 0], f"task {j} without answers: plugin_mle gives {got[j].tolist()}")
                continue
            want = exact_mle_pair(K, answers, qv[j])
            require(tuple(got[j]) == want, f"plugin_mle at K={K}, task {j} (answers {answers}, q={qv[j]}): "
                    f"{tuple(got[j])}, exact maximiser {want}")


@check(
    "code_top_t_model",
    statement=(
        "top-T in the code (sum_t q_t = 1): TopTwoModel.label_probabilities = p q_t + (1-p)/K at g_t and (1-p)/K "
        "elsewhere; delta_r = 1/K - q_t at g_t, 1/K elsewhere; top_from_projections(v = ||p|| r, T) returns "
        "(g_1..g_T) in order and q_hat_t = q_t (eqn:est_qT with the K/(K-T) step)"
    ),
    reference="App. Top-T [subsec:top_T], [eqn:topk_dist] (corrected), Alg. [alg:top_T], [eqn:est_qT]",
    method="code at exact rational points vs SymPy (rel. error <= 1e-12); labels exactly",
    scope="K=4..6, T=3 (and T=K-1), two placements of the top labels, p in {0,1/4,3/5,9/10,1}",
)
def check_code_top_t_model():
    """The top-T generalisation in the code (the package requires sum_t q_t = 1)."""
    from .checks_top_t import top_labels

    tt = _toptwo()
    for K in range(4, 7):
        for T in sorted({3, K - 1}):
            qvals = [sp.Rational(2 * (T - t) + 1, T * T + 2 * T) for t in range(T)]   # decreasing, sum 1
            require(sum(qvals) == 1 and all(a > b for a, b in zip(qvals, qvals[1:])), "q test point")
            for tops in top_labels(K, T):
                model = tt.TopTwoModel([_f(x) for x in P_POINTS], np.array([[_f(x) for x in qvals]]),
                                       np.array([tops]), K)
                mu = model.label_probabilities()
                probs, qsyms, lam = top_t_probabilities(K, tops, corrected_other_prob)
                sub = dict(zip(qsyms, qvals))
                require(lam.subs(sub) == 0, "leftover mass at the test point")
                dr = model.delta_r()
                for c in range(1, K + 1):
                    want = 1 / sp.Integer(K) - qvals[tops.index(c)] if c in tops else corrected_delta_r_other(K, T, sp.Integer(0))
                    _close(dr[0, c - 1], want, f"top-T delta_r at K={K}, T={T}, tops={tops}, label {c}")
                    for i, pv in enumerate(P_POINTS):
                        _close(mu[i, 0, c - 1], probs[c].subs(sub).subs(p, pv),
                               f"top-T label_probabilities at K={K}, T={T}, tops={tops}, p={pv}, label {c}")
                norm = sp.Rational(3, 2)
                v = np.array([[_f(norm * (sp.Integer(k) / K - sum(qvals[tops.index(c)] for c in range(1, k + 1) if c in tops)))
                               for k in range(1, K)]])
                top, q_raw, _, l_j, l = tt.spectral.top_from_projections(v, T)[:5]
                require(tuple(top[0]) == tuple(tops), f"top-T labels at K={K}, T={T}: {top[0].tolist()}, want {tops}")
                _close(l_j[0], norm, f"top-T step 6 l_j at K={K}, T={T}")
                for t in range(T):
                    _close(q_raw[0, t], qvals[t], f"eqn:est_qT q_hat_{t + 1} at K={K}, T={T}")


@check(
    "code_kl_divergence",
    statement=(
        "toptwo.kl_divergence_per_task(model) = min over (a,b) != (g,h) of (1/n) sum_i KL(mu_(g,h), mu_(a,b)) with "
        "the KL summed label by label (D-bar^(j) of Sec. 5), and kl_divergence_bar = its minimum over tasks"
    ),
    reference="Sec. 5 D-bar; toptwo.model.kl_divergence_per_task, kl_divergence_bar",
    method="code vs the exact expression evaluated to 30 digits (rel. error <= 1e-12)",
    scope="K=3,4, every (g,h) per K, 3 workers p in {1/4,3/5,9/10}, q in {11/20,9/10}",
)
def check_code_kl_divergence():
    """D̄ in the code against the KL sums of eq. (1)'s distributions."""
    tt = _toptwo()
    pv = [sp.Rational(1, 4), sp.Rational(3, 5), sp.Rational(9, 10)]
    for K in (3, 4):
        prs = list(pairs(K))
        for qv in (sp.Rational(11, 20), sp.Rational(9, 10)):
            model = tt.TopTwoModel([_f(x) for x in pv], np.full(len(prs), _f(qv)), np.array(prs), K)
            got = tt.model.kl_divergence_per_task(model)
            exact_all = []
            for j, (g, h) in enumerate(prs):
                best = None
                for a, b in pairs(K):
                    if (a, b) == (g, h):
                        continue
                    expr = kl_direct(K, g, h, a, b)
                    val = sum(expr.subs(_atoms_subs(sp.Integer(K))).subs({p: pi, q: qv}) for pi in pv) / len(pv)
                    v = sp.N(val, 30)
                    best = v if best is None or v < best else best
                _close(got[j], best, f"kl_divergence_per_task at K={K}, (g,h)=({g},{h}), q={qv}")
                exact_all.append(best)
            _close(tt.model.kl_divergence_bar(model), min(exact_all), f"kl_divergence_bar at K={K}, q={qv}")


@check(
    "code_theory_bounds",
    statement=(
        "the bounds in toptwo.theory equal the proved expressions: lemma1_bound (n 2 exp(-(t^2/2)/(m sigma + t/3)), "
        "t = c m sigma d; kappa form n 2 exp(-(3c^2/8) m sigma d^2)), spammer_hammer_error_g (exact Bayes error by "
        "enumeration), minimax_lower_bound_g ((K-1)/K exp(-2 pbar n s), refused above s*), s* inside the certified "
        "bracket, LE_CAM_PINSKER_CONSTANT = 1/2 - sqrt(2)/8, theorem3b_corrected_bound, le_cam_queries, "
        "sign_flip_probability (exact binomial sum)"
    ),
    reference=(
        "Lemma 1 [lem:rec_p], Thm. 3(a)/(b) [thm:converse], footnote l. 276; toptwo.theory"
    ),
    method="code at exact rational points vs SymPy values to 30 digits (rel. error <= 1e-12)",
    scope="K=3..6, m in {50, 400}, sigma in {1/10, 3/10}, d in {1/20, 1/5, 1/2}, n up to 40",
)
def check_code_theory_bounds():  # noqa: C901 - one clause per bound of toptwo.theory
    """The numerical bounds of ``toptwo.theory`` against their SymPy derivations."""
    from .checks_converse import check_theorem3a_rate_threshold, corrected_theorem3b_coefficient, exact_oracle_error

    tt = _toptwo()
    th = tt.theory
    # Lemma 1 (the Bernstein form with its factor 2, and the kappa form)
    for K in range(3, 7):
        c = sp.Rational(K - 2, K)
        for m in (50, 400):
            for sg in (sp.Rational(1, 10), sp.Rational(3, 10)):
                for n in (1, 7):
                    ds = (sp.Rational(1, 20), sp.Rational(1, 5), sp.Rational(1, 2))
                    got_b = th.lemma1_bound(K, m, _f(sg), [_f(d) for d in ds], n_workers=n)
                    got_k = th.lemma1_bound(K, m, _f(sg), [_f(d) for d in ds], n_workers=n, form="kappa")
                    for d, gb, gk in zip(ds, got_b, got_k):
                        t = c * m * sg * d
                        eb = sp.Min(1, n * 2 * sp.exp(-(t**2 / 2) / (m * sg + t / 3)))
                        ek = sp.Min(1, n * 2 * sp.exp(-sp.Rational(3, 8) * c**2 * m * sg * d**2))
                        _close(gb, eb, f"lemma1_bound(K={K}, m={m}, sigma={sg}, d={d}, n={n})")
                        _close(gk, ek, f"lemma1_bound(kappa, K={K}, m={m}, sigma={sg}, d={d}, n={n})")
    # Theorem 3(a): the exact error of the spammer-hammer crowd, the lower bound and s*
    for K in range(3, 6):
        for nh in (0, 1, 3):
            for sv in (sp.Integer(0), sp.Rational(1, 5), sp.Rational(2, 3), sp.Integer(1)):
                _close(th.spammer_hammer_error_g(K, nh, _f(sv)), exact_oracle_error(K, nh + 2, nh, sv),
                       f"spammer_hammer_error_g(K={K}, n_h={nh}, s={sv})")
        for pbar in (sp.Rational(1, 4), sp.Integer(1)):
            n = 40
            for ns in (sp.Integer(1), sp.Rational(15, 2), sp.Integer(30)):
                _close(th.minimax_lower_bound_g(K, _f(pbar), _f(ns), n_workers=n),
                       sp.Rational(K - 1, K) * sp.exp(-2 * pbar * ns), f"minimax_lower_bound_g(K={K}, pbar={pbar}, ns={ns})")
    lo, hi = sp.Rational(79681, 100000), sp.Rational(79682, 100000)
    check_theorem3a_rate_threshold(bracket=(lo, hi))          # the bracket is certified
    for val in (th.theorem3a_max_sampling_rate(), th.THEOREM3A_MAX_SAMPLING_RATE):
        require(_f(lo) < val < _f(hi), f"s* = {val!r} outside the certified bracket ({lo}, {hi})")
    for s_try, ok in ((_f(hi) * 1.001, False), (_f(lo) * 0.999, True)):
        try:
            th.minimax_lower_bound_g(3, 0.5, s_try * 40, n_workers=40)
            accepted = True
        except ValueError:
            accepted = False
        require(accepted == ok, f"minimax_lower_bound_g at s = {s_try!r}: accepted={accepted}, the certified range "
                f"s <= s* in ({lo}, {hi}) says {ok}")
    # Theorem 3(b): Le Cam + Pinsker
    cst = sp.Rational(1, 2) - corrected_theorem3b_coefficient() * sp.sqrt(sp.Rational(1, 4))
    _close(th.LE_CAM_PINSKER_CONSTANT, cst, "LE_CAM_PINSKER_CONSTANT = 1/2 - (sqrt(2)/4) sqrt(1/4)")
    Ds = [sp.Rational(1, 50), sp.Rational(1, 5), sp.Integer(2)]
    for n, sv in ((10, sp.Rational(1, 10)), (40, sp.Rational(1, 2))):
        exact = sum(sp.Max(0, sp.Rational(1, 2) - sp.sqrt(sv * n * D / 8)) for D in Ds) / len(Ds)
        _close(th.theorem3b_corrected_bound(n, _f(sv), [_f(D) for D in Ds]), exact, f"theorem3b_corrected_bound(n={n}, s={sv})")
    for D in Ds:
        for tgt in (sp.Rational(1, 10), sp.Rational(1, 4)):
            _close(th.le_cam_queries(_f(D), _f(tgt)), 8 * (sp.Rational(1, 2) - tgt) ** 2 / D, f"le_cam_queries(D={D}, {tgt})")
    # the sign-rule model: P(h + B < n/2), B ~ Bin(n - h, 1/2), over K-1 independent vectors
    for n, h, v in ((10, 2, 1), (11, 3, 4), (40, 5, 3), (7, 7, 2)):
        one = sum(sp.binomial(n - h, b) for b in range(n - h + 1) if h + b < sp.Rational(n, 2)) / sp.Integer(2) ** (n - h)
        _close(th.sign_flip_probability(n, h, v), 1 - (1 - one) ** v, f"sign_flip_probability(n={n}, h={h}, K-1={v})")


def algorithm1_as_printed(A_B: np.ndarray, A_C: np.ndarray, K: int, eta: float) -> dict[str, np.ndarray]:
    """Algorithm 1 [alg:top_two] steps 2–6 as printed, dense NumPy, written from the paper.

    X^(k) = B^(k) − s'(K−2k)/K 1 1ᵀ with s' = nnz(B)/(nm); u^(k) its leading left singular vector
    with more positive than negative entries (a tie, which the paper leaves open: positive sum); ũ^(k) zeroes u_i > 2/(η√n); v^(k) =
    (C^(k) − s'_C (K−2k)/K 1 1ᵀ)ᵀ ũ^(k)/(2 s'_C) (the factor 2 of check ``algorithm1_scaling``);
    Δv^(k) = v^(k) − v^(k−1) with v^(0) = v^(K) = 0; (ĝ, ĥ) the smallest and second smallest Δv;
    l = mean_j K/(K−2) Σ_{k∉{ĝ,ĥ}} Δv_j^(k); q̂_j = 1/K − Δv_j^(ĝ)/l (eq. (4)).
    """
    n, m = A_B.shape
    sB = (A_B > 0).sum() / (n * m)
    sC = (A_C > 0).sum() / (n * m)
    V = []
    for k in range(1, K):
        shift = (K - 2 * k) / K
        XB = np.where(A_B > 0, np.where(A_B > k, 1.0, -1.0), 0.0) - sB * shift
        XC = np.where(A_C > 0, np.where(A_C > k, 1.0, -1.0), 0.0) - sC * shift
        u = np.linalg.svd(XB)[0][:, 0]
        pos, neg = int((u > 0).sum()), int((u < 0).sum())
        if pos < neg or (pos == neg and u.sum() < 0):   # the paper's rule; a count tie (which the
            u = -u                                      # paper leaves open) by the sign of the sum
        ut = np.where(u > 2 / (eta * np.sqrt(n)), 0.0, u)
        V.append(XC.T @ ut / (2 * sC))
    v = np.column_stack([np.zeros(m), *V, np.zeros(m)])
    dv = np.diff(v, axis=1)
    order = np.argsort(dv, axis=1, kind="stable")
    g, h = order[:, 0], order[:, 1]
    rest = dv.sum(axis=1) - dv[np.arange(m), g] - dv[np.arange(m), h]
    l_j = K / (K - 2) * rest
    l = l_j.mean()
    return {"top": np.column_stack([g, h]) + 1, "q": 1 / K - dv[np.arange(m), g] / l, "l": l, "dv": dv,
            "trimmed": np.array([0])}


@check(
    "code_algorithm1_sparse_path",
    statement=(
        "the package's production Algorithm 1 (spectral_estimate with centering='paper', the sparse solvers, the "
        "sign rule, trimming, step 3's 1/(2s'), steps 4-6, eq. (4)) equals Algorithm 1 as printed (dense NumPy "
        "written from the paper in theory_checks) on sampled data where trimming binds"
    ),
    reference="Alg. 1 [alg:top_two] steps 2-6, eq. (3), eq. (4) [eqn:est_q]; toptwo.spectral.spectral_estimate",
    method=(
        "labels exactly (instances whose Delta v have a margin > 1e-6 to every tie), q_hat and l to 1e-8; at least one "
        "worker trimmed"
    ),
    scope="K=3,4,5; n=30 workers (2 hammers, the rest p in [0, 0.3]), m=120 tasks, s=0.6, eta=1, B != C and B = C",
)
def check_code_algorithm1_sparse_path(Ks: tuple[int, ...] = (3, 4, 5)):
    """The sparse production path of Algorithm 1 against the printed algorithm."""
    tt = _toptwo()
    for K in Ks:
        gen = np.random.default_rng(100 + K)
        n, m = 30, 120
        pvec = np.concatenate([[1.0, 1.0], gen.uniform(0.0, 0.3, n - 2)])
        top = np.array([gen.choice(np.arange(1, K + 1), 2, replace=False) for _ in range(m)])
        qvec = gen.uniform(0.6, 0.9, m)
        # eq. (1) drawn here (not by the package's sampler, which the mutants may change)
        observed = gen.random((n, m)) < 0.6
        reliable = gen.random((n, m)) < pvec[:, None]
        first = gen.random((n, m)) < qvec[None, :]
        noise = gen.integers(1, K + 1, size=(n, m))
        A = np.where(observed, np.where(reliable, np.where(first, top[:, 0], top[:, 1]), noise), 0)
        split = gen.random(A.shape) < 0.5
        for A_B, A_C in ((np.where(split, A, 0), np.where(split, 0, A)), (A, A)):
            ref = algorithm1_as_printed(A_B, A_C, K, eta=1.0)
            srt = np.sort(ref["dv"], axis=1)
            margin = np.min(np.minimum(srt[:, 1] - srt[:, 0], srt[:, 2] - srt[:, 1]))
            require(margin > 1e-6, f"test instance too close to a tie (margin {margin})")
            RB = tt.as_responses(A_B, n_labels=K)
            RC = RB if A_C is A_B else tt.as_responses(A_C, n_labels=K)
            res = tt.spectral_estimate(RB, RC, eta=1.0, centering="paper")
            require(bool((res.trimmed == 0).any() & (res.left_vectors != 0).any()), "no entry trimmed at eta = 1")
            require(np.array_equal(res.top, ref["top"]),
                    f"labels of spectral_estimate differ from Algorithm 1 as printed at K={K} on "
                    f"{int((res.top != ref['top']).any(axis=1).sum())} tasks")
            _close(res.norm_p, ref["l"], f"l at K={K}", SVD_TOL)
            for j in range(m):
                _close(res.confusion_raw[j, 0], ref["q"][j], f"q_hat of task {j} at K={K}", SVD_TOL)




def _reference_instances() -> list[tuple[str, np.ndarray, int, int]]:
    """(name, A, K, seed): random instances of eq. (1) with every worker and task answered, a crowd where
    trimming binds at eta = 1 (three hammers among weak workers) and a spammer-heavy crowd (90 % p = 0)."""
    tt = _toptwo()
    out: list[tuple[str, np.ndarray, int, int]] = []
    seed = 0
    while len(out) < 6:
        g = np.random.default_rng(1000 + seed)
        n, m, K = int(g.integers(6, 16)), int(g.integers(10, 40)), int(g.integers(3, 6))
        model = tt.TopTwoModel.random(n, m, K, reliability_range=(0.2, 1.0), rng=g)
        A = model.sample(float(g.uniform(0.5, 0.9)), rng=g).toarray()
        if (A > 0).any(axis=0).all() and (A > 0).any(axis=1).all():
            out.append((f"random {seed}", A, K, seed))
        seed += 1
    for name, pvec in (("trimming binds", np.r_[1.0, 1.0, 1.0, np.linspace(0.0, 0.2, 27)]),
                    ("90% spammers", np.r_[np.ones(4), np.zeros(36)])):
        g = np.random.default_rng(7)
        K, m = 4, 60
        top = np.array([g.choice(np.arange(1, K + 1), 2, replace=False) for _ in range(m)])
        model = tt.TopTwoModel(pvec, np.full(m, 0.75), top, K)
        A = model.sample(0.8, rng=g).toarray()
        out.append((name, A, K, 11))
    return out


@check(
    "code_default_estimators",
    statement=(
        "the package's default estimators equal their twins written from the paper in toptwo.reference: TopTwo1() "
        "(stacked left vector, observed centring, sign_rule='auto' = the positive-sum rule for a pooled vector, the "
        "paper's rule per k), TopTwo1(eta=1) where trimming binds, TopTwo2() (leave-one-out p_hat) and the "
        "paper-exact TopTwo1/TopTwo2 (per-k vectors, sample splitting, eq. (5) as printed): the same labels, q_hat "
        "and p_hat up to round-off"
    ),
    reference="Alg. 1 [alg:top_two], Alg. 2 [alg:plugin_MLE], eq. (3)-(6); toptwo.reference; design notes (defaults)",
    method="labels exactly; q_hat to 1e-9 absolute; eq. (5) p_hat to 1e-12, the leave-one-out p_hat to 1e-7 relative "
           "(the tolerances of tests/test_reference.py, derived there); resolve_sign_rule's documented mapping",
    scope="6 random instances (6-15 workers, 10-39 tasks, K=3..5), a crowd at "
          "eta = 1 (entries trimmed; 3 hammers, 27 workers p <= 0.2), a crowd of 4 hammers and 36 spammers",
)
def check_code_default_estimators():
    """The defaults (and the paper-exact configurations) against toptwo.reference."""
    tt = _toptwo()
    from toptwo import reference as ref
    from toptwo.spectral import resolve_sign_rule
    from toptwo.theory.montecarlo import PAPER_ALGORITHM1, PAPER_ALGORITHM2

    require(resolve_sign_rule("auto", "per_k") == "paper" and resolve_sign_rule("auto", "stacked") == "sum"
            and resolve_sign_rule("auto", "averaged") == "sum",
            "sign_rule='auto' must be the paper's rule for per-k vectors and the positive-sum rule for a pooled one")
    pooled = {"sample_splitting": False, "centering": "observed", "left_vector": "stacked", "sign_rule": "sum"}
    configs = [
        ("TopTwo1()", lambda s: tt.TopTwo1(rng=s), lambda A, K, s: ref.algorithm1(A, K, rng=s, **pooled)),
        ("TopTwo1(eta=1)", lambda s: tt.TopTwo1(eta=1.0, rng=s),
         lambda A, K, s: ref.algorithm1(A, K, rng=s, eta=1.0, **pooled)),
        ("TopTwo1(left_vector='per_k')", lambda s: tt.TopTwo1(left_vector="per_k", rng=s),
         lambda A, K, s: ref.algorithm1(A, K, rng=s, sample_splitting=False, centering="observed")),
        ("TopTwo1 as printed", lambda s: tt.TopTwo1(rng=s, **PAPER_ALGORITHM1), lambda A, K, s: ref.algorithm1(A, K, rng=s)),
        ("TopTwo2()", lambda s: tt.TopTwo2(rng=s),
         lambda A, K, s: ref.algorithm2(A, K, rng=s, reliability="leave_one_out", **pooled)),
        ("TopTwo2 as printed", lambda s: tt.TopTwo2(rng=s, **PAPER_ALGORITHM2), lambda A, K, s: ref.algorithm2(A, K, rng=s)),
    ]
    trimmed_seen = False
    for label, A, K, seed in _reference_instances():
        for name, make, twin in configs:
            est, out = make(seed).fit(A, K), twin(A, K, seed)
            where = f"{name} on the instance '{label}'"
            require(np.array_equal(est.top_two_, out.top_two), f"{where}: labels differ from toptwo.reference on "
                    f"{int((est.top_two_ != out.top_two).any(axis=1).sum())} tasks")
            q_pkg, q_ref = est.confusion_raw_, out.q_hat
            require(np.array_equal(np.isnan(q_pkg), np.isnan(q_ref)), f"{where}: q_hat undefined on other tasks")
            diff = float(np.nanmax(np.abs(q_pkg - q_ref), initial=0.0))
            require(diff <= 1e-9, f"{where}: |q_hat - q_hat(reference)| = {diff:.2e} > 1e-9")
            if name.startswith("TopTwo2"):
                loo = est.reliability_estimator == "leave_one_out"
                ok = np.allclose(out.p_hat, est.reliability_, rtol=1e-7 if loo else 0.0, atol=1e-12, equal_nan=True)
                require(bool(ok), f"{where}: p_hat differs from the reference (max |diff| "
                        f"{float(np.nanmax(np.abs(out.p_hat - est.reliability_))):.2e})")
            if name == "TopTwo1(eta=1)" and label == "trimming binds":
                res = est.result_
                trimmed_seen = bool(((res.trimmed == 0) & (res.left_vectors != 0)).any())
    require(trimmed_seen, "no entry was trimmed on the crowd meant to make trimming bind")


@check(
    "code_theorem1_decay_axis",
    statement=(
        "toptwo.theory.theorem1_decay (notebook 05's experiment for Theorem 1) runs Algorithm 1 at the sampling rate "
        "s = x/(||p||^2 gap(q)^2), gap(q) = min(2q - 1, 1 - q): Theorem 1's rate variable, with the gap squared"
    ),
    reference="Thm. 1 [thm:main] (the rate s ||p||^2 gap(q)^2, check theorem1_delta1_gap); toptwo.theory.theorem1_decay",
    method="the function's reported sampling rates and ||p||^2 against x/(||p||^2 gap^2) with gap from exact rationals "
           "(rel. error <= 1e-12)",
    scope="n=100 workers, m=20 tasks, K=3, p ~ U(0.5, 1), q in {3/5, 3/4} (both branches of gap), x in {1/2, 1}",
)
def check_code_theorem1_decay_axis():
    """The x axis of ``toptwo.theory.theorem1_decay`` is Theorem 1's s ||p||^2 gap(q)^2."""
    tt = _toptwo()
    import toptwo.theory

    qs = (sp.Rational(3, 5), sp.Rational(3, 4))
    rows = toptwo.theory.theorem1_decay(n_workers=100, n_tasks=20, n_labels=3, reliability_ranges=((0.5, 1.0),),
                                        confusions=tuple(_f(x) for x in qs), x_grid=(0.5, 1.0), n_reps=1, rng=0)
    require(len(rows) == len(qs), f"theorem1_decay returned {len(rows)} rows for {len(qs)} confusions")
    for row, qv in zip(rows, qs):
        gap = sp.Min(2 * qv - 1, 1 - qv)
        for x, s in zip(row["x"], row["sampling_rate"]):
            exact = sp.nsimplify(x) / gap**2
            _close(s * row["norm_p2"], exact, f"theorem1_decay at q={qv}, x={x}: s ||p||^2 (= x/gap^2)")
    del tt


@check(
    "code_eq6_near_tie",
    statement=(
        "eq. (6)'s tie rule treats as tied only scores within its floating-point error bound: on a task whose pair "
        "scores differ by about 1e-12 (20 times that bound), the package's plug-in MLE returns the exact maximiser, "
        "not the smaller label"
    ),
    reference="eq. (6) [eqn:plug-in-mle] and its tie rule; toptwo.mle.plugin_mle",
    method="one task, two workers answering labels 1 and 2, p = (1/2, 1/2 + 1e-12) as doubles, q = 3/4, K = 3; the "
           "exact maximiser over the 6 ordered pairs by SymPy at the doubles' exact rational values (40 digits)",
    scope="K=3, n=2, m=1",
)
def check_code_eq6_near_tie():
    """A near tie of eq. (6) is decided by the exact scores, not by the tie rule."""
    tt = _toptwo()
    K = 3
    pv = np.array([0.5, 0.5 + 1e-12])
    qv = np.array([0.75])
    A = tt.as_responses(np.array([[1], [2]]), n_labels=K)
    got = tuple(int(x) for x in tt.plugin_mle(A, pv, qv)[0])
    P = [sp.Rational(float(x)) for x in pv]
    Q = sp.Rational(float(qv[0]))
    w = [K * x / (1 - x) for x in P]
    answers = (1, 2)

    def score(a: int, b: int) -> sp.Expr:
        return sp.Add(*[sp.log(1 + wi * Q) * int(ans == a) + sp.log(1 + wi * (1 - Q)) * int(ans == b)
                        for wi, ans in zip(w, answers)])

    scores = {(a, b): sp.N(score(a, b), 40) for a in range(1, K + 1) for b in range(1, K + 1) if a != b}
    best = max(scores, key=lambda ab: scores[ab])
    gap = float(scores[best] - sorted(scores.values())[-2])
    require(gap > 1e-13, f"test instance: the best pair leads by {gap:.2e} only")
    require(got == best, f"plugin_mle on a near tie (lead {gap:.2e}): {got}, the exact maximiser {best}")


#: The checks of this module (their mutants are source mutants: ``theory_checks.mutate``).
CODE_CHECKS = tuple(name for name in CHECKS if name.startswith("code_"))
