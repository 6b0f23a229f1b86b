"""TopTwo2's step 3 (issue 25): eq. (5) as printed, left one out (the default), or the MLE.

Synthetic part: the crowds of ``benchmarks/stage1.py`` (the four Table 1 scenarios and the
5-hammer crowd; n = 50, m = 500, K = 5, s in RATES, 20 replicates per rate), on four
independent sets of draws: key (25, crowd index) is ``stage1.py``'s own, keys 26-28 are
held out (the estimator was chosen on key 25). Every method on the same draws. Reported:
the mean pair-error gap to the oracle MLE (eq. (6) with the true p, q) over the rates, its
standard error over replicates, and the paired difference to eq. (5).

Real part: g error on the tasks with truth of the seven datasets (``duplicates="last"``)
and the mean over 10 subsamples of color at rate 0.2 (``stage1.py``'s subsamples).

    OMP_NUM_THREADS=1 python benchmarks/reliability.py --data-dir ../shared/datasets

writes ``benchmarks/results/reliability.json`` (about 4 minutes on one core).
``--em`` instead prints (stores nothing) TopTwoEM started from eq. (5) (its default start)
against TopTwoEM started from the leave-one-out p, paired, on key 25 with 10 replicates per
rate (about 4 minutes).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import toptwo  # noqa: E402
from toptwo import experiments as ex  # noqa: E402
# stage1.py's crowds, draws and color subsamples
from stage1 import (RATES, SCENARIOS, SEED,  # noqa: E402
                    model_factory, real_g_errors)

KEYS = (25, 26, 27, 28)
OUT = Path(__file__).resolve().parent.parent / "benchmarks" / "results" / \
    "reliability.json"
#: name -> TopTwo2 parameters (the default is "leave_one_out")
VARIANTS = {
    "eq. (5)": dict(reliability_estimator="moment"),
    "leave one out (default)": dict(),
    "MLE": dict(reliability_estimator="mle"),
    "eq. (5), refine3": dict(reliability_estimator="moment", n_refinements=3),
    "leave one out, refine3": dict(n_refinements=3),
}
BASE = "eq. (5)"


def methods(with_oracle=True):
    out = {"Oracle": lambda mo: toptwo.OracleMLE(mo.reliability, mo.confusion)} \
        if with_oracle else {}
    for name, params in VARIANTS.items():
        out[name] = (lambda p: lambda mo: toptwo.TopTwo2(**p))(params)
    return out


def r4(x):
    return float(f"{x:.4g}")


def part_synthetic(replicates):
    meth = methods()
    out = {}
    for key in KEYS:
        out[str(key)] = {}
        for sc in SCENARIOS:
            recs = ex.sweep(model_factory(sc), meth, RATES, replicates, seed=SEED,
                            key=(key, SCENARIOS.index(sc)))
            cell = {}
            for name in VARIANTS:
                g = ex.paired_gap(recs, name, "Oracle", "err_pair", x="sampling_rate")
                d = ex.paired_gap(recs, name, BASE, "err_pair", x="sampling_rate")
                cell[name] = {"gap": r4(g["mean"]), "gap_sem": r4(g["sem"]),
                              "minus_eq5": r4(d["mean"]), "minus_eq5_sem": r4(d["sem"]),
                              "n": g["n"]}
            out[str(key)][sc] = cell
            print(f"key {key} {sc}: " + "  ".join(
                f"{n} {c['gap']:+.4f}" for n, c in cell.items()), flush=True)
    return out


def part_real(data_dir):
    out, errs = real_g_errors(methods(with_oracle=False), data_dir)   # stage1.py's draws
    out["color 20%"] = {m: r4(np.mean(v)) for m, v in errs.items()}
    print("color 20%", out["color 20%"], flush=True)
    return out


def em_start(replicates=10):
    """TopTwoEM from eq. (5) (its default) and from the leave-one-out p, paired (printed)."""
    meth = {"Oracle": lambda mo: toptwo.OracleMLE(mo.reliability, mo.confusion),
            "EM from eq. (5)": lambda mo: toptwo.TopTwoEM(),
            "EM from leave one out": lambda mo: toptwo.TopTwoEM(init=toptwo.TopTwo2())}
    for sc in SCENARIOS:
        recs = ex.sweep(model_factory(sc), meth, RATES, replicates, seed=SEED,
                        key=(KEYS[0], SCENARIOS.index(sc)))
        g = ex.paired_gap(recs, "EM from eq. (5)", "Oracle", "err_pair", x="sampling_rate")
        d = ex.paired_gap(recs, "EM from leave one out", "EM from eq. (5)", "err_pair",
                          x="sampling_rate")
        print(f"{sc:14s} EM from eq. (5): gap {g['mean']:+.4f} ± {g['sem']:.4f}; from leave "
              f"one out minus from eq. (5): {d['mean']:+.4f} ± {d['sem']:.4f}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replicates", type=int, default=20)
    ap.add_argument("--data-dir", default=None, help="folder of the seven datasets")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--em", action="store_true", help="only TopTwoEM's start, printed")
    args = ap.parse_args(argv)
    if args.em:
        em_start()
        return 0
    t0 = time.perf_counter()
    res = {"config": {"n": 50, "m": 500, "K": 5, "rates": RATES,
                      "replicates": args.replicates, "scenarios": SCENARIOS, "seed": SEED,
                      "keys": KEYS, "chosen_on_key": 25,
                      "variants": {k: f"TopTwo2({', '.join(f'{a}={b!r}' for a, b in v.items())})"
                                   for k, v in VARIANTS.items()},
                      "metric": "pair error minus the oracle MLE's, averaged over the rates"},
           "synthetic": part_synthetic(args.replicates)}
    if args.data_dir:
        res["real"] = part_real(args.data_dir)
    res["meta"] = {"toptwo": toptwo.__version__, "numpy": np.__version__,
                   "python": platform.python_version(),
                   "seconds": round(time.perf_counter() - t0, 1),
                   "command": "OMP_NUM_THREADS=1 python benchmarks/reliability.py "
                              "--data-dir <datasets>"}
    Path(args.out).write_text(json.dumps(res, indent=1) + "\n")
    print(f"{res['meta']['seconds']} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
