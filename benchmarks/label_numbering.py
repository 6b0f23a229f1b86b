"""How much TopTwo1/TopTwo2 depend on the numbering of the answer choices.

Proposition 1's binary conversion compares each answer with the thresholds k = 1..K-1,
so Algorithm 1 (and TopTwo2 through its stage 1) treats the labels as ordered. For each
data set and estimator: fit on the original numbering, then on N_PERM random
renumberings sigma of the K choices (the same entries, so the same sample split), map
each fit back through sigma^-1, and count the answered tasks whose g_hat (or pair)
differs from the original fit; "clear" counts only the tasks whose most frequent answer
is unique. Printed as the rows of the table in ``docs/reproducibility.md``.

    python benchmarks/label_numbering.py          # ~10 minutes
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

import toptwo
from toptwo.datasets import load_dataset

N_PERM = 10
MAKERS = {
    "TopTwo1()": lambda: toptwo.TopTwo1(),
    "TopTwo1.paper()": lambda: toptwo.TopTwo1.paper(rng=0),
    "TopTwo2()": lambda: toptwo.TopTwo2(rng=0),
    "TopTwo2.paper()": lambda: toptwo.TopTwo2.paper(rng=0),
}


def relabel(R: toptwo.Responses, sigma: np.ndarray) -> toptwo.Responses:
    """The responses with label c renamed sigma[c - 1]."""
    return toptwo.Responses.from_triples(R.workers, R.tasks, sigma[R.labels - 1],
                                         n_workers=R.n_workers, n_tasks=R.n_tasks,
                                         n_labels=R.n_labels)


def changed(R: toptwo.Responses, make, seed: int = 0) -> dict:
    """Tasks whose g (pair) changes under N_PERM renumberings: mean and max."""
    base = make().fit(R).top_two_
    K = R.n_labels
    gen = np.random.default_rng(seed)
    answered = R.task_counts() > 0
    counts = np.sort(R.task_label_counts(), axis=1)
    clear = answered & (counts[:, -1] > counts[:, -2])
    g, pair, g_clear = [], [], []
    for _ in range(N_PERM):
        sigma = gen.permutation(K) + 1
        inv = np.zeros(K + 1, dtype=np.int64)
        inv[sigma] = np.arange(1, K + 1)
        back = inv[make().fit(relabel(R, sigma)).top_two_]
        dg = (back[:, 0] != base[:, 0]) & answered
        g.append(int(dg.sum()))
        pair.append(int(((back != base).any(axis=1) & answered).sum()))
        g_clear.append(int((dg & clear).sum()))
    return dict(answered=int(answered.sum()), g=g, pair=pair, g_clear=g_clear)


def datasets() -> dict:
    out = {}
    for scen in ("easy", "hard", "few_smart"):
        model = toptwo.TopTwoModel.scenario(scen, 50, 500, 5, rng=1)
        out[f"synthetic {scen}, (50, 500, 5), s = 0.2"] = model.sample(0.2, rng=2)
    for name in ("color", "flag"):
        try:
            out[name] = load_dataset(name, duplicates="first").responses
        except Exception as exc:                      # the data are not at hand
            print(f"# {name} skipped: {exc}", file=sys.stderr)
    return out


def main() -> None:
    warnings.filterwarnings("ignore")
    for name, R in datasets().items():
        cells = []
        for make in MAKERS.values():
            r = changed(R, make)
            cells.append(f"{np.mean(r['g']):.1f} / {max(r['g'])}")
        print(f"| {name} ({R.n_labels} choices, {r['answered']}) | " + " | ".join(cells) + " |",
              flush=True)


if __name__ == "__main__":
    main()
