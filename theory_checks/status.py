"""The theory status page: every numbered statement of the paper, how it is checked, what was found.

Generated from the checks themselves (``python -m theory_checks --status-page docs/theory_status.md
--readme-table docs/_generated/theory_table.md``): the statements' rows name registered checks (an
unknown name is an error), each check is run, its notes are the findings, and the counts come
from the same run, the claim mutants (:mod:`theory_checks.mutants`) and the stored source-mutant
table (``docs/_generated/source_mutants.json``, written by ``python -m theory_checks.mutate
--write``). ``tests/test_theory_status.py`` regenerates both files and compares them with the
committed ones, so the page cannot go stale.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._core import CHECKS, CheckRecord, ClaimFailed

__all__ = ["Statement", "STATEMENTS", "FALSE_ALARM", "SOURCE_MUTANTS_JSON", "status_page", "readme_table",
           "check_record", "claim_mutant_killed", "counts"]

#: Where ``python -m theory_checks.mutate --write`` stores the source-mutant table (relative to the repo).
SOURCE_MUTANTS_JSON = "docs/_generated/source_mutants.json"

#: False-alarm rate of each randomised check (every other check is exact or runs on fixed seeded
#: instances, so its verdict is deterministic).
FALSE_ALARM = {
    "mc_lemma1_sampler": "6e-3 family-wise (6 exact binomial tests at 1e-3, Bonferroni); a slow test runs 20 more seeds",
    "mc_theorem1_gap_exponent": "5e-4 (exponent outside 2 +- (1/2 + z_(1-5e-4) se), nominal: delta-method se); a slow test runs 8 more seeds",
    "mc_corollary1_log_m": "5e-4 (kappa outside 1 +- (1/2 + z_(1-5e-4) se), nominal: delta-method se); a slow test runs 8 more seeds",
    "mc_corollary2_log_m": "5e-4 (kappa outside 1 +- (1/2 + z_(1-5e-4) se), nominal: delta-method se); a slow test runs 8 more seeds",
    "mc_corollary1_log_K": "5e-4 (kappa outside 1 +- (1/2 + z_(1-5e-4) se), nominal: delta-method se); a slow test runs 6 more seeds",
    "mc_corollary2_log_K": "5e-4 (kappa outside 1 +- (1/2 + z_(1-5e-4) se), nominal: delta-method se); a slow test runs 6 more seeds",
    "mc_majority_vote_rate": "5e-4 (exponent outside 2 +- (1/2 + z_(1-5e-4) se), nominal: delta-method se); a slow test runs 8 more seeds",
}


@dataclass(frozen=True)
class Statement:
    """One numbered statement of the paper and how the package checks it."""

    number: str            #: "Theorem 1"
    label: str             #: LaTeX label
    claim: str             #: the statement in a few words
    how: str               #: symbolic / exact / Monte Carlo / instances / shown untestable (combinations)
    checks: tuple[str, ...]  #: registered check names
    found: str             #: what the package found wrong or imprecise ("" if it holds as stated)
    elsewhere: str = ""    #: Monte-Carlo shape checks outside theory_checks (no stated false-alarm rate)


STATEMENTS: tuple[Statement, ...] = (
    Statement("Proposition 1", "prop:binary", "E[A^(k)] - s(K-2k)/K 1 = 2 s p (r^(k))^T, Cases I/II",
              "symbolic (K, k symbolic; exhaustive K=3..8) + code at exact points",
              ("eq1_distribution", "proposition1_exhaustive", "proposition1_symbolic_K", "rank1_population",
               "eq2_delta_r_and_ordering", "code_eq1_answer_distribution", "code_prop1_binary_and_r"),
              "holds as stated; at q_j = 1, h_j ties with every other label (eq. (2))"),
    Statement("Remark 1", "(top-T, App. subsec:top_T)", "the rank-1 structure and Algorithm 1 extend to top-T",
              "symbolic + code at exact points",
              ("top_t_distribution", "top_t_delta_r_and_algorithm", "code_top_t_model"),
              "eqn:topk_dist is not a distribution unless sum q = 1; Delta r = 1/K for non-top labels only then; "
              "with leftover mass p is not identifiable"),
    Statement("Theorem 1", "thm:main", "(g_hat, h_hat) = (g, h) and |q_hat - q| < d1 w.p. >= 1 - eps if "
              "s s1 = Omega(log(K/eps)/(d1^2 ||p||^2))",
              "symbolic (deterministic step, every K and pair) + code (population and sparse path) + Monte Carlo "
              "through Algorithm 1 as printed: the rate's gap(q)^2 (exponent 2 accepted, 1 rejected) and the log K "
              "(union over labels, K = 3, 5, 9); the probability statement has an unspecified Omega constant",
              ("theorem1_delta1_gap", "theorem1_ordering_every_K", "algorithm1_population", "algorithm1_scaling",
               "code_algorithm1_population", "code_algorithm1_sparse_path", "mc_theorem1_gap_exponent",
               "mc_corollary1_log_K"),
              "needs d1 < min(2q-1, 1-q)/4 (tight), so the rate hides 16/gap(q)^2; Sec. 4.1's E[X] lacks a factor 2 "
              "(step 3 as printed estimates 2||p||)",
              "toptwo.theory.theorem1_decay (notebook 05): exponential decay in s||p||^2 gap(q)^2, shape only"),
    Statement("Corollary 1", "cor:exact_alg1", "all pairs and ||q_hat - q||_inf < d1 w.p. >= 1 - eps if "
              "s s1 = Omega(log(mK/eps)/(d1^2 ||p||^2))",
              "union bound over Theorem 1's deterministic step (symbolic); Omega constant: untestable as stated; "
              "the log m and the log K of log(mK/eps) by Monte Carlo through Algorithm 1 as printed (per-k left "
              "vectors; K = 3, 5, 9 at matched per-competitor information)",
              ("theorem1_ordering_every_K", "theorem4_unspecified_constant", "mc_corollary1_log_m",
               "mc_corollary1_log_K"),
              "inherits Theorem 1's hidden 16/gap(q)^2; log m and log K both measured (kappa ~ 1 and ~ 0.7: the K - 2 "
              "label comparisons of a task are positively correlated, so the union bound over labels is approached "
              "from below)",
              "toptwo.theory.every_task_recovery (notebook 05): log m shift, shape only"),
    Statement("Lemma 1", "lem:rec_p", "||p_hat - p||_inf < d2 w.p. >= 1 - eps if s(1-s1) = Omega(log(n/eps)/(d2^2 m))",
              "symbolic (proof arithmetic) + exact binomial probability + Monte Carlo through the sampler + code",
              ("lemma1_bernstein", "lemma1_exact_tail", "mc_lemma1_sampler", "eq5_unbiased_and_variance",
               "eq5_variance_symbolic_m", "code_eq5_reliability"),
              "the proof's two-sided Bernstein step lacks the factor 2 and its exponent is Theta(d2^2), not Theta(d2) "
              "(l. 1287); the bound is loose by more than 5x wherever it lies in [1e-3, 0.5]"),
    Statement("Theorem 2", "thm:plugmin_mle", "plug-in MLE recovers all pairs given ||p_hat - p||, ||q_hat - q|| <= "
              "delta if s = Omega((log(1/rho) log(mK^2/eps) + log(m/eps))/(n Dbar))",
              "symbolic (proof constants, KL forms, eq. (6)) + exact counterexample + code; Omega: untestable as "
              "stated; the K of log(mK^2/eps) by Monte Carlo through Algorithm 2 as printed (K = 3, 5, 9)",
              ("theorem2_constants", "theorem2_aij_cont_factor2", "kl_divergences", "eq6_loglik_decomposition",
               "code_eq6_plugin_mle", "code_kl_divergence", "lemma6_second_moment", "mc_corollary2_log_K"),
              "eqn:Aij_cont (l. 1426) lacks the two-sided factor 2 (false as printed at n=2, s=1/10); the constant 33 "
              "should be 104/3; l_i ranges over [-log(1/rho), log(1/rho)], not [0, log(1/rho)]; the K^2 of "
              "log(mK^2/eps) is loose: only the K - 2 pairs (g, c) bind (log K measured, K^2 rejected)"),
    Statement("Corollary 2", "cor:alg2", "Algorithm 2 recovers all pairs if s = Omega(log(m/eps)/(delta^2 ||p||^2) + "
              "log(m/eps)/(n Dbar))",
              "symbolic computed argument: the first term dominates at every feasible size; the log m and the log K "
              "(Theorem 2's log(mK^2/eps)) of the every-task event by Monte Carlo through Algorithm 2 as printed",
              ("minimax_optimality_gap", "theorem4_unspecified_constant", "mc_corollary2_log_m", "mc_corollary2_log_K"),
              "delta = rho Dbar/(4(6+Dbar)) always; 'delta^2 ||p||_2 >~ n Dbar' lacks a square and can never hold; "
              "minimax optimality only for constant rho, Dbar",
              "toptwo.theory.minimax_sample_complexity (notebook 05): shape only"),
    Statement("Theorem 3", "thm:converse", "(a) minimax error of g >= ((K-1)/K) exp(-2 pbar n s); (b) average pair "
              "error >= 3/8 if s <= 1/(4 n Dbar)",
              "symbolic + exact enumeration + certified counterexample + code; Sec. 5's majority-vote "
              "Theta((mean p)^-2) (both sides) by Monte Carlo through MajorityVote",
              ("theorem3a_inequality", "theorem3a_spammer_hammer", "theorem3a_rate_threshold", "theorem3b_arithmetic",
               "theorem3b_heterogeneous_q", "majority_vote_vs_spectral", "mc_majority_vote_rate", "code_theory_bounds",
               "code_kl_divergence"),
              "(a) the condition is s <= s* = 0.79681..., not pbar <= 2/3; (b) Pinsker gives 1/2 - sqrt(2)/8, not 3/8, "
              "and (b) fails for heterogeneous q_j with Dbar = min_j"),
    Statement("Lemma 2", "lem:spnorm", "||E|| <= 4 sqrt(s max(m,n)) + c~ sqrt(log(n+m)), <= 5 sqrt(sm) for large m",
              "shown untestable as stated (unspecified c~, 'sufficiently large m')",
              ("theorem4_unspecified_constant",), ""),
    Statement("Lemma 3", "lem:sin_uk_p", "sin theta(u^(k), p*) <= Theta(1/sqrt(sn))",
              "shown untestable as stated (Theta); its Wedin step checked on instances",
              ("theorem4_unspecified_constant", "theorem5_wedin_instances"), ""),
    Statement("Lemma 4", "lem:sin_uktilde_p", "||u~|| >= sqrt(1 - 50 sin^2), sin(u~, p*) <= 6 sqrt 2 sin(u, p*)",
              "instances with trimming binding (deterministic inequality, seeded) + trimming in the code",
              ("lemma4_trimming_instances", "code_algorithm1_population", "code_algorithm1_sparse_path"),
              "holds on every instance; the constants are loose (largest sin ratio seen ~1)"),
    Statement("Lemma 5", "lem:entrywisebd_new", "|<Y_j, u~>/s - ||p|| r_j| < d1 ||p|| w.p. > 1 - eps if "
              "s >= Theta(log(1/eps)/(d1^2 ||p||^2))",
              "shown untestable as stated (Theta, m -> oo)", ("theorem4_unspecified_constant", "algorithm1_scaling"),
              "v = Y^T u~/s estimates 2||p|| r (the factor 2 of check algorithm1_scaling)"),
    Statement("Lemma 6", "lem:second_si", "E[l_i^2] <= (2 log(1/rho)/(1-rho)) s KL",
              "finite inequality on a grid of eq. (1)'s distributions and random pairs (40 digits)",
              ("lemma6_second_moment",), ""),
    Statement("Theorem 4", "lem:bd_spnorm", "P(||X|| >= 4 sqrt(nu) + t) <= (n+m) exp(-t^2/(c B^2))",
              "shown untestable as stated (unspecified universal constant c)", ("theorem4_unspecified_constant",), ""),
    Statement("Corollary 3", "cor:spect_norm", "||X|| <= 4 sigma sqrt(max(m,n)) + c~ B sqrt(log(n+m)) w.p. "
              "1 - (n+m)^-8", "shown untestable as stated (unspecified c~)", ("theorem4_unspecified_constant",), ""),
    Statement("Theorem 5", "thm:WedinSin", "dist <= sqrt(2) ||E||/(sigma_r* - sigma_{r+1}* - ||E||)",
              "instances (rank 1 + noise, seeded)", ("theorem5_wedin_instances",), ""),
    Statement("Theorem 6", "(Hoeffding)", "P(|S - ES| > t) <= 2 exp(-2t^2/sum (b-a)^2)",
              "exact binomial instances; a wrong constant is rejected", ("textbook_concentration_exact",), ""),
    Statement("Theorem 7", "thm:Bernstein", "P(|S - ES| > t) <= 2 exp(-(t^2/2)/(sigma^2 + Ct/3))",
              "exact binomial instances; a wrong constant is rejected",
              ("textbook_concentration_exact", "lemma1_bernstein"), ""),
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


def _validate() -> None:
    unknown = sorted({c for st in STATEMENTS for c in st.checks} - set(CHECKS))
    if unknown:
        raise ValueError(f"the status table names unregistered checks: {unknown}")
    if set(SHORT) != {st.number for st in STATEMENTS}:
        raise ValueError("SHORT must have one entry per statement")
    if len(STATEMENTS) != 18:
        raise ValueError(f"the paper has 18 numbered statements; the table has {len(STATEMENTS)}")


def _esc(text: str) -> str:
    return text.replace("|", "\\|")


def _counts_block(c: dict[str, int]) -> str:
    src = (f"{c['source_killed']}/{c['source_mutants']} source mutants killed "
           f"({c['source_explained']} survivors with a written reason)") if c["source_mutants"] else "no source-mutant run stored"
    return (f"- `python -m theory_checks`: **{c['passed']}/{c['checks']} checks passed**\n"
            f"- `python -m theory_checks --mutants`: **{c['claim_killed']}/{c['claim_mutants']} claim mutants killed**\n"
            f"- `python -m theory_checks.mutate` (stored run): **{src}**\n")


def _family_rate() -> float:
    """Bonferroni bound on the family-wise false-alarm rate of the Monte-Carlo checks (FALSE_ALARM's leading numbers)."""
    return sum(float(v.split()[0]) for v in FALSE_ALARM.values())


def status_page(root: Path) -> str:
    """The Markdown of ``docs/theory_status.md``."""
    _validate()
    c = counts(root)
    out = ["# Theory status", "",
           "Every numbered statement of Jeong & Chung (ICML 2023), how the package checks it and what it found. "
           "Generated by `python -m theory_checks --status-page docs/theory_status.md` from the registered checks "
           "(`tests/test_theory_status.py` fails when this page differs from a fresh run). *Symbolic* checks are "
           "exact SymPy identities; *code* checks (`code_*`) evaluate `toptwo`'s functions at exact rational points "
           "against the same expressions; *instances* are deterministic inequalities on fixed seeded inputs; "
           "*Monte Carlo* checks state their false-alarm rate; the family of Monte-Carlo checks run by "
           "`python -m theory_checks` has a family-wise false-alarm rate <= "
           f"{_family_rate():.0e} (Bonferroni: the sum of the rates below). A statement with an unspecified constant "
           "(Omega, Theta, 'some universal c') is *shown untestable as stated* by check `theorem4_unspecified_constant`.",
           "", "## Counts", "", _counts_block(c), "## The 18 numbered statements", "",
           "| statement | claim | how it is checked | checks | false-alarm rate | what the package found |",
           "|---|---|---|---|---|---|"]
    for st in STATEMENTS:
        names = []
        for n in st.checks:
            rec = check_record(n)
            names.append(f"`{n}`" + ("" if isinstance(rec, CheckRecord) else " (FAILS)"))
        rates = [f"`{n}`: {FALSE_ALARM[n]}" for n in st.checks if n in FALSE_ALARM]
        rate = "; ".join(rates) if rates else "0 (deterministic)"
        how = st.how + (f"; outside theory_checks: {st.elsewhere}" if st.elsewhere else "")
        out.append(f"| {st.number} [`{st.label}`] | {_esc(st.claim)} | {_esc(how)} | {', '.join(names)} | "
                   f"{_esc(rate)} | {_esc(st.found) or 'holds as checked'} |")
    out += ["", "## Findings (the checks' notes)", ""]
    for n in CHECKS:
        rec = check_record(n)
        if isinstance(rec, CheckRecord) and rec.note:
            out.append(f"- **`{n}`** ({_esc(rec.reference)}): {rec.note}")
    out += ["", "## Every check", "", "| check | reference | method | scope |", "|---|---|---|---|"]
    for n in CHECKS:
        rec = check_record(n)
        if isinstance(rec, CheckRecord):
            out.append(f"| `{n}` | {_esc(rec.reference)} | {_esc(rec.method)} | {_esc(rec.scope)} |")
        else:
            out.append(f"| `{n}` | {_esc(rec)} | | |")
    src = _source_mutants(root)
    out += ["", "## Source mutants", "",
            "`python -m theory_checks.mutate` changes one formula of `toptwo`'s source in a temporary copy and runs "
            "the layers in order: the code checks of `theory_checks` (*symbolic*), a fast test subset (*tests*) and, "
            "with `--notebooks`, the lessons that call the changed code; a mutant stops at the first layer that "
            "kills it. CI runs `--fast` (a subset, symbolic layer). Survivors carry a written reason. The stored "
            "table comes from `python -m theory_checks.mutate --notebooks --write docs/_generated/source_mutants.json` "
            "(every mutant, first killing layer), with the tests layer then run on a subset of mutants that the "
            "symbolic layer kills (`--layers tests --all-layers --merge docs/_generated/source_mutants.json --only ...`); "
            "`-` marks a layer that was not run for that mutant.", ""]
    if src:
        from .mutate import format_table

        out += [format_table(src["rows"], src["layers"])]
    else:
        out += ["(no stored run)"]
    return "\n".join(out) + "\n"


#: The README's short columns (how checked, main finding) per statement.
SHORT = {
    "Proposition 1": ("symbolic, code", "holds"),
    "Remark 1": ("symbolic, code", "printed top-T model is not a distribution"),
    "Theorem 1": ("symbolic step (every K), code", "needs d1 < gap(q)/4: rate hides 16/gap(q)^2"),
    "Corollary 1": ("symbolic step; Omega untestable", "as Theorem 1"),
    "Lemma 1": ("symbolic, exact, Monte Carlo, code", "missing factor 2; bound loose > 5x"),
    "Theorem 2": ("symbolic, exact, code", "eqn:Aij_cont missing factor 2; 33 -> 104/3"),
    "Corollary 2": ("symbolic argument", "first term dominates; minimax only for fixed rho, Dbar"),
    "Theorem 3": ("symbolic, exact, certified counterexample, code", "(a) s <= s* = 0.7968; (b) 3/8 wrong, fails for mixed q"),
    "Lemma 2": ("shown untestable", "-"),
    "Lemma 3": ("shown untestable; Wedin step on instances", "-"),
    "Lemma 4": ("instances (trimming binding)", "holds; loose constants"),
    "Lemma 5": ("shown untestable", "v estimates 2||p|| r"),
    "Lemma 6": ("finite inequality (grid)", "holds"),
    "Theorem 4": ("shown untestable", "-"),
    "Corollary 3": ("shown untestable", "-"),
    "Theorem 5": ("instances", "holds"),
    "Theorem 6": ("exact instances", "holds"),
    "Theorem 7": ("exact instances", "holds"),
}


def readme_table(root: Path) -> str:
    """The short Markdown table for the README (same source as the status page)."""
    _validate()
    c = counts(root)
    lines = ["| statement | how checked | finding |", "|---|---|---|"]
    for st in STATEMENTS:
        how, found = SHORT[st.number]
        lines.append(f"| {st.number} | {_esc(how)} | {_esc(found)} |")
    return ("<!-- generated by python -m theory_checks --readme-table; do not edit -->\n" + "\n".join(lines)
            + "\n\n" + _counts_block(c))
