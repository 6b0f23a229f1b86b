"""The arithmetic inside the probabilistic statements: Lemma 1, Theorem 1, Theorem 2, Cor. 2 vs Thm. 3(b).

These checks verify the *arithmetic* of the concentration steps (Bernstein exponents, constants,
case boundaries, union bounds) exactly; the probability statements themselves are measured by
Monte Carlo in ``benchmarks/theorems_mc.py``.
"""

from __future__ import annotations

from typing import Callable

import sympy as sp

from ._core import ClaimFailed, check, require, require_zero
from .checks_algorithm import paper_p_hat
from .checks_converse import exp_bounds
from .model import p, q, symbolic_r

K_s, m_s, sigma, delta, t_s = sp.symbols("K m sigma delta t", positive=True)


def paper_lemma1_deviation(K: sp.Expr, m: sp.Expr, sg: sp.Expr, d: sp.Expr) -> sp.Expr:
    """|hits − m π| threshold equivalent to |p̂ − p| > δ₂: (K−2) m σ δ₂ / K (proof of Lemma 1)."""
    return (K - 2) * m * sg * d / K


def lemma1_kappa(c: sp.Expr) -> sp.Expr:
    """κ = 3c²/8 (c = (K−2)/K): Bernstein's exponent is >= κ m σ δ₂² for c δ₂ <= 1."""
    return 3 * c**2 / 8


@check(
    "lemma1_bernstein",
    statement=(
        "given correct pairs, |p_hat_i - p_i| > d <=> |hits - m pi| > (K-2) m sigma d/K (sigma = s(1-s1)); each "
        "indicator has variance <= pi <= sigma; Bernstein's exponent (t^2/2)/(m sigma + t/3) at t = c m sigma d, "
        "c = (K-2)/K, is >= (3c^2/8) m sigma d^2 for c d <= 1 and is Theta(d^2), not Theta(d); the two-sided "
        "bound needs the factor 2; n 2 exp(-(3c^2/8) m sigma d^2) = eps at m sigma = 8 log(2n/eps)/(3 c^2 d^2)"
    ),
    reference="Lemma 1 [lem:rec_p], proof (App., l. 1286-1324), eq. (5) [eqn:hatpi]",
    method=(
        "cancel(lhs-rhs)==0 for the deviation identity and the exponent factorisation (1-cd)/(8(1+cd/3)); "
        "limit of exponent/d^power as d->0; two-sided factor by a Bernoulli(1/2) example with a rational bound on exp"
    ),
    scope="symbolic K, m, sigma, p, d; kappa at c = (K-2)/K, K=3..12",
)
def check_lemma1_bernstein(
    deviation: Callable[..., sp.Expr] = paper_lemma1_deviation,
    kappa: Callable[[sp.Expr], sp.Expr] = lemma1_kappa,
    exponent_power: int = 2,
    prefactor: sp.Expr = sp.Integer(2),
):
    """Lemma 1: the Bernstein step behind ‖p̂ − p‖∞ < δ₂.

    Parameters
    ----------
    deviation
        Claimed ``deviation(K, m, σ, δ)``: |p̂ − p| > δ ⟺ |hits − mπ| > deviation.
    kappa
        Claimed κ(c) in exponent >= κ m σ δ² (c = (K−2)/K).
    exponent_power
        Claimed power of δ₂ in the exponent (the lemma: 2; the proof's l. 1287: 1).
    prefactor
        Claimed constant in front of exp(−exponent) for the two-sided event.
    """
    hits = sp.Symbol("hits", positive=True)
    pi = sigma * ((K_s - 2) * p + 2) / K_s
    # p_hat - p = K/((K-2) m sigma) (hits - m pi): the deviation event is |hits - m pi| > (K-2) m sigma d/K.
    require_zero(paper_p_hat(K_s, hits, m_s, sigma) - p - K_s / ((K_s - 2) * m_s * sigma) * (hits - m_s * pi), "p_hat - p")
    require_zero(deviation(K_s, m_s, sigma, delta) - (K_s - 2) * m_s * sigma * delta / K_s, "deviation threshold")
    # Var(1(hit)) = pi(1-pi) <= pi <= sigma: sigma - pi = sigma (K-2)(1-p)/K >= 0.
    require_zero(sigma - pi - sigma * (K_s - 2) * (1 - p) / K_s, "sigma - pi")
    c = sp.Symbol("c", positive=True)
    tt = c * m_s * sigma * delta
    exponent = (tt**2 / 2) / (m_s * sigma + tt / 3)
    require_zero(
        exponent - lemma1_kappa(c) * m_s * sigma * delta**2
        - c**2 * m_s * sigma * delta**2 * (1 - c * delta) / (8 * (1 + c * delta / 3)),
        "Bernstein exponent - (3c^2/8) m sigma d^2 = c^2 m sigma d^2 (1-cd)/(8(1+cd/3))",
    )
    # exponent/(m sigma d^2) = (c^2/2)/(1 + c d/3) decreases in d; at c d = 1 it is 3c^2/8: the best kappa.
    for K in range(3, 13):
        cv = sp.Rational(K - 2, K)
        require(sp.nsimplify(kappa(cv)) <= lemma1_kappa(cv),
                f"kappa({cv}) = {kappa(cv)} exceeds 3c^2/8 = {lemma1_kappa(cv)}, the exponent's value at c d = 1")
        require(sp.nsimplify(kappa(cv)) > 0, f"kappa({cv}) must be > 0")
    lim = sp.limit(exponent / (m_s * sigma * delta**exponent_power), delta, 0)
    require(lim.is_positive and lim.is_finite,
            f"exponent / (m sigma d^{exponent_power}) -> {lim} as d -> 0: the exponent is not Theta(d^{exponent_power})")
    # Two-sided: m=1, sigma=1, K=4, p=0 gives pi=1/2, p_hat = +-1, so P(|p_hat - p| > 9/10) = 1; the bound
    # prefactor * exp(-E) must be >= 1 with E = 81/920 (t = c d = 9/20), i.e. exp(E) <= prefactor.
    E = exponent.subs({c: sp.Rational(1, 2), m_s: 1, sigma: 1, delta: sp.Rational(9, 10)})
    require(E == sp.Rational(81, 920), f"example exponent {E}")
    e_lo, e_hi = exp_bounds(E)
    pf = sp.nsimplify(prefactor)
    require(pf >= e_lo, f"two-sided bound {pf} exp(-E) < 1 = P(|p_hat - p| > 9/10) in the example (E = {E})")
    require(pf >= e_hi, f"could not decide {pf} exp(-{E}) >= 1")
    # Union bound over n workers and the resulting sample size.
    n, eps = sp.symbols("n epsilon", positive=True)
    msig = 8 * sp.log(2 * n / eps) / (3 * c**2 * delta**2)
    require_zero(sp.simplify(n * 2 * sp.exp(-lemma1_kappa(c) * msig * delta**2) - eps), "union bound = eps")
    note = (
        "Lemma 1's arithmetic holds with two slips: the proof's Bernstein bound for the two-sided event "
        "|sum - mean| > t lacks the factor 2 (a Bernoulli(1/2) example violates it without), and l. 1287 writes "
        "s(1-s1) = Omega(log(n/eps)/(delta_2 m)) where the exponent is Theta(m s(1-s1) delta_2^2), as the lemma states. "
        "Explicitly: P(|p_hat_i - p_i| >= d) <= 2 exp(-(3c^2/8) m s(1-s1) d^2), c = (K-2)/K, for d <= 1/c, so "
        "m s(1-s1) >= 8 log(2n/eps)/(3 c^2 d^2) suffices for the sup norm (benchmarks/theorems_mc.py measures it)."
    )
    return {"note": note}


def paper_gap_bound(qv: sp.Expr) -> sp.Expr:
    """δ₁ < min{2q − 1, 1 − q}/4: what the ordering step of Theorem 1's proof (l. 1198) needs."""
    return sp.Min(2 * qv - 1, 1 - qv) / 4


@check(
    "theorem1_delta1_gap",
    statement=(
        "if |v^(k) - ||p|| r^(k)| <= ||p|| d1 for all k, then Delta v^(g) < Delta v^(h) < Delta v^(c) for every "
        "perturbation iff 4 d1 < min(2q-1, 1-q): sufficient by the gaps 2q-1 and 1-q of eq. (2); necessary by an "
        "explicit perturbation (K=5, g=2, h=4) that ties at d1 = min(...)/4. So Theorem 1's 'any d1 > 0' needs "
        "d1 < min{2q-1, 1-q}/4 and its rate s ||p||^2 >~ log(K/eps)/d1^2 hides a 16/gap(q)^2 factor"
    ),
    reference="Thm. 1 [thm:main], proof (App., l. 1193-1201), eq. (2) [eqn:delta_r]",
    method="exact rationals: r^(k) from Prop. 1, worst-case perturbations eps_k in {-d1, d1}; sign of gaps",
    scope="K=5, (g,h)=(2,4); q in {11/20, 3/5, 2/3, 7/10, 3/4, 4/5, 9/10, 19/20}",
)
def check_theorem1_delta1_gap(bound: Callable[[sp.Expr], sp.Expr] | None = paper_gap_bound):
    """The range of δ₁ for which Theorem 1's ordering step holds.

    Parameters
    ----------
    bound
        Claimed ``bound(q)``: the ordering is guaranteed for every δ₁ < bound(q); ``None``
        stands for the theorem's "any δ₁ > 0".
    """
    K, g, h = 5, 2, 4
    for qv in (sp.Rational(11, 20), sp.Rational(3, 5), sp.Rational(2, 3), sp.Rational(7, 10), sp.Rational(3, 4),
               sp.Rational(4, 5), sp.Rational(9, 10), sp.Rational(19, 20)):
        gap = min(2 * qv - 1, 1 - qv)
        B = sp.oo if bound is None else sp.nsimplify(bound(qv))
        # Sufficiency at every d1 < gap/4: |e_k| <= 2 d1 so the gaps shrink by at most 4 d1.
        r = [sp.Integer(0)] + [symbolic_r(K, g, h, k, q=qv) for k in range(1, K)] + [sp.Integer(0)]
        dr = [r[k] - r[k - 1] for k in range(1, K + 1)]
        require(dr[h - 1] - dr[g - 1] == 2 * qv - 1 and dr[2] - dr[h - 1] == 1 - qv, f"eq. (2) gaps at q={qv}")
        # Necessity: at d1 = gap/4 an explicit perturbation with |eps_k| <= d1 ties the ordering.
        d1 = gap / 4
        eps = ([-d1, d1, d1, -d1] if gap == 2 * qv - 1 else [0, d1, -d1, d1])  # eps_1..eps_4; eps_0 = eps_5 = 0
        require(all(abs(e) <= d1 for e in eps), "perturbation out of range")
        v = [sp.Integer(0)] + [r[k] + eps[k - 1] for k in range(1, K)] + [sp.Integer(0)]
        dv = [v[k] - v[k - 1] for k in range(1, K + 1)]
        ordered = dv[g - 1] < dv[h - 1] and all(dv[h - 1] < dv[c - 1] for c in range(1, K + 1) if c not in (g, h))
        require(not ordered, f"the perturbation {eps} at q={qv} does not tie the ordering")
        require(B >= d1 or B == d1, f"claimed bound {B} at q={qv} is not the exact threshold {d1} (sufficient but not tight)")
        if B > d1:
            raise ClaimFailed(
                f"at q={qv}, d1 = {d1} < claimed bound {B}: the perturbation eps = {eps} gives Delta v = {dv}, "
                f"so (g_hat, h_hat) = ({g}, {h}) is not guaranteed (needs d1 < min(2q-1, 1-q)/4 = {d1})"
            )
    note = (
        "Theorem 1 says 'for any eps, delta_1 > 0', but its proof (l. 1198) orders Delta v only when the Delta v "
        "error 2 delta_1 is below min{(2q_j-1)/2, (1-q_j)/2}, i.e. delta_1 < min{2q_j-1, 1-q_j}/4, and this is "
        "tight (an explicit perturbation ties at equality). For (g_hat, h_hat) the rate is therefore s ||p||^2 >~ "
        "16 log(K/eps)/min{2q-1, 1-q}^2: the constant hides 1/gap(q)^2 (benchmarks/theorems_mc.py measures the "
        "exponential decay in s ||p||^2 gap^2)."
    )
    return {"note": note}


@check(
    "theorem2_constants",
    statement=(
        "Bernstein for sum l_i >= sD/2 with E l^2 <= 2L/(1-rho) s KL, |l - El| <= 2L: exponent sD/(c(rho) L) with "
        "c(rho) = 8(2/(1-rho) + 1/3), increasing in rho; eq. (1) forces rho <= min_c mu_c <= 1/K <= 1/3 (K >= 3; "
        "attained at p = 0), so c <= 80/3 < 33 and the printed 33 holds; 33 holds exactly for rho <= 43/91 (the "
        "proof's 'rho <= 1/2' alone would need 104/3); l_i ranges over [-L, L] (L = log(1/rho)), not [0, L]; "
        "eqn:Aij_cont's exponent is 3ns/28; ns(D/2 - 3 d3/(rho - d3)) > 0 iff d3 < rho D/(6+D); "
        "|mu_hat - mu| <= 2 d + d^2 <= 4 d"
    ),
    reference="Thm. 2 [thm:plugmin_mle], proof (App., l. 1340-1470: eqn:prob_E, eqn:Aij_cont, delta_3), eq. (1)",
    method="exact rational/symbolic arithmetic; derivative signs by factorisation; rho <= 1/K from eq. (1)'s "
           "probabilities summing to 1 (exhaustive K=3..8); an explicit K=3 example for l_i < 0",
    scope="symbolic s, D, L, rho, n, delta_3; K=3..8 for rho <= 1/K; K=3 example p=1/2, q=3/4",
)
def check_theorem2_constants(
    bernstein_constant: sp.Expr = sp.Integer(33),
    rho_max: Callable[[int], sp.Expr] = lambda K: sp.Rational(1, K),
    constant_threshold: sp.Expr = sp.Rational(43, 91),
    count_exponent: sp.Expr = sp.Rational(3, 28),
    delta3_boundary: Callable[[sp.Expr, sp.Expr], sp.Expr] = lambda rho, D: rho * D / (6 + D),
    l_lower: Callable[[sp.Expr], sp.Expr] = lambda L: -L,
    mu_error_factor: sp.Expr = sp.Integer(4),
):
    """Constants of the proof of Theorem 2.

    Parameters
    ----------
    bernstein_constant
        Claimed C in P[E] >= 1 − mK² exp(−n s D̄/(C log(1/ρ))) (the paper: 33).
    rho_max
        Claimed upper bound on ρ as a function of K (eq. (1) gives 1/K; the proof's step says 1/2).
    constant_threshold
        Claimed largest ρ at which C suffices (43/91 for C = 33).
    count_exponent
        Claimed exponent per n s in eqn:Aij_cont (3/28).
    delta3_boundary
        Claimed ``boundary(ρ, D)`` with Q > 0 iff δ₃ < boundary.
    l_lower
        Claimed lower end of the range of l_i as a function of L = log(1/ρ) (the paper: 0).
    mu_error_factor
        Claimed F in |μ̂ − μ| <= F δ (the paper: 4).
    """
    from .model import answer_probabilities

    sD, L, rho = sp.symbols("sD L rho", positive=True)
    tt = sD / 2
    expo = (tt**2 / 2) / (2 * L / (1 - rho) * sD + sp.Rational(1, 3) * 2 * L * tt)
    ratio = sp.cancel(expo * L / sD)  # = 1/c(rho), free of s, D, L
    require(not ratio.has(L) and not ratio.has(sD), f"exponent L/(sD) depends on s, D or L: {ratio}")
    c_rho = 8 * (2 / (1 - rho) + sp.Rational(1, 3))
    require_zero(ratio - 1 / c_rho, "exponent L/(sD) = 1/(8(2/(1-rho) + 1/3))")
    # dc/drho = 16/(1-rho)^2 > 0: the constant grows with rho, so its worst case is the largest feasible rho.
    require_zero(sp.diff(c_rho, rho) - 16 / (1 - rho) ** 2, "derivative in rho")
    # eq. (1): the K answer probabilities (given an answer) sum to 1, so their minimum is <= 1/K; at p = 0 they
    # all equal 1/K, so sup rho = 1/K exactly; over K >= 3 the largest is 1/3.
    worst_rho = sp.Integer(0)
    for K in range(3, 9):
        mus = answer_probabilities(K, 1, 2, s=sp.Integer(1))
        labels = [mus[c] for c in range(1, K + 1)]
        require_zero(sum(labels) - 1, f"eq. (1) at K={K} sums to 1")
        require_zero(labels[2] - (1 - p) / K, f"mu at a label outside (g, h), K={K}")
        require(all(sp.simplify(mu.subs(p, 0) - sp.Rational(1, K)) == 0 for mu in labels), f"p = 0 at K={K}")
        R = sp.nsimplify(rho_max(K))
        require(R >= sp.Rational(1, K), f"claimed rho <= {R} at K={K}, but p = 0 gives rho = 1/K = 1/{K}")
        worst_rho = max(worst_rho, R)
    require(worst_rho < 1, f"claimed rho bound {worst_rho} >= 1")
    C = sp.nsimplify(bernstein_constant)
    worst_c = c_rho.subs(rho, worst_rho)
    require(C >= worst_c, f"exp(-sD/({C} L)) is not implied: at rho = {worst_rho} Bernstein gives "
            f"exp(-sD/(({worst_c}) L)) and {C} < {worst_c}")
    # C suffices iff c(rho) <= C iff rho <= 1 - 48/(3C - 8) (for 33: 43/91 ~ 0.4725 < 1/2).
    rho_star = 1 - sp.Rational(48) / (3 * C - 8)
    require_zero(c_rho.subs(rho, rho_star) - C, "c(rho*) = C")
    require(sp.nsimplify(constant_threshold) == rho_star,
            f"C = {C} holds exactly for rho <= {rho_star}, not {constant_threshold}")
    ns = sp.Symbol("ns", positive=True)
    count = ((ns / 2) ** 2 / 2) / (ns + ns / 6)
    require_zero(count - sp.nsimplify(count_exponent) * ns, f"eqn:Aij_cont exponent {sp.simplify(count)} vs {count_exponent} ns")
    D, d3 = sp.symbols("D delta_3", positive=True)
    margin = D / 2 - 3 * d3 / (rho - d3)
    require_zero(sp.diff(margin, d3) + 3 * rho / (rho - d3) ** 2, "d margin/d delta_3 = -3 rho/(rho - d3)^2 < 0")
    require_zero(sp.cancel(margin.subs(d3, delta3_boundary(rho, D))), "margin vanishes at the claimed boundary")
    # l_i = log(mu_(g,h),k / mu_(a,b),k): K=3, p=1/2, q=3/4, (g,h)=(1,2), (a,b)=(2,1), answer 2 gives log(y/x)
    # with x = 13/24, y = 7/24, e = rho = 1/6; |l_i| <= log(1/rho) since both mu lie in [rho, 1].
    x_, y_, e_ = sp.Rational(13, 24), sp.Rational(7, 24), sp.Rational(1, 6)
    require(x_ == sp.Rational(1, 2) * sp.Rational(3, 4) + sp.Rational(1, 2) / 3 and y_ == sp.Rational(1, 8) + e_, "x, y")
    lo = sp.nsimplify(l_lower(sp.log(1 / e_)))
    require(sp.simplify(sp.exp(lo)) <= y_ / x_, f"l_i = log(7/13) < {lo}: the claimed range of l_i is wrong")
    # mu_hat - mu at label g = dp (q - 1/K) + p dq + dp dq (identity); |.| <= 2 d + d^2 for |dp|, |dq| <= d.
    dp, dq, Kc = sp.symbols("dp dq K", positive=True)
    mu_of = lambda pp, qq: pp * qq + (1 - pp) / Kc  # noqa: E731
    require_zero(mu_of(p + dp, q + dq) - mu_of(p, q) - (dp * (q - 1 / Kc) + p * dq + dp * dq), "mu_hat - mu")
    # The paper's delta <= rho/4 <= 1/12 (rho <= 1/K <= 1/3): need F d >= 2 d + d^2, i.e. F >= 2 + 1/12.
    F = sp.nsimplify(mu_error_factor)
    example = sp.Rational(1, 10) * (sp.Rational(3, 4) - sp.Rational(1, 3)) + sp.Rational(1, 2) * sp.Rational(1, 10) + sp.Rational(1, 100)
    require(F * sp.Rational(1, 10) >= example, f"|mu_hat - mu| = {example} > {F} d at p=1/2, q=3/4, K=3, dp=dq=d=1/10")
    require(F >= 2 + sp.Rational(1, 12), f"F = {F} < 2 + 1/12: not implied for delta <= 1/12")
    note = (
        "Theorem 2's constant 33 holds. Bernstein gives P[E] >= 1 - mK^2 exp(-n s Dbar/(c(rho) log(1/rho))) with "
        "c(rho) = 8(2/(1-rho) + 1/3); eq. (1) forces rho <= 1/K <= 1/3, so c <= 80/3 < 33 (33 holds exactly for "
        "rho <= 43/91; the proof's own step 'since rho <= 1/2' would only give 104/3, so the 1/K bound is the one "
        "needed). An earlier version of this page said 33 should be 104/3: that finding is withdrawn. The range of "
        "l_i (l. 1351) is [-log(1/rho), log(1/rho)], not [0, log(1/rho)] (e.g. K=3, p=1/2, q=3/4: l = log(7/13) < 0); "
        "the Bernstein constant 2 log(1/rho) already accounts for it. 3ns/28, the delta_3 boundary "
        "rho Dbar/(6+Dbar) and |mu_hat - mu| <= 4 delta check out."
    )
    return {"note": note}


def cor2_delta(rho: sp.Expr, D: sp.Expr) -> sp.Expr:
    """δ = min{ρ/4, ρD̄/(4(6 + D̄))} of eq. (cond_delta); the second term always wins."""
    return rho * D / (4 * (6 + D))


@check(
    "minimax_optimality_gap",
    statement=(
        "delta = min{rho/4, rho D/(4(6+D))} = rho D/(4(6+D)) for every D > 0; Cor. 2's first term over Thm. 3(b)'s "
        "threshold is 4 n D/(delta^2 ||p||^2) >= 64(6+D)^2/(rho^2 D) >= 2304/(rho^2 D) -> oo as D -> 0, rho <= 1/K; "
        "'first term <= second term' iff delta^2 ||p||_2^2 >= n D (the paper's 'delta^2 ||p||_2 >~ n D' lacks the square)"
    ),
    reference="Sec. 5 after Thm. 3 (l. 481), Cor. 2 [cor:alg2] [eqn:cor2_suff], Thm. 2 [eqn:cond_delta]",
    method="cancel(lhs-rhs)==0 for the identities; positivity of the differences by factorisation",
    scope="symbolic rho, D, n, ||p||; rho <= 1/K from eq. (1)",
)
def check_minimax_optimality_gap(
    delta_fn: Callable[[sp.Expr, sp.Expr], sp.Expr] = cor2_delta,
    condition_power: int = 2,
):
    """Alg. 2's upper bound against Theorem 3(b)'s lower bound: a gap of order 1/(ρ² D̄).

    Parameters
    ----------
    delta_fn
        Claimed value of δ as a function of (ρ, D̄).
    condition_power
        Claimed power of ‖p‖₂ in "first term <= second term ⟺ δ² ‖p‖₂^power >= n D̄".
    """
    rho, D, n, P = sp.symbols("rho D n P", positive=True)  # P = ||p||_2
    full = sp.Min(rho / 4, rho * D / (4 * (6 + D)))
    require_zero(rho / 4 - rho * D / (4 * (6 + D)) - 6 * rho / (4 * (6 + D)), "rho/4 - second term = 6 rho/(4(6+D)) > 0")
    d = delta_fn(rho, D)
    require_zero(sp.cancel(d - rho * D / (4 * (6 + D))), f"delta = min(...) = rho D/(4(6+D)); claimed {d}")
    require(sp.simplify(full - d) == 0, "sympy Min agrees")
    first, second = 1 / (d**2 * P**2), 1 / (n * D)
    require_zero(sp.cancel(first / second - n * D / (d**2 * P**condition_power)),
                 f"first/second = n D/(delta^2 ||p||^2), not n D/(delta^2 ||p||^{condition_power})")
    # With ||p||^2 <= n: first/(1/(4 n D)) >= 4 D/delta^2 = 64 (6+D)^2/(rho^2 D) >= 2304/(rho^2 D).
    lower_ratio = 4 * D / d**2
    require_zero(sp.cancel(lower_ratio - 64 * (6 + D) ** 2 / (rho**2 * D)), "4 D/delta^2")
    require_zero(sp.expand((6 + D) ** 2 - 36 - D * (12 + D)), "(6+D)^2 >= 36")
    # rho <= 1/K: at a label c outside {g, h}, mu = (1-p)/K <= 1/K.
    require(sp.limit(lower_ratio, D, 0) == sp.oo, "ratio bounded as D -> 0")
    # "delta^2 ||p||^2 >= n D" needs delta^2 >= D, i.e. rho^2 D >= 16 (6+D)^2 >= 576; but every mu >= rho gives
    # D <= log(1/rho), and rho^2 log(1/rho) <= 1/(2e) (its derivative rho (2 log(1/rho) - 1) vanishes at e^{-1/2}).
    g_ = rho**2 * sp.log(1 / rho)
    require_zero(sp.expand_log(sp.diff(g_, rho) - rho * (2 * sp.log(1 / rho) - 1), force=True), "d/drho rho^2 log(1/rho)")
    require(sp.simplify(g_.subs(rho, sp.exp(-sp.Rational(1, 2))) - 1 / (2 * sp.E)) == 0, "max of rho^2 log(1/rho)")
    require(1 / (2 * sp.E) < 576, "1/(2e) < 576")
    note = (
        "Minimax optimality of Alg. 2 (l. 481) holds only with rho and Dbar treated as constants: delta = rho Dbar/"
        "(4(6+Dbar)) (the rho/4 branch never binds), so Cor. 2's first term log(m/eps)/(delta^2 ||p||^2) is "
        "~ 576 log(m/eps)/(rho^2 Dbar^2 n) against Thm. 3(b)'s 1/(4 n Dbar): a ratio >= 2304/(rho^2 Dbar) >= "
        "2304 K^2/Dbar (rho <= 1/K), unbounded as Dbar -> 0. The condition for the first term not to dominate is "
        "delta^2 ||p||_2^2 >~ n Dbar (the paper drops the square), which with this delta needs rho^2 Dbar >= "
        "16(6+Dbar)^2 >= 576 (||p||^2 <= n): never satisfied, since Dbar <= log(1/rho) and rho^2 log(1/rho) <= 1/(2e)."
    )
    return {"note": note}


@check(
    "footnote_spammers",
    statement=(
        "eta sqrt(n) <= ||p||_2 <= sqrt(n) allows Theta(n) spammers: eta^2 n hammers (p=1) and (1-eta^2) n spammers "
        "have ||p||_2 = eta sqrt(n); the population u^(k) = p/||p|| then has a fraction eta^2 of positive entries, "
        "below 1/2 for eta < 1/sqrt(2), so the sign rule ('at least half positive') is not protected"
    ),
    reference="Footnote at l. 276 (Sec. 3), Alg. 1 [alg:top_two] sign rule",
    method="exact identities; limit of the spammer count over the claimed bound",
    scope="symbolic n, eta",
)
def check_footnote_spammers(spammer_bound: Callable[[sp.Expr, sp.Expr], sp.Expr] = lambda n, eta: (1 - eta**2) * n):
    """The footnote's assumption does not limit spammers to o(n).

    Parameters
    ----------
    spammer_bound
        Claimed largest number of spammers allowed by η√n <= ‖p‖₂ (the footnote: o(n)).
    """
    n, eta = sp.symbols("n eta", positive=True)
    hammers = eta**2 * n
    require_zero(sp.sqrt(hammers * 1**2) - eta * sp.sqrt(n), "||p||_2 of eta^2 n hammers")
    spammers = n - hammers
    lim = sp.limit(spammer_bound(n, eta) / spammers, n, sp.oo)
    require(lim.is_positive or lim == sp.oo, f"(1-eta^2) n spammers satisfy the footnote, but the claimed bound "
            f"{spammer_bound(n, eta)} is o(that): ratio -> {lim}")
    frac_pos = hammers / n
    require(frac_pos.subs(eta, sp.Rational(1, 2)) == sp.Rational(1, 4), "fraction of positive entries at eta = 1/2")
    note = (
        "The footnote's eta sqrt(n) <= ||p||_2 does not force o(n) spammers: eta^2 n hammers and (1-eta^2) n spammers "
        "satisfy it with a fixed eta. With more than half of the workers spammers, u^(k)'s spammer entries are pure "
        "noise around 0 and the sign rule ('at least half the entries positive') is decided by that noise; "
        "notebook 05 cites the footnote for the opposite reading. benchmarks/theorems_mc.py measures the flip rate."
    )
    return {"note": note}
