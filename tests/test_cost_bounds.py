"""Cost bounded by the data (issue 39, item 11): a fit whose dense (tasks x labels) arrays
the answers do not justify is refused before anything is allocated, naming the size, the
cost and what to do instead (library and command line)."""

from __future__ import annotations

import numpy as np
import pytest

import toptwo
import toptwo._cost
from toptwo._cost import DENSE_CELLS_PER_ANSWER
from toptwo.__main__ import main
from toptwo.baselines import OneCoinDawidSkene, DawidSkene, MajorityVote
from toptwo.extensions.em import TopTwoEM

M, K = 300_000, 1000             # the case: 3e8 cells, 2.24 GiB per array


def _sparse_huge():
    """300,000 tasks, one answer on each of 3,000 of them, a label as large as K."""
    t = np.arange(0, M, 100)
    w = t % 7
    lab = 1 + (t % 3)
    lab[-1] = K
    return toptwo.Responses.from_triples(w, t, lab, n_tasks=M, n_labels=K)


@pytest.mark.parametrize("make", [lambda: toptwo.TopTwo2(rng=0), lambda: toptwo.TopTwo1(rng=0),
                                  lambda: MajorityVote(rng=0), OneCoinDawidSkene, DawidSkene,
                                  lambda: TopTwoEM(rng=0)])
def test_a_fit_the_data_do_not_pay_for_is_refused_up_front(make):
    R = _sparse_huge()
    with pytest.raises(ValueError, match=r"\.fit: 300,000 tasks x K = 1,000 labels is "
                                         r"300,000,000 cells.*2\.24 GiB each.*3,000 answers; "
                                         r"refused before allocating.*largest 1,000: pass the "
                                         r"true K"):
        make().fit(R)


def test_the_bound_follows_the_answers(monkeypatch):
    # the same shape runs when enough answers pay for it (a small free budget, to be fast)
    monkeypatch.setattr(toptwo._cost, "DENSE_CELLS_FREE", 1000)
    m, k, per = 100, 40, 5                           # 4,000 cells = 8 x 500 answers
    t = np.repeat(np.arange(m), per)
    w = np.tile(np.arange(per), m)
    lab = 1 + (t + w) % 3
    lab[0] = k
    R = toptwo.Responses.from_triples(w, t, lab, n_tasks=m, n_labels=k)
    assert m * k == DENSE_CELLS_PER_ANSWER * R.nnz
    MajorityVote(rng=0).fit(R)
    keep = np.arange(t.size) % per != 1                # 400 answers: no longer paid for
    R2 = toptwo.Responses.from_triples(w[keep], t[keep], lab[keep], n_tasks=m, n_labels=k)
    with pytest.raises(ValueError, match="refused before allocating"):
        MajorityVote(rng=0).fit(R2)


def test_cli_names_the_file_and_the_option(tmp_path, capsys):
    path = tmp_path / "big.csv"
    # 30,000 tasks answered once, --n-labels 1000: 3e7 cells > max(2**24, 8 x 30,000)
    path.write_text("worker,task,label\n" + "".join(f"w{j % 7},t{j},{1 + j % 3}\n"
                                                    for j in range(0, M, 10)))
    assert main(["infer", str(path), "--n-labels", "1000", "--method", "majority"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "big.csv" in err
    assert "30,000 tasks x K = 1,000 labels" in err and "--n-labels" in err
    assert "Unable to allocate" not in err


# ------------------------------------------------------------ time: refused up front
def test_multispa_kl_on_a_crowded_task_is_refused_up_front():
    n, k = 420, 5                    # one task, 420 workers: 87,990 pairs, 4.4e9 > MAX_WORK
    R = toptwo.Responses.from_triples(np.arange(n), np.zeros(n, dtype=int),
                                      1 + np.arange(n) % k, n_tasks=1, n_labels=k)
    with pytest.raises(ValueError, match=r"MultiSPA\.fit would need about 4\.4.e\+09 "
                                         r"multiply-adds for the KL refinement over 87,990 "
                                         r"worker pairs.*Use refine='none' or refine='em'"):
        toptwo.baselines.MultiSPA().fit(R)


def test_opt_dawid_skene_at_large_k_is_refused_up_front():
    m, k = 100, 40                   # ran over 5 minutes; 3e4 K^4 = 7.7e10 > MAX_WORK
    t = np.repeat(np.arange(m), 3)
    w = np.tile(np.arange(3), m)
    lab = 1 + (t * 7 + w) % k
    R = toptwo.Responses.from_triples(w, t, lab, n_tasks=m, n_labels=k)
    with pytest.raises(ValueError, match=r"OptDawidSkene\.fit would need about 7\.68e\+10 "
                                         r"multiply-adds .*tensor power method.*Use TopTwo2"):
        toptwo.baselines.OptDawidSkene(rng=0).fit(R)


def test_em_at_k1000_on_few_answers_is_refused_up_front(tmp_path, capsys):
    m, k = 600, 1000                 # 6,000 answers: 6e8 pair cells per E-step (111 s CPU)
    t = np.repeat(np.arange(m), 10)
    w = np.tile(np.arange(10), m)
    lab = 1 + (t * 7 + w * 3) % k
    R = toptwo.Responses.from_triples(w, t, lab, n_tasks=m, n_labels=k)
    with pytest.raises(ValueError, match=r"TopTwoEM\.fit: the E-step's pair posterior covers "
                                         r"600 answered tasks x K\(K-1\) = 999,000 ordered "
                                         r"pairs = 599,400,000 cells.*Use TopTwo2"):
        TopTwoEM(rng=0).fit(R)
    path = tmp_path / "k1000.csv"
    path.write_text("worker,task,label\n" + "".join(f"w{a},t{b},{c}\n"
                                                    for a, b, c in zip(w, t, lab)))
    assert main(["infer", str(path), "--method", "em", "--n-labels", "1000"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "k1000.csv" in err
    assert "--method toptwo2" in err
