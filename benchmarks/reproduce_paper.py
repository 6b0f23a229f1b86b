"""Full-size reproduction of the paper's experiments (Sec. 6, Appendices A, C-E).

Usage (from the repository root, one BLAS thread)::

    OMP_NUM_THREADS=1 /work/venv/bin/python benchmarks/reproduce_paper.py all
    OMP_NUM_THREADS=1 /work/venv/bin/python benchmarks/reproduce_paper.py synthetic

Parts (each writes ``benchmarks/results/reproduce_<part>.json``, read by notebooks 06-09):

``synthetic``
    Fig. 1 [`fig:synthetic_acc`] and Fig. `fig:app:synthetic_acc`: the four scenarios of
    Table 2 at (n, m, K) = (50, 500, 5), s = 0.02, 0.04, ..., 0.2 (n s = 1..10), 30
    replicates (a fresh instance and A per replicate, as in the paper), methods MV,
    MV-D&S, OneCoinDS, TopTwo1, TopTwo2, TopTwo2 split, TopTwo2 refine3, Oracle.
    Stores mean/sem/95% CI per (scenario, method, s, metric), the first 3 replicates
    raw (the notebook's own small run must equal them) and the paired gap to the oracle.
``robustness``
    Appendix D (Fig. `fig:app_exp`): n, m, spread of p, spread of q, spammer fraction at
    s = 0.1, 20 replicates (the paper: 10).
``estimation``
    Fig. `fig:estm_pq`: MSE of p_hat (eq. (5)) and q_hat (eq. (4)) of TopTwo2 against
    n s, at (50, 500) and at the paper's (100, 1000) for q, 20 replicates.
``real``
    Sec. 6.2 / Fig. 2a on color: errors against responses per task by subsampling
    (at most d responses per task, 10 subsamples per budget, as in the paper); g error
    of every method on all seven datasets (inference on all tasks, score on tasks with
    truth). Duplicate (worker, task) pairs: the last line is kept (the paper's loaders).
``topt``
    Appendix `subsec:top_T`: T = 3 recovery at (50, 500, 5), 20 replicates.
``baselines``
    Every baseline of the paper's comparison (``toptwo.paper_experiments.BASELINE_NAMES``:
    MV-D&S, OPT-D&S, PGD, M-MSR, MultiSPA-KL/-EM, EBCC, MACE, GLAD, ...) on the four
    scenarios at n s = 2, 4, ..., 10, 10 replicates (the slow methods make 30 replicates a
    20-minute run), and on the seven datasets.

Seeding: :func:`toptwo.paper_experiments.sweep_rates` (prefix-stable per rate), so a
notebook re-running a few rates with fewer replicates reproduces the first replicates
stored here exactly.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

import toptwo
from toptwo import experiments as ex
from toptwo import paper_experiments as pe
from toptwo.datasets import DATASETS, load_dataset

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

SEED = 20230
SCENARIOS = ("easy", "hard", "few_smart", "high_variance")
SYN_RATES = tuple(round(0.02 * k, 2) for k in range(1, 11))
SYN_REPLICATES = 30
SYN_METHODS = pe.METHOD_NAMES
METRICS3 = ("err_pair", "err_g", "err_h")
ROB_METHODS = ("MV", "MV-D&S (full)", "OneCoinDS", "TopTwo1", "TopTwo2", "TopTwo2 refine3", "Oracle")
REAL_METHODS = ("MV", "MV-D&S (full)", "OneCoinDS", "TopTwo1", "TopTwo2", "TopTwo2 split",
                "TopTwo2 refine3")
COLOR_BUDGETS = (2, 4, 6, 8, 10, 12, 14, 16, 18, 20)
DUPLICATES = "last"   # the paper's MATLAB loaders keep the last answer read


def r4(x):
    """Round to 4 significant digits (keeps the JSON small)."""
    if isinstance(x, (list, tuple, np.ndarray)):
        return [r4(v) for v in x]
    x = float(x)
    if not np.isfinite(x):
        return None
    return float(f"{x:.4g}")


def summarise(records, metrics, x="queries_per_task"):
    out = {}
    for metric in metrics:
        agg = ex.aggregate(records, metric, x=x)
        out[metric] = {str(name): {k: r4(v) for k, v in s.items() if k != "n"}
                       | {"n": [int(v) for v in s["n"]]} for name, s in agg.items()}
    return out


def scenario_factory(name):
    return lambda gen: toptwo.TopTwoModel.scenario(name, 50, 500, 5, rng=gen)


def part_synthetic(replicates):
    methods = pe.method_factories(SYN_METHODS)
    out = {"config": {"n": 50, "m": 500, "K": 5, "rates": SYN_RATES,
                      "replicates": replicates, "methods": list(SYN_METHODS), "seed": SEED,
                      "key": "spawn_key=(scenario index, round(1e5 s))"},
           "scenarios": {}}
    for c, name in enumerate(SCENARIOS):
        t0 = time.perf_counter()
        recs = pe.sweep_rates(scenario_factory(name), methods, SYN_RATES, replicates,
                              seed=SEED, key=(c,), tags={"scenario": name})
        first = {}
        for rec in recs:
            if rec["replicate"] < 3:
                key = f'{rec["method"]}|{rec["sampling_rate"]}'
                first.setdefault(key, []).append([rec[m] for m in METRICS3])
        gaps = {}
        for meth in ("TopTwo2", "TopTwo2 split", "TopTwo2 refine3", "TopTwo1", "MV",
                     "MV-D&S (full)", "OneCoinDS"):
            g = pe.paired_gap(recs, meth, "Oracle", "err_pair")
            gaps[meth] = {k: r4(g[k]) for k in ("mean", "sem", "ci_low", "ci_high")}
            gaps[meth]["per_x"] = {str(k): r4(v) for k, v in g["per_x"].items()}
        diffs = {}
        for a, b in (("TopTwo2 refine3", "TopTwo2"), ("TopTwo2 split", "TopTwo2")):
            g = pe.paired_gap(recs, a, b, "err_pair")
            diffs[f"{a} - {b}"] = {k: r4(g[k]) for k in ("mean", "sem", "ci_low", "ci_high")}
        vs = {}   # paired TopTwo2 - other, per n s: (mean, sem), for the notebook's claims
        for metric in METRICS3:
            vs[metric] = {}
            for meth in SYN_METHODS:
                if meth != "TopTwo2":
                    g = pe.paired_gap(recs, "TopTwo2", meth, metric)
                    vs[metric][meth] = [[r4(k), r4(v[0]), r4(v[1])]
                                        for k, v in g["per_x"].items()]
        out["scenarios"][name] = {"summary": summarise(recs, METRICS3),
                                  "toptwo2_minus": vs,
                                  "first_replicates": first, "gap_to_oracle": gaps,
                                  "paired_differences": diffs,
                                  "seconds": round(time.perf_counter() - t0, 1)}
        print(f"synthetic {name}: {out['scenarios'][name]['seconds']} s", flush=True)
    return out


ROB_SWEEPS = {
    # knob -> (values, factory(value) -> model_factory)
    "n_workers": ((20, 50, 100, 200), lambda v: lambda g: toptwo.TopTwoModel.random(
        v, 500, 5, rng=g)),
    "n_tasks": ((100, 250, 500, 1000, 2000), lambda v: lambda g: toptwo.TopTwoModel.random(
        50, v, 5, rng=g)),
    "p_spread": ((0.05, 0.1, 0.15, 0.2, 0.25), lambda v: lambda g: toptwo.TopTwoModel.random(
        50, 500, 5, reliability_range=(0.5 - v, 0.5 + v), rng=g)),
    "q_spread": ((0.05, 0.1, 0.15, 0.2, 0.25), lambda v: lambda g: toptwo.TopTwoModel.random(
        50, 500, 5, confusion_range=(0.75 - v, 0.75 + v), rng=g)),
    "spammer_fraction": ((0.1, 0.3, 0.5, 0.7, 0.9),
                         lambda v: lambda g: toptwo.TopTwoModel.random(
                             50, 500, 5, spammer_fraction=v, rng=g)),
}


def part_robustness(replicates, sweeps=None):
    methods = pe.method_factories(ROB_METHODS)
    out = {"config": {"s": 0.1, "replicates": replicates, "methods": list(ROB_METHODS),
                      "seed": SEED, "key": "spawn_key=(100 + knob index, value index, 10000)",
                      "defaults": "n=50, m=500, K=5, p~U[0,1], q~U(0.5,1]",
                      "spammers": "p_i = 0 (the paper: p_i in [0, 0.1])"}, "sweeps": {}}
    for k, knob in enumerate(sweeps or ROB_SWEEPS):
        values, make = ROB_SWEEPS[knob]
        t0 = time.perf_counter()
        recs = []
        for v_idx, v in enumerate(values):
            recs += pe.sweep_rates(make(v), methods, [0.1], replicates, seed=SEED,
                                   key=(100 + k, v_idx), tags={"value": float(v)})
        vs = {}
        for meth in ROB_METHODS:
            if meth != "TopTwo2":
                g = pe.paired_gap(recs, "TopTwo2", meth, "err_pair", x="value")
                vs[meth] = [[r4(k), r4(v[0]), r4(v[1])] for k, v in g["per_x"].items()]
        first = {f'{r["method"]}|{r["value"]}': [] for r in recs}
        for r in recs:
            if r["replicate"] < 2:
                first[f'{r["method"]}|{r["value"]}'].append(r["err_pair"])
        out["sweeps"][knob] = {"values": [float(v) for v in values],
                               "summary": summarise(recs, METRICS3, x="value"),
                               "toptwo2_minus": vs, "first_replicates": first,
                               "seconds": round(time.perf_counter() - t0, 1)}
        print(f"robustness {knob}: {out['sweeps'][knob]['seconds']} s", flush=True)
    return out


EST_RATES = (0.02, 0.04, 0.06, 0.1, 0.14, 0.2, 0.3, 0.4)


def part_estimation(replicates):
    methods = pe.method_factories(("TopTwo2",))
    out = {"config": {"rates": EST_RATES, "replicates": replicates,
                      "model": "TopTwoModel.random: p~U[0,1], q~U(0.5,1], K=5",
                      "seed": SEED, "key": "spawn_key=(200 + shape index, round(1e5 s))",
                      "q_hat": "eq. (4) at TopTwo2's g (confusion_, clipped to [1/2, 1])"},
           "shapes": {}}
    for k, (n, m) in enumerate(((50, 500), (100, 1000))):
        recs = pe.sweep_rates(lambda g, n=n, m=m: toptwo.TopTwoModel.random(n, m, 5, rng=g),
                              methods, EST_RATES, replicates, seed=SEED, key=(200 + k,))
        out["shapes"][f"{n}x{m}"] = summarise(recs, ("mse_p", "mse_q", "err_pair"))
        out["shapes"][f"{n}x{m}"]["first_replicates"] = {
            str(s): [[r["mse_p"], r["mse_q"]] for r in recs
                     if r["sampling_rate"] == s and r["replicate"] < 2] for s in EST_RATES}
    return out


def part_real(replicates):
    methods = pe.method_factories(REAL_METHODS)
    out = {"config": {"duplicates": DUPLICATES, "methods": list(REAL_METHODS),
                      "budgets": COLOR_BUDGETS, "replicates": replicates}, "color": {},
           "datasets": {}}
    ds = load_dataset("color", duplicates=DUPLICATES)
    truth = np.column_stack([ds.truth, ds.confusing])
    recs = pe.subsample_sweep(ds.responses, truth, methods, COLOR_BUDGETS, replicates,
                              seed=SEED)
    out["color"] = summarise(recs, METRICS3 + ("responses_per_task",), x="budget")
    out["color_first_replicate"] = {f'{r["method"]}|{r["budget"]}': [r[m] for m in METRICS3]
                                    for r in recs if r["replicate"] == 0}
    for dname in DATASETS:
        dset = load_dataset(dname, duplicates=DUPLICATES)
        has = dset.has_truth
        row = {}
        for name, make in methods.items():
            est = make(None, np.random.default_rng(np.random.SeedSequence(SEED, spawn_key=(
                400, DATASETS.index(dname))))).fit(dset.responses)
            row[name] = r4(np.mean(est.top_two_[has, 0] != dset.truth[has]))
        out["datasets"][dname] = row
    return out


def part_topt(replicates):
    f = lambda g: toptwo.TopTwoModel.random(50, 500, 5, n_top=3, rng=g)  # noqa: E731
    rates = (0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0)
    recs = pe.top_t_sweep(f, rates, replicates, seed=SEED, n_top=3)
    first = {}
    for r in recs:
        if r["replicate"] < 2:
            first.setdefault(f'{r["method"]}|{r["sampling_rate"]}', []).append(
                [r["err_ordered"], r["err_set"]])
    return {"config": {"n": 50, "m": 500, "K": 5, "T": 3, "rates": rates,
                       "replicates": replicates, "seed": SEED,
                       "key": "spawn_key=(round(1e5 s), replicate)"},
            "summary": summarise(recs, ("err_ordered", "err_set", "err_pos1", "err_pos2",
                                        "err_pos3", "mse_q")),
            "first_replicates": first}


BASE_RATES = (0.04, 0.08, 0.12, 0.16, 0.2)         # n s = 2, 4, 6, 8, 10


def _baseline_scenario(c_name):
    """One scenario of the baselines part (a worker process; returns its records)."""
    c, name = c_name
    methods = pe.method_factories(pe.BASELINE_NAMES)
    t0 = time.perf_counter()
    recs = pe.sweep_rates(scenario_factory(name), methods, BASE_RATES, _BASE_REPS[0],
                          seed=SEED + 1, key=(c,), tags={"scenario": name})
    return name, recs, round(time.perf_counter() - t0, 1)


_BASE_REPS = [10]


def part_baselines(replicates):
    """Every baseline of the paper's comparison on Table 2's scenarios and the real data.

    The four scenarios at (50, 500, 5), n s = 2, 4, ..., 10, ``replicates`` fresh
    instances per rate (prefix-stable seeding, as in ``synthetic``), methods
    ``pe.BASELINE_NAMES``; per scenario the mean pair error with its 95% CI, the paired
    gap of every method to the oracle and of TopTwo2 to every method; and the g error of
    every method on the seven datasets. The scenarios run in two processes.
    """
    from concurrent.futures import ProcessPoolExecutor

    _BASE_REPS[0] = replicates
    out = {"config": {"n": 50, "m": 500, "K": 5, "rates": BASE_RATES,
                      "replicates": replicates, "methods": list(pe.BASELINE_NAMES),
                      "seed": SEED + 1, "notes": dict(toptwo.baselines.PAPER_METHOD_NOTES)},
           "scenarios": {}, "datasets": {}}
    with ProcessPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(_baseline_scenario, list(enumerate(SCENARIOS))))
    for name, recs, seconds in done:
        gaps, vs = {}, {}
        for meth in pe.BASELINE_NAMES:
            if meth != "Oracle":
                g = pe.paired_gap(recs, meth, "Oracle", "err_pair")
                gaps[meth] = {k: r4(g[k]) for k in ("mean", "sem", "ci_low", "ci_high")}
            if meth != "TopTwo2":
                g = pe.paired_gap(recs, "TopTwo2", meth, "err_pair")
                vs[meth] = [[r4(k), r4(v[0]), r4(v[1])] for k, v in g["per_x"].items()]
        first = {f'{r["method"]}|{r["sampling_rate"]}': [r[m] for m in METRICS3]
                 for r in recs if r["replicate"] == 0}
        out["scenarios"][name] = {"summary": summarise(recs, METRICS3),
                                  "gap_to_oracle": gaps, "toptwo2_minus": vs,
                                  "first_replicate": first, "seconds": seconds}
        print(f"baselines {name}: {seconds} s", flush=True)
    names = [m for m in pe.BASELINE_NAMES if m != "Oracle"]
    methods = pe.method_factories(names)
    for dname in DATASETS:
        dset = load_dataset(dname, duplicates=DUPLICATES)
        has = dset.has_truth
        row = {}
        for name, make in methods.items():
            est = make(None, np.random.default_rng(np.random.SeedSequence(SEED, spawn_key=(
                401, DATASETS.index(dname))))).fit(dset.responses)
            row[name] = r4(np.mean(est.top_two_[has, 0] != dset.truth[has]))
        out["datasets"][dname] = row
        print(f"baselines {dname}: done", flush=True)
    return out


PARTS = {"synthetic": (part_synthetic, SYN_REPLICATES), "robustness": (part_robustness, 20),
         "estimation": (part_estimation, 20), "real": (part_real, 10),
         "topt": (part_topt, 20), "baselines": (part_baselines, 10)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("part", choices=list(PARTS) + ["all"])
    ap.add_argument("--replicates", type=int, default=None,
                    help="override the part's number of replicates")
    args = ap.parse_args(argv)
    parts = list(PARTS) if args.part == "all" else [args.part]
    for part in parts:
        func, reps = PARTS[part]
        reps = args.replicates or reps
        t0 = time.perf_counter()
        res = func(reps)
        res["meta"] = {"toptwo": toptwo.__version__, "numpy": np.__version__,
                       "python": platform.python_version(),
                       "seconds": round(time.perf_counter() - t0, 1),
                       "command": f"OMP_NUM_THREADS=1 python benchmarks/reproduce_paper.py "
                                  f"{part}" + (f" --replicates {reps}"
                                               if args.replicates else "")}
        path = RESULTS / f"reproduce_{part}.json"
        path.write_text(json.dumps(res, indent=None, separators=(",", ":")) + "\n")
        print(f"{part}: {res['meta']['seconds']} s -> {path.relative_to(HERE.parent)} "
              f"({path.stat().st_size // 1024} KB)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
