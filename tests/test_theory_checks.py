"""Every theory check passes, and every check rejects a deliberately wrong statement (its negative twin)."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import theory_checks as tc
from theory_checks import ClaimFailed
from theory_checks.checks_algorithm import paper_p_hat_variance
from theory_checks.checks_converse import check_theorem3a_inequality
from theory_checks.checks_divergence import X, Y, paper_closed_forms
from theory_checks.checks_em import em_p_term_derivatives, em_prior_derivatives
from theory_checks.checks_model import paper_eq1_probabilities
from theory_checks.checks_top_t import paper_delta_r_other, printed_other_prob
from theory_checks.model import p, paper_delta_r, q, s, symbolic_delta_r, symbolic_r


@pytest.mark.parametrize("name", list(tc.CHECKS))
def test_check_passes(name: str) -> None:
    rec = tc.CHECKS[name]()
    assert isinstance(rec, tc.CheckRecord)
    assert rec.name == name and rec.reference and rec.method and rec.scope and rec.seconds >= 0


def _swapped_r(K, g, h, k, q=q):
    return symbolic_r(K, g, h, k, q=1 - q)


def _wrong_eq1(K):
    pg, ph, pb, p0 = paper_eq1_probabilities(K)
    return pg, s * p * (1 - q), pb, p0  # drops (1-p)/K at h


NEGATIVE_TWINS = {
    "eq1_distribution": dict(probabilities=_wrong_eq1),
    "proposition1_exhaustive": dict(shift=lambda K, k: 0, Ks=range(3, 5)),  # drop the -s(K-2k)/K shift
    "proposition1_symbolic_K": dict(rho=lambda Pa, Pb, Pc, Pd, K, k: p * (q * (Pb - Pc) - (Pc + Pd) + k / K) + (K - k) / K),
    "rank1_population": dict(r=None, shift=lambda K, k: 0),  # without the shift the matrix has rank 2
    "eq2_delta_r_and_ordering": dict(
        delta_r=lambda K, g, h, k: paper_delta_r(K, g, h, k, q=1 - q), Ks=range(3, 5)  # q and 1-q swapped
    ),
    "algorithm1_population": dict(step5_factor=lambda K: K / K),  # K instead of K-2
    "eq5_unbiased_and_variance": dict(p_hat=lambda K, hits, m, sg: K / (K - 2) * (hits / (m * sg) - 1 / K)),
    "eq6_loglik_decomposition": dict(weights=lambda K: (K * p * q / (1 - p), K * p * (1 - q) / (1 - p) + 1)),
    "algorithm1_scaling": dict(expected_factor=sp.Integer(1)),  # Sec. 4.1's s' p r^T
    "kl_divergences": dict(closed_forms=lambda: {**paper_closed_forms(), "swap (h,g)": p * (2 * q - 1) * sp.log(Y / X)}),
    "theorem3a_inequality": dict(upper=sp.Rational(7, 10)),
    "theorem3a_spammer_hammer": dict(oracle_error=lambda K, pb, l: sp.Rational(K - 1, K) * (1 - pb) ** (l + 1)),
    "theorem3b_arithmetic": dict(threshold=sp.Integer(1)),  # s <= 1/(n Dbar) is not enough for 3/8
    "majority_vote_vs_spectral": dict(
        gap=lambda ps: sum((a - b) ** 2 for i, a in enumerate(ps) for b in ps[i + 1 :]) / len(ps)
    ),
    "top_t_distribution": dict(other_prob=printed_other_prob),  # the model as printed
    "top_t_delta_r_and_algorithm": dict(delta_r_other=paper_delta_r_other),  # "1/K otherwise" as printed
    "em_estep_decomposition": dict(other_weight=lambda K: 1 - sp.Symbol("G")),  # forgets H in gamma^o
    "em_mstep_derivatives": dict(  # sign slip in the second derivative of log(1 - p)
        p_terms=lambda K: {**em_p_term_derivatives(K), "o": (-1 / (1 - p), 1 / (1 - p) ** 2)}),
    "em_grid_weights_update": dict(  # the pseudo-count left out of the denominator
        update=lambda N, d: [(Nk + d) / sum(N) for Nk in N]),
}


def test_every_check_has_a_negative_twin() -> None:
    assert set(NEGATIVE_TWINS) == set(tc.CHECKS)


@pytest.mark.parametrize("name", list(NEGATIVE_TWINS))
def test_negative_twin_rejected(name: str) -> None:
    with pytest.raises(ClaimFailed):
        tc.CHECKS[name](**NEGATIVE_TWINS[name])


# Extra negative twins for claims with several parts.
@pytest.mark.parametrize(
    "fn, kwargs",
    [
        (tc.check_proposition1_exhaustive, dict(r=_swapped_r, Ks=range(3, 5))),
        (tc.check_rank1_population, dict(r=_swapped_r)),
        (tc.check_eq2_delta_r_and_ordering, dict(gaps=lambda: (1 - 2 * q, 1 - q))),
        (tc.check_eq2_delta_r_and_ordering, dict(gaps=lambda: (2 * q - 1, q - 1))),
        (tc.check_eq5_unbiased_and_variance, dict(variance=lambda K, m, sg: m * paper_p_hat_variance(K, m, sg))),
        (tc.check_kl_divergences, dict(minimizers=("swap (h,g)",))),
        (tc.check_theorem3b_arithmetic, dict(bound=sp.Rational(7, 16))),
        (tc.check_algorithm1_population, dict(q_hat=lambda K, dv, l: 1 / K + dv / l)),
        (tc.check_em_mstep_derivatives, dict(priors=lambda: {  # a convex prior on p
            **em_prior_derivatives(),
            "p": (sp.log(p) - sp.log(1 - p), 1 / p + 1 / (1 - p), -1 / p ** 2 + 1 / (1 - p) ** 2)})),
    ],
)
def test_more_negative_twins(fn, kwargs) -> None:
    with pytest.raises(ClaimFailed):
        fn(**kwargs)


def test_run_all_and_main(monkeypatch, capsys) -> None:
    # Every check already ran in test_check_passes; here a fast subset exercises the plumbing.
    from theory_checks import __main__ as cli

    subset = {n: tc.CHECKS[n] for n in ("eq1_distribution", "theorem3b_arithmetic")}
    monkeypatch.setattr(tc, "CHECKS", subset)
    monkeypatch.setattr(cli, "CHECKS", subset)
    assert [r.name for r in tc.run_all()] == list(subset)
    assert cli.main() == 0
    out = capsys.readouterr().out
    assert "2/2 checks passed" in out and "| eq1_distribution" in out


def test_main_exits_nonzero_on_failure(monkeypatch, capsys) -> None:
    from theory_checks import __main__ as cli

    def bad():
        return check_theorem3a_inequality(upper=sp.Rational(7, 10))

    monkeypatch.setattr(cli, "CHECKS", {"bad": bad})
    assert cli.main() == 1
    assert "FAILED bad" in capsys.readouterr().err


@settings(max_examples=25, deadline=None)
@given(st.integers(3, 12).flatmap(lambda K: st.tuples(st.just(K), st.permutations(range(1, K + 1)))))
def test_eq2_hypothesis(K_perm) -> None:
    """Eq. (2) from Proposition 1's table for random (K, g, h), K up to 12."""
    K, perm = K_perm
    g, h = perm[0], perm[1]
    dr = symbolic_delta_r(K, g, h)
    assert all(sp.expand(dr[k - 1] - paper_delta_r(K, g, h, k)) == 0 for k in range(1, K + 1))
    assert sp.expand(dr[h - 1] - dr[g - 1] - (2 * q - 1)) == 0


def test_helpers_for_notebooks() -> None:
    assert tc.symbolic_r(4, 3, 1, 2) == q - sp.Rational(1, 2)
    assert tc.symbolic_delta_r(4, 3, 1) == [q - sp.Rational(3, 4), sp.Rational(1, 4), sp.Rational(1, 4) - q, sp.Rational(1, 4)]
    assert sp.expand(tc.symbolic_expected_binary(3, 1, 2, 1) - s * (2 * p * (sp.Rational(1, 3) - q) + sp.Rational(1, 3))) == 0
