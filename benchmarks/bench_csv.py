"""The command line on a large CSV file against pandas + TopTwo2 on the same file.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 python benchmarks/bench_csv.py --rows 1e6,1e7 --repeats 3

For each size a file ``worker,task,label`` is written once (K = 5, 1000 workers,
rows/10 tasks, 10 answers per task, ids ``w17`` / ``t123456``, labels from the ``hard``
scenario of Table 1). Then, interleaved, each repeat runs two child processes:

* ``infer``: ``python -m toptwo infer FILE -o OUT`` (TopTwo2, the default method):
  start-up, reading and checking the file, the fit, and writing one row per task;
* ``reference``: a Python that runs ``pandas.read_csv`` (C engine, string columns)
  + ``pandas.factorize`` of the two id columns + ``TopTwo2().fit`` on the same file
  (interpreter start-up and imports included, nothing written).

Reported: the median wall time of each (and the spread, min-max), the ratio of the
medians (target: <= 1.5 at 1e7 rows), the same ratio in CPU time (user + system of the
child, less sensitive to other load on the machine; pyarrow parses on 2 threads), and the peak RSS of each child
(``os.wait4``'s ``ru_maxrss``; target for ``infer``: <= 1 GiB at 1e7 rows). The
parts of ``infer`` (import, read, fit, write) are timed once more in a third child
for each engine of ``--parts``. Results are printed as a markdown
table and merged into ``benchmarks/results/csv.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "csv.json"

REFERENCE = r"""
import sys, time
t0 = time.perf_counter()
import numpy as np, pandas as pd
import toptwo
df = pd.read_csv(sys.argv[1], dtype=str, engine="c")
t1 = time.perf_counter()
w, wid = pd.factorize(df["worker"])
t, tid = pd.factorize(df["task"])
lab = df["label"].to_numpy(dtype=np.int64)
del df
t2 = time.perf_counter()
R = toptwo.Responses.from_triples(w, t, lab, n_workers=len(wid), n_tasks=len(tid))
est = toptwo.TopTwo2().fit(R)
t3 = time.perf_counter()
print(f"import+read_csv {t1 - t0:.2f} s, factorize {t2 - t1:.2f} s, fit {t3 - t2:.2f} s")
"""

PARTS = r"""
import sys, time, io
t0 = time.perf_counter()
import toptwo
from toptwo.io import read_triples_csv, write_results_csv
t1 = time.perf_counter()
R = read_triples_csv(sys.argv[1], engine=sys.argv[2])
t2 = time.perf_counter()
est = toptwo.TopTwo2().fit(R)
t3 = time.perf_counter()
write_results_csv(io.StringIO(), R.task_ids, est.top_two_, est.confusion_, decimals=6)
t4 = time.perf_counter()
print(f"engine={sys.argv[2]}: import {t1 - t0:.2f} s, read {t2 - t1:.2f} s, "
      f"fit {t3 - t2:.2f} s, write {t4 - t3:.2f} s")
"""


def write_file(path: Path, rows: int, seed: int = 0) -> None:
    """rows answers, 10 per task, 1000 workers, K = 5 (hard scenario)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    import toptwo
    n_tasks = rows // 10
    model = toptwo.TopTwoModel.scenario("hard", n_workers=1000, n_tasks=n_tasks, n_labels=5,
                                        rng=seed)
    R = model.sample(10 / 1000, rng=seed + 1)
    order = np.random.default_rng(seed + 2).permutation(R.nnz)   # rows in no order
    w, t, lab = R.workers[order], R.tasks[order], R.labels[order]
    table = pa.table({
        "worker": pa.array(np.char.add("w", w.astype(str))),
        "task": pa.array(np.char.add("t", t.astype(str))),
        "label": pa.array(lab.astype(np.int64))})
    pacsv.write_csv(table, path, write_options=pacsv.WriteOptions(quoting_style="none"))


def run(argv: list[str]) -> tuple[float, float, str, float]:
    """Wall time (s), peak RSS (MiB), stdout and CPU time (s) of one child process."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    if status != 0:
        raise RuntimeError(f"{argv} failed: {err}")
    return wall, usage.ru_maxrss / 1024, out.strip(), usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1e6,1e7")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--parts", default="pyarrow,python",
                        help="engines whose read/fit/write times are broken down (one run "
                             "each; 'python', the strict reader, takes minutes at 1e7 rows)")
    args = parser.parse_args()
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    table = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.rows.split(","):
            rows = int(float(size))
            path = Path(tmp) / f"answers_{rows}.csv"
            # in a child: a parent grown by the data would pass its peak RSS on to every
            # child it forks (Linux copies the high-water mark at fork)
            subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                            "from bench_csv import write_file; from pathlib import Path; "
                            "write_file(Path(sys.argv[2]), int(sys.argv[3]))",
                            str(ROOT / "benchmarks"), str(path), str(rows)], check=True,
                           env=dict(os.environ, PYTHONPATH=str(ROOT)))
            out = Path(tmp) / "out.csv"
            infer, ref = [], []
            for _ in range(args.repeats):
                if out.exists():
                    out.unlink()
                infer.append(run([sys.executable, "-m", "toptwo", "infer", str(path),
                                  "-o", str(out)]))
                ref.append(run([sys.executable, "-c", REFERENCE, str(path)]))
            parts = [run([sys.executable, "-c", PARTS, str(path), engine])[2]
                     for engine in args.parts.split(",") if engine]
            ti = np.median([r[0] for r in infer])
            tr = np.median([r[0] for r in ref])
            row = {
                "rows": rows, "file_mib": round(path.stat().st_size / 2**20, 1),
                "infer_s": round(float(ti), 2),
                "infer_spread_s": [round(min(r[0] for r in infer), 2),
                                   round(max(r[0] for r in infer), 2)],
                "reference_s": round(float(tr), 2),
                "reference_spread_s": [round(min(r[0] for r in ref), 2),
                                       round(max(r[0] for r in ref), 2)],
                "ratio_of_medians": round(float(ti / tr), 2),
                "infer_cpu_s": round(float(np.median([r[3] for r in infer])), 2),
                "reference_cpu_s": round(float(np.median([r[3] for r in ref])), 2),
                "cpu_ratio_of_medians": round(float(np.median([r[3] for r in infer])
                                                    / np.median([r[3] for r in ref])), 2),
                "infer_peak_mib": round(max(r[1] for r in infer)),
                "reference_peak_mib": round(max(r[1] for r in ref)),
                "reference_parts": ref[-1][2], "infer_parts": parts,
                "repeats": args.repeats,
                "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
                           f"load {os.getloadavg()[0]:.1f}",
            }
            results[str(rows)] = row
            table.append(row)
            print(json.dumps(row), flush=True)
    RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    print("\n| rows | infer (s) | pandas + factorize + TopTwo2 (s) | ratio of medians | "
          "CPU ratio | infer peak (MiB) | reference peak (MiB) |")
    print("|---|---|---|---|---|---|---|")
    for r in table:
        print(f"| {r['rows']:.0e} | {r['infer_s']} ({r['infer_spread_s'][0]}-"
              f"{r['infer_spread_s'][1]}) | {r['reference_s']} ({r['reference_spread_s'][0]}"
              f"-{r['reference_spread_s'][1]}) | {r['ratio_of_medians']} | "
              f"{r['cpu_ratio_of_medians']} | "
              f"{r['infer_peak_mib']} | {r['reference_peak_mib']} |")


if __name__ == "__main__":
    main()
