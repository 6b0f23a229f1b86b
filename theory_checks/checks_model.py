"""Claims 1–4: the model (eq. (1)), Proposition 1, the rank-1 structure and eq. (2)."""

from __future__ import annotations

from typing import Callable

import sympy as sp

from ._core import check, pairs, require, require_zero
from .model import (
    answer_probabilities,
    p,
    paper_delta_r,
    paper_shift,
    q,
    r_from_indicators,
    s,
    symbolic_delta_r,
    symbolic_expected_binary,
    symbolic_r,
)

K_sym, k_sym = sp.symbols("K k", positive=True, integer=True)

ProbsFunc = Callable[[sp.Expr], tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr]]


def paper_eq1_probabilities(K: sp.Expr) -> tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr]:
    """(P(g), P(h), P(each other b), P(0)) as printed in eq. (1) [eqn:A_dist]."""
    e = (1 - p) / K
    return s * (p * q + e), s * (p * (1 - q) + e), s * e, 1 - s


@check(
    "eq1_distribution",
    statement="eq. (1): s(pq+(1-p)/K) + s(p(1-q)+(1-p)/K) + (K-2)s(1-p)/K + (1-s) = 1",
    reference="eq. (1) [eqn:A_dist]",
    method="expand(total-1)==0",
    scope="symbolic K, p, q, s",
)
def check_eq1_distribution(probabilities: ProbsFunc = paper_eq1_probabilities):
    """Eq. (1) [eqn:A_dist] is a distribution: the K+1 outcome probabilities sum to 1.

    Parameters
    ----------
    probabilities
        ``K -> (P(A=g), P(A=h), P(A=b) for each of the K-2 other b, P(A=0))``.
    """
    pg, ph, pb, p0 = probabilities(K_sym)
    require_zero(pg + ph + (K_sym - 2) * pb + p0 - 1, "eq. (1) total probability minus 1")
    # Cross-check against the label-by-label construction used by the other checks.
    for K in range(3, 7):
        for g, h in pairs(K):
            probs = answer_probabilities(K, g, h)
            require_zero(sum(probs.values()) - 1, f"answer_probabilities(K={K}, g={g}, h={h})")


@check(
    "proposition1_exhaustive",
    statement="E[A^(k)_ij] - s(K-2k)/K = 2 s p_i r^(k)_j with r^(k) from the Case I/II table",
    reference="Prop. 1 [prop:binary], [eqn:defr]",
    method="expand(lhs-rhs)==0, E[A^(k)] summed label by label from eq. (1)",
    scope="exhaustive K=3..8, all g!=h, all 1<=k<K; symbolic p, q, s",
)
def check_proposition1_exhaustive(
    r: Callable[[int, int, int, int], sp.Expr] = symbolic_r,
    shift: Callable[[int, int], sp.Expr] = paper_shift,
    Ks: range = range(3, 9),
):
    """Proposition 1 [prop:binary], both cases, by exhaustion over K, (g, h), k.

    Parameters
    ----------
    r
        Claimed ``r(K, g, h, k)``; default the paper's Case I/II table.
    shift
        Claimed centring ``shift(K, k)`` (multiplied by ``s``); default (K-2k)/K.
    Ks
        Values of K to exhaust (a concrete K stands in for the symbolic one).
    """
    for K in Ks:
        for g, h in pairs(K):
            for k in range(1, K):
                lhs = symbolic_expected_binary(K, g, h, k) - s * shift(K, k)
                rhs = 2 * s * p * r(K, g, h, k)
                require_zero(lhs - rhs, f"Prop. 1 at K={K}, (g,h)=({g},{h}), k={k}")
    return {"scope": f"exhaustive K={Ks.start}..{Ks.stop - 1}, all g!=h, all 1<=k<K; symbolic p, q, s"}


def paper_rho(Pa: sp.Expr, Pb: sp.Expr, Pc: sp.Expr, Pd: sp.Expr, K: sp.Expr, k: sp.Expr) -> sp.Expr:
    """ρ^(k)_ij = p(q(Π_c − Π_b) − (Π_c + Π_d) + k/K) + (K − k)/K (appendix [app:prop:binary])."""
    return p * (q * (Pc - Pb) - (Pc + Pd) + k / K) + (K - k) / K


@check(
    "proposition1_symbolic_K",
    statement=(
        "rho = P(A>k | assigned) = p(q(Pi_c-Pi_b) - (Pi_c+Pi_d) + k/K) + (K-k)/K in each of the four "
        "indicator cases, hence E[A^(k)] = s(2 rho - 1) = s(2 p r + (K-2k)/K) with r = [eqn:def_rjk]"
    ),
    reference="Prop. 1 proof [app:prop:binary], [eqn:defn_pi], [eqn:def_rjk], [eqn:defpicase]",
    method="expand(lhs-rhs)==0 per indicator case; case split checked exhaustively",
    scope="symbolic K, k, p, q, s; the case split eqn:defpicase vs eqn:defn_pi exhaustive K=3..8",
)
def check_proposition1_symbolic_K(rho: Callable[..., sp.Expr] = paper_rho):
    """Proposition 1 for symbolic K and k via the indicator decomposition Π_a..Π_d.

    With G = [g > k] and H = [h > k], eq. (1) gives
    ρ = G(pq + e) + H(p(1−q) + e) + (K − k − G − H) e,  e = (1 − p)/K,
    since exactly K − k labels exceed k. The four cases (G, H) ∈ {0, 1}² are Π_a..Π_d.

    Parameters
    ----------
    rho
        Claimed ``rho(Pa, Pb, Pc, Pd, K, k)``.
    """
    K, k = K_sym, k_sym
    e = (1 - p) / K
    cases = {"Pi_a": (1, 1), "Pi_b": (0, 1), "Pi_c": (1, 0), "Pi_d": (0, 0)}
    for name, (G, H) in cases.items():
        Pi = [sp.Integer(int(name == n)) for n in ("Pi_a", "Pi_b", "Pi_c", "Pi_d")]
        require(sum(Pi) == 1, "Pi_a + Pi_b + Pi_c + Pi_d must be 1")
        rho_model = G * (p * q + e) + H * (p * (1 - q) + e) + (K - k - G - H) * e
        # The appendix's first form, before substituting Pi_a = 1 - Pi_b - Pi_c - Pi_d.
        rho_first = Pi[0] * p + Pi[1] * p * (1 - q) + Pi[2] * p * q + (K - k) * (1 - p) / K
        require_zero(rho_model - rho_first, f"rho first form, case {name}")
        require_zero(rho_model - rho(*Pi, K, k), f"rho claimed form, case {name}")
        r = r_from_indicators(*Pi, K, k)
        require_zero(s * (2 * rho_model - 1) - s * (2 * p * r + (K - 2 * k) / K), f"E[A^(k)], case {name}")
    # Case split [eqn:defpicase] and the resulting Case I/II table [eqn:defr]; concrete K.
    for Kc in range(3, 9):
        for g, h in pairs(Kc):
            for kc in range(1, Kc):
                Pi = [int(g > kc and h > kc), int(g <= kc < h), int(h <= kc < g), int(g <= kc and h <= kc)]
                require(sum(Pi) == 1, f"indicators not a partition at K={Kc}, (g,h)=({g},{h}), k={kc}")
                r = r_from_indicators(*map(sp.Integer, Pi), sp.Integer(Kc), sp.Integer(kc))
                require_zero(r - symbolic_r(Kc, g, h, kc), f"eqn:def_rjk vs table at K={Kc}, ({g},{h}), k={kc}")


#: A 3-worker x 4-task population with K = 5 and different (g, h) per task.
POP_K = 5
POP_PAIRS = ((1, 2), (4, 1), (5, 3), (2, 5))


def _population(shift: Callable[[int, int], sp.Expr], k: int, s_: sp.Expr = s):
    ps = sp.symbols("p1:4", positive=True)
    qs = sp.symbols("q1:5", positive=True)
    E = sp.Matrix(
        3,
        4,
        lambda i, j: symbolic_expected_binary(POP_K, *POP_PAIRS[j], k, p=ps[i], q=qs[j], s=s_)
        - s_ * shift(POP_K, k),
    )
    return ps, qs, E


@check(
    "rank1_population",
    statement="E[A^(k)] - s(K-2k)/K 1 = 2 s p (r^(k))^T and has rank 1, for every k",
    reference="Prop. 1 [prop:binary], [eqn:rank1]",
    method="entrywise expand(lhs-rhs)==0; rank 1: all 2x2 minors expand to 0, matrix nonzero; Matrix.rank()",
    scope="3 workers x 4 tasks, symbolic p1..p3, q1..q4, s; K=5, (g,h)=(1,2),(4,1),(5,3),(2,5)",
)
def check_rank1_population(
    r: Callable[..., sp.Expr] | None = symbolic_r,
    shift: Callable[[int, int], sp.Expr] = paper_shift,
):
    """The rank-1 structure of Proposition 1 on a small symbolic population.

    Parameters
    ----------
    r, shift
        Claimed ``r(K, g, h, k, q=...)`` and centring ``shift(K, k)``; with ``r=None`` only
        the rank-1 claim is checked.
    """
    for k in range(1, POP_K):
        ps, qs, M = _population(shift, k)
        if r is None:
            R = M
        else:
            R = sp.Matrix(3, 4, lambda i, j: 2 * s * ps[i] * r(POP_K, *POP_PAIRS[j], k, q=qs[j]))
        for i in range(3):
            for j in range(4):
                require_zero(M[i, j] - R[i, j], f"entry ({i},{j}) of E[A^(k)]-shift vs 2 s p r^T at k={k}")
        for i1 in range(3):
            for i2 in range(i1 + 1, 3):
                for j1 in range(4):
                    for j2 in range(j1 + 1, 4):
                        minor = M[i1, j1] * M[i2, j2] - M[i1, j2] * M[i2, j1]
                        require_zero(minor, f"2x2 minor rows ({i1},{i2}) cols ({j1},{j2}) at k={k} (rank > 1)")
        require(any(sp.expand(x) != 0 for x in M), f"E[A^(k)]-shift is the zero matrix at k={k}")
        require(M.rank(simplify=True) == 1, f"Matrix.rank() != 1 at k={k}")


def paper_gaps() -> tuple[sp.Expr, sp.Expr]:
    """(Δr^(h) − Δr^(g), Δr^(c) − Δr^(h)) = (2q − 1, 1 − q), Sec. 3 after eq. (2)."""
    return 2 * q - 1, 1 - q


def _linear_sign_on_interval(expr: sp.Expr, lo: sp.Expr, hi: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """Values of a polynomial of degree <= 1 in q at the ends of [lo, hi] (monotone, so they decide its sign)."""
    poly = sp.Poly(sp.expand(expr), q)
    require(poly.degree() <= 1, f"{expr} is not linear in q")
    return expr.subs(q, lo), expr.subs(q, hi)


@check(
    "eq2_delta_r_and_ordering",
    statement=(
        "Delta r^(k) = 1/K-q (k=g), 1/K-(1-q) (k=h), 1/K otherwise; Delta r^(h)-Delta r^(g) = 2q-1 > 0 and "
        "Delta r^(c)-Delta r^(h) = 1-q >= 0 on q in (1/2,1], so min at g and second smallest at h"
    ),
    reference="eq. (2) [eqn:delta_r]",
    method="expand(lhs-rhs)==0 exhaustive; sign of linear gaps from endpoint values",
    scope="exhaustive K=3..8, all g!=h, all k, every c not in {g,h}; symbolic q",
)
def check_eq2_delta_r_and_ordering(
    delta_r: Callable[[int, int, int, int], sp.Expr] = paper_delta_r,
    gaps: Callable[[], tuple[sp.Expr, sp.Expr]] = paper_gaps,
    Ks: range = range(3, 9),
):
    """Eq. (2) [eqn:delta_r] from Proposition 1's table, and the min/second-min ordering.

    Parameters
    ----------
    delta_r
        Claimed ``Δr(K, g, h, k)``; default eq. (2).
    gaps
        Claimed ``(Δr^(h) − Δr^(g), Δr^(c) − Δr^(h))``.
    Ks
        The numbers of choices K checked exhaustively.
    """
    gap_gh, gap_hc = gaps()
    for K in Ks:
        for g, h in pairs(K):
            dr = symbolic_delta_r(K, g, h)
            for k in range(1, K + 1):
                require_zero(dr[k - 1] - delta_r(K, g, h, k), f"Delta r at K={K}, (g,h)=({g},{h}), k={k}")
            require_zero(dr[h - 1] - dr[g - 1] - gap_gh, f"Delta r^(h) - Delta r^(g) at K={K}, ({g},{h})")
            for c in range(1, K + 1):
                if c not in (g, h):
                    require_zero(dr[c - 1] - dr[h - 1] - gap_hc, f"Delta r^(c) - Delta r^(h), K={K}, c={c}")
            require_zero(sum(dr), f"sum_k Delta r^(k) (telescopes to r^(K) - r^(0) = 0) at K={K}")
    half = sp.Rational(1, 2)
    a, b = _linear_sign_on_interval(gap_gh, half, 1)
    require(a >= 0 and b > 0, f"gap 2q-1 not > 0 on (1/2, 1]: endpoint values {a}, {b}")
    a, b = _linear_sign_on_interval(gap_hc, half, 1)
    require(a > 0 and b >= 0, f"gap 1-q not >= 0 on (1/2, 1]: endpoint values {a}, {b}")
    if b == 0:
        note = (
            "At q_j = 1 the gap Delta r^(c) - Delta r^(h) = 1 - q is 0: h_j ties with every other label, so "
            "'second smallest at h_j' holds strictly only for q_j in (1/2, 1) (as the paper remarks after Thm. 1)."
        )
    else:
        note = ""
    return {"note": note, "scope": f"exhaustive K={Ks.start}..{Ks.stop - 1}, all g!=h, all k, every c not in {{g,h}}; symbolic q"}
