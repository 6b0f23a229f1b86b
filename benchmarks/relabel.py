"""Does ``--uncertain N`` pick the tasks worth re-labelling? (issue 42, item 2)

On the real datasets with many answers per task (``duplicates="last"``), each replicate
hides answers: every task keeps KEEP randomly chosen answers (all of them if it has no
more), the rest are hidden. TopTwo2 (the CLI default) is fitted on the visible answers;
then N tasks are "re-labelled" by revealing all of their hidden answers, TopTwo2 is
refitted, and the g error on the tasks with truth is compared with the error before.
The N tasks are chosen three ways, on the same hidden pattern (paired):

* ``expected gain``: :func:`toptwo.posterior.relabel_order` (what ``--uncertain N``
  prints), with r = the median number of hidden answers per task;
* ``lowest p_g``: the N tasks with the smallest ``p_g``;
* ``random``: N tasks drawn uniformly (one draw per replicate).

Reported per dataset and N: the mean fall of the g error over REPS replicates with a 95%
t-interval, and the paired difference expected gain minus each other rule.

    OMP_NUM_THREADS=1 python benchmarks/relabel.py          # ~5 minutes

writes ``benchmarks/results/relabel.json`` and ``docs/images/relabel.png``
(``--figure``: only redraw the figure from the JSON).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from scipy import stats

import toptwo
from toptwo.datasets import load_dataset
from toptwo.posterior import expected_gain, task_probabilities

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "relabel.json"
FIG = ROOT / "docs" / "images" / "relabel.png"
#: datasets with at least 10 answers per task on average
DATASETS = ("adult2", "color", "dog", "flag", "food", "plot")
KEEP = 4
REPS = 20
FRACTIONS = (0.05, 0.1, 0.2, 0.3)
RULES = ("expected gain", "lowest p_g", "random")


def g_error(est, truth, known):
    return float((est.top_two_[:, 0] != truth)[known].mean())


def one(ds, frac, rng):
    R = ds.responses
    known = ds.truth > 0
    # hide: per task keep KEEP random answers
    key = rng.random(R.nnz)
    order = np.lexsort((key, R.tasks))
    rank = np.empty(R.nnz, dtype=np.int64)
    starts = np.r_[0, np.cumsum(R.task_counts())[:-1]]
    rank[order] = np.arange(R.nnz) - np.repeat(starts, R.task_counts())
    visible = rank < KEEP
    hidden_per_task = np.bincount(R.tasks[~visible], minlength=R.n_tasks)
    r = max(1, int(np.median(hidden_per_task[hidden_per_task > 0])))
    V = R.subset(visible)
    est = toptwo.TopTwo2(rng=0).fit(V)
    before = g_error(est, ds.truth, known)
    pg = task_probabilities(est, V)["p_g"]
    gain = expected_gain(est, V, n_answers=r, rng=0)
    by_gain = np.lexsort((np.arange(R.n_tasks), -np.round(gain, 9)))   # = relabel_order
    out = {}
    for N in frac:
        n = max(1, int(round(N * R.n_tasks)))
        picks = {
            "expected gain": by_gain[:n],
            "lowest p_g": np.argsort(np.nan_to_num(pg, nan=-1.0), kind="stable")[:n],
            "random": rng.choice(R.n_tasks, n, replace=False),
        }
        for rule, tasks in picks.items():
            chosen = np.zeros(R.n_tasks, bool)
            chosen[tasks] = True
            W = R.subset(visible | chosen[R.tasks])
            after = g_error(toptwo.TopTwo2(rng=0).fit(W), ds.truth, known)
            out[(N, rule)] = before - after
    return out


def ci(x):
    x = np.asarray(x)
    h = stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)
    return float(x.mean()), float(x.mean() - h), float(x.mean() + h)


def main():
    if "--figure" in sys.argv[1:]:
        figure(json.loads(OUT.read_text())["results"])
        return 0
    results = {}
    for name in DATASETS:
        ds = load_dataset(name, duplicates="last")
        reps = [one(ds, FRACTIONS, np.random.default_rng([42, k])) for k in range(REPS)]
        for N in FRACTIONS:
            row = {rule: ci([rep[(N, rule)] for rep in reps]) for rule in RULES}
            for other in RULES[1:]:
                row[f"gain - {other}"] = ci([rep[(N, "expected gain")] - rep[(N, other)]
                                             for rep in reps])
            results[f"{name}/{N}"] = row
            print(f"{name:7s} N={N:.2f}: " + "  ".join(
                f"{k} {v[0]:+.4f} [{v[1]:+.4f}, {v[2]:+.4f}]" for k, v in row.items()),
                flush=True)
    OUT.write_text(json.dumps(dict(keep=KEEP, reps=REPS, fractions=FRACTIONS,
                                   results=results), indent=1) + "\n")
    figure(results)
    print(table(json.loads(OUT.read_text())))
    return 0


def table(data: dict) -> str:
    """The book's re-labelling table (docs/calibration.md) from the stored JSON."""
    lines = ["| dataset | re-labelled | expected gain | lowest p_g | random "
             "| expected gain − lowest p_g | expected gain − random |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for key, row in data["results"].items():
        name, frac = key.split("/")
        if float(frac) not in (0.1, 0.3):
            continue
        cells = [f"{row[r][0]:+.3f} [{row[r][1]:+.3f}, {row[r][2]:+.3f}]"
                 for r in (*RULES, "gain - lowest p_g", "gain - random")]
        lines.append(f"| {name} | {round(100 * float(frac))}% | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def figure(results):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 3, figsize=(10.5, 6.0))
    for ax, name in zip(axes.ravel(), DATASETS):
        for k, (rule, color) in enumerate(zip(RULES, ("C3", "C0", "0.5"))):
            x = np.array(FRACTIONS) * 100 + (k - 1) * 0.8
            m = np.array([results[f"{name}/{N}"][rule] for N in FRACTIONS])
            ax.errorbar(x, m[:, 0], yerr=[m[:, 0] - m[:, 1], m[:, 2] - m[:, 0]], fmt="o-",
                        color=color, ms=4, capsize=2, label=rule)
        ax.axhline(0, color="0.7", lw=1)
        ax.set_title(name, fontsize=11)
        ax.set_xlabel("tasks re-labelled (%)", fontsize=10)
        ax.tick_params(labelsize=10)
    for ax in axes[:, 0]:
        ax.set_ylabel("fall of the g error", fontsize=10)
    axes[0, 0].legend(fontsize=10)
    fig.tight_layout()
    fig.savefig(FIG, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
