"""p_g, p_pair, the re-labelling list and the model-fit diagnosis (issue 42)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import toptwo
from toptwo.diagnose import MODELS, diagnose
from toptwo.posterior import (_nodes, expected_gain, fit_grid_weights, grid_posterior,
                              relabel_order, task_probabilities)


@pytest.fixture(scope="module")
def crowd():
    model = toptwo.TopTwoModel.scenario("hard", n_workers=20, n_tasks=60, n_labels=4, rng=0)
    return model, model.sample(0.3, rng=1)


def _brute(R, p, pi, q):
    """P(a, b | answers) by enumerating (a, b, k) with eq. (1)'s likelihood, per task."""
    K, m = R.n_labels, R.n_tasks
    out = np.zeros((m, K, K))
    for j in range(m):
        e = R.tasks == j
        w, c = R.workers[e], R.labels[e] - 1
        for a, b in itertools.permutations(range(K), 2):
            for k, qk in enumerate(q):
                lik = np.prod((1 - p[w]) / K + p[w] * qk * (c == a) + p[w] * (1 - qk) * (c == b))
                out[j, a, b] += pi[k] * lik
        out[j] /= out[j].sum()
    return out


def test_grid_posterior_is_eq1_enumerated(crowd):
    _, R = crowd
    rng = np.random.default_rng(3)
    p = rng.uniform(0.05, 0.95, R.n_workers)
    q = _nodes()
    pi = rng.dirichlet(np.ones(q.size))
    top = np.column_stack([rng.integers(1, 5, R.n_tasks), rng.integers(1, 5, R.n_tasks)])
    top[:, 1] = np.where(top[:, 1] == top[:, 0], top[:, 0] % 4 + 1, top[:, 1])
    gm, pp = grid_posterior(R, p, pi, q, pairs=top)
    ref = _brute(R, p, pi, q)
    np.testing.assert_allclose(gm, ref.sum(axis=2), rtol=1e-10, atol=1e-12)
    rows = np.arange(R.n_tasks)
    np.testing.assert_allclose(pp, ref[rows, top[:, 0] - 1, top[:, 1] - 1], rtol=1e-10)


def test_grid_weights_raise_the_marginal_likelihood(crowd):
    _, R = crowd
    p = np.full(R.n_workers, 0.6)
    q = _nodes()

    def loglik(pi):                     # sum_j log sum_{a,b,k} pi_k P(answers | a, b, q_k)
        K = R.n_labels
        total = 0.0
        for j in range(R.n_tasks):
            e = R.tasks == j
            c = R.labels[e] - 1
            s = sum(pi[k] * np.prod((1 - p[0]) / K + p[0] * qk * (c == a)
                                    + p[0] * (1 - qk) * (c == b))
                    for a, b in itertools.permutations(range(K), 2)
                    for k, qk in enumerate(q))
            total += np.log(s)
        return total

    pi = fit_grid_weights(R, p, q)
    assert pi.shape == q.shape and abs(pi.sum() - 1) < 1e-12 and (pi > 0).all()
    assert loglik(pi) > loglik(np.full(q.size, 1 / q.size))


def test_probabilities_every_method_and_unanswered_task():
    A = np.array([[1, 2, 0], [2, 2, 0], [1, 3, 0], [3, 1, 0], [1, 1, 0]])
    for est in (toptwo.TopTwo2(rng=0), toptwo.TopTwo1(rng=0),
                toptwo.baselines.MajorityVote(rng=0)):
        pr = task_probabilities(est.fit(A, n_labels=3))
        assert np.isnan(pr["p_g"][2]) and np.isnan(pr["p_pair"][2])
        ok = slice(0, 2)
        assert (pr["p_pair"][ok] <= pr["p_g"][ok] + 1e-12).all()
        assert ((pr["p_g"][ok] > 0) & (pr["p_g"][ok] <= 1)).all()


def test_em_probabilities_are_its_posterior(crowd):
    _, R = crowd
    em = toptwo.TopTwoEM(rng=0).fit(R)
    pr = task_probabilities(em)
    np.testing.assert_array_equal(pr["p_g"], em.g_proba_)
    np.testing.assert_array_equal(pr["p_pair"], em.pair_proba_)
    # its grid posterior recomputed from its parameters is the same numbers
    gm, pp = grid_posterior(R, em.reliability_, em.confusion_weights_, em.confusion_grid_,
                            pairs=em.top_two_)
    np.testing.assert_allclose(pp, em.pair_proba_, rtol=1e-8)


def test_without_recorded_data_probabilities_need_R():
    est = toptwo.TopTwo2(rng=0)
    est.top_two_ = np.array([[1, 2]])
    with pytest.raises(ValueError, match="pass R"):
        task_probabilities(est)


def test_expected_gain_nonnegative_deterministic_and_ranks(crowd):
    _, R = crowd
    est = toptwo.TopTwo2(rng=0).fit(R)
    g1 = expected_gain(est, n_answers=3, n_draws=16)
    g2 = expected_gain(est, n_answers=3, n_draws=16)
    np.testing.assert_array_equal(g1, g2)
    assert (g1 >= 0).all() and (g1 <= 1).all()
    order = relabel_order(est, 10, n_answers=3, n_draws=16)
    assert np.all(np.diff(-np.round(g1[order], 9)) >= 0)
    # a task the posterior is sure of gains (almost) nothing
    pg = task_probabilities(est)["p_g"]
    assert g1[np.argmax(pg)] <= g1.max()


@pytest.mark.parametrize("kwargs, match", [
    (dict(n=61), r"'n' parameter of relabel_order must be at most n_tasks=60; got 61"),
    (dict(n=-1), r"'n'.*relabel_order"),
    (dict(n=3, n_answers=0), r"'n_answers'.*expected_gain"),
    (dict(n=3, n_draws=0), r"'n_draws'.*expected_gain"),
])
def test_relabel_order_strict_input(crowd, kwargs, match):
    _, R = crowd
    est = toptwo.TopTwo2(rng=0).fit(R)
    with pytest.raises(ValueError, match=match):
        relabel_order(est, **kwargs)


def test_diagnose_on_top_two_data(crowd):
    model, R = crowd
    d = diagnose(R, n_labels=4, n_draws=2)
    assert set(d.heldout) == set(MODELS)
    assert d.shares_observed.shape == (3,) and d.verdict
    text = d.report()
    assert "verdict:" in text and "Dawid-Skene" in text
    # the shares predicted by the top-two model are near the observed ones
    np.testing.assert_allclose(d.shares_predicted["top-two"], d.shares_observed, atol=0.05)


@pytest.mark.parametrize("kwargs, match", [(dict(n_folds=1), "'n_folds'"),
                                           (dict(n_draws=0), "'n_draws'")])
def test_diagnose_strict_input(crowd, kwargs, match):
    _, R = crowd
    with pytest.raises(ValueError, match=match):
        diagnose(R, **kwargs)
    with pytest.raises(ValueError, match="K >= 3"):
        diagnose(np.array([[1, 2], [2, 1]]), n_labels=2)


def test_diagnose_cli_no_traceback(tmp_path, capsys):
    from toptwo.__main__ import main
    bad = tmp_path / "bad.csv"
    bad.write_text("worker,task,label\na,t1,1\n")
    assert main(["diagnose", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1
    assert main(["diagnose", "examples/tiny.csv", "--folds", "1"]) == 2
    assert "--folds must be at least 2; got 1" in capsys.readouterr().err


def test_diagnose_folds_keep_every_label_in_each_fit(crowd):
    from toptwo.diagnose import _folds
    _, R = crowd
    fold = _folds(R, 5, np.random.default_rng(0))
    for f in range(5):
        kept = R.labels[fold != f]
        assert set(np.unique(kept)) == set(range(1, R.n_labels + 1))
    # the only answer with its label is never held out; a one-task crowd is refused
    A = np.array([[1, 2, 0], [1, 3, 0], [2, 2, 1], [2, 1, 0]])
    R2 = toptwo.Responses.from_dense(A, n_labels=3) if hasattr(toptwo.Responses, "from_dense") \
        else toptwo.as_responses(A, 3)
    fold = _folds(R2, 2, np.random.default_rng(0))
    assert (fold[R2.labels == 3] == -1).all()
    with pytest.raises(ValueError, match="at least 2 tasks"):
        diagnose(np.array([[1], [2], [3], [1]]), n_labels=3, n_folds=2)
