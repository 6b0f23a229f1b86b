r"""Autograded checks for the course exercises in ``notebooks/exercises/``.

Each check compares a student's function (or numbers) with the reference computed by
:mod:`toptwo` (or SymPy) on specific inputs. On success it returns a truthy
:class:`CheckResult`; on failure it raises :class:`ExerciseCheckFailed` (a subclass of
``AssertionError``, so nbgrader-style grading cells and plain ``pytest`` treat it as a
failed assertion) whose message says

* which input was used,
* what was expected and what came back,
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
2      Proposition 1 [`prop:binary`] by hand       :func:`check_expected_binary`
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
:mod:`toptwo.teaching._nbgrader`). Checks called inside the student's function detect
calls to the library function that does the exercise (``toptwo.label_distribution``,
``toptwo.to_binary``, ``toptwo.plugin_mle``, ...) and fail. SymPy (and the SymPy references of
:mod:`theory_checks.model`) is imported lazily, only by exercise 2's functions, so
``import toptwo.teaching`` needs numpy only.
"""

from __future__ import annotations

from ._nbgrader import GRADED, make_student_versions, nbgrader_metadata, write_metadata
from .ex01 import (check_answer_distribution, check_empirical_distribution,
                   check_ex1_empirical_distribution)
from .ex02 import check_expected_binary, reference_expected_binary
from .ex03 import check_binary_conversion, check_centered_binary
from .ex04 import check_reliability_estimator, check_unbiased_simulation
from .ex05 import check_mle_differs_from_majority, check_plugin_mle
from .ex06 import check_fit_exponent, check_ns_needed, check_scaling_exponents
from .report import CheckResult, ExerciseCheckFailed

__all__ = [
    "ExerciseCheckFailed", "CheckResult", "GRADED", "nbgrader_metadata", "write_metadata",
    "check_answer_distribution", "check_ex1_empirical_distribution",
    "check_empirical_distribution", "check_expected_binary", "reference_expected_binary",
    "check_binary_conversion", "check_centered_binary", "check_reliability_estimator",
    "check_unbiased_simulation", "check_plugin_mle", "check_mle_differs_from_majority",
    "check_fit_exponent", "check_ns_needed", "check_scaling_exponents", "make_student_versions",
]
