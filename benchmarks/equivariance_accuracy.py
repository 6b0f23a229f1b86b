"""Accuracy before/after making the random starts and ties of five baselines content-based.

Issue 27: OPT-D&S (worker groups), MultiSPA (SPA ties), M-MSR, MACE and EBCC (random
starts) were made equivariant under permutations of workers, tasks and rows. Their
outputs change; this script measures that the accuracy does not get worse, as paired
differences on the same draws and seeds.

Usage (from the repository root; run once per code version, then compare)::

    OMP_NUM_THREADS=1 PYTHONPATH=<old checkout> python benchmarks/equivariance_accuracy.py \
        run /tmp/before.json
    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/equivariance_accuracy.py run /tmp/after.json
    python benchmarks/equivariance_accuracy.py compare /tmp/before.json /tmp/after.json

run
    synthetic: the four Table 1 scenarios at (n, m, K) = (50, 500, 5), sampling rates
    s in {0.1, 0.2, 0.3}, 10 replicates; replicate r draws the model with
    ``rng=1000 + r`` and the responses with ``rng=2000 + 10 r + (rate index)``; each
    method gets ``rng=r`` (as ``benchmarks/baselines.py accuracy``). Recorded: pair error.
    real: the seven datasets (duplicates "last"), every method of
    ``ALL_METHOD_NAMES`` but the oracle with ``rng=0`` (the g error and a digest of
    ``top_two_``, to list which methods' outputs changed), and the five changed methods
    with ``rng=0..4``.
compare
    Mean paired difference (after - before) with its 95% t interval, per method and
    scenario (pair error) and per method and dataset (g error, mean over the 5 seeds);
    and the method names whose ``top_two_`` changed on some dataset.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

import numpy as np
from scipy import stats

import toptwo
from toptwo.datasets import DATASETS, load_dataset
from toptwo.experiments import paper

CHANGED = ("OPT-D&S", "M-MSR", "MultiSPA-KL", "MultiSPA-EM", "EBCC", "MACE")
SCENARIOS = ("easy", "hard", "few_smart", "high_variance")
RATES = (0.1, 0.2, 0.3)
REPS = 10
SEEDS = range(5)


def run(out: str) -> None:
    make = paper.method_factories(CHANGED)
    syn = []
    for sc in SCENARIOS:
        for r in range(REPS):
            model = toptwo.TopTwoModel.scenario(sc, 50, 500, 5, rng=1000 + r)
            for ri, s in enumerate(RATES):
                A = model.sample(s, rng=2000 + 10 * r + ri)
                for name, f in make.items():
                    est = f(model, np.random.default_rng(r)).fit(A)
                    err = toptwo.top_two_errors(est.top_two_, model.top_two)["pair"]
                    syn.append({"method": name, "scenario": sc, "rate": s, "rep": r,
                                "err_pair": float(err)})
        print(f"synthetic {sc}: done", file=sys.stderr, flush=True)
    real = []
    allm = paper.method_factories([m for m in paper.ALL_METHOD_NAMES if m != "Oracle"])
    for dname in DATASETS:
        ds = load_dataset(dname, duplicates="last")
        has = ds.has_truth
        for name, f in allm.items():
            for seed in (SEEDS if name in CHANGED else (0,)):
                est = f(None, np.random.default_rng(seed)).fit(ds.responses)
                tt = np.ascontiguousarray(est.top_two_, dtype=np.int64)
                real.append({"method": name, "dataset": dname, "seed": seed,
                             "err_g": float(np.mean(tt[has, 0] != ds.truth[has])),
                             "digest": hashlib.sha256(tt.tobytes()).hexdigest()[:16]})
        print(f"real {dname}: done", file=sys.stderr, flush=True)
    with open(out, "w") as fh:
        json.dump({"synthetic": syn, "real": real}, fh)


def _ci(d: np.ndarray) -> float:
    return float(stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))) \
        if len(d) > 1 else float("nan")


def compare(before: str, after: str) -> None:
    b, a = (json.load(open(p)) for p in (before, after))
    print("Pair error, after - before (paired over 3 rates x 10 replicates; mean +- 95% CI)\n")
    print("| method | " + " | ".join(SCENARIOS) + " | all |")
    print("|---|" + "---|" * (len(SCENARIOS) + 1))
    key = ("method", "scenario", "rate", "rep")
    bs = {tuple(x[k] for k in key): x["err_pair"] for x in b["synthetic"]}
    for name in CHANGED:
        cells = []
        for sc in SCENARIOS + (None,):
            d = np.array([x["err_pair"] - bs[tuple(x[k] for k in key)]
                          for x in a["synthetic"] if x["method"] == name
                          and (sc is None or x["scenario"] == sc)])
            before_mean = np.mean([v for kk, v in bs.items() if kk[0] == name
                                   and (sc is None or kk[1] == sc)])
            cells.append(f"{d.mean():+.4f} ± {_ci(d):.4f} (of {before_mean:.3f})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\ng error on the real datasets, after - before (mean over seeds 0..4)\n")
    print("| method | " + " | ".join(DATASETS) + " |")
    print("|---|" + "---|" * len(DATASETS))
    rkey = ("method", "dataset", "seed")
    br = {tuple(x[k] for k in rkey): x for x in b["real"]}
    changed = set()
    for x in a["real"]:
        if x["digest"] != br[tuple(x[k] for k in rkey)]["digest"]:
            changed.add(x["method"])
    for name in CHANGED:
        cells = []
        for dname in DATASETS:
            d = np.array([x["err_g"] - br[tuple(x[k] for k in rkey)]["err_g"]
                          for x in a["real"] if x["method"] == name and x["dataset"] == dname])
            bm = np.mean([x["err_g"] for x in b["real"] if x["method"] == name
                          and x["dataset"] == dname])
            cells.append(f"{d.mean():+.4f} (of {bm:.3f})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\nMethods of ALL_METHOD_NAMES whose top_two_ changed on some dataset:",
          sorted(changed, key=paper.ALL_METHOD_NAMES.index))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("run").add_argument("out")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    args = ap.parse_args(argv)
    if args.cmd == "run":
        run(args.out)
    else:
        compare(args.before, args.after)


if __name__ == "__main__":
    main()
