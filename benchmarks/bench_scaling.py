"""Issue 27: memory and time bounded by the data whatever K and the number of components.

Rows (one run, reported as ratios so they compare across machines):

* ``K=1000``: the same 3000 answers (100 workers, 300 tasks) with K = 5 and with K = 1000
  (every label occurs); peak memory increase and CPU time of each fit, and the K = 1000 /
  K = 5 ratios. Before issue 27 TopTwo1/TopTwo2 took 1.6 GB at K = 1000 (O(n K^2)).
* ``components``: the same number of answers in one connected component and in
  ``--components`` components (each a 3-worker x 1-task block), K = 3, for TopTwo1 and
  TopTwo2; CPU time ratio. The small components go through one batched computation
  (``toptwo._batched``); the row "loop" runs the per-component loop it replaced
  (``BATCH_MAX_WORKERS = 0``) on ``--loop-components`` of them, the row "K=1000" the
  batched path on ``--k1000-components`` components with K = 1000 (memory ratio too).

Every case runs in a fresh child process (peak memory = ru_maxrss increase over the
loaded data). Run from the repository root with one BLAS thread::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_scaling.py

Results are printed as a markdown table and written to
``benchmarks/results/scaling.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
import numpy as np
import toptwo
import toptwo._batched
case, method, K, n_comp = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if len(sys.argv) > 6 and sys.argv[6] == "loop":      # the per-component loop
    toptwo._batched.BATCH_MAX_WORKERS = 0
gen = np.random.default_rng(0)
if case == "K":
    n, m = 100, 300
    w = np.concatenate([gen.choice(n, 10, replace=False) for _ in range(m)])
    t = np.repeat(np.arange(m), 10)
    lab = gen.integers(1, K + 1, size=w.size)
    lab[:K] = np.arange(1, K + 1)
else:
    rows = 3 * n_comp
    if sys.argv[5] == "split":             # n_comp blocks of 3 workers x 1 task
        w = np.arange(rows)
        t = np.repeat(np.arange(n_comp), 3)
    else:                                   # one component with as many answers
        n = max(30, int(np.sqrt(rows)))
        t = np.repeat(np.arange(n_comp), 3)
        w = np.concatenate([gen.choice(n, 3, replace=False) for _ in range(n_comp)])
    lab = gen.integers(1, K + 1, size=rows)
    lab[:K] = np.arange(1, K + 1)
R = toptwo.Responses.from_triples(w, t, lab, n_labels=K)
make = {"TopTwo1": lambda: toptwo.TopTwo1(), "TopTwo2": lambda: toptwo.TopTwo2(rng=0),
        "MajorityVote": lambda: toptwo.baselines.MajorityVote(rng=0)}[method]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.process_time()
make().fit(R)
cpu = time.process_time() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"nnz": R.nnz, "cpu_s": cpu, "mem_mb": (peak - base) / 1024}))
"""


def child(*args: str) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True,
                         text=True, env=env, check=True, timeout=3600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--components", type=int, default=100_000,
                    help="number of components of the components rows (issue 27: 100000)")
    ap.add_argument("--loop-components", type=int, default=10_000,
                    help="components for the per-component loop row (0.6 ms each)")
    ap.add_argument("--k1000-components", type=int, default=10_000,
                    help="components for the K = 1000 row (U, u~ and v are (n + m) K)")
    args = ap.parse_args()
    rows = []
    for method in ("TopTwo1", "TopTwo2", "MajorityVote"):
        small = child("K", method, "5", "0")
        big = child("K", method, "1000", "0")
        rows.append({"row": "K=1000", "method": method, "nnz": big["nnz"],
                     "cpu_K5_s": small["cpu_s"], "cpu_K1000_s": big["cpu_s"],
                     "mem_K5_mb": small["mem_mb"], "mem_K1000_mb": big["mem_mb"],
                     "cpu_ratio": big["cpu_s"] / max(small["cpu_s"], 1e-3),
                     "mem_ratio": big["mem_mb"] / max(small["mem_mb"], 1.0)})
    cases = [(f"{args.components} components", m, "3", args.components, "batched")
             for m in ("TopTwo1", "TopTwo2")]
    cases += [(f"{args.loop_components} components, loop", "TopTwo2", "3",
               args.loop_components, "loop"),
              (f"{args.loop_components} components", "TopTwo2", "3",
               args.loop_components, "batched"),
              (f"{args.k1000_components} components, K=1000", "TopTwo2", "1000",
               args.k1000_components, "batched")]
    for name, method, K, n_comp, mode in cases:
        one = child("C", method, K, str(n_comp), "one", mode)
        many = child("C", method, K, str(n_comp), "split", mode)
        rows.append({"row": name, "method": method, "K": int(K),
                     "nnz": many["nnz"], "cpu_one_component_s": one["cpu_s"],
                     "cpu_many_components_s": many["cpu_s"],
                     "cpu_ratio": many["cpu_s"] / max(one["cpu_s"], 1e-3),
                     "mem_one_component_mb": one["mem_mb"],
                     "mem_many_components_mb": many["mem_mb"],
                     "ms_per_component": 1000 * many["cpu_s"] / n_comp})
    print("| row | method | nnz | CPU (small / large) s | ratio | memory (small / large) MB |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        if r["row"] == "K=1000":
            print(f"| K=5 vs K=1000 | {r['method']} | {r['nnz']} | {r['cpu_K5_s']:.2f} / "
                  f"{r['cpu_K1000_s']:.2f} | {r['cpu_ratio']:.1f} | {r['mem_K5_mb']:.0f} / "
                  f"{r['mem_K1000_mb']:.0f} |")
        else:
            print(f"| 1 vs {r['row']} | {r['method']} | {r['nnz']} | "
                  f"{r['cpu_one_component_s']:.2f} / {r['cpu_many_components_s']:.2f} | "
                  f"{r['cpu_ratio']:.1f} | {r['mem_one_component_mb']:.0f} / "
                  f"{r['mem_many_components_mb']:.0f} ({r['ms_per_component']:.3f} "
                  f"ms/component) |")
    out = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
    if out.is_dir():
        (out / "scaling.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
