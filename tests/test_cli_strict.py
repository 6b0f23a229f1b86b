"""The command line never prints a traceback, names file/line/ids in every error, checks
outputs before writing, writes atomically with a fixed precision and exits quietly on a
closed pipe."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import toptwo
from toptwo.__main__ import main

HEAD = "worker,task,label\n"


def _run(capsys, argv, status=2):
    assert main(argv) == status
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    return cap


def _file(tmp_path, body, name="in.csv", mode="w"):
    path = tmp_path / name
    if mode == "wb":
        path.write_bytes(body)
    else:
        path.write_text(body)
    return str(path)


@pytest.mark.parametrize("body, extra, msg", [
    # a label too large for int64: one line, exit 2 (was an OverflowError traceback)
    (HEAD + "a,q1,1\nb,q1,99999999999999999999\n", [],
     r"in\.csv, line 3: n_labels was not given and the label 99999999999999999999 \(worker "
     r"'b', task 'q1'\) would make K = 99999999999999999999 > 1000"),
    (HEAD + "a,q1,1\nb,q1,99999999999999999999\n", ["--n-labels", "5"],
     r"in\.csv, line 3: the label must be an integer in 1\.\.5 \(n_labels=5\); got "
     r"'99999999999999999999'"),
    # the K guard is not hidden behind the duplicates error (which comes later in the file)
    (HEAD + "a,q1,1\na,q1,2\nb,q1,5000\n", [],
     r"in\.csv, line 4: n_labels was not given and the label 5000 \(worker 'b', task 'q1'\) "
     r"would make K = 5000 > 1000"),
    (HEAD + "a,q1,1\na,q1,2\nb,q1,5000\n", ["--duplicates", "last"],
     r"in\.csv, line 4: n_labels was not given and the label 5000"),
    (HEAD + "a,q1,1\nb,q1,7\n", ["--duplicates", "last", "--n-labels", "4"],
     r"in\.csv, line 3: the label must be an integer in 1\.\.4 \(n_labels=4\); got '7' "
     r"\(worker 'b', task 'q1'\)"),
    # a K far beyond the data fails fast
    (HEAD + "a,q1,1\nb,q1,3\nc,q2,2\n", ["--n-labels", "100000000"],
     r"in\.csv: n_labels=100000000 \(CLI: --n-labels\) but the largest label in the file is "
     r"3; a K above 1000 is accepted only when the file contains a label that large"),
    # binary data padded to K = 3, and K = 2, name the alternatives
    (HEAD + "a,q1,1\nb,q1,2\nc,q2,2\n", ["--n-labels", "3"],
     r"in\.csv: TopTwo2 needs every label 1\.\.3 to occur in the data; label\(s\) 3 never "
     r"occur.*--method majority or --method onecoin"),
    (HEAD + "a,q1,1\nb,q1,2\n", ["--method", "toptwo1"],
     r"in\.csv: TopTwo1 needs n_labels >= 3; got n_labels=2\..*--method majority or --method "
     r"onecoin"),
    ("worker,task,label\n", [], r"in\.csv: the file has a header but no answers"),
])
def test_infer_errors_name_file_line_and_ids(tmp_path, capsys, body, extra, msg):
    cap = _run(capsys, ["infer", _file(tmp_path, body)] + extra)
    assert cap.out == ""
    assert cap.err.startswith("python -m toptwo infer: error: ")
    assert len(cap.err.strip().splitlines()) == 1
    import re
    assert re.search(msg, cap.err), cap.err


@pytest.mark.parametrize("body, msg", [
    (b"worker,task,label\na,q1,1\nb\xff,q1,2\n",
     "in.csv, line 3: the file is not valid UTF-8 (save it as UTF-8; undecodable bytes are "
     "shown as \\udcXX) (the worker id 'b\\udcff')."),
    (b"worker,task,label\na,q1,1\nb,q\xe92,2\n", "in.csv, line 3: the file is not valid UTF-8"),
    (b"worker,task,label\na,q1,1\nb,q1,\xe92\n", "in.csv, line 3: the file is not valid UTF-8"),
    (b"wor\xffker,task,label\na,q1,1\n", "in.csv, line 1: the file is not valid UTF-8"),
    (b"worker,task,label\na,q1,1\nb,\"q1,2\n", "in.csv, line 3:"),
])
def test_infer_non_utf8_and_broken_csv(tmp_path, capsys, body, msg):
    cap = _run(capsys, ["infer", _file(tmp_path, body, mode="wb")])
    assert msg in cap.err, cap.err


def test_read_triples_csv_field_too_large(tmp_path):
    path = _file(tmp_path, HEAD + "a,q1,1\n" + "b," + "x" * 200_000 + ",2\n")
    with pytest.raises(ValueError, match=r"in\.csv, line 3: not a readable CSV row "
                                         r"\(field larger than field limit"):
        toptwo.io.read_triples_csv(path)


# ------------------------------------------------------------------ outputs
@pytest.fixture
def good(tmp_path):
    model = toptwo.TopTwoModel.scenario("easy", n_workers=15, n_tasks=20, n_labels=4, rng=3)
    A = model.sample(0.6, rng=4)
    return _file(tmp_path, HEAD + "".join(f"w{i},t{j},{c}\n" for i, j, c in
                                          zip(A.workers, A.tasks, A.labels)))


def test_existing_output_needs_force(tmp_path, capsys, good):
    out = tmp_path / "out.csv"
    out.write_text("keep me\n")
    cap = _run(capsys, ["infer", good, "-o", str(out)])
    assert f"--output {out} already exists; pass --force to overwrite it." in cap.err
    assert out.read_text() == "keep me\n"
    _run(capsys, ["infer", good, "-o", str(out), "--force"], status=0)
    assert out.read_text().startswith("task,g,h,confusion,p_g,p_pair\n")
    assert "--force" in subprocess.run([sys.executable, "-m", "toptwo", "infer", "--help"],
                                       capture_output=True, text=True).stdout


def test_all_outputs_checked_before_any_is_written(tmp_path, capsys, good):
    out, wout = tmp_path / "res.csv", tmp_path / "nowhere" / "w.csv"
    cap = _run(capsys, ["infer", good, "-o", str(out), "--workers-output", str(wout)])
    assert "--workers-output" in cap.err and "does not exist (it is not created)" in cap.err
    assert not out.exists() and not wout.parent.exists()
    # a folder as output, the input as output, both outputs the same file
    cap = _run(capsys, ["infer", good, "-o", str(tmp_path)])
    assert f"--output {tmp_path} is a directory" in cap.err
    cap = _run(capsys, ["infer", good, "-o", good, "--force"])
    assert "is the same file as FILE " in cap.err
    cap = _run(capsys, ["infer", good, "-o", str(out), "--workers-output", str(out)])
    assert "is the same file as --output" in cap.err
    assert sorted(os.listdir(tmp_path)) == ["in.csv"]          # nothing written, no temp


def test_failed_write_leaves_no_partial_file(tmp_path, monkeypatch, capsys, good):
    out, wout = tmp_path / "res.csv", tmp_path / "w.csv"
    out.write_text("old\n")

    def boom(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(toptwo.__main__, "write_reliability_csv", boom)
    cap = _run(capsys, ["infer", good, "-o", str(out), "--workers-output", str(wout),
                        "--force"])
    assert f"error: --workers-output {wout} could not be written: disk full; no output " \
        f"was changed." in cap.err
    assert out.read_text() == "old\n" and not wout.exists()
    assert sorted(os.listdir(tmp_path)) == ["in.csv", "res.csv"]


def test_fixed_precision_output(tmp_path, capsys, good):
    out, wout = tmp_path / "res.csv", tmp_path / "w.csv"
    _run(capsys, ["infer", good, "-o", str(out), "--workers-output", str(wout)], status=0)
    for path in (out, wout):
        for row in path.read_text().splitlines()[1:]:
            value = row.rsplit(",", 1)[1]
            assert value == "" or len(value.partition(".")[2]) <= 6
            assert not value.startswith("-0") or float(value) != 0
    from toptwo.io import _fmt_float
    assert [_fmt_float(x, 6) for x in (0.25, 1.0, -1e-17, 0.1234565001, 2 / 3, np.nan)] == \
        ["0.25", "1", "0", "0.123457", "0.666667", ""]


def test_closed_stdout_exits_quietly(good):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    big = good.replace("in.csv", "big.csv")
    with open(big, "w") as fh:                     # many tasks: output larger than a pipe
        fh.write(HEAD + "".join(f"w{i},t{j},{1 + (i * j) % 4}\n" for i in range(6)
                                for j in range(20000)))
    proc = subprocess.run(f"{sys.executable} -m toptwo infer {big} --method majority | head -1",
                          shell=True, capture_output=True, text=True, env=env, timeout=120)
    assert proc.stdout == "task,g,h,confusion,p_g,p_pair\n"
    assert proc.stderr == "", proc.stderr


def test_onecoin_handles_binary_and_writes_reliabilities(tmp_path, capsys):
    rng = np.random.default_rng(0)
    rows = [f"w{i},t{j},{1 + int(rng.random() < 0.3)}" for i in range(8) for j in range(30)]
    path = _file(tmp_path, HEAD + "\n".join(rows) + "\n")
    wout = tmp_path / "w.csv"
    cap = _run(capsys, ["infer", path, "--method", "onecoin", "--workers-output", str(wout)],
               status=0)
    assert cap.out.startswith("task,g,h,confusion,p_g,p_pair\n")
    assert len(wout.read_text().splitlines()) == 9


# ------------------------------------------------------------------ fuzzing the CLI
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_field = st.one_of(st.sampled_from(["a", "b", "c", "q1", "q2", " ", "", "0", "1", "2", "3",
                                    "-1", "1.0", "99999999999999999999", "5000", "\"", "é",
                                    "1_0", "+3", "nan"]),
                   st.text(max_size=3))
_row = st.lists(_field, min_size=0, max_size=4).map(lambda r: ",".join(r))


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_row, max_size=8), header=st.sampled_from(
           ["worker,task,label", "label,worker,task", "worker,task", ""]),
       method=st.sampled_from(["majority", "toptwo2", "toptwo1", "onecoin"]),
       extra=st.sampled_from([[], ["--n-labels", "3"], ["--duplicates", "last"],
                              ["--label-base", "0"], ["--n-labels", "100000000"]]),
       junk=st.binary(max_size=6))
def test_infer_never_tracebacks(tmp_path_factory, rows, header, method, extra, junk):
    folder = tmp_path_factory.mktemp("fz")
    path = folder / "f.csv"
    path.write_bytes((header + "\n" + "\n".join(rows) + "\n").encode("utf-8") + junk)
    import contextlib
    import io
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(["infer", str(path), "--method", method] + extra)
    assert status in (0, 2)
    if status == 2:
        assert err.getvalue().startswith("python -m toptwo infer: error: ")
        assert len(err.getvalue().strip().splitlines()) == 1


_valid_row = st.tuples(st.sampled_from(["a", "b", "c", "d", "é"]),
                       st.sampled_from(["q1", "q2", "q3"]),
                       st.sampled_from(["1", "2", "3", "4", "1", "2", "3"])).map(",".join)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_valid_row, min_size=1, max_size=12),
       method=st.sampled_from(["majority", "toptwo2", "toptwo1", "onecoin"]),
       extra=st.sampled_from([[], ["--n-labels", "4"], ["--duplicates", "last"],
                              ["--duplicates", "first", "--n-labels", "5"]]))
def test_infer_small_valid_files_exit_0_or_2(tmp_path_factory, rows, method, extra):
    folder = tmp_path_factory.mktemp("fv")
    path = folder / "f.csv"
    path.write_text("worker,task,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    import contextlib
    import io
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        status = main(["infer", str(path), "--method", method] + extra)
    assert status in (0, 2), err.getvalue()
    if status == 0:
        assert out.getvalue().startswith("task,g,h,confusion,p_g,p_pair\n")
    else:
        assert len(err.getvalue().strip().splitlines()) == 1, err.getvalue()


def test_special_file_output_is_written_directly(good, capsys):
    # /dev/stdout is not a regular file: no --force needed, no temporary file beside it
    if not os.path.exists("/dev/stdout"):
        pytest.skip("no /dev/stdout")
    proc = subprocess.run([sys.executable, "-m", "toptwo", "infer", good, "--method",
                           "majority", "-o", "/dev/stdout"], capture_output=True, text=True,
                          env=dict(os.environ, OMP_NUM_THREADS="1"), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("task,g,h,confusion,p_g,p_pair\n")


def test_memory_error_is_one_line(monkeypatch, capsys, good):
    def boom(*args, **kwargs):
        raise MemoryError()
    monkeypatch.setattr(toptwo.__main__, "read_input", boom)
    cap = _run(capsys, ["infer", good])
    assert cap.err == "python -m toptwo infer: error: MemoryError\n"


def test_infer_em_lists_uncertain_tasks(tmp_path, capsys):
    from toptwo.__main__ import main

    model = toptwo.TopTwoModel.scenario("hard", n_workers=20, n_tasks=60, n_labels=5, rng=0)
    R = model.sample(0.3, rng=1)
    path = tmp_path / "answers.csv"
    path.write_text("worker,task,label\n" + "".join(
        f"w{w},t{t},{lab}\n" for w, t, lab in zip(R.workers, R.tasks, R.labels)))
    assert main(["infer", str(path), "--method", "em", "--uncertain", "3"]) == 0
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    assert lines[0] == "task,expected_gain,p_g" and len(lines) == 4
    gains = [float(line.split(",")[1]) for line in lines[1:]]
    assert gains == sorted(gains, reverse=True) and all(0 <= v <= 1 for v in gains)
    assert out.out.startswith("task,g,h,confusion,p_g,p_pair")
    assert main(["infer", str(path), "--uncertain", "3"]) == 0     # every method
