"""Tests of toptwo.io: reading worker,task,label CSV files and writing result CSVs."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

import toptwo

from toptwo import Responses
from toptwo.io import read_triples_csv, write_reliability_csv, write_results_csv


def _write(tmp_path, text, name="answers.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- happy paths
def test_string_ids_first_appearance_order(tmp_path):
    path = _write(tmp_path, "worker,task,label\n"
                            "alice,q2,3\n"
                            "bob,q1,1\n"
                            "alice,q1,2\n"
                            "carol,q3,5\n")
    R = read_triples_csv(path)
    assert isinstance(R, Responses)
    assert R.shape == (3, 3) and R.nnz == 4 and R.n_labels == 5
    assert list(R.worker_ids) == ["alice", "bob", "carol"]
    assert list(R.task_ids) == ["q2", "q1", "q3"]
    A = R.toarray()
    expected = np.array([[3, 2, 0],
                         [0, 1, 0],
                         [0, 0, 5]])
    np.testing.assert_array_equal(A, expected)


def test_columns_in_any_order_whitespace_bom_and_blank_lines(tmp_path):
    path = tmp_path / "a.csv"
    path.write_bytes("\ufefflabel , task,worker\n\n 2, t1 , w1\n1,t1,w2\n\n".encode("utf-8"))
    R = read_triples_csv(path, n_labels=4)
    assert list(R.worker_ids) == ["w1", "w2"] and list(R.task_ids) == ["t1"]
    np.testing.assert_array_equal(R.toarray(), [[2], [1]])
    assert R.n_labels == 4


def test_quoted_ids_with_commas(tmp_path):
    path = _write(tmp_path, 'worker,task,label\n"Smith, J.","is it red, or blue?",2\n'
                            'x,"is it red, or blue?",1\n')
    R = read_triples_csv(path)
    assert list(R.worker_ids) == ["Smith, J.", "x"]
    assert list(R.task_ids) == ["is it red, or blue?"]


def test_numeric_looking_ids_stay_strings(tmp_path):
    path = _write(tmp_path, "worker,task,label\n007,10,1\n7,010,2\n")
    R = read_triples_csv(path)
    assert list(R.worker_ids) == ["007", "7"]
    assert list(R.task_ids) == ["10", "010"]


def test_label_base_zero(tmp_path):
    path = _write(tmp_path, "worker,task,label\na,t,0\nb,t,3\n")
    R = read_triples_csv(path, label_base=0)
    np.testing.assert_array_equal(R.toarray(), [[1], [4]])
    assert R.n_labels == 4


def test_n_labels_larger_than_any_label(tmp_path):
    path = _write(tmp_path, "worker,task,label\na,t,1\nb,t,2\n")
    assert read_triples_csv(path, n_labels=7).n_labels == 7
    assert read_triples_csv(path).n_labels == 2


@pytest.mark.parametrize("policy, expected", [("first", 2), ("last", 4)])
def test_duplicates_policies_follow_file_order(tmp_path, policy, expected):
    path = _write(tmp_path, "worker,task,label\na,t,2\nb,t,1\na,t,4\n")
    R = read_triples_csv(path, duplicates=policy)
    assert R.nnz == 2
    np.testing.assert_array_equal(R.toarray(), [[expected], [1]])


def test_roundtrip_random_triples(tmp_path):
    rng = np.random.default_rng(3)
    n, m, K = 7, 11, 4
    pairs = rng.choice(n * m, size=40, replace=False)
    w, t = np.divmod(pairs, m)
    lab = rng.integers(1, K + 1, size=40)
    text = "task,label,worker\n" + "".join(f"T{b},{c},W{a}\n" for a, b, c in zip(w, t, lab))
    R = read_triples_csv(_write(tmp_path, text), n_labels=K)
    rows = {(R.worker_ids[i], R.task_ids[j]): int(x) for i, j, x in
            zip(R.workers, R.tasks, R.labels)}
    assert rows == {(f"W{a}", f"T{b}"): int(c) for a, b, c in zip(w, t, lab)}


# --------------------------------------------------------------------- errors
def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_triples_csv(tmp_path / "nope.csv")


def test_empty_file(tmp_path):
    path = _write(tmp_path, "\n\n")
    with pytest.raises(ValueError, match=r"answers\.csv: the file is empty; expected a header "
                                         r"row 'worker,task,label'"):
        read_triples_csv(path)


def test_header_only(tmp_path):
    path = _write(tmp_path, "worker,task,label\n")
    with pytest.raises(ValueError, match=r"answers\.csv: the file has a header but no answers"):
        read_triples_csv(path)


def test_extra_column_refused(tmp_path):
    path = _write(tmp_path, "worker,task,label,time\na,t,1,3\n")
    with pytest.raises(ValueError, match=r"answers\.csv, line 1: the header \['worker', 'task', "
                                         r"'label', 'time'\] has column\(s\) 'time' besides "
                                         r"worker, task and label; .*ignore the others, pass "
                                         r"columns=.*--columns worker,task,label"):
        read_triples_csv(path)


def test_header_case_matters(tmp_path):
    path = _write(tmp_path, "Worker,task,label\na,t,1\n")
    with pytest.raises(ValueError, match=r"line 1: .*no column\(s\) 'worker'.*If they are "
                                         r"'Worker', 'task', 'label', .*--columns "
                                         r"Worker,task,label\)"):
        read_triples_csv(path)


def test_missing_column(tmp_path):
    path = _write(tmp_path, "worker,task\na,t\n")
    with pytest.raises(ValueError, match=r"answers\.csv, line 1: the header \['worker', "
                                         r"'task'\] has no column\(s\) 'label'\. Name the "
                                         r"worker, task and label columns with"):
        read_triples_csv(path)


def test_repeated_column(tmp_path):
    path = _write(tmp_path, "worker,task,label,task\na,t,1,t\n")
    with pytest.raises(ValueError, match=r"line 1: .*names column\(s\) 'task' more than "
                                         r"once"):
        read_triples_csv(path)


def test_no_header_row(tmp_path):
    path = _write(tmp_path, "a,t,1\nb,t,2\n")
    with pytest.raises(ValueError, match=r"line 1: the header \['a', 't', '1'\] has no "
                                         r"column\(s\) 'worker', 'task', 'label'.*If the file "
                                         r"has no header row, .*--no-header"):
        read_triples_csv(path)


def test_wrong_number_of_fields(tmp_path):
    path = _write(tmp_path, "worker,task,label\na,t,1\nb,t\n")
    with pytest.raises(ValueError, match=r"answers\.csv, line 3: expected 3 fields separated "
                                         r"by ',' as in the header; got 2: \['b', 't'\]"):
        read_triples_csv(path)


def test_empty_worker_id(tmp_path):
    path = _write(tmp_path, "worker,task,label\na,t,1\n  ,t,2\n")
    with pytest.raises(ValueError, match=r"line 3: the worker id must be a non-empty string; "
                                         r"got '  '"):
        read_triples_csv(path)


def test_row_of_empty_fields_is_not_skipped(tmp_path):
    path = _write(tmp_path, "worker,task,label\na,t,1\n   \n,,\n")
    with pytest.raises(ValueError, match=r"line 4: the worker id must be a non-empty string"):
        read_triples_csv(path)


def test_empty_task_id(tmp_path):
    path = _write(tmp_path, "worker,task,label\na,,2\n")
    with pytest.raises(ValueError, match=r"line 2: the task id must be a non-empty string"):
        read_triples_csv(path)


def test_blank_label(tmp_path):
    path = _write(tmp_path, "worker,task,label\na,t,1\nb,t,\n")
    with pytest.raises(ValueError, match=r"answers\.csv, line 3: the label must be an integer "
                                         r">= 1; got a blank label \(worker 'b', task 't'\)\. "
                                         r"Every row is an answer"):
        read_triples_csv(path)


def test_zero_label(tmp_path):
    path = _write(tmp_path, "worker,task,label\na,t,1\nb,t,0\n")
    with pytest.raises(ValueError, match=r"line 3: the label must be an integer >= 1; got '0' "
                                         r"\(worker 'b', task 't'\)\. Every row is an answer: "
                                         r"leave unanswered pairs out"):
        read_triples_csv(path)


@pytest.mark.parametrize("bad", ["2.5", "x", "nan", "1e3", "2.0"])
def test_non_integer_label(tmp_path, bad):
    path = _write(tmp_path, f"worker,task,label\na,t,{bad}\n")
    with pytest.raises(ValueError, match=rf"line 2: the label must be an integer >= 1; got "
                                         rf"'{re.escape(bad)}' \(worker 'a', task 't'\)"):
        read_triples_csv(path)


def test_negative_label(tmp_path):
    path = _write(tmp_path, "worker,task,label\na,t,-2\n")
    with pytest.raises(ValueError, match=r"line 2: the label must be an integer >= 1; got '-2'"):
        read_triples_csv(path)


def test_label_above_n_labels(tmp_path):
    path = _write(tmp_path, "worker,task,label\na,t,1\nb,t,6\n")
    with pytest.raises(ValueError, match=r"answers\.csv, line 3: the label must be an integer "
                                         r"in 1\.\.5 \(n_labels=5\); got '6' \(worker 'b', "
                                         r"task 't'\)"):
        read_triples_csv(path, n_labels=5)


def test_label_base_zero_range_in_message(tmp_path):
    path = _write(tmp_path, "worker,task,label\na,t,4\n")
    with pytest.raises(ValueError, match=r"line 2: the label must be an integer in 0\.\.3 "
                                         r"\(n_labels=4\); got '4'"):
        read_triples_csv(path, n_labels=4, label_base=0)


def test_single_label_value_cannot_infer_K(tmp_path):
    path = _write(tmp_path, "worker,task,label\na,t,1\nb,u,1\n")
    with pytest.raises(ValueError, match=r"answers\.csv, line 2: n_labels was not given and the "
                                         r"largest label in the file is 1, so K would be 1 < 2"):
        read_triples_csv(path)


def test_duplicate_error_names_ids_and_lines(tmp_path):
    path = _write(tmp_path, "worker,task,label\n"
                            "ann,q9,2\n"
                            "bob,q9,3\n"
                            "bob,q1,1\n"
                            "ann,q9,4\n"
                            "bob,q1,1\n"
                            "bob,q1,2\n")
    msg = (r"answers\.csv: 2 \(worker, task\) pair\(s\) occur more than once \(3 extra "
           r"rows out of 6\); e\.g\. worker 'ann' answered task 'q9' on line 2 \(label 2\) "
           r"and on line 5 \(label 4\)\. Pass duplicates='first' or duplicates='last'")
    with pytest.raises(ValueError, match=msg):
        read_triples_csv(path)


def test_duplicate_error_label_base_zero(tmp_path):
    path = _write(tmp_path, "worker,task,label\nw,t,0\nw,t,3\n")
    with pytest.raises(ValueError, match=r"on line 2 \(label 0\) and on line 3 \(label 3\)"):
        read_triples_csv(path, label_base=0)


@pytest.mark.parametrize("kwargs, msg", [
    ({"duplicates": "keep"}, r"The 'duplicates' parameter of read_triples_csv must be one of "
                             r"'error', 'first', 'last'; got 'keep' instead"),
    ({"n_labels": 1}, r"The 'n_labels' parameter of read_triples_csv must be an int >= 2; "
                      r"got 1 instead"),
    ({"label_base": -1}, r"The 'label_base' parameter of read_triples_csv must be an int >= 0"),
])
def test_bad_parameters(tmp_path, kwargs, msg):
    path = _write(tmp_path, "worker,task,label\na,t,1\nb,t,2\n")
    with pytest.raises(ValueError, match=msg):
        read_triples_csv(path, **kwargs)


# -------------------------------------------------------------------- writers
def test_write_results_csv_to_file_object():
    buf = io.StringIO()
    write_results_csv(buf, ["q1", "q,2", "q3"], np.array([[2, 1], [3, 4], [0, 0]]),
                      np.array([0.75, 0.5, np.nan]))
    assert buf.getvalue() == ("task,g,h,confusion\n"
                              "q1,2,1,0.75\n"
                              '"q,2",3,4,0.5\n'
                              "q3,,,\n")


def test_write_results_csv_label_base_and_path(tmp_path):
    out = tmp_path / "out.csv"
    write_results_csv(out, ["a"], np.array([[1, 3]]), np.array([0.625]), label_base=0)
    assert out.read_text() == "task,g,h,confusion\na,0,2,0.625\n"


def test_write_results_csv_shape_mismatch():
    with pytest.raises(ValueError, match=r"write_results_csv needs top_two of shape \(n_tasks, "
                                         r"2\) and confusion of shape \(n_tasks,\) with "
                                         r"n_tasks=2; got \(1, 2\) and \(1,\) instead"):
        write_results_csv(io.StringIO(), ["a", "b"], np.array([[1, 2]]), np.array([0.5]))


def test_write_reliability_csv():
    buf = io.StringIO()
    write_reliability_csv(buf, ["w1", "w2"], np.array([0.25, np.nan]))
    assert buf.getvalue() == "worker,reliability\nw1,0.25\nw2,\n"
    with pytest.raises(ValueError, match=r"reliability of shape \(n_workers,\) with "
                                         r"n_workers=2; got \(1,\) instead"):
        write_reliability_csv(buf, ["w1", "w2"], np.array([0.25]))


def test_read_write_roundtrip_through_estimator(tmp_path):
    model = toptwo.TopTwoModel.scenario("easy", n_workers=20, n_tasks=30, n_labels=4, rng=5)
    A = model.sample(0.5, rng=6)
    text = "worker,task,label\n" + "".join(
        f"w{i},t{j},{c}\n" for i, j, c in zip(A.workers, A.tasks, A.labels))
    R = read_triples_csv(_write(tmp_path, text), n_labels=4)
    est = toptwo.baselines.MajorityVote(rng=0).fit(R)
    out = tmp_path / "res.csv"
    write_results_csv(out, R.task_ids, est.top_two_, est.confusion_)
    lines = out.read_text().splitlines()
    assert lines[0] == "task,g,h,confusion" and len(lines) == 1 + R.n_tasks
    first = lines[1].split(",")
    assert first[0] == R.task_ids[0]
    assert (int(first[1]), int(first[2])) == tuple(est.top_two_[0])


@pytest.mark.parametrize("bad", ["1_0", "+3", "2.0", " 3x"])
def test_csv_labels_must_be_plain_integers(tmp_path, bad):
    f = tmp_path / "a.csv"
    f.write_text(f"worker,task,label\na,t1,1\nb,t1,{bad}\n")
    with pytest.raises(ValueError, match=r"a\.csv, line 3: the label must be"):
        read_triples_csv(f)
    f.write_text("worker,task,label\na,t1,1\nb,t1,3\n")          # the valid twin passes
    assert read_triples_csv(f).nnz == 2
