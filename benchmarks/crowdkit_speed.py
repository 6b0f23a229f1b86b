"""toptwo's baselines beside crowd-kit's implementations of the same methods, at 2·10⁶ responses.

Usage (from the repository root; needs a Python that has both toptwo and crowd-kit, e.g. a
separate venv: ``python3 -m venv /tmp/ck && /tmp/ck/bin/pip install crowd-kit -e .``)::

    OMP_NUM_THREADS=1 /tmp/ck/bin/python benchmarks/crowdkit_speed.py [--timeout 900]

The data are ``bench_core.py``'s *medium* size: the ``hard`` scenario of the paper's
synthetic setup, (n, m, K, s) = (1000, 200000, 5, 0.01), about 2·10⁶ responses, drawn once.
Every fit runs in its own fresh child process (so one method's memory does not count
against the next), once, at each library's default settings; crowd-kit gets a pandas
DataFrame with columns worker, task, label built from the same arrays (building it is not
timed). Reported per fit: wall time (``time.perf_counter``) and the peak RSS of the child
(``resource.getrusage``), which includes the interpreter, the data and, for crowd-kit, the
DataFrame. The two libraries of a pair run back to back, so machine load affects both
alike; a fit that runs past ``--timeout`` seconds is reported as such.

Pairs: majority vote; Dawid–Skene with a full confusion matrix per worker (the textbook
model, "MV-D&S (full)"); one-coin Dawid–Skene ("MV-D&S"); M-MSR; MACE; GLAD. crowd-kit has
none of OPT-D&S, PGD, MultiSPA, EBCC or the top-two methods.

Results go to ``benchmarks/results/crowdkit_speed.json`` and are printed as a markdown table.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "benchmarks" / "results" / "crowdkit_speed.json"
SIZE = dict(n=1000, m=200_000, K=5, s=0.01)

# (row name, toptwo constructor expression, crowd-kit constructor expression)
PAIRS = [
    ("majority vote", "toptwo.baselines.MajorityVote(rng=0)", "ck.MajorityVote()"),
    ("Dawid–Skene, full matrix", "toptwo.baselines.DawidSkene(confusion='full')", "ck.DawidSkene()"),
    ("one-coin Dawid–Skene", "toptwo.baselines.DawidSkene(confusion='one_coin')", "ck.OneCoinDawidSkene()"),
    ("M-MSR", "toptwo.baselines.MMSR(rng=0)", "ck.MMSR()"),
    ("MACE", "toptwo.baselines.MACE(rng=0)", "ck.MACE()"),
    ("GLAD", "toptwo.baselines.GLAD()", "ck.GLAD()"),
]


def _generate(outdir: str) -> None:
    import numpy as np

    import toptwo
    model = toptwo.TopTwoModel.scenario("hard", SIZE["n"], SIZE["m"], SIZE["K"], rng=0)
    R = model.sample(SIZE["s"], rng=1)
    for name, arr in (("w", R.workers), ("t", R.tasks), ("l", R.labels)):
        np.save(Path(outdir) / f"{name}.npy", arr)


def _measure(lib: str, expr: str, datadir: str) -> dict:
    import gc

    import numpy as np
    w, t, lab = (np.load(Path(datadir) / f"{x}.npy") for x in ("w", "t", "l"))
    if lib == "crowdkit":
        import pandas as pd
        from crowdkit import aggregation as ck  # noqa: F401 - used by eval
        data = pd.DataFrame({"worker": w, "task": t, "label": lab})
        env = {"ck": ck}
    else:
        import toptwo
        data = toptwo.Responses(w, t, lab, shape=(SIZE["n"], SIZE["m"]), n_labels=SIZE["K"])
        env = {"toptwo": toptwo}
    del w, t, lab
    est = eval(expr, env)  # noqa: S307 - fixed expressions from PAIRS
    gc.collect()
    t0 = time.perf_counter()
    est.fit(data)
    elapsed = time.perf_counter() - t0
    n_iter = getattr(est, "n_iter_", None)
    if n_iter is None and getattr(est, "loss_history_", None) is not None:
        n_iter = len(est.loss_history_)          # crowd-kit: one loss per EM iteration
    return {"time_s": elapsed, "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "n_iter": None if n_iter is None else int(n_iter)}


def _child(lib: str, expr: str, datadir: str, timeout: float) -> dict:
    cmd = [sys.executable, __file__, "--child", lib, expr, datadir]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return {"timeout_s": timeout}
    except subprocess.CalledProcessError as exc:
        return {"error": exc.stderr.strip().splitlines()[-1] if exc.stderr else str(exc)}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cell(r: dict) -> tuple[str, str]:
    if "timeout_s" in r:
        return f"> {r['timeout_s']:.0f} s", "—"
    if "error" in r:
        return "error", r["error"][:40]
    return f"{r['time_s']:.2f} s", f"{r['peak_rss_bytes'] / 2**20:.0f} MiB"


def _markdown(rows: list[dict]) -> str:
    lines = ["| method | toptwo time | toptwo peak RSS | crowd-kit time | crowd-kit peak RSS | crowd-kit / toptwo "
             "| iterations toptwo / crowd-kit |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        a, b = r["toptwo"], r["crowdkit"]
        ratio = (f"{b['time_s'] / a['time_s']:.1f}×" if "time_s" in a and "time_s" in b else
                 f"> {b['timeout_s'] / a['time_s']:.0f}×" if "time_s" in a and "timeout_s" in b else "—")
        its = " / ".join("—" if x.get("n_iter") is None else str(x["n_iter"]) for x in (a, b))
        lines.append(f"| {r['method']} | {' | '.join(_cell(a))} | {' | '.join(_cell(b))} | {ratio} "
                     f"| {its} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        print(json.dumps(_measure(*argv[1:4])))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds per fit before it is reported as timed out (default 900)")
    parser.add_argument("--only", default=None,
                        help="semicolon-separated subset of the method rows (default: all)")
    args = parser.parse_args(argv)
    try:
        import crowdkit
    except ImportError:
        parser.error("crowd-kit is not importable by this Python: see the usage in the docstring")
    rows = []
    with tempfile.TemporaryDirectory() as datadir:
        subprocess.run([sys.executable, "-c",
                        f"import sys; sys.path.insert(0, {str(HERE)!r}); "
                        f"import crowdkit_speed as c; c._generate({datadir!r})"], check=True)
        wanted = None if args.only is None else set(args.only.split(";"))
        for name, ours, theirs in PAIRS:
            if wanted is not None and name not in wanted:
                continue
            row = {"method": name, "toptwo_call": ours, "crowdkit_call": theirs,
                   "toptwo": _child("toptwo", ours, datadir, args.timeout),
                   "crowdkit": _child("crowdkit", theirs, datadir, args.timeout)}
            print(name, row["toptwo"], row["crowdkit"], flush=True)
            rows.append(row)
    if wanted is not None and RESULTS.exists():     # a partial rerun replaces its own rows
        kept = [r for r in json.loads(RESULTS.read_text())["rows"] if r["method"] not in wanted]
        rows = sorted(kept + rows, key=lambda r: [p[0] for p in PAIRS].index(r["method"]))
    out = {"size": SIZE, "crowdkit_version": crowdkit.__version__,
           "python": platform.python_version(), "machine": platform.machine(),
           "timeout_s": args.timeout, "rows": rows}
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    print(_markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
