"""What TopTwoEM reaches within a time budget: the gap to the oracle per E-step cap.

Usage (from the repository root, one core)::

    OMP_NUM_THREADS=1 python benchmarks/em_budget.py [--replicates 30] [--timing]

Issue 15 asks for TopTwoEM within 3x TopTwo2's fit time at 2 10^6 responses *and* a mean
pair-error gap to the oracle MLE of at most 0.005 over Table 1's 24 cells. This script
measures the trade-off between the two:

* accuracy: on the cells of ``benchmarks/em.py`` (Table 1's scenarios at (n, m, K) =
  (50, 500, 5), s in {0.05, 0.1, 0.2, 0.3, 0.5, 1.0}, the same seeds and draws), the mean
  gap of ``TopTwoEM(max_iter=k)`` (the default grid variant, stopped after k EM
  iterations, or earlier at its tolerance) for k in ``CAPS``, and of TopTwo2, with the
  paired 95% interval of the mean gap over the 24 cells x replicates;
* time (``--timing``): at n = 1000, m = 200000, K = 5, s = 0.01 (``hard``), the fit time
  of ``TopTwoEM(max_iter=k)`` over TopTwo2's, best of 3 alternating rounds each.

Results go to ``benchmarks/results/em_budget.json`` (no lesson reads it: not package data).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

import toptwo

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from em import RATES, SCENARIOS, draw  # noqa: E402  (benchmarks/em.py: the same cells and draws)

CAPS = (1, 2, 3, 5, 100)
SEED = 20260                     # benchmarks/em.py's default seed: the same draws


def _ci(d: np.ndarray) -> list[float]:
    half = float(stats.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size))
    return [float(d.mean() - half), float(d.mean() + half)]


def accuracy(replicates: int) -> dict:
    gaps: dict[str, list[float]] = {"TopTwo2": [], **{f"EM k={k}": [] for k in CAPS}}
    cell_gaps: dict[str, list[float]] = {name: [] for name in gaps}
    iters = []
    for c in range(len(SCENARIOS)):
        for j in range(len(RATES)):
            cell = {name: [] for name in gaps}
            for r in range(replicates):
                model, A = draw(c, j, r, SEED)
                o = toptwo.OracleMLE(model.reliability, model.confusion).fit(A)
                e_o = toptwo.top_two_errors(o.top_two_, model.top_two)["pair"]
                t2 = toptwo.TopTwo2(reliability_estimator="moment").fit(A)
                cell["TopTwo2"].append(
                    toptwo.top_two_errors(t2.top_two_, model.top_two)["pair"] - e_o)
                for k in CAPS:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        em = toptwo.TopTwoEM(max_iter=k).fit(A)
                    if k == CAPS[-1]:
                        iters.append(em.n_iter_)
                    cell[f"EM k={k}"].append(
                        toptwo.top_two_errors(em.top_two_, model.top_two)["pair"] - e_o)
            for name, d in cell.items():
                gaps[name] += d
                cell_gaps[name].append(float(np.mean(d)))
    out = {}
    for name, d in gaps.items():
        arr = np.asarray(d)
        out[name] = {"mean_gap": float(arr.mean()), "ci95": _ci(arr),
                     "largest_cell": float(max(cell_gaps[name]))}
        print(f"{name:12s} mean gap {arr.mean():.4f} [{out[name]['ci95'][0]:.4f}, "
              f"{out[name]['ci95'][1]:.4f}], largest cell {out[name]['largest_cell']:.4f}",
              flush=True)
    out["em_iterations_uncapped"] = {"median": float(np.median(iters)),
                                     "max": int(np.max(iters))}
    return out


def timing(rounds: int = 3) -> dict:
    model = toptwo.TopTwoModel.scenario("hard", n_workers=1000, n_tasks=200_000, n_labels=5,
                                        rng=0)
    A = model.sample(0.01, rng=1)
    best: dict[str, float] = {}
    for _ in range(rounds):
        for name, make in [("TopTwo2", toptwo.TopTwo2)] + [
                (f"EM k={k}", lambda k=k: toptwo.TopTwoEM(max_iter=k)) for k in CAPS]:
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                make().fit(A)
            best[name] = min(best.get(name, np.inf), time.perf_counter() - t0)
    out = {name: {"seconds": t, "x_TopTwo2": t / best["TopTwo2"]} for name, t in best.items()}
    for name, rec in out.items():
        print(f"{name:12s} {rec['seconds']:.3f} s = {rec['x_TopTwo2']:.1f} x TopTwo2", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=30)
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--no-accuracy", action="store_true",
                    help="keep the stored accuracy part (e.g. to re-time on a quiet machine)")
    args = ap.parse_args()
    path = HERE / "results" / "em_budget.json"
    res = json.loads(path.read_text()) if path.exists() else {}
    if not args.no_accuracy:
        res.update({"replicates": args.replicates, "seed": SEED, "caps": list(CAPS),
                    "accuracy": accuracy(args.replicates)})
    if args.timing:
        res["timing_2e6"] = timing()
    path.write_text(json.dumps(res, indent=1) + "\n")
    print(f"written {path}")


if __name__ == "__main__":
    main()
