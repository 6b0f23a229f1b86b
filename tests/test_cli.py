"""Tests of the command line ``python -m toptwo demo|infer`` (in-process via main())."""

from __future__ import annotations

import csv
import io
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import toptwo
import toptwo.posterior
from toptwo.__main__ import main, run_demo


def _triples_csv(tmp_path, R, name="answers.csv", label_shift=0):
    path = tmp_path / name
    with open(path, "w", newline="") as fh:
        fh.write("worker,task,label\n")
        for i, j, c in zip(R.workers, R.tasks, R.labels):
            fh.write(f"worker-{i},task-{j},{int(c) + label_shift}\n")
    return path


@pytest.fixture(scope="module")
def instance():
    model = toptwo.TopTwoModel.scenario("easy", n_workers=30, n_tasks=60, n_labels=5, rng=11)
    return model, model.sample(0.5, rng=12)


# ------------------------------------------------------------------------ demo
def test_demo_prints_table(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("toptwo demo: scenario 'hard', n=50 workers, m=500 tasks, K=5")
    header = next(i for i, line in enumerate(lines) if line.startswith("method"))
    assert lines[header].split() == ["method", "pair", "g", "h"]
    rows = [lines[header + k].split() for k in range(1, 5)]
    assert [r[0] for r in rows] == ["MajorityVote", "TopTwo1", "TopTwo2", "OracleMLE"]
    for r in rows:
        for x in r[1:]:
            assert len(x.split(".")[1]) == 3          # rounded to 3 decimals
            assert 0.0 <= float(x) <= 1.0
    assert "Error rates over the 500 tasks" in out


def test_demo_is_deterministic_and_matches_run_demo(capsys):
    assert main(["demo", "--seed", "3", "--scenario", "few_smart"]) == 0
    first = capsys.readouterr().out
    assert main(["demo", "--seed", "3", "--scenario", "few_smart"]) == 0
    assert capsys.readouterr().out == first
    errors, text = run_demo("few_smart", 10, 3)
    assert text + "\n" == first
    # The table shows the rounded errors of the estimators.
    row = next(line for line in first.splitlines() if line.startswith("OracleMLE"))
    assert row.split()[1] == f"{errors['OracleMLE']['pair']:.3f}"


def test_demo_seed_changes_instance(capsys):
    main(["demo", "--seed", "1"])
    a = capsys.readouterr().out
    main(["demo", "--seed", "2"])
    assert capsys.readouterr().out != a


def test_demo_oracle_not_worse_than_majority_on_easy_full_sampling():
    # With every worker answering every task (Q = n) the oracle MLE weighs the known
    # reliabilities; on `easy` it recovers g on (nearly) every task.
    errors, _ = run_demo("easy", 50, 0)
    assert errors["OracleMLE"]["g"] <= errors["MajorityVote"]["g"]
    assert errors["OracleMLE"]["g"] <= 0.02


@pytest.mark.parametrize("argv, msg", [
    (["demo", "--queries-per-task", "0"], r"--queries-per-task: must be an integer >= 1; "
                                          r"got '0'"),
    (["demo", "--queries-per-task", "ten"], r"--queries-per-task: must be an integer; got 'ten'"),
    (["demo", "--scenario", "medium"], r"--scenario: invalid choice: 'medium'"),
    (["demo", "--seed", "-1"], r"--seed: must be a non-negative integer; got '-1'"),
    (["demo", "--queries-per-task", "51"], r"error: --queries-per-task must be an integer in "
                                           r"1\.\.50 \(the number of workers\); got 51"),
    (["frobnicate"], r"invalid choice: 'frobnicate'"),
])
def test_demo_bad_arguments(capsys, argv, msg):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert re.search(msg, err), err


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "demo" in capsys.readouterr().err


def test_help_exits_zero(capsys):
    assert main(["infer", "--help"]) == 0
    out = capsys.readouterr().out
    for flag in ("--n-labels", "--duplicates", "--method", "--seed", "--output",
                 "--workers-output", "--label-base"):
        assert flag in out


def test_demo_subprocess():
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "toptwo", "demo"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "TopTwo2" in proc.stdout and "OracleMLE" in proc.stdout


# ----------------------------------------------------------------------- infer
@pytest.mark.parametrize("method, cls", [("toptwo2", toptwo.TopTwo2),
                                         ("toptwo1", toptwo.TopTwo1),
                                         ("majority", toptwo.baselines.MajorityVote),
                                         ("onecoin", toptwo.baselines.OneCoinDawidSkene)])
def test_infer_matches_library(tmp_path, capsys, instance, method, cls):
    model, R = instance
    path = _triples_csv(tmp_path, R)
    assert main(["infer", str(path), "--method", method, "--n-labels", "5"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["task", "g", "h", "confusion", "p_g", "p_pair"]
    assert len(rows) == 1 + R.n_tasks
    # The library on the same file (ids in order of first appearance).
    R2 = toptwo.io.read_triples_csv(path, n_labels=5)
    est = (cls() if cls is toptwo.baselines.OneCoinDawidSkene
           else cls(rng=0, tie_break="content") if cls is toptwo.baselines.MajorityVote
           else cls(rng=0)).fit(R2)
    conf = toptwo.posterior.task_probabilities(est, R2)
    for (tid, g, h, q, pg, c), j in zip(rows[1:], range(R2.n_tasks)):
        assert c == toptwo.io._fmt_float(conf["p_pair"][j], 6) and 0 < float(c) <= 1
        assert pg == toptwo.io._fmt_float(conf["p_g"][j], 6) and float(c) <= float(pg)
        assert tid == R2.task_ids[j]
        assert (int(g), int(h)) == tuple(est.top_two_[j])
        # written rounded to 6 decimal places (trailing zeros dropped)
        assert q == toptwo.io._fmt_float(est.confusion_[j], 6)
        assert float(q) == pytest.approx(est.confusion_[j], abs=5e-7)
        assert len(q.partition(".")[2]) <= 6


def test_infer_recovers_truth_with_original_ids(tmp_path, capsys, instance):
    model, R = instance
    path = _triples_csv(tmp_path, R)
    assert main(["infer", str(path)]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    g_hat = {r["task"]: int(r["g"]) for r in rows}
    truth = {f"task-{j}": int(model.top_two[j, 0]) for j in range(R.n_tasks)}
    # This checks the id bookkeeping, not the estimator: with the right task ids the
    # g error on `easy` at s = 0.5 is a few percent (0.02-0.12 over seeds), while a
    # scrambled id mapping would be right only by chance, error about (K-1)/K = 0.8.
    assert _g_error(g_hat, truth) <= 0.25
    ids = sorted(truth)
    scrambled = {t: g_hat[ids[(k + 1) % len(ids)]] for k, t in enumerate(ids)}
    assert _g_error(scrambled, truth) > 0.25          # the same check rejects a bad mapping


def _g_error(g_hat, truth):
    return sum(g_hat[t] != truth[t] for t in truth) / len(truth)


def test_infer_output_files_and_label_base(tmp_path, capsys, instance):
    _, R = instance
    path = _triples_csv(tmp_path, R, label_shift=-1)            # labels 0..4 in the file
    out, wout = tmp_path / "res.csv", tmp_path / "w.csv"
    assert main(["infer", str(path), "--label-base", "0", "--output", str(out),
                 "--workers-output", str(wout)]) == 0
    assert capsys.readouterr().out == ""
    rows = list(csv.DictReader(open(out, newline="")))
    assert {int(r["g"]) for r in rows} <= {0, 1, 2, 3, 4}
    assert all(r["g"] != r["h"] for r in rows)
    # Same estimate as with labels 1..K, shifted down by one.
    path1 = _triples_csv(tmp_path, R, name="one.csv")
    assert main(["infer", str(path1), "--n-labels", "5"]) == 0
    rows1 = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [int(r["g"]) - 1 for r in rows1] == [int(r["g"]) for r in rows]
    wrows = list(csv.DictReader(open(wout, newline="")))
    assert list(wrows[0]) == ["worker", "reliability"]
    assert len(wrows) == R.n_workers
    assert {r["worker"] for r in wrows} == {f"worker-{i}" for i in range(R.n_workers)}
    assert all(np.isfinite(float(r["reliability"])) for r in wrows)


def test_infer_duplicates_policies(tmp_path, capsys):
    path = tmp_path / "d.csv"
    path.write_text("worker,task,label\n" + "".join(
        f"w{i},t{j},{1 + (i + j) % 3}\n" for i in range(6) for j in range(4))
        + "w0,t0,3\n")
    assert main(["infer", str(path), "--method", "majority"]) == 2
    err = capsys.readouterr().err
    assert ("error: " in err and "d.csv: 1 (worker, task) pair(s) occur more than once "
            "(1 extra rows out of 25); e.g. worker 'w0' answered task 't0' on line 2 (label 1) "
            "and on line 26 (label 3)" in err)
    assert "Traceback" not in err
    for policy in ("first", "last"):
        assert main(["infer", str(path), "--method", "majority", "--duplicates", policy]) == 0
        capsys.readouterr()


@pytest.mark.parametrize("content, msg", [
    ("worker,task,label,extra\na,t,1,x\n",
     r"bad\.csv, line 1: the header \['worker', 'task', 'label', 'extra'\] has column\(s\) "
     r"'extra' besides worker, task and label; .*--columns worker,task,label"),
    ("worker,task,label\na,t,1\nb,t,0\n",
     r"bad\.csv, line 3: the label must be an integer >= 1; got '0' \(worker 'b', task 't'\)"),
    ("worker,task,label\na,t,1\nb,t,\n", r"bad\.csv, line 3: the label must be an integer >= 1; "
                                         r"got a blank label"),
    ("worker,task,label\na,t,yes\n", r"bad\.csv, line 2: the label must be an integer >= 1; "
                                     r"got 'yes'"),
    ("", r"bad\.csv: the file is empty"),
    ("worker,task,label\n", r"bad\.csv: the file has a header but no answers"),
    ("worker,task,label\na,t,1\nb,t,2\n",
     r"bad\.csv: TopTwo2 needs n_labels >= 3; got n_labels=2"),
])
def test_infer_bad_files(tmp_path, capsys, content, msg):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    assert main(["infer", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Traceback" not in captured.err
    assert captured.err.startswith("python -m toptwo infer: error: ")
    assert re.search(msg, captured.err), captured.err


def test_infer_label_above_n_labels(tmp_path, capsys):
    path = tmp_path / "k.csv"
    path.write_text("worker,task,label\na,t,1\nb,t,6\n")
    assert main(["infer", str(path), "--n-labels", "5"]) == 2
    assert ("k.csv, line 3: the label must be an integer in 1..5 (n_labels=5); got '6'"
            in capsys.readouterr().err)


def test_infer_missing_file(tmp_path, capsys):
    assert main(["infer", str(tmp_path / "missing.csv")]) == 2
    err = capsys.readouterr().err
    assert "No such file or directory" in err and "missing.csv" in err
    assert "Traceback" not in err


def test_infer_workers_output_needs_toptwo2(tmp_path, capsys, instance):
    _, R = instance
    path = _triples_csv(tmp_path, R)
    assert main(["infer", str(path), "--method", "majority", "--workers-output",
                 str(tmp_path / "w.csv")]) == 2
    assert ("--workers-output needs --method toptwo2, em or onecoin (only TopTwo2's step 3, "
            "TopTwoEM and one-coin Dawid-Skene estimate worker reliabilities); got --method "
            "majority." in capsys.readouterr().err)
    assert not (tmp_path / "w.csv").exists()


@pytest.mark.parametrize("argv, msg", [
    (["infer", "f.csv", "--method", "glad"], "argument --method: invalid choice: 'glad'"),
    (["infer", "f.csv", "--duplicates", "keep"], "argument --duplicates: invalid choice: 'keep'"),
    (["infer", "f.csv", "--n-labels", "x"], "argument --n-labels: must be an integer; got 'x'"),
    (["infer"], "the following arguments are required: FILE"),
])
def test_infer_bad_arguments(capsys, argv, msg):
    assert main(argv) == 2
    assert msg in capsys.readouterr().err
