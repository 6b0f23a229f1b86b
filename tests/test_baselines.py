"""Majority vote top two: literal toy, the seeded tie rule, empty tasks."""

from __future__ import annotations

import numpy as np
import pytest

import toptwo
from toptwo.baselines import MajorityVote

from conftest import with_gaps


def test_majority_vote_toy(toy):
    A, K, expected, ratio = toy
    est = MajorityVote(rng=0).fit(A)
    np.testing.assert_array_equal(est.top_two_, expected)
    np.testing.assert_allclose(est.confusion_, ratio)
    np.testing.assert_array_equal(est.counts_, [[3, 2, 0, 0], [0, 0, 3, 2], [0, 3, 2, 0],
                                                [0, 0, 1, 3]])
    np.testing.assert_array_equal(est.fit_predict(A), expected[:, 0])
    soft = est.soft_labels()
    np.testing.assert_allclose(soft[0], [0.6, 0.4, 0, 0])
    # no tie in the toy: every seed gives the same answer
    for seed in range(5):
        np.testing.assert_array_equal(MajorityVote(rng=seed).fit(A).top_two_, expected)


def test_majority_vote_unanswered_task(small_responses):
    R = with_gaps(small_responses, empty_worker=3, empty_task=7)
    est = MajorityVote(rng=0).fit(R)
    np.testing.assert_array_equal(est.top_two_[7], [0, 0])
    assert np.isnan(est.confusion_[7])
    assert np.isnan(est.soft_labels()[7]).all()
    assert (np.delete(est.top_two_, 7, axis=0) > 0).all()


def test_single_distinct_answer_gets_other_label_as_h():
    A = np.array([[2], [2], [2]])
    est = MajorityVote(rng=0).fit(A, n_labels=4)
    assert est.top_two_[0, 0] == 2 and est.top_two_[0, 1] in (1, 3, 4)
    assert est.confusion_[0] == 1.0


def test_tie_break_is_seeded():
    A = np.array([[1, 2, 3], [2, 3, 1], [3, 1, 2]])        # every task: a three-way tie
    a = MajorityVote(rng=7).fit(A).top_two_
    np.testing.assert_array_equal(MajorityVote(rng=7).fit(A).top_two_, a)
    np.testing.assert_array_equal(MajorityVote(rng=np.random.default_rng(7)).fit(A).top_two_, a)
    seen = {tuple(MajorityVote(rng=s).fit(A).top_two_.ravel()) for s in range(10)}
    assert len(seen) > 1                                     # the tie really is random


def uniform_choice(counts: np.ndarray, n_choices: int, n_draws: int, z: float = 5.0) -> bool:
    """Every tied label chosen with frequency 1/c within z binomial sd."""
    f = counts / n_draws
    sd = np.sqrt((1 / n_choices) * (1 - 1 / n_choices) / n_draws)
    return bool(np.all(np.abs(f - 1 / n_choices) <= z * sd))


TIED = np.array([[1, 0], [2, 0], [3, 0], [4, 4], [0, 1]])   # task 0: labels 1, 2, 3, 4 once each


@pytest.mark.parametrize("rule", ["position", "content"])
def test_tie_break_uniform_across_seeds(rule):
    n_seeds = 400
    g = np.array([MajorityVote(rng=s, tie_break=rule).fit(TIED, n_labels=5).top_two_[0, 0] for s in range(n_seeds)])
    counts = np.bincount(g, minlength=6)[1:5]
    assert counts.sum() == n_seeds
    assert uniform_choice(counts, 4, n_seeds)


@pytest.mark.parametrize("rule", ["position", "content"])
def test_tie_break_uniform_across_tasks(rule):
    # tasks with different content break their ties independently: on random data, a
    # two-way tie for h goes to the smaller label about half the time
    gen = np.random.default_rng(0)
    n, m, K = 40, 6000, 4
    A = np.zeros((n, m), dtype=np.int64)
    for j in range(m):
        who = gen.choice(n, 4, replace=False)
        A[who, j] = [1, 2, 3, 3]                       # g = 3; h tied between 1 and 2
    h = MajorityVote(rng=0, tie_break=rule).fit(A, n_labels=K).top_two_[:, 1]
    counts = np.bincount(h, minlength=K + 1)[1:3]
    assert counts.sum() == m and uniform_choice(counts, 2, m)


@pytest.mark.parametrize("rule", ["position", "content"])
def test_tie_break_uniform_across_seeds_single_task(rule):
    # a task's tie-break is a function of (seed, its content): uniform over seeds
    n_seeds = 2000
    A = np.array([[1], [2], [3], [3]])
    h = [MajorityVote(rng=s, tie_break=rule).fit(A, n_labels=4).top_two_[0, 1] for s in range(n_seeds)]
    counts = np.bincount(h, minlength=5)[1:3]
    assert counts.sum() == n_seeds and uniform_choice(counts, 2, n_seeds)


def test_majority_vote_ignores_input_order():
    # issue 27 bug 1: the tie-break followed each task's position (a shuffled file or
    # permuted columns changed the answers of tied tasks)
    model = toptwo.TopTwoModel.random(30, 200, 5, rng=0)
    A = model.sample(0.1, rng=1).toarray()
    ref = MajorityVote(rng=0, tie_break="content").fit(A)
    for s in range(10):
        gen = np.random.default_rng(s)
        pw, pt = gen.permutation(30), gen.permutation(200)
        est = MajorityVote(rng=0, tie_break="content").fit(A[pw][:, pt])
        np.testing.assert_array_equal(est.top_two_, ref.top_two_[pt])
        np.testing.assert_array_equal(est.confusion_, ref.confusion_[pt])
    # rows of triples in any order, ids kept: the same answer per task id, and the same
    # as the matrix (the tie rule does not look at ids either)
    w, t = np.nonzero(A)
    tid = 1000 + 3 * t
    from_matrix = {1000 + 3 * j: ref.top_two_[j].tolist() for j in np.unique(t)}

    def by_id(order):
        R = toptwo.Responses.from_triples(w[order], tid[order], A[w, t][order], n_labels=5)
        return dict(zip(R.task_ids, MajorityVote(rng=0, tie_break="content").fit(R).top_two_.tolist()))
    want = by_id(np.arange(w.size))
    assert want == from_matrix
    for s in range(5):
        assert by_id(np.random.default_rng(s).permutation(w.size)) == want


def test_uniform_checker_rejects_smallest_label_rule():
    # negative twin: "ties go to the smaller label" (argmax order) is rejected
    n_seeds = 400
    counts = np.array([n_seeds, 0, 0, 0])
    assert not uniform_choice(counts, 4, n_seeds)
    biased = np.random.default_rng(0).choice(4, n_seeds, p=[0.55, 0.15, 0.15, 0.15])
    assert not uniform_choice(np.bincount(biased, minlength=4), 4, n_seeds)


def test_majority_vote_top_t_counts():
    A = toptwo.Responses.from_triples([0, 1, 2, 3, 4, 5], [0] * 6, [2, 2, 2, 4, 4, 1],
                                      n_labels=5)
    mv = MajorityVote(n_top=3, rng=0).fit(A)
    np.testing.assert_array_equal(mv.top_, [[2, 4, 1]])
    np.testing.assert_array_equal(mv.top_two_, [[2, 4]])
    np.testing.assert_allclose(mv.confusions_, [[0.5, 1 / 3, 1 / 6]])
    np.testing.assert_allclose(mv.confusion_, [0.6])
    assert MajorityVote(rng=0).fit(A).confusions_ is None
    with pytest.raises(ValueError, match="'n_top' parameter of MajorityVote must be "
                                         "<= n_labels=5; got 6 instead"):
        MajorityVote(n_top=6).fit(A)


def test_majority_vote_top_two_does_not_depend_on_n_top(small_responses):
    two = MajorityVote(rng=4).fit(small_responses)
    three = MajorityVote(n_top=3, rng=4).fit(small_responses)
    np.testing.assert_array_equal(two.top_two_, three.top_two_)
    np.testing.assert_array_equal(two.confusion_, three.confusion_)
    np.testing.assert_array_equal(three.top_[:, :2], two.top_)
