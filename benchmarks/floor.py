"""What issue 29's two missed speed targets would need: floors of TopTwo2 and TopTwoEM.

Issue 29 asks for TopTwo2 from a scipy CSR matrix in <= 60 mat-vec equivalents at 2e6 and
1e7 responses ("the algorithm needs a few Lanczos products per leading vector plus about
four passes, so 20-30 is the floor") and for TopTwoEM within 4x TopTwo2's fit time. This
script measures, in one process per size and interleaved with the reference mat-vec
``X @ x`` (as ``bench_core.py``), the operations that the algorithms as specified cannot
skip, each in mat-vecs (ratio of medians over ``--repeats``):

* reading the CSR matrix (``as_responses``) and the task-major transposition;
* stage 1's Gram products: the number the default fit runs (counted) times the cost of one
  (the stacked operator of ``toptwo._pooled``, one backward and one forward pass), and
  the projection of step 3;
* eq. (6): a weight log(K p q / (1 - p) + 1) per response and slot, i.e. two ``np.log1p``
  over nnz values (the scores' sums and the pair search not counted);
* TopTwoEM: its E-steps (counted) times the exponentials of one E-step (K m G 2, G grid
  nodes, as ``np.exp`` over that many values), plus its start (a TopTwo2 fit, measured).

The sum of the first five rows is the floor of TopTwo2 printed (the transposition is this
implementation's, the other four the algorithm's; each at NumPy's and SciPy's speed for
it); the measured fits are printed beside it. The EM ratios are taken in seconds::

    OMP_NUM_THREADS=1 python benchmarks/floor.py --sizes medium,large

Prints only (about 3 minutes; the large size needs about 3 GB).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp

SIZES = {"medium": (1000, 200_000, 5, 0.01), "large": (2000, 1_000_000, 5, 0.005)}


def _median_time(f, repeats: int, matvec) -> tuple[float, float]:
    """(median of f's times, median of the mat-vecs taken right after each run)."""
    ts, ms = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
        for _ in range(3):
            t0 = time.perf_counter()
            matvec()
            ms.append(time.perf_counter() - t0)
    return float(np.median(ts)), float(np.median(ms))


def run(size: str, repeats: int, em: bool) -> None:
    import toptwo
    from toptwo import _pooled
    from toptwo.binary import LabelBlocks
    from toptwo.extensions import _em_grid
    from toptwo.responses import _FitView, as_responses

    n, m, K, s = SIZES[size]
    model_ss, sample_ss = np.random.SeedSequence(0).spawn(2)        # bench_core's draw
    model = toptwo.TopTwoModel.scenario("hard", n_workers=n, n_tasks=m, n_labels=K,
                                        rng=np.random.default_rng(model_ss))
    R = model.sample(s, rng=np.random.default_rng(sample_ss))
    w, t, lab = R.workers, R.tasks, R.labels
    nnz = R.nnz
    A = sp.csr_matrix((lab, (w, t)), shape=(n, m))
    X = sp.csr_matrix((lab.astype(float), (w, t)), shape=(n, m))
    x = np.random.default_rng(0).random(m)

    def matvec():
        X @ x

    rows = []                                  # (what, seconds, mat-vecs, in the floor)
    unit = []

    def measure(what, f, floor, times=1.0):
        sec, mv = _median_time(f, repeats, matvec)
        unit.append(mv)
        rows.append((what, sec * times, sec * times / mv, floor))

    measure("reading the CSR matrix (as_responses)", lambda: as_responses(A, owner="x"), True)
    measure("task-major transposition", lambda: _FitView(R).task_major(), True)
    # stage 1's Gram products: counted in a default fit, priced one at a time
    calls = [0]
    original = _pooled._StackedGram.backward

    def counted(self, V, ks=None):
        calls[0] += 1
        return original(self, V, ks)

    _pooled._StackedGram.backward = counted
    toptwo.TopTwo2().fit(A)
    _pooled._StackedGram.backward = original
    n_gram = calls[0]                          # (the projection of step 3 is not one)
    off = (K - 2 * np.arange(1, K)) / K        # the "observed" centring of step 1
    op = _pooled._StackedGram(LabelBlocks(_FitView(R), off), np.zeros(K - 1))
    v = np.random.default_rng(1).random((n, 1))
    measure(f"stage 1: {n_gram} Gram products", lambda: op.forward(op.backward(v)), True,
            times=n_gram)
    measure("stage 1, step 3: the projection", lambda: op.backward(v), True)
    weights = np.random.default_rng(2).random(nnz) * 20.0
    out = np.empty(nnz)
    measure("eq. (6): 2 log1p per response", lambda: np.log1p(weights, out=out), True,
            times=2.0)
    measure("TopTwo2().fit(csr), default (measured)", lambda: toptwo.TopTwo2().fit(A), False)
    measure('TopTwo2(reliability_estimator="moment").fit(csr) (measured)',
            lambda: toptwo.TopTwo2(reliability_estimator="moment").fit(A), False)
    print(f"\n{size}: {nnz} responses (n, m, K, s) = {(n, m, K, s)}; one mat-vec "
          f"{np.median(unit) * 1e3:.2f} ms (range over the measurements "
          f"{min(unit) * 1e3:.2f}-{max(unit) * 1e3:.2f})")
    print("| operation | seconds | mat-vecs |\n|---|---:|---:|")
    floor = floor_s = 0.0
    for what, sec, mv, in_floor in rows:
        print(f"| {what} | {sec:.3f} | {mv:.1f} |")
        floor += mv if in_floor else 0.0
        floor_s += sec if in_floor else 0.0
    # (at 10^7 the mat-vec's own time varies several-fold between measurements in one
    # process, docs/speed.md: compare the seconds there)
    print(f"| **floor of TopTwo2 (the first five rows)** | **{floor_s:.3f}** | **{floor:.1f}** |")
    if not em:
        return
    fit = toptwo.TopTwoEM()
    t0 = time.perf_counter()
    fit.fit(A)
    em_sec = time.perf_counter() - t0
    e_steps = int(fit.n_iter_) + 1             # the E-steps of the iterations and the last
    answered = int((np.diff(_FitView(R).task_major()[0]) > 0).sum())
    n_exp = K * answered * _em_grid.GRID_NODES * 2
    big = np.random.default_rng(3).random(nnz) * -5.0
    sec, mv = _median_time(lambda: np.exp(big, out=out), repeats, matvec)
    exp_mv = sec / mv * n_exp / nnz
    t2 = [r for r in rows if r[0].startswith('TopTwo2(reliability')][0]
    d2 = [r for r in rows if r[0].startswith("TopTwo2().fit")][0]
    exp_s = sec * n_exp / nnz
    print(f"| TopTwoEM().fit(csr) (measured once): {e_steps} E-steps | {em_sec:.2f} | "
          f"{em_sec / np.median(unit):.0f} |")
    print(f"| the exponentials of one E-step ({n_exp / nnz:.1f} per response) | {exp_s:.3f} | "
          f"{exp_mv:.1f} |")
    em_floor = t2[1] + e_steps * exp_s
    print(f"| **floor of TopTwoEM: its start (eq. (5) TopTwo2) + {e_steps} x the "
          f"exponentials** | **{em_floor:.2f}** | |")
    print(f"EM / TopTwo2 in seconds, measured: {em_sec / d2[1]:.1f} (default), "
          f"{em_sec / t2[1]:.1f} (eq. (5)); floor: {em_floor / d2[1]:.1f} (default), "
          f"{em_floor / t2[1]:.1f} (eq. (5)); target 4.")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="medium,large")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--no-em", action="store_true", help="skip the TopTwoEM rows")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        run(a.child, a.repeats, not a.no_em)
        return 0
    for size in a.sizes.split(","):
        if size not in SIZES:
            ap.error(f"unknown size {size!r}; choose from {', '.join(SIZES)}")
        cmd = [sys.executable, __file__, "--child", size, "--repeats", str(a.repeats)]
        subprocess.run(cmd + (["--no-em"] if a.no_em else []), check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
