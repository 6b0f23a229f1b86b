r"""Theory quantities and Monte-Carlo checks of the paper's probabilistic statements.

Jeong & Chung (ICML 2023), Sec. 5 and the appendix. The exact (SymPy) proofs of the
arithmetic behind these functions live in the separate package ``theory_checks``; this
module holds the numerical side that notebooks and ``benchmarks/`` call:

* :data:`THEOREM3A_MAX_SAMPLING_RATE` -- the largest s with -log(1 - s) <= 2 s (about
  0.797): Theorem 3(a)'s bound ((K-1)/K) exp(-2 p-bar n s) is valid for s up to it (the
  paper's "p-bar <= 2/3" is the wrong variable; s <= 2/3 is sufficient, not needed).
* :func:`minimax_lower_bound_g` -- Theorem 1 / Theorem 3(a) [`thm:converse`]:
  ((K-1)/K) exp(-2 p-bar n s), valid for s <= s*.
* :func:`spammer_hammer_error_g` -- the exact error floor ((K-1)/K)(1 - s)^(n_hammers)
  of the spammer-hammer construction in the proof of Theorem 3(a) [`app:thm:converse`].
* :func:`theorem3b_counterexample` -- Monte-Carlo evidence that Theorem 3(b)
  [`thm:converse`] as printed (average error >= c whenever s <= 1/(4 n D-bar), with
  D-bar = min_j D-bar^(j)) fails when the tasks have different q_j.
* :func:`theorem3b_corrected_bound` -- what does hold: the Le Cam + Pinsker bound per
  task, averaged over tasks.
* :func:`label_union_failures` -- the log K of Corollaries 1-2: task failures against
  per-competitor failures over K, through the paper's algorithms as printed
  (:data:`PAPER_ALGORITHM1`, :data:`PAPER_ALGORITHM2`).
* :func:`binomial_ci` -- Clopper-Pearson intervals (scipy.stats) for the Monte-Carlo checks.
* :func:`fit_loglog_slope` and :func:`loglog_slope` -- the package's one log-log
  least-squares fit (:mod:`toptwo.theory.scaling`), on plain points and on replicate means.
"""

from .bounds import (LE_CAM_PINSKER_CONSTANT, THEOREM3A_MAX_SAMPLING_RATE, le_cam_queries,
                     lemma1_bound, minimax_lower_bound_g, sign_flip_probability,
                     spammer_hammer_error_g, theorem3a_max_sampling_rate,
                     theorem3b_corrected_bound)
from .montecarlo import (PAPER_ALGORITHM1, PAPER_ALGORITHM2, binomial_ci,
                         competitor_information, every_task_recovery, label_union_exponent,
                         label_union_failures, lemma1_tail, minimax_gap_curves,
                         minimax_sample_complexity, sign_rule_flips, theorem1_decay,
                         theorem3b_counterexample)
from .perturbation import binary_sample_mean, first_order_sin_theta, singular_vector_errors
from .scaling import (first_crossing, fit_loglog_slope, loglog_slope, scaling_checks,
                      scaling_report, scaling_summary)

__all__ = ["THEOREM3A_MAX_SAMPLING_RATE", "theorem3a_max_sampling_rate", "spammer_hammer_error_g",
           "minimax_lower_bound_g",
           "theorem3b_corrected_bound", "theorem3b_counterexample", "LE_CAM_PINSKER_CONSTANT",
           "binomial_ci", "theorem1_decay", "lemma1_bound", "lemma1_tail", "every_task_recovery",
           "sign_rule_flips", "sign_flip_probability", "minimax_gap_curves", "minimax_sample_complexity",
           "le_cam_queries", "fit_loglog_slope", "loglog_slope", "first_crossing", "scaling_summary", "scaling_checks",
           "scaling_report", "binary_sample_mean", "singular_vector_errors",
           "first_order_sin_theta", "PAPER_ALGORITHM1", "PAPER_ALGORITHM2", "competitor_information",
           "label_union_failures", "label_union_exponent"]
