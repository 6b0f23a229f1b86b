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
