"""Symbolic objects of the top-two model (eq. (1) [eqn:A_dist]) used by the checks.

These helpers are public so notebooks can display the expressions, e.g.::

    >>> from theory_checks import symbolic_r, symbolic_delta_r
    >>> symbolic_r(4, 3, 1, 2)
    q - 1/2
    >>> symbolic_delta_r(4, 3, 1)
    [q - 3/4, 1/4, 1/4 - q, 1/4]

All probabilities are exact (``sp.Rational``); ``p``, ``q``, ``s`` are the
symbols of worker reliability, confusion probability and sampling rate.
"""

from __future__ import annotations

from typing import Callable

import sympy as sp

__all__ = [
    "p",
    "q",
    "s",
    "s1",
    "answer_probabilities",
    "symbolic_expected_binary",
    "symbolic_r",
    "r_from_indicators",
    "symbolic_delta_r",
    "paper_delta_r",
    "paper_shift",
]

#: Worker reliability p_i, confusion probability q_j, sampling rate s, split rate s_1.
p, q, s, s1 = sp.symbols("p q s s1", positive=True)


def answer_probabilities(
    K: int | sp.Expr,
    g: int,
    h: int,
    p: sp.Expr = p,
    q: sp.Expr = q,
    s: sp.Expr = s,
) -> dict[int, sp.Expr]:
    """Distribution of A_ij from eq. (1) [eqn:A_dist]: label -> probability.

    Label 0 means "not assigned". ``K`` must be an integer here (the labels are
    enumerated); use symbolic ``K`` only through :func:`r_from_indicators`.
    """
    K = int(K)
    Ks = sp.Integer(K)
    e = (1 - p) / Ks
    probs: dict[int, sp.Expr] = {0: 1 - s}
    for b in range(1, K + 1):
        probs[b] = s * e
    probs[g] = s * (p * q + e)
    probs[h] = s * (p * (1 - q) + e)
    return probs


def symbolic_expected_binary(
    K: int, g: int, h: int, k: int, p: sp.Expr = p, q: sp.Expr = q, s: sp.Expr = s
) -> sp.Expr:
    """E[A^(k)_ij] computed directly from eq. (1): sum over labels of ±1 · P(A_ij = b).

    A^(k)_ij = -1 if 1 <= A_ij <= k, +1 if A_ij > k, 0 if A_ij = 0 (Sec. 3, "Binary conversion").
    """
    probs = answer_probabilities(K, g, h, p, q, s)
    return sp.expand(sum((-1 if b <= k else 1) * probs[b] for b in range(1, K + 1)))


def symbolic_r(K: int, g: int, h: int, k: int, q: sp.Expr = q) -> sp.Expr:
    """r^(k)_j from the case table of Proposition 1 [prop:binary, eqn:defr].

    Defined for 0 <= k <= K with r^(0) = r^(K) = 0 (the convention before eq. (2)).
    """
    Ks = sp.Integer(K)
    if k in (0, K):
        return sp.Integer(0)
    kk = sp.Integer(k) / Ks
    if g > h:  # Case I
        if k < h:
            return kk
        if k < g:
            return kk - (1 - q)
        return kk - 1
    # Case II: g < h
    if k < g:
        return kk
    if k < h:
        return kk - q
    return kk - 1


def r_from_indicators(
    Pa: sp.Expr, Pb: sp.Expr, Pc: sp.Expr, Pd: sp.Expr, K: sp.Expr, k: sp.Expr, q: sp.Expr = q
) -> sp.Expr:
    """r^(k)_j = q(Π_c − Π_b) − (Π_c + Π_d) + k/K, eq. [eqn:def_rjk] (appendix [app:prop:binary])."""
    return q * (Pc - Pb) - (Pc + Pd) + k / K


def symbolic_delta_r(K: int, g: int, h: int, q: sp.Expr = q) -> list[sp.Expr]:
    """[Δr^(1), ..., Δr^(K)] with Δr^(k) = r^(k) − r^(k−1), computed from Proposition 1's table."""
    return [sp.expand(symbolic_r(K, g, h, k, q) - symbolic_r(K, g, h, k - 1, q)) for k in range(1, K + 1)]


def paper_delta_r(K: int, g: int, h: int, k: int, q: sp.Expr = q) -> sp.Expr:
    """Δr^(k)_j as printed in eq. (2) [eqn:delta_r]."""
    Ks = sp.Integer(K)
    if k == g:
        return 1 / Ks - q
    if k == h:
        return 1 / Ks - (1 - q)
    return 1 / Ks


def paper_shift(K: int | sp.Expr, k: int | sp.Expr) -> sp.Expr:
    """The centring constant (K − 2k)/K of Proposition 1 (multiplied by s there)."""
    return (sp.sympify(K) - 2 * sp.sympify(k)) / sp.sympify(K)


RFunc = Callable[..., sp.Expr]
