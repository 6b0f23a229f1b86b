"""Claims 9–11: Theorem 3 ingredients and the majority-vote comparison of Sec. 5."""

from __future__ import annotations

import itertools
from typing import Callable

import sympy as sp

from ._core import ClaimFailed, check, require, require_zero

x = sp.Symbol("x", nonnegative=True)


def exp_bounds(c: sp.Rational, n_terms: int = 40) -> tuple[sp.Rational, sp.Rational]:
    """Rational (lower, upper) bounds on exp(c) for rational 0 <= c <= 3.

    Lower: the Taylor partial sum (all terms positive). Upper: partial sum plus the
    Lagrange remainder bound c^(N+1) e^c/(N+1)! <= c^(N+1) 3^3/(N+1)! (e^c < 3^c <= 27).
    """
    c = sp.Rational(c)
    require(0 <= c <= 3, f"exp_bounds needs 0 <= c <= 3, got {c}")
    lo = sum(c**n / sp.factorial(n) for n in range(n_terms + 1))
    hi = lo + c ** (n_terms + 1) * 27 / sp.factorial(n_terms + 1)
    return lo, hi


@check(
    "theorem3a_inequality",
    statement="(1-x) >= exp(-(x+x^2)) on [0, 2/3]: f = log(1-x)+x+x^2 has f' = x(1-2x)/(1-x), f(0)=0, f(2/3)>0",
    reference="Thm. 3(a) [thm:converse], proof [app:thm:converse]",
    method="cancel(f'-claimed)==0; real roots of the numerator split the interval, signs at interior points; "
    "endpoint values bounded by rational Taylor bounds on exp",
    scope="symbolic x; the endpoint 2/3 (argument upper)",
)
def check_theorem3a_inequality(upper: sp.Rational = sp.Rational(2, 3)):
    """(1 − x) ≥ exp(−(x + x²)) on [0, upper], proved by derivative sign analysis.

    f(x) = log(1 − x) + x + x² is increasing on [0, 1/2] and decreasing on [1/2, 1), so on
    [0, upper] its minimum is min(f(0), f(upper)); f(0) = 0 and f(upper) >= 0 is decided exactly via
    exp(upper + upper²) >= 1/(1 − upper) with rational bounds on exp.

    Parameters
    ----------
    upper
        Claimed right end of the interval (the paper: 2/3). Must be rational in (0, 1).
    """
    upper = sp.Rational(upper)
    require(0 < upper < 1, "upper must lie in (0, 1)")
    f = sp.log(1 - x) + x + x**2
    fprime = x * (1 - 2 * x) / (1 - x)
    require_zero(sp.diff(f, x) - fprime, "f'(x) = x(1-2x)/(1-x)")
    num, den = sp.fraction(sp.cancel(fprime))
    roots = sorted(r for r in sp.real_roots(sp.Poly(num, x)) if 0 <= r <= upper)
    require(all(den.subs(x, r) != 0 for r in roots), "denominator vanishes at a critical point")
    # Sign of f' between consecutive critical points (continuous on [0, upper] since upper < 1).
    cuts = sorted(set([sp.Integer(0), *roots, upper]))
    signs = [sp.sign(fprime.subs(x, (a + b) / 2)) for a, b in zip(cuts, cuts[1:])]
    # Local minima of f on [0, upper] are among the endpoints and the points where f' goes - to +.
    candidates = [cuts[0], cuts[-1]] + [cuts[i] for i in range(1, len(cuts) - 1) if signs[i - 1] < 0 < signs[i]]
    for c in candidates:
        if c == 0:
            require(f.subs(x, 0) == 0, "f(0) != 0")
            continue
        lo, hi = exp_bounds(c + c**2)
        target = 1 / (1 - c)  # f(c) >= 0  <=>  exp(c + c^2) >= 1/(1 - c)
        if lo >= target:
            continue
        if hi < target:
            raise ClaimFailed(
                f"(1-x) >= exp(-(x+x^2)) fails at x={c}: exp({c + c**2}) <= {sp.N(hi, 8)} < 1/(1-x) = {target}"
            )
        require(False, f"could not decide the sign of f({c})")
    return {"scope": f"symbolic x on [0, {upper}]; signs of f' on {list(zip(cuts, cuts[1:]))} = {signs}"}


def paper_oracle_error(K: int, pbar: sp.Expr, l: int) -> sp.Expr:
    """((K−1)/K)(1 − p̄)^l: oracle error under the spammer–hammer model (proof of Thm. 3(a))."""
    return sp.Rational(K - 1, K) * (1 - pbar) ** l


@check(
    "theorem3a_spammer_hammer",
    statement=(
        "spammer-hammer (p_i in {0,1}, q=1), l answers from workers that are hammers i.i.d. w.p. pbar: "
        "Bayes-oracle error for g = ((K-1)/K)(1-pbar)^l; ((1/n)||p||^2 = pbar); and the threshold "
        "ns < log((K-1)/(K eps))/(2 pbar) => error > eps"
    ),
    reference="Thm. 3(a) [thm:converse], [eqn:minimax_error1], proof [app:thm:converse]",
    method="exact enumeration of worker types and answer profiles, uniform prior on g; expand(lhs-rhs)==0",
    scope="K=3,4, l=1..3, symbolic pbar; sampling-model identity n=2..6 symbolic s",
)
def check_theorem3a_spammer_hammer(oracle_error: Callable[[int, sp.Expr, int], sp.Expr] = paper_oracle_error):
    """The oracle error of the spammer–hammer construction in the proof of Theorem 3(a).

    Parameters
    ----------
    oracle_error
        Claimed ``oracle_error(K, pbar, l)``.
    """
    pbar = sp.Symbol("pbar", positive=True)
    for K in (3, 4):
        for l in range(1, 4):
            total_correct = sp.Integer(0)
            for types in itertools.product((0, 1), repeat=l):  # 1 = hammer
                w_types = sp.Mul(*[pbar if t else 1 - pbar for t in types])
                for answers in itertools.product(range(1, K + 1), repeat=l):
                    # P(answers | g): hammers answer g (p=1, q=1); spammers uniformly.
                    lik = [
                        sp.Mul(*[(sp.Integer(int(a == g)) if t else sp.Rational(1, K)) for t, a in zip(types, answers)])
                        for g in range(1, K + 1)
                    ]
                    total_correct += w_types * max(lik) / K  # Bayes rule under the uniform prior on g
            require_zero(1 - total_correct - oracle_error(K, pbar, l), f"oracle error at K={K}, l={l}")
    # (1/n)||p||^2 = pbar for pbar*n hammers; threshold arithmetic of Thm. 3(a).
    n, eps, L = sp.symbols("n epsilon L", positive=True)
    require_zero((pbar * n * 1**2) / n - pbar, "(1/n)||p||^2 for the spammer-hammer model")
    K_ = sp.Symbol("K", positive=True)
    # ((K-1)/K) exp(-2 pbar L) at L = log((K-1)/(K eps))/(2 pbar) equals eps; it decreases in L.
    bound = (K_ - 1) / K_ * sp.exp(-2 * pbar * L)
    require_zero(sp.simplify(bound.subs(L, sp.log((K_ - 1) / (K_ * eps)) / (2 * pbar)) - eps), "threshold")
    require(sp.diff(bound, L).is_negative is not False, "bound not decreasing in L")
    # Under eq. (1)'s sampling each worker is assigned independently w.p. s, so with n_h hammers
    # P(no hammer assigned) = (1-s)^{n_h} = sum_l P(l assigned) * C(n-n_h, l)/C(n, l).
    s = sp.Symbol("s", positive=True)
    for nn in range(2, 7):
        for nh in range(1, nn):
            lhs = sum(
                sp.binomial(nn, l) * s**l * (1 - s) ** (nn - l) * sp.binomial(nn - nh, l) / sp.binomial(nn, l)
                for l in range(0, nn + 1)
            )
            require_zero(lhs - (1 - s) ** nh, f"P(no hammer assigned) at n={nn}, n_h={nh}")
    # Conditionally on l assigned workers, C(n-n_h,l)/C(n,l) < (1-pbar)^l for l >= 2 (e.g. n=4, n_h=2, l=2).
    hyper = sp.binomial(2, 2) / sp.binomial(4, 2)
    require(hyper == sp.Rational(1, 6) and hyper < (1 - sp.Rational(2, 4)) ** 2, "hypergeometric vs binomial example")
    note = (
        "The proof's ((K-1)/K)(1-pbar)^l is exact when the l answers come from workers drawn with replacement "
        "(i.i.d. hammer w.p. pbar) and q=1. Under eq. (1)'s sampling, the l assigned workers are a uniform subset, "
        "so P(all spammers | l) = C(n-n_h,l)/C(n,l) <= (1-pbar)^l (e.g. 1/6 < 1/4 at n=4, n_h=2, l=2): the displayed "
        "equality then overstates the error. The unconditional error is exactly ((K-1)/K)(1-s)^{n pbar}, and "
        "(1-s) >= exp(-(s+s^2)) >= exp(-2s) for s <= 2/3 gives the same threshold ns < log((K-1)/(K eps))/(2 pbar); "
        "the condition needed is s <= 2/3 (not pbar <= 2/3)."
    )
    return {"note": note}


@check(
    "theorem3b_arithmetic",
    statement="1/2 - 1/4 sqrt(s n Dbar) >= 3/8 whenever 0 <= s <= 1/(4 n Dbar)",
    reference="Thm. 3(b) [thm:converse], [eqn:minimax_error2], proof [app:thm:converse]",
    method="monotone in t = s n Dbar in [0, 1/4]; exact value at t = 1/4; Pinsker constant checked on a Bernoulli pair "
    "with rational bounds on log",
    scope="symbolic t (= s n Dbar); Bernoulli(3/5) vs Bernoulli(2/5)",
)
def check_theorem3b_arithmetic(
    coefficient: sp.Expr = sp.Rational(1, 4),
    threshold: sp.Expr = sp.Rational(1, 4),
    bound: sp.Expr = sp.Rational(3, 8),
):
    """Theorem 3(b): 1/2 − c·√(s n D̄) ≥ bound when s n D̄ ≤ threshold.

    Parameters
    ----------
    coefficient
        c in front of √KL (the paper: 1/4).
    threshold
        Upper limit of t = s n D̄ (the paper: s ≤ 1/(4 n D̄), i.e. 1/4).
    bound
        Claimed lower bound (the paper: 3/8).
    """
    t = sp.Symbol("t", positive=True)  # t = s n Dbar; t = 0 is the trivial value 1/2
    lhs = sp.Rational(1, 2) - coefficient * sp.sqrt(t)
    require(sp.diff(lhs, t).is_nonpositive, "lhs not non-increasing in t")
    worst = sp.nsimplify(lhs.subs(t, threshold))
    require(sp.simplify(worst - bound) >= 0, f"at s n Dbar = {threshold}: 1/2 - {coefficient}*sqrt(.) = {worst} < {bound}")
    # Pinsker: TV <= sqrt(KL/2). The proof uses TV <= sqrt(KL)/2, which fails for P=Bern(3/5), Q=Bern(2/5):
    # TV = 1/5, KL = (1/5) log(3/2); TV^2 = 1/25 > KL/4 <=> log(3/2) < 4/5 <=> 3/2 < exp(4/5).
    lo, _ = exp_bounds(sp.Rational(4, 5), 10)
    require(lo > sp.Rational(3, 2), "could not certify log(3/2) < 4/5")
    corrected = sp.Rational(1, 2) - sp.sqrt(2) / 8
    require(sp.simplify(sp.Rational(1, 2) - sp.sqrt(threshold) / (2 * sp.sqrt(2)) - corrected) == 0, "corrected constant")
    note = (
        "The arithmetic 1/2 - (1/4)sqrt(1/4) = 3/8 is right, but the step 1/2 - TV/2 >= 1/2 - (1/4)sqrt(KL) needs "
        "TV <= sqrt(KL)/2, stronger than Pinsker (TV <= sqrt(KL/2)) and false: Bern(3/5) vs Bern(2/5) has TV = 1/5 > "
        "sqrt(KL)/2 = sqrt(log(3/2)/20) ~ 0.142. With Pinsker the bound is 1/2 - sqrt(KL/8), and s <= 1/(4 n Dbar) gives "
        "c = 1/2 - sqrt(2)/8 ~ 0.323 instead of 3/8; Theorem 3(b) (some universal c > 0) still holds. Also eq. "
        "conv2_4 writes KL >= s n Dbar where the argument needs equality (or <=), which holds by the choice of j_c."
    )
    return {"note": note}


@check(
    "majority_vote_vs_spectral",
    statement=(
        "(1/n)||p||^2 - ((1/n)sum p)^2 = (1/n^2) sum_{i<j}(p_i-p_j)^2 >= 0, = 0 iff all p_i equal; spammer-hammer with "
        "alpha n hammers: (1/n)||p||^2 = alpha, ((1/n)sum p)^2 = alpha^2, so ns = Theta(1/alpha) vs Theta(1/alpha^2)"
    ),
    reference="Sec. 5 majority-vote discussion (after Thm. 3 [thm:converse])",
    method="expand(lhs-rhs)==0 (Lagrange identity); sum of squares is 0 iff every term is 0",
    scope="n=2..6 symbolic p_i; spammer-hammer symbolic alpha, n",
)
def check_majority_vote_vs_spectral(
    gap: Callable[[list[sp.Symbol]], sp.Expr] = lambda ps: sum(
        (a - b) ** 2 for i, a in enumerate(ps) for b in ps[i + 1 :]
    )
    / len(ps) ** 2,
):
    """Sec. 5: the spectral rate (1/n)‖p‖² dominates the majority-vote rate ((1/n)Σp)².

    Parameters
    ----------
    gap
        Claimed closed form of (1/n)‖p‖² − ((1/n)Σp)² as a function of the list of p_i.
    """
    for n in range(2, 7):
        ps = list(sp.symbols(f"p1:{n + 1}", real=True))
        lhs = sum(v**2 for v in ps) / n - (sum(ps) / n) ** 2
        require_zero(lhs - gap(ps), f"Lagrange identity at n={n}")
    alpha, n = sp.symbols("alpha n", positive=True)
    spectral, mv = (alpha * n) / n, ((alpha * n) / n) ** 2
    require_zero(spectral - alpha, "(1/n)||p||^2 = alpha")
    require_zero(mv - alpha**2, "((1/n) sum p)^2 = alpha^2")
    require_zero((1 / mv) / (1 / spectral) - 1 / alpha, "sample-size ratio MV/spectral = 1/alpha")
