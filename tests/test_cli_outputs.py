"""Where the command line writes (issue 39, items 10 and 12): ``-o -`` is standard output,
the ``--uncertain`` list is CSV, a folder that cannot be entered is not called missing, and
a full disk on standard output names it and what to do (never a bare "[Errno 28]")."""

from __future__ import annotations

import csv
import io
import os

import pytest

from toptwo.__main__ import main

ROWS = "".join(f"w{w},\"t,{t}\",{1 + (w * 7 + t * 3) % 4}\n" for w in range(8) for t in range(12))


@pytest.fixture
def infile(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("worker,task,label\n" + ROWS)
    return str(path)


def _run(capsys, argv, status):
    assert main(argv) == status
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    if status == 2:
        assert len(cap.err.strip().splitlines()) == 1, cap.err
    return cap


def test_dash_output_is_standard_output(tmp_path, capsys, infile, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plain = _run(capsys, ["infer", infile, "--method", "majority"], 0).out
    dash = _run(capsys, ["infer", infile, "--method", "majority", "-o", "-"], 0).out
    assert dash == plain and plain.startswith("task,g,h")
    assert not os.path.exists(tmp_path / "-")              # no file named '-'
    # workers to standard output when the results go to a file; never both
    w = _run(capsys, ["infer", infile, "--method", "onecoin", "-o", "r.csv",
                      "--workers-output", "-"], 0).out
    assert w.startswith("worker,reliability\n") and (tmp_path / "r.csv").is_file()
    err = _run(capsys, ["infer", infile, "--method", "onecoin", "-o", "-",
                        "--workers-output", "-"], 2).err
    assert "cannot both go to standard output" in err


def test_uncertain_list_is_csv_quoted(capsys, infile):
    err = _run(capsys, ["infer", infile, "--method", "majority", "--uncertain", "3",
                        "-o", "-"], 0).err
    rows = list(csv.reader(io.StringIO(err)))
    assert rows[0] == ["task", "expected_gain", "p_g"]
    assert len(rows) == 4 and all(len(r) == 3 and r[0].startswith("t,") for r in rows[1:])


def test_a_folder_that_cannot_be_entered_is_not_called_missing(tmp_path, capsys, infile,
                                                               monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    real_stat = os.stat

    def stat(path, *a, **k):                 # as for a non-root user after chmod 000
        if str(path).startswith(str(locked)):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *a, **k)
    monkeypatch.setattr(os, "stat", stat)
    err = _run(capsys, ["infer", infile, "-o", str(locked / "sub" / "out.csv")], 2).err
    assert "is not accessible" in err and "does not exist" not in err
    monkeypatch.undo()
    err = _run(capsys, ["infer", infile, "-o", str(tmp_path / "missing" / "out.csv")], 2).err
    assert "does not exist" in err
    (tmp_path / "afile").write_text("")
    err = _run(capsys, ["infer", infile, "-o", str(tmp_path / "afile" / "out.csv")], 2).err
    assert "is not a folder" in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [["infer", "IN", "--method", "majority"],
                                  ["infer", "IN", "--method", "majority", "-o", "-"],
                                  ["demo", "--queries-per-task", "2"]])
def test_a_full_standard_output_is_named(capsys, infile, monkeypatch, argv):
    argv = [infile if a == "IN" else a for a in argv]
    full = open("/dev/full", "w")        # noqa: SIM115 - closed below
    try:
        monkeypatch.setattr("sys.stdout", full)
        assert main(argv) == 2
    finally:
        monkeypatch.undo()
        try:
            full.close()
        except OSError:
            pass
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "standard output could not be written" in err and "No space left" in err
    assert "[Errno 28]" not in err
    if argv[0] == "infer":
        assert "--output FILE" in err
