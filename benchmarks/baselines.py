"""Accuracy and fit time of every method of the paper's comparison (``toptwo.paper``).

Usage (from the repository root)::

    OMP_NUM_THREADS=1 python benchmarks/baselines.py accuracy [--reps 10] [--methods ...]
    OMP_NUM_THREADS=1 python benchmarks/baselines.py timing   [--methods ...]
    OMP_NUM_THREADS=1 python benchmarks/baselines.py mvds     [--reps 10]

accuracy
    The four Table 1 scenarios at (n, m, K) = (50, 500, 5) and sampling rates
    s in {0.1, 0.2, 0.3}; replicate r of a scenario draws the model with
    ``rng=1000 + r`` and the responses with ``rng=2000 + 10 r + (rate index)``; each
    method gets ``rng=r``. Reported: pair error minus the oracle MLE's pair error on the
    same data (mean over replicates and its 95% t interval), and the mean g error.
timing
    One fit per method on ~2e6 responses: the hard scenario at (n, m, K) =
    (1000, 200000, 5), s = 0.01 (``rng=0`` / ``rng=1``); wall time of ``fit``
    (``time.perf_counter``), one run each, with the 1-minute load average before each
    fit recorded (the machine has 2 cores). Run it only on an idle machine.

mvds
    The MV-D&S diagnosis: ``DawidSkene`` with the free K x K model ("full", the
    free model, which drifts to label-mixing optima), per-class and one-coin worker models, at s in
    {0.1, 0.2, 0.5, 1.0} on the four scenarios (same seeds as accuracy); pair error
    minus the oracle's.

Results are written to ``benchmarks/results/baselines_<mode>.json`` and printed as a
Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from scipy import stats

import toptwo
from toptwo.experiments import paper

#: the estimators of the paper's comparison (and MACE, GLAD) that this benchmark times
NAMES = ("MV", "MV-D&S", "MV-D&S (full)", "OPT-D&S", "OPT-D&S (full)", "PGD", "M-MSR", "EBCC",
         "MACE", "GLAD", "TopTwo1", "TopTwo2", "MultiSPA-KL", "MultiSPA-EM",
         "MultiSPA-EM (full)")

SCENARIOS = ("easy", "hard", "few_smart", "high_variance")
RATES = (0.1, 0.2, 0.3)
OUT = Path(__file__).resolve().parent.parent / "benchmarks" / "results"


def _ci(x: np.ndarray) -> float:
    if len(x) < 2:
        return float("nan")
    return float(stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)))


def accuracy(methods: list[str], reps: int) -> dict:
    rows = {}
    for sc in SCENARIOS:
        for k, s in enumerate(RATES):
            gaps = {name: [] for name in methods}
            gerr = {name: [] for name in methods}
            secs = {name: 0.0 for name in methods}
            oracle = []
            for r in range(reps):
                model = toptwo.TopTwoModel.scenario(sc, n_workers=50, n_tasks=500,
                                                    n_labels=5, rng=1000 + r)
                A = model.sample(s, rng=2000 + 10 * r + k)
                o = toptwo.OracleMLE(model.reliability, model.confusion).fit(A)
                eo = toptwo.top_two_errors(o.top_two_, model.top_two)["pair"]
                oracle.append(eo)
                for name in methods:
                    t0 = time.perf_counter()
                    est = paper.make(name, rng=np.random.default_rng(r)).fit(A)
                    secs[name] += time.perf_counter() - t0
                    e = toptwo.top_two_errors(est.top_two_, model.top_two)
                    gaps[name].append(e["pair"] - eo)
                    gerr[name].append(e["g"])
            key = f"{sc}@{s}"
            rows[key] = {"oracle_pair": float(np.mean(oracle))}
            for name in methods:
                g = np.asarray(gaps[name])
                rows[key][name] = {"pair_minus_oracle": float(g.mean()), "ci95": _ci(g),
                                   "g": float(np.mean(gerr[name])),
                                   "seconds_per_fit": secs[name] / reps}
            print(key, "oracle", round(rows[key]["oracle_pair"], 3),
                  {n: round(rows[key][n]["pair_minus_oracle"], 3) for n in methods},
                  flush=True)
    return rows


def timing(methods: list[str]) -> dict:
    model = toptwo.TopTwoModel.scenario("hard", n_workers=1000, n_tasks=200_000,
                                        n_labels=5, rng=0)
    A = model.sample(0.01, rng=1)
    out = {"nnz": int(A.nnz)}
    for name in methods:
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        est = paper.make(name, rng=np.random.default_rng(0)).fit(A)
        dt = time.perf_counter() - t0
        e = toptwo.top_two_errors(est.top_two_, model.top_two)
        out[name] = {"seconds": dt, "pair": e["pair"], "g": e["g"],
                     "n_iter": int(getattr(est, "n_iter_", 0)), "loadavg_1min_before": load}
        print(name, round(dt, 2), "s", e, "load before", load, flush=True)
        (OUT / "baselines_timing.json").write_text(json.dumps(out, indent=1))
    return out


def mvds(reps: int) -> dict:
    from toptwo.baselines import DawidSkene
    modes = ("full", "class", "one_coin")
    rows = {}
    for sc in SCENARIOS:
        for k, s in enumerate((0.1, 0.2, 0.5, 1.0)):
            gaps = {mode: [] for mode in modes}
            oracle = []
            for r in range(reps):
                model = toptwo.TopTwoModel.scenario(sc, n_workers=50, n_tasks=500,
                                                    n_labels=5, rng=1000 + r)
                A = model.sample(s, rng=2000 + 10 * r + k)
                o = toptwo.OracleMLE(model.reliability, model.confusion).fit(A)
                eo = toptwo.top_two_errors(o.top_two_, model.top_two)["pair"]
                oracle.append(eo)
                for mode in modes:
                    e = DawidSkene(confusion=mode).fit(A)
                    gaps[mode].append(toptwo.top_two_errors(e.top_two_, model.top_two)["pair"] - eo)
            rows[f"{sc}@{s}"] = {"oracle_pair": float(np.mean(oracle)),
                                 **{mode: {"pair_minus_oracle": float(np.mean(g)),
                                           "ci95": _ci(np.asarray(g))}
                                    for mode, g in gaps.items()}}
    return rows


def _table_accuracy(rows: dict, methods: list[str]) -> str:
    head = "| scenario @ s | oracle pair | " + " | ".join(methods) + " |"
    sep = "|" + "---|" * (len(methods) + 2)
    lines = [head, sep]
    for key, row in rows.items():
        cells = [f"{row[m]['pair_minus_oracle']:+.3f} ± {row[m]['ci95']:.3f}" for m in methods]
        lines.append(f"| {key} | {row['oracle_pair']:.3f} | " + " | ".join(cells) + " |")
    mean = [np.mean([rows[k][m]["pair_minus_oracle"] for k in rows]) for m in methods]
    lines.append("| mean gap | | " + " | ".join(f"{v:+.3f}" for v in mean) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=("accuracy", "timing", "mvds"))
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--methods", nargs="*", default=list(NAMES))
    args = ap.parse_args()
    unknown = [m for m in args.methods if m not in paper.ESTIMATOR_NAMES]
    if unknown:
        raise SystemExit(f"unknown methods {unknown}; choose from {list(paper.ESTIMATOR_NAMES)}")
    OUT.mkdir(exist_ok=True)
    if args.mode == "mvds":
        rows = mvds(args.reps)
        (OUT / "baselines_mvds.json").write_text(json.dumps(
            {"reps": args.reps, "rows": rows}, indent=1))
        print(_table_accuracy(rows, ["full", "class", "one_coin"]))
    elif args.mode == "accuracy":
        rows = accuracy(args.methods, args.reps)
        (OUT / "baselines_accuracy.json").write_text(json.dumps(
            {"reps": args.reps, "rows": rows}, indent=1))
        print(_table_accuracy(rows, args.methods))
    else:
        res = timing(args.methods)
        (OUT / "baselines_timing.json").write_text(json.dumps(res, indent=1))
        print("| method | seconds | pair error | load before |\n|---|---|---|---|")
        for m in args.methods:
            print(f"| {m} | {res[m]['seconds']:.1f} | {res[m]['pair']:.3f} | "
                  f"{res[m]['loadavg_1min_before']:.2f} |")


if __name__ == "__main__":
    main()
