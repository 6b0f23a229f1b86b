"""How close does EM on the full likelihood come to the oracle MLE? (TopTwoEM vs TopTwo2)

Usage (from the repository root, one core)::

    OMP_NUM_THREADS=1 python benchmarks/em.py --replicates 5 [--timing]

On the four scenarios of the paper's Table 1 [`tab:synth_setup1`] at (n, m, K) =
(50, 500, 5) and s in {0.05, 0.1, 0.2, 0.3, 0.5, 1.0}, each replicate draws a fresh
instance and a fresh response matrix A and fits on that same A (paired):

* TopTwo2 (default), TopTwoEM (``confusion="map"``) and TopTwoEM() (``confusion="grid"``,
  the default);
* the baselines MACE, one-coin Dawid-Skene (``DawidSkene(confusion="one_coin")``), EBCC
  and GLAD (each with ``rng`` = the replicate's index where it takes one);
* the oracle MLE (eq. (6) with the true p, q) as the reference.

Reported per cell: mean pair error of each method minus the oracle's (the "gap"), with
its paired standard error; for each TopTwoEM variant and each baseline, the mean paired
difference of pair errors (EM minus baseline) with its 95% confidence interval (Student
t quantile, ``scipy.stats.t``), and a flag when EM is worse beyond it (the interval lies
above 0); per scenario, the expected calibration error (ECE, 10 equal bins of the
posterior, weighted by bin size) of ``pair_proba_`` for the chosen pairs, pooled over
rates and replicates. ``--timing`` also fits TopTwo2 (``reliability_estimator="moment"``,
EM's start, and the default) and both TopTwoEM variants on
n = 1000, m = 200000, K = 5, s = 0.01 (about 2 10^6 responses; hard scenario), in
``--timing-rounds`` alternating rounds (the machine is shared: each round times TopTwo2
and then each variant, CPU time of this process, and the median of the per-round ratios
is reported), and
measures the peak resident memory of one fit of each method in a fresh process
(``--memory``; the process loads the data's triples from a file, so the peak is that of
the fit plus the data).

``--real`` instead fits TopTwo2 and both TopTwoEM variants on the paper's seven real
datasets (duplicates="last", as the paper's loaders) and reports the g error and the ECE
of ``g_proba_`` (``benchmarks/results/em_real.json``).

Seeding: replicate r of scenario c at rate index k uses
``numpy.random.SeedSequence(seed, spawn_key=(c, k, r))`` spawned into independent streams
for the instance and the sample. Results go to ``toptwo/experiments/results/em.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import stats

import toptwo

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "toptwo" / "experiments" / "results" / "em.json"

SCENARIOS = ("easy", "hard", "few_smart", "high_variance")
SHAPE = (50, 500, 5)
RATES = (0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
METHODS = {
    "TopTwo2": lambda r: toptwo.TopTwo2(reliability_estimator="moment"),   # EM's start
    "EM map": lambda r: toptwo.TopTwoEM(confusion="map"),
    "EM grid": lambda r: toptwo.TopTwoEM(),
}
EM_METHODS = ("EM map", "EM grid")
BASELINES = {
    "MACE": lambda r: toptwo.baselines.MACE(rng=r),
    "one-coin D&S": lambda r: toptwo.baselines.DawidSkene(confusion="one_coin"),
    "EBCC": lambda r: toptwo.baselines.EBCC(rng=r),
    "GLAD": lambda r: toptwo.baselines.GLAD(),
}


def ece(proba: np.ndarray, correct: np.ndarray, n_bins: int = 10) -> float:
    """Expected calibration error: sum_b (n_b/N) |mean proba_b - accuracy_b|, equal bins."""
    idx = np.minimum((proba * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in range(n_bins):
        sel = idx == b
        if sel.any():
            total += sel.sum() * abs(proba[sel].mean() - correct[sel].mean())
    return total / proba.size


def paired_ci(d: np.ndarray) -> dict:
    """Mean of paired differences with its 95% Student-t confidence interval."""
    mean = float(d.mean())
    if d.size < 2:
        return {"mean": mean, "ci": None, "worse": None}
    half = float(stats.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size))
    return {"mean": mean, "ci": [mean - half, mean + half], "worse": bool(mean - half > 0)}


def draw(c: int, k: int, r: int, seed: int):
    """Replicate r of scenario ``SCENARIOS[c]`` at rate ``RATES[k]``: (model, responses).

    ``SeedSequence(seed, spawn_key=(c, k, r))`` spawned into the instance's and the
    sample's streams (also used by ``benchmarks/em_budget.py``, on the same draws).
    """
    n, m, K = SHAPE
    ss = np.random.SeedSequence(seed, spawn_key=(c, k, r))
    g_model, g_sample = (np.random.default_rng(x) for x in ss.spawn(2))
    model = toptwo.TopTwoModel.scenario(SCENARIOS[c], n, m, K, rng=g_model)
    return model, model.sample(RATES[k], rng=g_sample)


def run_grid(replicates: int, seed: int, baselines: bool = True, partial=None) -> dict:
    n, m, K = SHAPE
    fitted = {**METHODS, **(BASELINES if baselines else {})}
    cells, calib = [], {sc: {meth: ([], []) for meth in EM_METHODS} for sc in SCENARIOS}
    for c, scen in enumerate(SCENARIOS):
        for k, s in enumerate(RATES):
            errs = {name: [] for name in (*fitted, "oracle")}
            secs = {name: 0.0 for name in fitted}
            for r in range(replicates):
                model, A = draw(c, k, r, seed)
                oracle = toptwo.OracleMLE(model.reliability, model.confusion).fit(A)
                errs["oracle"].append(toptwo.top_two_errors(oracle.top_two_, model.top_two)["pair"])
                ok = A.task_counts() > 0
                for name, make in fitted.items():
                    t0 = time.perf_counter()
                    est = make(r).fit(A)
                    secs[name] += time.perf_counter() - t0
                    errs[name].append(toptwo.top_two_errors(est.top_two_, model.top_two)["pair"])
                    if name in EM_METHODS:
                        calib[scen][name][0].append(est.pair_proba_[ok])
                        calib[scen][name][1].append((est.top_two_ == model.top_two).all(axis=1)[ok])
            o = np.array(errs["oracle"])
            cell = {"scenario": scen, "s": s, "replicates": replicates,
                    "oracle": float(o.mean())}
            for name in fitted:
                d = np.array(errs[name]) - o
                cell[name] = {"error": float(np.mean(errs[name])), "gap": float(d.mean()),
                              "gap_se": float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else None,
                              "seconds": secs[name] / replicates}
            cell["replicate_errors"] = {name: [float(e) for e in errs[name]] for name in errs}
            for em in EM_METHODS:
                cell[em]["vs"] = {b: paired_ci(np.array(errs[em]) - np.array(errs[b]))
                                  for b in fitted if b not in EM_METHODS}
            cells.append(cell)
            if partial is not None:
                partial({"cells": cells})
            print(f"{scen:14s} s={s:<5} oracle {o.mean():.4f}  " + "  ".join(
                f"{nm} {cell[nm]['gap']:+.4f}" for nm in fitted), file=sys.stderr, flush=True)
    ece_out = {sc: {meth: ece(np.concatenate(v[0]), np.concatenate(v[1]).astype(float))
                    for meth, v in d.items()} for sc, d in calib.items()}
    return {"cells": cells, "ece": ece_out}


TIMING_SHAPE = (1000, 200_000, 5, 0.01)
TIMED = {"TopTwo2": lambda: toptwo.TopTwo2(reliability_estimator="moment"), "EM grid": lambda: toptwo.TopTwoEM(),
         "EM map": lambda: toptwo.TopTwoEM(confusion="map")}


def timing_data(seed: int):
    n, m, K, s = TIMING_SHAPE
    ss = np.random.SeedSequence(seed, spawn_key=(99,))
    g_model, g_sample = (np.random.default_rng(x) for x in ss.spawn(2))
    model = toptwo.TopTwoModel.scenario("hard", n, m, K, rng=g_model)
    return model, model.sample(s, rng=g_sample)


def run_timing(seed: int, rounds: int) -> dict:
    n, m, K, s = TIMING_SHAPE
    model, A = timing_data(seed)
    out: dict = {"n": n, "m": m, "K": K, "s": s, "nnz": int(A.nnz), "rounds": rounds}
    timed = {"TopTwo2": TIMED["TopTwo2"], "TopTwo2 default": toptwo.TopTwo2,
             "EM grid": TIMED["EM grid"], "EM map": TIMED["EM map"]}
    secs: dict = {name: [] for name in timed}
    out["clock"] = "process_time"
    for _ in range(rounds):
        for name, make in timed.items():
            t0 = time.process_time()
            est = make().fit(A)
            secs[name].append(time.process_time() - t0)
            out[name] = {"pair_error": toptwo.top_two_errors(est.top_two_, model.top_two)["pair"]}
            if name.startswith("EM"):
                out[name]["n_iter"] = int(est.n_iter_)
            del est
    for name in timed:
        out[name]["seconds"] = secs[name]
        out[name]["seconds_median"] = float(np.median(secs[name]))
        if name.startswith("EM"):
            # against TopTwo2(reliability_estimator="moment") (EM's start) and against the
            # default TopTwo2 (leave-one-out step 3; issue 29's "4x TopTwo2" is against it)
            for key, ref in (("", "TopTwo2"), ("_default", "TopTwo2 default")):
                ratios = np.array(secs[name]) / np.array(secs[ref])
                out[name][f"time_ratios{key}"] = ratios.tolist()
                out[name][f"time_ratio{key}"] = float(np.median(ratios))
    out["load_average"] = list(os.getloadavg())
    return out


def run_memory(seed: int) -> dict:
    """Peak RSS of one fit of each method in a fresh process that loads the timing data's
    triples from a file (drawing them in the same process would dominate the peak)."""
    _, A = timing_data(seed)
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "triples.npz"
        np.savez(path, workers=A.workers, tasks=A.tasks, labels=A.labels,
                 shape=np.array([A.n_workers, A.n_tasks, A.n_labels]))
        del A
        for name in TIMED:
            res = subprocess.run([sys.executable, str(Path(__file__).resolve()),
                                  "--memory-child", name, "--memory-file", str(path)],
                                 capture_output=True, text=True, check=True)
            before, peak = (float(v) for v in res.stdout.split()[-2:])
            out[name] = {"rss_before_fit_mb": before, "peak_rss_mb": peak}
    return out


def memory_child(name: str, path: str) -> None:
    """Load the triples, fit one method; print the peak RSS (MB) before and after the fit."""
    z = np.load(path)
    n, m, K = (int(v) for v in z["shape"])
    A = toptwo.Responses(z["workers"], z["tasks"], z["labels"], shape=(n, m), n_labels=K)
    before = _peak_rss_mb()
    TIMED[name]().fit(A)
    print(before, _peak_rss_mb())


def _peak_rss_mb() -> float:
    """Peak RSS of this process in MB: VmHWM of /proc/self/status where there is one
    (ru_maxrss would carry the parent's peak into a child started by fork and exec)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


#: ``--scaling``: responses (n = 1000 workers, m = size/10 tasks, K = 5, s = 0.01, hard).
SCALING_SIZES = (10_000, 100_000, 1_000_000, 10_000_000)
#: mat-vecs timed after every round (the reference, interleaved with the fits)
MATVECS_PER_ROUND = 10


def run_scaling(seed: int, sizes, repeats: int, repeats_large: int) -> dict:
    """TopTwoEM against TopTwo2 from 10^4 to 10^7 responses (issue 29).

    At each size one draw of the ``hard`` scenario (n, m, K, s) = (1000, size/10, 5,
    0.01) as a :class:`toptwo.Responses`; ``repeats`` rounds (``repeats_large`` at 10^7),
    each timing TopTwo2.fit with eq. (5) (EM's start) and with its default (the
    leave-one-out step 3; the "4x TopTwo2" of issue 29 is against this one), then
    TopTwoEM().fit (CPU time of this process, which runs
    on one core), then MATVECS_PER_ROUND sparse mat-vecs ``X @ x`` (X the responses as a
    float CSR matrix, built once): ratios of medians in one run, under the same load. The
    grid E-steps and M-steps are timed inside the fit (by wrapping them), so the cost per
    E-step is measured, not inferred; the gap is the pair error minus the oracle's
    (eq. (6) with the true p, q) on that draw. The peak RSS of one TopTwoEM fit in a fresh
    process that loads the triples is measured with ``--memory``.
    """
    from toptwo.extensions import _em_grid

    out: dict = {"sizes": {}, "repeats": repeats, "repeats_large": repeats_large}
    for size in sizes:
        n, K, s = 1000, 5, 0.01
        m = size // 10
        ss = np.random.SeedSequence(seed, spawn_key=(98, size))
        g_model, g_sample = (np.random.default_rng(x) for x in ss.spawn(2))
        model = toptwo.TopTwoModel.scenario("hard", n, m, K, rng=g_model)
        R = model.sample(s, rng=g_sample)
        X = R.tocsr().astype(np.float64)          # the reference: a float mat-vec
        x = np.random.default_rng(0).standard_normal(m)
        spent = {"e": 0.0, "m": 0.0, "n_e": 0}
        e_orig, m_orig = _em_grid._GridEM.e_step, _em_grid._GridEM.m_step

        def e_step(self, *a, _orig=e_orig, _spent=spent, **k):
            t = time.process_time()
            r = _orig(self, *a, **k)
            _spent["e"] += time.process_time() - t
            _spent["n_e"] += 1
            return r

        def m_step(self, *a, _orig=m_orig, _spent=spent, **k):
            t = time.process_time()
            r = _orig(self, *a, **k)
            _spent["m"] += time.process_time() - t
            return r

        _em_grid._GridEM.e_step, _em_grid._GridEM.m_step = e_step, m_step
        rows = []
        try:
            for _ in range(repeats if size < 10_000_000 else repeats_large):
                t = time.process_time()
                t2 = toptwo.TopTwo2(reliability_estimator="moment").fit(R)
                t_t2 = time.process_time() - t
                t = time.process_time()
                toptwo.TopTwo2().fit(R)              # the default (leave-one-out step 3)
                t_t2d = time.process_time() - t
                spent.update(e=0.0, m=0.0, n_e=0)
                t = time.process_time()
                em = toptwo.TopTwoEM().fit(R)
                t_em = time.process_time() - t
                mv = []
                for _ in range(MATVECS_PER_ROUND):
                    t = time.process_time()
                    X @ x
                    mv.append(time.process_time() - t)
                rows.append({"toptwo2": t_t2, "toptwo2_default": t_t2d, "em": t_em,
                             "e_steps": spent["n_e"],
                             "e_seconds": spent["e"], "m_seconds": spent["m"],
                             "n_iter": int(em.n_iter_), "matvec": float(np.median(mv))})
        finally:
            _em_grid._GridEM.e_step, _em_grid._GridEM.m_step = e_orig, m_orig
        oracle = toptwo.OracleMLE(model.reliability, model.confusion).fit(R)
        err = {name: toptwo.top_two_errors(est.top_two_, model.top_two)["pair"]
               for name, est in (("oracle", oracle), ("TopTwo2", t2), ("EM", em))}
        med = {k: float(np.median([r[k] for r in rows])) for k in rows[0]}
        per_e = float(np.median([(r["e_seconds"] + r["m_seconds"]) / r["e_steps"]
                                 for r in rows]))
        out["sizes"][str(size)] = {
            "n": n, "m": m, "K": K, "s": s, "nnz": int(R.nnz), "rounds": rows,
            "toptwo2_seconds": med["toptwo2"], "em_seconds": med["em"],
            "matvec_seconds": med["matvec"],
            "time_ratio": med["em"] / med["toptwo2"],
            "toptwo2_default_seconds": med["toptwo2_default"],
            "time_ratio_default": med["em"] / med["toptwo2_default"],
            "toptwo2_matvecs": med["toptwo2"] / med["matvec"],
            "em_matvecs": med["em"] / med["matvec"],
            "time_ratios_default": [r["em"] / r["toptwo2_default"] for r in rows],
            "within_4x_default": bool(med["em"] / med["toptwo2_default"] <= 4.0),
            "e_steps": int(rows[-1]["e_steps"]), "n_iter": int(rows[-1]["n_iter"]),
            "matvecs_per_e_step": per_e / med["matvec"],
            "pair_error": err, "gap_em": err["EM"] - err["oracle"],
            "gap_toptwo2": err["TopTwo2"] - err["oracle"]}
        r = out["sizes"][str(size)]
        print(f"{size:>9,d} responses: TopTwo2 {r['toptwo2_seconds']:.3f} s (default "
              f"{r['toptwo2_default_seconds']:.3f} s), EM {r['em_seconds']:.3f} s "
              f"(x{r['time_ratio']:.2f}; x{r['time_ratio_default']:.2f} the default), "
              f"{r['e_steps']} E-steps of "
              f"{r['matvecs_per_e_step']:.0f} mat-vecs, gap {r['gap_em']:+.4f}",
              file=sys.stderr, flush=True)
        del R, X, model, t2, em, oracle
    out["load_average"] = list(os.getloadavg())
    return out


def scaling_memory(seed: int, size: int) -> dict:
    """Peak RSS of one TopTwoEM fit (and one TopTwo2 fit) at ``size`` responses, each in
    a fresh process that loads the triples of ``run_scaling``'s draw from a file."""
    n, K, s = 1000, 5, 0.01
    ss = np.random.SeedSequence(seed, spawn_key=(98, size))
    g_model, g_sample = (np.random.default_rng(x) for x in ss.spawn(2))
    model = toptwo.TopTwoModel.scenario("hard", n, size // 10, K, rng=g_model)
    A = model.sample(s, rng=g_sample)
    out: dict = {"size": size}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "triples.npz"
        np.savez(path, workers=A.workers, tasks=A.tasks, labels=A.labels,
                 shape=np.array([A.n_workers, A.n_tasks, A.n_labels]))
        del A, model
        for name in ("TopTwo2", "EM grid"):
            res = subprocess.run([sys.executable, str(Path(__file__).resolve()),
                                  "--memory-child", name, "--memory-file", str(path)],
                                 capture_output=True, text=True, check=True)
            before, peak = (float(v) for v in res.stdout.split()[-2:])
            out[name] = {"rss_before_fit_mb": before, "peak_rss_mb": peak}
    return out


def markdown_scaling(res: dict) -> str:
    lines = ["| responses | TopTwo2 eq. (5) s (mat-vecs) | TopTwoEM s (mat-vecs) | "
             "EM / TopTwo2 eq. (5) | EM / TopTwo2 default (per-round range) | E-steps | "
             "mat-vecs per E-step | gap EM | gap TopTwo2 | rounds |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for size, r in res["sizes"].items():
        per = r.get("time_ratios_default")
        rng_txt = f" ({min(per):.2f}–{max(per):.2f})" if per else ""
        lines.append(f"| {int(size):,} | {r['toptwo2_seconds']:.3f} ({r['toptwo2_matvecs']:.0f}) | "
                     f"{r['em_seconds']:.3f} ({r['em_matvecs']:.0f}) | {r['time_ratio']:.2f} | "
                     f"{r.get('time_ratio_default', float('nan')):.2f}{rng_txt} | "
                     f"{r['e_steps']} | {r['matvecs_per_e_step']:.0f} | {r['gap_em']:+.4f} | "
                     f"{r['gap_toptwo2']:+.4f} | {len(r['rounds'])} |")
    ok = [r.get("within_4x_default") for r in res["sizes"].values()]
    if ok and all(v is not None for v in ok):
        lines.append("")
        lines.append("Within 4x TopTwo2's default (ratio of medians) at every size: "
                     + ("yes" if all(ok) else "NO") + f"; load average at the end "
                     f"{res.get('load_average', [float('nan')])[0]:.1f}.")
    if "memory" in res:
        mem = res["memory"]
        lines.append("")
        lines.append(f"Peak RSS at {mem['size']:,} responses (fresh process, data loaded; "
                     "before the fit in brackets): " + "; ".join(
                         f"{nm} {mem[nm]['peak_rss_mb']:.0f} MB ({mem[nm]['rss_before_fit_mb']:.0f})"
                         for nm in ("TopTwo2", "EM grid")) + ".")
    return "\n".join(lines)


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
            est = make(0).fit(R)
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
    lines = []
    if res.get("cells"):
        names = [k for k in res["cells"][0]
                 if isinstance(res["cells"][0][k], dict) and k != "replicate_errors"]
        lines += ["| scenario | s | oracle | " + " | ".join(f"{m} gap" for m in names) + " |",
                  "|---|---|---|" + "---|" * len(names)]
        for c in res["cells"]:
            lines.append(f"| {c['scenario']} | {c['s']} | {c['oracle']:.3f} | " + " | ".join(
                f"{c[m]['gap']:+.4f} ± {c[m]['gap_se']:.4f}" if c[m]["gap_se"] is not None
                else f"{c[m]['gap']:+.4f}" for m in names) + " |")
        lines.append("")
        lines.append("| summary | " + " | ".join(names) + " |")
        lines.append("|---|" + "---|" * len(names))
        gaps = {m: np.array([c[m]["gap"] for c in res["cells"]]) for m in names}
        lines.append("| mean gap over cells | " + " | ".join(f"{gaps[m].mean():+.4f}" for m in names) + " |")
        lines.append("| largest cell gap | " + " | ".join(f"{gaps[m].max():+.4f}" for m in names) + " |")
        lines.append("| cells with gap > 0.015 | " + " | ".join(str(int((gaps[m] > 0.015).sum()))
                                                            for m in names) + " |")
        for em in EM_METHODS:
            vs = res["cells"][0][em].get("vs", {})
            base = [b for b in vs if b != "TopTwo2"]
            if not base:
                continue
            lines.append("")
            lines.append(f"{em} minus baseline, pair error (mean paired difference [95% CI]; "
                         "WORSE = the interval lies above 0)")
            lines.append("")
            lines.append("| scenario | s | " + " | ".join(base) + " |")
            lines.append("|---|---|" + "---|" * len(base))
            for c in res["cells"]:
                cells_txt = []
                for b in base:
                    v = c[em]["vs"][b]
                    txt = (f"{v['mean']:+.4f} [{v['ci'][0]:+.4f}, {v['ci'][1]:+.4f}]"
                           if v["ci"] is not None else f"{v['mean']:+.4f}")
                    cells_txt.append(txt + (" WORSE" if v["worse"] else ""))
                lines.append(f"| {c['scenario']} | {c['s']} | " + " | ".join(cells_txt) + " |")
            worse = {b: sum(bool(c[em]["vs"][b]["worse"]) for c in res["cells"]) for b in base}
            lines.append("| cells WORSE | | " + " | ".join(str(worse[b]) for b in base) + " |")
        lines.append("")
        lines.append("| ECE of pair_proba_ | " + " | ".join(EM_METHODS) + " |")
        lines.append("|---|" + "---|" * len(EM_METHODS))
        for sc, d in res["ece"].items():
            lines.append(f"| {sc} | " + " | ".join(f"{d[m]:.3f}" for m in EM_METHODS) + " |")
    if "timing" in res:
        t = res["timing"]
        lines.append("")
        lines.append(f"Timing at n={t['n']}, m={t['m']}, K={t['K']}, s={t['s']} ({t['nnz']} "
                     f"responses), median of {t['rounds']} alternating rounds, load average "
                     f"{t['load_average'][0]:.1f}: TopTwo2 {t['TopTwo2']['seconds_median']:.1f} s "
                     f"(default {t['TopTwo2 default']['seconds_median']:.1f} s); "
                     + "; ".join(f"{nm} {t[nm]['seconds_median']:.1f} s ({t[nm]['n_iter']} "
                                 f"iterations, ratio {t[nm]['time_ratio']:.1f}, "
                                 f"{t[nm]['time_ratio_default']:.1f} the default)"
                                 for nm in ("EM grid", "EM map"))
                     + "; pair error " + " / ".join(f"{t[nm]['pair_error']:.4f}" for nm in TIMED)
                     + " (" + " / ".join(TIMED) + ").")
    if "memory" in res:
        mem = res["memory"]
        lines.append("")
        lines.append("Peak RSS of one fit in a fresh process that loaded the data (RSS before "
                     "the fit in brackets): " + "; ".join(
                         f"{nm} {mem[nm]['peak_rss_mb']:.0f} MB ({mem[nm]['rss_before_fit_mb']:.0f})"
                         for nm in mem) + ".")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=5)
    ap.add_argument("--seed", type=int, default=20260)
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--real", action="store_true",
                    help="only the real datasets (g error, ECE of g_proba_), written to "
                         "benchmarks/results/em_real.json")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--timing-rounds", type=int, default=3)
    ap.add_argument("--no-grid", action="store_true", help="skip the replicate grid")
    ap.add_argument("--keep-grid", action="store_true",
                    help="keep the replicate grid stored in --out (its cells, ECE and command); "
                         "only --timing/--memory are re-measured")
    ap.add_argument("--no-baselines", action="store_true",
                    help="only TopTwo2 and TopTwoEM in the replicate grid")
    ap.add_argument("--memory", action="store_true",
                    help="peak RSS of one fit of each method in a fresh process")
    ap.add_argument("--scaling", action="store_true",
                    help="only TopTwoEM against TopTwo2 from 10^4 to 10^7 responses (with "
                         "--memory: peak RSS at the largest size), written to "
                         "benchmarks/results/em_scaling.json")
    ap.add_argument("--scaling-sizes", default=",".join(str(v) for v in SCALING_SIZES))
    ap.add_argument("--scaling-repeats", type=int, default=5)
    ap.add_argument("--scaling-repeats-large", type=int, default=3,
                    help="rounds at 10^7 responses")
    ap.add_argument("--memory-child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--memory-file", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.memory_child:
        memory_child(args.memory_child, args.memory_file)
        return 0
    t0 = time.perf_counter()
    if args.scaling:
        sizes = [int(float(v)) for v in args.scaling_sizes.split(",")]
        res = run_scaling(args.seed, sizes, args.scaling_repeats, args.scaling_repeats_large)
        if args.memory:
            res["memory"] = scaling_memory(args.seed, max(sizes))
        res["command"] = "OMP_NUM_THREADS=1 python benchmarks/em.py " + " ".join(
            argv or sys.argv[1:])
        res["seconds"] = time.perf_counter() - t0
        out = HERE / "results" / "em_scaling.json"
        out.write_text(json.dumps(res, indent=1))
        print(markdown_scaling(res))
        return 0
    if args.real:
        rows = run_real(args.data_dir)
        out = HERE / "results" / "em_real.json"
        out.write_text(json.dumps({"rows": rows, "command": "OMP_NUM_THREADS=1 python "
                                   "benchmarks/em.py " + " ".join(argv or sys.argv[1:])},
                                  indent=1))
        print(markdown_real(rows))
        return 0
    command = "OMP_NUM_THREADS=1 python benchmarks/em.py " + " ".join(argv or sys.argv[1:])
    res: dict = {"cells": [], "ece": {}}
    if args.keep_grid:
        old = json.loads(args.out.read_text())
        res = {k: old[k] for k in ("cells", "ece")}
        res["grid_command"], res["grid_seconds"] = (old.get("grid_command", old["command"]),
                                                    old.get("grid_seconds", old["seconds"]))
    elif not args.no_grid:
        res = run_grid(args.replicates, args.seed, not args.no_baselines,
                       partial=lambda r: args.out.write_text(json.dumps(
                           {**r, "command": command, "partial": True}, indent=1)))
    if args.timing:
        res["timing"] = run_timing(args.seed, args.timing_rounds)
    if args.memory:
        res["memory"] = run_memory(args.seed)
    res["command"] = command
    res["seconds"] = time.perf_counter() - t0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1))
    print(markdown(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
