"""Stage 1 with one left vector (issue 25): per_k vs stacked vs averaged, paired.

Synthetic part: the four Table 1 scenarios plus a spammer-hammer crowd with 5 hammers
(p = 1) and 45 spammers (p = 0); n = 50, m = 500, K = 5, rates s in RATES, a fresh model
per replicate; every method on the same draws (``toptwo.experiments.sweep``). Reported:
the mean pair-error gap to the oracle MLE (eq. (6) with the true p, q) averaged over the
rates, with its standard error over replicates, and paired differences between variants.

Real part: g error on the tasks with truth on the seven datasets (``duplicates="last"``,
as the authors' loaders) and on 10 subsamples of color keeping each response with
probability 0.2; the authors' released TopTwo1/TopTwo2 (NumPy port without their truth
leak, ``benchmarks/_authors_port.py``) and their choices switched one at a time.

    OMP_NUM_THREADS=1 nice python benchmarks/stage1.py --replicates 20 --data-dir /work/shared/datasets

writes ``toptwo/experiments/results/stage1.json`` (about 10 minutes on 2 shared cores).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import toptwo  # noqa: E402
from toptwo import experiments as ex  # noqa: E402
from toptwo.datasets import DATASETS, load_dataset  # noqa: E402
from _authors_port import AUTHORS, TOPTWO, Hybrid  # noqa: E402

SEED = 2025
KEY = 25
RATES = (0.1, 0.2, 0.3, 0.5, 1.0)
SCENARIOS = ("easy", "hard", "few_smart", "high_variance", "hammer5")
VARIANTS = ("per_k", "stacked", "averaged")
COLOR_RATE = 0.2
COLOR_SUBSAMPLES = 10
#: TopTwo2's step 3 in this study of stage 1: eq. (5) as printed (the default since issue
#: 25's last round, eq. (5) left one out, is measured by ``benchmarks/reliability.py``)
EQ5 = "moment"
OUT = Path(__file__).resolve().parent.parent / "toptwo" / "experiments" / "results" / "stage1.json"


def model_factory(name):
    if name == "hammer5":
        return lambda g: toptwo.TopTwoModel.spammer_hammer(50, 500, 5, hammer_fraction=0.1,
                                                            rng=g)
    return lambda g: toptwo.TopTwoModel.scenario(name, 50, 500, 5, rng=g)


def methods(with_oracle=True):
    out = {}
    if with_oracle:
        out["Oracle"] = lambda mo: toptwo.OracleMLE(mo.reliability, mo.confusion)
    for lv in VARIANTS:
        out[f"TopTwo1 {lv}"] = (lambda v: lambda mo: toptwo.TopTwo1(left_vector=v,
                                                                    sign_rule="paper"))(lv)
    for lv in VARIANTS:
        out[f"TopTwo2 {lv}"] = (lambda v: lambda mo: toptwo.TopTwo2(
            left_vector=v, sign_rule="paper", reliability_estimator=EQ5))(lv)
    for lv in ("per_k", "stacked"):
        out[f"TopTwo2 {lv} refine3"] = (lambda v: lambda mo: toptwo.TopTwo2(
            left_vector=v, sign_rule="paper", n_refinements=3, reliability_estimator=EQ5))(lv)
    for est in ("TopTwo1", "TopTwo2"):
        out[f"{est} stacked, sign sum"] = (lambda e: lambda mo: getattr(toptwo, e)(
            left_vector="stacked", sign_rule="sum",
            **({"reliability_estimator": EQ5} if e == "TopTwo2" else {})))(est)
    out["Authors TopTwo1"] = lambda mo: Hybrid(**AUTHORS, stage=1)
    out["Authors TopTwo2"] = lambda mo: Hybrid(**AUTHORS)
    out["TopTwo2 per_k, norm |p_hat|"] = lambda mo: Hybrid(**(TOPTWO | {"norm": "p_hat"}))
    out["TopTwo2 stacked, norm |p_hat|"] = lambda mo: Hybrid(**(TOPTWO | {
        "norm": "p_hat", "left_vector": "stacked"}))
    return out


def r4(x):
    return float(f"{x:.4g}")


def part_synthetic(replicates):
    meth = methods()
    recs = []
    t0 = time.perf_counter()
    for sc in SCENARIOS:
        recs += ex.sweep(model_factory(sc), meth, RATES, replicates, seed=SEED,
                         key=(KEY, SCENARIOS.index(sc)), tags={"scenario": sc})
        print(f"synthetic {sc}: {time.perf_counter() - t0:.0f} s", flush=True)
    gaps, diffs = {}, {}
    for sc in SCENARIOS:
        w = {"scenario": sc}
        gaps[sc] = {}
        for name in meth:
            if name == "Oracle":
                continue
            g = ex.paired_gap(recs, name, "Oracle", "err_pair", where=w)
            gaps[sc][name] = {"mean": r4(g["mean"]), "sem": r4(g["sem"]), "n": g["n"],
                              "per_rate": {str(x): r4(v[0]) for x, v in g["per_x"].items()}}
        pairs = [("TopTwo1 stacked", "TopTwo1 per_k"), ("TopTwo1 averaged", "TopTwo1 per_k"),
                 ("TopTwo1 stacked", "Authors TopTwo1"),
                 ("TopTwo1 stacked", "TopTwo1 averaged"),
                 ("TopTwo2 stacked", "TopTwo2 per_k"), ("TopTwo2 averaged", "TopTwo2 per_k"),
                 ("TopTwo2 stacked refine3", "TopTwo2 stacked"),
                 ("TopTwo2 per_k refine3", "TopTwo2 per_k"),
                 ("TopTwo2 stacked refine3", "TopTwo2 per_k"),
                 ("TopTwo2 per_k, norm |p_hat|", "TopTwo2 per_k"),
                 ("TopTwo2 stacked", "Authors TopTwo2"),
                 ("TopTwo1 stacked, sign sum", "TopTwo1 stacked"),
                 ("TopTwo2 stacked, sign sum", "TopTwo2 stacked"),
                 ("TopTwo2 stacked, sign sum", "TopTwo2 per_k")]
        diffs[sc] = {}
        for a, b in pairs:
            g = ex.paired_gap(recs, a, b, "err_pair", where=w)
            diffs[sc][f"{a} - {b}"] = {"mean": r4(g["mean"]), "sem": r4(g["sem"])}
    return {"config": {"n": 50, "m": 500, "K": 5, "rates": RATES, "replicates": replicates,
                       "scenarios": SCENARIOS, "seed": SEED, "key": [KEY, "scenario index"],
                       "hammer5": "TopTwoModel.spammer_hammer(50, 500, 5, hammer_fraction=0.1)",
                       "metric": "pair error minus the oracle MLE's, averaged over the rates"},
            "gap_to_oracle": gaps, "paired_differences": diffs}


def real_methods():
    meth = {k: v for k, v in methods(with_oracle=False).items()}
    # the authors' choices switched one at a time, from theirs towards toptwo's
    for key in ("p_clip", "q_clip", "norm"):
        meth[f"Authors TopTwo2, toptwo {key}"] = (lambda k: lambda mo: Hybrid(
            **(AUTHORS | {k: TOPTWO[k]})))(key)
    meth["Authors TopTwo2, toptwo drop_idle+K"] = lambda mo: Hybrid(
        **(AUTHORS | {"drop_idle": True, "k_max": False, "fill_idle_p": 0.05}))
    meth["Authors TopTwo2, toptwo stage 1 (per_k)"] = lambda mo: Hybrid(
        **(AUTHORS | {"stage1": "toptwo"}))
    meth["Authors TopTwo2, toptwo stage 1 (stacked)"] = lambda mo: Hybrid(
        **(AUTHORS | {"stage1": "toptwo", "left_vector": "stacked"}))
    # ... and from toptwo's towards theirs
    for key in ("p_clip", "q_clip"):
        meth[f"TopTwo2 per_k, authors' {key}"] = (lambda k: lambda mo: Hybrid(
            **(TOPTWO | {k: AUTHORS[k]})))(key)
    meth["TopTwo2, authors' stage 1"] = lambda mo: Hybrid(**(TOPTWO | {"stage1": "authors"}))
    return meth


def real_g_errors(meth, data_dir):
    """g error of every method on each real dataset (tasks with truth), and on color
    subsampled at COLOR_RATE (COLOR_SUBSAMPLES draws, spawn key (KEY, 99, r)): returns
    ({dataset: {method: error}}, {method: [error per color subsample]})."""
    out = {}
    for name in DATASETS:
        ds = load_dataset(name, data_dir, duplicates="last")
        has = ds.has_truth
        out[name] = {m: r4(np.mean(make(None).fit(ds.responses).top_two_[has, 0]
                                   != ds.truth[has])) for m, make in meth.items()}
        print(f"real {name}: {out[name]}", flush=True)
    ds = load_dataset("color", data_dir, duplicates="last")
    R = ds.responses
    errs = {m: [] for m in meth}
    for r in range(COLOR_SUBSAMPLES):
        gen = np.random.default_rng(np.random.SeedSequence(SEED, spawn_key=(KEY, 99, r)))
        sub = R.subset(gen.random(R.nnz) < COLOR_RATE)
        for m, make in meth.items():
            errs[m].append(float(np.mean(make(None).fit(sub).top_two_[:, 0] != ds.truth)))
    return out, errs


def part_real(data_dir):
    out, errs = real_g_errors(real_methods(), data_dir)
    out["color 20%"] = {m: r4(np.mean(v)) for m, v in errs.items()}
    out["color 20% sem"] = {m: r4(np.std(v, ddof=1) / np.sqrt(len(v))) for m, v in errs.items()}
    print("real color 20%: done", flush=True)
    return {"config": {"duplicates": "last", "metric": "g error on tasks with truth",
                       "color_subsample": {"rate": COLOR_RATE, "subsamples": COLOR_SUBSAMPLES,
                                           "seed": SEED, "spawn_key": [KEY, 99, "r"]}},
            "g_error": out}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replicates", type=int, default=20)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--parts", default="synthetic,real")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    out_path = Path(a.out)
    res = json.loads(out_path.read_text()) if out_path.exists() else {}
    parts = a.parts.split(",")
    if "synthetic" in parts:
        res["synthetic"] = part_synthetic(a.replicates)
    if "real" in parts:
        res["real"] = part_real(a.data_dir)
    res["command"] = ("OMP_NUM_THREADS=1 nice python benchmarks/stage1.py --replicates "
                      f"{a.replicates} --data-dir <datasets>")
    out_path.write_text(json.dumps(res, indent=1) + "\n")
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
