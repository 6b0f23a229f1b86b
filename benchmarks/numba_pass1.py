"""What a compiled kernel would do for TopTwoEM's E-step (issue 29, the 4x target): a
numba prototype of the grid E-step's first pass, timed against the NumPy pass it would
replace. Not part of the package: numba is not a dependency (docs/speed.md, "TopTwoEM
from 10^4 to 10^7 responses", says why that is the issue owner's decision).

The first pass computes, for every answered task j and grid node k, the shifted
exponentials E^a = exp(S^a - max_a S^a) (likewise E^b), the g and h terms
(E^a times the exclusive sum of E^b over the other labels, and vice versa), the node
terms z_jk, the shift factors w_jk and the log shifts M_j
(:func:`toptwo.extensions._em_grid._node_terms_chunk`). The kernel loops over each task's
answers once and multiplies the factors 1 + K p_i q_k/(1 - p_i) (= exp of the log-table
entry) instead of summing logs and exponentiating; the exclusive sums are prefix and
suffix sums, as in NumPy. It is checked against the NumPy pass (relative difference
printed) and timed against it in alternation, median of ``--repeats``::

    OMP_NUM_THREADS=1 python benchmarks/numba_pass1.py

Needs numba (``pip install numba``, not a dependency of toptwo). About 15 s and 0.9 GB
once numba is installed. Prints only.
A prototype: it has no overflow guard (a task with a product above 1e308, about 110
answers of one label at p = 0.99, or about 25 at EM's bound p = 1 - 1e-12, would need the
log path) and no exact path for underflow.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _kernel():  # noqa: C901
    import numba

    @numba.njit(cache=False)
    def pass1(indptr, workers, labels, Fab, K, G, Gu, Hu, Wt, Z, M):  # noqa: C901
        m = indptr.size - 1
        G2 = 2 * G
        P = np.empty((K, G2))
        mx = np.empty(G2)
        X = np.empty((K, G2))                       # exclusive sums of the other slot
        for j in range(m):
            P[:] = 1.0
            for e in range(indptr[j], indptr[j + 1]):
                i = workers[e]
                a = labels[e] - 1
                for k in range(G2):
                    P[a, k] *= Fab[i, k]
            mx[:] = P[0]                            # shift: divide by the largest label
            for a in range(1, K):
                for k in range(G2):
                    if P[a, k] > mx[k]:
                        mx[k] = P[a, k]
            for k in range(G2):
                X[0, k] = 1.0 / mx[k]
            for a in range(K):
                for k in range(G2):
                    P[a, k] *= X[0, k]
            Mx = 0.0
            for k in range(G):
                Wt[j, k] = mx[k] * mx[G + k]
                if Wt[j, k] > Mx:
                    Mx = Wt[j, k]
            # exclusive sums by prefix and suffix sums (nothing cancels); X[a, :G] sums
            # slot b over the labels other than a, X[a, G:] slot a
            for k in range(G):
                X[0, k] = 0.0
                X[0, G + k] = 0.0
            for a in range(1, K):
                for k in range(G):
                    X[a, k] = X[a - 1, k] + P[a - 1, G + k]
                    X[a, G + k] = X[a - 1, G + k] + P[a - 1, k]
            for k in range(G):
                mx[k] = 0.0
                mx[G + k] = 0.0
            for a in range(K - 1, -1, -1):
                for k in range(G):
                    X[a, k] += mx[k]
                    X[a, G + k] += mx[G + k]
                    mx[k] += P[a, G + k]
                    mx[G + k] += P[a, k]
            for k in range(G):
                Z[j, k] = 0.0
            for a in range(K):
                for k in range(G):
                    g = P[a, k] * X[a, k]
                    Gu[a, j, k] = g
                    Hu[a, j, k] = P[a, G + k] * X[a, G + k]
                    Z[j, k] += g
            for k in range(G):
                w = Wt[j, k] / Mx
                Wt[j, k] = w
                Z[j, k] *= w
            M[j] = np.log(Mx)

    return pass1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    import toptwo
    from toptwo.extensions import _em_grid
    from toptwo.responses import _FitView

    n, m, K, s = 1000, 200_000, 5, 0.01                   # bench_core's medium draw
    model_ss, sample_ss = np.random.SeedSequence(0).spawn(2)
    model = toptwo.TopTwoModel.scenario("hard", n_workers=n, n_tasks=m, n_labels=K,
                                        rng=np.random.default_rng(model_ss))
    R = _FitView(model.sample(s, rng=np.random.default_rng(sample_ss)))
    em = _em_grid._GridEM(R, 1.0, 1.0, 0.0)
    p = np.clip(np.random.default_rng(1).random(n), 0.05, 0.95)
    G = _em_grid.GRID_NODES
    Fab = 1.0 + (K * p / (1.0 - p))[:, None] * em.qq[None, :]
    indptr, workers, labels = R.task_major()
    answered = np.diff(indptr) > 0
    indptr = np.concatenate([[0], indptr[1:][answered]]).astype(np.int64)
    ma = indptr.size - 1
    Gu, Hu = np.empty((K, ma, G)), np.empty((K, ma, G))
    Wt, Z, M = np.empty((ma, G)), np.empty((ma, G)), np.empty(ma)
    t0 = time.perf_counter()
    pass1 = _kernel()
    pass1(indptr, workers, labels, Fab, K, G, Gu, Hu, Wt, Z, M)
    compile_s = time.perf_counter() - t0

    def numpy_pass():
        Ta, Tb = em.tables(p)
        for lo, hi, F, _ in em.blocks:
            c = hi - lo
            z, _, em.M[lo:hi] = em._block_terms(F, Ta, Tb, c, em.Gu[:, lo:hi], em.Hu[:, lo:hi])
            em.Z[lo:hi] = z

    def numba_pass():
        pass1(indptr, workers, labels, Fab, K, G, Gu, Hu, Wt, Z, M)

    numpy_pass()
    numba_pass()
    rel = float(np.abs(Z / em.Z - 1.0).max())
    rel_g = float(np.abs(Gu - em.Gu).max() / np.abs(em.Gu).max())
    ts: dict = {"numpy": [], "numba": []}
    for _ in range(args.repeats):
        for name, f in (("numpy", numpy_pass), ("numba", numba_pass)):
            t0 = time.perf_counter()
            f()
            ts[name].append(time.perf_counter() - t0)
    a, b = np.median(ts["numpy"]), np.median(ts["numba"])
    print(f"{R.nnz} responses, {ma} answered tasks: the E-step's first pass, NumPy "
          f"{a:.3f} s ({min(ts['numpy']):.3f}-{max(ts['numpy']):.3f}), numba {b:.3f} s "
          f"({min(ts['numba']):.3f}-{max(ts['numba']):.3f}): {a / b:.1f}x; compile and first "
          f"call {compile_s:.2f} s; largest relative difference of z {rel:.1e}; largest "
          f"difference of the g terms, relative to the largest g term, {rel_g:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
