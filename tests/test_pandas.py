"""pandas in and out: a DataFrame of triples through ``fit``, results indexed by the ids.

The reference is the command line: the same rows written as CSV and read by
``python -m toptwo infer`` must give the same estimates as the frame given to ``fit``.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# ------------------------------------------------ issue 39 item 6: triples read as a matrix
_TRIPLE_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                  "float32", "float64", "Int64", "UInt16", "Float64"]


def _numeric_triples(seed, names=(0, 1, 2)):
    gen = np.random.default_rng(seed)
    n = int(gen.integers(20, 120))
    w, t = gen.integers(0, 40, n), gen.integers(0, 90, n)
    keep = np.unique(w * 1000 + t, return_index=True)[1]
    w, t = w[keep], t[keep]
    lab = gen.integers(1, 5, w.size)
    lab[0] = 4
    return pd.DataFrame(dict(zip(names, (w, t, lab))))


@pytest.mark.parametrize("dtype", _TRIPLE_DTYPES)
@pytest.mark.parametrize("seed", range(3))
def test_a_numeric_frame_of_triples_is_not_fitted_as_a_matrix(dtype, seed):
    # a 599 x 3 frame of triples was fitted as a matrix with K = 60, silently
    df = _numeric_triples(seed).astype(dtype)
    with pytest.raises(ValueError, match=r"looks like \(worker, task, label\) triples, not a "
                                         r"response matrix.*Responses\.from_triples\(df, "
                                         r"columns=.*TopTwo2\.fit\(df\.to_numpy\(\)\)"):
        toptwo.TopTwo2().fit(df)
    # both readings stay available, and from_triples reads every dtype alike
    R = toptwo.Responses.from_triples(df, columns=(0, 1, 2))
    ref = toptwo.Responses.from_triples(_numeric_triples(seed), columns=(0, 1, 2))
    np.testing.assert_array_equal(R.labels, ref.labels)
    np.testing.assert_array_equal(R.workers, ref.workers)
    assert toptwo.as_responses(df.to_numpy(dtype=float)).n_labels >= 4


@pytest.mark.parametrize("names", [("Worker", "Task", "Label"), ("annotator", "item", "answer"),
                                   ("item", "annotator", "answer"),
                                   ("WORKER_ID", "question", "response")])
def test_frames_named_as_triples_in_another_spelling_are_refused(names):
    df = _numeric_triples(0, names)
    with pytest.raises(ValueError, match=r"name \(worker, task, label\) triples .*nothing is "
                                         r"guessed.*Responses\.from_triples\(df, columns="):
        toptwo.baselines.MajorityVote().fit(df)


def test_a_real_three_task_matrix_is_still_a_matrix():
    # zeros (not answered) in the third column, or ids no larger than the labels: a matrix
    A = pd.DataFrame([[1, 2, 0], [2, 1, 3], [3, 3, 1], [1, 1, 2]])
    assert toptwo.as_responses(A).shape == (4, 3)
    B = pd.DataFrame([[1, 2, 3], [2, 1, 3], [3, 3, 1]])
    assert toptwo.as_responses(B).shape == (3, 3)


# ------------------------------------------ issue 39 item 9: DataFrame ids as the CSV reader
@pytest.mark.parametrize("workers, msg", [
    (["a", " a", "b"], r"has the id ' a', with spaces at an end in triple 1; .*strip them"),
    (["a", "", "b"], r"has an empty id in triple 1; .*leave rows without an id out"),
    ([True, 1, "x"], r"holds True \(bool, triple 0\) and 1 \(int, triple 1\), which Python "
                     r"counts as one id; .*astype\(str\)"),
    ([1.0, 1, "x"], r"holds 1\.0 \(float, triple 0\) and 1 \(int, triple 1\)"),
])
def test_frame_ids_that_the_csv_reader_would_keep_apart_are_refused(workers, msg):
    # True and 1.0 merged with 1, " a" stayed apart from "a", "" was an id
    df = pd.DataFrame({"worker": workers, "task": ["t", "u", "t"], "label": [1, 2, 3]})
    with pytest.raises(ValueError, match=msg):
        Responses.from_triples(df)


def test_na_ids_from_read_csv_get_the_keep_default_na_advice(tmp_path):
    import io
    text = "worker,task,label\nNA,t,1\nb,t,2\nnull,u,3\n"
    df = pd.read_csv(io.StringIO(text))
    with pytest.raises(ValueError, match=r"missing id \(nan\) in triple 0.*keep_default_na="
                                         r"False"):
        TopTwo2().fit(df)
    ok = pd.read_csv(io.StringIO(text), keep_default_na=False, dtype={"label": int})
    R = Responses.from_triples(ok)
    p = tmp_path / "a.csv"
    p.write_text(text)
    S = toptwo.io.read_triples_csv(p)
    assert list(R.worker_ids) == list(S.worker_ids) == ["NA", "b", "null"]


_id_values = st.one_of(st.integers(0, 3), st.sampled_from(["a", "b", "1", "x y"]),
                       st.floats(0, 3).filter(lambda f: f == int(f)), st.booleans())


@settings(max_examples=80, deadline=None)
@given(ids=st.lists(_id_values, min_size=2, max_size=12))
def test_frame_ids_merge_only_where_the_csv_reader_would(ids):
    # property: a frame of ids either gives the ids the CSV reader gives for their text
    # (same number of distinct ids) or is refused -- never a silent merge
    df = pd.DataFrame({"worker": pd.Series(ids, dtype=object), "task": ["t"] * len(ids),
                       "label": [1 + k % 3 for k in range(len(ids))]})
    try:
        R = Responses.from_triples(df, duplicates="first")
    except ValueError as exc:
        assert "counts as one id" in str(exc)
        return
    as_text = {(type(v).__name__ if not isinstance(v, (bool, np.bool_)) else "bool", str(v))
               for v in ids}
    assert R.n_workers == len(as_text)
