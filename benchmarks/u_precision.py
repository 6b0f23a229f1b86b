"""How precisely u^(k) is needed: the Lanczos stop against the sampling noise of u.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 python benchmarks/u_precision.py [--sizes medium,large]

For each size of ``benchmarks/bench_core.py`` (n workers, m tasks, K = 5, rate s) and
each of Table 1's scenarios ``hard``, ``easy`` and ``few_smart``, two independent
response sets are drawn from one model. Printed per size and scenario:

* the sampling noise of u: rms and max over the entries of all u^(k) of
  |u(draw 1) - u(draw 2)| / sqrt 2 (TopTwo1's fit of each draw);
* the solver error of the default stop (``toptwo._linalg.LANCZOS_TOL`` = 1e-7): the
  largest |u - u_precise| against the same fit stopped at 1e-10 theta_1 (the stop before
  this change) over the entries neither fit zeroed (entries within ``U_ABS_TOL`` of 0
  are set to 0), and the bound ``ITERATIVE_U_TOL`` (theta_1/gap <= 100);
* joint Lanczos steps of each stop;
* the fraction of tasks whose TopTwo1 / TopTwo2 top two differ between the stops, and
  TopTwo2's g error against the truth under both stops (an evaluation, after the fits).

With ``--paired R`` it also runs R paired replicates on each of Table 1's four scenarios
on the Lanczos path (n = 500 workers, m = 2000 tasks, K = 5, s in {0.05, 0.2}): TopTwo1
and TopTwo2 fitted to the same draw under both stops, and the mean paired difference of
the pair error (``toptwo.metrics.top_two_errors``) with its 95% t interval per cell, and
the number of the 16 (cell, method) differences significant after Holm's correction.

Results go to ``benchmarks/results/u_precision.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import scipy.linalg

import toptwo
import toptwo.experiments as ex
import toptwo._linalg as spectral  # the solver settings live in the private solver module

HERE = Path(__file__).resolve().parent
SIZES = {"medium": (1000, 200_000, 5, 0.01), "large": (2000, 1_000_000, 5, 0.005)}
SCENARIOS = ("hard", "easy", "few_smart")


def _fit(R, precise: bool):
    """TopTwo1 and TopTwo2 on R, with the number of joint Lanczos steps of TopTwo1."""
    saved = spectral.LANCZOS_TOL, spectral.ARPACK_TOL
    steps = []
    orig = scipy.linalg.eigh_tridiagonal

    def counting(a, b, *args, **kw):        # called once per step and unconverged k
        steps.append(len(a))
        return orig(a, b, *args, **kw)
    try:
        if precise:
            spectral.LANCZOS_TOL = spectral.ARPACK_TOL = 1e-10
        scipy.linalg.eigh_tridiagonal = counting
        t1 = toptwo.TopTwo1().fit(R)
        n_steps = max(steps, default=1)
        scipy.linalg.eigh_tridiagonal = orig
        t2 = toptwo.TopTwo2(reliability_estimator="moment").fit(R)
    finally:
        scipy.linalg.eigh_tridiagonal = orig
        spectral.LANCZOS_TOL, spectral.ARPACK_TOL = saved
    return t1, t2, n_steps


def measure(size: str) -> dict:
    n, m, K, s = SIZES[size]
    out = {}
    for scen in SCENARIOS:
        model = toptwo.TopTwoModel.scenario(scen, n_workers=n, n_tasks=m, n_labels=K,
                                            rng=np.random.default_rng(0))
        R1 = model.sample(s, rng=np.random.default_rng(1))
        R2 = model.sample(s, rng=np.random.default_rng(2))
        a1, a2, steps = _fit(R1, precise=False)
        p1, p2, steps_p = _fit(R1, precise=True)
        b1, _, _ = _fit(R2, precise=False)
        noise = np.abs(a1.result_.left_vectors - b1.result_.left_vectors) / np.sqrt(2)
        g = model.top_two[:, 0]
        rec = {
            "nnz": int(R1.nnz),
            "u_noise_rms": float(np.sqrt(np.mean(noise ** 2))),
            "u_noise_max": float(noise.max()),
            # entries zeroed by either fit differ by at most their threshold; the rest
            # show the solver's error
            "u_solver_error": float(np.abs(a1.result_.left_vectors - p1.result_.left_vectors)[
                (a1.result_.left_vectors != 0) & (p1.result_.left_vectors != 0)].max()),
            "bound_ITERATIVE_U_TOL": spectral.ITERATIVE_U_TOL,
            "lanczos_steps": {"1e-7": steps, "1e-10": steps_p},
            "tasks_changed": {
                "TopTwo1": float(np.mean((a1.top_two_ != p1.top_two_).any(axis=1))),
                "TopTwo2": float(np.mean((a2.top_two_ != p2.top_two_).any(axis=1)))},
            "TopTwo2_g_error": {"1e-7": float(np.mean(a2.top_two_[:, 0] != g)),
                                "1e-10": float(np.mean(p2.top_two_[:, 0] != g))},
        }
        out[scen] = rec
        print(f"{size:6s} {scen:9s} u noise rms {rec['u_noise_rms']:.1e} "
              f"max {rec['u_noise_max']:.1e} | solver error {rec['u_solver_error']:.1e} "
              f"(bound {spectral.ITERATIVE_U_TOL:.0e}) | steps {steps} vs {steps_p} | "
              f"tasks changed T1 {rec['tasks_changed']['TopTwo1']:.4f} "
              f"T2 {rec['tasks_changed']['TopTwo2']:.4f} | TopTwo2 g error "
              f"{rec['TopTwo2_g_error']['1e-7']:.4f} vs {rec['TopTwo2_g_error']['1e-10']:.4f}",
              flush=True)
    return out


def paired(replicates: int) -> dict:
    """Pair error under the default stop minus under the 1e-10 stop, paired by draw."""
    from scipy import stats

    from toptwo.metrics import top_two_errors

    out = {}
    for scen in ("easy", "hard", "few_smart", "high_variance"):
        for s in (0.05, 0.2):
            diffs = {"TopTwo1": [], "TopTwo2": []}
            for r in range(replicates):
                seq = np.random.SeedSequence(20261124, spawn_key=(len(out), r))
                g_model, g_data = (np.random.default_rng(x) for x in seq.spawn(2))
                model = toptwo.TopTwoModel.scenario(scen, n_workers=500, n_tasks=2000,
                                                    n_labels=5, rng=g_model)
                R = model.sample(s, rng=g_data)
                a1, a2, _ = _fit(R, precise=False)
                p1, p2, _ = _fit(R, precise=True)
                for name, a, p in (("TopTwo1", a1, p1), ("TopTwo2", a2, p2)):
                    diffs[name].append(top_two_errors(a.top_two_, model.top_two)["pair"]
                                       - top_two_errors(p.top_two_, model.top_two)["pair"])
            cell = {}
            for name, d in diffs.items():
                d = np.asarray(d)
                sem = float(stats.sem(d)) if d.std() > 0 else 0.0
                half = float(stats.t.ppf(0.975, d.size - 1) * sem)
                pval = float(stats.ttest_1samp(d, 0.0).pvalue) if sem > 0 else float("nan")
                cell[name] = {"mean": float(d.mean()), "ci95": [float(d.mean() - half),
                                                                float(d.mean() + half)],
                              "p": pval, "n_changed_replicates": int(np.count_nonzero(d))}
            out[f"{scen}, s={s}"] = cell
            print(f"paired {scen:13s} s={s}: " + "; ".join(
                f"{k} {v['mean']:+.5f} [{v['ci95'][0]:+.5f}, {v['ci95'][1]:+.5f}] "
                f"({v['n_changed_replicates']}/{replicates} changed)" for k, v in cell.items()),
                flush=True)
    # one family: every (cell, method) test of "no difference", Holm-adjusted
    family = [t for cell in out.values() for t in cell.values()]
    ex.holm_family(family)
    print(f"Holm-significant at 5 % (of {len(family)}): "
          f"{sum(t['significant'] for t in family)}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="medium,large")
    ap.add_argument("--paired", type=int, default=0, help="replicates per cell (0: skip)")
    args = ap.parse_args()
    res = {size: measure(size) for size in args.sizes.split(",") if size}
    if args.paired:
        res["paired"] = paired(args.paired)
    path = HERE.parent / "benchmarks" / "results" / "u_precision.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    old.update(res)
    path.write_text(json.dumps(old, indent=1) + "\n")
    print(f"written {path}")


if __name__ == "__main__":
    main()
