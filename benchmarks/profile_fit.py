"""Where a fit's time goes, in mat-vec equivalents (issue 29): cProfile of one estimator.

Draws the ``medium`` size of ``bench_core.py`` (1000 workers, 200,000 tasks, K = 5,
s = 0.01, about 2e6 responses; the ``hard`` scenario, the same seed), times the reference
sparse mat-vec ``X @ x`` (median of 30), fits the estimator once to warm up, then profiles
``--fits`` more fits and prints the functions with the largest cumulative time, each also
in mat-vecs per fit::

    OMP_NUM_THREADS=1 python benchmarks/profile_fit.py                 # TopTwo2 from a CSR matrix
    OMP_NUM_THREADS=1 python benchmarks/profile_fit.py --estimator TopTwoEM --input responses

Prints only. A profile inflates short Python calls; read the ratios, and take speed
figures from ``bench_core.py`` (ratios of medians, interleaved).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time

import numpy as np
import scipy.sparse as sp

import toptwo

N, M, K, S = 1000, 200_000, 5, 0.01


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--estimator", default="TopTwo2", choices=("TopTwo2", "TopTwo1", "TopTwoEM"))
    ap.add_argument("--input", default="csr", choices=("csr", "responses"))
    ap.add_argument("--fits", type=int, default=3)
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args(argv)
    model_ss, sample_ss = np.random.SeedSequence(0).spawn(2)      # bench_core.py's draw
    model = toptwo.TopTwoModel.scenario("hard", n_workers=N, n_tasks=M, n_labels=K,
                                        rng=np.random.default_rng(model_ss))
    R = model.sample(S, rng=np.random.default_rng(sample_ss))
    w, t, lab = R.workers, R.tasks, R.labels
    A = sp.csr_matrix((lab, (w, t)), shape=(N, M))

    def data():
        if a.input == "csr":
            return A
        return toptwo.Responses(w, t, lab, shape=(N, M), n_labels=K)

    X = sp.csr_matrix((lab.astype(float), (w, t)), shape=(N, M))
    x = np.random.default_rng(0).random(M)
    times = []
    for _ in range(30):
        t0 = time.perf_counter()
        X @ x
        times.append(time.perf_counter() - t0)
    matvec = float(np.median(times))
    cls = getattr(toptwo, a.estimator)
    cls(rng=0).fit(data())                                           # warm-up
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    for _ in range(a.fits):
        cls(rng=0).fit(data())
    prof.disable()
    per_fit = (time.perf_counter() - t0) / a.fits
    print(f"{a.estimator} from {a.input}, {R.nnz} responses: {per_fit:.3f} s per fit (profiled) "
          f"= {per_fit / matvec:.0f} mat-vecs of {matvec * 1e3:.2f} ms")
    stats = pstats.Stats(prof)
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][3])[:a.top]
    print(f"{'cumulative s/fit':>16s} {'mat-vecs':>8s} {'own s/fit':>10s}  function")
    for (path, line, name), (_, _, own, cum, _) in rows:
        where = f"{path.rsplit('/', 2)[-2]}/{path.rsplit('/', 1)[-1]}:{line}" if "/" in path else path
        print(f"{cum / a.fits:16.4f} {cum / a.fits / matvec:8.1f} {own / a.fits:10.4f}  "
              f"{name} ({where})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
