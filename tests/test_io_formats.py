"""The formats answers come in (issue 42 item 3, issue 39 items 2, 5 and 10): separators,
header order and other names, files without a header, compressed files, standard input,
pipes and named pipes. Every layout gives the same Responses as the plain CSV, with every
engine; every refusal names the file, the line and the fix."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toptwo.__main__ import main
from toptwo.io import read_triples_csv

ENGINES = ["python", "pandas", "pyarrow"]
ROWS = [("alice", "q1", "3"), ("bob", "q1", "2"), ("alice", "q2", "1"), ("carol", "q2", "1"),
        ("bob", "q3", "3"), ("carol", "q3", "2")]
DATASETS = Path("/work/shared/datasets")


def _same(R, S):
    assert R.shape == S.shape and R.n_labels == S.n_labels
    for a in ("workers", "tasks", "labels"):
        np.testing.assert_array_equal(getattr(R, a), getattr(S, a))
    assert list(R.worker_ids) == list(S.worker_ids)
    assert list(R.task_ids) == list(S.task_ids)


def _text(sep=",", header=("worker", "task", "label"), order=("worker", "task", "label"),
          extra=()):
    lines = [] if header is None else [sep.join(list(header) + list(extra))]
    for w, t, lab in ROWS:
        f = {"worker": w, "task": t, "label": lab}
        lines.append(sep.join([f[c] for c in order] + ["9"] * len(extra)))
    return "\n".join(lines) + "\n"


@pytest.fixture
def plain(tmp_path):
    p = tmp_path / "plain.csv"
    p.write_text(_text())
    return read_triples_csv(p, engine="python")


# ------------------------------------------------------------------ separators, headers
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("sep", [",", "\t", ";", " "])
def test_separators_sniffed_and_given(tmp_path, plain, engine, sep):
    p = tmp_path / "f.txt"
    p.write_text(_text(sep))
    _same(read_triples_csv(p, engine=engine), plain)
    _same(read_triples_csv(p, engine=engine, sep=sep), plain)
    name = {",": "comma", "\t": "tab", ";": "semicolon", " ": "space"}[sep]
    _same(read_triples_csv(p, engine=engine, sep=name), plain)


def test_two_separators_on_the_first_line_are_refused(tmp_path):
    p = tmp_path / "f.csv"
    p.write_text("worker,task\tlabel\na,q,1\n")
    with pytest.raises(ValueError, match=r"f\.csv, line 1: cannot tell the field separator: "
                                         r"the line holds both ',' and 'tab'.*--sep"):
        read_triples_csv(p)


def test_wrong_separator_given_names_the_one_in_the_row(tmp_path):
    p = tmp_path / "f.tsv"
    p.write_text(_text("\t"))
    with pytest.raises(ValueError, match=r"f\.tsv, line 1: the header .* has no column"):
        read_triples_csv(p, sep=",")
    p.write_text("worker\ttask\tlabel\na,q,1\n")
    with pytest.raises(ValueError, match=r"line 2: expected 3 fields separated by 'tab' .*got "
                                         r"1.* holds ',': if that is the separator, pass "
                                         r"sep= \(CLI: --sep ,\)"):
        read_triples_csv(p)


@pytest.mark.parametrize("engine", ENGINES)
def test_columns_names_three_among_others(tmp_path, plain, engine):
    p = tmp_path / "f.csv"
    p.write_text(_text(header=("annotator", "item", "answer"), extra=("time", "time")))
    R = read_triples_csv(p, engine=engine, columns=("annotator", "item", "answer"))
    _same(R, plain)
    p.write_text(_text(header=("item", "annotator", "answer"), order=("task", "worker", "label"),
                       extra=("duration",)))
    _same(read_triples_csv(p, engine=engine, columns=["annotator", "item", "answer"]), plain)


def test_other_names_get_the_columns_to_pass(tmp_path):
    p = tmp_path / "f.csv"
    p.write_text(_text(header=("question", "worker", "answer"),
                       order=("task", "worker", "label")))
    with pytest.raises(ValueError, match=r"f\.csv, line 1: the header .* has no column\(s\) "
                                         r"'task', 'label'\. If they are 'worker', 'question', "
                                         r"'answer', pass .*--columns worker,question,answer"):
        read_triples_csv(p)
    with pytest.raises(ValueError, match=r"line 1: .*no column\(s\) 'rater' \(as given by "
                                         r"columns"):
        read_triples_csv(p, columns=("rater", "question", "answer"))


def test_extra_column_gets_the_columns_fix(tmp_path):
    p = tmp_path / "f.csv"
    p.write_text(_text(extra=("time",)))
    with pytest.raises(ValueError, match=r"line 1: .* 'time' besides worker, task and label; "
                                         r"nothing is dropped silently: .*--columns "
                                         r"worker,task,label\)"):
        read_triples_csv(p)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("order", [("worker", "task", "label"), ("task", "worker", "label"),
                                   ("label", "task", "worker")])
def test_files_without_a_header(tmp_path, plain, engine, order):
    p = tmp_path / "f.txt"
    p.write_text(_text(" ", header=None, order=order))
    _same(read_triples_csv(p, engine=engine, order=order), plain)
    _same(read_triples_csv(p, engine=engine, order=",".join(order)), plain)
    p.write_text(_text("\t", header=None, order=order, extra=("x",)))
    _same(read_triples_csv(p, engine=engine, order=list(order) + ["-"]), plain)


def test_a_headerless_file_read_with_a_header_says_so(tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("1\t1\t5\n1\t2\t5\n")
    with pytest.raises(ValueError, match=r"f\.txt, line 1: the first line .* looks like an "
                                         r"answer, not a header.*--no-header task,worker,label"):
        read_triples_csv(p)


def test_a_header_read_as_data_says_so(tmp_path):
    p = tmp_path / "f.csv"
    p.write_text(_text())
    with pytest.raises(ValueError, match=r"f\.csv, line 1: the label must be.*'label'.* The "
                                         r"line looks like a header: .*--no-header"):
        read_triples_csv(p, order=("worker", "task", "label"))


@pytest.mark.parametrize("kwargs, msg", [
    ({"sep": "|"}, r"'sep' parameter .* must be one of"),
    ({"columns": ("a", "b")}, r"'columns' parameter .* three distinct"),
    ({"order": ("worker", "task")}, r"'order' parameter .* worker, task and label once each"),
])
def test_bad_layout_arguments(tmp_path, kwargs, msg):
    p = tmp_path / "f.csv"
    p.write_text(_text())
    with pytest.raises(ValueError, match=msg):
        read_triples_csv(p, **kwargs)
    with pytest.raises(TypeError, match="not both"):
        read_triples_csv(p, columns=("a", "b", "c"), order=("worker", "task", "label"))


@pytest.mark.skipif(not DATASETS.is_dir(), reason="the paper's datasets are not here")
@pytest.mark.parametrize("name, order, base, n, m, K", [
    ("web", "task,worker,label", 1, 177, 2665, 5),
    ("dog", "task,worker,label", 1, 109, 807, 4),
    ("adult2", "worker,task,label", 0, 269, 333, 4),
])
def test_the_papers_files_read_with_no_header(name, order, base, n, m, K):
    R = read_triples_csv(DATASETS / f"{name}.txt", order=order, label_base=base,
                         duplicates="last")
    assert (R.n_workers, R.n_tasks, R.n_labels) == (n, m, K)


# ------------------------------------------------------------------ compressed files
_COMPRESS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("suffix", list(_COMPRESS))
def test_compressed_files_read_as_the_plain_one(tmp_path, plain, engine, suffix):
    data = _COMPRESS[suffix](_text().encode())
    for name in (f"f.csv{suffix}", "f.csv"):        # by content, whatever the name
        p = tmp_path / name
        p.write_bytes(data)
        _same(read_triples_csv(p, engine=engine), plain)


@pytest.mark.parametrize("engine", ["python", "pandas"])
@pytest.mark.parametrize("suffix, kind", [(".gz", "gzip"), (".bz2", "bzip2"), (".xz", "xz")])
def test_a_plain_file_named_compressed_is_refused_by_name(tmp_path, engine, suffix, kind):
    # issue 39 item 5: a decompressor's message naming no file (a traceback with pandas)
    p = tmp_path / f"answers{suffix}"
    p.write_text(_text())
    with pytest.raises(ValueError, match=rf"answers\{suffix}: the name ends in '\{suffix}' but "
                                         rf"the file is not {kind}-compressed \(it begins with "
                                         rf"b'worker,task,labe'\); if it is a plain text file, "
                                         rf"rename it"):
        read_triples_csv(p, engine=engine)


@pytest.mark.parametrize("suffix, tool", [(".gz", "gzip -t"), (".bz2", "bzip2 -t"),
                                          (".xz", "xz -t")])
def test_a_cut_compressed_file_is_refused_by_name(tmp_path, suffix, tool):
    p = tmp_path / f"answers.csv{suffix}"
    p.write_bytes(_COMPRESS[suffix](_text().encode() * 50)[:60])
    with pytest.raises(ValueError, match=rf"answers\.csv\{suffix}: the file starts as a .* "
                                         rf"cannot be decompressed .*damaged or cut short "
                                         rf"\(check it with '{tool}'\)"):
        read_triples_csv(p)


# ------------------------------------------------------------------ pipes, stdin, objects
@pytest.mark.parametrize("engine", ENGINES)
def test_file_objects_are_read_once(plain, engine):
    _same(read_triples_csv(io.BytesIO(_text().encode()), engine=engine), plain)
    _same(read_triples_csv(io.StringIO(_text()), engine=engine), plain)
    _same(read_triples_csv(io.BytesIO(gzip.compress(_text().encode())), engine=engine), plain)


def test_standard_input_dash(monkeypatch, plain):
    monkeypatch.setattr(sys, "stdin", _Stdin(io.BytesIO(_text().encode())))
    _same(read_triples_csv("-"), plain)


def test_standard_input_terminal_refused(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.setattr(sys, "stdin", Tty(""))
    with pytest.raises(ValueError, match="standard input is a terminal"):
        read_triples_csv("-")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("compress", [False, True])
def test_named_pipe_is_read_once_without_hanging(tmp_path, plain, engine, compress):
    # issue 39 item 2: the reader opened the file up to three times; the second open of a
    # named pipe waited for ever for a writer
    fifo = tmp_path / "answers.fifo"
    os.mkfifo(fifo)
    data = _text().encode()
    data = gzip.compress(data) if compress else data

    def write():
        with open(fifo, "wb") as fh:
            fh.write(data)
    th = threading.Thread(target=write, daemon=True)
    th.start()
    result = {}

    def read():
        result["R"] = read_triples_csv(fifo, engine=engine)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(20)
    assert not reader.is_alive(), "the reader hangs on a named pipe"
    _same(result["R"], plain)


def _cli(args, stdin_bytes, shell=False):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    cmd = args if shell else [sys.executable, "-m", "toptwo", *args]
    return subprocess.run(cmd, input=stdin_bytes, capture_output=True, timeout=120, env=env,
                          shell=shell, executable="/bin/bash" if shell else None)


class _Stdin(io.TextIOWrapper):
    def isatty(self):
        return False


def test_cli_reads_pipes_and_standard_input(tmp_path, monkeypatch, capsys):
    # cat f | infer /dev/stdin said "the file is empty" or took a data row for the header
    data = _text("\t").encode()
    args = ["infer", "--method", "majority"]
    monkeypatch.setattr(sys, "stdin", _Stdin(io.BytesIO(data)))
    assert main([*args, "-"]) == 0
    want = capsys.readouterr().out
    assert want.startswith("task,g,h,confusion")
    monkeypatch.setattr(sys, "stdin", _Stdin(io.BytesIO(gzip.compress(data))))
    assert main([*args, "-"]) == 0
    assert capsys.readouterr().out == want
    monkeypatch.setattr(sys, "stdin", _Stdin(io.BytesIO(b"")))
    assert main([*args, "-"]) == 2
    assert capsys.readouterr().err == ("python -m toptwo infer: error: standard input: the "
                                       "file is empty; expected a header row "
                                       "'worker,task,label' followed by one row per answer.\n")
    # real pipes, in a real shell: /dev/stdin and a process substitution
    got = _cli([*args, "/dev/stdin"], data)
    assert (got.returncode, got.stdout.decode()) == (0, want), got.stderr
    gz = tmp_path / "a.tsv.gz"
    gz.write_bytes(gzip.compress(data))
    got = _cli(f"{sys.executable} -m toptwo infer --method majority <(zcat '{gz}')", None,
               shell=True)
    assert (got.returncode, got.stdout.decode()) == (0, want), got.stderr


def test_cli_layout_options(tmp_path, capsys):
    p = tmp_path / "a.txt"
    p.write_text(_text(" ", header=None, order=("task", "worker", "label")))
    assert main(["infer", str(p), "--no-header", "task,worker,label", "--method",
                 "majority"]) == 0
    out = capsys.readouterr().out
    q = tmp_path / "b.csv"
    q.write_text(_text(";", header=("annotator", "item", "answer"), extra=("time",)))
    assert main(["infer", str(q), "--columns", "annotator,item,answer", "--sep", "semicolon",
                 "--method", "majority"]) == 0
    assert capsys.readouterr().out == out
    assert main(["infer", str(q), "--columns", "a,b", "--method", "majority"]) == 2
    assert "--columns: must be three distinct column names" in capsys.readouterr().err
    assert main(["infer", str(q), "--no-header", "worker,task"]) == 2
    assert "--no-header: must give the role of each field" in capsys.readouterr().err
    assert main(["infer", str(q), "--no-header", "worker,task,label", "--columns",
                 "a,b,c"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err


# ------------------------------------------------------------------ property / fuzz
_id = st.text(alphabet="abcXYZ01é _-", min_size=1, max_size=4).map(str.strip).filter(bool)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(_id, _id, st.integers(1, 6)), min_size=1, max_size=12,
                     unique_by=lambda r: (r[0], r[1])),
       sep=st.sampled_from([",", "\t", ";"]),
       perm=st.permutations(["worker", "task", "label"]),
       header=st.booleans(), extra=st.integers(0, 2),
       compression=st.sampled_from([None, ".gz", ".bz2", ".xz"]),
       engine=st.sampled_from(ENGINES))
def test_any_layout_reads_as_the_plain_csv(tmp_path_factory, rows, sep, perm, header, extra,
                                           compression, engine):
    d = tmp_path_factory.mktemp("fmt")
    ref = d / "ref.csv"
    ref.write_text("worker,task,label\n" + "".join(f"{w},{t},{lab}\n" for w, t, lab in rows))
    want = read_triples_csv(ref, engine="python", n_labels=6)
    names = {"worker": "who", "task": "what", "label": "answer"}
    lines = [sep.join([names[c] for c in perm] + [f"x{k}" for k in range(extra)])] \
        if header else []
    for w, t, lab in rows:
        f = {"worker": w, "task": t, "label": str(lab)}
        lines.append(sep.join([f[c] for c in perm] + ["0"] * extra))
    data = ("\n".join(lines) + "\n").encode()
    name = "f.txt" + (compression or "")
    if compression:
        data = _COMPRESS[compression](data)
    (d / name).write_bytes(data)
    if header:
        R = read_triples_csv(d / name, engine=engine, sep=sep, n_labels=6,
                             columns=(names["worker"], names["task"], names["label"]))
    else:
        R = read_triples_csv(d / name, engine=engine, sep=sep, n_labels=6,
                             order=list(perm) + ["-"] * extra)
    _same(R, want)


@pytest.mark.skipif(not os.path.exists("/dev/fd"), reason="no /dev/fd")
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(_id, _id, st.integers(1, 6)), min_size=1, max_size=30,
                     unique_by=lambda r: (r[0], r[1])),
       sep=st.sampled_from([",", "\t"]), compression=st.sampled_from([None, ".gz", ".xz"]),
       engine=st.sampled_from(ENGINES), chunk=st.integers(1, 64))
def test_any_content_through_a_pipe_reads_as_the_file(tmp_path_factory, rows, sep,
                                                      compression, engine, chunk):
    # a real pipe (/dev/fd/N), written in small chunks by another thread: read once,
    # whole, the same Responses as the file
    text = sep.join(("worker", "task", "label")) + "\n" + "".join(
        f"{w}{sep}{t}{sep}{lab}\n" for w, t, lab in rows)
    f = tmp_path_factory.mktemp("pipe") / "f.csv"
    f.write_text(text)
    want = read_triples_csv(f, engine="python", n_labels=6)
    data = text.encode()
    data = _COMPRESS[compression](data) if compression else data
    r, w = os.pipe()

    def write():
        with os.fdopen(w, "wb") as fh:
            for k in range(0, len(data), chunk):
                fh.write(data[k:k + chunk])
                fh.flush()
    th = threading.Thread(target=write, daemon=True)
    th.start()
    try:
        got = read_triples_csv(f"/dev/fd/{r}", engine=engine, n_labels=6)
    finally:
        os.close(r)
        th.join(10)
    _same(got, want)


@pytest.mark.parametrize("name, content, msg", [
    ("web.txt", "1\t1\t5\n1\t2\t5\n",
     r"web\.txt, line 1: the first line .* looks like an answer.*--no-header "
     r"task,worker,label as in dog and web"),
    ("bench.csv", "question,worker,answer\nq1,a,1\n",
     r"bench\.csv, line 1: .*no column\(s\) 'task', 'label'.*--columns worker,question,answer"),
    ("extra.csv", "worker,task,label,time\na,q,1,5\n",
     r"extra\.csv, line 1: .*'time' besides .*--columns worker,task,label"),
    ("mixed.csv", "worker,task\tlabel\na,q,1\n", r"mixed\.csv, line 1: .*--sep"),
    ("plain.csv.gz", "worker,task,label\na,q,1\n",
     r"plain\.csv\.gz: the name ends in '\.gz' but the file is not gzip-compressed.*rename"),
    ("short.tsv", "worker\ttask\tlabel\na\tq\n",
     r"short\.tsv, line 2: expected 3 fields separated by 'tab'"),
])
def test_cli_refusals_name_file_line_and_fix(tmp_path, capsys, name, content, msg):
    import re
    p = tmp_path / name
    p.write_text(content)
    assert main(["infer", str(p), "--method", "majority"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m toptwo infer: error: ") and err.count("\n") == 1
    assert re.search(msg, err), err


def test_a_space_too_many_is_located(tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("1 1 5\n1 2 5 \n")
    with pytest.raises(ValueError, match=r"f\.txt, line 2: expected 3 fields separated by "
                                         r"'space' .*got 4.*exactly one space, with none at "
                                         r"either end"):
        read_triples_csv(p, order=("task", "worker", "label"))
