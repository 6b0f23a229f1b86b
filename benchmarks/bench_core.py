"""Speed and memory of the core: TopTwo2 and TopTwo1 fits, majority vote, in sparse mat-vecs.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 python benchmarks/bench_core.py --sizes small,medium
    OMP_NUM_THREADS=1 python benchmarks/bench_core.py --sizes large

Sizes (n_workers, n_tasks, K, sampling rate s) of the performance targets:

    small   (50, 500, 5, 0.2)            ~ 5e3 responses
    medium  (1000, 200_000, 5, 0.01)     ~ 2e6 responses
    large   (2000, 1_000_000, 5, 0.005)  ~ 1e7 responses

Method. For each size the responses are drawn once from the ``hard`` scenario of
Table 1 (``TopTwoModel.scenario("hard", ...).sample(s, rng=...)``) in a child process
and saved as three ``.npy`` arrays (worker, task, label) in a temporary directory.
Every case is then measured in its own fresh child process, which loads the arrays and
builds a fresh :class:`toptwo.Responses` for every repeat (so conversions such as
``tocsr()`` are part of the timed fit); ``toptwo2_csr`` passes a ``scipy.sparse``
CSR matrix instead, as users do, so its validation and conversion are timed too.
Cases: TopTwo2 (``toptwo2``, ``toptwo2_csr``, ``toptwo2_split``; ``toptwo2_eq5_csr`` is
``toptwo2_csr`` with eq. (5) as printed, ``reliability_estimator="moment"``, the default's
step 3 until issue 25's leave-one-out p), TopTwo1, majority vote,
and ``csr_gate``: ``as_responses`` of the CSR matrix alone (the validation and conversion
inside ``toptwo2_csr``).

* time: the median of ``--repeats`` runs (default 5; 50 at the small size), with the
  range; each run is followed by MATVECS_PER_REPEAT = 10 timings of the reference, one
  sparse mat-vec ``X @ x`` (X the same responses as a float CSR matrix, built once, not
  timed), so the fits and their unit are measured interleaved under the same load;
* "x one mat-vec": median(fit) / median(all mat-vecs of the child) -- the target rule
  (<= 100 for TopTwo2 from a ``Responses``, <= 60 from a scipy matrix) -- and, as its
  spread, the range of the per-repeat ratios fit_r / median(the 10 mat-vecs after it).
  (Until 2026-11-25 the mat-vec had its own child and the ratio was taken across
  processes; the mat-vec's time swung 2.1-4.5 ms between runs minutes apart.)
* peak memory: ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of the child after all
  timed repeats (it includes the reference matrix, whose size is recorded:
  ``reference_matrix_bytes``), and the increase over the baseline taken after the data
  and the reference matrix were loaded; plus the peak of traced allocations
  (``tracemalloc``) of one further run.

crowd-kit's ``MajorityVote`` is timed at the medium size when a Python with crowd-kit
is available (``--crowdkit-python``, default ``/work/venv-bench/bin/python``, a venv
separate from the project's). Its input is a pandas DataFrame with columns worker,
task, label built from the same arrays (building the frame is not timed).

Results are merged into ``benchmarks/results/core.json`` (keyed by size) and printed as
a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "benchmarks" / "results" / "core.json"

SIZES = {
    "small": dict(n=50, m=500, K=5, s=0.2),
    "medium": dict(n=1000, m=200_000, K=5, s=0.01),
    "large": dict(n=2000, m=1_000_000, K=5, s=0.005),
}
DEFAULT_REPEATS = {"small": 50, "medium": 5, "large": 5}
#: Performance targets: (seconds, bytes) for TopTwo2 at each size.
TARGETS = {"small": (0.005, None), "medium": (1.5, 1 << 30), "large": (8.0, 3 << 30)}
MAX_MATVECS = 100
#: TopTwo2 from a scipy sparse matrix, validation and conversion included (issue 29)
MAX_MATVECS_CSR = 60
#: mat-vecs timed after every fit (the reference, interleaved with the fits)
MATVECS_PER_REPEAT = 10
CASES = ("toptwo2", "toptwo2_csr", "toptwo2_eq5_csr", "csr_gate", "toptwo1", "toptwo2_split",
         "majority")
DEFAULT_CROWDKIT_PYTHON = "/work/venv-bench/bin/python"


# ------------------------------------------------------------------ children
def _maxrss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # KiB on Linux


def _child_generate(size: str, outdir: str, seed: int) -> None:
    import numpy as np
    import toptwo
    cfg = SIZES[size]
    model_ss, sample_ss = np.random.SeedSequence(seed).spawn(2)
    model = toptwo.TopTwoModel.scenario("hard", n_workers=cfg["n"], n_tasks=cfg["m"],
                                        n_labels=cfg["K"], rng=np.random.default_rng(model_ss))
    A = model.sample(cfg["s"], rng=np.random.default_rng(sample_ss))
    for name in ("workers", "tasks", "labels"):
        np.save(os.path.join(outdir, f"{name}.npy"), getattr(A, name))


def _load(datadir: str):
    import numpy as np
    return tuple(np.load(os.path.join(datadir, f"{k}.npy")) for k in ("workers", "tasks",
                                                                      "labels"))


def _child_measure(case: str, size: str, datadir: str, repeats: int) -> dict:
    """Time one case in this fresh process, a mat-vec batch interleaved after every fit.

    The reference X @ x (X the responses as a float CSR matrix, built once before the
    timing) is timed MATVECS_PER_REPEAT times right after each fit, so the fit and its
    unit see the same machine load; the ratio is median(fit) / median(mat-vec), and its
    spread the range of the per-repeat ratios fit_r / median(mat-vecs after fit_r).
    """
    import gc
    import tracemalloc

    import numpy as np
    cfg = SIZES[size]
    shape = (cfg["n"], cfg["m"])
    if case == "crowdkit_majority":
        import pandas as pd
        from crowdkit.aggregation import MajorityVote as CKMajorityVote
        w, t, lab = _load(datadir)
        df = pd.DataFrame({"worker": w, "task": t, "label": lab})
        run = lambda: CKMajorityVote().fit(df)  # noqa: E731
    else:
        import toptwo
        w, t, lab = _load(datadir)

        def fresh():
            return toptwo.Responses(w, t, lab, shape=shape, n_labels=cfg["K"])

        if case == "toptwo2":
            run = lambda: toptwo.TopTwo2(rng=0).fit(fresh())  # noqa: E731
        elif case == "toptwo2_csr":      # what users pass: validation + conversion timed
            import scipy.sparse as sp
            A = sp.csr_matrix((lab, (w, t)), shape=shape)
            run = lambda: toptwo.TopTwo2(rng=0).fit(A)  # noqa: E731
        elif case == "toptwo2_eq5_csr":  # toptwo2_csr with eq. (5) as printed for step 3
            import scipy.sparse as sp
            A = sp.csr_matrix((lab, (w, t)), shape=shape)
            run = lambda: toptwo.TopTwo2(reliability_estimator="moment", rng=0).fit(A)  # noqa: E731
        elif case == "csr_gate":         # the part of toptwo2_csr that reads the matrix
            import scipy.sparse as sp
            A = sp.csr_matrix((lab, (w, t)), shape=shape)
            run = lambda: toptwo.as_responses(A)  # noqa: E731
        elif case == "toptwo1":
            run = lambda: toptwo.TopTwo1(rng=0).fit(fresh())  # noqa: E731
        elif case == "toptwo2_split":
            run = lambda: toptwo.TopTwo2(sample_splitting=True, rng=0).fit(fresh())  # noqa: E731
        elif case == "majority":
            run = lambda: toptwo.baselines.MajorityVote(rng=0).fit(fresh())  # noqa: E731
        elif case.startswith("paper:"):      # a baseline of the paper's comparison, once
            name = case[len("paper:"):]
            run = lambda: toptwo.experiments.paper.make(name, rng=0).fit(fresh())  # noqa: E731
            repeats = 1
        elif case == "em":
            run = lambda: toptwo.TopTwoEM(rng=0).fit(fresh())  # noqa: E731
        else:
            raise ValueError(f"unknown case {case!r}")
    import scipy.sparse as sp
    X = sp.csr_matrix((lab.astype(float), (w, t)), shape=shape)
    x = np.random.default_rng(0).random(shape[1])
    X @ x
    gc.collect()
    baseline = _maxrss_bytes()
    times, cpu, mv_times, ratios = [], [], [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = run()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        del out
        gc.collect()
        batch = []
        for _ in range(MATVECS_PER_REPEAT):
            t0 = time.perf_counter()
            X @ x
            batch.append(time.perf_counter() - t0)
        mv_times += batch
        ratios.append(times[-1] / float(np.median(batch)))
    peak = _maxrss_bytes()
    tracemalloc.start()
    out = run()
    traced_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del out
    median, mv_median = float(np.median(times)), float(np.median(mv_times))
    return {"best_s": min(times), "median_s": median, "best_cpu_s": min(cpu),
            "times_s": times, "matvec_median_s": mv_median, "matvec_best_s": min(mv_times),
            "matvecs": median / mv_median, "matvecs_spread": [min(ratios), max(ratios)],
            "repeats": repeats, "peak_rss_bytes": peak, "baseline_rss_bytes": baseline,
            "peak_rss_increase_bytes": peak - baseline,
            "reference_matrix_bytes": int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes),
            "tracemalloc_peak_bytes": traced_peak}


# -------------------------------------------------------------------- parent
def _env(threads: int) -> dict:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    return env


def _run_child(python: str, args: list[str], env: dict) -> dict | None:
    proc = subprocess.run([python, str(Path(__file__).resolve()), *args],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.stderr.write(f"child {args} failed:\n{proc.stderr}\n")
        return None
    lines = proc.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {}


def _fmt_bytes(b: int | None) -> str:
    return "-" if b is None else f"{b / 2**20:,.1f} MiB"


def _markdown(results: dict) -> str:
    head = ("| size | nnz | case | median time (min-max) | x one mat-vec: ratio of medians "
            "(per-repeat range) | mat-vec median | peak RSS | RSS increase |\n"
            "|---|---:|---|---:|---:|---:|---:|---:|")
    rows = [head]

    def fmt(t: float) -> str:
        return f"{t * 1e3:.3g} ms" if t < 1 else f"{t:.3g} s"

    for size, res in results["sizes"].items():
        for case, r in res["cases"].items():
            if not r or "matvecs" not in r:
                continue
            lo, hi = r["matvecs_spread"]
            rows.append(f"| {size} | {res['nnz']:,} | {case} | {fmt(r['median_s'])} "
                        f"({fmt(min(r['times_s']))}-{fmt(max(r['times_s']))}) | "
                        f"{r['matvecs']:,.0f} ({lo:,.0f}-{hi:,.0f}) | "
                        f"{fmt(r['matvec_median_s'])} | {_fmt_bytes(r['peak_rss_bytes'])} | "
                        f"{_fmt_bytes(r['peak_rss_increase_bytes'])} |")
    return "\n".join(rows)


def _targets(results: dict) -> list[str]:
    out = []
    for size, res in results["sizes"].items():
        r = res["cases"].get("toptwo2")
        if not r or "matvecs" not in r:
            continue
        t_max, mem_max = TARGETS[size]
        out.append(f"- {size}: TopTwo2 median {r['median_s']:.4g} s <= {t_max} s: "
                   f"{'met' if r['median_s'] <= t_max else 'MISSED'}")
        if mem_max is not None:
            ok = r["peak_rss_bytes"] - r["reference_matrix_bytes"] <= mem_max
            out.append(f"- {size}: TopTwo2 peak RSS less the reference matrix "
                       f"{_fmt_bytes(r['peak_rss_bytes'] - r['reference_matrix_bytes'])} <= "
                       f"{_fmt_bytes(mem_max)}: {'met' if ok else 'MISSED'}")
        for case, bound in (("toptwo2", MAX_MATVECS), ("toptwo2_csr", MAX_MATVECS_CSR)):
            c = res["cases"].get(case)
            if c and "matvecs" in c:
                lo, hi = c["matvecs_spread"]
                out.append(f"- {size}: {case} = {c['matvecs']:,.0f} mat-vecs (ratio of medians; "
                           f"per-repeat {lo:,.0f}-{hi:,.0f}) <= {bound}: "
                           f"{'met' if c['matvecs'] <= bound else 'MISSED'}")
        g = res["cases"].get("csr_gate")
        if g and "matvecs" in g:
            lo, hi = g["matvecs_spread"]
            out.append(f"- {size}: of which reading the CSR matrix (csr_gate) = "
                       f"{g['matvecs']:,.1f} mat-vecs (per-repeat {lo:,.1f}-{hi:,.1f})")
        t1 = res["cases"].get("toptwo1")
        if t1:       # in mat-vecs: each child's own unit (the load differs between children)
            out.append(f"- {size}: TopTwo1 / TopTwo2 = {t1['matvecs'] / r['matvecs']:.2f} "
                       f"in mat-vecs ({t1['median_s'] / r['median_s']:.2f} in seconds)")
        ck = res["cases"].get("crowdkit_majority")
        if ck:
            out.append(f"- {size}: TopTwo2 / crowd-kit MajorityVote time = "
                       f"{r['median_s'] / ck['median_s']:.2f}")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="small,medium",
                        help="comma-separated subset of small,medium,large (default: "
                             "small,medium)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed repeats per case (default: 50 small, 3 medium, 2 large)")
    parser.add_argument("--threads", type=int, default=1,
                        help="OMP/OpenBLAS/MKL threads in the children (default: 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data (default: 0)")
    parser.add_argument("--crowdkit-python", default=DEFAULT_CROWDKIT_PYTHON,
                        help="a Python with crowd-kit installed, used at the medium size "
                             "(default: %(default)s; skipped if missing; '' to skip)")
    parser.add_argument("--output", default=str(RESULTS), help="JSON file to merge into")
    parser.add_argument("--baselines", action="store_true",
                        help="also time every baseline of toptwo.experiments.paper.ESTIMATOR_NAMES once (and "
                             "TopTwoEM when present) at the medium size (several minutes)")
    parser.add_argument("--_child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args._child:
        kind, *rest = args._child
        if kind == "generate":
            _child_generate(rest[0], rest[1], int(rest[2]))
            print("{}")
        else:
            print(json.dumps(_child_measure(kind, rest[0], rest[1], int(rest[2]))))
        return 0

    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    bad = [s for s in sizes if s not in SIZES]
    if bad:
        parser.error(f"--sizes must be a comma-separated subset of {', '.join(SIZES)}; "
                     f"got {bad}")
    env = _env(args.threads)
    out_path = Path(args.output)
    results = json.loads(out_path.read_text()) if out_path.exists() else {}
    import numpy as np
    import scipy
    results.setdefault("sizes", {})
    results["machine"] = {"platform": platform.platform(), "python": platform.python_version(),
                          "numpy": np.__version__, "scipy": scipy.__version__,
                          "cpu_count": os.cpu_count(), "threads": args.threads}
    results["memory_method"] = ("peak RSS: resource.getrusage ru_maxrss of a fresh child "
                                "process after the timed repeats; increase = that minus "
                                "ru_maxrss right after loading the data; tracemalloc peak "
                                "from one extra run")
    ck_python = args.crowdkit_python if args.crowdkit_python and Path(
        args.crowdkit_python).exists() else None
    for size in sizes:
        cfg = SIZES[size]
        repeats = args.repeats or DEFAULT_REPEATS[size]
        tmp = tempfile.mkdtemp(prefix=f"toptwo-bench-{size}-")
        try:
            print(f"[{size}] generating data ...", file=sys.stderr, flush=True)
            if _run_child(sys.executable, ["--_child", "generate", size, tmp,
                                           str(args.seed)], env) is None:
                return 1
            nnz = int(np.load(os.path.join(tmp, "labels.npy"), mmap_mode="r").shape[0])
            entry = {"config": cfg, "nnz": nnz, "seed": args.seed,
                     "load_average": os.getloadavg(), "cases": {}}
            cases = list(CASES)
            if args.baselines and size == "medium":
                import toptwo
                cases += [f"paper:{name}" for name in toptwo.experiments.paper.ESTIMATOR_NAMES
                          if name not in ("MV", "TopTwo2", "TopTwoEM", "OneCoinDS", "TopTwo2 split",
                                          "TopTwo2 refine3")]
                if hasattr(toptwo, "TopTwoEM"):
                    cases.append("em")
            if size == "medium":
                if ck_python:
                    cases.append("crowdkit_majority")
                else:
                    entry["crowdkit_majority"] = "skipped: no Python with crowd-kit found"
            for case in cases:
                print(f"[{size}] {case} ...", file=sys.stderr, flush=True)
                python = ck_python if case == "crowdkit_majority" else sys.executable
                r = _run_child(python, ["--_child", case, size, tmp, str(repeats)], env)
                entry["cases"][case] = r
            entry["load_average_after"] = os.getloadavg()
            results["sizes"][size] = entry
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    results["sizes"] = {k: results["sizes"][k] for k in SIZES if k in results["sizes"]}
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(results, indent=1) + "\n")
    print(_markdown(results))
    print()
    print("Targets:")
    print("\n".join(_targets(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
