"""Issue 27: every discrete output of every estimator is invariant under permutations of
workers, tasks and input rows (the tie rules use the model's numbers and the task's
identity, never a position). Seeded loops over small instances, so it stays fast."""

from __future__ import annotations

import numpy as np
import pytest

import toptwo
from toptwo import baselines
from toptwo.extensions import TopTwoEM

#: name -> f(seed) building the estimator with ``rng=seed`` where it takes one
ESTIMATORS = {
    "TopTwo1": lambda r=0: toptwo.TopTwo1(),
    "TopTwo2": lambda r=0: toptwo.TopTwo2(rng=r),
    "TopTwoEM": lambda r=0: TopTwoEM(rng=r),
    "MajorityVote": lambda r=0: baselines.MajorityVote(rng=r, tie_break="content"),
    "OneCoinDawidSkene": lambda r=0: baselines.OneCoinDawidSkene(),
    "DawidSkene": lambda r=0: baselines.DawidSkene(),
    "OptDawidSkene": lambda r=0: baselines.OptDawidSkene(rng=r),
    "OptDawidSkene one_coin": lambda r=0: baselines.OptDawidSkene(confusion="one_coin", rng=r),
    "MultiSPA": lambda r=0: baselines.MultiSPA(),
    "MultiSPA none": lambda r=0: baselines.MultiSPA(refine="none"),
    "MultiSPA em": lambda r=0: baselines.MultiSPA(refine="em", confusion="one_coin"),
    "MMSR": lambda r=0: baselines.MMSR(rng=r),
    "PGD": lambda r=0: baselines.PGD(),
    "MACE": lambda r=0: baselines.MACE(rng=r),
    "GLAD": lambda r=0: baselines.GLAD(),
    "EBCC": lambda r=0: baselines.EBCC(rng=r),
}

SEEDS = range(4)


def instance(seed):
    """A small instance with many ties (few answers per task, lone answers), every task
    answered and every label used; drawn from ``seed`` until valid."""
    gen = np.random.default_rng(seed)
    while True:
        K = int(gen.integers(3, 6))
        model = toptwo.TopTwoModel.random(int(gen.integers(6, 12)), int(gen.integers(12, 30)),
                                          K, rng=gen)
        R = model.sample(float(gen.uniform(0.3, 0.7)), rng=gen)
        A = R.toarray()
        if (A > 0).sum(axis=0).min() > 0 and len(np.unique(A[A > 0])) == K:
            return A, K


def instances():
    for seed in SEEDS:
        yield (seed, *instance(seed))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_discrete_outputs_equivariant(name, seed):
    # every estimator, every seed of its rng: permuting workers and tasks permutes the
    # outputs (top two exactly, confusion up to round-off)
    A, K = instance(seed)
    ref = ESTIMATORS[name](seed).fit(A, n_labels=K)
    gen = np.random.default_rng(100 + seed)
    for _ in range(3):
        pw, pt = gen.permutation(A.shape[0]), gen.permutation(A.shape[1])
        est = ESTIMATORS[name](seed).fit(A[pw][:, pt], n_labels=K)
        np.testing.assert_array_equal(est.top_two_, ref.top_two_[pt],
                                      err_msg=f"{name}: workers {pw}, tasks {pt}")
        conf = np.asarray(est.confusion_, float)
        np.testing.assert_allclose(conf, np.asarray(ref.confusion_, float)[pt],
                                   rtol=1e-6, atol=1e-8, err_msg=name)


def test_rows_in_any_order_give_the_same_answer_per_id():
    # the CLI numbers workers and tasks by first appearance: a shuffled file is a
    # permutation of workers and tasks; the answer for each task id must not change
    A = instance(0)[0]
    w, t = np.nonzero(A)
    lab = A[w, t]
    for name in ESTIMATORS:
        want = None
        for s in range(3):
            o = np.random.default_rng(s).permutation(w.size)
            # ids reversed, so the compact numbering differs from the positions
            R = toptwo.Responses.from_triples(1000 - w[o], 5000 - t[o], lab[o])
            got = dict(zip(R.task_ids.tolist(), ESTIMATORS[name](0).fit(R).top_two_.tolist()))
            want = got if want is None else want
            assert got == want, name


def test_content_keys_follow_the_content_and_the_seed():
    # worker_keys / task_keys: a permutation of the input permutes the keys; another
    # seed gives other keys; key_uniforms are in (0, 1) and uniform over keys
    from toptwo.baselines._base import content_groups, key_uniforms, task_keys, worker_keys
    A, K = instance(1)
    pw, pt = np.random.default_rng(7).permutation(A.shape[0]), \
        np.random.default_rng(8).permutation(A.shape[1])
    R, Rp = toptwo.as_responses(A, K), toptwo.as_responses(A[pw][:, pt], K)
    wk = worker_keys(R, np.random.default_rng(3))
    np.testing.assert_array_equal(worker_keys(Rp, np.random.default_rng(3)), wk[pw])
    tk = task_keys(R, R.task_label_counts(), np.random.default_rng(3))
    np.testing.assert_array_equal(task_keys(Rp, Rp.task_label_counts(),
                                            np.random.default_rng(3)), tk[pt])
    assert (worker_keys(R, np.random.default_rng(4)) != wk).all()
    U = key_uniforms(np.arange(20000, dtype=np.uint64), 3, np.random.default_rng(0))
    assert U.min() > 0 and U.max() < 1
    # mean of 60000 uniforms: sd 1/sqrt(12 * 60000) = 0.0012, 5 sd
    assert abs(U.mean() - 0.5) < 0.006, U.mean()
    # groups: nearly equal sizes for distinct keys, equal (score, key) share a group
    g = content_groups(np.arange(10, dtype=np.uint64)[::-1].copy(), 3)
    assert sorted(np.bincount(g).tolist()) == [3, 3, 4]
    g = content_groups(np.array([5, 5, 1, 2], dtype=np.uint64), 3,
                       score=np.array([0.5, 0.5, 0.9, 0.1]))
    assert g.tolist() == [1, 1, 0, 0]      # ranks 1-2 (one block), 0, 3: round-robin


def test_random_starts_depend_on_the_seed():
    # the content hash keeps the starts random: other seeds, other starts
    A, K = instance(2)
    lls = {tuple(np.round(baselines.MACE(rng=s, n_restarts=3).fit(
        A, n_labels=K).restart_log_likelihoods_, 9)) for s in range(3)}
    assert len(lls) == 3, lls
    spl = {tuple(baselines.OptDawidSkene(rng=s).fit(A, n_labels=K)
                 .spectral_confusion_.round(6).ravel()) for s in range(3)}
    assert len(spl) == 3


def test_mmsr_signs_with_a_repeated_top_eigenvalue_follow_a_permutation():
    # found by the fuzz test: on this instance the observed sign matrix has a repeated
    # top eigenvalue, so eigh's leading vector followed the input order and one worker's
    # skill changed sign (0.2557 vs -0.2557) when workers and tasks were permuted; the
    # sign step now projects the ones vector onto the whole leading eigenspace
    A, K = instance(149)
    gen = np.random.default_rng(149)
    pw, pt = gen.permutation(A.shape[0]), gen.permutation(A.shape[1])
    ref = baselines.MMSR(rng=2).fit(A, n_labels=K)
    est = baselines.MMSR(rng=2).fit(A[pw][:, pt], n_labels=K)
    np.testing.assert_array_equal(est.top_two_, ref.top_two_[pt])
    np.testing.assert_allclose(est.skills_, ref.skills_[pw], rtol=1e-9, atol=1e-12)


# ------------------------------------- issue 39: empty tasks, idle workers, relabelling
def _insert_empty(A, seed):
    """A with an all-zero row (an idle worker) and an all-zero column (a task nobody
    answered) inserted at seeded positions; returns (A', kept rows, kept columns)."""
    gen = np.random.default_rng(seed)
    i, j = int(gen.integers(0, A.shape[0] + 1)), int(gen.integers(0, A.shape[1] + 1))
    B = np.insert(np.insert(A, i, 0, axis=0), j, 0, axis=1)
    rows = np.delete(np.arange(B.shape[0]), i)
    cols = np.delete(np.arange(B.shape[1]), j)
    return B, rows, cols


#: Seeds of the issue-39 property tests: two in the quick suite, the others slow.
NEW_SEEDS = [0, 1] + [pytest.param(s, marks=pytest.mark.slow) for s in (2, 3)]


@pytest.mark.parametrize("seed", NEW_SEEDS)
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_empty_tasks_and_idle_workers_change_nothing(name, seed):
    # issue 39 items 1 and 4: OptDawidSkene changed 25 of 30 tasks for one empty task,
    # MMSR 1-2 of 30 for one idle worker; fit(matrix) and fit(triples) must agree
    A, K = instance(seed)
    ref = ESTIMATORS[name](seed).fit(A, n_labels=K)
    B, rows, cols = _insert_empty(A, 50 + seed)
    est = ESTIMATORS[name](seed).fit(B, n_labels=K)
    np.testing.assert_array_equal(est.top_two_[cols], ref.top_two_, err_msg=name)
    j = np.setdiff1d(np.arange(B.shape[1]), cols)
    assert (est.top_two_[j] == 0).all()
    np.testing.assert_allclose(np.asarray(est.confusion_, float)[cols],
                               np.asarray(ref.confusion_, float), rtol=1e-6, atol=1e-8)


SPLIT_VARIANTS = {
    "TopTwo1 split": lambda: toptwo.TopTwo1(sample_splitting=True, rng=0),
    "TopTwo2 split": lambda: toptwo.TopTwo2(sample_splitting=True, rng=0),
    "TopTwo1.paper()": lambda: toptwo.TopTwo1.paper(rng=0),
    "TopTwo2.paper()": lambda: toptwo.TopTwo2.paper(rng=0),
}


@pytest.mark.parametrize("name", list(SPLIT_VARIANTS))
@pytest.mark.parametrize("seed", SEEDS)
def test_sample_splitting_follows_the_ids_not_the_row_order(name, seed):
    # the split is drawn in the order of the (worker id, task id) pairs: a file with its
    # rows shuffled and its workers and tasks numbered by first appearance (as the CLI
    # reads it) gives the same answer for every task id
    A, K = instance(seed)
    w, t = np.nonzero(A)
    lab = A[w, t]
    want = None
    for s in range(3):
        o = np.random.default_rng(s).permutation(w.size)
        wid, tid = np.array([f"w{i:02d}" for i in w[o]]), np.array([f"t{j:02d}" for j in t[o]])
        w_names, w_idx = np.unique(wid, return_index=True)
        t_names, t_idx = np.unique(tid, return_index=True)
        w_first = w_names[np.argsort(w_idx)]             # numbered by first appearance
        t_first = t_names[np.argsort(t_idx)]
        w_pos = {v: i for i, v in enumerate(w_first)}
        t_pos = {v: i for i, v in enumerate(t_first)}
        R = toptwo.Responses.from_triples(
            np.array([w_pos[v] for v in wid]), np.array([t_pos[v] for v in tid]), lab[o],
            n_labels=K, worker_ids=w_first, task_ids=t_first)
        est = SPLIT_VARIANTS[name]().fit(R)
        got = dict(zip(R.task_ids.tolist(), est.top_two_.tolist()))
        want = got if want is None else want
        assert got == want, (name, s)


def test_sample_splitting_on_a_bare_matrix_follows_the_positions():
    # without ids a permutation renames the workers and tasks, and the split (i.i.d.
    # draws in position order) differs: the documented limit (docs/reproducibility.md)
    A, K = instance(0)
    pw = np.random.default_rng(1).permutation(A.shape[0])
    a = toptwo.TopTwo1(sample_splitting=True, rng=0).fit(A, n_labels=K).result_
    b = toptwo.TopTwo1(sample_splitting=True, rng=0).fit(A[pw], n_labels=K).result_
    assert not np.array_equal(a.v, b.v)


#: Baselines whose model treats the labels symmetrically (a renumbering of the choices
#: maps the model onto itself). TopTwo1/TopTwo2/TopTwoEM: engineer-owned, see their tests.
SYMMETRIC = [name for name in ESTIMATORS if not name.startswith("TopTwo")]


def _label_probabilities(est):
    if isinstance(est, baselines.MajorityVote):     # its soft labels follow its tie rule
        counts = np.asarray(est.counts_, float)
        return counts / counts.sum(axis=1, keepdims=True)
    P = getattr(est, "posteriors_", None)
    return np.asarray(P if P is not None else est.soft_labels(), float)


@pytest.mark.parametrize("seed", NEW_SEEDS)
@pytest.mark.parametrize("name", SYMMETRIC)
def test_relabelling_the_choices_relabels_the_output(name, seed):
    # issue 39 item 7: renumbering the choices changed g on tasks with a clear majority
    # (OptDawidSkene up to 305 of 450 tasks, MultiSPA 97, EBCC 29): now the posteriors
    # are relabelled (up to round-off) and so are g and h wherever they are not tied
    A, K = instance(seed)
    gen = np.random.default_rng(200 + seed)
    ref = ESTIMATORS[name](seed).fit(A, n_labels=K)
    P = _label_probabilities(ref)
    srt = np.sort(P, axis=1)
    clear_g = srt[:, -1] - srt[:, -2] > 1e-6
    clear_h = clear_g & (srt[:, -2] - srt[:, -3] > 1e-6) if K > 2 else clear_g
    for _ in range(2):
        perm = np.r_[0, gen.permutation(K) + 1]           # label c -> perm[c]
        est = ESTIMATORS[name](seed).fit(perm[A], n_labels=K)
        Q = _label_probabilities(est)
        np.testing.assert_allclose(Q[:, perm[1:] - 1], P, rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name}: labels {perm[1:]}")
        np.testing.assert_array_equal(est.top_two_[clear_g, 0], perm[ref.top_two_[clear_g, 0]])
        np.testing.assert_array_equal(est.top_two_[clear_h, 1], perm[ref.top_two_[clear_h, 1]])
        np.testing.assert_allclose(np.asarray(est.confusion_, float)[clear_h],
                                   np.asarray(ref.confusion_, float)[clear_h], rtol=1e-6)


def test_label_keys_follow_the_content_not_the_numbering():
    from toptwo.baselines._base import canonical_labels, label_keys
    A, K = instance(3)
    R = toptwo.as_responses(A, K)
    perm = np.r_[0, np.random.default_rng(1).permutation(K) + 1]
    Rp = toptwo.as_responses(perm[A], K)
    np.testing.assert_array_equal(label_keys(Rp)[perm[1:] - 1], label_keys(R))
    Rc, rank = canonical_labels(R)
    Rpc, _ = canonical_labels(Rp)
    np.testing.assert_array_equal(Rc.labels, Rpc.labels)
    np.testing.assert_array_equal(Rc.labels, rank[R.labels - 1] + 1)
    # workers and tasks permuted: the same keys
    pw, pt = np.random.default_rng(2).permutation(A.shape[0]), \
        np.random.default_rng(3).permutation(A.shape[1])
    np.testing.assert_array_equal(label_keys(toptwo.as_responses(A[pw][:, pt], K)),
                                  label_keys(R))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["OptDawidSkene", "MultiSPA", "EBCC", "MACE", "MMSR"])
def test_relabelling_on_a_larger_crowd(name):
    # the size: 450 tasks, a hard crowd, three renumberings
    model = toptwo.TopTwoModel.scenario("hard", n_workers=50, n_tasks=450, n_labels=5, rng=0)
    A = model.sample(0.2, rng=1).toarray()
    ref = ESTIMATORS[name](0).fit(A, n_labels=5)
    P = _label_probabilities(ref)
    for s in range(3):
        perm = np.r_[0, np.random.default_rng(s).permutation(5) + 1]
        Q = _label_probabilities(ESTIMATORS[name](0).fit(perm[A], n_labels=5))
        np.testing.assert_allclose(Q[:, perm[1:] - 1], P, rtol=1e-6, atol=1e-8, err_msg=name)
