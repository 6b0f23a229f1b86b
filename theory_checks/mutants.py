"""Mutation tests for the checker itself: deliberately wrong claims every check must reject.

Each check takes its *claimed* expressions as parameters (defaults: the correct statement).
A mutant passes a wrong one — a wrong constant, a wrong sign, a wrong case boundary, q and
1 − q swapped, a dropped factor — and is *killed* when the check raises
:class:`~theory_checks.ClaimFailed`. :data:`MUTANTS` maps check names to their mutants;
:func:`kill_rates` runs them and reports the kill rate per check
(``python -m theory_checks --mutants`` prints the table).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import sympy as sp

from ._core import CHECKS, ClaimFailed
from .model import p, paper_delta_r, paper_shift, q, s, symbolic_r

__all__ = ["KINDS", "MUTANTS", "Mutant", "kill_rates", "run_mutant", "format_kill_table"]

#: The kinds of mutation the registry covers.
KINDS = ("wrong constant", "wrong sign", "wrong case boundary", "q <-> 1-q", "dropped factor", "wrong model")


@dataclass(frozen=True)
class Mutant:
    """One wrong claim: ``CHECKS[check](**kwargs())`` must raise ClaimFailed."""

    check: str
    name: str
    kind: str
    kwargs: Callable[[], dict[str, Any]]


def _eq1(mod: Callable[[sp.Expr], tuple]) -> Callable[[], dict[str, Any]]:
    return lambda: {"probabilities": mod}


def _e(K):
    return (1 - p) / K


def _swapped_r(K, g, h, k, q=q):
    return symbolic_r(K, g, h, k, q=1 - q)


def _boundary_r(K, g, h, k, q=q):
    # case boundary moved by one: uses the table at k-1 (r^(0) = 0)
    return symbolic_r(K, g, h, k - 1, q=q) if k > 1 else sp.Integer(0)


def _small(**kw):
    return lambda: {"Ks": range(3, 5), **kw}


def _mv_margins(**over):
    def make():
        base = {"g over c": p * q, "g over h": p * (2 * q - 1), "h over c": p * (1 - q)}
        base.update(over)
        return {"margins": lambda: base}

    return make


def _kl_forms(cls: str, expr_fn: Callable[[], sp.Expr]):
    def make():
        from .checks_divergence import paper_closed_forms

        return {"closed_forms": lambda: {**paper_closed_forms(), cls: expr_fn()}}

    return make


def _XYE():
    from .checks_divergence import E, X, Y

    return X, Y, E


def _p_hat(fn):
    return lambda: {"p_hat": fn}


def _top_t_other(fn):
    return lambda: {"other_prob": fn}


def _top_t_dr(fn):
    return lambda: {"delta_r_other": fn}


_M: list[Mutant] = [
    # ---------------------------------------------------------------- eq. (1)
    Mutant("eq1_distribution", "no (1-p)/K at h", "dropped factor",
           _eq1(lambda K: (s * (p * q + _e(K)), s * p * (1 - q), s * _e(K), 1 - s))),
    Mutant("eq1_distribution", "(1-p)/(K-1) as the noise share", "wrong constant",
           _eq1(lambda K: (s * (p * q + (1 - p) / (K - 1)), s * (p * (1 - q) + (1 - p) / (K - 1)), s * (1 - p) / (K - 1), 1 - s))),
    Mutant("eq1_distribution", "P(0) = 1 + s", "wrong sign",
           _eq1(lambda K: (s * (p * q + _e(K)), s * (p * (1 - q) + _e(K)), s * _e(K), 1 + s))),
    Mutant("eq1_distribution", "1-q at g too", "q <-> 1-q",
           _eq1(lambda K: (s * (p * (1 - q) + _e(K)), s * (p * (1 - q) + _e(K)), s * _e(K), 1 - s))),
    Mutant("eq1_distribution", "no s on the other labels", "dropped factor",
           _eq1(lambda K: (s * (p * q + _e(K)), s * (p * (1 - q) + _e(K)), _e(K), 1 - s))),
    # ---------------------------------------------------------------- Proposition 1
    Mutant("proposition1_exhaustive", "no -s(K-2k)/K shift", "dropped factor", _small(shift=lambda K, k: 0)),
    Mutant("proposition1_exhaustive", "shift with the wrong sign", "wrong sign", _small(shift=lambda K, k: -paper_shift(K, k))),
    Mutant("proposition1_exhaustive", "shift (K-2k)/(K-1)", "wrong constant",
           _small(shift=lambda K, k: sp.Rational(K - 2 * k, K - 1))),
    Mutant("proposition1_exhaustive", "q and 1-q swapped in r", "q <-> 1-q", _small(r=_swapped_r)),
    Mutant("proposition1_exhaustive", "case split at k-1 instead of k", "wrong case boundary", _small(r=_boundary_r)),
    Mutant("proposition1_symbolic_K", "q(Pi_b - Pi_c) instead of q(Pi_c - Pi_b)", "wrong sign",
           lambda: {"rho": lambda Pa, Pb, Pc, Pd, K, k: p * (q * (Pb - Pc) - (Pc + Pd) + k / K) + (K - k) / K}),
    Mutant("proposition1_symbolic_K", "no k/K", "dropped factor",
           lambda: {"rho": lambda Pa, Pb, Pc, Pd, K, k: p * (q * (Pc - Pb) - (Pc + Pd)) + (K - k) / K}),
    Mutant("proposition1_symbolic_K", "(K-k+1)/K", "wrong constant",
           lambda: {"rho": lambda Pa, Pb, Pc, Pd, K, k: p * (q * (Pc - Pb) - (Pc + Pd) + k / K) + (K - k + 1) / K}),
    Mutant("proposition1_symbolic_K", "1-q for q", "q <-> 1-q",
           lambda: {"rho": lambda Pa, Pb, Pc, Pd, K, k: p * ((1 - q) * (Pc - Pb) - (Pc + Pd) + k / K) + (K - k) / K}),
    Mutant("proposition1_symbolic_K", "Pi_c + Pi_b for Pi_c + Pi_d", "wrong case boundary",
           lambda: {"rho": lambda Pa, Pb, Pc, Pd, K, k: p * (q * (Pc - Pb) - (Pc + Pb) + k / K) + (K - k) / K}),
    Mutant("rank1_population", "no shift (rank 2)", "dropped factor", lambda: {"r": None, "shift": lambda K, k: 0}),
    Mutant("rank1_population", "q and 1-q swapped in r", "q <-> 1-q", lambda: {"r": _swapped_r}),
    Mutant("rank1_population", "shift with the wrong sign", "wrong sign", lambda: {"shift": lambda K, k: -paper_shift(K, k)}),
    Mutant("rank1_population", "case split at k-1", "wrong case boundary", lambda: {"r": _boundary_r}),
    # ---------------------------------------------------------------- eq. (2)
    Mutant("eq2_delta_r_and_ordering", "q and 1-q swapped", "q <-> 1-q",
           _small(delta_r=lambda K, g, h, k: paper_delta_r(K, g, h, k, q=1 - q))),
    Mutant("eq2_delta_r_and_ordering", "gap 1-2q", "wrong sign", lambda: {"gaps": lambda: (1 - 2 * q, 1 - q), "Ks": range(3, 5)}),
    Mutant("eq2_delta_r_and_ordering", "gap q-1", "wrong sign", lambda: {"gaps": lambda: (2 * q - 1, q - 1), "Ks": range(3, 5)}),
    Mutant("eq2_delta_r_and_ordering", "1/(K-1) - q at g", "wrong constant",
           _small(delta_r=lambda K, g, h, k: paper_delta_r(K, g, h, k) + (sp.Rational(1, K - 1) - sp.Rational(1, K)) * int(k == g))),
    Mutant("eq2_delta_r_and_ordering", "gap 2q-1 claimed as q - 1/2 (dropped 2)", "dropped factor",
           lambda: {"gaps": lambda: (q - sp.Rational(1, 2), 1 - q), "Ks": range(3, 5)}),
    # ---------------------------------------------------------------- Algorithm 1 and eqs. (4)-(6)
    Mutant("algorithm1_population", "K instead of K-2 in step 5", "wrong constant", _small(step5_factor=lambda K: K / K)),
    Mutant("algorithm1_population", "(K-1)/(K-2) in step 5", "wrong constant", _small(step5_factor=lambda K: (K - 1) / (K - 2))),
    Mutant("algorithm1_population", "q_hat = 1/K + Dv/l", "wrong sign", _small(q_hat=lambda K, dv, l: 1 / K + dv / l)),
    Mutant("algorithm1_population", "q_hat = 1/K - Dv (no /l)", "dropped factor", _small(q_hat=lambda K, dv, l: 1 / K - dv)),
    Mutant("algorithm1_population", "q_hat = 1 - (1/K - Dv/l)", "q <-> 1-q", _small(q_hat=lambda K, dv, l: 1 - (1 / K - dv / l))),
    Mutant("eq5_unbiased_and_variance", "1/K instead of 2/K", "wrong constant",
           _p_hat(lambda K, hits, m, sg: K / (K - 2) * (hits / (m * sg) - 1 / K))),
    Mutant("eq5_unbiased_and_variance", "no K/(K-2)", "dropped factor", _p_hat(lambda K, hits, m, sg: hits / (m * sg) - 2 / K)),
    Mutant("eq5_unbiased_and_variance", "+2/K", "wrong sign", _p_hat(lambda K, hits, m, sg: K / (K - 2) * (hits / (m * sg) + 2 / K))),
    Mutant("eq5_unbiased_and_variance", "variance times m", "wrong constant",
           lambda: {"variance": lambda K, m, sg: m * __import__("theory_checks.checks_algorithm", fromlist=["x"]).paper_p_hat_variance(K, m, sg)}),
    Mutant("eq5_unbiased_and_variance", "normalised by s instead of s(1-s1)", "dropped factor",
           _p_hat(lambda K, hits, m, sg: K / (K - 2) * (hits / (m * s) - 2 / K))),
    Mutant("eq6_loglik_decomposition", "+1 dropped from w_a", "dropped factor",
           lambda: {"weights": lambda K: (K * p * q / (1 - p), K * p * (1 - q) / (1 - p) + 1)}),
    Mutant("eq6_loglik_decomposition", "q and 1-q swapped in the weights", "q <-> 1-q",
           lambda: {"weights": lambda K: (K * p * (1 - q) / (1 - p) + 1, K * p * q / (1 - p) + 1)}),
    Mutant("eq6_loglik_decomposition", "(K-1) for K", "wrong constant",
           lambda: {"weights": lambda K: ((K - 1) * p * q / (1 - p) + 1, (K - 1) * p * (1 - q) / (1 - p) + 1)}),
    Mutant("eq6_loglik_decomposition", "1+p for 1-p", "wrong sign",
           lambda: {"weights": lambda K: (K * p * q / (1 + p) + 1, K * p * (1 - q) / (1 + p) + 1)}),
    Mutant("algorithm1_scaling", "Sec. 4.1's s' p r^T (factor 1)", "dropped factor", lambda: {"expected_factor": sp.Integer(1)}),
    Mutant("algorithm1_scaling", "factor -2", "wrong sign", lambda: {"expected_factor": sp.Integer(-2)}),
    Mutant("algorithm1_scaling", "factor 4", "wrong constant", lambda: {"expected_factor": sp.Integer(4)}),
    # ---------------------------------------------------------------- KL divergences
    Mutant("kl_divergences", "swap KL with log(y/x)", "wrong sign",
           _kl_forms("swap (h,g)", lambda: p * (2 * q - 1) * sp.log(_XYE()[1] / _XYE()[0]))),
    Mutant("kl_divergences", "(g,c) KL with q for 1-q", "q <-> 1-q",
           _kl_forms("(g,c)", lambda: p * q * sp.log(_XYE()[1] / _XYE()[2]))),
    Mutant("kl_divergences", "(c,d) KL without its (1-q) term", "dropped factor",
           _kl_forms("(c,d)", lambda: p * q * sp.log(_XYE()[0] / _XYE()[2]))),
    Mutant("kl_divergences", "swap KL with 2q for 2q-1", "wrong constant",
           _kl_forms("swap (h,g)", lambda: p * 2 * q * sp.log(_XYE()[0] / _XYE()[1]))),
    Mutant("kl_divergences", "minimizer set without (g,c)", "wrong case boundary", lambda: {"minimizers": ("swap (h,g)",)}),
    # ---------------------------------------------------------------- Theorem 3(a)
    Mutant("theorem3a_inequality", "interval up to 7/10", "wrong case boundary", lambda: {"upper": sp.Rational(7, 10)}),
    Mutant("theorem3a_inequality", "x^2/2 for x^2", "wrong constant", lambda: {"quadratic": sp.Rational(1, 2)}),
    Mutant("theorem3a_inequality", "x - x^2", "wrong sign", lambda: {"quadratic": sp.Integer(-1)}),
    Mutant("theorem3a_inequality", "no x^2 term", "dropped factor", lambda: {"quadratic": sp.Integer(0)}),
    Mutant("theorem3a_spammer_hammer", "(1-s)^(n_h+1)", "wrong constant",
           lambda: {"oracle_error": lambda K, n, nh, s_: sp.Rational(K - 1, K) * (1 - s_) ** (nh + 1)}),
    Mutant("theorem3a_spammer_hammer", "s^(n_h) for (1-s)^(n_h)", "q <-> 1-q",
           lambda: {"oracle_error": lambda K, n, nh, s_: sp.Rational(K - 1, K) * s_**nh}),
    Mutant("theorem3a_spammer_hammer", "no (K-1)/K", "dropped factor",
           lambda: {"oracle_error": lambda K, n, nh, s_: (1 - s_) ** nh}),
    Mutant("theorem3a_spammer_hammer", "the proof's (1-pbar)^l given l answers under eq. (1)", "wrong model",
           lambda: {"conditional_error": __import__("theory_checks.checks_converse", fromlist=["x"]).paper_conditional_error}),
    Mutant("theorem3a_spammer_hammer", "(1-pbar)^(l-1) with replacement", "wrong case boundary",
           lambda: {"replacement_error": lambda K, pb, l: sp.Rational(K - 1, K) * (1 - pb) ** (l - 1)}),
    Mutant("theorem3a_spammer_hammer", "(1+s)^(n_h)", "wrong sign",
           lambda: {"oracle_error": lambda K, n, nh, s_: sp.Rational(K - 1, K) * (1 + s_) ** nh}),
    Mutant("theorem3a_rate_threshold", "s* in (0.80, 0.81)", "wrong constant", lambda: {"bracket": (sp.Rational(4, 5), sp.Rational(81, 100))}),
    Mutant("theorem3a_rate_threshold", "s* in (0.78, 0.79)", "wrong constant", lambda: {"bracket": (sp.Rational(78, 100), sp.Rational(79, 100))}),
    Mutant("theorem3a_rate_threshold", "s <= 4/5 sufficient", "wrong case boundary", lambda: {"sufficient": sp.Rational(4, 5)}),
    Mutant("theorem3a_rate_threshold", "bracket on the rising branch (0.3, 0.9)", "wrong case boundary",
           lambda: {"bracket": (sp.Rational(3, 10), sp.Rational(9, 10))}),
    # ---------------------------------------------------------------- Theorem 3(b)
    Mutant("theorem3b_arithmetic", "coefficient 1/100", "wrong constant", lambda: {"coefficient": sp.Rational(1, 100)}),
    Mutant("theorem3b_arithmetic", "coefficient 0, bound 1/2", "dropped factor",
           lambda: {"coefficient": sp.Integer(0), "bound": sp.Rational(1, 2)}),
    Mutant("theorem3b_arithmetic", "the paper's step: 1/4 sqrt(KL), bound 3/8", "wrong constant",
           lambda: {"coefficient": sp.Rational(1, 4), "bound": sp.Rational(3, 8)}),
    Mutant("theorem3b_arithmetic", "bound 3/8 with Pinsker's coefficient", "wrong constant", lambda: {"bound": sp.Rational(3, 8)}),
    Mutant("theorem3b_arithmetic", "s <= 1/(n Dbar)", "wrong case boundary", lambda: {"threshold": sp.Integer(1)}),
    Mutant("theorem3b_arithmetic", "bound 1/2 + sqrt(2)/8", "wrong sign", lambda: {"bound": sp.Rational(1, 2) + sp.sqrt(2) / 8}),
    Mutant("theorem3b_heterogeneous_q", "as printed: average error, Dbar = min_j", "wrong model",
           lambda: {"aggregate": lambda ds: sp.Min(*ds)}),
    Mutant("theorem3b_heterogeneous_q", "mean of Dbar^(j)", "wrong case boundary",
           lambda: {"aggregate": lambda ds: sum(ds) / len(ds)}),
    Mutant("theorem3b_heterogeneous_q", "constant 3/8", "wrong constant", lambda: {"constant": sp.Rational(3, 8)}),
    Mutant("theorem3b_heterogeneous_q", "worst task, s <= 1/(2 n Dbar)", "wrong constant",
           lambda: {"aggregate": lambda ds: sp.Min(*ds) / 2, "conclusion": "worst task"}),
    # ---------------------------------------------------------------- majority vote
    Mutant("majority_vote_vs_spectral", "Lagrange identity over n instead of n^2", "dropped factor",
           lambda: {"gap": lambda ps: sum((a - b) ** 2 for i, a in enumerate(ps) for b in ps[i + 1:]) / len(ps)}),
    Mutant("majority_vote_vs_spectral", "g-over-c margin p(1-q)", "q <-> 1-q", _mv_margins(**{"g over c": p * (1 - q)})),
    Mutant("majority_vote_vs_spectral", "g-over-h margin p(1-2q)", "wrong sign", _mv_margins(**{"g over h": p * (1 - 2 * q)})),
    Mutant("majority_vote_vs_spectral", "h-over-c margin 1-q (no p)", "dropped factor", _mv_margins(**{"h over c": 1 - q})),
    Mutant("majority_vote_vs_spectral", "Hoeffding range 1", "wrong constant", lambda: {"hoeffding_range": sp.Integer(1)}),
    # ---------------------------------------------------------------- Lemma 1, Theorems 1 and 2, Cor. 2
    Mutant("lemma1_bernstein", "exponent Theta(delta) (l. 1287)", "wrong constant", lambda: {"exponent_power": 1}),
    Mutant("lemma1_bernstein", "two-sided bound without the factor 2", "dropped factor", lambda: {"prefactor": sp.Integer(1)}),
    Mutant("lemma1_bernstein", "kappa = c^2/2 (ignores t/3)", "wrong constant", lambda: {"kappa": lambda c: c**2 / 2}),
    Mutant("lemma1_bernstein", "deviation K m sigma d/(K-2)", "wrong constant",
           lambda: {"deviation": lambda K, m, sg, d: K * m * sg * d / (K - 2)}),
    Mutant("lemma1_bernstein", "kappa = -3c^2/8", "wrong sign", lambda: {"kappa": lambda c: -3 * c**2 / 8}),
    Mutant("theorem1_delta1_gap", "any delta_1 > 0 (as stated)", "wrong case boundary", lambda: {"bound": None}),
    Mutant("theorem1_delta1_gap", "(2q-1)/4 only", "wrong case boundary", lambda: {"bound": lambda qv: (2 * qv - 1) / 4}),
    Mutant("theorem1_delta1_gap", "min{2q-1, 1-q}/2", "wrong constant", lambda: {"bound": lambda qv: sp.Min(2 * qv - 1, 1 - qv) / 2}),
    Mutant("theorem1_delta1_gap", "q and 1-q swapped", "q <-> 1-q", lambda: {"bound": lambda qv: sp.Min(1 - 2 * qv, qv) / 4}),
    Mutant("theorem1_delta1_gap", "min{2q-1, 1-q}/8 (not tight)", "wrong constant", lambda: {"bound": lambda qv: sp.Min(2 * qv - 1, 1 - qv) / 8}),
    Mutant("theorem2_constants", "rho <= 1/2 (the proof's step) with 33", "wrong case boundary",
           lambda: {"rho_max": lambda K: sp.Rational(1, 2)}),
    Mutant("theorem2_constants", "constant 26 < 80/3", "wrong constant", lambda: {"bernstein_constant": sp.Integer(26)}),
    Mutant("theorem2_constants", "33 holds up to rho = 1/2", "wrong case boundary",
           lambda: {"constant_threshold": sp.Rational(1, 2)}),
    Mutant("theorem2_constants", "rho <= 1/(K+1)", "wrong model", lambda: {"rho_max": lambda K: sp.Rational(1, K + 1)}),
    Mutant("theorem2_constants", "3/14 in eqn:Aij_cont", "wrong constant", lambda: {"count_exponent": sp.Rational(3, 14)}),
    Mutant("theorem2_constants", "delta_3 < rho D/(3+D)", "wrong case boundary", lambda: {"delta3_boundary": lambda r, D: r * D / (3 + D)}),
    Mutant("theorem2_constants", "l_i >= 0 (l. 1351)", "wrong sign", lambda: {"l_lower": lambda L: sp.Integer(0)}),
    Mutant("theorem2_constants", "|mu_hat - mu| <= delta", "dropped factor", lambda: {"mu_error_factor": sp.Integer(1)}),
    Mutant("minimax_optimality_gap", "delta^2 ||p||_2 (no square, l. 481)", "dropped factor", lambda: {"condition_power": 1}),
    Mutant("minimax_optimality_gap", "delta = rho/4", "wrong case boundary", lambda: {"delta_fn": lambda r, D: r / 4}),
    Mutant("minimax_optimality_gap", "delta = rho D/24 (no 6+D)", "dropped factor", lambda: {"delta_fn": lambda r, D: r * D / 24}),
    Mutant("minimax_optimality_gap", "delta = rho D/(4(6-D))", "wrong sign", lambda: {"delta_fn": lambda r, D: r * D / (4 * (6 - D))}),
    Mutant("footnote_spammers", "o(n) spammers: sqrt(n)", "wrong model", lambda: {"spammer_bound": lambda n, eta: sp.sqrt(n)}),
    Mutant("footnote_spammers", "o(n) spammers: n/log n", "wrong model", lambda: {"spammer_bound": lambda n, eta: n / sp.log(n)}),
    Mutant("footnote_spammers", "(1-eta^2) without the factor n", "dropped factor",
           lambda: {"spammer_bound": lambda n, eta: (1 - eta**2)}),
    # ---------------------------------------------------------------- Top-T
    Mutant("top_t_distribution", "the model as printed", "dropped factor",
           _top_t_other(lambda p_, lam, K, T: p_ * lam + (1 - p_) / sp.Integer(K))),
    Mutant("top_t_distribution", "leftover over K-T+1 labels", "wrong constant",
           _top_t_other(lambda p_, lam, K, T: p_ * lam / (K - T + 1) + (1 - p_) / sp.Integer(K))),
    Mutant("top_t_distribution", "minus the leftover", "wrong sign",
           _top_t_other(lambda p_, lam, K, T: -p_ * lam / (K - T) + (1 - p_) / sp.Integer(K))),
    Mutant("top_t_delta_r_and_algorithm", "1/K at non-top labels (as printed)", "dropped factor", _top_t_dr(lambda K, T, lam: 1 / sp.Integer(K))),
    Mutant("top_t_delta_r_and_algorithm", "1/K + lam/(K-T)", "wrong sign", _top_t_dr(lambda K, T, lam: 1 / sp.Integer(K) + lam / (K - T))),
    Mutant("top_t_delta_r_and_algorithm", "1/K - lam/(K-T+1)", "wrong constant",
           _top_t_dr(lambda K, T, lam: 1 / sp.Integer(K) - lam / (K - T + 1))),
    # ---------------------------------------------------------------- TopTwoEM (toptwo/extensions/em.py)
    Mutant("em_estep_decomposition", "gamma^o = 1 - G (H forgotten)", "dropped factor",
           lambda: {"other_weight": lambda K: 1 - sp.Symbol("G")}),
    Mutant("em_estep_decomposition", "q and 1-q swapped in the weights", "q <-> 1-q",
           lambda: {"weights": lambda K: (K * p * (1 - q) / (1 - p) + 1, K * p * q / (1 - p) + 1)}),
    Mutant("em_estep_decomposition", "weight K p q/(1-p) without the + 1", "wrong constant",
           lambda: {"weights": lambda K: (K * p * q / (1 - p), K * p * (1 - q) / (1 - p) + 1)}),
    Mutant("em_mstep_derivatives", "sign slip in d2/dp2 of log(1-p)", "wrong sign",
           lambda: {"p_terms": lambda K: {**_em_p(K), "o": (-1 / (1 - p), 1 / (1 - p) ** 2)}}),
    Mutant("em_mstep_derivatives", "x = q instead of q - 1/K", "wrong constant",
           lambda: {"p_terms": lambda K: {**_em_p(K), "g": (q / (1 / K + p * q),
                                                            -(q / (1 / K + p * q)) ** 2)}}),
    Mutant("em_mstep_derivatives", "d/dq of the h-term with the wrong sign", "q <-> 1-q",
           lambda: {"q_terms": lambda K: {**_em_q(K), "h": tuple(-v for v in _em_q(K)["h"])}}),
    Mutant("em_grid_weights_update", "pseudo-count left out of the denominator", "dropped factor",
           lambda: {"update": lambda N, d: [(Nk + d) / sum(N) for Nk in N]}),
    Mutant("em_grid_weights_update", "pi_k proportional to N_k (prior ignored in one node)",
           "wrong case boundary",
           lambda: {"update": lambda N, d: [(N[0]) / (sum(N) + (len(N) - 1) * d)]
                    + [(Nk + d) / (sum(N) + (len(N) - 1) * d) for Nk in N[1:]]}),
    Mutant("em_grid_weights_update", "2 delta pseudo-counts", "wrong constant",
           lambda: {"update": lambda N, d: [(Nk + 2 * d) / (sum(N) + len(N) * d) for Nk in N]}),
]

def _em_p(K):
    from .checks_em import em_p_term_derivatives

    return em_p_term_derivatives(K)


def _em_q(K):
    from .checks_em import em_q_term_derivatives

    return em_q_term_derivatives(K)


#: check name -> its mutants, in registry order.


def _pp():
    return sp.Symbol("p", positive=True)


def _var(scale=1, plus=False, with_m=True, squared=True):
    def v(K, m, sg):
        pi = sg * ((K - 2) * _pp() + 2) / K
        f = (K / (K - 2)) ** (2 if squared else 1)
        return scale * f * pi * ((1 + pi) if plus else (1 - pi)) / ((m if with_m else 1) * sg**2)
    return lambda: {"variance": v}


def _mp_log(x):
    import mpmath

    return mpmath.log(x)


_M += [
    # ---------------------------------------------------------------- numbered statements (checks_statements)
    Mutant("theorem1_ordering_every_K", "slack 3 (2 d1 per Delta v understated)", "wrong constant", lambda: {"slack": 3}),
    Mutant("theorem1_ordering_every_K", "gaps (1-q, 2q-1)", "q <-> 1-q", lambda: {"gaps": (1 - q, 2 * q - 1)}),
    Mutant("theorem1_ordering_every_K", "gap 2q+1", "wrong sign", lambda: {"gaps": (2 * q + 1, 1 - q)}),
    Mutant("eq5_variance_symbolic_m", "no 1/m", "dropped factor", _var(with_m=False)),
    Mutant("eq5_variance_symbolic_m", "K/(K-2) not squared", "wrong constant", _var(squared=False)),
    Mutant("eq5_variance_symbolic_m", "pi(1+pi)", "wrong sign", _var(plus=True)),
    Mutant("lemma1_exact_tail", "Bernstein's 1/2 dropped", "dropped factor", lambda: {"half": 1.0}),
    Mutant("lemma1_exact_tail", "3/4 for 1/2", "wrong constant", lambda: {"half": 0.75}),
    Mutant("lemma1_exact_tail", "bound 10x tighter than it is", "wrong constant", lambda: {"max_ratio": 0.1}),
    Mutant("mc_lemma1_sampler", "Bernstein's 1/2 dropped", "dropped factor", lambda: {"half": 1.0}),
    Mutant("mc_lemma1_sampler", "exponent x4", "wrong constant", lambda: {"half": 2.0}),
    Mutant("mc_lemma1_sampler", "exponent x3", "wrong constant", lambda: {"half": 1.5}),
    Mutant("mc_theorem1_gap_exponent", "gap(q) for gap(q)^2", "wrong constant", lambda: {"exponent": 1.0}),
    Mutant("mc_theorem1_gap_exponent", "gap(q)^4", "wrong constant", lambda: {"exponent": 4.0}),
    Mutant("mc_theorem1_gap_exponent", "gap = 1-q only (the 2q-1 case dropped)", "wrong case boundary",
           lambda: {"gap": lambda q: 1 - q}),
    Mutant("mc_theorem1_gap_exponent", "gap with q <-> 1-q", "q <-> 1-q", lambda: {"gap": lambda q: min(1 - 2 * q, q)}),
    Mutant("mc_majority_vote_rate", "Theta(1/mean p) (MV as good as Algorithm 1)", "wrong constant",
           lambda: {"exponent": 1.0}),
    Mutant("mc_majority_vote_rate", "Theta((mean p)^-4)", "wrong constant", lambda: {"exponent": 4.0}),
    Mutant("mc_majority_vote_rate", "||p||^2/n for (mean p)^2 (Algorithm 1's rate)", "wrong model",
           lambda: {"mean_reliability": lambda a: a ** 0.5}),
    Mutant("mc_corollary1_log_m", "log m dropped (Theorem 1's rate for every task)", "dropped factor", lambda: {"kappa": 0.0}),
    Mutant("mc_corollary1_log_m", "log m^2 (a square in the union bound)", "wrong constant", lambda: {"kappa": 2.0}),
    Mutant("mc_corollary1_log_m", "-log m (more tasks help)", "wrong sign", lambda: {"kappa": -1.0}),
    Mutant("mc_corollary2_log_m", "log m dropped (Theorem 1's rate for every task)", "dropped factor", lambda: {"kappa": 0.0}),
    Mutant("mc_corollary2_log_m", "log m^2 (a square in the union bound)", "wrong constant", lambda: {"kappa": 2.0}),
    Mutant("mc_corollary2_log_m", "-log m (more tasks help)", "wrong sign", lambda: {"kappa": -1.0}),
    Mutant("mc_corollary1_log_K", "log K dropped (kappa <= 0: one comparison per task)", "dropped factor",
           lambda: {"kappa_range": (-float("inf"), 0.0)}),
    Mutant("mc_corollary1_log_K", "log K^2 (kappa in (1, 2]: every pair of labels binding)", "wrong constant",
           lambda: {"kappa_range": (1.0, 2.0)}),
    Mutant("mc_corollary1_log_K", "-log K (more labels help)", "wrong sign", lambda: {"kappa_range": (-2.0, -0.5)}),
    Mutant("mc_corollary2_log_K", "log K dropped (kappa <= 0: one comparison per task)", "dropped factor",
           lambda: {"kappa_range": (-float("inf"), 0.0)}),
    Mutant("mc_corollary2_log_K", "log K^2 (kappa in (1, 2]: every pair of labels binding)", "wrong constant",
           lambda: {"kappa_range": (1.0, 2.0)}),
    Mutant("mc_corollary2_log_K", "-log K (more labels help)", "wrong sign", lambda: {"kappa_range": (-2.0, -0.5)}),
    Mutant("mc_lemma2_noise_norm", "constant 1 for 4", "wrong constant", lambda: {"constant": 1.0}),
    Mutant("mc_lemma2_noise_norm", "5 sqrt(sm) -> sqrt(sm)/2", "wrong constant", lambda: {"large_m_constant": 0.5}),
    Mutant("mc_lemma2_noise_norm", "||E|| grows like m", "wrong constant", lambda: {"exponent": 1.0}),
    Mutant("mc_lemma2_noise_norm", "||E|| does not grow with m", "dropped factor", lambda: {"exponent": 0.0}),
    Mutant("mc_theorem4_corollary3_norm", "constant 1 for 4", "wrong constant", lambda: {"constant": 1.0}),
    Mutant("mc_theorem4_corollary3_norm", "constant -4", "wrong sign", lambda: {"constant": -4.0}),
    Mutant("mc_theorem4_corollary3_norm", "constant 3/2", "wrong constant", lambda: {"constant": 1.5}),
    Mutant("mc_lemma3_sin_theta", "sin theta ~ 1/(sn)", "wrong constant", lambda: {"exponent": -1.0}),
    Mutant("mc_lemma3_sin_theta", "sin theta independent of s", "dropped factor", lambda: {"exponent": 0.0}),
    Mutant("mc_lemma3_sin_theta", "sin theta grows like sqrt(s)", "wrong sign", lambda: {"exponent": 0.5}),
    Mutant("mc_lemma5_delta1_scaling", "delta_1^-1 law (error ~ 1/s)", "wrong constant", lambda: {"exponent": -1.0}),
    Mutant("mc_lemma5_delta1_scaling", "error independent of s", "dropped factor", lambda: {"exponent": 0.0}),
    Mutant("mc_lemma5_delta1_scaling", "error grows like sqrt(s)", "wrong sign", lambda: {"exponent": 0.5}),
    Mutant("mc_theorem1_q_hat", "delta_1^-1 law (error ~ 1/s)", "wrong constant", lambda: {"exponent": -1.0}),
    Mutant("mc_theorem1_q_hat", "error independent of s", "dropped factor", lambda: {"exponent": 0.0}),
    Mutant("mc_theorem1_q_hat", "error grows like sqrt(s)", "wrong sign", lambda: {"exponent": 0.5}),
    Mutant("mc_corollary1_q_max_log_m", "log m dropped (Theorem 1's log(K/eps) for every q_j)", "dropped factor",
           lambda: {"exponent": 0.0}),
    Mutant("mc_corollary1_q_max_log_m", "max error linear in log m (log^2 m in s)", "wrong constant",
           lambda: {"exponent": 1.0}),
    Mutant("mc_corollary1_q_max_log_m", "max error falls with m", "wrong sign", lambda: {"exponent": -0.5}),
    Mutant("mc_theorem2_perturbed_plugin", "s ~ 1/(n sqrt(Dbar)) suffices", "wrong constant",
           lambda: {"dbar_power": 0.5}),
    Mutant("mc_theorem2_perturbed_plugin", "s ~ 1/n suffices (no Dbar)", "dropped factor", lambda: {"dbar_power": 0.0}),
    Mutant("mc_theorem2_perturbed_plugin", "s ~ Dbar/n suffices", "wrong sign", lambda: {"dbar_power": -1.0}),
    Mutant("lemma4_trimming_instances", "sin factor 1/2", "wrong constant", lambda: {"sin_const": 0.5}),
    Mutant("lemma4_trimming_instances", "norm factor 1 (50 dropped)", "dropped factor", lambda: {"norm_const": 1.0}),
    Mutant("lemma4_trimming_instances", "sin factor -6 sqrt 2", "wrong sign", lambda: {"sin_const": -6 * 2**0.5}),
    Mutant("lemma6_second_moment", "constant without the 2", "dropped factor",
           lambda: {"constant": lambda r: _mp_log(1 / r) / (1 - r)}),
    Mutant("lemma6_second_moment", "constant without log(1/rho)", "dropped factor", lambda: {"constant": lambda r: 2 / (1 - r)}),
    Mutant("lemma6_second_moment", "negative constant", "wrong sign",
           lambda: {"constant": lambda r: -2 * _mp_log(1 / r) / (1 - r)}),
    Mutant("textbook_concentration_exact", "Hoeffding 4t^2", "wrong constant", lambda: {"hoeffding_const": 4.0}),
    Mutant("textbook_concentration_exact", "Bernstein's 1/2 dropped", "dropped factor", lambda: {"bernstein_half": 1.0}),
    Mutant("textbook_concentration_exact", "Bernstein 2t^2", "wrong constant", lambda: {"bernstein_half": 2.0}),
    Mutant("theorem5_wedin_instances", "constant 1/2", "wrong constant", lambda: {"constant": 0.5}),
    Mutant("theorem5_wedin_instances", "1/sqrt 2 for sqrt 2", "wrong model", lambda: {"constant": 2**-0.5}),
    Mutant("theorem5_wedin_instances", "constant 1/4", "wrong constant", lambda: {"constant": 0.25}),
    Mutant("theorem4_unspecified_constant", "c = nm", "dropped factor", lambda: {"constant": lambda n, m: n * m}),
    Mutant("theorem4_unspecified_constant", "c = (n+m)/log(n+m)", "wrong model",
           lambda: {"constant": lambda n, m: (n + m) / sp.log(n + m)}),
    Mutant("theorem4_unspecified_constant", "c = nm/log n", "wrong constant", lambda: {"constant": lambda n, m: n * m / sp.log(n)}),
    Mutant("theorem2_aij_cont_factor2", "prefactor 1 (as printed)", "dropped factor", lambda: {"prefactor": sp.Integer(1)}),
    Mutant("theorem2_aij_cont_factor2", "prefactor 1/2", "wrong constant", lambda: {"prefactor": sp.Rational(1, 2)}),
    Mutant("theorem2_aij_cont_factor2", "prefactor -2", "wrong sign", lambda: {"prefactor": sp.Integer(-2)}),
    Mutant("eq6_kl_symbolic_K", "weight K p q/(1-p) (no +1)", "dropped factor",
           lambda: {"weights": lambda K: (K * p * q / (1 - p), K * p * (1 - q) / (1 - p) + 1)}),
    Mutant("eq6_kl_symbolic_K", "weights with q and 1-q swapped", "q <-> 1-q",
           lambda: {"weights": lambda K: (K * p * (1 - q) / (1 - p) + 1, K * p * q / (1 - p) + 1)}),
    Mutant("eq6_kl_symbolic_K", "(c,d) closed form without the (1-q) term", "dropped factor",
           _kl_forms("(c,d)", lambda: p * q * sp.log(_XYE()[0] / _XYE()[2]))),
]

MUTANTS: dict[str, list[Mutant]] = {}
for _m in _M:
    MUTANTS.setdefault(_m.check, []).append(_m)


def run_mutant(mutant: Mutant) -> tuple[bool, str]:
    """Run one mutant; return (killed, message). Only ClaimFailed counts as a kill."""
    try:
        CHECKS[mutant.check](**mutant.kwargs())
    except ClaimFailed as exc:
        return True, str(exc)
    except Exception as exc:  # noqa: BLE001 - reported, not counted as a kill
        return False, f"{type(exc).__name__}: {exc}"
    return False, "the check accepted the mutant"


def kill_rates(names: list[str] | None = None) -> list[dict[str, Any]]:
    """Run the mutants of ``names`` (default: every check); one row per check.

    Each row: ``check``, ``mutants``, ``killed``, ``rate``, ``kinds`` (sorted kinds covered),
    ``survivors`` (list of (mutant name, message)), ``seconds``.
    """
    from .checks_code import CODE_CHECKS

    rows = []
    # the code checks' mutants are changes to the package's source: theory_checks.mutate
    for name in names or [n for n in CHECKS if n not in CODE_CHECKS]:
        muts = MUTANTS.get(name, [])
        t0 = time.perf_counter()
        survivors = []
        killed = 0
        for mt in muts:
            ok, msg = run_mutant(mt)
            if ok:
                killed += 1
            else:
                survivors.append((mt.name, msg))
        rows.append({
            "check": name,
            "mutants": len(muts),
            "killed": killed,
            "rate": killed / len(muts) if muts else float("nan"),
            "kinds": sorted({mt.kind for mt in muts}),
            "survivors": survivors,
            "seconds": time.perf_counter() - t0,
        })
    return rows


def format_kill_table(rows: list[dict[str, Any]]) -> str:
    """Markdown table: check | mutants | killed | kill rate | kinds | seconds."""
    header = ("check", "mutants", "killed", "kill rate", "kinds", "seconds")
    body = [(r["check"], str(r["mutants"]), str(r["killed"]), f"{r['rate']:.0%}", ", ".join(r["kinds"]), f"{r['seconds']:.2f}")
            for r in rows]
    widths = [max(len(x[i]) for x in [header, *body]) for i in range(6)]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *map(line, body)])
