"""``toptwo.diagnose`` on the paper's seven datasets (issue 42, item 4).

    OMP_NUM_THREADS=1 python benchmarks/diagnose_datasets.py     # ~3 minutes

For each dataset (``duplicates="last"``, as the paper's loaders): the shares of the three
most frequent answers per task, observed and predicted by the top-two, one-coin and
Dawid-Skene models, the held-out log-likelihood per answer (5 folds) and the verdict.
Writes ``benchmarks/results/diagnose.json`` and prints a markdown table.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from toptwo.datasets import load_dataset
from toptwo.diagnose import MODELS, diagnose

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "diagnose.json"
DATASETS = ("adult2", "color", "dog", "web", "flag", "food", "plot")


def table(rows: dict) -> str:
    """The book's diagnosis table (docs/calibration.md) from the stored JSON."""
    lines = ["| dataset | top-3 shares observed | top-two predicts | one-coin | Dawid–Skene "
             "| held-out: top-two | one-coin | Dawid–Skene | verdict |",
             "|---|---|---|---|---|---:|---:|---:|---|"]
    for name, r in rows.items():
        sh = " / ".join(f"{v:.2f}" for v in r["shares_observed"])
        pred = [" / ".join(f"{v:.2f}" for v in r["shares_predicted"][m]) for m in MODELS]
        ll = [f"{r['heldout'][m]:.3f}" for m in MODELS]
        lines.append(f"| {name} | {sh} | " + " | ".join(pred) + " | " + " | ".join(ll)
                     + f" | {r['verdict']} |")
    return "\n".join(lines)


def main():
    rows = {}
    for name in DATASETS:
        d = diagnose(load_dataset(name, duplicates="last").responses)
        rows[name] = dict(shares_observed=d.shares_observed.tolist(),
                          shares_predicted={m: v.tolist() for m, v in d.shares_predicted.items()},
                          heldout=d.heldout, heldout_diff=d.heldout_diff, verdict=d.verdict)
        print(f"## {name}\n{d.report()}\n", flush=True)
    OUT.write_text(json.dumps(rows, indent=1) + "\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
