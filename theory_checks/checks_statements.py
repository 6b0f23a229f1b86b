"""The numbered statements checked as stated (or their untestability shown).

Theorem 1's deterministic step for every K and pair, eq. (5)'s variance for symbolic m,
Lemma 1's probability statement computed exactly (and by Monte Carlo through the package's
sampler), Lemma 4 on instances where trimming binds, Lemma 6 as a finite inequality, the
textbook Theorems 5–7 on exact instances, eqn:Aij_cont's missing factor 2 (Theorem 2's proof),
and the computed argument that Theorem 4 / Corollary 3 (an unspecified universal constant)
cannot be refuted by any finite experiment.
"""

from __future__ import annotations

import math
from typing import Callable

import mpmath
import numpy as np
import sympy as sp

from ._core import ClaimFailed, check, pairs, require, require_zero
from .checks_algorithm import paper_p_hat, paper_p_hat_variance
from .model import q, symbolic_r

__all__ = ["MC_ALPHA", "lemma1_exact_sup_probability", "lemma1_paper_bound", "binomtest_rejection"]

#: False-alarm rate of every Monte-Carlo assertion of this module (two-sided exact binomial test).
MC_ALPHA = 1e-3


@check(
    "theorem1_ordering_every_K",
    statement=(
        "if |v^(k) - ||p|| r^(k)| <= ||p|| d for k = 1..K-1, then Delta v^(h) - Delta v^(g) >= ||p||(2q-1-4d) and "
        "Delta v^(c) - Delta v^(h) >= ||p||(1-q-4d) for every c: each difference is the eq. (2) gap plus a linear form in "
        "the errors whose coefficients have l1 norm <= 4 (attained), so (g_hat, h_hat) = (g, h) for d < gap(q)/4, for "
        "every K and every pair"
    ),
    reference="Thm. 1 [thm:main], proof (App., l. 1193-1201), eq. (2) [eqn:delta_r]",
    method=(
        "symbolic q and errors e_1..e_{K-1}: constant term == gap (expand), l1 norm of the error coefficients <= 4; "
        "every K: a difference of two Delta v involves at most 4 of the e_k with coefficients +-1 (checked), and every "
        "pattern of positions of g, h, c (adjacent or not, at the ends or not) occurs for K <= 7"
    ),
    scope="exhaustive K=3..8, every ordered (g,h), every c; symbolic q and errors",
)
def check_theorem1_ordering_every_K(slack: int = 4, Ks: range = range(3, 9),
                                    gaps: tuple[sp.Expr, sp.Expr] = (2 * q - 1, 1 - q)):
    """Theorem 1's deterministic step (the ordering of Δv) for every K and pair.

    Parameters
    ----------
    slack
        Claimed bound on the l1 norm of the error coefficients (the proof's 2 δ₁ per Δv, so 4).
    Ks
        The numbers of choices checked exhaustively.
    gaps
        Claimed (Δr^(h) − Δr^(g), Δr^(c) − Δr^(h)) of eq. (2).
    """
    attained = 0
    for K in Ks:
        e = sp.symbols(f"e1:{K}")
        for g, h in pairs(K):
            v = [sp.Integer(0)] + [symbolic_r(K, g, h, k) + e[k - 1] for k in range(1, K)] + [sp.Integer(0)]
            dv = [sp.expand(v[k] - v[k - 1]) for k in range(1, K + 1)]
            diffs = [(dv[h - 1] - dv[g - 1], gaps[0], "h vs g")]
            diffs += [(dv[c - 1] - dv[h - 1], gaps[1], f"c={c} vs h") for c in range(1, K + 1) if c not in (g, h)]
            for diff, gap, what in diffs:
                const = diff.subs({x: 0 for x in e})
                require_zero(const - gap, f"gap of {what} at K={K}, (g,h)=({g},{h})")
                l1 = sum(abs(diff.coeff(x)) for x in e)
                require(l1 <= slack, f"{what} at K={K}, (g,h)=({g},{h}): the errors enter with l1 norm {l1} > {slack}")
                attained = max(attained, int(l1))
    require(attained == slack, f"the claimed slack {slack} is never attained (max {attained}): not tight")


@check(
    "eq5_variance_symbolic_m",
    statement=(
        "given the true pairs, hits_i = sum_j Z_ij with Z_ij ~ Bernoulli(pi) independent, so E[hits^2] = m pi + "
        "m(m-1) pi^2 and Var(p_hat_i) = (K/(K-2))^2 pi(1-pi)/(m sigma^2) for symbolic m"
    ),
    reference="eq. (5) [eqn:hatpi], Lemma 1 [lem:rec_p]",
    method="E[(sum Z)^2] = sum of m diagonal and m(m-1) off-diagonal terms; cancel(lhs-rhs)==0",
    scope="symbolic K, m, pi, sigma",
)
def check_eq5_variance_symbolic_m(variance: Callable[..., sp.Expr] = paper_p_hat_variance):
    """Eq. (5)'s exact variance for symbolic m (check ``eq5_unbiased_and_variance`` does m = 1..4 by enumeration)."""
    K, m, P, sg, p_ = sp.symbols("K m pi sigma p", positive=True)
    second = m * P + m * (m - 1) * P**2                 # E[Z_j Z_k] = pi (j = k), pi^2 (j != k)
    var_hits = sp.expand(second - (m * P) ** 2)
    require_zero(var_hits - m * P * (1 - P), "Var(hits) = m pi (1 - pi)")
    slope = sp.diff(paper_p_hat(K, sp.Symbol("hits"), m, sg), sp.Symbol("hits"))   # p_hat is affine in hits
    var_p = slope**2 * var_hits
    pi_of_p = sg * ((K - 2) * p_ + 2) / K
    require_zero((var_p - variance(K, m, sg)).subs(P, pi_of_p), "Var(p_hat) vs the claimed variance")


def lemma1_paper_bound(K: int, m: int, sigma: float, d: float, n: int, *, half: float = 0.5) -> float:
    """n 2 exp(-(half t^2)/(m sigma + t/3)), t = (K-2)/K m sigma d (Lemma 1's Bernstein step; ``half`` = 1/2)."""
    t = (K - 2) / K * m * sigma * d
    return n * 2.0 * math.exp(-(half * t * t) / (m * sigma + t / 3.0))


def lemma1_exact_sup_probability(K: int, m: int, sigma: float, d: float, ps: list[float]) -> float:
    """P(max_i |p_hat_i - p_i| > d) given the true pairs: hits_i ~ Binomial(m, pi_i), workers independent."""
    from scipy.stats import binom

    c = (K - 2) / K
    stay = 1.0
    for p_ in ps:
        pi = sigma * ((K - 2) * p_ + 2) / K
        t = c * m * sigma * d                       # |hits - m pi| > t  <=>  |p_hat - p| > d
        below = math.ceil(m * pi - t) - 1           # hits <= below  <=>  hits < m pi - t
        above = math.floor(m * pi + t)              # hits > above
        stay *= 1.0 - (float(binom.cdf(below, m, pi)) + float(binom.sf(above, m, pi)))
    return 1.0 - stay


#: The grid of Lemma 1's statement: (K, m, sigma, workers' p).
LEMMA1_GRID = [(K, m, sg, ps) for K in (3, 4, 6, 10) for m in (30, 100, 300, 1000) for sg in (0.03, 0.1, 0.3, 0.6)
               for ps in ([1.0], [0.0, 0.5, 1.0], [0.2] * 4 + [0.9] * 4)]


@check(
    "lemma1_exact_tail",
    statement=(
        "given the true pairs, P(||p_hat - p||_inf > d) <= n 2 exp(-(t^2/2)/(m sigma + t/3)), t = (K-2)/K m sigma d "
        "(the proof's Bernstein bound, which Lemma 1's Omega condition instantiates) wherever that bound is in "
        "[1e-3, 0.5]; the same bound without Bernstein's 1/2 is exceeded by the exact probability; the bound is never "
        "within a factor 2 of the exact probability on the grid (so no data can reject a bound 2x too small)"
    ),
    reference="Lemma 1 [lem:rec_p], proof (App., l. 1286-1324), Thm. 7 (Bernstein) [thm:Bernstein]",
    method="exact binomial tails (scipy.stats.binom, independent workers) against the bound at every grid point",
    scope="K in {3,4,6,10}, m in {30,...,1000}, sigma in {0.03,...,0.6}, 3 worker sets, d on a grid of 40 values",
)
def check_lemma1_exact_tail(half: float = 0.5, max_ratio: float = 0.5):
    """Lemma 1's probability statement computed exactly (hits are binomial under eq. (1) given the pairs).

    Parameters
    ----------
    half
        Claimed constant in Bernstein's exponent (1/2; the mutant "½ dropped" is 1).
    max_ratio
        The exact probability must stay below ``max_ratio`` × bound everywhere (0.5: a bound 2×
        smaller would still hold, i.e. it is not rejectable — stated as a finding).
    """
    worst, worst_at, n_points, beaten = 0.0, None, 0, 0
    for K, m, sg, ps in LEMMA1_GRID:
        for d in np.linspace(0.02, 1.2, 40):
            b = lemma1_paper_bound(K, m, sg, d, len(ps), half=half)
            b_half = lemma1_paper_bound(K, m, sg, d, len(ps), half=0.5)
            if not 1e-3 <= b_half <= 0.5:
                continue
            n_points += 1
            exact = lemma1_exact_sup_probability(K, m, sg, d, ps)
            require(exact <= b, f"Lemma 1 bound {b:.4g} exceeded: exact P = {exact:.4g} at K={K}, m={m}, "
                    f"sigma={sg}, d={d:.3f}, p={ps}")
            beaten += exact > lemma1_paper_bound(K, m, sg, d, len(ps), half=1.0)
            if exact / b > worst:
                worst, worst_at = exact / b, (K, m, sg, round(float(d), 3), ps)
    require(n_points >= 100, f"only {n_points} grid points with the bound in [1e-3, 0.5]")
    require(beaten > 0, "the bound without Bernstein's 1/2 is never exceeded: the check cannot see that mutant")
    require(worst < max_ratio, f"exact/bound reaches {worst:.3f} at {worst_at}")
    return {"note": (
        f"Lemma 1's bound holds at all {n_points} grid points with the bound in [1e-3, 0.5]; without Bernstein's "
        f"1/2 it is exceeded at {beaten}. The exact probability never exceeds {worst:.2f} x the bound (at K, m, sigma, "
        f"d, p = {worst_at}), so a bound 2x too small cannot be rejected by any data in this range: the bound is loose "
        "by at least that factor (Bernstein uses Var <= sigma and misses the Gaussian prefactor)."
    )}


def binomtest_rejection(N: int, p0: float, alpha: float, alternative: str, p_true: float) -> float:
    """Exact probability, when the count is Binomial(N, ``p_true``), that ``scipy.stats.binomtest(k, N, p0,
    alternative)`` gives a p-value <= ``alpha`` (its false-alarm rate at ``p_true = p0``, else its power).

    The p-values are scipy's: ``"greater"`` P_p0(K >= k); ``"two-sided"`` the sum of the p0-probabilities not above
    that of k (relative slack 1e-7)."""
    from scipy.stats import binom

    k = np.arange(N + 1)
    if alternative == "greater":
        reject = binom.sf(k - 1, N, p0) <= alpha
    else:
        pmf = binom.pmf(k, N, p0)
        order = np.sort(pmf)
        cum = np.cumsum(order)
        idx = np.searchsorted(order, pmf * (1 + 1e-7), side="right") - 1
        reject = np.minimum(1.0, cum[np.maximum(idx, 0)] * (idx >= 0)) <= alpha
    return float(binom.pmf(k, N, p_true)[reject].sum())


@check(
    "mc_lemma1_sampler",
    statement=(
        "through the package (TopTwoModel.sample, estimate_reliability with the true pairs) the frequency of "
        "|p_hat_i - p_i| > d agrees with the exact binomial probability (two-sided exact binomial test) and is not "
        "above Lemma 1's bound (one-sided test); with Bernstein's 1/2 dropped from the bound the one-sided test rejects"
    ),
    reference="Lemma 1 [lem:rec_p], eq. (5) [eqn:hatpi], eq. (1) [eqn:A_dist]",
    method=(
        "Monte Carlo, seeded: 200 workers x 100 replicates (independent: each worker's count is its own row's); "
        "scipy.stats.binomtest at alpha = 1e-3 per test, 6 tests; no finite-size bias: the null is the exact "
        "binomial law of the count at these sizes; false-alarm rate computed exactly (binomtest_rejection: the "
        "discrete tests' sizes at the exact probabilities), family-wise <= their sum (Bonferroni), and the power "
        "against the twin (Bernstein's 1/2 dropped) computed exactly the same way"
    ),
    scope="K=10, m=1000, sigma=0.03, p_i = 1, d in {0.3, 0.5, 0.7}",
)
def check_mc_lemma1_sampler(seed: int = 1, half: float = 0.5):
    """Monte-Carlo check of Lemma 1's event through the package's sampler and eq. (5).

    Parameters
    ----------
    seed
        Seed of the draws (the check holds for other seeds with probability >= 1 - 6e-3).
    half
        Claimed constant in Bernstein's exponent of the bound (1/2; 1 is the "½ dropped" twin).
    """
    import toptwo
    from scipy.stats import binomtest

    K, n, m, sg, R = 10, 200, 1000, 0.03, 100
    gen = np.random.default_rng(seed)
    top = np.array([gen.choice(np.arange(1, K + 1), 2, replace=False) for _ in range(m)])
    model = toptwo.TopTwoModel(np.ones(n), np.full(m, 0.75), top, K)
    deltas = (0.3, 0.5, 0.7)
    exceed = np.zeros(len(deltas), dtype=int)
    for _ in range(R):
        A = model.sample(sg, rng=gen)
        p_pkg = toptwo.estimate_reliability(A, top, normalization="paper")      # divides by nnz/n
        hits = (p_pkg * (K - 2) / K + 2 / K) * (A.nnz / n)
        p_hat = K / (K - 2) * (hits / (m * sg) - 2 / K)                           # eq. (5) with m sigma known
        err = np.abs(p_hat - 1.0)
        exceed += np.array([(err > d + 1e-9).sum() for d in deltas])
    trials = n * R
    for d, k in zip(deltas, exceed):
        exact_one = lemma1_exact_sup_probability(K, m, sg, d, [1.0])
        pval = binomtest(int(k), trials, exact_one).pvalue
        require(pval > MC_ALPHA, f"d={d}: {k}/{trials} exceedances, exact probability {exact_one:.4f} "
                f"(two-sided p-value {pval:.2e} < {MC_ALPHA})")
        bound = min(1.0, lemma1_paper_bound(K, m, sg, d, 1, half=half))
        p_over = binomtest(int(k), trials, bound, alternative="greater").pvalue
        require(p_over > MC_ALPHA, f"d={d}: frequency {k}/{trials} = {k / trials:.4f} above the bound "
                f"{bound:.4g} (one-sided p-value {p_over:.1e} < {MC_ALPHA})")
    # the exact false-alarm rate (at the exact probabilities) and the power against the twin (half = 1)
    size, power = 0.0, 0.0
    for d in deltas:
        p0 = lemma1_exact_sup_probability(K, m, sg, d, [1.0])
        size += binomtest_rejection(trials, p0, MC_ALPHA, "two-sided", p0)
        size += binomtest_rejection(trials, min(1.0, lemma1_paper_bound(K, m, sg, d, 1, half=half)), MC_ALPHA, "greater", p0)
        twin = min(1.0, lemma1_paper_bound(K, m, sg, d, 1, half=1.0))
        power = max(power, binomtest_rejection(trials, twin, MC_ALPHA, "greater", p0))
    return {"scope": f"K={K}, m={m}, sigma={sg}, p_i = 1, d in {deltas}, {trials} worker-replicates, seed {seed}",
            "note": (f"Lemma 1's event through the package's sampler and eq. (5): the exceedance frequencies agree with "
                     f"the exact binomial probabilities and lie below the bound. Exact false-alarm rate of the 6 tests "
                     f"at the exact probabilities: {size:.1e} in all (each two-sided test's discrete size <= 1e-3; the "
                     f"one-sided ones far below it, the bound being loose); power against the twin (Bernstein's 1/2 "
                     f"dropped): {power:.4f} (at least that of the best d, exact; d = 0.7 carries it).")}


@check(
    "lemma4_trimming_instances",
    statement=(
        "for p in [0,1]^n with ||p|| >= eta sqrt(n), p* = p/||p||, any unit u with sin theta(u, p*) small and u~ = u "
        "with entries > 2/(eta sqrt n) zeroed: ||u~|| >= sqrt(1 - 50 sin^2 theta(u,p*)) and sin theta(u~, p*) <= "
        "6 sqrt(2) sin theta(u, p*); checked where trimming binds (some u_i above the threshold)"
    ),
    reference="Lemma 4 [lem:sin_uktilde_p] (App. [app:sec:lem:sin_uktilde])",
    method="seeded random and adversarial instances (a spike on one coordinate), float64 with a 1e-12 margin",
    scope="n in {20, 100, 400}, eta in {0.3, 0.6, 0.9}, 300 instances each with trimming binding",
)
def check_lemma4_trimming_instances(norm_const: float = 50.0, sin_const: float = 6 * math.sqrt(2), seed: int = 4):
    """Lemma 4 on instances where the trimming removes entries."""
    gen = np.random.default_rng(seed)
    binding = 0
    worst = (0.0, 0.0)
    for n in (20, 100, 400):
        for eta in (0.3, 0.6, 0.9):
            thr = 2 / (eta * math.sqrt(n))
            for _ in range(300):
                p_ = gen.uniform(eta, 1.0, n)                  # ||p|| >= eta sqrt(n)
                ps = p_ / np.linalg.norm(p_)
                spike = np.zeros(n)
                spike[gen.integers(n)] = 1.0
                noise = gen.normal(size=n) * gen.uniform(0, 0.3) / math.sqrt(n) + spike * gen.uniform(0.0, 0.5)
                u = ps + noise
                u /= np.linalg.norm(u)
                if not (u > thr).any():
                    continue
                binding += 1
                ut = np.where(u > thr, 0.0, u)
                sin_u = math.sqrt(max(0.0, 1 - float(u @ ps) ** 2))
                nut = float(np.linalg.norm(ut))
                if 1 - norm_const * sin_u**2 > 0:
                    require(nut >= math.sqrt(1 - norm_const * sin_u**2) - 1e-12,
                            f"||u~|| = {nut:.6f} < sqrt(1 - {norm_const} sin^2) at n={n}, eta={eta}, sin={sin_u:.4f}")
                if nut > 0:
                    sin_ut = math.sqrt(max(0.0, 1 - (float(ut @ ps) / nut) ** 2))
                    require(sin_ut <= sin_const * sin_u + 1e-12,
                            f"sin(u~, p*) = {sin_ut:.4f} > {sin_const:.3f} sin(u, p*) = {sin_const * sin_u:.4f} at n={n}, eta={eta}")
                    if sin_u > 0:
                        worst = max(worst, (sin_ut / sin_u, nut))
    require(binding >= 500, f"trimming bound in only {binding} instances")
    return {"note": f"Lemma 4 holds on {binding} instances with trimming binding; the largest ratio "
                    f"sin(u~,p*)/sin(u,p*) seen is {worst[0]:.2f} (the lemma allows 6 sqrt 2 = 8.49)."}


@check(
    "lemma6_second_moment",
    statement=(
        "for distributions mu, nu on [K] with every entry >= rho: sum_k mu_k log^2(mu_k/nu_k) <= (2 log(1/rho)/(1-rho)) "
        "KL(mu, nu), hence E[l_i^2 | (g,h)] = s sum mu log^2(mu/nu) <= (2 log(1/rho)/(1-rho)) s KL (Lemma 6) for every "
        "top-two pair of distributions of eq. (1)"
    ),
    reference="Lemma 6 [lem:second_si] (Thm. 2's proof)",
    method="finite inequality at every point of a rational grid, both sides to 40 digits (mpmath); also random pairs",
    scope="K=3..6, every (g,h) vs every (a,b), p in {1/10,...,9/10}, q in {11/20,...,19/20}; 2000 random Dirichlet pairs",
)
def check_lemma6_second_moment(constant: Callable[[mpmath.mpf], mpmath.mpf] = lambda rho: 2 * mpmath.log(1 / rho) / (1 - rho)):
    """Lemma 6 as a finite inequality on a grid of eq. (1)'s distributions (and random pairs)."""
    mpmath.mp.dps = 40
    worst = mpmath.mpf(0)

    def one(mu, nu, where):
        nonlocal worst
        rho = min(min(mu), min(nu))
        lhs = mpmath.fsum(a * mpmath.log(a / b) ** 2 for a, b in zip(mu, nu))
        kl = mpmath.fsum(a * mpmath.log(a / b) for a, b in zip(mu, nu))
        rhs = constant(rho) * kl
        if lhs > rhs + mpmath.mpf(10) ** -30:
            raise ClaimFailed(f"Lemma 6 fails at {where}: sum mu log^2 = {mpmath.nstr(lhs, 8)} > {mpmath.nstr(rhs, 8)}")
        if kl > 0:
            worst = max(worst, lhs / rhs)

    grid_p = [mpmath.mpf(i) / 10 for i in range(1, 10)]
    grid_q = [mpmath.mpf(x) / 20 for x in (11, 13, 15, 17, 19)]
    for K in range(3, 7):
        for p_ in grid_p:
            for q_ in grid_q:
                e = (1 - p_) / K

                def mu_of(a, b):
                    return [p_ * q_ + e if k == a else p_ * (1 - q_) + e if k == b else e for k in range(1, K + 1)]

                base = mu_of(1, 2)
                for a, b in pairs(K):
                    if (a, b) != (1, 2):
                        one(base, mu_of(a, b), f"K={K}, p={p_}, q={q_}, (a,b)=({a},{b})")
    gen = np.random.default_rng(6)
    for _ in range(2000):
        K = int(gen.integers(2, 7))
        mu = [mpmath.mpf(float(x)) for x in gen.dirichlet(np.ones(K) * gen.uniform(0.3, 3))]
        nu = [mpmath.mpf(float(x)) for x in gen.dirichlet(np.ones(K) * gen.uniform(0.3, 3))]
        if min(mu + nu) > 1e-6:
            one(mu, nu, f"random pair K={K}")
    return {"note": f"Lemma 6 holds on the grid and 2000 random pairs; the largest ratio lhs/rhs is "
                    f"{float(worst):.3f}."}


@check(
    "textbook_concentration_exact",
    statement=(
        "Hoeffding (Thm. 6): P(|S - ES| > t) <= 2 exp(-2t^2/sum (b-a)^2) and Bernstein (Thm. 7): <= 2 exp(-(t^2/2)/"
        "(sigma^2 + C t/3)) for sums of independent Bernoulli variables, exactly; without Bernstein's 1/2 or with 4t^2 "
        "in Hoeffding the bounds fail"
    ),
    reference="Thm. 6 (Hoeffding) [eqn:Hoeffding], Thm. 7 (Bernstein) [thm:Bernstein]",
    method="exact binomial tails (scipy.stats.binom) at every grid point; the wrong constants must fail somewhere",
    scope="n in {5, 20, 100, 500}, success probability in {0.01, 0.1, 0.3, 0.5}, t on a grid",
)
def check_textbook_concentration_exact(hoeffding_const: float = 2.0, bernstein_half: float = 0.5):
    """Theorems 6 and 7 (textbook) checked exactly on Bernoulli sums, with wrong constants rejected."""
    from scipy.stats import binom

    fails = {"hoeffding x2": 0, "bernstein no 1/2": 0}
    for n in (5, 20, 100, 500):
        for pr in (0.01, 0.1, 0.3, 0.5):
            mean, var = n * pr, n * pr * (1 - pr)
            for t in np.linspace(0.05, 0.6, 12) * n:
                below = math.ceil(mean - t) - 1
                above = math.floor(mean + t)
                exact = float(binom.cdf(below, n, pr)) + float(binom.sf(above, n, pr))
                hoeff = 2 * math.exp(-hoeffding_const * t * t / n)
                bern = 2 * math.exp(-(bernstein_half * t * t) / (var + t / 3))
                require(exact <= hoeff * (1 + 1e-12), f"Hoeffding bound {hoeff:.4g} < exact {exact:.4g} at n={n}, p={pr}, t={t:.2f}")
                require(exact <= bern * (1 + 1e-12), f"Bernstein bound {bern:.4g} < exact {exact:.4g} at n={n}, p={pr}, t={t:.2f}")
                fails["hoeffding x2"] += exact > 2 * math.exp(-4 * t * t / n)
                fails["bernstein no 1/2"] += exact > 2 * math.exp(-(t * t) / (var + t / 3))
    require(all(v > 0 for v in fails.values()), f"a wrong constant is never rejected: {fails}")


@check(
    "theorem5_wedin_instances",
    statement=(
        "Wedin: for M = M* + E with ||E|| < sigma_1* - sigma_2*, the leading singular subspaces satisfy "
        "dist <= sqrt(2)||E||/(sigma_1* - sigma_2* - ||E||); checked for the rank-1 M* = 2 s' p r^T of Prop. 1"
    ),
    reference="Thm. 5 (Wedin) [thm:WedinSin], used in Lemma 3 [lem:sin_uk_p]",
    method="seeded random instances, LAPACK SVD, dist = sin of the angle between leading vectors; margin 1e-9",
    scope="n x m in {10x50, 30x120}, noise levels so that ||E|| spans (0, gap); 200 instances",
)
def check_theorem5_wedin_instances(constant: float = math.sqrt(2), seed: int = 5, subtract_noise: bool = True):
    """Theorem 5 (Wedin) on rank-1-plus-noise instances."""
    gen = np.random.default_rng(seed)
    worst = 0.0
    for n, m in ((10, 50), (30, 120)):
        for _ in range(100):
            p_ = gen.uniform(0, 1, n)
            r = gen.uniform(-0.5, 0.5, m)
            Ms = np.outer(p_, r)
            gap = float(np.linalg.norm(p_) * np.linalg.norm(r))       # sigma_1*, sigma_2* = 0
            E = gen.normal(size=(n, m))
            E *= gen.uniform(0.02, 0.95) * gap / np.linalg.norm(E, 2)
            normE = float(np.linalg.norm(E, 2))
            U, _, Vt = np.linalg.svd(Ms + E, full_matrices=False)
            us = p_ / np.linalg.norm(p_)
            vs = r / np.linalg.norm(r)
            dist = max(math.sqrt(max(0.0, 1 - float(U[:, 0] @ us) ** 2)), math.sqrt(max(0.0, 1 - float(Vt[0] @ vs) ** 2)))
            bound = constant * normE / (gap - normE if subtract_noise else gap)
            require(dist <= bound + 1e-9, f"Wedin: dist {dist:.4f} > bound {bound:.4f} at n={n}, ||E||/gap={normE / gap:.3f}")
            worst = max(worst, dist / bound)
    return {"note": f"Wedin's bound holds on 200 instances (largest dist/bound {worst:.2f})."}


@check(
    "theorem4_unspecified_constant",
    statement=(
        "Thm. 4 / Cor. 3 (and the c~ of Lemma 2) quantify over an unspecified universal constant c: for any n, m, B and "
        "any data, ||X|| <= B sqrt(nm), and with c >= nm/log(n+m) the bound (n+m) exp(-t^2/(c B^2)) is >= 1 for every "
        "t <= B sqrt(nm); so no finite experiment can refute the statements as written (untestable as stated)"
    ),
    reference="Thm. 4 [lem:bd_spnorm], Cor. 3 [cor:spect_norm], Lemma 2 [lem:spnorm], Lemma 3 [lem:sin_uk_p]",
    method="symbolic: (n+m) exp(-t^2/(c B^2)) >= 1 <=> t^2 <= c B^2 log(n+m), at t^2 = B^2 n m with c = nm/log(n+m)",
    scope="symbolic n, m, B, t",
)
def check_theorem4_unspecified_constant(
    constant: Callable[[sp.Expr, sp.Expr], sp.Expr] = lambda n, m: n * m / sp.log(n + m),
):
    """The computed argument that Theorem 4 and Corollary 3 cannot be refuted by finite data.

    Parameters
    ----------
    constant
        Claimed c(n, m) that makes the bound trivially true up to ``||X|| <= B sqrt(nm)``.
    """
    n, m, B = sp.symbols("n m B", positive=True)
    c = constant(n, m)
    value = (n + m) * sp.exp(-(B**2 * n * m) / (c * B**2))
    require(sp.simplify(value - 1) == 0, f"(n+m) exp(-B^2 nm/(c B^2)) = {sp.simplify(value)} at c = nm/log(n+m)")
    # ||X|| <= ||X||_F <= B sqrt(nm) for |X_ij| <= B
    X = sp.Matrix(2, 3, lambda i, j: B)
    require(sp.simplify(sp.sqrt(sum(x**2 for x in X)) - B * sp.sqrt(6)) == 0, "Frobenius bound")
    return {"note": (
        "The tails of Theorem 4 and Corollary 3 and the c~ of Lemma 2 (and the Theta(.) of Lemmas 3 and 5) carry an "
        "unspecified universal constant: for every finite instance a constant exists that makes them true, so that "
        "part is untestable as stated. Their explicit parts are checked instead: the leading 4 sqrt(nu), "
        "4 sqrt(s max(m, n)) and 5 sqrt(sm) on draws (mc_lemma2_noise_norm, mc_theorem4_corollary3_norm), the "
        "rates 1/sqrt(sn) and delta_1^-2 as slopes (mc_lemma3_sin_theta, mc_lemma5_delta1_scaling)."
    )}


@check(
    "theorem2_aij_cont_factor2",
    statement=(
        "eqn:Aij_cont bounds the two-sided event |sum_i 1(A_ij answered) - ns| > ns/2 by exp(-3ns/28) without "
        "the factor 2 of the two-sided Bernstein inequality (Thm. 7); as printed it is false (e.g. n = 2, s = 1/10: "
        "probability 1 > exp(-3/140)); with the factor 2 it holds at every enumerated instance"
    ),
    reference="Thm. 2 [thm:plugmin_mle], proof eqn:Aij_cont (l. 1426 of the .tex), Thm. 7 [thm:Bernstein]",
    method="exact enumeration of Binomial(n, s) with rational s; rational bounds on exp",
    scope="n = 2..6, s in {1/10, 1/5, 1/2}",
)
def check_theorem2_aij_cont_factor2(prefactor: sp.Expr = sp.Integer(2), exponent: sp.Expr = sp.Rational(3, 28)):
    """Theorem 2's eqn:Aij_cont needs Bernstein's two-sided factor 2 (same slip as Lemma 1)."""
    from .checks_converse import exp_bounds

    counter = None
    for n in range(2, 7):
        for s_ in (sp.Rational(1, 10), sp.Rational(1, 5), sp.Rational(1, 2)):
            ns = n * s_
            P = sum(sp.binomial(n, x) * s_**x * (1 - s_) ** (n - x) for x in range(n + 1) if abs(x - ns) > ns / 2)
            lo_pos, hi_pos = exp_bounds(exponent * ns)
            lo, hi = 1 / hi_pos, 1 / lo_pos                 # exp(-3ns/28) in [lo, hi]
            if P > hi and counter is None:
                counter = (n, s_, P)
            require(P <= prefactor * lo, f"the bound {prefactor} exp(-3ns/28) <= {float(prefactor * hi):.6f} < P = "
                    f"{float(P):.6f} at n={n}, s={s_}")
    require(counter is not None, "no instance where the printed bound (without 2) fails")
    return {"note": (
        f"Theorem 2's proof, eqn:Aij_cont (l. 1426), bounds a two-sided deviation by exp(-3ns/28) without the factor 2 "
        f"of the two-sided Bernstein inequality (the slip of Lemma 1's proof): at n={counter[0]}, s={counter[1]} the "
        f"probability is {counter[2]} > exp(-3ns/28). The union bound m exp(-3ns/28) becomes 2m exp(-3ns/28); the "
        "Omega(.) rate of Theorem 2 is unaffected."
    )}


@check(
    "eq6_kl_symbolic_K",
    statement=(
        "for symbolic K: eq. (1)'s answer probabilities divided by eq. (6)'s weights (Kpq/(1-p)+1 at a, "
        "Kp(1-q)/(1-p)+1 at b, 1 elsewhere) are s(1-p)/K for every answer; KL(mu_(g,h), mu_(a,b)) equals the closed "
        "form of its class for every K, because the K - |{g,h,a,b}| other labels have mu = nu = (1-p)/K and add 0"
    ),
    reference="eq. (6) [eqn:plug-in-mle], Sec. 5 D-bar, Thm. 2 [thm:plugmin_mle], Thm. 3(b) [thm:converse]",
    method="cancel(lhs-rhs)==0 with symbolic K; KL by coefficients of log x, log y, log e with e = (1-p)/K, K symbolic",
    scope="symbolic K, p, q, s; one representative placement per class of (a,b)",
)
def check_eq6_kl_symbolic_K(
    closed_forms: Callable[[], dict[str, sp.Expr]] | None = None,
    weights: Callable[[sp.Expr], tuple[sp.Expr, sp.Expr]] | None = None,
):
    """Eq. (6)'s decomposition and the KL closed forms for symbolic K."""
    from .checks_algorithm import paper_mle_weights
    from .checks_divergence import E, X, Y, _atoms_subs, _equal_as_functions_of_pq, paper_closed_forms
    from .model import p, s

    forms = (closed_forms or paper_closed_forms)()
    K = sp.Symbol("K", positive=True, integer=True)
    sub = _atoms_subs(K)
    w_a, w_b = (weights or paper_mle_weights)(K)
    for atom, w, where in ((X, w_a, "the first label a"), (Y, w_b, "the second label b"), (E, sp.Integer(1), "another label")):
        require_zero(s * atom.subs(sub) / w - s * (1 - p) / K, f"P(A = {where} | (a,b)) / weight - s(1-p)/K")
    reps = {"swap (h,g)": (2, 1), "(g,c)": (1, 3), "(c,h)": (3, 2), "(c,d)": (3, 4), "(h,c)": (2, 3), "(c,g)": (3, 1)}
    for cls, (a, b) in reps.items():
        labels = sorted({1, 2, a, b})
        mu = {c: X if c == 1 else Y if c == 2 else E for c in labels}
        nu = {c: X if c == a else Y if c == b else E for c in labels}
        direct = sum(mu[c] * sp.log(mu[c] / nu[c]) for c in labels)
        # the K - len(labels) remaining labels: E log(E/E) = 0 each
        _equal_as_functions_of_pq(direct, forms[cls], K, f"KL class {cls} for symbolic K")
