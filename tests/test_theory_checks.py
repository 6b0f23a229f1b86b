"""Every theory check passes, and every check rejects a deliberately wrong statement (its negative twin)."""

from __future__ import annotations

import math

import numpy as np
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


@pytest.mark.theory_cli          # `python -m theory_checks` runs these (see tests/conftest.py)
@pytest.mark.parametrize("name", list(tc.CHECKS))
def test_check_passes(name: str) -> None:
    from theory_checks.status import check_record

    rec = check_record(name)           # run once per process (the status page reuses it)
    assert isinstance(rec, tc.CheckRecord), rec
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
    "theorem3a_spammer_hammer": dict(oracle_error=lambda K, n, nh, s_: sp.Rational(K - 1, K) * (1 - s_) ** (nh + 1)),
    "theorem3a_rate_threshold": dict(bracket=(sp.Rational(4, 5), sp.Rational(81, 100))),
    "theorem3b_heterogeneous_q": dict(aggregate=lambda ds: sp.Min(*ds)),  # Dbar = min_j as printed
    "theorem3b_arithmetic": dict(threshold=sp.Integer(1)),  # s <= 1/(n Dbar) is not enough for 3/8
    "majority_vote_vs_spectral": dict(
        gap=lambda ps: sum((a - b) ** 2 for i, a in enumerate(ps) for b in ps[i + 1 :]) / len(ps)
    ),
    "lemma1_bernstein": dict(exponent_power=1),  # l. 1287's delta_2 for delta_2^2
    "theorem1_delta1_gap": dict(bound=None),  # "any delta_1 > 0"
    "theorem2_constants": dict(rho_max=lambda K: sp.Rational(1, 2)),  # the proof's "rho <= 1/2": 33 < 104/3
    "minimax_optimality_gap": dict(condition_power=1),  # "delta^2 ||p||_2 >~ n Dbar"
    "footnote_spammers": dict(spammer_bound=lambda n, eta: sp.sqrt(n)),  # "o(n) spammers"
    "top_t_distribution": dict(other_prob=printed_other_prob),  # the model as printed
    "top_t_delta_r_and_algorithm": dict(delta_r_other=paper_delta_r_other),  # "1/K otherwise" as printed
    "em_estep_decomposition": dict(other_weight=lambda K: 1 - sp.Symbol("G")),  # forgets H in gamma^o
    "em_mstep_derivatives": dict(  # sign slip in the second derivative of log(1 - p)
        p_terms=lambda K: {**em_p_term_derivatives(K), "o": (-1 / (1 - p), 1 / (1 - p) ** 2)}),
    "em_grid_weights_update": dict(  # the pseudo-count left out of the denominator
        update=lambda N, d: [(Nk + d) / sum(N) for Nk in N]),
    # the numbered statements (checks_statements)
    "theorem1_ordering_every_K": dict(slack=3),  # 2 d1 per Delta v understated
    "eq5_variance_symbolic_m": dict(variance=lambda K, m, sg: paper_p_hat_variance(K, m, sg) * m),  # no 1/m
    "lemma1_exact_tail": dict(half=1.0),  # Bernstein's 1/2 dropped
    "mc_lemma1_sampler": dict(half=1.0),  # Bernstein's 1/2 dropped: the frequency exceeds it
    "mc_theorem1_gap_exponent": dict(exponent=1.0),  # gap(q) for Theorem 1's gap(q)^2
    "mc_corollary1_log_m": dict(kappa=0.0),  # no log m: Theorem 1's rate for every task at once
    "mc_corollary2_log_m": dict(kappa=0.0),
    "mc_corollary1_log_K": dict(kappa_range=(-np.inf, 0.0)),  # no log K: one label comparison per task
    "mc_corollary2_log_K": dict(kappa_range=(1.0, 2.0)),  # Theorem 2's log K^2 as if all K^2 pairs bound
    "mc_majority_vote_rate": dict(exponent=1.0),  # MV needs only Theta(1/mean p) (no necessity of the square)
    "lemma4_trimming_instances": dict(sin_const=0.5),
    "mc_lemma2_noise_norm": dict(exponent=1.0),  # ||E|| ~ m: the sqrt(m) order
    "mc_theorem4_corollary3_norm": dict(constant=1.0),  # 4 sqrt(nu) -> sqrt(nu)
    "mc_lemma3_sin_theta": dict(exponent=-1.0),  # 1/(sn) for 1/sqrt(sn)
    "mc_lemma5_delta1_scaling": dict(exponent=-1.0),  # a delta_1^-1 law
    "mc_theorem1_q_hat": dict(exponent=-1.0),  # a delta_1^-1 law for q_hat
    "mc_corollary1_q_max_log_m": dict(exponent=0.0),  # no log m in ||q_hat - q||_inf
    "mc_theorem2_perturbed_plugin": dict(dbar_power=0.5),  # s ~ 1/(n sqrt(Dbar)) would suffice
    "lemma6_second_moment": dict(constant=lambda rho: 2 / (1 - rho)),  # log(1/rho) dropped
    "textbook_concentration_exact": dict(hoeffding_const=4.0),
    "theorem5_wedin_instances": dict(constant=0.5),
    "theorem4_unspecified_constant": dict(constant=lambda n, m: n * m),
    "theorem2_aij_cont_factor2": dict(prefactor=1),  # eqn:Aij_cont as printed
    "eq6_kl_symbolic_K": dict(weights=lambda K: (K * p * q / (1 - p), K * p * (1 - q) / (1 - p) + 1)),
}


def test_every_check_has_a_negative_twin() -> None:
    from theory_checks.checks_code import CODE_CHECKS

    assert set(NEGATIVE_TWINS) | set(CODE_TWINS) == set(tc.CHECKS)
    assert set(CODE_TWINS) == set(CODE_CHECKS)


# ---------------------------------------------------------------- the checks bind to the code
# Negative twins of the code checks: the package's function is replaced by a wrong one (the
# same kinds of change the source mutants of theory_checks.mutate make) and the check must fail.
def _wrap(obj, name, make):
    orig = getattr(obj, name)
    return obj, name, make(orig)


def _code_twins():
    import toptwo
    from toptwo import model as tmodel

    return {
        # q and 1 - q swapped in eq. (1)
        "code_eq1_answer_distribution": [_wrap(toptwo, "label_distribution",
                                               lambda f: lambda p, q, a, b, K: f(p, 1 - np.asarray(q), a, b, K))],
        # the conversion's case boundary moved: A^(k) = +1 for A >= k
        "code_prop1_binary_and_r": [_wrap(toptwo.binary, "binary_sign",
                                          lambda f: lambda labels, k: f(np.asarray(labels) + 1, k))],
        # step 5 without the K/(K-2) factor
        "code_algorithm1_population": [_wrap(toptwo.spectral, "top_from_projections",
                                             lambda f: lambda v, n_top=2, **kw: (lambda r: (r[0], r[1], r[2], r[3] * 2, r[4]) + r[5:])(f(v, n_top, **kw)))],
        # the two normalisations exchanged
        "code_eq5_reliability": [_wrap(toptwo, "estimate_reliability",
                                       lambda f: lambda R, top, normalization="paper", **kw: f(
                                           R, top, normalization={"paper": "per_worker", "per_worker": "paper"}[normalization], **kw))],
        # (g, h) reported as (h, g)
        "code_eq6_plugin_mle": [_wrap(toptwo, "plugin_mle", lambda f: lambda A, p, q: f(A, p, q)[:, ::-1])],
        # top-T Delta r with the weights in reverse order
        "code_top_t_model": [_wrap(toptwo.TopTwoModel, "delta_r",
                                   lambda f: lambda self: 1.0 / self.n_labels - self.label_weights()[:, ::-1])],
        # KL in bits (KL in the reverse direction is an equivalent mutant here: every alternative
        # mu_(a,b) is a label permutation of mu_(g,h) and the inverse permutation is another alternative)
        "code_kl_divergence": [_wrap(tmodel, "_kl", lambda f: lambda P, Q: f(P, Q) / np.log(2))],
        # Bernstein's 1/2 dropped: the bound squared
        "code_theory_bounds": [_wrap(toptwo.theory, "lemma1_bound", lambda f: lambda *a, **kw: f(*a, **kw) ** 2)],
        # step 3 divided by s' instead of 2 s': l and v doubled
        # eq. (6) with the pair reversed on every task (as a too-wide tie tolerance would on this near tie)
        "code_eq6_near_tie": [_wrap(toptwo, "plugin_mle", lambda f: lambda A, p, q: f(A, p, q)[:, ::-1])],
        # the automatic sign rule the wrong way round (the default stage 1)
        "code_default_estimators": [_wrap(toptwo.spectral, "resolve_sign_rule",
                                          lambda f: lambda rule, lv: {"paper": "sum", "sum": "paper"}[f(rule, lv)])],
        # theorem1_decay's x axis with gap(q) for gap(q)^2 (the rates s doubled here)
        "code_theorem1_decay_axis": [_wrap(toptwo.theory, "theorem1_decay", lambda f: lambda *a, **kw: [
            {**r, "sampling_rate": 2 * r["sampling_rate"]} for r in f(*a, **kw)])],
        "code_algorithm1_sparse_path": [_wrap(toptwo, "spectral_estimate",
                                              lambda f: lambda *a, **kw: (lambda r: setattr(r, "norm_p", 2 * r.norm_p) or r)(f(*a, **kw)))],
    }


CODE_TWINS = ("code_eq1_answer_distribution", "code_prop1_binary_and_r", "code_algorithm1_population",
              "code_eq5_reliability", "code_eq6_plugin_mle", "code_top_t_model", "code_kl_divergence",
              "code_theory_bounds", "code_algorithm1_sparse_path", "code_default_estimators",
              "code_theorem1_decay_axis", "code_eq6_near_tie")


@pytest.mark.parametrize("name", CODE_TWINS)
def test_code_check_rejects_wrong_code(name: str, monkeypatch) -> None:
    for obj, attr, repl in _code_twins()[name]:
        monkeypatch.setattr(obj, attr, repl)
    with pytest.raises(ClaimFailed):
        tc.CHECKS[name]()


# the twins of the long Monte-Carlo checks (`python -m theory_checks --long`, CI's slow
# stage) run with them: ~13 s of CPU, more than the other twins together
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow)
                                  if n in tc.LONG_CHECKS else n for n in NEGATIVE_TWINS])
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
        # three wrong claims a weak check would accept: a tiny coefficient, no coefficient at all, the paper's step
        (tc.check_theorem3b_arithmetic, dict(coefficient=sp.Rational(1, 100))),
        (tc.check_theorem3b_arithmetic, dict(coefficient=sp.Integer(0), bound=sp.Rational(1, 2))),
        (tc.check_theorem3b_arithmetic, dict(coefficient=sp.Rational(1, 4), bound=sp.Rational(3, 8))),
        (tc.check_algorithm1_population, dict(q_hat=lambda K, dv, l: 1 / K + dv / l)),
        (tc.check_em_mstep_derivatives, dict(priors=lambda: {  # a convex prior on p
            **em_prior_derivatives(),
            "p": (sp.log(p) - sp.log(1 - p), 1 / p + 1 / (1 - p), -1 / p ** 2 + 1 / (1 - p) ** 2)})),
    ],
)
def test_more_negative_twins(fn, kwargs) -> None:
    with pytest.raises(ClaimFailed):
        fn(**kwargs)


# ---------------------------------------------------------------- mutation tests of the checker
from theory_checks.mutants import KINDS, MUTANTS, _M, format_kill_table, kill_rates, run_mutant  # noqa: E402


@pytest.mark.slow
def test_mc_lemma1_sampler_other_seeds() -> None:
    # each seed fails with probability <= 2.9e-3 (the exact sizes of its 6 tests, summed): P(any of 20 fails)
    # <= 0.058; the assertion allows one failure, P(>= 2 of 20) <= 190 * 2.9e-3**2 < 0.0016
    fails = 0
    for sd in range(2, 22):
        try:
            tc.CHECKS["mc_lemma1_sampler"](seed=sd)
        except ClaimFailed:
            fails += 1
    assert fails <= 1, f"{fails} of 20 seeds fail the Monte-Carlo check of Lemma 1"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mc_theorem1_gap_exponent", "mc_majority_vote_rate"])
def test_mc_exponent_checks_other_seeds(name: str) -> None:
    # false alarms: each seed fails with probability 1e-3 (on the check's computed law), so P(any of 8 fails) <= 8e-3
    # (Bonferroni); power: the wrong exponents 1 and 4 must be rejected at every seed
    for sd in range(21, 29):
        tc.CHECKS[name](seed=sd)
        for wrong in (1.0, 4.0):
            with pytest.raises(ClaimFailed):
                tc.CHECKS[name](exponent=wrong, seed=sd)


def test_theorem1_law_limit_tends_to_two() -> None:
    """The gap-exponent check's limit law (the weighted vote's Chernoff rates): its exponent at gaps 1/3 as large as
    the check's is the value the note quotes, and it falls towards 2 as the gaps shrink."""
    from theory_checks.checks_montecarlo import THEOREM1_LAW_LIMIT, theorem1_pool, weighted_vote_chernoff_rate

    p = theorem1_pool(3)
    e = [math.log(weighted_vote_chernoff_rate(p, 0.5 + 1.5 * g) / weighted_vote_chernoff_rate(p, 0.5 + g / 2))
         / math.log(3) for g in (0.1, 0.1 / 3, 0.1 / 9)]
    assert f"{e[1]:.3f}" == THEOREM1_LAW_LIMIT
    assert e[0] > e[1] > e[2] > 2.0 and e[2] - 2.0 < 1e-3


@pytest.mark.slow
def test_mv_law_exponent_tends_to_two() -> None:
    """The majority-vote check's central-limit law: its exponent at (alpha, 3 alpha) tends to 2 as alpha shrinks
    (ns and n scaled by 9 per step), the values the check's note quotes (MV_LAW_LIMIT)."""
    from theory_checks.checks_montecarlo import MV_LAW_LIMIT, mv_law_exponent

    got = [mv_law_exponent((a, 3 * a), sc, exact_tails=False)[0] for a, sc in ((0.1, 1.0), (0.1 / 3, 9.0),
                                                                               (0.1 / 9, 81.0))]
    assert ", ".join(f"{e:.3f}" for e in got) == MV_LAW_LIMIT
    assert got[0] > got[1] > got[2] > 2.0 and got[2] - 2.0 < 0.01


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mc_corollary1_log_m", "mc_corollary2_log_m"])
def test_mc_log_m_checks_other_seeds(name: str) -> None:
    # false alarms: each seed fails with probability 1e-3 (on kappa_hat's law simulated at the sizes used),
    # P(any of 8 fails) <= 8e-3 (Bonferroni); power: kappa = 0 (no log m) and kappa = 2 must be rejected at every seed
    for sd in range(21, 29):
        tc.CHECKS[name](seed=sd)
        for wrong in (0.0, 2.0):
            with pytest.raises(ClaimFailed):
                tc.CHECKS[name](kappa=wrong, seed=sd)


@pytest.mark.slow
def test_mc_q_max_check_other_seeds() -> None:
    # false alarms: each seed fails with probability <= 1e-3 (nominal), P(any of 6 fails) <= 6e-3 (Bonferroni);
    # power: no log m (gamma = 0) and the max linear in log m (gamma = 1) must be rejected at every seed
    for sd in range(31, 37):
        tc.CHECKS["mc_corollary1_q_max_log_m"](seed=sd)
        for wrong in (0.0, 1.0):
            with pytest.raises(ClaimFailed):
                tc.CHECKS["mc_corollary1_q_max_log_m"](exponent=wrong, seed=sd)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mc_corollary1_log_K", "mc_corollary2_log_K"])
def test_mc_log_K_checks_other_seeds(name: str) -> None:
    # false alarms: each seed fails with probability <= 1e-3 (nominal), P(any of 6 fails) <= 6e-3 (Bonferroni);
    # power: kappa <= 0 (no log K) and kappa in (1, 2] (log K^2 tight) must be rejected at every seed
    for sd in range(21, 27):
        tc.CHECKS[name](seed=sd)
        for wrong in ((-np.inf, 0.0), (1.0, 2.0)):
            with pytest.raises(ClaimFailed):
                tc.CHECKS[name](kappa_range=wrong, seed=sd)


def test_every_check_has_mutants_of_several_kinds() -> None:
    from theory_checks.checks_code import CODE_CHECKS

    assert set(MUTANTS) == set(tc.CHECKS) - set(CODE_CHECKS)
    for name, muts in MUTANTS.items():
        assert len(muts) >= 3, name
        assert len({m.kind for m in muts}) >= 2, name
        assert all(m.kind in KINDS for m in muts), name
    kinds = {m.kind for m in _M}
    assert kinds == set(KINDS)


@pytest.mark.parametrize("mutant", [pytest.param(m, marks=pytest.mark.slow)
                                    if m.check in tc.LONG_CHECKS else m for m in _M],
                         ids=[f"{m.check}/{m.name}" for m in _M])    # long checks: slow
def test_every_mutant_is_killed(mutant) -> None:
    from theory_checks.status import claim_mutant_killed

    assert claim_mutant_killed(mutant.check, mutant.name), run_mutant(mutant)[1]


def test_run_mutant_reports_a_survivor() -> None:
    # negative twin of the harness: the correct statement "survives" (is not counted as killed)
    from theory_checks.mutants import Mutant

    ok, msg = run_mutant(Mutant("eq1_distribution", "the correct model", "wrong constant", lambda: {}))
    assert not ok and "accepted" in msg
    ok, msg = run_mutant(Mutant("eq1_distribution", "a crashing mutant", "wrong constant", lambda: {"nonsense": 1}))
    assert not ok and msg.startswith("TypeError")


def test_kill_rates_table_and_cli(capsys) -> None:
    from theory_checks import __main__ as cli

    rows = kill_rates(["eq1_distribution", "theorem3b_arithmetic"])
    assert [r["rate"] for r in rows] == [1.0, 1.0] and all(not r["survivors"] for r in rows)
    table = format_kill_table(rows)
    assert "| eq1_distribution" in table and "100%" in table
    assert cli.main(["--bogus"]) == 2


def test_run_all_and_main(monkeypatch, capsys) -> None:
    # Every check runs in `python -m theory_checks`; here a fast subset exercises the plumbing.
    from theory_checks import __main__ as cli

    subset = {n: tc.CHECKS[n] for n in ("eq1_distribution", "theorem3b_arithmetic")}
    monkeypatch.setattr(tc, "CHECKS", subset)
    monkeypatch.setattr(cli, "CHECKS", subset)
    assert [r.name for r in tc.run_all()] == list(subset)
    assert cli.main() == 0
    out = capsys.readouterr().out
    assert "2/2 checks passed" in out and "| eq1_distribution" in out


def test_long_checks_run_with_the_flag_only(monkeypatch, capsys) -> None:
    """`python -m theory_checks` leaves the long Monte-Carlo checks to `--long` (CI runs both); `--all` runs all."""
    from theory_checks import __main__ as cli

    subset = {n: tc.CHECKS[n] for n in ("eq1_distribution", "theorem3b_arithmetic")}
    monkeypatch.setattr(cli, "CHECKS", subset)
    monkeypatch.setattr(tc, "LONG_CHECKS", ("theorem3b_arithmetic",))
    assert cli.main([]) == 0 and "1/1 checks passed" in capsys.readouterr().out
    assert cli.main(["--long"]) == 0
    out = capsys.readouterr().out
    assert "1/1 long checks passed" in out and "| theorem3b_arithmetic" in out and "| eq1_distribution" not in out
    assert cli.main(["--all"]) == 0 and "2/2 checks passed" in capsys.readouterr().out
    import theory_checks

    assert set(theory_checks.LONG_CHECKS) <= set(subset)


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


@pytest.mark.parametrize("argv", [["--bogus"], ["extra"], ["-x", "1"]])
def test_main_refuses_unknown_arguments(capsys, argv) -> None:
    from theory_checks import __main__ as cli
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "usage: python -m theory_checks" in err and "unrecognized arguments" in err


def test_main_help_exits_zero(capsys) -> None:
    from theory_checks import __main__ as cli
    assert cli.main(["--help"]) == 0
    assert "exit status 0 if all pass" in capsys.readouterr().out


# ---------------------------------------------------------------- toptwo.theory (numerical side)
def test_theorem3a_max_sampling_rate_is_the_certified_root() -> None:
    import math

    from toptwo import theory

    s_star = theory.theorem3a_max_sampling_rate()
    assert s_star == pytest.approx(theory.THEOREM3A_MAX_SAMPLING_RATE, abs=1e-14)
    assert 0.79681 < s_star < 0.79682  # inside the bracket certified by theorem3a_rate_threshold
    assert -math.log1p(-(s_star - 1e-6)) <= 2 * (s_star - 1e-6)
    assert -math.log1p(-(s_star + 1e-6)) > 2 * (s_star + 1e-6)  # just above: the bound fails


def test_spammer_hammer_error_and_validation() -> None:
    import numpy as np

    from toptwo.theory import spammer_hammer_error_g

    np.testing.assert_allclose(spammer_hammer_error_g(4, 3, [0.0, 0.5, 1.0]), [0.75, 0.75 / 8, 0.0])
    with pytest.raises(ValueError, match=r"sampling_rate.* must lie in \[0, 1\]"):
        spammer_hammer_error_g(4, 3, 1.5)


def test_theorem3b_as_printed_fails_for_heterogeneous_q() -> None:
    from toptwo.theory import LE_CAM_PINSKER_CONSTANT, theorem3b_counterexample

    r = theorem3b_counterexample(rng=0)
    assert r["hypothesis_holds"] and r["threshold_printed"] > 1e4  # s = 1 satisfies s <= 1/(4 n Dbar)
    assert r["pair_errors"].shape == (30,)
    assert r["mean"] < 0.01 and r["max"] < 0.02 < LE_CAM_PINSKER_CONSTANT
    assert r["corrected_bound"] < 0.01  # the per-task bound: only task 0 is hard
    assert r["threshold_corrected"] < 0.02  # s <= 1/(4 n max_j Dbar^(j)) is the corrected hypothesis
    # negative twin: with identical q (every task like task 0) the oracle fails, as the theorem says
    same = theorem3b_counterexample(n_tasks=100, easy_confusion=0.5 + 1e-4, n_draws=3, rng=0)
    assert same["mean"] > LE_CAM_PINSKER_CONSTANT


def test_theorem3b_corrected_bound_and_binomial_ci() -> None:
    import numpy as np

    from toptwo.theory import LE_CAM_PINSKER_CONSTANT, binomial_ci, theorem3b_corrected_bound

    assert theorem3b_corrected_bound(10, 0.1, [0.25, 0.25]) == pytest.approx(LE_CAM_PINSKER_CONSTANT)
    assert theorem3b_corrected_bound(10, 0.1, [0.25, np.inf]) == pytest.approx(LE_CAM_PINSKER_CONSTANT / 2)
    with pytest.raises(ValueError, match="d_bar_per_task"):
        theorem3b_corrected_bound(10, 0.1, [-1.0])
    lo, hi = binomial_ci(np.array([0, 5]), 10)
    assert lo[0] == 0.0 and hi[0] == pytest.approx(0.3084971, abs=1e-6) and lo[1] < 0.5 < hi[1]
    with pytest.raises(ValueError, match="successes"):
        binomial_ci(11, 10)


def test_lemma1_bound_and_tail() -> None:
    import numpy as np

    from toptwo.theory import lemma1_bound, lemma1_tail

    b = lemma1_bound(4, 2000, 0.5, [0.1, 0.2, 0.3])
    assert np.all(np.diff(b) < 0) and b[0] < 1
    # the kappa form is the weaker (larger) bound for c delta <= 1
    assert np.all(lemma1_bound(4, 2000, 0.5, [0.1, 0.2, 0.3], form="kappa") >= b)
    with pytest.raises(ValueError, match="form"):
        lemma1_bound(4, 10, 0.5, 0.1, form="hoeffding")
    r = lemma1_tail(n_workers=20, n_tasks=1000, rate=0.5, deltas=(0.15, 0.25), n_reps=40, rng=1)
    assert np.all(r["worker_ci"][0] <= r["bound_worker"]) and np.all(r["sup_ci"][0] <= r["bound_sup"])
    # negative twin: the comparison can fail; a bound 100 times smaller is rejected by the CI at delta = 0.15
    assert r["worker_ci"][0][0] > r["bound_worker"][0] / 100


def test_theorem1_decay_and_every_task_small() -> None:
    import numpy as np

    from toptwo.theory import every_task_recovery, theorem1_decay

    rows = theorem1_decay(n_workers=200, n_tasks=150, reliability_ranges=((0.5, 1.0),), confusions=(0.75,),
                          x_grid=(0.5, 1.5, 3.0), n_reps=2, rng=0)
    (r,) = rows
    assert r["gap"] == pytest.approx(0.25) and np.all(np.diff(r["rate"]) < 0) and r["slope"] > 0
    assert np.all(r["ci_low"] <= r["rate"]) and np.all(r["rate"] <= r["ci_high"])
    with pytest.raises(ValueError, match="confusion"):
        theorem1_decay(confusions=(0.5,), n_reps=1)
    ev = every_task_recovery(n_workers=100, n_tasks_list=(10, 200), x_grid=(2, 6, 10, 14), n_reps=10, rng=0)
    assert ev[10]["all_ok"][-1] >= ev[200]["all_ok"][-1]  # more tasks, harder to get all right
    assert ev["slope"] > 0 and ev["predicted_shift"] > 0


def test_label_union_failures_small() -> None:
    import numpy as np

    from toptwo import theory
    from theory_checks.checks_montecarlo import label_union_exponent

    for est in ("alg1", "alg2"):
        r = theory.label_union_failures(est, (3, 6), n_workers=400, n_tasks=300,
                                        information={"alg1": 9.0, "alg2": 2.0}[est], n_reps=1, rng=0)
        for K in (3, 6):
            c = r[K]
            assert 0 < c["sampling_rate"] <= 1 and c["task_trials"] == 300
            assert c["competitor_trials"] == 300 * (K - 2) and 0 <= c["competitor_wins"] <= c["competitor_trials"]
        # matched information: the per-competitor failure is comparable across K, the task failure grows
        f = [r[K]["competitor_wins"] / r[K]["competitor_trials"] for K in (3, 6)]
        assert r[6]["task_failed"] > r[3]["task_failed"] and max(f) < 4 * min(f)
    # the exponent: -log(1 - F) = (K - 2)^kappa (-log(1 - f)) exactly gives kappa back
    f = 0.02
    data = {"n_labels_list": [3, 5, 9]}
    for K in (3, 5, 9):
        F = 1 - (1 - f) ** (K - 2)
        data[K] = {"task_failed": round(F * 10**7), "task_trials": 10**7,
                   "competitor_wins": round(f * 10**7), "competitor_trials": 10**7}
    kappa, se, _ = label_union_exponent(data)
    assert kappa == pytest.approx(1.0, abs=1e-3) and se < 0.01
    # the information per unit s: alg1's signal-to-noise and alg2's Bhattacharyya distance grow with ||p||
    p = np.full(10, 0.5)
    assert theory.competitor_information(2 * p, 0.8, 4, "alg1") > theory.competitor_information(p, 0.8, 4, "alg1")
    assert theory.competitor_information(p, 0.8, 4, "alg2") == pytest.approx(
        10 * (np.sqrt(0.1 + 0.125) - np.sqrt(0.125)) ** 2)
    with pytest.raises(ValueError, match="label_union_failures: `confusion` must lie in \\(2/3, 1\\)"):
        theory.label_union_failures(confusion=0.6, n_reps=1)
    with pytest.raises(ValueError, match="label_union_failures: `estimator` must be 'alg1' or 'alg2'"):
        theory.label_union_failures("mv", n_reps=1)
    with pytest.raises(ValueError, match="needs s = "):
        theory.label_union_failures(information=1e3, n_reps=1)
    with pytest.raises(ValueError, match="competitor_information: `estimator`"):
        theory.competitor_information(p, 0.8, 4, "x")


def test_sign_rule_flips_small() -> None:
    from toptwo.theory import sign_rule_flips

    r = sign_rule_flips(n_workers=100, n_tasks=150, hammer_fractions=(0.6, 0.1), n_reps=8, rng=0)
    assert r["paper"]["flipped"][0] == 0 and r["sum"]["flipped"][0] == 0  # hammers in the majority: no flip
    assert r["paper"]["flipped"][1] > r["sum"]["flipped"][1]  # a spammer majority flips the paper's rule
    with pytest.raises(ValueError, match="queries_per_task"):
        sign_rule_flips(n_workers=10, queries_per_task=20, n_reps=1)


def test_minimax_gap_curves_small() -> None:
    import numpy as np

    from toptwo.theory import minimax_gap_curves

    r = minimax_gap_curves(n_workers=200, n_tasks=60, confusions=(0.65, 0.8), x_grid=(1.0, 4.0, 10.0, 20.0),
                           target=0.1, n_reps=1, rng=0)
    for row in r["rows"]:
        assert row["d_bar"] > 0 and 0 < row["rho"] <= 1 / 4
        assert row["cor2_x"] > 1e4                       # Cor. 2's first term is astronomically conservative
        assert np.nanmax(row["errors"]["oracle MLE"]) <= 1 and np.isfinite(row["x_needed"]["oracle MLE"])
        assert row["x_needed"]["oracle MLE"] >= 0.25     # nothing beats Theorem 3(b)'s threshold


def test_theory_monte_carlo_input_validation() -> None:
    from toptwo import theory

    with pytest.raises(ValueError, match=r"lemma1_tail: `reliability_range` must satisfy 0 <= low <= high <= 1"):
        theory.lemma1_tail(reliability_range=(0.5, 1.5), n_reps=1)
    with pytest.raises(ValueError, match=r"every_task_recovery: the confusion q must lie in \(1/2, 1\]"):
        theory.every_task_recovery(confusion=0.4, n_reps=1)
    with pytest.raises(ValueError, match=r"theorem3b_counterexample: `reliability_range` must be a pair"):
        theory.theorem3b_counterexample(reliability_range=0.7)
    with pytest.raises(ValueError, match="n_reps"):
        theory.sign_rule_flips(n_reps=0)


def test_le_cam_queries_and_minimax_sample_complexity_small() -> None:
    import numpy as np

    from toptwo import theory

    assert theory.le_cam_queries(0.1, 0.1) == pytest.approx(8 * 0.4**2 / 0.1)
    assert np.allclose(theory.le_cam_queries([0.05, 0.1], 0.25), [10.0, 5.0])     # slope -1 in D-bar
    with pytest.raises(ValueError, match=r"le_cam_queries: `target` must lie in \(0, 1/2\)"):
        theory.le_cam_queries(0.1, 0.5)
    with pytest.raises(ValueError, match="le_cam_queries: `d_bar` must be > 0"):
        theory.le_cam_queries([0.1, 0.0], 0.1)
    r = theory.minimax_sample_complexity(n_workers=200, n_tasks=40, confusions=(0.6, 0.75),
                                         x_grid=(1.0, 3.0, 6.0, 12.0, 20.0), target=0.2, n_reps=2, rng=0)
    for row in r["rows"]:
        assert row["cor2_queries"] > 1e4 * row["lower"]        # Cor. 2's first term, astronomically far
        q = row["queries"]["oracle MLE"]
        assert np.all(q[np.isfinite(q)] >= row["lower"])        # nobody beats the lower bound
    with pytest.raises(ValueError, match="minimax_sample_complexity: `x_grid` must be positive and strictly"):
        theory.minimax_sample_complexity(x_grid=(2.0, 1.0), n_reps=1)


def test_first_crossing_and_loglog_slope() -> None:
    import numpy as np

    from toptwo import theory

    x = np.array([1.0, 2.0, 3.0])
    assert theory.first_crossing(x, [0.8, 0.4, 0.1], 0.6) == pytest.approx(1.5)
    assert theory.first_crossing(x, [0.8, 0.4, 0.1], 0.2, log_y=True) == pytest.approx(2 + np.log(2) / np.log(4))
    assert theory.first_crossing(x, [0.0, 0.3, 0.9], 0.6, increasing=True) == pytest.approx(2.5)
    assert np.isnan(theory.first_crossing(x, [0.8, 0.7, 0.65], 0.6))
    with pytest.raises(ValueError, match="first_crossing: `x` must be 1-D, strictly increasing"):
        theory.first_crossing([2.0, 1.0], [0.5, 0.4], 0.1)
    d = np.array([0.01, 0.04, 0.16])
    reps = [3.0 / v * np.array([0.95, 1.0, 1.05]) for v in d]     # exactly c / D-bar
    slope, se = theory.loglog_slope(d, reps)
    assert slope == pytest.approx(-1.0) and se < 0.05
    slope2, _ = theory.loglog_slope(d, [3.0 / v**2 * np.array([0.95, 1.05]) for v in d])
    assert slope2 == pytest.approx(-2.0)                          # a D-bar^2 law is told apart
    with pytest.raises(ValueError, match="loglog_slope: every x needs at least 2 finite replicates"):
        theory.loglog_slope(d, [[1.0, np.nan]] * 3)


# ------------------------------------------ fit_loglog_slope (the one log-log fit)
@pytest.mark.parametrize("slope,const", [(-0.5, 3.0), (2.0, 0.1), (-1.0, 1.0)])
def test_fit_loglog_slope_exact_power_law(slope, const):
    from toptwo.theory import fit_loglog_slope

    x = np.array([0.01, 0.03, 0.1, 0.3, 1.0])
    s, b = fit_loglog_slope(x, const * x ** slope)
    assert s == pytest.approx(slope, abs=1e-12)
    assert np.exp(b) == pytest.approx(const, rel=1e-12)


def test_fit_loglog_slope_rejects_bad_input():
    from toptwo.theory import fit_loglog_slope

    with pytest.raises(ValueError, match="must be finite and > 0.*got 0.0 at index 1"):
        fit_loglog_slope([1, 2, 3], [1, 0, 3])
    with pytest.raises(ValueError, match="at least 2 points; got 1"):
        fit_loglog_slope([1], [1])
    with pytest.raises(ValueError, match="same length; got 2 and 3"):
        fit_loglog_slope([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="must not all be equal"):
        fit_loglog_slope([2, 2], [1, 3])


def test_fit_loglog_slope_on_noisy_data_and_rejects_wrong_rate():
    from toptwo.theory import fit_loglog_slope

    rng = np.random.default_rng(0)
    x = np.logspace(-2, 0, 9)
    y = 0.7 * x ** -0.5 * np.exp(rng.normal(0, 0.05, x.size))
    s, _ = fit_loglog_slope(x, y)
    assert abs(s + 0.5) < 0.1
    s_wrong, _ = fit_loglog_slope(x, 0.7 * x ** -1.0)
    assert abs(s_wrong + 0.5) > 0.1


def test_loglog_slope_is_fit_loglog_slope_on_the_means() -> None:
    from toptwo import theory

    # replicates with the same relative spread at every x: equal weights, so the weighted fit
    # of loglog_slope is the plain fit of fit_loglog_slope on the replicate means
    x = np.array([0.5, 1.0, 2.0, 4.0, 8.0])
    base = np.array([3.1, 1.7, 0.8, 0.45, 0.2])
    reps = [b * np.array([0.9, 1.0, 1.1]) for b in base]
    slope, se = theory.loglog_slope(x, reps)
    plain, _ = theory.fit_loglog_slope(x, [r.mean() for r in reps])
    assert slope == pytest.approx(plain, rel=1e-12) and se > 0
    with pytest.raises(ValueError, match="All values of 'x' in loglog_slope must be finite and > 0"):
        theory.loglog_slope([0.0, 1.0], reps[:2])


def test_sign_flip_probability() -> None:
    from scipy.stats import binom

    from toptwo import theory

    assert theory.sign_flip_probability(100, 60, 4) == 0.0                   # a majority of hammers: never
    p1 = binom.cdf(9, 35, 0.5)                                              # h = 15 of 50: B <= 9 flips
    assert theory.sign_flip_probability(50, 15) == pytest.approx(p1)
    assert theory.sign_flip_probability(50, 15, 4) == pytest.approx(1 - (1 - p1) ** 4)
    assert theory.sign_flip_probability(50, 0) == pytest.approx(binom.cdf(24, 50, 0.5))   # spammers only
    assert theory.sign_flip_probability(400, 40, 4) < theory.sign_flip_probability(100, 10, 4)  # fixed fraction, n grows
    with pytest.raises(ValueError, match="sign_flip_probability: `n_hammers` = 60 exceeds `n_workers` = 50"):
        theory.sign_flip_probability(50, 60)


def test_scaling_checks_on_the_stored_results_and_a_wrong_law() -> None:
    import copy

    import numpy as np

    from toptwo import theory
    from toptwo.experiments import paper

    stored = paper.load("theorems_mc")["scaling"]
    checks = theory.scaling_checks(stored)
    assert len(checks) == 12 and all(ok for ok, _ in checks.values()), {k: m for k, (ok, m) in checks.items() if not ok}
    # negative twin: n s needed growing like 1/D-bar^2 (the Cor. 2 shape) is flagged
    bad = copy.deepcopy(stored["minimax_curve"])
    for row in bad["rows"]:
        row["queries"]["TopTwo2"] = list(np.asarray(row["queries"]["TopTwo2"]) * (0.19 / row["d_bar"]))
    assert not theory.scaling_checks({"minimax_curve": bad})["minimax no D-bar^2 gap (TopTwo2)"][0]
    # and a threshold growing like sqrt(m) instead of log m
    ev = copy.deepcopy(stored["every_task_m"])
    x = np.asarray(ev["x"])
    for m in ev["n_tasks_list"]:
        xh = 3.0 * np.sqrt(m)
        ok = (x >= xh).astype(int) * ev["n_reps"]
        ev["per_m"][str(m)]["all_ok"] = ok.tolist()
        ev["per_m"][str(m)]["ci"] = [c.tolist() for c in theory.binomial_ci(ok, ev["n_reps"])]
    ev["x"] = x.tolist()
    res = theory.scaling_checks({"every_task_m": ev})
    assert not (res["every-task threshold grows like log m"][0] and res["every-task threshold: log m, not a power of m"][0])
