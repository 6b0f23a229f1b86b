"""Does sample splitting help? And which denominator for eq. (5)? (decides the defaults)

Usage (from the repository root; about a minute on one core)::

    OMP_NUM_THREADS=1 /work/venv/bin/python benchmarks/splitting.py

On the four scenarios of the paper's Table 1 [`tab:synth_setup1`] at (n, m, K) =
(50, 500, 5) and sampling rates s in {0.05, 0.1, 0.2} (2.5, 5 and 10 answers per task),
each of ``--replicates`` seeded replicates draws a fresh instance (p, q, g, h) and a
fresh response matrix A, and fits on that same A:

* TopTwo1 with ``sample_splitting`` False / True (the authors' experiments vs Algorithm 1
  as written, B/C split);
* TopTwo2 with ``sample_splitting`` False / True crossed with
  ``reliability_normalization`` "per_worker" / "paper" (denominator of eq. (5)
  [`eqn:hatpi`]);
* majority vote and the oracle MLE (eq. (6) with the true p, q) as references.

Reported: the pair, g and h error rates (``toptwo.top_two_errors``) as mean +- standard
error over replicates, and the paired differences (same A) that bear on the defaults.

Seeding: replicate r of scenario c at rate index k uses
``numpy.random.SeedSequence(seed, spawn_key=(c, k, r))``, spawned into independent
streams for the instance, the sample and each randomised estimator (no seed is used
twice). Results go to ``benchmarks/results/splitting.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import toptwo

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "benchmarks" / "results" / "splitting.json"

SCENARIOS = ("easy", "hard", "few_smart", "high_variance")
SHAPE = (50, 500, 5)
RATES = (0.05, 0.1, 0.2)
METRICS = ("pair", "g", "h")

#: name -> factory(rng, model) of an unfitted estimator
METHODS = {
    "MV": lambda rng, model: toptwo.baselines.MajorityVote(rng=rng),
    "T1": lambda rng, model: toptwo.TopTwo1(sample_splitting=False, rng=rng),
    "T1 split": lambda rng, model: toptwo.TopTwo1(sample_splitting=True, rng=rng),
    "T2": lambda rng, model: toptwo.TopTwo2(sample_splitting=False,
                                            reliability_normalization="per_worker",
                                            reliability_estimator="moment", rng=rng),
    "T2 split": lambda rng, model: toptwo.TopTwo2(sample_splitting=True,
                                                  reliability_normalization="per_worker",
                                                  reliability_estimator="moment", rng=rng),
    "T2 paper": lambda rng, model: toptwo.TopTwo2(sample_splitting=False,
                                                  reliability_normalization="paper",
                                                  reliability_estimator="moment", rng=rng),
    "T2 split paper": lambda rng, model: toptwo.TopTwo2(sample_splitting=True,
                                                        reliability_normalization="paper",
                                                        reliability_estimator="moment",
                                                        rng=rng),
    "Oracle": lambda rng, model: toptwo.OracleMLE(model.reliability, model.confusion),
}
#: paired differences (a - b) of the pair error that decide the defaults
CONTRASTS = (("T1 split", "T1"), ("T2 split", "T2"), ("T2 paper", "T2"),
             ("T2 split paper", "T2 split"), ("T2", "T1"), ("T2", "MV"))


def run(replicates: int, seed: int, rates=RATES, scenarios=SCENARIOS) -> dict:
    """Errors[scenario][s][method][metric] -> list over replicates."""
    n, m, K = SHAPE
    out: dict = {}
    for c, scen in enumerate(scenarios):
        out[scen] = {}
        for k, s in enumerate(rates):
            cell = {name: {met: [] for met in METRICS} for name in METHODS}
            for r in range(replicates):
                ss = np.random.SeedSequence(seed, spawn_key=(c, k, r))
                model_ss, sample_ss, *est_ss = ss.spawn(2 + len(METHODS))
                model = toptwo.TopTwoModel.scenario(scen, n_workers=n, n_tasks=m, n_labels=K,
                                                    rng=np.random.default_rng(model_ss))
                A = model.sample(s, rng=np.random.default_rng(sample_ss))
                for (name, make), e_ss in zip(METHODS.items(), est_ss):
                    est = make(np.random.default_rng(e_ss), model).fit(A, n_labels=K)
                    err = toptwo.top_two_errors(est.top_two_, model.top_two)
                    for met in METRICS:
                        cell[name][met].append(err[met])
            out[scen][str(s)] = cell
    return out


def _mse(x) -> tuple[float, float]:
    x = np.asarray(x, float)
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else 0.0


def summarize(raw: dict) -> dict:
    summary = {}
    for scen, by_s in raw.items():
        summary[scen] = {}
        for s, cell in by_s.items():
            entry = {name: {met: dict(zip(("mean", "se"), _mse(v)))
                            for met, v in mets.items()} for name, mets in cell.items()}
            entry["contrasts_pair"] = {
                f"{a} - {b}": dict(zip(("mean", "se"), _mse(np.subtract(
                    cell[a]["pair"], cell[b]["pair"])))) for a, b in CONTRASTS}
            summary[scen][s] = entry
    return summary


def tables(summary: dict) -> str:
    names = list(METHODS)
    parts = []
    for met in METRICS:
        parts.append(f"### {met} error rate (mean ± standard error over replicates)\n")
        parts.append("| scenario | s | " + " | ".join(names) + " |")
        parts.append("|---|---:|" + "---:|" * len(names))
        for scen, by_s in summary.items():
            for s, entry in by_s.items():
                cells = [f"{entry[n][met]['mean']:.3f} ± {entry[n][met]['se']:.3f}"
                         for n in names]
                parts.append(f"| {scen} | {s} | " + " | ".join(cells) + " |")
        parts.append("")
    labels = [f"{a} - {b}" for a, b in CONTRASTS]
    parts.append("### paired differences of the pair error (same A; negative = first is "
                 "better)\n")
    parts.append("| scenario | s | " + " | ".join(labels) + " |")
    parts.append("|---|---:|" + "---:|" * len(labels))
    for scen, by_s in summary.items():
        for s, entry in by_s.items():
            cells = [f"{entry['contrasts_pair'][lab]['mean']:+.3f} ± "
                     f"{entry['contrasts_pair'][lab]['se']:.3f}" for lab in labels]
            parts.append(f"| {scen} | {s} | " + " | ".join(cells) + " |")
    return "\n".join(parts)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rates", default=",".join(str(r) for r in RATES),
                        help="comma-separated sampling rates s (default: 0.05,0.1,0.2)")
    parser.add_argument("--output", default=str(RESULTS))
    args = parser.parse_args(argv)
    rates = tuple(float(x) for x in args.rates.split(","))
    t0 = time.perf_counter()
    raw = run(args.replicates, args.seed, rates)
    elapsed = time.perf_counter() - t0
    summary = summarize(raw)
    n, m, K = SHAPE
    result = {"shape": {"n_workers": n, "n_tasks": m, "n_labels": K},
              "rates": list(rates), "replicates": args.replicates, "seed": args.seed,
              "methods": {"MV": "MajorityVote", "T1": "TopTwo1(sample_splitting=False)",
                          "T1 split": "TopTwo1(sample_splitting=True)",
                          "T2": "TopTwo2(sample_splitting=False, "
                                "reliability_normalization='per_worker')",
                          "T2 split": "TopTwo2(sample_splitting=True, "
                                      "reliability_normalization='per_worker')",
                          "T2 paper": "TopTwo2(sample_splitting=False, "
                                      "reliability_normalization='paper')",
                          "T2 split paper": "TopTwo2(sample_splitting=True, "
                                            "reliability_normalization='paper')",
                          "Oracle": "OracleMLE(true p, true q)"},
              "toptwo_version": toptwo.__version__,
              "summary": summary, "raw": raw}
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"(n, m, K) = {SHAPE}, {args.replicates} replicates, seed {args.seed}; "
          f"{elapsed:.0f} s\n")
    print(tables(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
