"""Appendix B.4 (Table 5, corrupted CIFAR-10H) at small scale, on scikit-learn's digits.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 python benchmarks/corrupted_labels.py --workers 2     # ~4 min
    OMP_NUM_THREADS=1 python benchmarks/corrupted_labels.py --quick         # smoke run, nothing written

Runs :func:`toptwo.softlabels.corrupted_label_experiment` (notebook 11's crowd on the
digits; spammer answers added at ratios 0, 0.1, ..., 0.5 by eq. (25); hard, TopTwo2
top-two, TopTwoEM top-two and full-distribution targets from the same answers; a softmax
regression and a one-hidden-layer MLP trained on each) over 30 replicates and writes
``toptwo/experiments/results/corrupted_labels.json``: every replicate's numbers (``accuracy``,
``label_accuracy``, ``true_mass``), a ``summary`` (mean and 95% t interval per cell;
paired differences top-two - full and top-two - hard per ratio) and ``meta``. Notebook 11
reads it and re-runs the first replicates of the softmax regression, which must agree.
The MLP's numbers move by an image or two with the BLAS kernel (non-convex loss, see
``toptwo.softlabels``); the softmax regression's do not.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

import toptwo
from toptwo.softlabels import (CORRUPTION_TARGETS, corrupted_label_experiment, merge_runs,
                               paired_ci)

RESULTS = Path(__file__).resolve().parent.parent / "toptwo" / "experiments" / "results"
RATIOS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
MODELS = ("softmax regression", "MLP")
SEED = 0


def _chunk(args):
    first, reps = args
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return corrupted_label_experiment(ratios=RATIOS, replicates=reps, first_replicate=first,
                                          seed=SEED, models=MODELS)


def summarise(res: dict) -> dict:
    out: dict = {"cells": {}, "paired": {}}
    for mn, d in res["accuracy"].items():
        for tn, dd in d.items():
            for x, v in dd.items():
                v = np.asarray(v)
                hw = paired_ci(v, np.zeros_like(v))[1]
                out["cells"][f"{mn}|{tn}|{x}"] = {"mean": round(float(v.mean()), 6),
                                                  "ci": round(hw, 6)}
        for a in ("top-two (TopTwo2)", "top-two (TopTwoEM)"):
            for b in ("full", "hard (MV)"):
                for x in d[a]:
                    m, hw = paired_ci(d[a][x], d[b][x])
                    out["paired"][f"{mn}|{a} - {b}|{x}"] = {"mean": round(m, 6),
                                                           "ci": round(hw, 6)}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replicates", type=int, default=30)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="2 replicates, nothing written")
    args = ap.parse_args(argv)
    reps = 2 if args.quick else args.replicates
    t0 = time.perf_counter()
    step = -(-reps // max(1, args.workers))
    chunks = [(f, min(step, reps - f)) for f in range(0, reps, step)]
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        res = merge_runs(list(pool.map(_chunk, chunks)))
    res["summary"] = summarise(res)
    res["meta"] = {"toptwo": toptwo.__version__, "numpy": np.__version__,
                   "python": platform.python_version(),
                   "seconds": round(time.perf_counter() - t0, 1), "workers": args.workers,
                   "load_average": [round(v, 2) for v in os.getloadavg()],
                   "command": "OMP_NUM_THREADS=1 python benchmarks/corrupted_labels.py "
                              f"--replicates {reps} --workers {args.workers}"}
    for mn in MODELS:
        print(f"\n{mn}: test accuracy, mean over {reps} replicates")
        print("| ratio | " + " | ".join(CORRUPTION_TARGETS) + " |")
        print("|---" * (len(CORRUPTION_TARGETS) + 1) + "|")
        for x in RATIOS:
            cells = [res["summary"]["cells"][f"{mn}|{tn}|{x}"] for tn in CORRUPTION_TARGETS]
            print(f"| {x} | " + " | ".join(f"{c['mean']:.3f} ± {c['ci']:.3f}" for c in cells)
                  + " |")
    if not args.quick:
        path = RESULTS / "corrupted_labels.json"
        path.write_text(json.dumps(res, indent=1) + "\n")
        print(f"\nwrote {path} in {res['meta']['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
