"""The accuracy tables of ``docs/measurements.md``, computed from the stored results.

Two tables of that page are not typed in by hand:

* ``gap``: every method's pair-error gap to the oracle MLE on Table 1's scenarios, from
  ``toptwo/experiments/results/reproduce_synthetic.json`` (``StoredRun.gap_to_oracle``,
  notebook 06);
* ``real``: g error on the seven datasets, from ``reproduce_baselines.json`` (notebook
  08 §5), plus one column fitted here: TopTwo2 with Algorithm 1's stage 1 as printed
  (``findings.STAGE1_VARIANTS["printed"]``, seven deterministic fits, well under a
  second), which needs the datasets (``$TOPTWO_DATA`` or ``shared/datasets`` beside the
  checkout; never downloaded here).

They sit between ``<!-- measurements-table: NAME ... -->`` and
``<!-- /measurements-table -->`` on the page. :func:`prose_facts` gives the figures the
page's prose quotes from the same stored run (family size, ranks), as the exact phrases
the page must contain.

    python docs/measurement_tables.py            # rewrite the tables in docs/measurements.md
    python docs/measurement_tables.py --check    # exit 1 if the page differs

``tests/test_measurement_tables.py`` fails when the page no longer shows the stored
results.
"""
from __future__ import annotations

import argparse
import functools
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PAGE = HERE / "measurements.md"

SCENARIOS = ("easy", "hard", "few_smart", "high_variance")
DATASETS = ("adult2", "flag", "food", "plot", "color", "dog", "web")
_BLOCK = re.compile(r"(<!-- measurements-table: (?P<name>\w+)[^\n]*-->\n)(?P<body>.*?)"
                    r"(<!-- /measurements-table -->)", re.S)


@functools.lru_cache(maxsize=None)
def _load(name: str) -> Any:
    from toptwo.experiments import paper
    return paper.load(name)


def fmt(x: float) -> str:
    """Three decimals; two when the value is a whole number of hundredths (flag's 100
    scored tasks), as the page has always printed them."""
    return f"{x:.2f}" if abs(x * 100 - round(x * 100)) < 1e-6 else f"{x:.3f}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ gap
def gap_columns() -> tuple[list[str], dict[str, dict[str, float]]]:
    """Methods sorted by their mean gap over the four scenarios, and the gaps."""
    run = _load("reproduce_synthetic")
    methods = [m for m in run.config["methods"] if m != "Oracle"]
    gaps = {s: {m: float(run.gap_to_oracle(s)[m]["mean"]) for m in methods} for s in SCENARIOS}
    order = sorted(methods, key=lambda m: (np.mean([gaps[s][m] for s in SCENARIOS]), m))
    return order, gaps


def gap_table() -> str:
    order, gaps = gap_columns()
    rows = []
    for s in SCENARIOS:
        best = min(order, key=lambda m: gaps[s][m])
        rows.append([s] + [f"**{gaps[s][m]:.3f}**" if m == best else f"{gaps[s][m]:.3f}"
                           for m in order])
    return _table(["scenario", *order], rows)


# ----------------------------------------------------------------------------- real
def _display(name: str) -> str:
    return name.replace(" (full)", ", full")


def printed_stage1_errors(data_dir: Any = None) -> dict[str, float]:
    """g error of TopTwo2 with Algorithm 1's stage 1 as printed, on the seven datasets.

    Raises FileNotFoundError when the datasets are not on this machine (no download)."""
    import toptwo
    from toptwo.datasets import load_dataset, resolve_data_dir
    from toptwo.experiments import findings

    folder = resolve_data_dir(data_dir)
    out = {}
    for name in DATASETS:
        ds = load_dataset(name, folder, duplicates="last")
        est = toptwo.TopTwo2(rng=0, reliability_estimator="moment",     # as the stored run
                             **findings.STAGE1_VARIANTS["printed"]).fit(ds.responses)
        out[name] = float(np.mean(est.top_two_[ds.has_truth, 0] != ds.truth[ds.has_truth]))
    return out


def real_rows(printed: dict[str, float] | None = None) -> list[list[str]]:
    """Rows of the real-data table; ``printed`` (from :func:`printed_stage1_errors`), or
    None to leave that column as ``?`` (the stored columns only)."""
    base = _load("reproduce_baselines")
    methods = base.config["methods"]
    rows = []
    for name in DATASETS:
        g = base.group(name)
        best = min(g[m] for m in methods)
        who = ", ".join(_display(m) for m in methods if g[m] == best)
        rows.append([name, fmt(g["TopTwo2"]), fmt(printed[name]) if printed else "?",
                     fmt(g["MV"]), f"{fmt(best)} ({who})"])
    return rows


REAL_HEADER = ["dataset", "TopTwo2 (default)",
               'TopTwo2, stage 1 as printed (`left_vector="per_k", centering="paper"`)',
               "majority vote", "best of every method (notebook 08 §5)"]


def real_table(printed: dict[str, float] | None = None) -> str:
    return _table(REAL_HEADER, real_rows(printed))


def parse_table(text: str) -> list[list[str]]:
    """The body rows of a Markdown table (header and rule dropped), as stripped cells."""
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines[2:]]


# ---------------------------------------------------------------------------- prose
def _ordinal(k: int) -> str:
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


@functools.lru_cache(maxsize=None)
def prose_facts() -> tuple[str, ...]:
    """Phrases of the page's ranking paragraph, with the figures of the stored run (the
    page's text is compared with its line breaks as single spaces).

    The ranking is notebook 06 §7's (``claims.holm_ranking``, TopTwo2 and OPT-D&S in
    focus); the splitting cost is §8's (the Holm family's TopTwo2 split - TopTwo2)."""
    from toptwo.experiments import claims

    run = _load("reproduce_synthetic")
    methods = [m for m in run.config["methods"] if m != "Oracle"]
    raw = {s: run.raw("err_pair", s) for s in SCENARIOS}
    rank = claims.holm_ranking(raw, methods, focus=("TopTwo2", "OPT-D&S"))
    first = rank.order["easy"][0]
    tied = 1 + sum(not rank.tests["easy", first, m]["significant"] for m in methods
                   if m != first)
    few = rank.order["few_smart"]
    cost = [rank.tests[s, "TopTwo2 split", "TopTwo2"]["mean"] for s in SCENARIOS]
    words = {7: "seven", 8: "eight", 6: "six", 5: "five", 4: "four", 3: "three", 2: "two"}
    return (
        f"{rank.family_size} tests Holm-corrected as one family",
        f"{words.get(tied, tied)} methods are tied at the top",
        f"({words.get(len(rank.ahead_of('hard', 'OPT-D&S')), '?')} methods are significantly "
        f"ahead of it)",
        f"({_ordinal(few.index('OPT-D&S') + 1)} of {len(methods)}",
        f"costs {np.floor(min(cost) * 100) / 100:.2f}–{np.ceil(max(cost) * 100) / 100:.2f} "
        f"everywhere",
    )


# ----------------------------------------------------------------------------- page
def generate(page: str, printed: dict[str, float] | None) -> str:
    tables = {"gap": gap_table(), "real": real_table(printed)}
    seen = set()

    def fill(m: re.Match) -> str:
        name = m["name"]
        if name not in tables:
            raise KeyError(f"docs/measurements.md: unknown table {name!r}")
        seen.add(name)
        return m.group(1) + tables[name] + m.group(4)

    out = _BLOCK.sub(fill, page)
    if seen != set(tables):
        raise LookupError(f"docs/measurements.md: no marked block for {set(tables) - seen}")
    return out


def blocks(page: str) -> dict[str, str]:
    """The marked tables of the page, by name."""
    return {m["name"]: m["body"] for m in _BLOCK.finditer(page)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if docs/measurements.md differs from the stored results")
    ap.add_argument("--data-dir", default=None, help="folder of the seven datasets")
    args = ap.parse_args(argv)
    page = PAGE.read_text(encoding="utf-8")
    new = generate(page, printed_stage1_errors(args.data_dir))
    flat = " ".join(new.split())
    missing = [p for p in prose_facts() if p not in flat]
    if args.check:
        stale = new != page
        if stale:
            print("docs/measurements.md: a table is stale: run python docs/measurement_tables.py")
        for p in missing:
            print(f"docs/measurements.md: the prose does not say {p!r}")
        return 1 if stale or missing else 0
    PAGE.write_text(new, encoding="utf-8")
    print(f"wrote the tables of {PAGE.relative_to(ROOT)}")
    for p in missing:
        print(f"the prose does not say {p!r} yet: edit it by hand")
    return 0


if __name__ == "__main__":
    sys.exit(main())
