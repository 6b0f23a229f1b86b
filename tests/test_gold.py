"""Gold-task calibration of p_g (issue 42): :func:`toptwo.posterior.calibrate`,
:func:`~toptwo.posterior.gold_probabilities`, ``to_frame(gold=...)`` and ``infer --gold``."""

from __future__ import annotations

import numpy as np
import pytest

import toptwo
from toptwo.__main__ import main
from toptwo.io import read_gold_csv
from toptwo.posterior import (MIN_GOLD, calibrate, gold_probabilities,
                              task_probabilities)


def _expit(z):
    return 1.0 / (1.0 + np.exp(-z))


def _logit(p):
    return np.log(p) - np.log1p(-p)


def _standard_errors(p, a, b):
    """Asymptotic standard errors of Platt's (a, b) at the truth: the inverse Fisher
    information of the logistic model on (logit p, 1)."""
    X = np.column_stack([_logit(p), np.ones_like(p)])
    w = _expit(X @ np.array([a, b]))
    info = X.T @ (X * (w * (1 - w))[:, None])
    return np.sqrt(np.diag(np.linalg.inv(info)))


# ------------------------------------------------------------------ the calibrator
def test_calibration_is_monotone_and_keeps_the_ranking():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.3, 1.0, 60)
    cal = calibrate(p, rng.random(60) < p ** 2)
    assert cal.slope > 0
    grid = np.linspace(0, 1, 2001)
    assert np.all(np.diff(cal(grid)) >= 0)
    q = rng.uniform(0, 1, 500)
    np.testing.assert_array_equal(np.argsort(cal(q), kind="stable"),
                                  np.argsort(q, kind="stable"))
    assert np.isnan(cal(np.array([np.nan, 0.5]))[0])


@pytest.mark.parametrize("a0, b0", [(0.4, -0.5), (2.0, 0.3)])
def test_twin_miscalibrated_p_g_is_fixed_and_the_check_fails_on_wrong_input(a0, b0):
    """Outcomes drawn from P(right) = expit(a0 logit p + b0): the fitted (a, b) is within
    4 standard errors of (a0, b0) (normal approximation: a false alarm at most 1.3e-4
    for both together); the same check fails for outcomes drawn from p itself (a
    calibrated p_g, a0 = 1, b0 = 0), which differ from the truth by >= 6 standard
    errors here, so the check can tell them apart."""
    n = 1500
    rng = np.random.default_rng(42)
    p = rng.uniform(0.02, 0.98, n)
    se = _standard_errors(p, a0, b0)

    def check(y):
        cal = calibrate(p, y)
        return bool(np.all(np.abs(np.array([cal.slope, cal.intercept]) - [a0, b0])
                           <= 4 * se))

    assert check(rng.random(n) < _expit(a0 * _logit(p) + b0))
    wrong = rng.random(n) < p                         # outcomes of a calibrated p_g
    assert np.max(np.abs(np.array([1.0, 0.0]) - [a0, b0]) / se) >= 6
    assert not check(wrong)
    # and on held-out tasks the calibrated p_g is closer to the outcome probabilities
    cal = calibrate(p, rng.random(n) < _expit(a0 * _logit(p) + b0))
    truth = _expit(a0 * _logit(p) + b0)
    assert np.abs(cal(p) - truth).mean() < 0.25 * np.abs(p - truth).mean()


def test_calibration_does_not_depend_on_the_order_of_the_gold_tasks():
    rng = np.random.default_rng(1)
    p, y = rng.uniform(0.5, 1.0, 40), rng.random(40) < 0.8
    perm = rng.permutation(40)
    a, b = calibrate(p, y), calibrate(p[perm], y[perm])
    assert (a.slope, a.intercept) == (b.slope, b.intercept)


def test_every_gold_g_right_gives_a_finite_map_below_one():
    p = np.linspace(0.6, 1.0, MIN_GOLD)
    cal = calibrate(p, np.ones(MIN_GOLD, bool))
    assert np.isfinite([cal.slope, cal.intercept]).all()
    assert (cal(p) < 1).all() and cal.n_correct == MIN_GOLD


@pytest.mark.parametrize("p, y, match", [
    (np.full(MIN_GOLD - 1, 0.9), np.ones(MIN_GOLD - 1), r"at least MIN_GOLD=10 gold tasks"),
    (np.r_[np.full(MIN_GOLD, 0.9), 1.2], np.ones(MIN_GOLD + 1), r"`p_g` of calibrate must lie in"
     r" \[0.0, 1.0\]; found 1.2 at index 10"),
    (np.r_[np.full(MIN_GOLD, 0.9), np.nan], np.ones(MIN_GOLD + 1), r"found nan at index 10"),
    (np.full(MIN_GOLD, 0.9), np.r_[np.ones(MIN_GOLD - 1), 2], r"True/False.*2.0 at index 9"),
    (np.full(MIN_GOLD, 0.9), np.ones(MIN_GOLD + 1), r"must have the shape of `p_g`"),
])
def test_calibrate_strict_input(p, y, match):
    with pytest.raises(ValueError, match=match):
        calibrate(p, y)


# ------------------------------------------------------------- on a fitted estimator
@pytest.fixture(scope="module")
def fitted():
    model = toptwo.TopTwoModel.random(30, 120, 4, rng=3)
    A = model.sample(0.3, rng=4)
    return model, toptwo.TopTwo2(rng=0).fit(A)


def test_gold_probabilities(fitted):
    model, est = fitted
    gold = np.where(np.arange(120) % 4 == 0, model.top_two[:, 0], 0)
    pr = gold_probabilities(est, gold)
    base = task_probabilities(est)
    is_gold = gold > 0
    right = est.top_two_[:, 0] == gold
    assert set(pr["p_g_source"][is_gold]) == {"gold"}
    assert set(pr["p_g_source"][~is_gold]) == {"calibrated"}
    np.testing.assert_array_equal(pr["p_g"][is_gold], right[is_gold].astype(float))
    cal = calibrate(base["p_g"][is_gold], right[is_gold])
    np.testing.assert_allclose(pr["p_g"][~is_gold], cal(base["p_g"][~is_gold]))
    # p_pair = calibrated p_g x the model's P(h | g true): never above p_g
    assert np.all(pr["p_pair"] <= pr["p_g"] + 1e-12)
    np.testing.assert_allclose(pr["p_pair"][~is_gold] / pr["p_g"][~is_gold],
                               base["p_pair"][~is_gold] / base["p_g"][~is_gold])


def test_to_frame_with_gold_by_task_id():
    pd = pytest.importorskip("pandas")
    model = toptwo.TopTwoModel.random(30, 60, 4, rng=5)
    R = model.sample(0.4, rng=6)
    df = pd.DataFrame({"worker": [f"w{i}" for i in R.workers],
                       "task": [f"t{j}" for j in R.tasks], "label": R.labels})
    est = toptwo.TopTwo2(rng=0).fit(df)
    gold = pd.Series({f"t{j}": int(model.top_two[j, 0]) for j in range(0, 60, 3)})
    frame = est.to_frame(gold=gold)
    assert list(frame.columns) == ["g", "h", "confusion", "p_g", "p_pair", "p_g_source"]
    assert (frame.loc[gold.index, "p_g_source"] == "gold").all()
    assert frame["p_g"].between(0, 1).all()
    assert list(est.to_frame().columns) == ["g", "h", "confusion", "p_g", "p_pair"]
    with pytest.raises(ValueError, match=r"names task 'nope', which is not among the 60"):
        est.to_frame(gold={"nope": 1, **gold.to_dict()})
    with pytest.raises(ValueError, match=r"gives task 't0' the label 5; labels are integers "
                                         r"1\.\.4"):
        est.to_frame(gold={**gold.to_dict(), "t0": 5})
    with pytest.raises(ValueError, match=r"gold only with kind='tasks'"):
        est.to_frame("workers", gold=gold)


def test_gold_probabilities_strict(fitted):
    model, est = fitted
    with pytest.raises(ValueError, match=r"shape \(120,\)"):
        gold_probabilities(est, model.top_two[:10, 0])
    few = np.where(np.arange(120) < MIN_GOLD - 1, model.top_two[:, 0], 0)
    with pytest.raises(ValueError, match=r"at least MIN_GOLD=10 gold tasks.*got 9"):
        gold_probabilities(est, few)
    bad = np.where(np.arange(120) < 20, 7, 0)
    with pytest.raises(ValueError, match=r"gives task 0 the label 7; labels are 1\.\.4"):
        gold_probabilities(est, bad)


# ------------------------------------------------------------------- the CLI
@pytest.fixture(scope="module")
def crowd_csv(tmp_path_factory):
    model = toptwo.TopTwoModel.random(25, 40, 4, rng=7)
    R = model.sample(0.5, rng=8)
    folder = tmp_path_factory.mktemp("gold")
    path = folder / "answers.csv"
    path.write_text("worker,task,label\n" + "".join(
        f"w{w},q{t},{lab}\n" for w, t, lab in zip(R.workers, R.tasks, R.labels)))
    truth = {f"q{j}": int(model.top_two[j, 0]) for j in range(40)}
    return str(path), truth


def _gold_file(tmp_path, lines, name="gold.txt"):
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


def _run(capsys, argv, status):
    assert main(argv) == status
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    return cap


def test_cli_gold_columns(crowd_csv, tmp_path, capsys):
    path, truth = crowd_csv
    gold_ids = [f"q{j}" for j in range(0, 40, 2)]
    # tab-separated without header, as web_truth.txt; a repeated task (as dog_truth.txt)
    lines = [f"{t}\t{truth[t]}" for t in gold_ids] + [f"q0\t{truth['q0']}"]
    cap = _run(capsys, ["infer", path, "--gold", _gold_file(tmp_path, lines)], 0)
    rows = [r.split(",") for r in cap.out.strip().splitlines()]
    assert rows[0] == ["task", "g", "h", "confusion", "p_g", "p_pair", "p_g_source"]
    by_task = {r[0]: r for r in rows[1:]}
    for t, r in by_task.items():
        if t in gold_ids:
            assert r[6] == "gold" and r[4] == ("1" if int(r[1]) == truth[t] else "0")
        else:
            assert r[6] == "calibrated" and 0 < float(r[4]) < 1
    # the same with a header 'label,task' and commas, and the library agrees
    lines = ["label,task"] + [f"{truth[t]},{t}" for t in gold_ids]
    cap2 = _run(capsys, ["infer", path, "--gold", _gold_file(tmp_path, lines, "g.csv")], 0)
    assert cap2.out == cap.out
    R = toptwo.io.read_triples_csv(path)
    est = toptwo.TopTwo2(rng=0).fit(R)
    gold = read_gold_csv(_gold_file(tmp_path, lines, "g.csv"), R.task_ids, R.n_labels)
    pr = gold_probabilities(est, gold, R)
    assert [f"{round(float(v), 6):g}" for v in pr["p_g"][:3]] == \
        [f"{float(by_task[t][4]):g}" for t in R.task_ids[:3]]


@pytest.mark.parametrize("lines, match", [
    (["q0 1", "nope 2"], r"gold\.txt, line 2: task 'nope' is not among the 40 tasks of the "
                         r"answers"),
    (["q0 1", "q1 5"], r"gold\.txt, line 2: the label of task 'q1' must be an integer in "
                       r"1\.\.4 \(K=4, as in the answers\); got '5'"),
    (["q0 1", "q1 x"], r"gold\.txt, line 2: the label of task 'q1' must be an integer"),
    (["q0 1", "q0 2"], r"gold\.txt, line 2: task 'q0' is given label 2 here and 1 on line 1"),
    (["q0 1 3"], r"gold\.txt, line 1: expected 2 fields \(task and label\) separated by "
                 r"'space'; got 3"),
    (["item answer", "q0 1"], r"gold\.txt, line 1: the first line .* is neither a header "
                              r"naming the columns task and label"),
    ([], r"gold\.txt: the file holds no gold answers"),
    ([f"q{j} 1" for j in range(MIN_GOLD - 1)],
     r"gold\.txt: 9 gold task\(s\); at least 10 are needed to calibrate p_g"),
])
def test_cli_gold_strict(crowd_csv, tmp_path, capsys, lines, match):
    path, _ = crowd_csv
    cap = _run(capsys, ["infer", path, "--gold", _gold_file(tmp_path, lines)], 2)
    import re
    assert re.search(match, cap.err), cap.err
    assert cap.out == "" and len(cap.err.strip().splitlines()) == 1


def test_cli_gold_label_base_and_option_errors(crowd_csv, tmp_path, capsys):
    path, truth = crowd_csv
    # label 0 without --label-base 0: the hint names it
    cap = _run(capsys, ["infer", path, "--gold", _gold_file(tmp_path, ["q0 0"])], 2)
    assert "--label-base 0" in cap.err
    cap = _run(capsys, ["infer", "-", "--gold", "-"], 2)
    assert "cannot both be standard input" in cap.err
    g = _gold_file(tmp_path, [f"{t} {v}" for t, v in truth.items()])
    cap = _run(capsys, ["infer", path, "--gold", g, "--output", g], 2)
    assert "is the same file as --gold" in cap.err


def test_cli_gold_with_uncertain_prints_the_calibrated_p_g(crowd_csv, tmp_path, capsys):
    path, truth = crowd_csv
    g = _gold_file(tmp_path, [f"{t} {v}" for t, v in list(truth.items())[:12]])
    cap = _run(capsys, ["infer", path, "--gold", g, "--uncertain", "3"], 0)
    p_g = {r.split(",")[0]: r.split(",")[4] for r in cap.out.strip().splitlines()[1:]}
    rows = cap.err.strip().splitlines()
    assert rows[0] == "task,expected_gain,p_g" and len(rows) == 4
    assert all(p_g[r.split(",")[0]] == r.split(",")[2] for r in rows[1:])


def test_cli_uncertain_never_lists_a_gold_task(crowd_csv, tmp_path, capsys):
    """A gold task's answer is known: re-labelling it cannot lower the g error, so
    --uncertain lists only the other tasks, in the order of the run without gold."""
    path, truth = crowd_csv
    plain = _run(capsys, ["infer", path, "--uncertain", "5"], 0).err.strip().splitlines()[1:]
    listed = [r.split(",")[0] for r in plain]
    others = [t for t in truth if t not in listed]
    known = {t: truth[t] for t in listed[:2] + others[:MIN_GOLD]}
    g = _gold_file(tmp_path, [f"{t} {v}" for t, v in known.items()])
    rows = _run(capsys, ["infer", path, "--gold", g, "--uncertain", "3"], 0).err
    got = [r.split(",")[0] for r in rows.strip().splitlines()[1:]]
    assert not set(got) & set(known) and got == listed[2:5]


def test_gold_task_without_answers_is_refused():
    A = np.zeros((6, 14), dtype=int)
    A[:, :13] = np.tile([1, 1, 1, 2, 3, 1], (13, 1)).T
    A[:3, 6:13] = 2
    est = toptwo.MajorityVote().fit(A, n_labels=3)
    gold = np.ones(14, dtype=int)
    with pytest.raises(ValueError, match=r"gives task 13 a known answer, but nobody answered"):
        gold_probabilities(est, gold)


def test_gold_mapping_with_an_id_of_another_type_names_the_mismatch():
    model = toptwo.TopTwoModel.random(20, 30, 4, rng=3)
    est = toptwo.TopTwo2(rng=0).fit(model.sample(0.5, rng=4))
    gold = {j: int(model.top_two[j, 0]) for j in range(MIN_GOLD)}
    gold["3"] = gold.pop(3)
    with pytest.raises(ValueError, match=r"names task '3'.*a task 3 exists: the id's type "
                                         r"differs, str here, int in the data"):
        gold_probabilities(est, gold)
    gold[4 + 100] = 1
    del gold["3"]
    with pytest.raises(ValueError, match=r"names task 104, which is not among the 30 tasks of "
                                         r"the data the estimator was fitted on\.$"):
        gold_probabilities(est, gold)
