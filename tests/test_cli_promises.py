"""The command line's promises (issue 27): one-line errors, everything checked before
anything is written, outputs with the umask's mode, both outputs or neither, no
overwrite without --force (even of a file created during the run), symlinks written
through, signals cleaned up, a closed or non-UTF-8 standard output, no scipy.stats at
start-up."""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys

import numpy as np
import pytest

import toptwo
import toptwo.__main__ as cli
from toptwo.__main__ import main

HEAD = "worker,task,label\n"
ENV = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")


def _run(capsys, argv, status=2):
    assert main(argv) == status
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    if status == 2:
        assert len(cap.err.strip().splitlines()) == 1, cap.err
    return cap


@pytest.fixture
def good(tmp_path):
    model = toptwo.TopTwoModel.scenario("easy", n_workers=12, n_tasks=30, n_labels=4, rng=3)
    A = model.sample(0.6, rng=4)
    path = tmp_path / "in.csv"
    path.write_text(HEAD + "".join(f"w{i},t{j},{c}\n" for i, j, c in
                                   zip(A.workers, A.tasks, A.labels)))
    return str(path)


def _files(folder):
    return sorted(os.listdir(folder))


# ---------------------------------------------------------------- bug 2: --uncertain
def test_uncertain_larger_than_tasks_refused_before_writing(tmp_path, capsys, good):
    out = tmp_path / "res.csv"
    cap = _run(capsys, ["infer", good, "--method", "em", "--uncertain", "31", "-o", str(out)])
    assert "--uncertain 31 is more than the 30 task(s) in" in cap.err
    assert "TopTwoEM" not in cap.err and cap.out == ""
    assert not out.exists() and _files(tmp_path) == ["in.csv"]
    _run(capsys, ["infer", good, "--method", "em", "--uncertain", "30", "-o", str(out)], 0)


# ------------------------------------------------------- bug 3: modes and --force
def test_new_output_gets_umask_mode(tmp_path, capsys, good):
    old = os.umask(0o022)
    try:
        _run(capsys, ["infer", good, "-o", str(tmp_path / "a.csv")], 0)
        os.umask(0o077)
        _run(capsys, ["infer", good, "-o", str(tmp_path / "b.csv")], 0)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "a.csv").st_mode) == 0o644
    assert stat.S_IMODE(os.stat(tmp_path / "b.csv").st_mode) == 0o600


def test_force_keeps_existing_mode(tmp_path, capsys, good):
    out = tmp_path / "res.csv"
    out.write_text("old\n")
    os.chmod(out, 0o640)
    _run(capsys, ["infer", good, "-o", str(out), "--force"], 0)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o640
    assert out.read_text().startswith("task,g,h,confusion,p_g,p_pair\n")


def test_force_writes_through_a_symlink(tmp_path, capsys, good):
    target = tmp_path / "data" / "res.csv"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    _run(capsys, ["infer", good, "-o", str(link)])            # exists: needs --force
    _run(capsys, ["infer", good, "-o", str(link), "--force"], 0)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("task,g,h,confusion,p_g,p_pair\n")
    assert _files(target.parent) == ["res.csv"]               # no temp or backup left


# ----------------------------------------------------------- checked before the run
@pytest.mark.parametrize("name, msg", [
    ("x" * 300 + ".csv", "the file name is 304 bytes long; this file system allows at most"),
    ("new.csv/", "ends with '/', which names a folder"),
])
def test_bad_output_names_refused_before_reading(tmp_path, capsys, good, monkeypatch, name,
                                                   msg):
    def never(*a, **k):
        raise AssertionError("the input was read")
    monkeypatch.setattr(cli, "read_input", never)
    cap = _run(capsys, ["infer", good, "-o", f"{tmp_path}{os.sep}{name}"])
    assert msg in cap.err
    assert _files(tmp_path) == ["in.csv"]


def test_other_users_file_in_sticky_folder_refused_up_front(tmp_path, capsys, good,
                                                           monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    theirs = shared / "res.csv"
    theirs.write_text("theirs\n")
    me = os.stat(theirs).st_uid + 4242                        # someone else
    monkeypatch.setattr(cli.os, "geteuid", lambda: me)
    monkeypatch.setattr(cli, "read_input",
                        lambda *a, **k: pytest.fail("the input was read"))
    cap = _run(capsys, ["infer", good, "-o", str(theirs), "--force"])
    assert "belongs to another user in a folder with the sticky bit set" in cap.err
    assert theirs.read_text() == "theirs\n"


def test_newline_in_file_name_stays_on_one_line(tmp_path, capsys, good):
    cap = _run(capsys, ["infer", str(tmp_path / "a\nb.csv")])
    assert "a\\nb.csv" in cap.err
    out = tmp_path / "x\ny" / "r.csv"
    cap = _run(capsys, ["infer", good, "-o", str(out)])
    assert "x\\ny" in cap.err


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EXDEV, errno.EDQUOT])
def test_os_errors_name_the_output(tmp_path, capsys, good, monkeypatch, code):
    out = tmp_path / "res.csv"

    def full(*a, **k):
        raise OSError(code, os.strerror(code))
    monkeypatch.setattr(cli, "write_results_csv", full)
    cap = _run(capsys, ["infer", good, "-o", str(out)])
    assert f"--output {out} could not be written: {os.strerror(code)} [Errno {code}]" in cap.err
    assert _files(tmp_path) == ["in.csv"]


# ------------------------------------------------------------- both or neither
def test_second_commit_failing_removes_the_first_new_file(tmp_path, capsys, good,
                                                          monkeypatch):
    out, wout = tmp_path / "res.csv", tmp_path / "w.csv"
    real_link = os.link

    def link(src, dst, *a, **k):
        if str(dst) == str(wout):
            raise OSError(errno.EIO, "Input/output error")
        return real_link(src, dst, *a, **k)
    monkeypatch.setattr(cli.os, "link", link)
    cap = _run(capsys, ["infer", good, "-o", str(out), "--workers-output", str(wout)])
    assert f"--workers-output {wout} could not be written" in cap.err
    assert _files(tmp_path) == ["in.csv"]


def test_second_commit_failing_restores_the_first_old_file(tmp_path, capsys, good,
                                                           monkeypatch):
    out, wout = tmp_path / "res.csv", tmp_path / "w.csv"
    out.write_text("old results\n")
    wout.write_text("old workers\n")
    real_replace = os.replace

    def replace(src, dst, *a, **k):
        if str(dst) == str(wout):
            raise OSError(errno.EIO, "Input/output error")
        return real_replace(src, dst, *a, **k)
    monkeypatch.setattr(cli.os, "replace", replace)
    _run(capsys, ["infer", good, "-o", str(out), "--workers-output", str(wout), "--force"])
    assert out.read_text() == "old results\n" and wout.read_text() == "old workers\n"
    assert _files(tmp_path) == ["in.csv", "res.csv", "w.csv"]


def test_file_created_during_the_run_is_not_overwritten(tmp_path, capsys, good,
                                                        monkeypatch):
    out = tmp_path / "res.csv"
    real = cli.write_results_csv

    def racing(*a, **k):
        out.write_text("someone else's\n")                     # appears during the run
        return real(*a, **k)
    monkeypatch.setattr(cli, "write_results_csv", racing)
    cap = _run(capsys, ["infer", good, "-o", str(out)])
    assert "was created by someone else during the run" in cap.err
    assert out.read_text() == "someone else's\n"
    assert _files(tmp_path) == ["in.csv", "res.csv"]


# ------------------------------------------------------------------------ signals
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_signals_remove_temporary_files(tmp_path, capsys, good, monkeypatch, sig):
    signum = getattr(signal, sig)
    if signal.getsignal(signum) is signal.SIG_IGN:
        # the CLI leaves a signal its parent ignores ignored (e.g. SIGHUP under nohup)
        pytest.skip(f"{sig} is ignored in this process (started under nohup?)")
    out, wout = tmp_path / "res.csv", tmp_path / "w.csv"
    real = cli.write_reliability_csv

    def killed(fh, *a, **k):
        real(fh, *a, **k)
        os.kill(os.getpid(), signum)                          # half-way through writing
    monkeypatch.setattr(cli, "write_reliability_csv", killed)
    assert main(["infer", good, "-o", str(out), "--workers-output", str(wout)]) == 128 + signum
    assert "terminated by signal" in capsys.readouterr().err
    assert _files(tmp_path) == ["in.csv"]
    assert signal.getsignal(signum) is not cli._raise_signalled     # handler restored


# ------------------------------------------------------------------ standard output
def test_closed_stdout_is_an_error_not_silence(good):
    for argv in (["demo"], ["infer", good, "--method", "majority"]):
        proc = subprocess.run([sys.executable, "-m", "toptwo", *argv], stdout=None,
                              stderr=subprocess.PIPE, text=True, env=ENV, timeout=120,
                              preexec_fn=lambda: os.close(1))
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip() == (f"python -m toptwo {argv[0]}: error: standard output "
                                       f"is closed; write the results to a file with "
                                       f"--output FILE.")


def test_non_utf8_stdout_gets_utf8(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text(HEAD + "a,tâche,1\nb,tâche,1\nc,tâche,2\na,t2,3\nb,t2,3\nc,t2,1\n",
                    encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "toptwo", "infer", str(path), "--method",
                           "majority"], capture_output=True, timeout=120,
                          env=dict(ENV, PYTHONIOENCODING="ascii"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode("utf-8").splitlines()[1].startswith("tâche,1,2,")


# --------------------------------------------------------------------- start-up
def test_argparse_errors_are_one_line(capsys):
    for argv in (["infer"], ["infer", "x.csv", "--method", "nope"], ["demo", "--seed", "-1"],
                 ["bogus"], ["infer", "x.csv", "--uncertain", "0"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "error:" in err, err


def test_no_scipy_stats_at_startup():
    code = ("import sys, toptwo.__main__ as m\n"
            "assert m.main(['infer', '--help']) == 0\n"
            "bad = [k for k in sys.modules if k.startswith(('scipy.stats', 'matplotlib'))]\n"
            "assert not bad, bad[:5]\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=ENV, timeout=120)
    assert proc.returncode == 0, proc.stderr


# ------------------------------------ issue 24/42: the p_g and p_pair columns
def test_probability_columns_for_every_method(tmp_path, capsys, good):
    import csv
    import io

    from toptwo.extensions import TopTwoEM
    from toptwo.posterior import task_probabilities
    R = toptwo.io.read_triples_csv(good)
    for method in ("toptwo2", "toptwo1", "em", "majority", "onecoin"):
        assert main(["infer", good, "--method", method]) == 0
        rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
        pg = np.array([float(r["p_g"]) for r in rows])
        pp = np.array([float(r["p_pair"]) for r in rows])
        assert ((pp > 0) & (pp <= pg + 1e-6) & (pg <= 1)).all(), method
    # em: exactly TopTwoEM's posterior; the library's to_frame gives the same columns
    est = TopTwoEM(rng=0).fit(R)
    pr = task_probabilities(est, R)
    np.testing.assert_allclose(pr["p_pair"], est.pair_proba_)
    np.testing.assert_allclose(pr["p_g"], est.g_proba_)
    frame = est.to_frame()
    np.testing.assert_allclose(frame["p_g"].to_numpy(), est.g_proba_)
    help_text = subprocess.run([sys.executable, "-m", "toptwo", "infer", "--help"],
                               capture_output=True, text=True, env=ENV).stdout
    for word in ("p_g", "p_pair", "calibration"):
        assert word in " ".join(help_text.split()), word


def test_progress_only_on_a_terminal_and_only_for_large_inputs(capsys, monkeypatch, good):
    monkeypatch.setattr(cli, "PROGRESS_ROWS", 10)
    assert main(["infer", good, "--method", "majority"]) == 0
    assert capsys.readouterr().err == ""                 # stderr is not a terminal here
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert main(["infer", good, "--method", "majority"]) == 0
    err = capsys.readouterr().err
    assert "toptwo: read " in err and "fitting MajorityVote" in err


# ------------------------------------------ messages in the file's numbering (issue 27)
def test_unused_label_message_in_file_numbering_and_right_advice(tmp_path, capsys):
    gap = tmp_path / "gap.csv"                     # 5 choices, nobody chose 3
    gap.write_text("worker,task,label\na,t1,1\nb,t1,2\nc,t2,5\na,t2,4\nb,t3,1\n")
    cap = _run(capsys, ["infer", str(gap)])
    assert "label(s) 3 never occur" in cap.err
    assert "Lowering the number of choices would not help" in cap.err
    assert "--n-labels 4" not in cap.err           # would then refuse label 5
    base0 = tmp_path / "b0.csv"                    # 0-based file, choices 0..4
    base0.write_text("worker,task,label\na,t1,0\nb,t1,1\nc,t2,1\na,t2,0\nb,t3,2\n")
    cap = _run(capsys, ["infer", str(base0), "--label-base", "0", "--n-labels", "5"])
    assert "needs every label 0..4" in cap.err and "label(s) 3, 4 never occur" in cap.err
    assert "--n-labels 3 if the unused labels are not choices" in cap.err


def test_uncertain_list_independent_of_row_order(tmp_path, capsys):
    # equal posteriors (identical tasks) are listed by task id, not file position
    rows = [f"w{i},t{j},{1 + (i + (j % 2)) % 3}" for j in range(8) for i in range(4)]
    lists = []
    for k in range(2):
        order = np.random.default_rng(k).permutation(len(rows)) if k else range(len(rows))
        path = tmp_path / f"u{k}.csv"
        path.write_text("worker,task,label\n" + "\n".join(rows[i] for i in order) + "\n")
        assert main(["infer", str(path), "--method", "em", "--uncertain", "3"]) == 0
        lists.append(capsys.readouterr().err.splitlines())
    assert lists[0] == lists[1] and len(lists[0]) == 4


@pytest.mark.parametrize("last", [".", ".."])
def test_output_named_dot_is_a_folder(tmp_path, last):
    # found by the fuzz suite: "-o 'missing dir/.'" wrote a file called "missing dir"
    from toptwo.__main__ import main
    src = tmp_path / "in.csv"
    src.write_text("worker,task,label\na,t1,1\nb,t1,2\nc,t2,3\na,t2,3\n")
    out = os.path.join(str(tmp_path), "missing dir", last)   # (pathlib would drop the ".")
    assert main(["infer", str(src), "--method", "majority", "-o", out]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]
