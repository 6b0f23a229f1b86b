"""Claims 9–11: Theorem 3 ingredients and the majority-vote comparison of Sec. 5."""

from __future__ import annotations

import itertools
from typing import Any, Callable

import sympy as sp

from ._core import ClaimFailed, check, require, require_zero
from .model import p, q

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
def check_theorem3a_inequality(upper: sp.Rational = sp.Rational(2, 3), quadratic: sp.Rational = sp.Integer(1)):
    """(1 − x) ≥ exp(−(x + a x²)) on [0, upper], proved by derivative sign analysis (a = 1 in the paper).

    f(x) = log(1 − x) + x + a x²; for a = 1, f' = x(1 − 2x)/(1 − x), so f increases on [0, 1/2] and
    decreases on [1/2, 1) and on [0, upper] its minimum is min(f(0), f(upper)); f(0) = 0 and
    f(upper) >= 0 is decided exactly via exp(upper + a upper²) >= 1/(1 − upper) with rational bounds on exp.

    Parameters
    ----------
    upper
        Claimed right end of the interval (the paper: 2/3). Must be rational in (0, 1).
    quadratic
        Claimed coefficient a of x² (the paper: 1).
    """
    upper = sp.Rational(upper)
    a = sp.Rational(quadratic)
    require(0 < upper < 1, "upper must lie in (0, 1)")
    f = sp.log(1 - x) + x + a * x**2
    fprime = sp.cancel(sp.diff(f, x))
    if a == 1:
        require_zero(fprime - x * (1 - 2 * x) / (1 - x), "f'(x) = x(1-2x)/(1-x)")
    num, den = sp.fraction(fprime)
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
        lo, hi = exp_bounds(c + a * c**2)
        target = 1 / (1 - c)  # f(c) >= 0  <=>  exp(c + a c^2) >= 1/(1 - c)
        if lo >= target:
            continue
        if hi < target:
            raise ClaimFailed(
                f"(1-x) >= exp(-(x+{a}x^2)) fails at x={c}: exp({c + a * c**2}) <= {sp.N(hi, 8)} < 1/(1-x) = {target}"
            )
        require(False, f"could not decide the sign of f({c})")
    return {"scope": f"symbolic x on [0, {upper}]; signs of f' on {list(zip(cuts, cuts[1:]))} = {signs}"}


def exp_lower(c: sp.Rational, n_terms: int = 30) -> sp.Rational:
    """A rational lower bound on exp(c) for any rational c >= 0 (Taylor partial sum)."""
    c = sp.Rational(c)
    require(c >= 0, f"exp_lower needs c >= 0, got {c}")
    return sum(c**n / sp.factorial(n) for n in range(n_terms + 1))


def exact_oracle_error(K: int, n: int, n_h: int, s_: sp.Expr) -> sp.Expr:
    """((K−1)/K)(1 − s)^{n_h}: Bayes error for g, n_h hammers among n workers, eq. (1)'s sampling."""
    return sp.Rational(K - 1, K) * (1 - s_) ** n_h


def paper_conditional_error(K: int, n: int, n_h: int, l: int) -> sp.Expr:
    """((K−1)/K)(1 − p̄)^l with p̄ = n_h/n: the proof's error given l answers (workers drawn with replacement)."""
    return sp.Rational(K - 1, K) * (1 - sp.Rational(n_h, n)) ** l


def subset_conditional_error(K: int, n: int, n_h: int, l: int) -> sp.Expr:
    """((K−1)/K) C(n−n_h, l)/C(n, l): error given l answers when the l answerers are a uniform subset."""
    return sp.Rational(K - 1, K) * sp.binomial(n - n_h, l) / sp.binomial(n, l)


def _bayes_correct_given_assignment(K: int, hammers: tuple[int, ...]) -> sp.Rational:
    """P(Bayes rule is right | the assigned workers' types), uniform prior on g, q = 1.

    Enumerates every answer profile: a hammer answers g, a spammer uniformly in [K].
    """
    total = sp.Integer(0)
    for answers in itertools.product(range(1, K + 1), repeat=len(hammers)):
        lik = [
            sp.Mul(*[(sp.Integer(int(a == g)) if t else sp.Rational(1, K)) for t, a in zip(hammers, answers)])
            for g in range(1, K + 1)
        ]
        total += max(lik) / K
    return total


@check(
    "theorem3a_spammer_hammer",
    statement=(
        "spammer-hammer crowd (n_h hammers p=1, q=1; spammers p=0), eq. (1)'s sampling (each worker assigned "
        "w.p. s independently): the Bayes-oracle error for g is exactly ((K-1)/K)(1-s)^{n_h}, non-increasing in s; "
        "given l answers it is ((K-1)/K) C(n-n_h,l)/C(n,l) <= ((K-1)/K)(1-pbar)^l (the proof's value, exact only for "
        "answerers drawn with replacement); ((K-1)/K) exp(-2 pbar L) = eps exp(2 pbar (L*-L)), so it exceeds eps "
        "iff L < L* = log((K-1)/(K eps))/(2 pbar)"
    ),
    reference="Thm. 3(a) [thm:converse], [eqn:minimax_error1], proof [app:thm:converse]",
    method=(
        "exact enumeration of assignment subsets, worker types and answer profiles (Bayes rule = max likelihood "
        "under the uniform prior); expand(lhs-rhs)==0; factor-by-factor ratio identity for the hypergeometric "
        "bound; exact identities for the threshold and the derivatives"
    ),
    scope="eq. (1) model: K=3..5, n=2..4, every 1<=n_h<n, symbolic s; with replacement: K=3,4, l=1..3, symbolic pbar; "
    "hypergeometric bound: symbolic n, n_h, t",
)
def check_theorem3a_spammer_hammer(
    oracle_error: Callable[[int, int, int, sp.Expr], sp.Expr] = exact_oracle_error,
    conditional_error: Callable[[int, int, int, int], sp.Expr] = subset_conditional_error,
    replacement_error: Callable[[int, sp.Expr, int], sp.Expr] | None = None,
):
    """The error floor of the spammer–hammer construction in the proof of Theorem 3(a).

    Parameters
    ----------
    oracle_error
        Claimed unconditional Bayes error ``oracle_error(K, n, n_h, s)`` under eq. (1).
    conditional_error
        Claimed error given l answers, ``conditional_error(K, n, n_h, l)``, under eq. (1)
        (the answerers are a uniform l-subset of the workers).
    replacement_error
        Claimed error ``replacement_error(K, pbar, l)`` when the l answerers are drawn with
        replacement (each a hammer w.p. pbar); default the proof's ((K−1)/K)(1 − pbar)^l.
    """
    if replacement_error is None:
        replacement_error = lambda K, pb, l: sp.Rational(K - 1, K) * (1 - pb) ** l  # noqa: E731
    s_ = sp.Symbol("s", positive=True)
    # (i) eq. (1)'s sampling: enumerate which workers are assigned, then the answers.
    for K in (3, 4, 5):
        for n in range(2, 5):
            for n_h in range(1, n):
                types = (1,) * n_h + (0,) * (n - n_h)
                total_err = sp.Integer(0)
                by_l = {l: sp.Integer(0) for l in range(n + 1)}
                cache: dict[tuple[int, ...], sp.Rational] = {}
                for assigned in itertools.product((0, 1), repeat=n):
                    hams = tuple(sorted((t for t, a in zip(types, assigned) if a), reverse=True))
                    if hams not in cache:
                        cache[hams] = _bayes_correct_given_assignment(K, hams)
                    l = sum(assigned)
                    err = 1 - cache[hams]
                    total_err += s_**l * (1 - s_) ** (n - l) * err
                    by_l[l] += err / sp.binomial(n, l)
                require_zero(total_err - oracle_error(K, n, n_h, s_), f"Bayes error under eq. (1) at K={K}, n={n}, n_h={n_h}")
                for l in range(n + 1):
                    require_zero(by_l[l] - conditional_error(K, n, n_h, l), f"error given l={l} answers, K={K}, n={n}, n_h={n_h}")
                # Monotone in s: d/ds of the claimed error = -n_h (K-1)/K (1-s)^{n_h-1} (factor by factor <= 0).
                require_zero(
                    sp.diff(oracle_error(K, n, n_h, s_), s_) + n_h * sp.Rational(K - 1, K) * (1 - s_) ** (n_h - 1),
                    f"d/ds of the error at K={K}, n={n}, n_h={n_h}",
                )
    # (ii) the proof's model: l answerers drawn with replacement, each a hammer w.p. pbar.
    pbar = sp.Symbol("pbar", positive=True)
    for K in (3, 4):
        for l in range(1, 4):
            correct = sp.Integer(0)
            for hams in itertools.product((0, 1), repeat=l):
                w = sp.Mul(*[pbar if t else 1 - pbar for t in hams])
                correct += w * _bayes_correct_given_assignment(K, hams)
            require_zero(1 - correct - replacement_error(K, pbar, l), f"with-replacement error at K={K}, l={l}")
    # (iii) C(n-n_h,l)/C(n,l) = prod_{t<l} (n-n_h-t)/(n-t), and each factor is <= (n-n_h)/n:
    # (n-n_h)/n - (n-n_h-t)/(n-t) = n_h t/(n(n-t)) >= 0 for 0 <= t < n.
    n_, nh_, t_ = sp.symbols("n n_h t", positive=True)
    require_zero((n_ - nh_) / n_ - (n_ - nh_ - t_) / (n_ - t_) - nh_ * t_ / (n_ * (n_ - t_)), "factor-wise bound")
    for n in range(2, 7):
        for n_h in range(1, n):
            for l in range(n - n_h + 1):
                prod = sp.Mul(*[sp.Rational(n - n_h - t, n - t) for t in range(l)])
                require(prod == sp.binomial(n - n_h, l) / sp.binomial(n, l), f"product form at n={n}, n_h={n_h}, l={l}")
    # (iv) threshold: ((K-1)/K) exp(-2 pbar L) = eps exp(2 pbar (L* - L)) exactly, > eps iff L < L*;
    # its L-derivative is -2 pbar times itself (both factors signed), so it decreases in L.
    K_, eps, L = sp.symbols("K epsilon L", positive=True)
    bound = (K_ - 1) / K_ * sp.exp(-2 * pbar * L)
    L_star = sp.log((K_ - 1) / (K_ * eps)) / (2 * pbar)
    require_zero(sp.expand_log(sp.log(bound) - sp.log(eps * sp.exp(2 * pbar * (L_star - L))), force=True), "threshold identity")
    require_zero(sp.diff(bound, L) + 2 * pbar * bound, "d/dL bound = -2 pbar bound")
    note = (
        "The proof's ((K-1)/K)(1-pbar)^l is exact when the l answers come from workers drawn with replacement "
        "(each a hammer w.p. pbar) and q=1. Under eq. (1)'s sampling the l answerers are a uniform subset and the "
        "error given l is ((K-1)/K) C(n-n_h,l)/C(n,l) <= ((K-1)/K)(1-pbar)^l (strict for l >= 2), so the displayed "
        "equality overstates it. The unconditional error is exactly ((K-1)/K)(1-s)^{n pbar}; (1-s)^{n pbar} >= "
        "exp(-2 s n pbar) holds iff s <= s* = 0.79681... (check theorem3a_rate_threshold; s <= 2/3 is sufficient, "
        "not needed) and gives the threshold ns < log((K-1)/(K eps))/(2 pbar). The condition is on s, not on pbar."
    )
    return {"note": note}


@check(
    "theorem3a_rate_threshold",
    statement=(
        "-log(1-s) <= 2s, i.e. (1-s)^l >= exp(-2sl) for all l, holds exactly for s in [0, s*], s* in "
        "(0.79681, 0.79682) the unique root in (1/2, 1); hence s <= 2/3 is sufficient but not needed"
    ),
    reference="Thm. 3(a) [thm:converse], proof [app:thm:converse] ((1-x) >= exp(-(x+x^2)) >= exp(-2x))",
    method=(
        "h(s) = log(1-s)+2s: cancel(h'-(1-2s)/(1-s))==0, sign of h' from its linear numerator; h(0)=0; "
        "certified bracket via rational Taylor bounds on exp at the bracket ends"
    ),
    scope="symbolic s; bracket [79681/100000, 79682/100000]",
)
def check_theorem3a_rate_threshold(
    bracket: tuple[sp.Rational, sp.Rational] = (sp.Rational(79681, 100000), sp.Rational(79682, 100000)),
    sufficient: sp.Rational = sp.Rational(2, 3),
):
    """The exact range of s on which Theorem 3(a)'s exponential bound follows from (1 − s)^l.

    Parameters
    ----------
    bracket
        Claimed rational (lo, hi) with s* in (lo, hi).
    sufficient
        A claimed sufficient condition s <= ``sufficient`` (the README: 2/3); it must lie in [0, lo].
    """
    x_ = sp.Symbol("s", positive=True)
    h = sp.log(1 - x_) + 2 * x_
    hprime = (1 - 2 * x_) / (1 - x_)
    require_zero(sp.diff(h, x_) - hprime, "h'(s) = (1-2s)/(1-s)")
    num, den = sp.fraction(sp.cancel(hprime))
    roots = sp.Poly(num, x_).real_roots()
    require(roots == [sp.Rational(1, 2)], f"h' vanishes only at 1/2 on (0,1): roots {roots}")
    # den = 1 - s > 0 on (0,1); numerator 1 - 2s: h increases on [0,1/2], decreases on [1/2,1).
    require(sp.sign(hprime.subs(x_, sp.Rational(1, 4))) > 0 and sp.sign(hprime.subs(x_, sp.Rational(3, 4))) < 0, "sign of h'")
    require(h.subs(x_, 0) == 0, "h(0) = 0")
    lo, hi = (sp.Rational(v) for v in bracket)
    require(sp.Rational(1, 2) < lo < hi < 1, f"bracket {bracket} must lie in (1/2, 1) with lo < hi")
    # h(lo) > 0  <=>  (1-lo) exp(2 lo) > 1; h(hi) < 0  <=>  (1-hi) exp(2 hi) < 1.
    lo_exp, _ = exp_bounds(2 * lo)
    _, hi_exp = exp_bounds(2 * hi)
    require((1 - lo) * lo_exp > 1, f"h({lo}) > 0 not certified: the root s* is not above {lo}")
    require((1 - hi) * hi_exp < 1, f"h({hi}) < 0 not certified: the root s* is not below {hi}")
    suff = sp.Rational(sufficient)
    require(0 <= suff <= lo, f"claimed sufficient s <= {suff} exceeds the certified range s <= {lo}")
    note = (
        f"(1-s)^(n pbar) >= exp(-2 s n pbar) holds exactly for s <= s*, s* in ({lo}, {hi}) "
        f"(toptwo.theory.THEOREM3A_MAX_SAMPLING_RATE = 0.79681...). The paper's route (1-x) >= exp(-(x+x^2)) "
        "needs x <= 2/3, which is sufficient but not needed; the paper applies it to pbar, but under eq. (1) the "
        "variable is s. toptwo.theory.minimax_lower_bound_g refuses s > s*."
    )
    return {"note": note}


def _pinsker_counterexample(coefficient: sp.Expr) -> tuple[sp.Rational, sp.Expr] | None:
    """A Bernoulli pair (1/2+d, 1/2−d) with TV > 2c·sqrt(KL), certified, or None.

    TV = 2d and KL = 2d log r, r = (1+2d)/(1−2d); TV > 2c sqrt(KL) <=> d > 2c² log r
    <=> r < exp(d/(2c²)) (for c > 0), certified with a Taylor lower bound on exp.
    Any c < sqrt(2)/4 fails for small enough d (TV²/KL -> 1/2 as d -> 0).
    """
    c2 = sp.nsimplify(coefficient**2)
    for d in (sp.Rational(1, 5), sp.Rational(1, 20), sp.Rational(1, 100), sp.Rational(1, 1000), sp.Rational(1, 10**5)):
        r = (1 + 2 * d) / (1 - 2 * d)
        if c2 == 0:
            return d, sp.Integer(0)
        arg = d / (2 * c2)
        if not arg.is_rational:
            arg = sp.Rational(sp.floor(arg * 10**30), 10**30)  # rounding down keeps the bound valid
        if exp_lower(arg) > r:
            return d, c2
    return None


def corrected_theorem3b_coefficient() -> sp.Expr:
    """sqrt(2)/4: 1/2 − TV/2 >= 1/2 − sqrt(KL/8) by Le Cam and Pinsker (TV <= sqrt(KL/2))."""
    return sp.sqrt(2) / 4


@check(
    "theorem3b_arithmetic",
    statement=(
        "Le Cam + Pinsker: 1/2 - TV/2 >= 1/2 - c sqrt(KL) needs c >= sqrt(2)/4; with KL = s n Dbar <= 1/4 the bound "
        "is >= 1/2 - sqrt(2)/8 ~ 0.323 (the paper's c = 1/4, bound 3/8, rests on TV <= sqrt(KL)/2, which is false)"
    ),
    reference="Thm. 3(b) [thm:converse], [eqn:minimax_error2], proof [app:thm:converse] ([eqn:conv2_2])",
    method=(
        "coefficient: c^2 >= 1/8 accepted (Pinsker), else a Bernoulli pair with TV > 2c sqrt(KL) certified with "
        "rational bounds on exp; bound: (1/2 - bound)^2 >= c^2 t at t = threshold, monotone in t"
    ),
    scope="symbolic t = s n Dbar in [0, 1/4]; Bernoulli(1/2+d) vs Bernoulli(1/2-d), d = 1/5 .. 1e-5",
)
def check_theorem3b_arithmetic(
    coefficient: sp.Expr = sp.sqrt(2) / 4,
    threshold: sp.Expr = sp.Rational(1, 4),
    bound: sp.Expr = sp.Rational(1, 2) - sp.sqrt(2) / 8,
):
    """Theorem 3(b): the minimax pair error is >= ``bound`` when s n D̄ <= ``threshold``.

    Parameters
    ----------
    coefficient
        c in 1/2 − TV/2 >= 1/2 − c·√KL (Pinsker: √2/4; the paper: 1/4, invalid).
    threshold
        Upper limit of t = s n D̄ (the paper: s <= 1/(4 n D̄), i.e. 1/4).
    bound
        Claimed lower bound (Pinsker: 1/2 − √2/8; the paper: 3/8).
    """
    c = sp.nsimplify(coefficient)
    require(c.is_real and c >= 0, f"coefficient must be real and >= 0, got {c}")
    if sp.nsimplify(c**2) < sp.Rational(1, 8):
        ce = _pinsker_counterexample(c)
        require(ce is None, f"1/2 - TV/2 >= 1/2 - {c} sqrt(KL) needs TV <= {2 * c} sqrt(KL), false for Bernoulli"
                f"(1/2+d) vs Bernoulli(1/2-d) at d = {ce[0] if ce else ''} (Pinsker's TV <= sqrt(KL/2) is tight)")
        require(False, f"coefficient {c} < sqrt(2)/4 but no certified counterexample found")
    t = sp.Symbol("t", positive=True)  # t = s n Dbar; the bound 1/2 - c sqrt(t) decreases in t
    require_zero(sp.diff(sp.Rational(1, 2) - c * sp.sqrt(t), t) + c / (2 * sp.sqrt(t)), "d/dt (1/2 - c sqrt t)")
    thr, b = sp.nsimplify(threshold), sp.nsimplify(bound)
    require(thr >= 0, "threshold must be >= 0")
    gap = sp.Rational(1, 2) - b
    # 1/2 - c sqrt(thr) >= b  <=>  gap >= 0 and gap^2 >= c^2 thr  (exact; all quantities algebraic)
    ok = bool(gap >= 0) and bool(sp.nsimplify(sp.expand(gap**2 - c**2 * thr)) >= 0)
    require(ok, f"at s n Dbar = {thr}: 1/2 - {c}*sqrt({thr}) = {sp.nsimplify(sp.Rational(1, 2) - c * sp.sqrt(thr))} < {b}")
    # The paper's step: TV <= sqrt(KL)/2 fails for Bern(3/5) vs Bern(2/5) (TV^2 = 1/25 > KL/4 <=> 3/2 < e^{4/5}).
    require(exp_lower(sp.Rational(4, 5), 10) > sp.Rational(3, 2), "could not certify log(3/2) < 4/5")
    note = (
        "The proof's step 1/2 - TV/2 >= 1/2 - (1/4)sqrt(KL) needs TV <= sqrt(KL)/2, stronger than Pinsker "
        "(TV <= sqrt(KL/2)) and false: Bern(3/5) vs Bern(2/5) has TV = 1/5 > sqrt(KL)/2 ~ 0.142. With Pinsker the "
        "bound is 1/2 - sqrt(KL/8), and s <= 1/(4 n Dbar) gives c = 1/2 - sqrt(2)/8 ~ 0.323 instead of 3/8. For a "
        "single task (or identical q) Theorem 3(b) then holds with this c; for heterogeneous q see "
        "theorem3b_heterogeneous_q. Eq. conv2_4 writes KL >= s n Dbar where the argument needs <= (equality at j_c)."
    )
    return {"note": note}


def _interval_bc_products(K: int, ps: list[sp.Rational], qv: sp.Rational) -> dict[str, Any]:
    """Upper ends of prod_i BC_i per alternative class (mpmath interval arithmetic), s = 1.

    BC_i = sum_k sqrt(mu_k mu'_k) is the Bhattacharyya coefficient of worker i's answer laws
    under the true pair and under the alternative; P(likelihood of the alternative >= that of
    the truth) <= prod_i BC_i (Chernoff at 1/2).
    """
    from mpmath import iv

    iv.dps = 40
    from .checks_divergence import classify

    g, h = 1, 2
    out = {}
    for a, b in ((x, y) for x in range(1, K + 1) for y in range(1, K + 1) if x != y and (x, y) != (g, h)):
        prod = iv.mpf(1)
        for pv in ps:
            P, Q = iv.mpf(int(pv.p)) / int(pv.q), iv.mpf(int(qv.p)) / int(qv.q)
            e = (1 - P) / K
            mu = [P * Q + e if k == g else P * (1 - Q) + e if k == h else e for k in range(1, K + 1)]
            nu = [P * Q + e if k == a else P * (1 - Q) + e if k == b else e for k in range(1, K + 1)]
            prod *= sum(iv.sqrt(m_ * n_) for m_, n_ in zip(mu, nu))
        upper = prod.b  # degenerate interval at the upper end; print with 20 digits and round up
        out[f"{classify(a, b, g, h)} ({a},{b})"] = float(str(upper).strip("[]").split(",")[0]) * (1 + 1e-12)
    return out


def aggregate_max(ds: list[sp.Expr]) -> sp.Expr:
    """max_j D̄^(j): the hypothesis s <= 1/(4 n max_j D̄^(j)) makes every task hard."""
    return sp.Max(*ds)


def aggregate_min(ds: list[sp.Expr]) -> sp.Expr:
    """min_j D̄^(j) = D̄ as printed (l. 388-389)."""
    return sp.Min(*ds)


@check(
    "theorem3b_heterogeneous_q",
    statement=(
        "per task j, Le Cam with task j's closest pair gives error_j >= 1/2 - sqrt(s n Dbar^(j)/8) (KL of the data "
        "of task j = s n Dbar^(j)); so the average error is >= c = 1/2 - sqrt(2)/8 when s <= 1/(4 n max_j Dbar^(j)), "
        "and the worst task's error is >= c when s <= 1/(4 n min_j Dbar^(j)) (= 1/(4 n Dbar)); with identical q "
        "all Dbar^(j) are equal and Theorem 3(b) holds as printed. As printed (average, min_j) it is false: "
        "certified counterexample n=80, m=400, K=3, p_i evenly in [0.6, 0.95], q_j=3/4, q_0=1/2+1e-4, s=1"
    ),
    reference="Thm. 3(b) [thm:converse], proof [app:thm:converse] ([eqn:conv2_3], [eqn:conv2_4]), Dbar (l. 388-389)",
    method=(
        "KL of 'unassigned w.p. 1-s, else mu' = s KL(mu, mu') by expand_log; hypothesis => conclusion by ordering "
        "Dbar^(j) with positive increments and checking coefficients; counterexample: Dbar^(0) <= 3(2q_0-1)^2 "
        "(log z <= z-1), oracle-MLE error <= sum over alternatives of prod_i Bhattacharyya coefficients (mpmath "
        "interval arithmetic)"
    ),
    scope="symbolic s, atoms x, y, e; m = 2, 3 tasks for the aggregation; the counterexample numerically certified",
)
def check_theorem3b_heterogeneous_q(
    aggregate: Callable[[list[sp.Expr]], sp.Expr] = aggregate_max,
    conclusion: str = "average",
    constant: sp.Expr = sp.Rational(1, 2) - sp.sqrt(2) / 8,
):
    """Which version of Theorem 3(b) holds when the tasks have different q_j.

    Parameters
    ----------
    aggregate
        Claimed hypothesis s <= 1/(4 n ``aggregate``([D̄^(1), ..., D̄^(m)])); the paper: min.
    conclusion
        ``"average"`` (the average over tasks of the pair error, as printed) or
        ``"worst task"`` (the largest per-task error).
    constant
        Claimed c in the conclusion (at most 1/2 − √2/8).
    """
    require(conclusion in ("average", "worst task"), f"conclusion must be 'average' or 'worst task', got {conclusion!r}")
    c = sp.nsimplify(constant)
    # (i) the data of one task: each worker unassigned w.p. 1-s (same under both pairs), else mu / mu'.
    s_ = sp.Symbol("s", positive=True)
    Xa, Ya, Ea = sp.symbols("x y e", positive=True)
    mu, nu = [1 - s_, s_ * Xa, s_ * Ya, s_ * Ea], [1 - s_, s_ * Ya, s_ * Xa, s_ * Ea]
    kl_mix = sum(a * sp.log(a / b) for a, b in zip(mu, nu))
    kl_one = Xa * sp.log(Xa / Ya) + Ya * sp.log(Ya / Xa)
    require_zero(sp.expand_log(kl_mix - s_ * kl_one, force=True), "KL of the sampled answer = s KL(mu, mu')")
    # (ii) per-task bound >= c iff t_j = s n Dbar^(j) <= 1/4 (then 1/2 - sqrt(t/8) >= 1/2 - sqrt(1/32) >= c).
    require(bool(sp.Rational(1, 2) - c >= 0) and bool(sp.nsimplify(sp.expand((sp.Rational(1, 2) - c) ** 2)) >= sp.Rational(1, 32)),
            f"constant {c} exceeds 1/2 - sqrt(2)/8, the per-task Le Cam + Pinsker bound at s n Dbar^(j) = 1/4")
    # (iii) hypothesis s n A(D) <= 1/4 gives t_j <= 1/4 for every j (average) or for some j (worst task)
    # iff A(D) >= max_j D_j (resp. >= min_j D_j). Decide on every ordering of m = 2, 3 values.
    for m in (2, 3):
        incs = sp.symbols(f"d1:{m + 1}", positive=True)
        sorted_vals = [sum(incs[: k + 1]) for k in range(m)]  # D_(1) < ... < D_(m)
        for perm in itertools.permutations(range(m)):
            ds = [sorted_vals[perm[j]] for j in range(m)]
            A = aggregate(ds)
            need = sorted_vals[-1] if conclusion == "average" else sorted_vals[0]
            diff = sp.expand(sp.simplify(A - need))
            poly = sp.Poly(diff, *incs) if diff != 0 else None
            if poly is not None and any(cf < 0 for cf in poly.coeffs()):
                raise ClaimFailed(
                    f"hypothesis s <= 1/(4 n A(Dbar^(j))) does not make s n Dbar^(j) <= 1/4 for "
                    f"{'every' if conclusion == 'average' else 'some'} task: A(D) - {'max' if conclusion == 'average' else 'min'}"
                    f"(D) = {diff} at m={m} (ordering {perm})"
                )
    # (iv) the printed statement's counterexample, certified: the hypothesis allows s = 1, yet the oracle MLE
    # (a particular estimator, so an upper bound on the minimax error) averages below c.
    n, m, K = 80, 400, 3
    ps = [sp.Rational(3, 5) + sp.Rational(7, 20) * sp.Rational(i, n - 1) for i in range(n)]
    q_easy, q_hard = sp.Rational(3, 4), sp.Rational(1, 2) + sp.Rational(1, 10**4)
    # Dbar^(0) <= mean_i swapKL_i = mean p(2q-1) log(x/y) <= mean p^2 (2q-1)^2 / y <= (2q-1)^2 / min(1-q, 1/K).
    z = sp.Symbol("z", positive=True)
    require_zero(sp.diff(z - 1 - sp.log(z), z) - (1 - 1 / z), "log z <= z - 1 (convexity; minimum at z = 1)")
    d0_upper = (2 * q_hard - 1) ** 2 / min(1 - q_hard, sp.Rational(1, K))
    # Dbar^(j) for the easy tasks: exact value through the KL closed forms, evaluated at 30 digits.
    from .checks_divergence import kl_alternatives

    forms = kl_alternatives(K)
    d_easy = min(
        sum(sp.N(f.subs({p: pv, q: q_easy}), 30) for pv in ps) / n for f in (forms["swap (h,g)"], forms["(g,c)"])
    )
    d_values = [d0_upper] + [sp.Float(d_easy, 30)] * 2  # three tasks represent the instance (min, max agree)
    A_value = sp.N(aggregate(d_values), 30)
    allows_s1 = bool(n * A_value <= sp.Rational(1, 4))
    products = _interval_bc_products(K, ps, q_easy)
    per_task = min(1, float(sum(products.values())))
    avg_upper = (1 + (m - 1) * per_task) / m
    c_pinsker = sp.Rational(1, 2) - sp.sqrt(2) / 8
    require(n * d0_upper <= sp.Rational(1, 4) and avg_upper < float(sp.N(c_pinsker, 30)),
            f"the counterexample is not certified: n Dbar^(0) <= {float(n * d0_upper):.3g}, error <= {avg_upper:.4f}")
    if conclusion == "average" and allows_s1 and avg_upper < float(sp.N(c, 30)):
        raise ClaimFailed(
            f"counterexample: with n={n}, m={m}, K={K}, p evenly in [3/5, 19/20], q_j = 3/4 and q_0 = 1/2 + 1e-4, "
            f"the hypothesis holds at s = 1 (n A(Dbar) <= {float(n * A_value):.3g} <= 1/4, Dbar^(0) <= {float(d0_upper):.3g}) "
            f"but the oracle MLE's average pair error is <= {avg_upper:.4f} < c = {float(sp.N(c)):.4f}"
        )
    note = (
        "Theorem 3(b) as printed (average error >= c whenever s <= 1/(4 n Dbar), Dbar = min_j Dbar^(j)) is false for "
        "heterogeneous q: the proof's step conv2_4 uses task j's own q_j, so KL = s n Dbar holds only at j = j_c. "
        f"Certified counterexample (n=80, m=400, K=3, p evenly spread on [0.6, 0.95], q_j=3/4, q_0=1/2+1e-4): "
        f"1/(4 n Dbar) >= {float(1 / (4 * n * d0_upper)):.3g} so s = 1 is allowed, and the oracle MLE's average pair "
        f"error is <= {avg_upper:.4f} (Bhattacharyya union bound) < 0.323. What holds: (a) identical q across tasks "
        "(all Dbar^(j) equal): as printed, with c = 1/2 - sqrt(2)/8; (b) average error >= c when "
        "s <= 1/(4 n max_j Dbar^(j)); (c) the worst task's error >= c when s <= 1/(4 n Dbar); in general the average is "
        ">= c * #{j: s n Dbar^(j) <= 1/4}/m. Monte Carlo: toptwo.theory.theorem3b_counterexample."
    )
    return {"note": note}


def paper_mv_margins() -> dict[str, sp.Expr]:
    """Per-answer expected vote margins of majority vote under eq. (1), given assignment."""
    return {"g over c": p * q, "g over h": p * (2 * q - 1), "h over c": p * (1 - q)}


@check(
    "majority_vote_vs_spectral",
    statement=(
        "(1/n)||p||^2 - ((1/n)sum p)^2 = (1/n^2) sum_{i<j}(p_i-p_j)^2 >= 0; majority vote's per-answer expected "
        "margins are p q (g over c), p(2q-1) (g over h), p(1-q) (h over c), linear in p_i, so over l answers from "
        "uniformly chosen workers Hoeffding gives error <= (K-1) exp(-l mu^2/2), mu = ((1/n)sum p) * gap: "
        "l >= 2 log((K-1)/eps)/mu^2 suffices (the O side of MV's Theta((1/n sum p)^-2 log 1/eps)); spammer-hammer: "
        "(1/n)||p||^2 = alpha vs ((1/n)sum p)^2 = alpha^2"
    ),
    reference="Sec. 5 majority-vote discussion (after Thm. 3 [thm:converse])",
    method=(
        "expand(lhs-rhs)==0 (Lagrange identity); margins summed label by label from eq. (1); Hoeffding exponent "
        "2(l mu)^2/(l (b-a)^2) with b-a = 2 reduced exactly; threshold identity"
    ),
    scope="n=2..6 symbolic p_i; margins K=3..6 all (g,h), symbolic p, q; symbolic l, mu, K, eps; spammer-hammer symbolic alpha, n. "
    "The Omega side (MV needs that many) is a CLT statement, not checked",
)
def check_majority_vote_vs_spectral(
    gap: Callable[[list[sp.Symbol]], sp.Expr] = lambda ps: sum(
        (a - b) ** 2 for i, a in enumerate(ps) for b in ps[i + 1 :]
    )
    / len(ps) ** 2,
    margins: Callable[[], dict[str, sp.Expr]] = paper_mv_margins,
    hoeffding_range: sp.Expr = sp.Integer(2),
):
    """Sec. 5: the spectral rate (1/n)‖p‖² against majority vote's ((1/n)Σp)².

    Parameters
    ----------
    gap
        Claimed closed form of (1/n)‖p‖² − ((1/n)Σp)² as a function of the list of p_i.
    margins
        Claimed per-answer expected vote margins (given assignment) per comparison.
    hoeffding_range
        Claimed range b − a of one vote-difference increment (1(A=a) − 1(A=b) lies in [−1, 1]).
    """
    from .model import answer_probabilities

    for n in range(2, 7):
        ps = list(sp.symbols(f"p1:{n + 1}", real=True))
        lhs = sum(v**2 for v in ps) / n - (sum(ps) / n) ** 2
        require_zero(lhs - gap(ps), f"Lagrange identity at n={n}")
    claimed = margins()
    for K in range(3, 7):
        for g, h in ((1, 2), (K, 1), (2, K)):
            pr = answer_probabilities(K, g, h, s=sp.Integer(1))
            c = next(k for k in range(1, K + 1) if k not in (g, h))
            require_zero(pr[g] - pr[c] - claimed["g over c"], f"MV margin g over c at K={K}")
            require_zero(pr[g] - pr[h] - claimed["g over h"], f"MV margin g over h at K={K}")
            require_zero(pr[h] - pr[c] - claimed["h over c"], f"MV margin h over c at K={K}")
    # Each increment 1(A=a) - 1(A=b) takes values in {-1, 0, 1}: range 2.
    require(sp.nsimplify(hoeffding_range) == 2, f"vote-difference increments range over [-1, 1] (width 2), not {hoeffding_range}")
    l, mu, K_, eps = sp.symbols("l mu K epsilon", positive=True)
    exponent = 2 * (l * mu) ** 2 / (l * hoeffding_range**2)
    require_zero(exponent - l * mu**2 / 2, "Hoeffding exponent for a sum of l increments with mean mu")
    l_star = 2 * sp.log((K_ - 1) / eps) / mu**2
    require_zero(sp.simplify((K_ - 1) * sp.exp(-exponent.subs(l, l_star)) - eps), "(K-1) exp(-l* mu^2/2) = eps")
    alpha, n = sp.symbols("alpha n", positive=True)
    spectral, mv = (alpha * n) / n, ((alpha * n) / n) ** 2
    require_zero(spectral - alpha, "(1/n)||p||^2 = alpha")
    require_zero(mv - alpha**2, "((1/n) sum p)^2 = alpha^2")
    require_zero((1 / mv) / (1 / spectral) - 1 / alpha, "sample-size ratio MV/spectral = 1/alpha")
