"""Shared fixtures for the unit tests of ``toptwo``.

``toy`` is a literal 5-worker x 4-task response matrix (K = 4) whose top two answers
can be read off by eye: in every task three workers agree on one label and the
remaining answers point at a second one.
"""

from __future__ import annotations

import numpy as np
import pytest

import toptwo

# BLAS threads: see the root conftest.py (OMP_NUM_THREADS=1 for the whole suite).

#: rows = workers, columns = tasks, 0 = not answered (the paper's convention).
TOY_A = np.array([
    [1, 3, 2, 4],
    [1, 3, 2, 4],
    [1, 3, 2, 4],
    [2, 4, 3, 3],
    [2, 4, 3, 0],
])
TOY_K = 4
#: Majority vote (and the oracle MLE with equal reliabilities): (g, h) per task.
TOY_TOP_TWO = np.array([[1, 2], [3, 4], [2, 3], [4, 3]])
#: Vote ratio count(g) / (count(g) + count(h)).
TOY_VOTE_RATIO = np.array([3 / 5, 3 / 5, 3 / 5, 3 / 4])


@pytest.fixture
def toy():
    """(A, K, expected top two, expected vote ratio) of the literal toy matrix."""
    return TOY_A.copy(), TOY_K, TOY_TOP_TWO.copy(), TOY_VOTE_RATIO.copy()


@pytest.fixture(scope="session")
def small_model():
    """A hard-scenario instance (n, m, K) = (30, 80, 4)."""
    return toptwo.TopTwoModel.scenario("hard", n_workers=30, n_tasks=80, n_labels=4, rng=11)


@pytest.fixture(scope="session")
def small_responses(small_model):
    return small_model.sample(0.5, rng=12)


def with_gaps(R: toptwo.Responses, *, empty_worker: int, empty_task: int) -> toptwo.Responses:
    """R with every response of one worker and of one task removed (shape kept)."""
    keep = (R.workers != empty_worker) & (R.tasks != empty_task)
    return R.subset(keep)


@pytest.fixture
def precise_iterative(monkeypatch):
    """The iterative eigen-solver paths at machine precision (Lanczos / ARPACK stop at
    ||r|| <= 1e-10 theta_1, u accurate to 1e-8 like the dense path): their continuous
    outputs can then be compared with the dense path's to 1e-8. The default stop is at
    statistical precision (``toptwo._linalg.LANCZOS_TOL``), u within ``ITERATIVE_U_TOL``."""
    import toptwo._linalg as linalg

    monkeypatch.setattr(linalg, "LANCZOS_TOL", 1e-10)
    monkeypatch.setattr(linalg, "ARPACK_TOL", 1e-10)



# ---------------------------------------------------------------- SymPy checks: one run
# `python -m theory_checks` (README quick start, CI) runs every SymPy check and fails when
# one fails; their pytest duplicates (tests/test_theory_checks.py::test_check_passes,
# marker ``theory_cli``) are deselected unless an ``-m`` expression names the marker
# (``-m theory_cli``), so a CI run proves each claim once. (pyproject's addopts always
# pass ``-m 'not slow'``, which selects them: a test on "was any -m given" kept all 61 in
# the README's test command, ~60 s of CPU.) The negative twins and mutants (wrong
# statements that every check must reject) stay in pytest.
def pytest_configure(config):
    config.addinivalue_line(
        "markers", "theory_cli: duplicates `python -m theory_checks`; run with -m theory_cli")
    config.addinivalue_line(
        "markers", "nbgrader: needs the teaching extra (nbgrader); CI's instructors stage "
        "runs exactly these, slow ones included (-m nbgrader)")


def pytest_collection_modifyitems(config, items):
    if "theory_cli" in (config.option.markexpr or ""):
        return
    drop = [item for item in items if item.get_closest_marker("theory_cli")]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [item for item in items if not item.get_closest_marker("theory_cli")]
