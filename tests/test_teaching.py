"""Tests of ``toptwo.teaching``: every check accepts a correct answer, diagnoses the typical
wrong answers and refuses library look-ups; the nbgrader metadata is complete and current;
the student versions (nbgrader's preprocessors) remove every solution and hidden test."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
import sympy as sp

from toptwo import teaching
from toptwo.teaching import ExerciseCheckFailed
from toptwo.teaching.__main__ import main as teaching_main

EXERCISES = Path(__file__).resolve().parents[1] / "notebooks" / "exercises"


def first_diagnosis(check, *args, **kwargs):
    """Run a check that must fail; return its first-listed diagnosis (and the error)."""
    with pytest.raises(ExerciseCheckFailed) as info:
        check(*args, **kwargs)
    assert info.value.diagnosis, str(info.value)
    return info.value.diagnosis.split(" (or if you ")[0], info.value


# ------------------------------------------------------------ correct answers
def answer_distribution(p, q, g, h, K):
    mu = np.full(K, (1 - p) / K)
    mu[g - 1] += p * q
    mu[h - 1] += p * (1 - q)
    return mu


def empirical_distribution(A, K):
    counts = np.stack([(A == c).sum(axis=0) for c in range(1, K + 1)], axis=1)
    return counts / counts.sum(axis=1, keepdims=True)


P, Q, S = sp.symbols("p q s", positive=True)


def expected_binary_31(k):
    """E[A^(k)] for K = 3, (g, h) = (3, 1)."""
    pr1 = S * (P * (1 - Q) + (1 - P) / 3)
    pr2 = S * (1 - P) / 3
    pr3 = S * (P * Q + (1 - P) / 3)
    return -pr1 + pr2 + pr3 if k == 1 else -pr1 - pr2 + pr3


def binary(A, k):
    return np.where(A == 0, 0, np.where(A > k, 1, -1))


def center(EA, k, s, K):
    return EA - s * (K - 2 * k) / K


def reliability(A2, top, rate, K):
    hits = ((A2 == top[:, 0]) | (A2 == top[:, 1])).sum(axis=1)
    return K / (K - 2) * (hits / (A2.shape[1] * rate) - 2 / K)


def mle_pair(answers, p, q, K, weight=None):
    if weight is None:
        def weight(pp, qq):
            return np.log(K * pp * qq / (1 - pp) + 1)
    wa, wb = weight(p, q), weight(p, 1 - q)
    S_ = np.array([[wa[answers == a].sum() + wb[answers == b].sum() if a != b else -np.inf
                    for b in range(1, K + 1)] for a in range(1, K + 1)])
    a, b = np.unravel_index(np.argmax(S_), S_.shape)
    return int(a) + 1, int(b) + 1


def fit_exponent(alphas, ns):
    return float(np.polyfit(np.log(alphas), np.log(ns), 1)[0])


def test_correct_answers_pass():
    results = [
        teaching.check_answer_distribution(answer_distribution),
        teaching.check_ex1_empirical_distribution(empirical_distribution),
        teaching.check_expected_binary(expected_binary_31, g=3, h=1, K=3),
        teaching.check_binary_conversion(binary),
        teaching.check_centered_binary(center),
        teaching.check_reliability_estimator(reliability),
        teaching.check_plugin_mle(mle_pair),
        teaching.check_mle_differs_from_majority([1, 1, 1, 2, 2, 3],
                                                 [0, 0, 0, 0.9, 0.9, 0.5], 0.7, 3),
        teaching.check_fit_exponent(fit_exponent),
        teaching.check_scaling_exponents(-2.0, -1.0),
    ]
    assert all(results)
    assert repr(results[3]) == ("CheckResult(exercise='ex3 binary conversion', passed=True, "
                                "n_cases=7)")


def test_failure_is_an_assertion_error_with_input_expected_got_and_hint():
    with pytest.raises(AssertionError) as info:
        teaching.check_answer_distribution(lambda p, q, g, h, K: answer_distribution(p, 1 - q, g, h, K))
    err = info.value
    assert isinstance(err, ExerciseCheckFailed)
    text = str(err)
    for part in ("input:", "p=0.8, q=0.7, (g, h)=(2, 4), K=5", "expected:", "got:",
                 "diagnosis:", "hint:", "eq. (1)"):
        assert part in text
    assert "swap q and 1 - q" in err.diagnosis


def test_not_implemented_propagates_and_crashes_are_reported():
    def stub(A, k):
        raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        teaching.check_binary_conversion(stub)
    with pytest.raises(ExerciseCheckFailed, match=r"raised ZeroDivisionError.*\n  input:"):
        teaching.check_binary_conversion(lambda A, k: 1 / 0)


# ------------------------------------------------------------------ exercise 1
@pytest.mark.parametrize("wrong, diagnosis", [
    (lambda p, q, g, h, K: answer_distribution(p, 1 - q, g, h, K), "swap q and 1 - q"),
    (lambda p, q, g, h, K: np.roll(answer_distribution(p, q, g, h, K), 1),
     "index c instead of c - 1"),
    (lambda p, q, g, h, K: answer_distribution(p, q, g, h, K)
     - (1 - p) / K * np.isin(np.arange(1, K + 1), (g, h)), "spammer share \\(1-p\\)/K off"),
    (lambda p, q, g, h, K: np.where(np.isin(np.arange(1, K + 1), (g, h)),
                                    answer_distribution(p, q, g, h, K) - (1 - p) / K,
                                    (1 - p) / (K - 2)), "K - 2 wrong labels only"),
])
def test_answer_distribution_diagnoses(wrong, diagnosis):
    first, _ = first_diagnosis(teaching.check_answer_distribution, wrong)
    assert re.search(diagnosis, first), first


@pytest.mark.parametrize("wrong, diagnosis", [
    (lambda A, K: empirical_distribution(A, K) * (A > 0).sum(axis=0)[:, None] / A.shape[0],
     "divide by the number of workers n"),
    (lambda A, K: empirical_distribution(A, K) * (A > 0).sum(axis=0)[:, None], "raw counts"),
    (lambda A, K: empirical_distribution(A, K).T, "labels in rows"),
    (lambda A, K: np.column_stack([np.zeros(A.shape[1]), empirical_distribution(A, K)]),
     "column for label 0"),
    (lambda A, K: np.roll(empirical_distribution(A, K), -1, axis=1), "off by one in the label"),
])
def test_empirical_distribution_diagnoses(wrong, diagnosis):
    first, _ = first_diagnosis(teaching.check_ex1_empirical_distribution, wrong)
    assert re.search(diagnosis, first), first


def test_empirical_distribution_accepts_values():
    A = np.array([[1, 2], [1, 0], [3, 2]])
    assert teaching.check_ex1_empirical_distribution(empirical_distribution(A, 3), A=A, n_labels=3)
    with pytest.raises(ExerciseCheckFailed, match="raw counts"):
        teaching.check_ex1_empirical_distribution(np.array([[2, 0, 1], [0, 2, 0]]), A=A,
                                                  n_labels=3)
    with pytest.raises(TypeError, match="n_labels"):
        teaching.check_ex1_empirical_distribution(np.zeros((2, 3)))


# ------------------------------------------------------------------ exercise 2
@pytest.mark.parametrize("wrong, diagnosis", [
    (lambda k: sp.expand(expected_binary_31(k) - S * sp.Rational(3 - 2 * k, 3)),
     "leave out the shift s\\(K - 2k\\)/K"),
    (lambda k: expected_binary_31(k).subs(Q, 1 - Q), "swap q and 1 - q"),
    ({k: teaching.reference_expected_binary(3, 1, k + 1, 3, symbols=(P, Q, S)) for k in (1, 2)},
     "off by one in k"),
    (lambda k: -expected_binary_31(k), "reverse the sign convention"),
    (lambda k: expected_binary_31(k) / S, "leave out the factor s"),
    ({k: teaching.reference_expected_binary(1, 3, k, 3, symbols=(P, Q, S)) for k in (1, 2)},
     "swap g and h"),
])
def test_expected_binary_diagnoses(wrong, diagnosis):
    with pytest.raises(ExerciseCheckFailed, match=f"diagnosis: .*{diagnosis}"):
        teaching.check_expected_binary(wrong, g=3, h=1, K=3)


def test_expected_binary_plain_symbols_dict_and_bad_input():
    p, q, s = sp.symbols("p q s")           # no assumptions: matched by name
    answers = {k: teaching.reference_expected_binary(2, 3, k, 3, symbols=(p, q, s))
               for k in (1, 2)}
    assert teaching.check_expected_binary(answers, g=2, h=3)
    # K = 4, every configuration, against the package's r^(k) via Proposition 1
    assert teaching.check_expected_binary(
        {k: teaching.reference_expected_binary(4, 2, k, 4) for k in (1, 2, 3)}, g=4, h=2, K=4)
    x = sp.Symbol("x")
    with pytest.raises(ExerciseCheckFailed, match=r"uses symbols \['x'\]"):
        teaching.check_expected_binary(lambda k: x * s, g=2, h=3)
    with pytest.raises(ValueError, match="must be distinct labels in 1..3; got \\(2, 2\\)"):
        teaching.check_expected_binary(answers, g=2, h=2)


# ------------------------------------------------------------------ exercise 3
@pytest.mark.parametrize("wrong, diagnosis", [
    (lambda A, k: binary(A, k - 1), "A >= k instead of A > k"),
    (lambda A, k: binary(A, k + 1), "A > k \\+ 1"),
    (lambda A, k: -binary(A, k), "reverse the signs"),
    (lambda A, k: np.where(A > k, 1, -1), "unanswered entries \\(A = 0\\) to -1"),
    (lambda A, k: (A > k).astype(int), "0/1 indicator"),
])
def test_binary_conversion_diagnoses(wrong, diagnosis):
    first, _ = first_diagnosis(teaching.check_binary_conversion, wrong)
    assert re.search(diagnosis, first), first


@pytest.mark.parametrize("wrong, diagnosis", [
    (lambda EA, k, s, K: EA, "leave out the shift"),
    (lambda EA, k, s, K: EA - (K - 2 * k) / K, "without the factor s"),
    (lambda EA, k, s, K: EA - s * (2 * k - K) / K, "sign of the shift reversed"),
    (lambda EA, k, s, K: EA - s * (K - 2 * (k - 1)) / K, "k - 1 in the shift"),
    (lambda EA, k, s, K: EA - s * (K - 2 * k) / (K - 2), "divide by K - 2 instead of K"),
])
def test_centered_binary_diagnoses(wrong, diagnosis):
    first, _ = first_diagnosis(teaching.check_centered_binary, wrong)
    assert re.search(diagnosis, first), first


# ------------------------------------------------------------------ exercise 4
def _hits(A2, top):
    return ((A2 == top[:, 0]) | (A2 == top[:, 1])).sum(axis=1)


@pytest.mark.parametrize("wrong, diagnosis", [
    (lambda A2, top, r, K: _hits(A2, top) / (A2.shape[1] * r) - 2 / K,
     "divide by K instead of K - 2"),
    (lambda A2, top, r, K: K / (K - 2) * _hits(A2, top) / (A2.shape[1] * r),
     "leave out the -2/K"),
    (lambda A2, top, r, K: K / (K - 2) * (_hits(A2, top) / (A2.shape[1] * r) - 1 / K),
     "subtract 1/K instead of 2/K"),
    (lambda A2, top, r, K: K / (K - 2) * ((A2 == top[:, 0]).sum(axis=1) / (A2.shape[1] * r) - 2 / K),
     "only answers equal to g_j"),
    (lambda A2, top, r, K: K / (K - 2) * (_hits(A2, top) / A2.shape[1] - 2 / K),
     "by m instead of m s \\(1 - s_1\\)"),
    (lambda A2, top, r, K: K / (K - 2) * (_hits(A2, top) / (A2 > 0).sum(axis=1) - 2 / K),
     "own number of answers"),
])
def test_reliability_estimator_diagnoses(wrong, diagnosis):
    first, _ = first_diagnosis(teaching.check_reliability_estimator, wrong)
    assert re.search(diagnosis, first), first


def test_unbiased_simulation_accepts_truth_and_rejects_biases():
    p = np.array([0.0, 0.3, 0.6, 0.9])
    K, m, rate, R = 4, 200, 0.3, 300
    kw = dict(n_tasks=m, rate=rate, n_labels=K, n_replicates=R)
    assert teaching.check_unbiased_simulation(p + 0.005, p, **kw)
    sigma = p + 2 * (1 - p) / K                        # hit rate given an answer
    with pytest.raises(ExerciseCheckFailed, match="leave out the -2/K"):
        teaching.check_unbiased_simulation(K / (K - 2) * sigma, p, **kw)
    with pytest.raises(ExerciseCheckFailed, match="divide by K instead of K - 2"):
        teaching.check_unbiased_simulation((K - 2) / K * p, p, **kw)
    with pytest.raises(ExerciseCheckFailed, match="worker 1 is 0.4"):
        teaching.check_unbiased_simulation(p + np.array([0, 0.1, 0, 0]), p, **kw)


# ------------------------------------------------------------------ exercise 5
@pytest.mark.parametrize("wrong, diagnosis", [
    (lambda a, p, q, K: tuple(np.argsort(-np.bincount(a[a > 0], minlength=K + 1)[1:],
                                         kind="stable")[:2] + 1), "majority vote"),
    (lambda a, p, q, K: mle_pair(a, p, 1 - q, K), "swap q and 1 - q"),
    # returning (h, g) is exactly what swapping q and 1 - q gives (score(a, b) with q
    # swapped is score(b, a)): both are named, swap first
    (lambda a, p, q, K: mle_pair(a, p, q, K)[::-1],
     "swap q and 1 - q.*or if you return \\(h, g\\) instead of \\(g, h\\)"),
    (lambda a, p, q, K: tuple(v - 1 for v in mle_pair(a, p, q, K)), "0-based labels"),
    (lambda a, p, q, K: mle_pair(a, p, q, K, weight=lambda pp, qq: np.log1p(pp * qq / (1 - pp))),
     "factor K inside the log"),
])
def test_plugin_mle_diagnoses(wrong, diagnosis):
    first, err = first_diagnosis(teaching.check_plugin_mle, wrong)
    assert re.search(diagnosis, first) or re.search(diagnosis, err.diagnosis), err.diagnosis


def test_plugin_mle_missing_plus_one_is_diagnosed():
    def no_plus_one(a, p, q, K):
        with np.errstate(divide="ignore", invalid="ignore"):
            return mle_pair(a, p, q, K, weight=lambda pp, qq: np.log(K * pp * qq / (1 - pp)))

    with pytest.raises(ExerciseCheckFailed, match="diagnosis: .*'\\+ 1' inside the log"):
        teaching.check_plugin_mle(no_plus_one)


def test_mle_differs_from_majority_rejects_agreement_and_ties():
    with pytest.raises(ExerciseCheckFailed, match="majority vote and eq. \\(6\\) agree"):
        teaching.check_mle_differs_from_majority([1, 1, 1, 2, 2, 3], [0.9] * 6, 0.7, 3)
    with pytest.raises(ExerciseCheckFailed, match="has a tie"):
        teaching.check_mle_differs_from_majority([1, 1, 2, 2, 3], [0.9, 0, 0, 0, 0], 0.7, 3)
    with pytest.raises(ExerciseCheckFailed, match="p must lie in \\[0, 1\\)"):
        teaching.check_mle_differs_from_majority([1, 1, 1, 2, 2, 3], [1.0] * 6, 0.7, 3)


# ------------------------------------------------------------------ exercise 6
@pytest.mark.parametrize("wrong, diagnosis", [
    (lambda a, ns: np.polyfit(np.log(a), np.log(ns), 1)[1], "intercept"),
    (lambda a, ns: -fit_exponent(a, ns), "flip the sign"),
    (lambda a, ns: np.polyfit(np.log(ns), np.log(a), 1)[0], "reversed regression"),
    (lambda a, ns: np.polyfit(a, np.log(ns), 1)[0], "against alpha \\(without log\\)"),
])
def test_fit_exponent_diagnoses(wrong, diagnosis):
    first, _ = first_diagnosis(teaching.check_fit_exponent, wrong)
    assert re.search(diagnosis, first), first


def test_scaling_exponents_rejects_wrong_values():
    with pytest.raises(ExerciseCheckFailed, match="positive.*\n.*\n.*report 2 and 1"):
        teaching.check_scaling_exponents(2.0, 1.0)
    with pytest.raises(ExerciseCheckFailed, match="swapped"):
        teaching.check_scaling_exponents(-1.0, -2.0)
    with pytest.raises(ExerciseCheckFailed, match="majority vote's exponent should lie"):
        teaching.check_scaling_exponents(-1.0, -0.9)
    with pytest.raises(ExerciseCheckFailed, match="steeper by at least 0.5"):
        teaching.check_scaling_exponents(-1.6, -1.3)


def test_toptwo_imports_without_sympy():
    code = (
        "import sys; sys.modules['sympy'] = None\n"
        "import numpy as np, toptwo, toptwo.teaching as t\n"
        "assert t.check_binary_conversion(lambda A, k: np.where(A == 0, 0, np.where(A > k, 1, -1)))\n"
        "try:\n    t.check_expected_binary({}, g=2, h=3)\nexcept ImportError:\n    print('lazy')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "lazy"


# ------------------------------------------------- nbgrader metadata, student versions
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"


def _regions(source, begin, end):
    """Lines strictly inside each begin/end region of ``source``."""
    regions, inside = [], None
    for line in source.split("\n"):
        if line.strip() == begin:
            inside = []
        elif line.strip() == end:
            regions.append(inside)
            inside = None
        elif inside is not None:
            inside.append(line)
    return regions


def test_exercise_metadata_is_up_to_date():
    assert teaching.write_metadata(EXERCISES, check=True) == []
    assert teaching_main(["metadata", "--check", str(EXERCISES)]) == 0


def test_every_cell_has_nbgrader_metadata():
    for name, entries in teaching.GRADED.items():
        nb = nbformat.read(EXERCISES / f"{name}.ipynb", as_version=4)
        ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells]
        assert len(ids) == len(set(ids)), name
        points = 0
        for cell in nb.cells:
            meta = cell.metadata["nbgrader"]
            assert meta["schema_version"] == 3
            has_solution = bool(_regions(cell.source, BEGIN, END))
            assert meta["solution"] == has_solution, (name, cell.source[:60])
            if meta["grade"]:
                points += meta["points"]
                assert meta["points"] > 0
                assert meta["locked"] == (not has_solution)
            else:
                assert meta["locked"] == (not has_solution)
            if cell.cell_type == "code" and "teaching.check_" in cell.source:
                assert meta["grade"] and meta["locked"], (name, cell.source[:60])
        assert points == sum(p for _, _, p in entries) >= 5
    ex05 = nbformat.read(EXERCISES / "ex05_plugin_mle.ipynb", as_version=4)
    manual = [c for c in ex05.cells if c.metadata["nbgrader"]["grade"]
              and c.metadata["nbgrader"]["solution"]]
    assert [c.cell_type for c in manual] == ["markdown"]


def test_check_cells_leave_no_value_behind():
    """nbgrader reads a grade cell's last value as a partial score: there must be none."""
    import ast
    for name in teaching.GRADED:
        nb = nbformat.read(EXERCISES / f"{name}.ipynb", as_version=4)
        for cell in nb.cells:
            meta = cell.metadata["nbgrader"]
            if cell.cell_type != "code" or not meta["grade"]:
                continue
            last = ast.parse(cell.source).body[-1]
            assert not isinstance(last, ast.Expr) or (
                isinstance(last.value, ast.Call) and getattr(last.value.func, "id", "") == "print"
            ), (name, cell.source)
            assert all(o.output_type != "execute_result" for o in cell.outputs), name
            assert all(o.get("name") != "stderr" for o in cell.outputs), name


def test_metadata_writer_refuses_unlisted_checks_and_stale_entries():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("teaching.check_x(f)")])
    with pytest.raises(ValueError, match="has no entry in GRADED"):
        teaching.nbgrader_metadata(nb, "ex99")
    with pytest.raises(ValueError, match="'ex01-1a-check'.*matches 0 cells"):
        teaching.nbgrader_metadata(nb, "ex01_sampling")


def test_hidden_tests_sit_in_grade_cells():
    n_hidden = 0
    for name in teaching.GRADED:
        nb = nbformat.read(EXERCISES / f"{name}.ipynb", as_version=4)
        for cell in nb.cells:
            hidden = _regions(cell.source, BEGIN_HIDDEN, END_HIDDEN)
            if hidden:
                assert cell.metadata["nbgrader"]["grade"], name
                n_hidden += 1
    assert n_hidden >= 6



def test_student_versions_of_the_real_exercises(tmp_path):
    pytest.importorskip("nbgrader")
    sources = sorted(EXERCISES.glob("*.ipynb"))
    written = teaching.make_student_versions(EXERCISES, tmp_path / "handout")
    assert [p.name for p in written] == [p.name for p in sources]
    for src in sources:
        source_nb = nbformat.read(src, as_version=4)
        student = nbformat.read(tmp_path / "handout" / src.name, as_version=4)
        nbformat.validate(student)
        text = "\n".join(cell.source for cell in student.cells)
        for marker in (BEGIN, END, BEGIN_HIDDEN, END_HIDDEN):
            assert marker not in text
        for cell in source_nb.cells:
            for region in (_regions(cell.source, BEGIN, END)
                           + _regions(cell.source, BEGIN_HIDDEN, END_HIDDEN)):
                for line in region:
                    if line.strip() and not line.strip().startswith("#"):
                        assert line.strip() not in text, f"{src.name} leaks {line!r}"
        assert "raise NotImplementedError()" in text
        assert len(student.cells) == len(source_nb.cells)
        for s_cell, o_cell in zip(student.cells, source_nb.cells):
            if s_cell.cell_type == "code":
                assert s_cell.outputs == [] and s_cell.execution_count is None
            if o_cell.metadata["nbgrader"]["grade"] and not o_cell.metadata["nbgrader"]["solution"]:
                assert "teaching.check_" in s_cell.source or "assert" in s_cell.source
    ex05 = nbformat.read(tmp_path / "handout" / "ex05_plugin_mle.ipynb", as_version=4)
    assert any(c.cell_type == "markdown" and "YOUR ANSWER HERE" in c.source for c in ex05.cells)


def test_generator_refuses_source_folder_and_missing_folder(tmp_path, capsys):
    pytest.importorskip("nbgrader")
    with pytest.raises(ValueError, match="must be outside the source folder"):
        teaching.make_student_versions(EXERCISES, EXERCISES / "student")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        teaching.make_student_versions(tmp_path / "nope", tmp_path / "out")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no .ipynb notebooks"):
        teaching.make_student_versions(tmp_path / "empty", tmp_path / "out")
    assert teaching_main(["student", str(EXERCISES), str(EXERCISES)]) == 2
    assert "must be outside the source folder" in capsys.readouterr().err


def test_generator_refuses_a_notebook_without_metadata(tmp_path):
    pytest.importorskip("nbgrader")
    src = tmp_path / "src"
    src.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "x = 1\n### BEGIN SOLUTION\ny = 2\n### END SOLUTION")]), src / "bad.ipynb")
    with pytest.raises(ValueError, match="bad.ipynb: nbgrader ClearSolutions refused"):
        teaching.make_student_versions(src, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_cli_writes_handout(tmp_path, capsys):
    pytest.importorskip("nbgrader")
    assert teaching_main(["student", str(EXERCISES), str(tmp_path / "out")]) == 0
    assert "ex01_sampling.ipynb" in capsys.readouterr().out
    assert (tmp_path / "out" / "ex06_scaling.ipynb").is_file()


def test_cli_output_folder_that_is_a_file_or_has_no_parent(tmp_path, capsys):
    pytest.importorskip("nbgrader")
    afile = tmp_path / "taken"
    afile.write_text("x")
    assert teaching_main(["student", str(EXERCISES), str(afile)]) == 2
    err = capsys.readouterr().err
    assert "exists and is not a folder (it is a file)" in err and "Traceback" not in err
    deep = tmp_path / "missing" / "parent" / "out"
    assert teaching_main(["student", str(EXERCISES), str(deep)]) == 2
    err = capsys.readouterr().err
    assert "does not exist; only the output folder itself is created, never its parents" in err
    assert not (tmp_path / "missing").exists()
    with pytest.raises(FileNotFoundError, match=r"never its parents"):
        teaching.make_student_versions(EXERCISES, deep)


# ------------------------------------------------- answers that must not pass
import toptwo  # noqa: E402
from toptwo import reference  # noqa: E402


@pytest.mark.parametrize("check, lookup, name", [
    (teaching.check_answer_distribution,
     lambda p, q, g, h, K: toptwo.label_distribution(p, q, g, h, K), "toptwo.label_distribution"),
    (teaching.check_answer_distribution, toptwo.label_distribution, "toptwo.label_distribution"),
    (teaching.check_answer_distribution,
     lambda p, q, g, h, K: toptwo.TopTwoModel([p], [q], [[g, h]], n_labels=K)
     .label_probabilities()[0, 0], "TopTwoModel.label_probabilities"),
    (teaching.check_ex1_empirical_distribution,
     lambda A, K: (lambda c: c / c.sum(axis=1, keepdims=True))(
         toptwo.as_responses(A, K).task_label_counts()), "Responses.task_label_counts"),
    (teaching.check_binary_conversion,
     lambda A, k: toptwo.to_binary(A, k, n_labels=int(max(A.max(), k + 1))).toarray(),
     "toptwo.to_binary"),
    (teaching.check_reliability_estimator,
     lambda A2, top, r, K: toptwo.estimate_reliability(toptwo.as_responses(A2, K), top),
     "toptwo.estimate_reliability"),
    (teaching.check_plugin_mle,
     lambda a, p, q, K: tuple(toptwo.plugin_mle(toptwo.as_responses(a[:, None], K), p,
                                                np.array([q]))[0]), "toptwo.plugin_mle"),
    (teaching.check_binary_conversion, lambda A, k: reference.binary(A, k),
     "toptwo.reference.binary"),
    (teaching.check_plugin_mle,
     lambda a, p, q, K: tuple(reference.plugin_mle(a[:, None], p, np.array([q]), K)[0]),
     "toptwo.reference.plugin_mle"),
    (lambda fn: teaching.check_expected_binary(fn, g=3, h=1, K=3),
     lambda k: teaching.reference_expected_binary(3, 1, k, 3, symbols=(P, Q, S)),
     "teaching.reference_expected_binary"),
])
def test_library_lookups_are_rejected(check, lookup, name):
    with pytest.raises(ExerciseCheckFailed, match=f"your function calls {re.escape(name)}, "
                       "which does this exercise for you"):
        check(lookup)


def test_lookup_through_an_alias_is_rejected():
    ld = toptwo.model.label_distribution
    fake = getattr(toptwo, "label_" + "distribution")

    def sneaky(p, q, g, h, K):
        return fake(p, q, g, h, K) if p > 2 else ld(p, q, g, h, K)

    with pytest.raises(ExerciseCheckFailed, match="calls toptwo.label_distribution"):
        teaching.check_answer_distribution(sneaky)


def test_library_call_outside_the_students_function_is_allowed():
    # the check itself calls the library for its reference: only the student's call counts
    assert teaching.check_plugin_mle(mle_pair)
    assert teaching.check_binary_conversion(binary)


def test_answer_distribution_accepts_a_list_and_diagnoses_the_spammer_share():
    assert teaching.check_answer_distribution(
        lambda p, q, g, h, K: answer_distribution(p, q, g, h, K).tolist())
    no_share = (lambda p, q, g, h, K: answer_distribution(p, q, g, h, K)
                - (1 - p) / K * np.isin(np.arange(1, K + 1), (g, h)))
    first, err = first_diagnosis(teaching.check_answer_distribution, no_share)
    assert first.startswith("leave the spammer share (1-p)/K off the labels g and h"), first
    assert "sum to" in str(err)
    forgot_k = (lambda p, q, g, h, K: answer_distribution(p, q, g, h, K) - (1 - p) / K
                + (1 - p))
    first, err = first_diagnosis(teaching.check_answer_distribution, forgot_k)
    assert first.startswith("give every label the spammer share 1 - p instead of (1 - p)/K")
    assert "Your probabilities sum to 1.8, not 1." in str(err)


def test_ex01_check_cell_has_no_bare_assert_before_the_check():
    nb = nbformat.read(EXERCISES / "ex01_sampling.ipynb", as_version=4)
    for cell in nb.cells:
        if "teaching.check_answer_distribution" in cell.source:
            assert "assert" not in cell.source.split("teaching.check_answer_distribution")[0]


def test_expected_binary_float_fraction_says_use_rational():
    def with_float(k):
        pr1 = S * (P * (1 - Q) + (1 - P) * (1 / 3))
        pr2 = S * (1 - P) * (1 / 3)
        pr3 = S * (P * Q + (1 - P) * (1 / 3))
        return -pr1 + pr2 + pr3 if k == 1 else -pr1 - pr2 + pr3

    first, err = first_diagnosis(teaching.check_expected_binary, with_float, g=3, h=1, K=3)
    assert "use sp.Rational(1, 3)" in first
    assert "(otherwise it is right)" in str(err)


def test_hints_do_not_print_the_answer():
    with pytest.raises(ExerciseCheckFailed) as info:
        teaching.check_expected_binary(lambda k: -expected_binary_31(k), g=3, h=1, K=3)
    assert "r^(k) =" not in info.value.args[0] and "2 p r" not in info.value.args[0]
    with pytest.raises(ExerciseCheckFailed) as info:
        teaching.check_fit_exponent(lambda a, ns: -fit_exponent(a, ns))
    assert "polyfit" not in info.value.args[0]


def test_centered_binary_k_minus_2_is_named_first():
    first, _ = first_diagnosis(teaching.check_centered_binary,
                               lambda EA, k, s, K: EA - s * (K - 2 * k) / (K - 2))
    assert first.startswith("divide by K - 2 instead of K in the shift"), first


def test_plugin_mle_factor_k_is_named_first():
    first, _ = first_diagnosis(teaching.check_plugin_mle, lambda a, p, q, K: mle_pair(
        a, p, q, K, weight=lambda pp, qq: np.log1p(pp * qq / (1 - pp))))
    assert first == "leave out the factor K inside the log", first


def test_unbiased_simulation_detects_the_stage_one_half():
    # ex04 setting: s = 0.6, s1 = 0.3; A^1 used with the rate of A^2
    p = np.array([0.0, 0.3, 0.6, 0.9])
    K, m, R, s, s1 = 4, 200, 300, 0.6, 0.3
    sigma1 = s * s1 * (p + 2 * (1 - p) / K)
    wrong_mean = K / (K - 2) * (sigma1 / (s * (1 - s1)) - 2 / K)
    with pytest.raises(ExerciseCheckFailed, match="stage-1 half A\\^1 instead of the held-out"):
        teaching.check_unbiased_simulation(wrong_mean, p, n_tasks=m, rate=s * (1 - s1),
                                           n_labels=K, n_replicates=R, stage1_rate=s * s1)


def test_ex04_uses_unequal_halves():
    nb = nbformat.read(EXERCISES / "ex04_reliability.ipynb", as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert "s, s1, R = 0.6, 0.3, 300" in text and "stage1_rate=s * s1" in text
    assert "[0.05, 0.99]" in text and "[0, 0.99]" not in text


# ---------------------------------------------------------- exercise 6b scan
NS_GRID_NB = np.geomspace(8, 600, 15)
TARGET, REPS, N_WORKERS = 0.1, 2, 600


def pair_error(method, alpha, ns, rng):          # replaced by the check's test curves
    raise AssertionError("the check must replace pair_error")


def ns_needed(method, alpha, rng, *, target=None, interpolate="log", reps=None, scale=1.0):
    target = TARGET if target is None else target
    previous = None
    for ns in NS_GRID:
        err = np.mean([pair_error(method, alpha, ns, rng) for _ in range(reps or REPS)])
        if err <= target:
            if previous is None or interpolate == "none":
                return float(ns) * scale
            ns0, err0 = previous
            t = (err0 - target) / (err0 - err)
            if interpolate == "linear":
                return float(ns0 + t * (ns - ns0)) * scale
            return float(np.exp(np.log(ns0) + t * np.log(ns / ns0))) * scale
        previous = (ns, err)
    return float("nan")


NS_GRID = NS_GRID_NB


def test_ns_needed_correct_passes_and_globals_are_restored():
    assert teaching.check_ns_needed(ns_needed)
    assert globals()["pair_error"] is pair_error and globals()["TARGET"] == 0.1


@pytest.mark.parametrize("kwargs, diagnosis", [
    (dict(interpolate="none"), "return the first grid point at or below the target without interpolating"),
    (dict(scale=1 / 600), "return s = ns / n instead of the queries per task n s"),
    (dict(target=0.2), "use a 20% target"),
    (dict(interpolate="linear"), "interpolate linearly in n s"),
    (dict(reps=1), "use one replicate per grid point"),
])
def test_ns_needed_diagnoses(kwargs, diagnosis):
    first, _ = first_diagnosis(teaching.check_ns_needed,
                               lambda m, a, rng: ns_needed(m, a, rng, **kwargs))
    assert first.startswith(diagnosis), first


def test_ns_needed_hard_coded_fails():
    hard = {("mv", 0.2): 391.5, ("mv", 0.3): 173.0, ("mv", 0.45): 68.1, ("mv", 0.7): 29.7,
            ("tt2", 0.2): 83.2, ("tt2", 0.3): 57.3, ("tt2", 0.45): 44.6, ("tt2", 0.7): 29.8}

    def hard_coded(method, alpha, rng):
        return hard[(method, alpha)]

    first, _ = first_diagnosis(teaching.check_ns_needed, hard_coded)
    assert first.startswith("return a value without calling pair_error"), first
    # exponents typed in directly still pass the range check, but not ns_needed's check
    assert teaching.check_scaling_exponents(-2.0, -1.0)


def test_check_result_prints_one_line():
    assert str(teaching.check_binary_conversion(binary)) == "passed: ex3 binary conversion (7 inputs)"
