"""The theory status page: every numbered statement of the paper, how it is checked, what was found.

Generated from the checks themselves (``python -m theory_checks --status-page docs/theory_status.md
--readme-table README.md``). Each statement lists the registered checks that
bear on it and, per check, what that check tests of the statement (:data:`LEVELS`): the
statement's status is the strongest level among its checks *that pass in this run* ("untouched"
when none does), so a label is earned by a check, never a default text; a statement left
untouched or with proof steps only must say why (:attr:`Statement.untestable`). The dependency
graph (``docs/_generated/theory_graph.svg``) is drawn from :attr:`Statement.uses` (read from the
paper's proofs) and coloured by the same status. ``tests/test_theory_status.py`` regenerates the
page, the graph and the README table and compares them with the committed ones.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._core import CHECKS, CheckRecord, ClaimFailed

__all__ = ["Statement", "STATEMENTS", "LEVELS", "FALSE_ALARM", "SOURCE_MUTANTS_JSON", "GRAPH_SVG", "status_page",
           "readme_table", "dependency_svg", "graph_geometry", "statement_status", "check_record", "claim_mutant_killed", "counts",
           "sync_readme"]

#: Where ``python -m theory_checks.mutate --write`` stores the source-mutant table (relative to the repo).
SOURCE_MUTANTS_JSON = "docs/_generated/source_mutants.json"
#: The dependency graph written next to the status page (relative to the repo).
GRAPH_SVG = "docs/_generated/theory_graph.svg"

#: What a check can establish about a statement, strongest first; "untouched" is what is left.
LEVELS = ("as stated", "restricted", "shape", "instances", "proof steps")
LEVEL_MEANING = {
    "as stated": "decided over the statement's whole scope, as printed or with a corrected constant "
                 "(exact arithmetic, exhaustive enumeration or a certified counterexample)",
    "restricted": "decided for a restricted or corrected form (a corrected model, a finite grid)",
    "shape": "the rate's shape measured by Monte Carlo (an exponent, a log factor) against a wrong-law twin",
    "instances": "the inequality holds on fixed seeded instances (the constant is explicit)",
    "proof steps": "only steps of the proof are checked (arithmetic, a deterministic step)",
    "untouched": "nothing checks it",
}
#: Fill colour per status (the graph and the page's badges).
COLORS = {"as stated": "#1b7837", "restricted": "#7fbf7b", "shape": "#67a9cf", "instances": "#fee08b",
          "proof steps": "#fdae61", "untouched": "#d9d9d9"}
_DARK = {"as stated"}

#: False-alarm rate of each randomised check (every other check is exact or runs on fixed seeded
#: instances, so its verdict is deterministic).
FALSE_ALARM = {
    "mc_lemma1_sampler": "2.9e-3 family-wise (6 exact binomial tests at 1e-3: their discrete sizes at the exact probabilities computed and summed; power against Bernstein's 1/2 dropped 0.9996, exact); a slow test runs 20 more seeds",
    "mc_theorem1_gap_exponent": "1e-3 (log decay-rate ratio outside 2 log 3 + b +- (|b_E| + z_(1-5e-4) sd): b the finite-size bias of the law given the draws' u~ against its Chernoff limit, sd from a bootstrap of that law; power vs exponents 1 and 4: 1.000); a slow test runs 8 more seeds",
    "mc_corollary1_log_m": "1e-3 (kappa_hat outside the central 1 - 1e-3 of its law simulated at the sizes used, finite-size bias included; power vs kappa = 0 and 2: 1.000 on that law); a slow test runs 8 more seeds",
    "mc_corollary2_log_m": "1e-3 (kappa_hat outside the central 1 - 1e-3 of its law simulated at the sizes used, finite-size bias included; power vs kappa = 0 and 2: 1.000 on that law); a slow test runs 8 more seeds",
    "mc_corollary1_log_K": "1e-3 (kappa_hat +- z_(1-5e-4) se outside (0, 1], the union bound's range; nominal); a slow test runs 6 more seeds",
    "mc_corollary2_log_K": "1e-3 (kappa_hat +- z_(1-5e-4) se outside (0, 1], the union bound's range; nominal); a slow test runs 6 more seeds",
    "mc_lemma2_noise_norm": "1e-3 (slope outside 1/2 +- (Bai-Yin bias + z_(1-5e-4) se), nominal); the bounds < 1e-20",
    "mc_theorem4_corollary3_norm": "1e-20 (an upper bound: ||E|| ~ 1.9 sqrt(nu) concentrates within O(1); the bound is 4 sqrt(nu))",
    "mc_lemma3_sin_theta": "1e-3 (slope outside -1/2 +- (first-order bias + excess + z_(1-5e-4) se), nominal)",
    "mc_lemma5_delta1_scaling": "2e-3 (two configurations, each slope outside -1/2 +- (first-order bias + excess + z se), nominal)",
    "mc_theorem1_q_hat": "2e-3 (two configurations, each slope outside -1/2 +- (first-order bias + z se), nominal)",
    "mc_corollary1_q_max_log_m": "1e-3 (gamma_hat outside 1/2 + b_G +- (|b_CF| + z_(1-5e-4) se); b_G and se from gamma_hat's law simulated at the sizes used, b_CF from the measured skewness and kurtosis; power vs gamma = 0 and 1: 1.000 under that law)",
    "mc_theorem2_perturbed_plugin": "1e-3 (one-sided: power of Dbar above 1 + z_(1-1e-3) se, nominal)",
    "mc_majority_vote_rate": "1e-3 (exponent outside 2 + b +- (|b_NG| + z_(1-5e-4) sd): b the finite-size bias of the count differences' central-limit law at the sizes used plus the estimator's bootstrap bias, sd from the bootstrap; power vs exponents 1 and 4: 1.000); a slow test runs 8 more seeds",
}


@dataclass(frozen=True)
class Statement:
    """One numbered statement of the paper and how the package checks it."""

    number: str            #: "Theorem 1"
    label: str             #: LaTeX label
    claim: str             #: the statement in a few words (maintainers' form)
    plain: str             #: the statement in plain words (readers' form)
    checks: dict[str, str]  #: registered check -> what it tests of this statement (a level of LEVELS)
    found: str = ""        #: what the package found wrong or imprecise ("" if nothing)
    short: str = ""        #: the finding in a few words (README); "" if nothing was found
    uses: tuple[str, ...] = ()  #: statements its proof uses (the dependency graph)
    untestable: str = ""   #: what is not tested and why, and which consequence is checked instead
    elsewhere: str = ""    #: Monte-Carlo illustrations outside theory_checks (no verdict)
    extra: tuple[str, ...] = field(default=())  #: further checks named for context (no level)


_U = "theorem4_unspecified_constant"

STATEMENTS: tuple[Statement, ...] = (
    Statement(
        "Proposition 1", "prop:binary", "E[A^(k)] - s(K-2k)/K 1 = 2 s p (r^(k))^T, Cases I/II",
        "After the binary conversion, the centred answer matrix has expectation 2s·p·r⁽ᵏ⁾ᵀ: rank one, "
        "workers times tasks.",
        {"proposition1_exhaustive": "as stated", "proposition1_symbolic_K": "as stated",
         "rank1_population": "as stated", "eq2_delta_r_and_ordering": "as stated", "eq1_distribution": "proof steps",
         "code_eq1_answer_distribution": "proof steps", "code_prop1_binary_and_r": "proof steps"},
        found="holds as stated; at q_j = 1, h_j ties with every other label (eq. (2))",
        short="holds; at q = 1 h ties with the other labels"),
    Statement(
        "Remark 1", "(top-T, App. subsec:top_T)", "the rank-1 structure and Algorithm 1 extend to top-T",
        "The method extends from top-two to top-T answers.",
        {"top_t_distribution": "restricted", "top_t_delta_r_and_algorithm": "restricted",
         "code_top_t_model": "proof steps"},
        found="eqn:topk_dist is not a distribution unless sum q = 1; Delta r = 1/K for non-top labels only then; "
              "with leftover mass p is not identifiable",
        short="printed top-T model is not a distribution", uses=("Proposition 1",)),
    Statement(
        "Theorem 1", "thm:main", "(g_hat, h_hat) = (g, h) and |q_hat - q| < d1 w.p. >= 1 - eps if "
        "s s1 = Omega(log(K/eps)/(d1^2 ||p||^2))",
        "Algorithm 1 finds a task's top two answers, and its confusion q to within δ₁, once each task has about "
        "log(K/ε)/(δ₁²‖p‖²) answers.",
        {"theorem1_delta1_gap": "proof steps", "theorem1_ordering_every_K": "proof steps",
         "algorithm1_population": "proof steps", "algorithm1_scaling": "proof steps",
         "code_algorithm1_population": "proof steps", "code_algorithm1_sparse_path": "proof steps",
         "code_default_estimators": "proof steps", "code_theorem1_decay_axis": "proof steps",
         "mc_theorem1_gap_exponent": "shape", "mc_corollary1_log_K": "shape", "mc_theorem1_q_hat": "shape"},
        found="needs d1 < min(2q-1, 1-q)/4 (tight), so the rate hides 16/gap(q)^2; Sec. 4.1's E[X] lacks a factor 2 "
              "(step 3 as printed estimates 2||p||)",
        short="the proof needs δ₁ below a quarter of gap(q) = min(2q − 1, 1 − q), the margin between the top two answers' shares, and this is tight: the rate hides a factor 16/gap(q)²", uses=("Lemma 5", "Proposition 1"),
        untestable="the Omega constant is unspecified: the gap(q)^2, the log K and q_hat's delta_1^-2 are measured "
                   "instead",
        elsewhere="toptwo.theory.theorem1_decay (notebook 05): exponential decay in s||p||^2 gap(q)^2"),
    Statement(
        "Corollary 1", "cor:exact_alg1", "all pairs and ||q_hat - q||_inf < d1 w.p. >= 1 - eps if "
        "s s1 = Omega(log(mK/eps)/(d1^2 ||p||^2))",
        "Algorithm 1 gets every task right at once with log(mK/ε) in place of log(K/ε).",
        {"theorem1_ordering_every_K": "proof steps", "mc_corollary1_log_m": "shape", "mc_corollary1_log_K": "shape",
         "mc_corollary1_q_max_log_m": "shape"},
        found="inherits Theorem 1's hidden 16/gap(q)^2; log m and log K both measured (kappa ~ 1 and ~ 0.7: the K - 2 "
              "label comparisons of a task are positively correlated, so the union bound over labels is approached "
              "from below); ||q_hat - q||_inf grows like sqrt(log m) at fixed s, as the log m needs",
        short="as Theorem 1; log m (pairs and ‖q̂ − q‖∞) and log K measured", uses=("Lemma 5", "Proposition 1"),
        untestable="the Omega constant is unspecified: the log m (of the pairs and of ||q_hat - q||_inf) and the log K "
                   "are measured instead",
        elsewhere="toptwo.theory.every_task_recovery (notebook 05): log m shift"),
    Statement(
        "Lemma 1", "lem:rec_p", "||p_hat - p||_inf < d2 w.p. >= 1 - eps if s(1-s1) = Omega(log(n/eps)/(d2^2 m))",
        "Given the right top two answers, eq. (5) estimates every worker's reliability to within δ₂ from about "
        "log(n/ε)/δ₂² answers per worker.",
        {"lemma1_exact_tail": "as stated", "lemma1_bernstein": "proof steps", "mc_lemma1_sampler": "instances",
         "eq5_unbiased_and_variance": "proof steps", "eq5_variance_symbolic_m": "proof steps",
         "code_eq5_reliability": "proof steps"},
        found="the proof's two-sided Bernstein step lacks the factor 2 and its exponent is Theta(d2^2), not Theta(d2) "
              "(l. 1287); the bound is loose by more than 5x wherever it lies in [1e-3, 0.5]",
        short="holds; the proof's Bernstein step misses a factor 2, and the bound is more than 5× loose", uses=("Theorem 7",)),
    Statement(
        "Theorem 2", "thm:plugmin_mle", "plug-in MLE recovers all pairs given ||p_hat - p||, ||q_hat - q|| <= "
        "delta if s = Omega((log(1/rho) log(mK^2/eps) + log(m/eps))/(n Dbar))",
        "With reliabilities and confusions known to within δ, the plug-in MLE gets every task right from about "
        "log(1/ρ)·log(mK²/ε)/(n D̄) answers per worker.",
        {"theorem2_constants": "proof steps", "theorem2_aij_cont_factor2": "proof steps", "kl_divergences": "proof steps",
         "eq6_loglik_decomposition": "proof steps", "eq6_kl_symbolic_K": "proof steps",
         "code_eq6_plugin_mle": "proof steps", "code_kl_divergence": "proof steps", "mc_corollary2_log_K": "shape",
         "mc_theorem2_perturbed_plugin": "shape"},
        found="eqn:Aij_cont (l. 1426) lacks the two-sided factor 2 (false as printed at n=2, s=1/10); the constant 33 "
              "holds (eq. (1) forces rho <= 1/K <= 1/3, where 80/3 suffices; 33 holds for rho <= 43/91); l_i ranges "
              "over [-log(1/rho), log(1/rho)], not [0, log(1/rho)]; the K^2 of log(mK^2/eps) is loose: only the K - 2 "
              "pairs (g, c) bind (log K measured, K^2 rejected)",
        short="the proof misses a factor 2; its constant 33 holds because eq. (1) forces ρ ≤ 1/K; the K² is loose (log K measured)",
        uses=("Lemma 6", "Theorem 7"),
        untestable="the Omega constant is unspecified: the 1/(n Dbar) under the hypothesis (p_hat, q_hat within "
                   "delta) and the log K of log(mK^2/eps) are measured instead"),
    Statement(
        "Corollary 2", "cor:alg2", "Algorithm 2 recovers all pairs if s = Omega(log(m/eps)/(delta^2 ||p||^2) + "
        "log(m/eps)/(n Dbar))",
        "Algorithm 2 (Algorithm 1, then eq. (5), then the plug-in MLE) gets every task right once both terms "
        "are met.",
        {"minimax_optimality_gap": "proof steps", "code_default_estimators": "proof steps",
         "mc_corollary2_log_m": "shape", "mc_corollary2_log_K": "shape"},
        found="delta = rho Dbar/(4(6+Dbar)) always; 'delta^2 ||p||_2 >~ n Dbar' lacks a square and can never hold; "
              "minimax optimality only for constant rho, Dbar",
        short="the first term always dominates; minimax only for fixed ρ, D̄",
        uses=("Corollary 1", "Lemma 1", "Theorem 2"),
        untestable="the Omega constant is unspecified: the log m and log K are measured instead",
        elsewhere="toptwo.theory.minimax_sample_complexity (notebook 05)"),
    Statement(
        "Theorem 3", "thm:converse", "(a) minimax error of g >= ((K-1)/K) exp(-2 pbar n s); (b) average pair "
        "error >= 3/8 if s <= 1/(4 n Dbar)",
        "No method can do much better: (a) below about 1/p̄ answers per task the top answer is a guess; (b) below "
        "1/(4nD̄) the pairs are.",
        {"theorem3a_inequality": "as stated", "theorem3a_spammer_hammer": "as stated",
         "theorem3b_heterogeneous_q": "as stated", "theorem3a_rate_threshold": "proof steps",
         "theorem3b_arithmetic": "proof steps", "code_theory_bounds": "proof steps",
         "mc_majority_vote_rate": "shape"},
        found="(a) the condition is s <= s* = 0.79681..., not pbar <= 2/3; (b) Pinsker gives 1/2 - sqrt(2)/8, not 3/8, "
              "and (b) fails for heterogeneous q_j with Dbar = min_j",
        short="(a) holds when the sampling rate s ≤ s* = 0.7968, not under the printed p̄ ≤ 2/3; (b) needs the constant 1/2 − √2/8 from Pinsker (the printed 3/8 is wrong) and is false when the tasks' q differ (a certified counterexample)"),
    Statement(
        "Lemma 2", "lem:spnorm", "||E|| <= 4 sqrt(s max(m,n)) + c~ sqrt(log(n+m)), <= 5 sqrt(sm) for large m",
        "The noise matrix E = A⁽ᵏ⁾ − E[A⁽ᵏ⁾] has spectral norm at most about 4√(s·max(m, n)).",
        {"mc_lemma2_noise_norm": "instances"}, short="holds on every draw even with the unspecified constant c̃ set to 0; the constants are about 2× loose",
        uses=("Corollary 3",), extra=(_U,),
        untestable="c~ is unspecified (checked with c~ = 0, which implies every c~) and 5 sqrt(sm) needs "
                   "'sufficiently large m' (checked at m = 64 n)"),
    Statement(
        "Lemma 3", "lem:sin_uk_p", "sin theta(u^(k), p*) <= Theta(1/sqrt(sn))",
        "Algorithm 1's left singular vector is within an angle of order 1/√(sn) of the reliability direction.",
        {"mc_lemma3_sin_theta": "shape", "theorem5_wedin_instances": "proof steps"},
        short="1/√(sn) confirmed as a slope in s", uses=("Lemma 2", "Theorem 5"), extra=(_U,),
        untestable="Theta(.) hides the constant: the s^(-1/2) law is measured instead"),
    Statement(
        "Lemma 4", "lem:sin_uktilde_p", "||u~|| >= sqrt(1 - 50 sin^2), sin(u~, p*) <= 6 sqrt 2 sin(u, p*)",
        "Trimming the singular vector's large entries keeps it close to the reliability direction.",
        {"lemma4_trimming_instances": "instances", "code_algorithm1_population": "proof steps",
         "code_algorithm1_sparse_path": "proof steps"},
        found="holds on every instance; the constants are loose (largest sin ratio seen ~1)",
        short="holds on instances; loose constants"),
    Statement(
        "Lemma 5", "lem:entrywisebd_new", "|<Y_j, u~>/s - ||p|| r_j| < d1 ||p|| w.p. > 1 - eps if "
        "s >= Theta(log(1/eps)/(d1^2 ||p||^2))",
        "Each projected entry v_j⁽ᵏ⁾ is within δ₁‖p‖ of ‖p‖r_j⁽ᵏ⁾ once s ≳ log(1/ε)/(δ₁²‖p‖²).",
        {"mc_lemma5_delta1_scaling": "shape", "algorithm1_scaling": "proof steps"},
        found="v = Y^T u~/s estimates 2||p|| r (the factor 2 of check algorithm1_scaling); the delta_1^-2 law measured",
        short="δ₁⁻² law confirmed; v estimates 2‖p‖r (a factor 2)", uses=("Lemma 3", "Lemma 4", "Theorem 7"),
        extra=(_U,), untestable="Theta(.) hides the constant and the statement is for m -> oo: the s^(-1/2) law of "
                                "the error is measured instead"),
    Statement(
        "Lemma 6", "lem:second_si", "E[l_i^2] <= (2 log(1/rho)/(1-rho)) s KL",
        "The log-likelihood ratio's second moment is bounded by a multiple of the KL divergence.",
        {"lemma6_second_moment": "restricted"}),
    Statement(
        "Theorem 4", "lem:bd_spnorm", "P(||X|| >= 4 sqrt(nu) + t) <= (n+m) exp(-t^2/(c B^2))",
        "A random matrix with independent centred entries has spectral norm at most about 4√ν (Bandeira and "
        "van Handel).", {"mc_theorem4_corollary3_norm": "instances"}, short="holds on every draw (4√ν; ~1.9 seen)",
        extra=(_U,), untestable="the universal constant c of the tail is unspecified: the event ||X|| >= 4 sqrt(nu) "
                                "is checked never to occur"),
    Statement(
        "Corollary 3", "cor:spect_norm", "||X|| <= 4 sigma sqrt(max(m,n)) + c~ B sqrt(log(n+m)) w.p. 1 - (n+m)^-8",
        "The same bound with every entry's variance at most σ².", {"mc_theorem4_corollary3_norm": "instances"},
        short="holds on every draw even with the unspecified constant c̃ set to 0", uses=("Theorem 4",), extra=(_U,),
        untestable="c~ is unspecified (checked with c~ = 0, which implies every c~)"),
    Statement(
        "Theorem 5", "thm:WedinSin", "dist <= sqrt(2) ||E||/(sigma_r* - sigma_{r+1}* - ||E||)",
        "Wedin's sin Θ theorem: a perturbed matrix's singular vectors move by at most √2‖E‖ over the gap.",
        {"theorem5_wedin_instances": "instances"}),
    Statement(
        "Theorem 6", "(Hoeffding)", "P(|S - ES| > t) <= 2 exp(-2t^2/sum (b-a)^2)",
        "Hoeffding's inequality (stated; no proof of the paper uses it).",
        {"textbook_concentration_exact": "instances"}),
    Statement(
        "Theorem 7", "thm:Bernstein", "P(|S - ES| > t) <= 2 exp(-(t^2/2)/(sigma^2 + Ct/3))",
        "Bernstein's inequality.",
        {"textbook_concentration_exact": "instances", "lemma1_bernstein": "proof steps"}),
)


@functools.lru_cache(maxsize=None)
def check_record(name: str) -> CheckRecord | str:
    """Run check ``name`` once per process: its record, or the failure message."""
    try:
        return CHECKS[name]()
    except ClaimFailed as exc:
        return f"FAILED: {exc}"


@functools.lru_cache(maxsize=None)
def claim_mutant_killed(check: str, name: str) -> bool:
    """Run one claim mutant of :mod:`theory_checks.mutants` once per process: killed?"""
    from .mutants import MUTANTS, run_mutant

    mt = next(m for m in MUTANTS[check] if m.name == name)
    return run_mutant(mt)[0]


def _source_mutants(root: Path) -> dict[str, Any] | None:
    path = root / SOURCE_MUTANTS_JSON
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def counts(root: Path) -> dict[str, int]:
    """checks passed / total, claim mutants killed / total, source mutants killed (+ explained) / total."""
    from .mutants import MUTANTS

    recs = {n: check_record(n) for n in CHECKS}
    claim = [(c, m.name) for c, ms in MUTANTS.items() for m in ms]
    src = _source_mutants(root)
    return {
        "checks": len(recs), "passed": sum(isinstance(r, CheckRecord) for r in recs.values()),
        "claim_mutants": len(claim), "claim_killed": sum(claim_mutant_killed(c, n) for c, n in claim),
        "source_mutants": src["mutants"] if src else 0, "source_killed": src["killed"] if src else 0,
        "source_explained": src["explained_survivors"] if src else 0,
    }


def statement_status(st: Statement) -> tuple[str, list[str]]:
    """The strongest level among ``st``'s checks that pass in this run, and the checks that earn it."""
    passing = {c: lv for c, lv in st.checks.items() if isinstance(check_record(c), CheckRecord)}
    for level in LEVELS:
        earned = [c for c, lv in passing.items() if lv == level]
        if earned:
            return level, earned
    return "untouched", []


def _validate() -> None:
    named = {c for st in STATEMENTS for c in (*st.checks, *st.extra)}
    unknown = sorted(named - set(CHECKS))
    if unknown:
        raise ValueError(f"the status table names unregistered checks: {unknown}")
    bad = sorted({lv for st in STATEMENTS for lv in st.checks.values()} - set(LEVELS))
    if bad:
        raise ValueError(f"unknown levels {bad}; choose from {LEVELS}")
    numbers = [st.number for st in STATEMENTS]
    if len(STATEMENTS) != 18 or len(set(numbers)) != 18:
        raise ValueError(f"the paper has 18 numbered statements; the table has {len(set(numbers))}")
    missing = sorted({u for st in STATEMENTS for u in st.uses} - set(numbers))
    if missing:
        raise ValueError(f"dependencies on unknown statements: {missing}")
    for st in STATEMENTS:
        level, _ = statement_status(st)
        if level in ("untouched", "proof steps") and not st.untestable:
            raise ValueError(f"{st.number} is {level} but does not say why (Statement.untestable)")


def _esc(text: str) -> str:
    return text.replace("|", "\\|")


def _counts_block(c: dict[str, int]) -> str:
    src = (f"{c['source_killed']}/{c['source_mutants']} source mutants killed "
           f"({c['source_explained']} survivor{'s' if c['source_explained'] != 1 else ''} with a written reason)") if c["source_mutants"] else "no source-mutant run stored"
    return (f"- `python -m theory_checks`: **{c['passed']}/{c['checks']} checks passed**\n"
            f"- `python -m theory_checks --mutants`: **{c['claim_killed']}/{c['claim_mutants']} claim mutants killed**\n"
            f"- `python -m theory_checks.mutate` (stored run): **{src}**\n")


def _family_rate(with_long: bool = True) -> float:
    """Bonferroni bound on the family-wise false-alarm rate of the Monte-Carlo checks (FALSE_ALARM's leading
    numbers): all of them, or only those of the default run (without :data:`theory_checks.LONG_CHECKS`)."""
    from . import LONG_CHECKS

    return sum(float(v.split()[0]) for k, v in FALSE_ALARM.items() if with_long or k not in LONG_CHECKS)


def _finding(st: Statement, level: str, earned: list[str]) -> str:
    """The plain-words finding: the written one, else what the earning checks established."""
    if st.short:
        return st.short
    if level == "untouched":
        return f"not checked: {st.untestable}"
    names = ", ".join(f"`{c}`" for c in earned)
    return {"as stated": f"holds as stated ({names})", "restricted": f"holds in the form checked ({names})",
            "shape": f"its rate's shape is confirmed ({names})", "instances": f"holds on every instance ({names})",
            "proof steps": f"its proof steps check out ({names}); {st.untestable}"}[level]


# ---------------------------------------------------------------- the dependency graph
# A layered (Sugiyama) drawing, as graphviz ``dot`` makes one: (1) rows that keep edges short, (2) dummy nodes for
# the rows a long edge crosses, (3) an order in each row that removes crossings, (4) x-coordinates that keep edges
# short and long edges straight, (5) edges as smooth curves through their dummy nodes. Pure Python, deterministic:
# every tie is broken by name, so the drawing does not depend on the order of :data:`STATEMENTS`.

#: Box width and height, gap between two rows, least gap between boxes, between a box and a long edge and between
#: two long edges in a row, the legend's height and the canvas margin (pixels).
_BW, _BH, _GAP, _SEP_BOX, _SEP_LANE, _SEP_LANES, _LEGEND, _MARGIN = 112, 34, 58, 26, 18, 16, 30, 10
#: Weight of an edge piece in the x-placement: between two statements, a statement and a dummy, two dummies (dot's
#: 1, 2, 8: long edges pull hardest, so they run straight).
_WEIGHT = {0: 1.0, 1: 2.0, 2: 8.0}


def _edges() -> list[tuple[str, str]]:
    """(used, user) for every proof dependency, sorted."""
    return sorted((u, st.number) for st in STATEMENTS for u in st.uses)


def _layers() -> dict[str, int]:
    """Each statement's row (sources at row 0): longest path first, then promotion (Nikolov and Tarassov 2006):
    raise a statement one row, pushing the statements that use it up as needed, when that shortens the edges in
    total; repeated until no raise helps."""
    edges = _edges()
    names = sorted(st.number for st in STATEMENTS)
    users = {n: sorted(v for u, v in edges if u == n) for n in names}
    used = {n: sorted(u for u, v in edges if v == n) for n in names}

    @functools.lru_cache(maxsize=None)
    def depth(name: str) -> int:
        return 1 + max((depth(u) for u in used[name]), default=-1)

    layer = {n: depth(n) for n in names}

    def span() -> int:
        return sum(layer[v] - layer[u] for u, v in edges)

    def raise_(n: str) -> None:
        layer[n] += 1
        for v in users[n]:
            if layer[v] <= layer[n]:
                raise_(v)

    improved = True
    while improved:
        improved = False
        for n in names:
            if not (used[n] or users[n]):
                continue
            before, saved = span(), dict(layer)
            raise_(n)
            if span() < before:
                improved = True
            else:
                layer = saved
    low = min(layer.values())
    return {n: r - low for n, r in layer.items()}


def _is_dummy(n: str) -> bool:
    return n.startswith("~")


def _graph() -> tuple[dict[int, list[str]], dict[str, list[str]], dict[str, list[str]], list[tuple[str, str, list[str]]]]:
    """Rows (each in its initial order: statements by name, then dummies), each node's neighbours one row below
    and above, and the edges (used, user, dummies). An edge spanning several rows gets a dummy node "~u>v@r" in
    every row r it crosses."""
    layer = _layers()
    rows: dict[int, list[str]] = {r: [] for r in range(max(layer.values()) + 1)}
    for n in sorted(layer):
        rows[layer[n]].append(n)
    below: dict[str, list[str]] = {n: [] for n in layer}
    above: dict[str, list[str]] = {n: [] for n in layer}
    edges = []
    for u, v in _edges():
        chain = [u, *(f"~{u}>{v}@{r}" for r in range(layer[u] + 1, layer[v])), v]
        for r, d in enumerate(chain[1:-1], start=layer[u] + 1):
            rows[r].append(d)
            below[d], above[d] = [], []
        for a, b in zip(chain, chain[1:]):
            above[a].append(b)
            below[b].append(a)
        edges.append((u, v, chain[1:-1]))
    return rows, below, above, edges


def crossings(rows: dict[int, list[str]], above: dict[str, list[str]]) -> int:
    """Edge crossings of a layered order: pairs of edge pieces between two adjacent rows whose ends are in
    opposite orders (each long edge counted piece by piece, as dot counts them)."""
    total = 0
    for r in range(len(rows) - 1):
        upper = {n: i for i, n in enumerate(rows[r + 1])}
        pieces = [(i, upper[b]) for i, a in enumerate(rows[r]) for b in above[a]]
        total += sum((a1 - a2) * (b1 - b2) < 0 for k, (a1, b1) in enumerate(pieces) for a2, b2 in pieces[k + 1:])
    return total


def _ordered(rows: dict[int, list[str]], below: dict[str, list[str]], above: dict[str, list[str]]
             ) -> dict[int, list[str]]:
    """Crossing minimisation (as dot): 12 sweeps alternately up (each row by its neighbours below) and down, each
    row sorted by its nodes' barycentres (a node without neighbours on that side keeps its place), then adjacent
    swaps that remove crossings (transpose); the order with the fewest crossings seen is kept (the first on ties,
    so the result is never worse than the initial order). Statements that no proof uses and that use none go to
    the right end of their row."""
    rows = {r: list(ns) for r, ns in rows.items()}
    best, best_c = {r: list(ns) for r, ns in rows.items()}, crossings(rows, above)
    top = max(rows)

    def local(r: int) -> int:
        c = crossings({0: rows[r - 1], 1: rows[r]}, above) if r else 0
        if r < top:
            c += crossings({0: rows[r], 1: rows[r + 1]}, above)
        return c

    for sweep in range(12):
        up = sweep % 2 == 0
        for r in (range(1, top + 1) if up else range(top - 1, -1, -1)):
            side = below if up else above
            ref = {n: i for i, n in enumerate(rows[r - 1] if up else rows[r + 1])}
            here = {n: i for i, n in enumerate(rows[r])}
            rows[r].sort(key=lambda n: (sum(ref[m] for m in side[n]) / len(side[n]) if side[n] else here[n], here[n]))
        improved = True
        while improved:
            improved = False
            for r in range(top + 1):
                for i in range(len(rows[r]) - 1):
                    c = local(r)
                    rows[r][i], rows[r][i + 1] = rows[r][i + 1], rows[r][i]
                    if local(r) < c:
                        improved = True
                    else:
                        rows[r][i], rows[r][i + 1] = rows[r][i + 1], rows[r][i]
        c = crossings(rows, above)
        if c < best_c:
            best, best_c = {r: list(ns) for r, ns in rows.items()}, c
    for r in best:
        best[r].sort(key=lambda n: not (below[n] or above[n]))
    return best


def _pava(target: list[float], weight: list[float]) -> list[float]:
    """The nondecreasing y minimising sum weight_i (y_i - target_i)^2 (pool-adjacent-violators, exact)."""
    blocks: list[list[float]] = []  # [weighted sum, weight, count]
    for t, w in zip(target, weight):
        blocks.append([t * w, w, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            s, w2, k = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += w2
            blocks[-1][2] += k
    return [b[0] / b[1] for b in blocks for _ in range(int(b[2]))]


def _sep(a: str, b: str) -> float:
    """Least distance between the centres of two neighbours in a row (pixels)."""
    return {0: _BW + _SEP_BOX, 1: _BW / 2 + _SEP_LANE, 2: _SEP_LANES}[_is_dummy(a) + _is_dummy(b)]


def _straighten(rows: dict[int, list[str]], edges: list[tuple[str, str, list[str]]], x: dict[str, float]) -> None:
    """Put each long edge's dummies on one vertical (their mean) where the least gaps allow it."""
    rank = {n: r for r in rows for n in rows[r]}
    for _u, _v, dummies in edges:
        if not dummies:
            continue
        c = sum(x[d] for d in dummies) / len(dummies)

        def fits(d: str) -> bool:
            row = rows[rank[d]]
            i = row.index(d)
            return ((i == 0 or c - x[row[i - 1]] >= _sep(row[i - 1], d) - 1e-9)
                    and (i == len(row) - 1 or x[row[i + 1]] - c >= _sep(d, row[i + 1]) - 1e-9))

        if all(fits(d) for d in dummies):
            x.update({d: c for d in dummies})


def _x_coordinates(rows: dict[int, list[str]], below: dict[str, list[str]], above: dict[str, list[str]],
                   edges: list[tuple[str, str, list[str]]]) -> dict[str, float]:
    """Centres minimising sum w (x_a - x_b)^2 over the edge pieces (:data:`_WEIGHT`) with each row's order and
    least gaps (:func:`_sep`) kept: 60 sweeps of exact per-row minimisation (:func:`_pava`), a convex problem;
    then each long edge's dummies on one vertical where the gaps allow. Isolated statements one box apart at the
    right end of their row."""
    def w(a: str, b: str) -> float:
        return _WEIGHT[_is_dummy(a) + _is_dummy(b)]

    def linked(r: int) -> list[str]:
        return [n for n in rows[r] if below[n] or above[n]]

    x: dict[str, float] = {}
    for r in rows:
        acc = 0.0
        for i, n in enumerate(linked(r)):
            acc += _sep(linked(r)[i - 1], n) if i else 0.0
            x[n] = acc
    top = max(rows)
    for sweep in range(60):
        for r in (range(top + 1) if sweep % 2 == 0 else range(top, -1, -1)):
            names = linked(r)
            if not names:
                continue
            offset = [0.0]
            for a, b in zip(names, names[1:]):
                offset.append(offset[-1] + _sep(a, b))
            weight = [sum(w(n, m) for m in below[n] + above[n]) for n in names]
            target = [sum(w(n, m) * x[m] for m in below[n] + above[n]) / wt - off
                      for n, wt, off in zip(names, weight, offset)]
            x.update({n: y + off for n, y, off in zip(names, _pava(target, weight), offset)})
    _straighten({r: linked(r) for r in rows}, edges, x)
    for r in rows:
        last = max((x[n] for n in linked(r)), default=-_BW - _SEP_BOX)
        for n in rows[r]:
            if n not in x:
                last += _BW + _SEP_BOX
                x[n] = last
    return x


def _layout() -> tuple[dict[int, list[str]], dict[str, float], list[tuple[str, str, list[str]]]]:
    """The rows in their final order, every node's centre x and the edges (used, user, dummies)."""
    rows, below, above, edges = _graph()
    rows = _ordered(rows, below, above)
    return rows, _x_coordinates(rows, below, above, edges), edges


Point = tuple[float, float]
Cubic = tuple[Point, Point, Point, Point]


def graph_geometry() -> tuple[dict[str, tuple[float, float, float, float]], list[tuple[str, str, list[Cubic]]],
                              tuple[int, int]]:
    """The drawn graph: each statement's box (x0, y0, x1, y1), each edge (used, user, cubic Bezier pieces) and the
    canvas size.

    An edge leaves the top of the used statement's box at a port of its own (ports ordered by where the edges
    go), crosses each gap between two rows as an S-curve (vertical at both ends, so the pieces join smoothly),
    runs up through each row it crosses as a vertical line at its dummy node (which keeps clear of the boxes) and
    enters the bottom of the user's box at a port of its own. A gap holds no box and an S-curve stays within its
    gap, so no edge passes through a box other than its two ends (``tests/test_theory_status.py`` samples every
    curve against every other box)."""
    rows, x, edges = _layout()
    top = max(rows)
    left = min(x[n] for ns in rows.values() for n in ns) - _BW / 2
    shift = _MARGIN - left
    width = int(max(x[n] for ns in rows.values() for n in ns) + _BW / 2 + shift + _MARGIN + 0.5)
    width = max(width, 620)  # the legend's width
    height = int(_MARGIN + _LEGEND + (top + 1) * _BH + top * _GAP + _MARGIN)

    def cx(n: str) -> float:
        return round(x[n] + shift, 1)

    def y_top(r: int) -> float:
        return float(_MARGIN + _LEGEND + (top - r) * (_BH + _GAP))

    rank = {n: r for r in rows for n in rows[r]}
    rects = {n: (cx(n) - _BW / 2, y_top(rank[n]), cx(n) + _BW / 2, y_top(rank[n]) + _BH)
             for ns in rows.values() for n in ns if not _is_dummy(n)}

    def ports(name: str, ends: list[tuple[int, float]]) -> dict[int, float]:
        ends = sorted(ends, key=lambda t: (t[1], t[0]))
        k = len(ends)
        step = min(20.0, (_BW - 24) / max(k - 1, 1))
        return {i: round(cx(name) + (j - (k - 1) / 2) * step, 1) for j, (i, _) in enumerate(ends)}

    out_port: dict[int, float] = {}
    in_port: dict[int, float] = {}
    for n in rects:
        out_port.update(ports(n, [(i, cx((*d, v)[0])) for i, (u, v, d) in enumerate(edges) if u == n]))
        in_port.update(ports(n, [(i, cx((u, *d)[-1])) for i, (u, v, d) in enumerate(edges) if v == n]))
    drawn = []
    for i, (u, v, dummies) in enumerate(edges):
        # waypoints bottom to top: the used box's top, each dummy's row bottom and top, the user box's bottom
        pts = [(out_port[i], y_top(rank[u]))]
        for d in dummies:
            pts += [(cx(d), y_top(rank[d]) + _BH), (cx(d), y_top(rank[d]))]
        pts.append((in_port[i], y_top(rank[v]) + _BH))
        pieces: list[Cubic] = []
        for k, (a, b) in enumerate(zip(pts, pts[1:])):
            if k % 2 == 0:  # across a gap: an S-curve
                ym = (a[1] + b[1]) / 2
                pieces.append((a, (a[0], ym), (b[0], ym), b))
            else:  # up through a row, at the dummy
                pieces.append((a, (a[0], (2 * a[1] + b[1]) / 3), (b[0], (a[1] + 2 * b[1]) / 3), b))
        drawn.append((u, v, pieces))
    return rects, drawn, (width, height)


def _path(pieces: list[Cubic]) -> str:
    def f(p: Point) -> str:
        return f"{p[0]:g},{p[1]:g}"

    out = [f"M{f(pieces[0][0])}"]
    for p0, p1, p2, p3 in pieces:
        out.append(f"V{p3[1]:g}" if p0[0] == p3[0] == p1[0] == p2[0] else f"C{f(p1)} {f(p2)} {f(p3)}")
    return "".join(out)


def dependency_svg() -> str:
    """The statements' dependency graph as SVG: an arrow from each statement to the ones whose proofs use it
    (:func:`graph_geometry`), each node filled by its status (:data:`COLORS`)."""
    rects, edges, (width, height) = graph_geometry()
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
           f'height="{height}" font-family="sans-serif" font-size="12" role="img" '
           'aria-label="Dependency graph of the 18 numbered statements, coloured by how each is checked">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>']
    lx = 10
    for level in (*LEVELS, "untouched"):
        out.append(f'<rect x="{lx}" y="6" width="14" height="14" fill="{COLORS[level]}" stroke="#333"/>'
                   f'<text x="{lx + 18}" y="17">{level}</text>')
        lx += 24 + 7 * len(level) + 14
    for u, v, pieces in edges:
        out.append(f'<path d="{_path(pieces)}" fill="none" stroke="#555" stroke-width="1.2" '
                   f'marker-end="url(#arrow)"><title>{u} is used by {v}</title></path>')
    for st in STATEMENTS:
        x0, y0, x1, y1 = rects[st.number]
        level, _ = statement_status(st)
        colour = "#ffffff" if level in _DARK else "#111111"
        out.append(f'<g><title>{st.number}: {level}</title><rect x="{x0:g}" y="{y0:g}" width="{_BW}" height="{_BH}" '
                   f'rx="6" fill="{COLORS[level]}" stroke="#333"/><text x="{(x0 + x1) / 2:g}" y="{(y0 + y1) / 2 + 4:g}" '
                   f'text-anchor="middle" fill="{colour}">{st.number}</text></g>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- the page
def _anchor(number: str) -> str:
    return number.lower().replace(" ", "-")


def status_page(root: Path) -> str:
    """The Markdown of ``docs/theory_status.md`` (the graph: :func:`dependency_svg`)."""
    _validate()
    c = counts(root)
    status = {st.number: statement_status(st) for st in STATEMENTS}
    tally = {lv: [n for n, (lv2, _) in status.items() if lv2 == lv] for lv in (*LEVELS, "untouched")}
    out = ["# Theory status", "",
           "The paper states 18 numbered results. This page says, for each, how the package checks it and what it "
           "found. Arrows run from a result to the results whose proofs use it; the colour says how strongly the "
           "result is checked (a colour is earned by checks that pass, never assumed).", "",
           "![Dependency graph of the 18 numbered statements, coloured by how each is checked]"
           "(_generated/theory_graph.svg)", ""]
    for lv in (*LEVELS, "untouched"):
        if tally[lv]:
            out.append(f"- **{lv}** ({len(tally[lv])}): {', '.join(tally[lv])}. *{LEVEL_MEANING[lv]}.*")
    out += ["", "## The 18 statements in plain words", ""]
    for st in STATEMENTS:
        level, earned = status[st.number]
        out.append(f"- **{st.number}** ({level}). {st.plain} *Found:* {_finding(st, level, earned)}.")
    out += ["", "## For maintainers", "",
            "Generated by `python -m theory_checks --status-page docs/theory_status.md --readme-table README.md` "
            "from the registered checks (`tests/test_theory_status.py` fails when "
            "this page, the graph or the README table differs from a fresh run). *Symbolic* checks are exact SymPy "
            "identities; *code* checks (`code_*`) evaluate `toptwo`'s functions at exact rational points against the "
            "same expressions; *instances* are deterministic inequalities on fixed seeded inputs; *Monte Carlo* "
            "checks (`mc_*`) state their false-alarm rate. A statement's level is the strongest level among its "
            "passing checks.", "", "### Counts", "", _counts_block(c),
            f"Family-wise false-alarm rate of the Monte-Carlo checks: <= {_family_rate(False):.1e} for `python -m "
            f"theory_checks`, <= {_family_rate():.1e} with its `--long` checks (Bonferroni: the sum of the rates listed "
            "per check below, each derived from its estimator's sampling distribution at the sizes used).", "",
            "### Each statement: checks, levels, findings", ""]
    for st in STATEMENTS:
        level, _ = status[st.number]
        parts = []
        for n, lv in st.checks.items():
            rec = check_record(n)
            ok = "" if isinstance(rec, CheckRecord) else " **FAILS**"
            rate = f", false-alarm rate {FALSE_ALARM[n]}" if n in FALSE_ALARM else ""
            parts.append(f"`{n}` ({lv}{rate}){ok}")
        out.append(f"- **{st.number}** [`{st.label}`], {level}: {_esc(st.claim)}.")
        out.append(f"  Checks: {'; '.join(parts) if parts else 'none'}.")
        if st.found:
            out.append(f"  Found: {_esc(st.found)}.")
        if st.untestable:
            out.append(f"  Not tested as stated: {_esc(st.untestable)}"
                       + (f" (`{', '.join(st.extra)}`)." if st.extra else "."))
        if st.uses:
            out.append(f"  Its proof uses: {', '.join(st.uses)}.")
        if st.elsewhere:
            out.append(f"  Illustrated outside theory_checks (no verdict): {_esc(st.elsewhere)}.")
    out += ["", "### Findings (the checks' notes)", ""]
    for n in CHECKS:
        rec = check_record(n)
        if isinstance(rec, CheckRecord) and rec.note:
            out.append(f"- **`{n}`** ({_esc(rec.reference)}): {rec.note}")
    out += ["", "### Every check", ""]
    for n in CHECKS:
        rec = check_record(n)
        if isinstance(rec, CheckRecord):
            out.append(f"- `{n}` ({_esc(rec.reference)}): {_esc(rec.method)}. Scope: {_esc(rec.scope)}.")
        else:
            out.append(f"- `{n}`: {_esc(rec)}")
    src = _source_mutants(root)
    out += ["", "### Source mutants", "",
            "`python -m theory_checks.mutate` changes one formula of `toptwo`'s source in a temporary copy and runs "
            "the layers in order: the code checks of `theory_checks` (*symbolic*), a fast test subset (*tests*) and, "
            "with `--notebooks`, the lessons that call the changed code; a mutant stops at the first layer that "
            "kills it. CI runs `--fast` (a subset, symbolic layer). Survivors carry a written reason. The stored "
            "table comes from `python -m theory_checks.mutate --notebooks --write docs/_generated/source_mutants.json` "
            "(every mutant, first killing layer); `-` marks a layer that was not run for that mutant.", ""]
    if src:
        from .mutate import format_table

        out += [format_table(src["rows"], src["layers"])]
    else:
        out += ["(no stored run)"]
    return "\n".join(out) + "\n"


def _checked_by(st: Statement) -> str:
    kinds = []
    names = list(st.checks)
    if any(not n.startswith(("code_", "mc_")) for n in names):
        kinds.append("symbolic/exact")
    if any(n.startswith("code_") for n in names):
        kinds.append("code")
    mc = [n for n in names if n.startswith("mc_")]
    if mc:
        kinds.append("MC " + ", ".join(f"`{n}`" for n in mc))
    return "; ".join(kinds) or "-"


def readme_table(root: Path) -> str:
    """The short Markdown table for the README (same source as the status page)."""
    _validate()
    c = counts(root)
    lines = ["| statement | status | checked by | finding |", "|---|---|---|---|"]
    for st in STATEMENTS:
        level, earned = statement_status(st)
        lines.append(f"| {st.number} | {level} | {_esc(_checked_by(st))} | {_esc(_finding(st, level, earned))} |")
    return ("<!-- generated by python -m theory_checks --readme-table; do not edit -->\n" + "\n".join(lines)
            + "\n\n" + _counts_block(c))


def sync_readme(path: Path, table: str) -> bool:
    """Put ``table`` (without its comment line) between the theory-table markers of ``path`` (the README);
    True if it changed."""
    readme = path.read_text(encoding="utf-8")
    start = readme.index("<!-- theory-table")
    start = readme.index("\n", start) + 1
    end = readme.index("<!-- /theory-table -->")
    body = "\n".join(ln for ln in table.strip().splitlines() if not ln.startswith("<!--")) + "\n"
    new = readme[:start] + body + readme[end:]
    if new != readme:
        path.write_text(new, encoding="utf-8")
    return new != readme
