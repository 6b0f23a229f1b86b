"""Claim 14 (beyond the paper): the algebra of the EM estimator ``toptwo.TopTwoEM``.

The E-step writes each answer's log-probability as a constant plus per-label weights,
and the expected complete-data log-likelihood through the pair-posterior marginals G, H;
the M-step solves concave 1-D problems in p_i and q_j by Newton's method, whose
first and second derivatives are stated in ``toptwo/extensions/em.py`` and checked here.
"""

from __future__ import annotations

from typing import Callable

import sympy as sp

from ._core import check, pairs, require, require_zero

__all__ = [
    "check_em_estep_decomposition",
    "check_em_mstep_derivatives",
    "check_em_grid_weights_update",
    "em_grid_weights",
    "em_p_term_derivatives",
    "em_q_term_derivatives",
    "em_prior_derivatives",
]

# p, q in (0, 1); K >= 3; x, y stand for q - 1/K and 1 - q - 1/K; c = (1 - p)/K > 0
p, q = sp.symbols("p q", positive=True)
a_q, b_q, a_p, b_p = sp.symbols("a_q b_q a_p b_p", positive=True)


def _prob(K: int, c: int, a: int, b: int) -> sp.Expr:
    """P(A = c | answered, (g, h) = (a, b)) of eq. (1)."""
    Ks = sp.Integer(K)
    return (1 - p) / Ks + p * (q * (1 if c == a else 0) + (1 - q) * (1 if c == b else 0))


def em_p_term_derivatives(K: sp.Expr) -> dict[str, tuple[sp.Expr, sp.Expr]]:
    """(d/dp, d2/dp2) of each term of Q in p_i, as used by ``TopTwoEM`` (toptwo/extensions/em.py).

    Terms: log(p q + (1-p)/K) (c = g), log(p (1-q) + (1-p)/K) (c = h), log((1-p)/K).
    """
    x = q - 1 / K
    y = 1 - q - 1 / K
    return {
        "g": (x / (1 / K + p * x), -(x / (1 / K + p * x)) ** 2),
        "h": (y / (1 / K + p * y), -(y / (1 / K + p * y)) ** 2),
        "o": (-1 / (1 - p), -1 / (1 - p) ** 2),
    }


def em_q_term_derivatives(K: sp.Expr) -> dict[str, tuple[sp.Expr, sp.Expr]]:
    """(d/dq, d2/dq2) of the q-dependent terms of Q, as used by ``TopTwoEM``."""
    c = (1 - p) / K
    ug = p / (c + p * q)
    uh = p / (c + p * (1 - q))
    return {"g": (ug, -ug ** 2), "h": (-uh, -uh ** 2)}


def em_prior_derivatives() -> dict[str, tuple[sp.Expr, sp.Expr, sp.Expr]]:
    """(log prior, d/dx, d2/dx2) of the priors of ``TopTwoEM``, as used in the code.

    q: t = 2q - 1, log prior a_q log t + b_q log(1 - t); p: a_p log p + b_p log(1 - p).
    """
    t = 2 * q - 1
    return {
        "q": (a_q * sp.log(t) + b_q * sp.log(1 - t),
              2 * a_q / t - 2 * b_q / (1 - t),
              -4 * a_q / t ** 2 - 4 * b_q / (1 - t) ** 2),
        "p": (a_p * sp.log(p) + b_p * sp.log(1 - p),
              a_p / p - b_p / (1 - p),
              -a_p / p ** 2 - b_p / (1 - p) ** 2),
    }


@check(
    "em_estep_decomposition",
    statement=(
        "log P(A=c | (a,b)) = log((1-p)/K) + 1(c=a) log(1+Kpq/(1-p)) + 1(c=b) log(1+Kp(1-q)/(1-p)); and "
        "sum_{a!=b} r(a,b) log P(A=c | (a,b)) = G(c) log(pq+(1-p)/K) + H(c) log(p(1-q)+(1-p)/K) "
        "+ (1-G(c)-H(c)) log((1-p)/K) with G(c) = sum_b r(c,b), H(c) = sum_a r(a,c), sum r = 1"
    ),
    reference="eq. (1) [eqn:A_dist], eq. (6) [eqn:plug-in-mle]; toptwo/extensions/em.py E-step",
    method="cancel(P/(weights) - (1-p)/K)==0; expand(lhs-rhs)==0 with exp/log of the factors kept as symbols",
    scope="exhaustive K=3..5, all (a,b), all answers c; symbolic p, q and posterior r(a,b)",
)
def check_em_estep_decomposition(
    weights: Callable[[sp.Expr], tuple[sp.Expr, sp.Expr]] = lambda K: (
        K * p * q / (1 - p) + 1, K * p * (1 - q) / (1 - p) + 1),
    other_weight: Callable[[sp.Expr], sp.Expr] = lambda K: 1 - sp.Symbol("G") - sp.Symbol("H"),
):
    """The E-step's constant-plus-scores form and the marginals behind gamma^g, gamma^h, gamma^o.

    Parameters
    ----------
    weights
        Claimed ``K -> (w_a, w_b)`` with P(c | a, b) = (1-p)/K w_a^[c=a] w_b^[c=b].
    other_weight
        Claimed weight of log((1-p)/K) in terms of the symbols G, H.
    """
    Gs, Hs = sp.symbols("G H")
    Lg, Lh, Lo = sp.symbols("L_g L_h L_o")         # log P at c = a, c = b, neither
    for K in range(3, 6):
        Ks = sp.Integer(K)
        w_a, w_b = weights(Ks)
        prs = list(pairs(K))
        r = {ab: sp.Symbol(f"r_{ab[0]}_{ab[1]}") for ab in prs}
        for c in range(1, K + 1):
            expected = 0
            for a, b in prs:
                P = _prob(K, c, a, b)
                factor = (w_a if c == a else 1) * (w_b if c == b else 1)
                require_zero(P / factor - (1 - p) / Ks, f"P(A={c} | ({a},{b})) / weight at K={K}")
                expected += r[(a, b)] * (Lg if c == a else Lh if c == b else Lo)
            G = sum(r[(c, b)] for b in range(1, K + 1) if b != c)
            H = sum(r[(a, c)] for a in range(1, K + 1) if a != c)
            total = sum(r.values())
            claimed = G * Lg + H * Lh + other_weight(Ks).subs({Gs: G, Hs: H}) * Lo
            # sum r = 1: replace r of the first pair by 1 - (the others)
            first = prs[0]
            sub = {r[first]: 1 - (total - r[first])}
            require_zero((expected - claimed).subs(sub), f"expected log-likelihood of answer {c} at K={K}")


@check(
    "em_mstep_derivatives",
    statement=(
        "M-step in p_i: each term log(pq+(1-p)/K), log(p(1-q)+(1-p)/K), log((1-p)/K) has the stated first and "
        "second derivative, the second = -(first)^2 <= 0 (concave); M-step in q_j likewise for log(c+pq), "
        "log(c+p(1-q)); the log-priors a_q log(2q-1) + b_q log(2-2q) and a_p log p + b_p log(1-p) have the "
        "stated derivatives, are concave, and their derivatives tend to +inf at the lower and -inf at the "
        "upper end (the root of the M-step derivative is interior and unique)"
    ),
    reference="eq. (1) [eqn:A_dist]; toptwo/extensions/em.py M-step (beyond the paper)",
    method="cancel(diff(term) - claimed)==0; second derivative + first^2 == 0; sympy.limit at the ends",
    scope="symbolic p, q, K; priors with symbolic exponents > 0",
)
def check_em_mstep_derivatives(
    p_terms: Callable[[sp.Expr], dict] = em_p_term_derivatives,
    q_terms: Callable[[sp.Expr], dict] = em_q_term_derivatives,
    priors: Callable[[], dict] = em_prior_derivatives,
):
    """Gradient and concavity of the two conditional maximisations of ``TopTwoEM``.

    Parameters
    ----------
    p_terms, q_terms, priors
        Claimed derivative formulas (defaults: those coded in ``toptwo/extensions/em.py``).
    """
    K = sp.Symbol("K", positive=True)
    base = (1 - p) / K
    logs = {"g": sp.log(p * q + base), "h": sp.log(p * (1 - q) + base), "o": sp.log(base)}
    for name, (d1, d2) in p_terms(K).items():
        f = logs[name]
        require_zero(sp.diff(f, p) - d1, f"d/dp of the {name}-term")
        require_zero(sp.diff(f, p, 2) - d2, f"d2/dp2 of the {name}-term")
        require_zero(d2 + d1 ** 2, f"d2/dp2 = -(d/dp)^2 for the {name}-term")
    for name, (d1, d2) in q_terms(K).items():
        f = logs[name]
        require_zero(sp.diff(f, q) - d1, f"d/dq of the {name}-term")
        require_zero(sp.diff(f, q, 2) - d2, f"d2/dq2 of the {name}-term")
        require_zero(d2 + d1 ** 2, f"d2/dq2 = -(d/dq)^2 for the {name}-term")
    pri = priors()
    for var, lo, hi in (("q", sp.Rational(1, 2), 1), ("p", 0, 1)):
        f, d1, d2 = pri[var]
        x = q if var == "q" else p
        require_zero(sp.diff(f, x) - d1, f"d/d{var} of the {var}-prior")
        require_zero(sp.diff(f, x, 2) - d2, f"d2/d{var}2 of the {var}-prior")
        require(_negative_on(d2, x, lo, hi), f"the {var}-prior's second derivative is not negative")
        require(sp.limit(d1, x, lo, "+") == sp.oo, f"d/d{var} of the prior -> +oo at {lo}")
        require(sp.limit(d1, x, hi, "-") == -sp.oo, f"d/d{var} of the prior -> -oo at {hi}")


def _negative_on(expr: sp.Expr, x: sp.Symbol, lo, hi) -> bool:
    """True if SymPy proves ``expr`` < 0 for every x in (lo, hi) (x = lo + (hi - lo) u/(1 + u), u > 0)."""
    u = sp.Symbol("u", positive=True)
    return bool(sp.simplify(expr.subs(x, lo + (hi - lo) * u / (1 + u))).is_negative)


def em_grid_weights(N: list[sp.Expr], delta: sp.Expr) -> list[sp.Expr]:
    """pi_k = (N_k + delta)/(sum N + G delta): the update of ``confusion="grid"``."""
    total = sum(N) + len(N) * delta
    return [(Nk + delta) / total for Nk in N]


@check(
    "em_grid_weights_update",
    statement=(
        "pi_k = (N_k + delta)/(sum_l N_l + G delta) maximises sum_k (N_k + delta) log pi_k on the simplex "
        "(expected node counts N_k plus a Dirichlet(1 + delta) prior): the Lagrange conditions "
        "(N_k + delta)/pi_k = lambda hold with one lambda, the weights sum to 1, and the Hessian is negative"
    ),
    reference=("toptwo/extensions/_em_grid.py, confusion='grid' (beyond the paper): the EM update of the grid "
               "weights; the code maximises the observed log-posterior in pi by Newton steps "
               "(_pi_newton), whose optimum is the fixed point of this update with N_k the "
               "posterior node counts (tests/test_em.py checks its Lagrange condition)"),
    method="cancel((N_k+delta)/pi_k - lambda)==0 for all k; cancel(sum pi - 1)==0",
    scope="G=2..6 nodes, symbolic N_k > 0, delta > 0",
)
def check_em_grid_weights_update(update: Callable = em_grid_weights):
    """The closed-form update of the grid weights.

    Parameters
    ----------
    update
        Claimed ``update(N, delta) -> [pi_k]``.
    """
    delta = sp.Symbol("delta", positive=True)
    for G in range(2, 7):
        N = list(sp.symbols(f"N1:{G + 1}", positive=True))
        pi = update(N, delta)
        require_zero(sum(pi) - 1, f"weights sum to 1 at G={G}")
        lam = (N[0] + delta) / pi[0]
        for k in range(1, G):
            require_zero((N[k] + delta) / pi[k] - lam, f"Lagrange condition for node {k + 1} at G={G}")
        # concave objective: second derivative -(N_k + delta)/pi_k^2 < 0 at every k
        require(all(sp.simplify(-(N[k] + delta) / pi[k] ** 2).is_negative for k in range(G)),
                f"Hessian sign at G={G}")
