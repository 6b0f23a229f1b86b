"""Claim 13: the Top-T extension (Appendix [subsec:top_T])."""

from __future__ import annotations

from typing import Callable

import sympy as sp

from ._core import check, require_zero
from .model import p, paper_shift, s

norm_p = sp.Symbol("norm_p", positive=True)


def corrected_other_prob(p_: sp.Expr, lam: sp.Expr, K: int, T: int) -> sp.Expr:
    """P(A = b | assigned) for each non-top b when the leftover mass λ = 1 − Σq_t is shared: pλ/(K−T) + (1−p)/K."""
    return p_ * lam / (K - T) + (1 - p_) / sp.Integer(K)


def printed_other_prob(p_: sp.Expr, lam: sp.Expr, K: int, T: int) -> sp.Expr:
    """As printed in [eqn:topk_dist]: p(1 − Σq_t) + (1−p)/K for *each* non-top b."""
    return p_ * lam + (1 - p_) / sp.Integer(K)


def _qs(T: int) -> tuple[sp.Symbol, ...]:
    return sp.symbols(f"q1:{T + 1}", positive=True)


def top_labels(K: int, T: int) -> list[tuple[int, ...]]:
    """Two placements of (g_1, ..., g_T): interleaved from the top, and ascending from 2."""
    down = tuple(range(K, 0, -2))[:T]
    down = down + tuple(x for x in range(1, K + 1) if x not in down)[: T - len(down)]
    return [down, tuple(range(2, 2 + T)) if T + 1 <= K else tuple(range(1, T + 1))]


def top_t_probabilities(K: int, tops: tuple[int, ...], other: Callable = corrected_other_prob, p_: sp.Expr = p):
    """Label -> P(A = label | assigned) in the top-T model with top labels ``tops`` (g_1 first)."""
    T = len(tops)
    qs = _qs(T)
    lam = 1 - sum(qs)
    probs = {b: other(p_, lam, K, T) for b in range(1, K + 1)}
    for g, qt in zip(tops, qs):
        probs[g] = p_ * qt + (1 - p_) / sp.Integer(K)
    return probs, qs, lam


@check(
    "top_t_distribution",
    statement=(
        "Top-T model with each non-top label w.p. s(p(1-sum q)/(K-T) + (1-p)/K) sums to 1; as printed "
        "(s(p(1-sum q) + (1-p)/K) each) the total is 1 + s(K-T-1) p (1-sum q)"
    ),
    reference="App. Top-T [subsec:top_T], [eqn:topk_dist]",
    method="expand(total-1)==0; printed total-1 reduced to closed form",
    scope="K=3..8, every 2<=T<K, symbolic p, q_1..q_T, s",
)
def check_top_t_distribution(other_prob: Callable[..., sp.Expr] = corrected_other_prob):
    """The top-T answer distribution sums to 1 (with the leftover mass shared over K − T labels).

    Parameters
    ----------
    other_prob
        Claimed ``other_prob(p, λ, K, T)`` for each non-top label (given assignment).
    """
    for K in range(3, 9):
        for T in range(2, K):
            probs, qs, lam = top_t_probabilities(K, top_labels(K, T)[0], other_prob)
            require_zero(s * sum(probs.values()) + (1 - s) - 1, f"top-T total probability at K={K}, T={T}")
            printed, _, _ = top_t_probabilities(K, top_labels(K, T)[0], printed_other_prob)
            require_zero(s * sum(printed.values()) + (1 - s) - 1 - s * (K - T - 1) * p * lam, f"printed total, K={K}, T={T}")
    note = (
        "As printed, eqn:topk_dist gives each of the K-T non-top labels s(p(1-sum_t q_t) + (1-p)/K); the total is "
        "1 + s(K-T-1)p(1-sum_t q_t), a distribution only if T = K-1, sum_t q_t = 1 or p = 0. Correct: each non-top "
        "label w.p. s(p(1-sum_t q_t)/(K-T) + (1-p)/K)."
    )
    return {"note": note}


def corrected_delta_r_other(K: int, T: int, lam: sp.Expr) -> sp.Expr:
    """Δr^(k) at a non-top label in the corrected top-T model: 1/K − λ/(K−T)."""
    return 1 / sp.Integer(K) - lam / (K - T)


def paper_delta_r_other(K: int, T: int, lam: sp.Expr) -> sp.Expr:
    """Δr^(k) at a non-top label as stated in the appendix: 1/K."""
    return 1 / sp.Integer(K)


@check(
    "top_t_delta_r_and_algorithm",
    statement=(
        "any per-task signal distribution pi (answers p*pi + (1-p)/K): E[A^(k)] - s(K-2k)/K = 2 s p r^(k), "
        "r^(k) = k/K - sum_{l<=k} pi_l, Delta r^(k) = 1/K - pi_k. Top-T (corrected): Delta r = 1/K - q_t at g_t, "
        "1/K - lam/(K-T) elsewhere (lam = 1 - sum q); with v = ||p|| r: l = ||p|| c, q_hat_t = 1/K - (1/K - q_t)/c, "
        "p_hat (eqn:hatpi_T) -> c p, c = 1 - K lam/(K-T); the model at (p, q, lam) equals the one at (c p, q_hat, 0)"
    ),
    reference="App. Top-T [subsec:top_T], Alg. [alg:top_T], [eqn:est_qT], [eqn:hatpi_T]",
    method="expand/cancel(lhs-rhs)==0 exhaustively",
    scope="general pi: K=3..6 all k; top-T: K=3..7, 2<=T<K, two placements of the top labels; symbolic p, q_t, s, ||p||",
)
def check_top_t_delta_r_and_algorithm(
    delta_r_other: Callable[[int, int, sp.Expr], sp.Expr] = corrected_delta_r_other,
):
    """Proposition 1 for an arbitrary signal distribution, and the Top-T analogues of eq. (2), step 5, eq. (4).

    Parameters
    ----------
    delta_r_other
        Claimed Δr^(k) at labels outside the top T as ``delta_r_other(K, T, λ)``.
    """
    # (i) Proposition 1 for an arbitrary signal distribution pi over [K].
    for K in range(3, 7):
        pis = list(sp.symbols(f"pi1:{K}", positive=True))
        pis.append(1 - sum(pis))
        for k in range(1, K):
            EA = sum((-1 if b <= k else 1) * s * (p * pis[b - 1] + (1 - p) / sp.Integer(K)) for b in range(1, K + 1))
            r = sp.Integer(k) / K - sum(pis[:k])
            require_zero(EA - s * paper_shift(K, k) - 2 * s * p * r, f"general Prop. 1 at K={K}, k={k}")
    # (ii)-(v) the top-T model.
    for K in range(3, 8):
        Ks = sp.Integer(K)
        for T in range(2, K):
            for tops in top_labels(K, T):
                probs, qs, lam = top_t_probabilities(K, tops)
                pis = [sp.cancel((probs[b] - (1 - p) / Ks) / p) for b in range(1, K + 1)]  # signal part
                F = [sum(pis[:k]) for k in range(K + 1)]
                r = [sp.Integer(k) / K - F[k] for k in range(K + 1)]
                dr = [sp.expand(r[k] - r[k - 1]) for k in range(1, K + 1)]
                for k in range(1, K + 1):
                    if k in tops:
                        claimed = 1 / Ks - qs[tops.index(k)]
                    else:
                        claimed = delta_r_other(K, T, lam)
                    require_zero(dr[k - 1] - claimed, f"top-T Delta r^({k}) at K={K}, T={T}, tops={tops}")
                c = 1 - K * lam / (K - T)
                dv = [norm_p * d for d in dr]
                l = Ks / (K - T) * sum(dv[k - 1] for k in range(1, K + 1) if k not in tops)
                require_zero(l - norm_p * c, f"step 6 (l_j) at K={K}, T={T}")
                q_hat = [1 / Ks - dv[g - 1] / l for g in tops]
                q_equiv = [1 / Ks - (1 / Ks - qt) / c for qt in qs]
                for a, b in zip(q_hat, q_equiv):
                    require_zero(a - b, f"eqn:est_qT at K={K}, T={T}")
                # eqn:hatpi_T at the population level: K/(K-T) (P(A in tops | assigned) - T/K) = c p.
                hit = sum(probs[g] for g in tops)
                require_zero(Ks / (K - T) * (hit - T / Ks) - c * p, f"eqn:hatpi_T at K={K}, T={T}")
                # Observational equivalence: (p, q, lam) and (c p, q_equiv, 0) give the same answer law.
                qsub = dict(zip(qs, q_equiv))
                for b in range(1, K + 1):
                    if b in tops:
                        other = c * p * q_equiv[tops.index(b)] + (1 - c * p) / Ks
                    else:
                        other = (1 - c * p) / Ks  # leftover 1 - sum q_equiv = 0
                    require_zero(probs[b] - other, f"equivalence at label {b}, K={K}, T={T}")
                require_zero(1 - sum(qsub.values()), f"sum of equivalent q_t is 1 at K={K}, T={T}")
    note = (
        "In the (corrected) top-T model the non-top labels have Delta r^(k) = 1/K - (1-sum_t q_t)/(K-T), not 1/K "
        "(the appendix's value holds only when sum_t q_t = 1); the top T are the T lowest iff min_t q_t > "
        "(1-sum_t q_t)/(K-T), weaker than the stated q_T > 1-sum_t q_t. With lam = 1-sum q > 0 the parameters are not "
        "identifiable: (p, q, lam) gives the same answers as (c p, q', 0) with c = 1 - K lam/(K-T) (when lam/(K-T) < 1/K), "
        "q'_t = 1/K - (1/K - q_t)/c. Step 6 (K/(K-T) factor), eqn:est_qT and eqn:hatpi_T estimate exactly ||c p||, q' "
        "and c p, so the top-T algorithm is exact for the parametrization sum_t q_t = 1. Typos: 'q_jt from "
        "1/K - Delta r^(t)' should read Delta r^(g_jt); step 6 sums over k not in {g_hat_jt}; Alg. plugin_MLE_T step 3 "
        "should call Alg. top_T."
    )
    return {"note": note}
