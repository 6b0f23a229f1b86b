"""Claims 5–7 and 12: Algorithm 1 at the population level, eq. (5), eq. (6), the factor 2 in step 3."""

from __future__ import annotations

from typing import Callable

import sympy as sp

from ._core import check, pairs, require_zero
from .model import answer_probabilities, p, paper_shift, q, s, s1, symbolic_delta_r, symbolic_expected_binary, symbolic_r

#: ‖p‖₂ as a positive symbol (population-level Algorithm 1).
norm_p = sp.Symbol("norm_p", positive=True)
K_sym = sp.Symbol("K", positive=True, integer=True)
m_sym = sp.Symbol("m", positive=True, integer=True)


def paper_step5_factor(K: sp.Expr) -> sp.Expr:
    """K/(K−2), Algorithm 1 step 5 [alg:top_two]."""
    return K / (K - 2)


def paper_q_hat(K: sp.Expr, dv_g: sp.Expr, l: sp.Expr) -> sp.Expr:
    """q̂_j = 1/K − Δv^(ĝ)/l, eq. (4) [eqn:est_q]."""
    return 1 / K - dv_g / l


def population_algorithm1(
    K: int, g: int, h: int, scale: sp.Expr, step5_factor=paper_step5_factor, q_hat=paper_q_hat
) -> tuple[sp.Expr, sp.Expr]:
    """(l_j, q̂_j) of Algorithm 1 steps 5–6 when v^(k) = scale · r^(k) exactly (ĝ = g, ĥ = h)."""
    Ks = sp.Integer(K)
    dv = [scale * d for d in symbolic_delta_r(K, g, h)]
    l = step5_factor(Ks) * sum(dv[k - 1] for k in range(1, K + 1) if k not in (g, h))
    return sp.expand(l), q_hat(Ks, dv[g - 1], l)


@check(
    "algorithm1_population",
    statement="with v^(k) = ||p|| r^(k): l_j = K/(K-2) sum_{k!=g,h} Delta v^(k) = ||p|| and q_hat_j = 1/K - Delta v^(g)/l = q_j",
    reference="Alg. 1 [alg:top_two] steps 5-6, eq. (4) [eqn:est_q]",
    method="cancel(lhs-rhs)==0 (argmin steps: see eq2_delta_r_and_ordering)",
    scope="exhaustive K=3..8, all g!=h; symbolic ||p||, q",
)
def check_algorithm1_population(
    step5_factor: Callable[[sp.Expr], sp.Expr] = paper_step5_factor,
    q_hat: Callable[[sp.Expr, sp.Expr, sp.Expr], sp.Expr] = paper_q_hat,
    Ks: range = range(3, 9),
):
    """Algorithm 1 [alg:top_two] recovers ‖p‖₂ and q exactly at the population level.

    Parameters
    ----------
    step5_factor
        Claimed factor of step 5 as a function of K (default K/(K−2)).
    q_hat
        Claimed ``q_hat(K, Δv^(g), l)`` (default eq. (4)).
    Ks
        The numbers of choices K checked exhaustively.
    """
    for K in Ks:
        for g, h in pairs(K):
            l, qh = population_algorithm1(K, g, h, norm_p, step5_factor, q_hat)
            require_zero(l - norm_p, f"step 5 l_j vs ||p|| at K={K}, (g,h)=({g},{h})")
            require_zero(qh - q, f"eq. (4) q_hat vs q at K={K}, (g,h)=({g},{h})")


def paper_p_hat(K: sp.Expr, hits: sp.Expr, m: sp.Expr, sigma: sp.Expr) -> sp.Expr:
    """p̂_i = K/(K−2) · (hits/(m σ) − 2/K) with σ = s(1 − s₁), eq. (5) [eqn:hatpi]."""
    return K / (K - 2) * (hits / (m * sigma) - 2 / K)


def paper_p_hat_variance(K: sp.Expr, m: sp.Expr, sigma: sp.Expr) -> sp.Expr:
    """Var(p̂_i) = (K/(K−2))² π(1 − π)/(m σ²), π = σ((K−2)p + 2)/K (given correct top two)."""
    pi = sigma * ((K - 2) * p + 2) / K
    return (K / (K - 2)) ** 2 * pi * (1 - pi) / (m * sigma**2)


@check(
    "eq5_unbiased_and_variance",
    statement=(
        "given (g_hat,h_hat)=(g,h): P(A2_ij in {g,h}) = s(1-s1)((K-2)p/K + 2/K), E[p_hat_i] = p_i, "
        "Var(p_hat_i) = (K/(K-2))^2 pi(1-pi)/(m s^2(1-s1)^2) with pi = s(1-s1)((K-2)p+2)/K"
    ),
    reference="eq. (5) [eqn:hatpi] (mean and variance; Lemma 1's concentration: check lemma1_bernstein)",
    method="cancel(lhs-rhs)==0; mean by linearity (symbolic m), variance by summing the Binomial(m, pi) pmf",
    scope="symbolic K, p, q, s, s1 (mean: symbolic m; variance: m=1..4); hit probability from eq. (1) at K=3..7",
)
def check_eq5_unbiased_and_variance(
    p_hat: Callable[..., sp.Expr] = paper_p_hat,
    variance: Callable[..., sp.Expr] = paper_p_hat_variance,
):
    """Eq. (5) [eqn:hatpi]: the reliability estimator is unbiased; its exact variance.

    Parameters
    ----------
    p_hat
        Claimed estimator ``p_hat(K, hits, m, sigma)`` (default eq. (5)).
    variance
        Claimed ``variance(K, m, sigma)`` of ``p_hat``.
    """
    sigma = s * (1 - s1)  # A2 keeps an assigned answer w.p. 1 - s1
    K = K_sym
    pi = sigma * ((K - 2) * p + 2) / K
    # pi is the probability of hitting g or h under eq. (1) with s -> s(1 - s1); concrete K enumerates labels.
    for Kc in range(3, 8):
        for g, h in ((1, 2), (Kc, 1)):
            probs = answer_probabilities(Kc, g, h, s=sigma)
            require_zero(probs[g] + probs[h] - pi.subs(K, Kc), f"P(A2 in {{g,h}}) at K={Kc}")
    # Mean: E[hits] = m pi and p_hat is affine in hits.
    mean = p_hat(K, m_sym * pi, m_sym, sigma)
    require_zero(mean - p, "E[p_hat_i] - p_i")
    # Variance: exact enumeration of hits ~ Binomial(m, pi). To keep the algebra small, the hit
    # probability is an atom P and p is eliminated through p = (K P/sigma - 2)/(K - 2).
    P, sg = sp.symbols("P sigma", positive=True)
    p_of_P = (K * P / sg - 2) / (K - 2)
    require_zero(pi.subs(sigma, sg).subs(p, p_of_P) - P, "p(P) inverts P(p)")
    for m in range(1, 5):
        pmf = [sp.binomial(m, t) * P**t * (1 - P) ** (m - t) for t in range(m + 1)]
        values = [p_hat(K, sp.Integer(t), sp.Integer(m), sg) for t in range(m + 1)]
        mu = sum(w * v for w, v in zip(pmf, values))
        require_zero(mu - p_of_P, f"E[p_hat] by enumeration at m={m}")
        var = sum(w * (v - p_of_P) ** 2 for w, v in zip(pmf, values))
        claimed = variance(K, sp.Integer(m), sg).subs(p, p_of_P)
        require_zero(var - claimed, f"Var(p_hat) at m={m}")


def paper_mle_weights(K: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """Weights of eq. (6): (Kpq/(1−p) + 1, Kp(1−q)/(1−p) + 1) [eqn:plug-in-mle]."""
    return K * p * q / (1 - p) + 1, K * p * (1 - q) / (1 - p) + 1


@check(
    "eq6_loglik_decomposition",
    statement=(
        "log P(A_ij=k | (a,b)) = 1(k=a) log(Kpq/(1-p)+1) + 1(k=b) log(Kp(1-q)/(1-p)+1) + log(s(1-p)/K) for k!=0, "
        "and log(1-s) for k=0: the last terms do not depend on (a,b)"
    ),
    reference="eq. (6) [eqn:plug-in-mle]",
    method="cancel(P/(w_a^[k=a] w_b^[k=b]) - s(1-p)/K)==0 for every (a,b) and answer k",
    scope="exhaustive K=3..6, all a!=b, all answers k; symbolic p, q, s",
)
def check_eq6_loglik_decomposition(weights: Callable[[sp.Expr], tuple[sp.Expr, sp.Expr]] = paper_mle_weights):
    """Eq. (6): the per-task log-likelihood is the plug-in objective plus (a, b)-free terms.

    Summing the per-answer identity over workers i gives
    Σ_i log P(A_ij | p, q_j, (a, b)) = objective of eq. (6) + Σ_i c_i, with c_i = log(s(1 − p_i)/K)
    or log(1 − s) — independent of (a, b), so both have the same argmax.

    Parameters
    ----------
    weights
        Claimed ``K -> (w_a, w_b)``.
    """
    for K in range(3, 7):
        w_a, w_b = weights(sp.Integer(K))
        for a, b in pairs(K):
            probs = answer_probabilities(K, a, b)
            require_zero(probs[0] - (1 - s), f"P(A=0) at K={K}")
            for k in range(1, K + 1):
                factor = (w_a if k == a else 1) * (w_b if k == b else 1)
                require_zero(
                    probs[k] / factor - s * (1 - p) / K,
                    f"P(A={k} | (a,b)=({a},{b})) / weight at K={K}",
                )


@check(
    "algorithm1_scaling",
    statement=(
        "with s' = s s1/2: E[X^(k)] = 2 s' p (r^(k))^T; v^(k) = (Y^(k))^T u/s' -> 2||p|| r^(k), so l -> 2||p|| "
        "while (g_hat, h_hat) and q_hat are unchanged; v^(k) = (Y^(k))^T u/(2s') -> ||p|| r^(k) and l -> ||p||"
    ),
    reference="Sec. 4.1 [sec:stage1], Alg. 1 [alg:top_two] step 3, App. [app:thm:main]",
    method="entrywise expand(lhs-rhs)==0 for E[X]; v = E[Y]^T p/||p|| with sqrt kept exact; cancel for l, q_hat",
    scope="3 workers x 4 tasks, K=5, symbolic p1..p3, q1..q4, s, s1; steps 5-6 exhaustive K=3..8 with symbolic scale c",
)
def check_algorithm1_scaling(expected_factor: sp.Expr = sp.Integer(2)):
    """Claim 12: the factor 2 between Proposition 1 and Sec. 4.1, and what it reaches.

    B keeps each entry of A¹ w.p. 1/2 and A¹ keeps each entry of A w.p. s₁, so B is eq. (1)
    with s replaced by s' = s s₁/2 and Proposition 1 applies with s'.

    Parameters
    ----------
    expected_factor
        Claimed c in E[X^(k)] = c s' p (r^(k))ᵀ; the paper's Sec. 4.1 says 1, Proposition 1 gives 2.
    """
    from .checks_model import POP_K, POP_PAIRS

    s_prime = s * s1 / 2
    ps = sp.symbols("p1:4", positive=True)
    qs = sp.symbols("q1:5", positive=True)
    norm = sp.sqrt(sum(x**2 for x in ps))
    u = sp.Matrix(ps) / norm
    for k in range(1, POP_K):
        EX = sp.Matrix(
            3,
            4,
            lambda i, j: symbolic_expected_binary(POP_K, *POP_PAIRS[j], k, p=ps[i], q=qs[j], s=s_prime)
            - s_prime * paper_shift(POP_K, k),
        )
        r = sp.Matrix([symbolic_r(POP_K, *gh, k, q=qj) for gh, qj in zip(POP_PAIRS, qs)])
        for i in range(3):
            for j in range(4):
                require_zero(
                    EX[i, j] - expected_factor * s_prime * ps[i] * r[j],
                    f"E[X^({k})]_{{{i},{j}}} vs {expected_factor} s' p_i r_j",
                )
        for divisor, scale in ((s_prime, 2), (2 * s_prime, 1)):
            v = EX.T * u / divisor
            for j in range(4):
                require_zero(sp.expand(v[j] * norm) - sp.expand(scale * norm**2 * r[j]), f"v^({k})_{j} * ||p||")
    # Steps 4-6 with v = c ||p|| r for an arbitrary scale c > 0: argmin unchanged, l = c ||p||, q_hat = q.
    c = sp.Symbol("c", positive=True)
    for K in range(3, 9):
        for g, h in pairs(K):
            l, qh = population_algorithm1(K, g, h, c * norm_p)
            require_zero(l - c * norm_p, f"l with scale c at K={K}, ({g},{h})")
            require_zero(qh - q, f"q_hat with scale c at K={K}, ({g},{h})")
    note = (
        "Prop. 1 with s' = s s1/2 gives E[X^(k)] = 2 s' p (r^(k))^T, not s' p (r^(k))^T as Sec. 4.1 and "
        "App. [app:thm:main] write (the appendix's v = (2/s) Y^T u and Lemma eqn:mainlem_part1's (1/s) are "
        "mutually inconsistent too). With Alg. 1 step 3 as printed, v^(k) = (Y^(k))^T u/s' estimates 2||p|| r^(k), "
        "so l_j estimates 2||p||_2; the argmins (g_hat, h_hat) and q_hat (a ratio) are unaffected. Correct: "
        "v^(k) = (Y^(k))^T u/(2 s') estimates ||p|| r^(k) and l estimates ||p||_2."
    )
    return {"note": note}
