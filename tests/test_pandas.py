"""pandas in and out: a DataFrame of triples through ``fit``, results indexed by the ids.

The reference is the command line: the same rows written as CSV and read by
``python -m toptwo infer`` must give the same estimates as the frame given to ``fit``.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import toptwo
from toptwo import MajorityVote, Responses, TopTwo1, TopTwo2, TopTwoModel
from toptwo._validation import NotFittedError

pd = pytest.importorskip("pandas")


def _triples_frame(seed: int = 0, *, string_ids: bool = True) -> "pd.DataFrame":
    model = TopTwoModel.scenario("easy", n_workers=30, n_tasks=60, n_labels=4,
                                 rng=np.random.default_rng(seed))
    R = model.sample(0.4, rng=np.random.default_rng(seed + 1))
    order = np.random.default_rng(seed + 2).permutation(R.nnz)     # rows in any order
    df = pd.DataFrame({"worker": R.workers[order], "task": R.tasks[order],
                       "label": R.labels[order]})
    if string_ids:
        df["worker"] = "w" + df["worker"].astype(str)
        df["task"] = "task-" + df["task"].astype(str)
    return df


def _cli(df: "pd.DataFrame", tmp_path, method: str) -> tuple["pd.DataFrame", "pd.DataFrame"]:
    src = tmp_path / "answers.csv"
    df.to_csv(src, index=False)
    out, wout = tmp_path / "out.csv", tmp_path / "workers.csv"
    args = [sys.executable, "-m", "toptwo", "infer", str(src), "--method", method,
            "-o", str(out), "--force"]
    if method == "toptwo2":
        args += ["--workers-output", str(wout)]
    subprocess.run(args, check=True, capture_output=True, text=True)
    tasks = pd.read_csv(out, dtype={"task": str}).set_index("task")
    workers = (pd.read_csv(wout, dtype={"worker": str}).set_index("worker")
               if wout.exists() else None)
    return tasks, workers


@pytest.mark.parametrize("method, make", [("toptwo2", lambda: TopTwo2(rng=0)),
                                          ("toptwo1", lambda: TopTwo1(rng=0)),
                                          ("majority", lambda: MajorityVote(rng=0, tie_break="content"))])
def test_frame_of_triples_gives_the_cli_estimates(tmp_path, method, make):
    df = _triples_frame()
    est = make().fit(df)
    got = est.to_frame()
    want, workers = _cli(df, tmp_path, method)
    assert list(got.index) == list(want.index)      # both in order of first appearance
    assert got.index.name == "task"
    np.testing.assert_array_equal(got["g"].to_numpy(dtype=float), want["g"].to_numpy(float))
    np.testing.assert_array_equal(got["h"].to_numpy(dtype=float), want["h"].to_numpy(float))
    np.testing.assert_allclose(got["confusion"].round(6), want["confusion"], atol=1e-12)
    if workers is not None:
        rel = est.to_frame("workers")
        assert list(rel.index) == list(workers.index)
        col = [c for c in workers.columns][0]
        np.testing.assert_allclose(rel["reliability"].round(6), workers[col], atol=1e-12)


def test_integer_ids_are_kept_and_give_the_same_labels_as_string_ids():
    df_int = _triples_frame(string_ids=False)
    df_str = _triples_frame(string_ids=True)
    a = TopTwo2(rng=0).fit(df_int).to_frame()
    b = TopTwo2(rng=0).fit(df_str).to_frame()
    assert a.index.tolist() == sorted(df_int["task"].unique().tolist())   # ints: sorted
    b.index = [int(s.removeprefix("task-")) for s in b.index]
    b = b.loc[a.index]
    np.testing.assert_array_equal(a[["g", "h"]].to_numpy(float), b[["g", "h"]].to_numpy(float))
    np.testing.assert_allclose(a["confusion"], b["confusion"], rtol=1e-9)


def test_crowdkit_style_integer_frame_is_triples_not_a_matrix():
    # The case: 100 triples of 20 workers and 5 tasks were read as a 100 x 3 matrix.
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"worker": rng.integers(0, 20, 100), "task": rng.integers(0, 5, 100),
                       "label": rng.integers(1, 4, 100)}).drop_duplicates(["worker", "task"])
    est = TopTwo2(rng=0).fit(df)
    assert est.top_two_.shape == (df["task"].nunique(), 2)
    assert est.n_workers_in_ == df["worker"].nunique()
    assert est.n_labels_in_ == 3


def test_from_triples_takes_hashable_ids_and_other_column_names():
    df = pd.DataFrame({"annotator": ["ann", "bob", "ann", ("c", 1)],
                       "item": ["q1", "q1", "q2", "q2"], "answer": [3, 2, 1, 1]})
    R = Responses.from_triples(df, columns=("annotator", "item", "answer"))
    assert R.shape == (3, 2)
    assert list(R.worker_ids) == ["ann", "bob", ("c", 1)]
    assert list(R.task_ids) == ["q1", "q2"]
    R2 = Responses.from_triples(df["annotator"], df["item"].to_numpy(), list(df["answer"]))
    np.testing.assert_array_equal(R2.labels, R.labels)
    with pytest.raises(ValueError, match=r"no column\(s\) 'worker'.*columns=\(worker_column"):
        Responses.from_triples(df)


def test_bad_frames_are_refused_with_what_is_expected():
    df = _triples_frame()
    with pytest.raises(ValueError, match=r"column\(s\) 'extra' besides the triples.*select"):
        TopTwo2().fit(df.assign(extra=1))
    with pytest.raises(ValueError, match=r"no column\(s\) 'label'"):
        TopTwo2().fit(df[["worker", "task"]])
    with pytest.raises(TypeError, match=r"neither a frame of triples nor a numeric response "
                                        r"matrix \(column 'name' has dtype"):
        TopTwo2().fit(pd.DataFrame({"name": ["x", "y"], "b": [1, 2]}))
    with pytest.raises(ValueError, match=r"missing id \((None|nan)\) in triple 1.*dropna"):
        TopTwo2().fit(pd.DataFrame({"worker": ["a", None], "task": ["t", "t"],
                                    "label": [1, 2]}))
    with pytest.raises(TypeError, match=r"hashable ids; got list \['a'\] in triple 0"):
        Responses.from_triples([["a"], "b"], ["t", "t"], [1, 2])
    with pytest.raises(ValueError, match=r"found 0 in triple 0 \(worker 'a', task 't'\).*add 1"):
        TopTwo2().fit(pd.DataFrame({"worker": ["a", "b"], "task": ["t", "t"],
                                    "label": [0, 2]}))
    with pytest.raises(ValueError, match=r"2 rows? .*|repeated|more than once"):
        TopTwo2().fit(pd.DataFrame({"worker": ["a", "a"], "task": ["t", "t"],
                                    "label": [1, 2]}))


def test_numeric_matrix_frame_keeps_index_and_columns_as_ids():
    M = pd.DataFrame([[1, 2, 0], [2, 2, 1], [1, 3, 3], [3, 1, 2]], index=list("abcd"),
                     columns=["x", "y", "z"])
    est = TopTwo2(rng=0).fit(M)
    np.testing.assert_array_equal(est.top_two_, TopTwo2(rng=0).fit(M.to_numpy()).top_two_)
    assert est.to_frame().index.tolist() == ["x", "y", "z"]
    assert est.to_frame("workers").index.tolist() == ["a", "b", "c", "d"]
    with pytest.raises(ValueError, match=r"NaN.*fillna\(0\)"):
        TopTwo2().fit(M.astype(float).where(M > 0))


def test_to_frame_columns_and_missing_estimates():
    est = toptwo.TopTwoEM(rng=0).fit(_triples_frame())
    frame = est.to_frame()
    assert list(frame.columns) == ["g", "h", "confusion", "p_g", "p_pair"]
    np.testing.assert_array_equal(frame["p_pair"], est.pair_proba_)
    np.testing.assert_array_equal(frame["p_g"], est.g_proba_)
    A = np.array([[1, 2, 0], [2, 2, 0], [1, 3, 0], [3, 1, 0]])     # task 2 unanswered
    f = TopTwo2(rng=0).fit(A, n_labels=3).to_frame()
    assert f["g"].isna().tolist() == [False, False, True]
    assert list(f.columns) == ["g", "h", "confusion", "p_g", "p_pair"]
    assert f["p_g"].isna().tolist() == [False, False, True]
    assert (f["p_pair"] <= f["p_g"]).iloc[:2].all()
    with pytest.raises(ValueError, match="no per-worker reliability"):
        toptwo.baselines.MajorityVote().fit(A, n_labels=3).to_frame("workers") \
            if hasattr(toptwo, "baselines") else MajorityVote().fit(A, 3).to_frame("workers")
    with pytest.raises(NotFittedError):
        TopTwo2().to_frame()


def test_sklearn_check_is_fitted_and_html_repr():
    validation = pytest.importorskip("sklearn.utils.validation")
    from sklearn.exceptions import NotFittedError as SkNotFitted
    from sklearn.utils import estimator_html_repr

    est = TopTwo2(rng=0)
    with pytest.raises(SkNotFitted):
        validation.check_is_fitted(est)
    est.fit(_triples_frame())
    validation.check_is_fitted(est)
    html = estimator_html_repr(est)
    assert "TopTwo2(rng=0)" in html and "TopTwo2(rng=0)" in est._repr_html_()
