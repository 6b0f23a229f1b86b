"""Full-size reproduction of the paper's experiments (Sec. 6, Appendices A, C-E).

Usage (from the repository root, one BLAS thread per process)::

    OMP_NUM_THREADS=1 python benchmarks/reproduce_paper.py all --workers 2
    OMP_NUM_THREADS=1 python benchmarks/reproduce_paper.py synthetic --workers 2

Parts (each writes ``toptwo/experiments/results/reproduce_<part>.json``, read by notebooks 06-09).
Every method is ``toptwo.experiments.paper.ALL_METHOD_NAMES``: the paper's MV, MV-D&S
(one-coin), OPT-D&S, PGD, M-MSR, MultiSPA-KL, MultiSPA-EM, EBCC, TopTwo1, TopTwo2 and the
oracle MLE, plus MV-D&S (full), MACE, GLAD, TopTwo2 split and TopTwo2 refine3.

``synthetic``
    Fig. 1 [`fig:synthetic_acc`] and Fig. `fig:app:synthetic_acc`: the four scenarios of
    Table 1 [`tab:synth_setup1`] at (n, m, K) = (50, 500, 5), n s = 1, 2, 4, 6, 8, 10
    (s = 0.02 ... 0.2), 30 replicates (a fresh instance and A per replicate, as in the
    paper), every method. Stores per (scenario, metric, method, n s) the mean and 95% CI,
    the paired difference TopTwo2 - every method (mean, sem, n) per n s, the gap to the
    oracle averaged over the grid, and every replicate's pair error (``raw``).
``robustness``
    Appendix D (Fig. `fig:app_exp`): n, m, spread of p, spread of q, spammer fraction at
    s = 0.1, 30 replicates (the paper: 10), every method; MultiSPA-KL and GLAD (7 s and 2 s
    per fit at n = 200) 10 replicates.
``estimation``
    Fig. `fig:estm_pq`: MSE of p_hat (eq. (5)) and q_hat (eq. (4)) of TopTwo2 against
    n s, at (50, 500) and at the paper's (100, 1000) for q, 20 replicates.
``real``
    Sec. 6.2 / Fig. 2a on color: errors against responses per task by subsampling (at
    most d responses per task, d = 2, 4, 8, 12, 16, 20), 30 subsamples per budget (the paper:
    10) for every method but the slow ones: M-MSR, EBCC, MACE and GLAD (0.2-0.5 s per fit)
    get 10 subsamples, MultiSPA-KL (7 s per fit on color) 10 subsamples at d = 4, 12, 20. Duplicate (worker, task) pairs: the last line is kept
    (the paper's loaders).
``baselines``
    The g error of every method on the seven datasets (inference on all tasks, score on
    the tasks with a truth), one fit each.
``topt``
    Appendix `subsec:top_T`: T = 3 recovery at (50, 500, 5), 20 replicates.

Run time (2 worker processes, one BLAS thread each, on a shared 2-core machine): see
``meta.seconds`` of each JSON file; synthetic, robustness and real are the long ones
(several minutes each); the notebooks never run them, they re-run a few draws.
``--workers`` sets the number of processes; finished units (one scenario and rate, one
knob value, one budget) are cached under ``--cache`` so an interrupted run resumes.

Seeding: :func:`toptwo.experiments.sweep` (its one scheme,
:func:`toptwo.experiments.replicate_seed`: prefix-stable per grid point, and each method's
generator depends on its name only), so a notebook re-running a few rates with fewer
replicates reproduces the first replicates stored here. The keys: synthetic (scenario
index,), robustness (100 + knob index, value index), estimation (200 + shape index,), real
(300,), top-T (500,).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

import toptwo
from toptwo import experiments as ex
from toptwo.experiments import paper
from toptwo.datasets import DATASETS, load_dataset

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "toptwo" / "experiments" / "results"

SEED = 20230
SCENARIOS = ("easy", "hard", "few_smart", "high_variance")
ALL = paper.ALL_METHOD_NAMES
SYN_RATES = (0.02, 0.04, 0.08, 0.12, 0.16, 0.2)          # n s = 1, 2, 4, 6, 8, 10
SYN_REPLICATES = 30
METRICS3 = ("err_pair", "err_g", "err_h")
COLOR_BUDGETS = (2, 4, 8, 12, 16, 20)
KL_BUDGETS = (4, 12, 20)
KL_REPLICATES = 10
DUPLICATES = "last"   # the paper's MATLAB loaders keep the last answer read
REAL_KEY, TOPT_KEY = 300, 500   # the sweeps' keys (toptwo.experiments.replicate_seed)
_OPTS = {"workers": 2, "cache": Path(os.environ.get("TMPDIR", "/tmp")) / "toptwo_reproduce"}


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


def _unit_file(part, unit):
    return Path(_OPTS["cache"]) / part / (hashlib.sha1(repr(unit).encode()).hexdigest()[:16]
                                          + ".json")


def _cached(job):
    """Run one unit in a worker, unless a finished copy is in the cache (written atomically,
    so several processes can share the cache, e.g. one run with ``--reverse``)."""
    part, func, unit = job
    f = _unit_file(part, unit)
    if f.exists():
        return json.loads(f.read_text()), None
    recs, sec = func(unit)
    tmp = f.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(recs))
    tmp.replace(f)
    return recs, sec


def _per_method(unit):
    """One job per method: a unit's last element is its tuple of method names, and each
    method's records depend on its name only (:func:`toptwo.experiments.sweep`), so a
    method is cached on its own and ``--redo NAME`` re-runs just that method."""
    *head, names = unit
    return [(*head, (name,)) for name in names]


def _run_units(part, func, units):
    """``func(unit)`` for every unit and method in worker processes; finished ones are
    cached. Records come back in the order of one joint run: unit, replicate, method."""
    (Path(_OPTS["cache"]) / part).mkdir(parents=True, exist_ok=True)
    jobs = [job for u in units for job in _per_method(u)]
    for job in jobs:
        if job[-1][0] in _OPTS.get("redo", ()):
            _unit_file(part, job).unlink(missing_ok=True)
    todo = list(reversed(jobs)) if _OPTS.get("reverse") else list(jobs)
    k = _OPTS.get("rotate", 0) % len(todo)
    todo = todo[k:] + todo[:k]
    out = {}
    with ProcessPoolExecutor(max_workers=_OPTS["workers"]) as pool:
        for u, (recs, sec) in zip(todo, pool.map(_cached, [(part, func, u) for u in todo])):
            out[repr(u)] = recs
            print(f"{part} {u}: " + ("cached" if sec is None else f"{sec:.0f} s"), flush=True)
    order = {m: i for i, m in enumerate(ALL)}
    recs = []
    for u in units:
        recs += sorted((r for job in _per_method(u) for r in out[repr(job)]),
                       key=lambda r: (r["replicate"], order[r["method"]]))
    return recs


def _clean(recs):
    keep = ("method", "replicate", "queries_per_task", "sampling_rate", "value", "budget",
            "responses_per_task", "scenario", "knob") + METRICS3
    return [{k: (float(v) if isinstance(v, (float, np.floating)) else v)
             for k, v in r.items() if k in keep} for r in recs]


def _tables(recs, x):
    """Summary, paired TopTwo2 - others, gap to the oracle and raw pair errors."""
    names = list(dict.fromkeys(r["method"] for r in recs))
    out = {"summary": summarise(recs, METRICS3, x=x), "toptwo2_minus": {}}
    for metric in METRICS3:
        tab = ex.paired_differences(recs, "TopTwo2", names, metric, x=x)
        out["toptwo2_minus"][metric] = {m: [[r4(a), r4(b), r4(c), n] for a, b, c, n in rows]
                                        for m, rows in tab.items()}
    if "Oracle" in names:
        out["gap_to_oracle"] = {}
        for m in names:
            if m != "Oracle":
                g = ex.paired_gap(recs, m, "Oracle", "err_pair", x=x)
                out["gap_to_oracle"][m] = {k: r4(g[k]) for k in ("mean", "sem", "ci_low",
                                                                  "ci_high")} | {"n": g["n"]}
    raw = {}
    for r in recs:
        raw.setdefault(r["method"], {}).setdefault(str(float(r[x])), {})[r["replicate"]] = \
            r4(r["err_pair"])
    out["raw_err_pair"] = {m: {k: [v[i] for i in sorted(v)] for k, v in d.items()}
                           for m, d in raw.items()}
    return out


def _synthetic_unit(unit):
    c, name, rate, reps, names = unit
    t0 = time.perf_counter()
    recs = ex.sweep(scenario_factory(name), paper.method_factories(names), (rate,), reps,
                    seed=SEED, key=(c,), tags={"scenario": name})
    return _clean(recs), time.perf_counter() - t0


def part_synthetic(replicates):
    out = {"config": {"n": 50, "m": 500, "K": 5, "rates": SYN_RATES,
                      "replicates": replicates, "methods": list(ALL),
                      "paper_methods": list(paper.PAPER_NAMES), "seed": SEED,
                      "key": "(scenario index,): toptwo.experiments.replicate_seed",
                      "notes": dict(paper.METHOD_NOTES)},
           "scenarios": {}}
    units = [(c, name, s, replicates, tuple(ALL)) for c, name in enumerate(SCENARIOS)
             for s in SYN_RATES]
    recs = _run_units("synthetic", _synthetic_unit, units)
    for name in SCENARIOS:
        out["scenarios"][name] = _tables([r for r in recs if r["scenario"] == name],
                                         "queries_per_task")
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


#: the two methods that cost most at n = 200 or m = 2000 (7 s and 2 s per fit): 10
#: replicates in the robustness sweeps (the paper's count), the others 30
SLOW_ROB = ("MultiSPA-KL", "GLAD")
SLOW_ROB_REPLICATES = 10


def _robustness_unit(unit):
    k, knob, v_idx, reps, names = unit
    values, make = ROB_SWEEPS[knob]
    v = values[v_idx]
    t0 = time.perf_counter()
    recs = ex.sweep(make(v), paper.method_factories(names), [0.1], reps, seed=SEED,
                    key=(100 + k, v_idx), tags={"value": float(v), "knob": knob})
    return _clean(recs), time.perf_counter() - t0


def part_robustness(replicates):
    slow_reps = min(SLOW_ROB_REPLICATES, replicates)
    out = {"config": {"s": 0.1, "replicates": replicates, "methods": list(ALL),
                      "paper_methods": list(paper.PAPER_NAMES),
                      "fewer_replicates": {"methods": list(SLOW_ROB), "replicates": slow_reps},
                      "seed": SEED, "key": "(100 + knob index, value index): "
                                           "toptwo.experiments.replicate_seed",
                      "defaults": "n=50, m=500, K=5, p~U[0,1], q~U(0.5,1]",
                      "spammers": "p_i = 0 (the paper: p_i in [0, 0.1])"}, "sweeps": {}}
    fast = tuple(m for m in ALL if m not in SLOW_ROB)
    units = []
    for k, knob in enumerate(ROB_SWEEPS):
        for i in range(len(ROB_SWEEPS[knob][0])):
            units += [(k, knob, i, replicates, fast), (k, knob, i, slow_reps, SLOW_ROB)]
    recs = _run_units("robustness", _robustness_unit, units)
    order = {m: i for i, m in enumerate(ALL)}
    recs.sort(key=lambda r: (r["knob"], r["value"], r["replicate"], order[r["method"]]))
    for knob, (values, _) in ROB_SWEEPS.items():
        out["sweeps"][knob] = {"values": [float(v) for v in values]}
        out["sweeps"][knob].update(_tables([r for r in recs if r["knob"] == knob], "value"))
    return out


EST_RATES = (0.02, 0.04, 0.06, 0.1, 0.14, 0.2, 0.3, 0.4)


def part_estimation(replicates):
    methods = paper.method_factories(("TopTwo2",))
    out = {"config": {"rates": EST_RATES, "replicates": replicates,
                      "model": "TopTwoModel.random: p~U[0,1], q~U(0.5,1], K=5",
                      "seed": SEED, "key": "(200 + shape index,): toptwo.experiments.replicate_seed",
                      "q_hat": "eq. (4) at TopTwo2's g (confusion_, clipped to [1/2, 1])"},
           "shapes": {}}
    for k, (n, m) in enumerate(((50, 500), (100, 1000))):
        recs = ex.sweep(lambda g, n=n, m=m: toptwo.TopTwoModel.random(n, m, 5, rng=g),
                        methods, EST_RATES, replicates, seed=SEED, key=(200 + k,))
        out["shapes"][f"{n}x{m}"] = {"summary": summarise(recs, ("mse_p", "mse_q", "err_pair"))}
        out["shapes"][f"{n}x{m}"]["first_replicates"] = {
            str(s): [[r["mse_p"], r["mse_q"]] for r in recs
                     if r["sampling_rate"] == s and r["replicate"] < 2] for s in EST_RATES}
    return out


def _color():
    ds = load_dataset("color", duplicates=DUPLICATES)
    return ds.responses, np.column_stack([ds.truth, ds.confusing])


def _real_unit(unit):
    d, reps, names = unit
    R, truth = _color()
    t0 = time.perf_counter()
    recs = ex.sweep(R, paper.method_factories(names), (d,), reps, seed=SEED, key=(REAL_KEY,),
                    draw="per_task", truth=truth)
    return _clean(recs), time.perf_counter() - t0


#: the iterative methods that cost 0.2-0.5 s per fit on color: 10 subsamples (as the paper)
SLOW_REAL = ("M-MSR", "EBCC", "MACE", "GLAD")
SLOW_REPLICATES = 10


def part_real(replicates):
    fast = [m for m in ALL if m not in ("Oracle", "MultiSPA-KL") + SLOW_REAL]
    out = {"config": {"duplicates": DUPLICATES,
                      "methods": [m for m in ALL if m != "Oracle"],
                      "paper_methods": [m for m in paper.PAPER_NAMES if m != "Oracle"],
                      "budgets": COLOR_BUDGETS, "replicates": replicates,
                      "fewer_replicates": {"methods": list(SLOW_REAL),
                                           "replicates": SLOW_REPLICATES,
                                           "MultiSPA-KL": {"budgets": KL_BUDGETS,
                                                           "replicates": KL_REPLICATES}},
                      "seed": SEED, "key": [REAL_KEY],
                      "seeding": "toptwo.experiments.replicate_seed(seed, d, replicate, key)"},
           "datasets": {}}
    units = [(d, replicates, tuple(fast)) for d in COLOR_BUDGETS]
    units += [(d, min(SLOW_REPLICATES, replicates), SLOW_REAL) for d in COLOR_BUDGETS]
    units += [(d, min(KL_REPLICATES, replicates), ("MultiSPA-KL",)) for d in KL_BUDGETS]
    recs = _run_units("real-v2", _real_unit, units)
    order = {m: i for i, m in enumerate(ALL)}
    recs.sort(key=lambda r: (r["budget"], r["replicate"], order[r["method"]]))
    color = _tables(recs, "budget")
    color["summary"] |= summarise(recs, ("responses_per_task",), x="budget")
    out["datasets"]["color"] = color
    return out


def part_topt(replicates):
    f = lambda g: toptwo.TopTwoModel.random(50, 500, 5, n_top=3, rng=g)  # noqa: E731
    rates = (0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0)
    recs = ex.sweep(f, paper.method_factories(("MV", "TopTwo1", "TopTwo2", "Oracle"), n_top=3),
                    rates, replicates, seed=SEED, key=(TOPT_KEY,))
    first = {}
    for r in recs:
        if r["replicate"] < 2:
            first.setdefault(f'{r["method"]}|{r["sampling_rate"]}', []).append(
                [r["err_ordered"], r["err_set"]])
    return {"config": {"n": 50, "m": 500, "K": 5, "T": 3, "rates": rates,
                       "replicates": replicates, "seed": SEED,
                       "key": [TOPT_KEY],
                       "seeding": "toptwo.experiments.replicate_seed(seed, s, replicate, key)"},
            "summary": summarise(recs, ("err_ordered", "err_set", "err_pos1", "err_pos2",
                                        "err_pos3", "mse_q")),
            "first_replicates": first}


def part_baselines(replicates):
    """The g error of every method on the seven datasets (one fit each)."""
    names = [m for m in ALL if m != "Oracle"]
    methods = paper.method_factories(names)
    out = {"config": {"methods": names, "paper_methods": [m for m in paper.PAPER_NAMES
                                                          if m != "Oracle"],
                      "duplicates": DUPLICATES, "seed": SEED,
                      "key": "spawn_key=(401, dataset index)"}, "datasets": {}}
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


PARTS = {"synthetic": (part_synthetic, SYN_REPLICATES), "robustness": (part_robustness, 30),
         "estimation": (part_estimation, 20), "real": (part_real, 30),
         "topt": (part_topt, 20), "baselines": (part_baselines, 1)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("part", choices=list(PARTS) + ["all"])
    ap.add_argument("--replicates", type=int, default=None,
                    help="override the part's number of replicates")
    ap.add_argument("--workers", type=int, default=2, help="worker processes")
    ap.add_argument("--reverse", action="store_true",
                    help="run the units in reverse order (a second process sharing the cache)")
    ap.add_argument("--rotate", type=int, default=0,
                    help="start at this unit (a third process sharing the cache)")
    ap.add_argument("--cache", default=str(_OPTS["cache"]),
                    help="directory of finished units (resumes an interrupted run)")
    ap.add_argument("--redo", default="",
                    help="comma-separated method names to re-run (their cached units are "
                         "dropped; the other methods come from the cache)")
    args = ap.parse_args(argv)
    _OPTS["workers"], _OPTS["cache"] = args.workers, Path(args.cache)
    _OPTS["reverse"], _OPTS["rotate"] = args.reverse, args.rotate
    _OPTS["redo"] = tuple(filter(None, args.redo.split(",")))
    unknown = set(_OPTS["redo"]) - set(ALL)
    if unknown:
        ap.error(f"--redo: unknown method(s) {sorted(unknown)}; known: {list(ALL)}")
    parts = list(PARTS) if args.part == "all" else [args.part]
    for part in parts:
        func, reps = PARTS[part]
        reps = args.replicates or reps
        t0 = time.perf_counter()
        res = func(reps)
        res["meta"] = {"toptwo": toptwo.__version__, "numpy": np.__version__,
                       "python": platform.python_version(),
                       "seconds": round(time.perf_counter() - t0, 1),
                       "workers": args.workers,
                       "load_average": [round(v, 2) for v in os.getloadavg()],
                       "command": f"OMP_NUM_THREADS=1 python benchmarks/reproduce_paper.py "
                                  f"{part} --workers {args.workers}"
                                  + (f" --replicates {reps}" if args.replicates else "")}
        path = RESULTS / f"reproduce_{part}.json"
        path.write_text(json.dumps(res, indent=None, separators=(",", ":")) + "\n")
        print(f"{part}: {res['meta']['seconds']} s -> {path.relative_to(HERE.parent)} "
              f"({path.stat().st_size // 1024} KB)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
