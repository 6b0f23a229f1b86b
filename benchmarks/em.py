"""How close does EM on the full likelihood come to the oracle MLE? (TopTwoEM vs TopTwo2)

Usage (from the repository root, one core)::

    OMP_NUM_THREADS=1 python benchmarks/em.py --replicates 5 [--timing]

On the four scenarios of the paper's Table 2 [`tab:synth_setup1`] at (n, m, K) =
(50, 500, 5) and s in {0.05, 0.1, 0.2, 0.3, 0.5, 1.0}, each replicate draws a fresh
instance and a fresh response matrix A and fits on that same A (paired):

* TopTwo2 (default), TopTwoEM (``confusion="map"``, the default) and TopTwoEM
  (``confusion="grid"``, ``max_iter=50``);
* the oracle MLE (eq. (6) with the true p, q) as the reference.

Reported per cell: mean pair error of each method minus the oracle's (the "gap"), with
its paired standard error; per scenario, the expected calibration error (ECE, 10 equal
bins of the posterior, weighted by bin size) of ``pair_proba_`` for the chosen pairs,
pooled over rates and replicates. ``--timing`` also fits TopTwo2 and TopTwoEM once on
n = 1000, m = 200000, K = 5, s = 0.01 (about 2 10^6 responses; hard scenario) and
reports the fit times of TopTwo2 and both TopTwoEM variants and the peak resident
memory of the process (which includes the data and every fit).

``--real`` instead fits TopTwo2 and both TopTwoEM variants on the paper's seven real
datasets (duplicates="last", as the paper's loaders) and reports the g error and the ECE
of ``g_proba_`` (``benchmarks/results/em_real.json``).

Seeding: replicate r of scenario c at rate index k uses
``numpy.random.SeedSequence(seed, spawn_key=(c, k, r))`` spawned into independent streams
for the instance and the sample. Results go to ``benchmarks/results/em.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

import toptwo

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "em.json"

SCENARIOS = ("easy", "hard", "few_smart", "high_variance")
SHAPE = (50, 500, 5)
RATES = (0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
METHODS = {
    "TopTwo2": lambda: toptwo.TopTwo2(),
    "EM map": lambda: toptwo.TopTwoEM(),
    "EM grid": lambda: toptwo.TopTwoEM(confusion="grid", max_iter=50),
}
EM_METHODS = ("EM map", "EM grid")


def ece(proba: np.ndarray, correct: np.ndarray, n_bins: int = 10) -> float:
    """Expected calibration error: sum_b (n_b/N) |mean proba_b - accuracy_b|, equal bins."""
    idx = np.minimum((proba * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in range(n_bins):
        sel = idx == b
        if sel.any():
            total += sel.sum() * abs(proba[sel].mean() - correct[sel].mean())
    return total / proba.size


def run_grid(replicates: int, seed: int) -> dict:
    n, m, K = SHAPE
    cells, calib = [], {sc: {meth: ([], []) for meth in EM_METHODS} for sc in SCENARIOS}
    for c, scen in enumerate(SCENARIOS):
        for k, s in enumerate(RATES):
            errs = {name: [] for name in (*METHODS, "oracle")}
            secs = {name: 0.0 for name in METHODS}
            for r in range(replicates):
                ss = np.random.SeedSequence(seed, spawn_key=(c, k, r))
                g_model, g_sample = (np.random.default_rng(x) for x in ss.spawn(2))
                model = toptwo.TopTwoModel.scenario(scen, n, m, K, rng=g_model)
                A = model.sample(s, rng=g_sample)
                oracle = toptwo.OracleMLE(model.reliability, model.confusion).fit(A)
                errs["oracle"].append(toptwo.top_two_errors(oracle.top_two_, model.top_two)["pair"])
                ok = A.task_counts() > 0
                for name, make in METHODS.items():
                    t0 = time.perf_counter()
                    est = make().fit(A)
                    secs[name] += time.perf_counter() - t0
                    errs[name].append(toptwo.top_two_errors(est.top_two_, model.top_two)["pair"])
                    if name in EM_METHODS:
                        calib[scen][name][0].append(est.pair_proba_[ok])
                        calib[scen][name][1].append((est.top_two_ == model.top_two).all(axis=1)[ok])
            o = np.array(errs["oracle"])
            cell = {"scenario": scen, "s": s, "replicates": replicates,
                    "oracle": float(o.mean())}
            for name in METHODS:
                d = np.array(errs[name]) - o
                cell[name] = {"error": float(np.mean(errs[name])), "gap": float(d.mean()),
                              "gap_se": float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else None,
                              "seconds": secs[name] / replicates}
            cells.append(cell)
            print(f"{scen:14s} s={s:<5} oracle {o.mean():.4f}  " + "  ".join(
                f"{nm} {cell[nm]['gap']:+.4f}" for nm in METHODS), file=sys.stderr, flush=True)
    ece_out = {sc: {meth: ece(np.concatenate(v[0]), np.concatenate(v[1]).astype(float))
                    for meth, v in d.items()} for sc, d in calib.items()}
    return {"cells": cells, "ece": ece_out}


def run_timing(seed: int) -> dict:
    n, m, K, s = 1000, 200_000, 5, 0.01
    ss = np.random.SeedSequence(seed, spawn_key=(99,))
    g_model, g_sample = (np.random.default_rng(x) for x in ss.spawn(2))
    model = toptwo.TopTwoModel.scenario("hard", n, m, K, rng=g_model)
    A = model.sample(s, rng=g_sample)
    out = {"n": n, "m": m, "K": K, "s": s, "nnz": int(A.nnz)}
    for name, make in (("TopTwo2", lambda: toptwo.TopTwo2()), ("EM map", lambda: toptwo.TopTwoEM()),
                       ("EM grid", METHODS["EM grid"])):
        t0 = time.perf_counter()
        est = make().fit(A)
        out[name] = {"seconds": time.perf_counter() - t0,
                     "pair_error": toptwo.top_two_errors(est.top_two_, model.top_two)["pair"]}
        if name != "TopTwo2":
            out[name]["n_iter"] = int(est.n_iter_)
            out[name]["time_ratio"] = out[name]["seconds"] / out["TopTwo2"]["seconds"]
        del est
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return out


def run_real(data_dir: str | None) -> list[dict]:
    """g error of TopTwo2 and TopTwoEM and the ECE of ``g_proba_`` on the seven real datasets."""
    from toptwo.datasets import DATASETS, load_dataset

    rows = []
    for name in DATASETS:
        ds = load_dataset(name, data_dir, duplicates="last")
        R, truth = ds.responses, ds.truth
        ok = (truth > 0) & (R.task_counts() > 0)
        row = {"dataset": name, "K": R.n_labels, "n_scored": int(ok.sum())}
        for label, make in METHODS.items():
            est = make().fit(R)
            correct = est.top_two_[ok, 0] == truth[ok]
            row[label] = {"g_error": float(1.0 - correct.mean())}
            if label in EM_METHODS:
                row[label]["ece_g"] = ece(est.g_proba_[ok], correct.astype(float))
        rows.append(row)
    return rows


def markdown_real(rows: list[dict]) -> str:
    lines = ["| dataset | K | TopTwo2 g error | EM map g error (ECE of g_proba_) | "
             "EM grid g error (ECE) |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['dataset']} | {r['K']} | {r['TopTwo2']['g_error']:.3f} | "
                     f"{r['EM map']['g_error']:.3f} ({r['EM map']['ece_g']:.3f}) | "
                     f"{r['EM grid']['g_error']:.3f} ({r['EM grid']['ece_g']:.3f}) |")
    return "\n".join(lines)


def markdown(res: dict) -> str:
    lines = ["| scenario | s | oracle | " + " | ".join(f"{m} gap" for m in METHODS) + " |",
             "|---|---|---|" + "---|" * len(METHODS)]
    for c in res["cells"]:
        lines.append(f"| {c['scenario']} | {c['s']} | {c['oracle']:.3f} | " + " | ".join(
            f"{c[m]['gap']:+.4f} ± {c[m]['gap_se']:.4f}" if c[m]["gap_se"] is not None
            else f"{c[m]['gap']:+.4f}" for m in METHODS) + " |")
    lines.append("")
    lines.append("| summary | " + " | ".join(METHODS) + " |")
    lines.append("|---|" + "---|" * len(METHODS))
    gaps = {m: np.array([c[m]["gap"] for c in res["cells"]]) for m in METHODS}
    lines.append("| mean gap over cells | " + " | ".join(f"{gaps[m].mean():+.4f}" for m in METHODS) + " |")
    lines.append("| largest cell gap | " + " | ".join(f"{gaps[m].max():+.4f}" for m in METHODS) + " |")
    lines.append("| cells with gap > 0.015 | " + " | ".join(str(int((gaps[m] > 0.015).sum()))
                                                        for m in METHODS) + " |")
    lines.append("")
    lines.append("| ECE of pair_proba_ | " + " | ".join(EM_METHODS) + " |")
    lines.append("|---|" + "---|" * len(EM_METHODS))
    for sc, d in res["ece"].items():
        lines.append(f"| {sc} | " + " | ".join(f"{d[m]:.3f}" for m in EM_METHODS) + " |")
    if "timing" in res:
        t = res["timing"]
        lines.append("")
        lines.append(f"Timing at n={t['n']}, m={t['m']}, K={t['K']}, s={t['s']} ({t['nnz']} "
                     f"responses): TopTwo2 {t['TopTwo2']['seconds']:.1f} s, TopTwoEM "
                     f"{t['EM map']['seconds']:.1f} s ({t['EM map']['n_iter']} iterations, ratio "
                     f"{t['EM map']['time_ratio']:.1f}), TopTwoEM grid {t['EM grid']['seconds']:.1f} s "
                     f"({t['EM grid']['n_iter']} iterations, ratio {t['EM grid']['time_ratio']:.1f}); "
                     f"pair error {t['TopTwo2']['pair_error']:.4f} / {t['EM map']['pair_error']:.4f} / "
                     f"{t['EM grid']['pair_error']:.4f}; peak RSS of the whole run "
                     f"{t['peak_rss_mb']:.0f} MB.")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=5)
    ap.add_argument("--seed", type=int, default=20260)
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--real", action="store_true",
                    help="only the real datasets (g error, ECE of g_proba_), written to "
                         "results/em_real.json")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if args.real:
        rows = run_real(args.data_dir)
        out = RESULTS.with_name("em_real.json")
        out.write_text(json.dumps({"rows": rows, "command": "OMP_NUM_THREADS=1 python "
                                   "benchmarks/em.py " + " ".join(argv or sys.argv[1:])},
                                  indent=1))
        print(markdown_real(rows))
        return 0
    res = run_grid(args.replicates, args.seed)
    if args.timing:
        res["timing"] = run_timing(args.seed)
    res["command"] = "OMP_NUM_THREADS=1 python benchmarks/em.py " + " ".join(argv or sys.argv[1:])
    res["seconds"] = time.perf_counter() - t0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1))
    print(markdown(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
