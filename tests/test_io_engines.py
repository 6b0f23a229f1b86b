"""The fast CSV readers (pyarrow, pandas) give the strict reader's result or its error.

The fast readers hand every file with anything unusual to the strict one, so the
contract is simple: for any file, every engine returns the same Responses (arrays, ids,
K) or raises the same message. Checked on hand-picked dialect cases and on fuzzed files.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toptwo.io import read_triples_csv

ENGINES = ["python", "pandas", "pyarrow"]


def _outcome(path, engine, **kwargs):
    try:
        R = read_triples_csv(path, engine=engine, **kwargs)
    except ValueError as exc:
        return ("error", str(exc))
    return ("ok", R.shape, R.n_labels, R.workers.tolist(), R.tasks.tolist(),
            R.labels.tolist(), list(R.worker_ids), list(R.task_ids))


def _same_everywhere(path, **kwargs):
    outcomes = [_outcome(path, engine, **kwargs) for engine in ENGINES]
    assert outcomes[1] == outcomes[0], (path.read_bytes()[:300], kwargs, outcomes)
    assert outcomes[2] == outcomes[0], (path.read_bytes()[:300], kwargs, outcomes)
    return outcomes[0]


@pytest.fixture(autouse=True)
def _libraries():
    pytest.importorskip("pyarrow")
    pytest.importorskip("pandas")


CASES = [
    "worker,task,label\na,q1,1\nb,q1,2\nc,q2,3\n",
    "\ufefflabel , task,worker\n\n 2, t1 , w1\n1,t1,w2\n\n",
    "worker,task,label\r\na,t,1\r\nb,t,2\r\n",
    "worker,task,label\ra,t,1\rb,t,2\r",
    "worker,task,label\n a ,t,1\na,t ,2\nb,t,2\n",                # ids merged after strip
    "worker,task,label\na\u00a0,t,1\nb,t,2\n",                      # Unicode space stripped
    "worker,task,label\na,t,0002\nb,t,1\n",                        # leading zeros
    "worker,task,label\na,t," + "0" * 5000 + "2\nb,t,1\n",          # 5001 digits: label 2
    "worker,task,label\na,t,1" + "0" * 5000 + "\nb,t,1\n",          # a huge label
    'worker,task,label\n"Smith, J.",q,2\nx,q,1\n',
    'worker,task,label\na"b,q,2\nx,q,1\n',
    "worker,task,label\na,t,1\n  \nb,t,2\n",
    "worker,task,label\na,t,1\n,,\n",
    "worker,task,label\na,t,1\nb,t,2,\n",
    "worker,task,label\na,t,1,x\nb,t,2,y\n",                       # pandas' implicit index
    "worker,task,label\na,t,1\nb,t\n",
    "worker,task,label\na,t,1\na,t,2\n",
    "worker,task,label\na,t,1\nb,t,0\n",
    "worker,task,label\na,t,1\nb,t,+2\n",
    "worker,task,label\na,t,1\nb,t,5000\n",
    "worker,task,label\na,t,1\nb,u,1\n",
    "worker,task,label\na,t\x00,1\nb,t,2\n",
    "worker,task,label\n",
    "worker,task,label\n" + "a," + "x" * 200_000 + ",2\nb,t,1\n",
    "worker,task\na,t\n",
    '"worker","task","label"\n"a","t",1\n"b","t","2"\n',        # R's write.csv
    '"worker",task,label\n"a"x,"t",1\n"b","t","2"\n',
    'worker,task,label\n"a""b",t,1\nb,t,2\n',
    'worker,task,label\n "a",t,1\nb,t,2\n',
    'worker,task,label\n"a" ,t,1\nb,t,2\n',
    'worker,task,label\n"",t,1\nb,t,2\n',
    'worker,task,label\na,t,""\nb,t,2\n',
    'worker,task,label\n"a\nb",t,1\nb,t,2\n',
    'worker,"task,label"\na,"t",1\n',
]


@pytest.mark.parametrize("text", CASES)
@pytest.mark.parametrize("kwargs", [{}, {"label_base": 0}, {"duplicates": "last"},
                                    {"n_labels": 5}])
def test_dialect_cases_same_for_every_engine(tmp_path, text, kwargs):
    path = tmp_path / "f.csv"
    path.write_text(text, encoding="utf-8", newline="")
    _same_everywhere(path, **kwargs)


def test_undecodable_bytes_same_for_every_engine(tmp_path):
    path = tmp_path / "f.csv"
    path.write_bytes(b"worker,task,label\na,q1,1\nb\xff,q1,2\n")
    assert _same_everywhere(path)[1].startswith(f"{path}, line 3: the file is not valid UTF-8")


def test_huge_label_is_located_and_leading_zeros_are_read(tmp_path):
    path = tmp_path / "f.csv"
    path.write_text("worker,task,label\na,t,1\nb,t,9" + "9" * 5000 + "\n")
    kind, msg = _same_everywhere(path)
    assert kind == "error" and msg.startswith(f"{path}, line 3: n_labels was not given and "
                                              f"the label 99999999999999999999...(5001 "
                                              f"characters) (worker 'b', task 't')"), msg
    kind, msg = _same_everywhere(path, n_labels=4)
    assert msg.startswith(f"{path}, line 3: the label must be an integer in 1..4 "
                          f"(n_labels=4); got '99999"), msg
    path.write_text("worker,task,label\na,t,1\nb,t," + "0" * 5000 + "2\n")
    out = _same_everywhere(path)
    assert out[0] == "ok" and out[5] == [1, 2]


def test_label_zero_suggests_label_base_zero(tmp_path):
    path = tmp_path / "f.csv"
    path.write_text("worker,task,label\na,t,1\nb,t,0\n")
    msg = _same_everywhere(path)[1]
    assert msg.endswith("Every row is an answer: leave unanswered pairs out of the file. If "
                        "the file numbers the choices from 0 (0..K-1), pass label_base=0 "
                        "(CLI: --label-base 0)."), msg
    # with label_base=0 the messages use the file's numbering 0..K-1
    path.write_text("worker,task,label\na,t,0\nb,t,-1\n")
    msg = _same_everywhere(path, label_base=0)[1]
    assert "got '-1'" in msg and "label_base=0 (CLI" not in msg
    path.write_text("worker,task,label\na,t,0\nb,u,0\n")
    msg = _same_everywhere(path, label_base=0)[1]
    assert "the largest label in the file is 0, so K would be 1 < 2" in msg, msg


_ids = st.sampled_from(["a", "b", " a", "a ", "é", "\u00a0b", "c\u2003", "1", "01", '"a"',
                        "a,b", "", " ", "x\ty"])
_labels = st.sampled_from(["1", "2", "3", "02", "0", "-1", "", " 2", "2 ", "x", "9999",
                           "1.0", '"2"'])
_sep = st.sampled_from(["\n", "\r\n", "\r", "\n\n", "\n  \n"])


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(_ids, _ids, _labels), min_size=0, max_size=10),
       seps=st.lists(_sep, min_size=12, max_size=12),
       header=st.sampled_from(["worker,task,label", "label,worker,task", " task , label,worker",
                               "\ufeffworker,task,label"]),
       bom_extra=st.sampled_from(["", ",", ",x"]),
       kwargs=st.sampled_from([{}, {"label_base": 0}, {"duplicates": "first"},
                               {"n_labels": 4}]))
def test_fuzzed_files_same_for_every_engine(tmp_path_factory, rows, seps, header, bom_extra,
                                            kwargs):
    order = [c.strip().lstrip("\ufeff") for c in header.split(",")]
    text = header + seps[0]
    for k, (w, t, lab) in enumerate(rows):
        fields = {"worker": w, "task": t, "label": lab}
        line = ",".join(fields[c] for c in order)
        text += line + (bom_extra if k == len(rows) - 1 else "") + seps[(k + 1) % 12]
    path = tmp_path_factory.mktemp("eng") / "f.csv"
    path.write_text(text, encoding="utf-8", newline="")
    _same_everywhere(path, **kwargs)


@pytest.mark.parametrize("block", [None, 4096])
def test_large_file_fast_path_matches_strict(tmp_path, monkeypatch, block):
    import toptwo._csv_parse
    if block is not None:            # many blocks, one dictionary each: merged in file order
        monkeypatch.setattr(toptwo._csv_parse, "_BLOCK_SIZE", block)
    rng = np.random.default_rng(0)
    n = 20_000
    w = rng.integers(0, 300, n)
    t = rng.integers(0, 2000, n)
    keep = np.unique(w * 2000 + t, return_index=True)[1]
    w, t = w[np.sort(keep)], t[np.sort(keep)]
    lab = rng.integers(1, 6, len(w))
    path = tmp_path / "big.csv"
    path.write_text("worker,task,label\n" + "".join(
        f"w{a},task {b},{c}\n" for a, b, c in zip(w, t, lab)))
    assert _same_everywhere(path)[0] == "ok"


@pytest.mark.parametrize("engine", ["pandas", "pyarrow"])
def test_clean_files_do_not_fall_back(tmp_path, monkeypatch, engine):
    import toptwo.io

    def strict(*args, **kwargs):
        raise AssertionError("fell back to the strict reader")
    path = tmp_path / "f.csv"
    path.write_text("\ufeff task,worker ,label\n\nq1, a,1\nq1,b ,02\r\nq2,a\u00a0,3\n")
    expected = _outcome(path, "python")
    monkeypatch.setattr(toptwo.io, "_read_strict", strict)
    assert _outcome(path, engine) == expected
    assert _outcome(path, engine, duplicates="last", label_base=0, n_labels=5)[0] == "ok"
    path.write_text('"worker","task","label"\n"a","q 1",1\n"b","q 1","2"\n')   # R's style
    monkeypatch.undo()
    expected = _outcome(path, "python")
    monkeypatch.setattr(toptwo.io, "_read_strict", strict)
    assert _outcome(path, engine) == expected


def test_space_list_is_str_isspace():
    import re
    import sys

    from toptwo.io import _SPACE
    spaces = {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    listed = {chr(c) for c in range(sys.maxunicode + 1) if re.fullmatch(f"[{_SPACE}]", chr(c))}
    assert listed == spaces - {"\n"}
