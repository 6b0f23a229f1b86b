r"""Autograded checks for the course exercises in ``notebooks/exercises/``.

Each check runs a student's function on inputs drawn afresh at every run (``rng=None``:
new entropy; pass a seed for a reproducible run) and compares the result with the right
answer computed inside the check (NumPy or SymPy). On success it returns a truthy
:class:`CheckResult`; on failure it raises :class:`ExerciseCheckFailed` (a subclass of
``AssertionError``, so nbgrader-style grading cells and plain ``pytest`` treat it as a
failed assertion) whose message says

* which input was used,
* what came back (never the expected value),
* a *diagnosis* when the answer matches a typical mistake ("this matches what you get
  if you swap q and 1 - q"), computed by evaluating the wrong variants on the same
  input, and
* a hint tied to the paper's equation.

Exercises and checks (Jeong & Chung, ICML 2023):

=====  ==========================================  ======================================
ex     topic                                       checks
=====  ==========================================  ======================================
1      model, eq. (1) [`eqn:A_dist`]               :func:`check_answer_distribution`,
                                                   :func:`check_ex1_empirical_distribution`
2      Proposition 1 [`prop:binary`] by hand       :func:`check_expected_binary`,
                                                   :func:`check_r_case_one`
3      binary conversion, rank-1 structure         :func:`check_binary_conversion`,
                                                   :func:`check_centered_binary`
4      reliability estimator, eq. (5) [`eqn:hatpi`] :func:`check_reliability_estimator`,
                                                   :func:`check_unbiased_simulation`
5      plug-in MLE, eq. (6) [`eqn:plug-in-mle`]    :func:`check_plugin_mle`,
                                                   :func:`check_mle_differs_from_majority`
6      spammer-hammer scaling (Sec. 5)             :func:`check_fit_exponent`,
                                                   :func:`check_ns_needed`,
                                                   :func:`check_scaling_exponents`
=====  ==========================================  ======================================

The checks of exercise NN live in ``toptwo.teaching.exNN`` (one module per notebook
``notebooks/exercises/exNN_*.ipynb``), what they report in :mod:`toptwo.teaching.report`;
every public name is importable from ``toptwo.teaching``.

The notebooks are nbgrader source notebooks: their cell metadata comes from
:data:`GRADED` (``python -m toptwo.teaching metadata notebooks/exercises``), and student
versions are made by nbgrader (``nbgrader generate_assignment``, or
``python -m toptwo.teaching student SRC OUTDIR``, which runs nbgrader's preprocessors; see
:mod:`toptwo.teaching._nbgrader`). The student's function runs in a separate process
(:mod:`toptwo.teaching._sandbox`) that holds no right answer and refuses imports of
``toptwo`` and ``theory_checks``, threads, processes and copied library code; what an
exercise hands over (ex04 4b's ``draw``/``estimate``, ex06 6b's ``pair_error``) runs in the
check's process. Each call may take 5 s (``TOPTWO_CALL_TIMEOUT``). :mod:`toptwo.teaching.verify`
re-runs passed checks outside the notebook's kernel under nbgrader. SymPy is imported
lazily, only by exercise 2's functions, so ``import toptwo.teaching`` needs numpy only.
"""

from __future__ import annotations

from ._nbgrader import (GRADED, make_student_versions, nbgrader_metadata, release_notebook,
                        write_metadata)
from .ex01 import (check_answer_distribution, check_empirical_distribution,
                   check_ex1_empirical_distribution)
from .ex02 import check_expected_binary, check_r_case_one
from .ex03 import check_binary_conversion, check_centered_binary
from .ex04 import check_reliability_estimator, check_unbiased_simulation
from .ex05 import check_mle_differs_from_majority, check_plugin_mle
from .ex06 import (MIN_EXPONENT_GAP, MV_EXPONENT_RANGE, TT2_EXPONENT_RANGE, check_fit_exponent,
                   check_ns_needed, check_scaling_exponents)
from .report import CheckResult, ExerciseCheckFailed

__all__ = [
    "ExerciseCheckFailed", "CheckResult", "GRADED", "nbgrader_metadata", "write_metadata",
    "check_answer_distribution", "check_ex1_empirical_distribution",
    "check_empirical_distribution", "check_expected_binary", "check_r_case_one",
    "check_binary_conversion", "check_centered_binary", "check_reliability_estimator",
    "check_unbiased_simulation", "check_plugin_mle", "check_mle_differs_from_majority",
    "check_fit_exponent", "check_ns_needed", "check_scaling_exponents", "make_student_versions",
    "release_notebook",
    "MV_EXPONENT_RANGE", "TT2_EXPONENT_RANGE", "MIN_EXPONENT_GAP",
]
