"""Gold-task calibration of p_g on the paper's seven datasets (issue 42, item 1).

A researcher knows the answers of a share of the tasks (gold questions). For each
dataset (``duplicates="last"``), method (TopTwo2, the CLI default, and TopTwoEM) and gold
share (5%, 10%, 20% of the tasks with truth), REPS random splits (the same splits for
both methods): the estimator is fitted on all the answers (the gold answers do not
change the fit), :func:`toptwo.posterior.calibrate` is fitted on the gold tasks' ``p_g``
and whether their g is right, and on the *other* tasks with truth are measured:

* the ECE of ``p_g`` before (the model's) and after (calibrated), 10 equal-width bins as
  ``benchmarks/calibration.py``;
* the ECE's own noise: the 95th percentile of the ECE of outcomes drawn from the
  calibrated ``p_g`` itself (NOISE_DRAWS draws), so an ECE below it is within noise;
* the Brier score before and after (a proper score: a constant forecast at the base
  rate is calibrated too, and the Brier score tells it from a sharper one);
* on color (the only dataset with the true h), the ECE of ``p_pair`` before and after.

Reported: the mean over splits and the 2.5-97.5% range of the splits (what one
researcher with one gold set should expect), and the share of splits meeting the
goal (ECE <= 0.05 on the datasets with at least 300 tasks, ECE <= its noise on the
others). A split with fewer than ``MIN_GOLD`` gold tasks is refused by the library; it
is measured anyway with the same fit (``_platt``) to show why.

Also stored: the calibrators compared before Platt scaling was chosen (isotonic
regression with at least 20 tasks per block, beta calibration; none of them in the
library), and the truth-free variants of the prior over q tried for web's
underconfidence (``prior``: TopTwo2's ``p_g`` with each prior, ECE on all tasks).

    OMP_NUM_THREADS=1 python benchmarks/gold_calibration.py          # ~3 minutes
    python benchmarks/gold_calibration.py --figure   # only redraw the figure

writes ``benchmarks/results/gold_calibration.json`` and
``docs/images/gold_calibration.png``; the table of ``docs/calibration.md`` is rewritten
by ``python benchmarks/calibration.py --page``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

import toptwo
from toptwo.datasets import load_dataset
sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration import ece  # noqa: E402  (the ECE of the calibration page, one definition)
from toptwo.posterior import (MIN_GOLD, _at_pairs, _logit, _node_terms, _nodes, _platt,
                              plugin_reliability, task_probabilities)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "gold_calibration.json"
FIG = ROOT / "docs" / "images" / "gold_calibration.png"
DATASETS = ("adult2", "color", "dog", "web", "flag", "food", "plot")
LARGE = ("adult2", "color", "dog", "web")          # >= 300 tasks with truth: goal 0.05
SHARES = (0.05, 0.1, 0.2)
REPS = 200
NOISE_DRAWS = 400
N_BINS = 10
GOAL = 0.05
METHODS = {"toptwo2": lambda: toptwo.TopTwo2(rng=0), "em": lambda: toptwo.TopTwoEM(rng=0)}
SEED = 20260421


def _bins(p: np.ndarray) -> np.ndarray:
    """The bin of each p under toptwo.softlabels.calibration_bins' rule (equal width, p = 1
    in the last bin), as indices, so that noise() can bin all its draws in one product."""
    return np.minimum((p * N_BINS).astype(np.int64), N_BINS - 1)


def noise(p: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """Mean and 95th percentile of the ECE of outcomes drawn from p itself (a perfectly
    calibrated p_g; all draws at once)."""
    onehot = np.zeros((p.size, N_BINS))
    onehot[np.arange(p.size), _bins(p)] = 1.0
    draws = (rng.random((NOISE_DRAWS, p.size)) < p).astype(float)
    e = np.abs(p @ onehot - draws @ onehot).sum(axis=1) / p.size
    return float(e.mean()), float(np.quantile(e, 0.95))


# ------------------------------------------------ calibrators compared (not in toptwo)
def isotonic(p: np.ndarray, y: np.ndarray, min_size: int = 20):
    """Pool-adjacent-violators on p, blocks of fewer than min_size tasks merged into a
    neighbour, block accuracies smoothed (k + 1)/(n + 2), linear between block means
    (on the logit scale), flat beyond."""
    order = np.argsort(p, kind="stable")
    z, yy = _logit(p[order]), y[order].astype(float)
    st: list[list[float]] = []
    for zi, yi in zip(z, yy):
        st.append([yi, 1.0, zi])
        while len(st) > 1 and st[-2][0] / st[-2][1] >= st[-1][0] / st[-1][1]:
            s = st.pop()
            st[-1] = [a + b for a, b in zip(st[-1], s)]
    while len(st) > 1 and min(b[1] for b in st) < min_size:
        i = int(np.argmin([b[1] for b in st]))
        j = i - 1 if i == len(st) - 1 else i + 1 if i == 0 else (
            i - 1 if st[i - 1][1] < st[i + 1][1] else i + 1)
        lo, hi = min(i, j), max(i, j)
        st[lo] = [a + b for a, b in zip(st[lo], st[hi])]
        del st[hi]
    xs = np.array([b[2] / b[1] for b in st])
    ys = np.maximum.accumulate(np.array([(b[0] + 1) / (b[1] + 2) for b in st]))
    return lambda q: np.interp(_logit(q), xs, ys)


def beta_calibration(p: np.ndarray, y: np.ndarray):
    """expit(a log p - b log(1 - p) + c), a, b >= 0, Platt's smoothed targets."""
    c = np.clip(p, 1e-6, 1 - 1e-6)
    n1 = y.sum()
    t = np.where(y > 0, (n1 + 1) / (n1 + 2), 1 / (y.size - n1 + 2))
    X = np.column_stack([np.log(c), -np.log1p(-c), np.ones_like(c)])

    def f(w):
        s = X @ w
        return float((np.logaddexp(0, s) - t * s).sum()), X.T @ (expit(s) - t)
    w = minimize(f, np.array([1.0, 1.0, 0.0]), jac=True, method="L-BFGS-B",
                 bounds=[(0, None), (0, None), (None, None)]).x

    def apply(q):
        q = np.clip(q, 1e-6, 1 - 1e-6)
        return expit(w[0] * np.log(q) - w[1] * np.log1p(-q) + w[2])
    return apply


COMPARED = {"none": lambda p, y: (lambda q: q), "platt": lambda p, y: _platt(p, y),
            "isotonic": isotonic, "beta": beta_calibration}


def _summary(x: list[float]) -> list[float]:
    a = np.asarray(x, float)
    return [float(a.mean()), float(np.quantile(a, 0.025)), float(np.quantile(a, 0.975))]


def real() -> dict:
    out: dict = {}
    for name in DATASETS:
        ds = load_dataset(name, duplicates="last")
        known = ds.truth > 0
        fits = {}
        for method, make in METHODS.items():
            est = make().fit(ds.responses)
            pr = task_probabilities(est, ds.responses)
            g = est.top_two_[:, 0]
            fits[method] = dict(
                p=np.clip(pr["p_g"][known], 0, 1), pp=pr["p_pair"][known],
                hit=(g == ds.truth)[known].astype(float),
                hit2=(((g == ds.truth) & (est.top_two_[:, 1] == ds.confusing))[known]
                      .astype(float) if ds.confusing is not None else None))
        n = int(known.sum())
        for share in SHARES:
            k = int(round(share * n))
            rng = np.random.default_rng([SEED, DATASETS.index(name), int(share * 100)])
            splits = [rng.permutation(n) for _ in range(REPS)]
            for method, f in fits.items():
                p, hit = f["p"], f["hit"]
                rec: dict = {k_: [] for k_ in ("ece_before", "ece_after", "noise95",
                                               "noise_mean",
                                               "brier_before", "brier_after", "met",
                                               "within_noise")}
                cmp = {c: dict(ece=[], brier=[]) for c in COMPARED}
                pair: dict = dict(before=[], after=[])
                for perm in splits:
                    gi, rest = perm[:k], perm[k:]
                    cal = _platt(p[gi], hit[gi])
                    pc = cal(p[rest])
                    e = ece(pc, hit[rest])
                    nz_mean, nz = noise(pc, rng)
                    rec["ece_before"].append(ece(p[rest], hit[rest]))
                    rec["ece_after"].append(e)
                    rec["noise95"].append(nz)
                    rec["noise_mean"].append(nz_mean)
                    rec["brier_before"].append(float(np.mean((p[rest] - hit[rest]) ** 2)))
                    rec["brier_after"].append(float(np.mean((pc - hit[rest]) ** 2)))
                    rec["met"].append(float(e <= (GOAL if name in LARGE else nz)))
                    rec["within_noise"].append(float(e <= nz))
                    for c, fit in COMPARED.items():
                        q = fit(p[gi], hit[gi])(p[rest])
                        cmp[c]["ece"].append(ece(q, hit[rest]))
                        cmp[c]["brier"].append(float(np.mean((q - hit[rest]) ** 2)))
                    if f["hit2"] is not None:
                        h2 = f["hit2"][rest]
                        with np.errstate(invalid="ignore", divide="ignore"):
                            ratio = np.where(p[rest] > 0, f["pp"][rest] / p[rest], 0.0)
                        pair["before"].append(ece(f["pp"][rest], h2))
                        pair["after"].append(ece(np.clip(pc * ratio, 0, 1), h2))
                row = dict(n=n, gold=k, below_min=k < MIN_GOLD,
                           **{key: _summary(v) for key, v in rec.items()
                              if key not in ("met", "within_noise")},
                           share_met=float(np.mean(rec["met"])),
                           share_within_noise=float(np.mean(rec["within_noise"])),
                           compared={c: dict(ece=float(np.mean(v["ece"])),
                                             brier=float(np.mean(v["brier"])))
                                     for c, v in cmp.items()})
                if pair["before"]:
                    row["pair_ece_before"] = _summary(pair["before"])
                    row["pair_ece_after"] = _summary(pair["after"])
                out[f"{name}/{method}/{share}"] = row
                print(f"{name:6s} {method:7s} {share:.2f} k={k:4d} ECE "
                      f"{row['ece_before'][0]:.3f} -> {row['ece_after'][0]:.3f} "
                      f"[{row['ece_after'][1]:.3f}, {row['ece_after'][2]:.3f}] noise "
                      f"{row['noise95'][0]:.3f} met {row['share_met']:.2f} | "
                      + " ".join(f"{c} {v['ece']:.3f}/{v['brier']:.3f}"
                                 for c, v in row["compared"].items()), flush=True)
    return out


def reliability_points() -> dict:
    """Pooled reliability diagram of TopTwo2's p_g on the held-out tasks, before and
    after calibration on 10% gold (20% where 10% is fewer than MIN_GOLD tasks), the
    first 20 splits of the table's."""
    out = {}
    for name in DATASETS:
        ds = load_dataset(name, duplicates="last")
        known = ds.truth > 0
        est = METHODS["toptwo2"]().fit(ds.responses)
        p = np.clip(task_probabilities(est, ds.responses)["p_g"][known], 0, 1)
        hit = (est.top_two_[:, 0] == ds.truth)[known].astype(float)
        n = p.size
        share = 0.1 if round(0.1 * n) >= MIN_GOLD else 0.2
        k = int(round(share * n))
        rng = np.random.default_rng([SEED, DATASETS.index(name), int(share * 100)])
        before, after, hits = [], [], []
        for _ in range(20):
            perm = rng.permutation(n)
            gi, rest = perm[:k], perm[k:]
            before.append(p[rest])
            after.append(_platt(p[gi], hit[gi])(p[rest]))
            hits.append(hit[rest])
        h = np.concatenate(hits)
        row = {}
        for label, q in (("before", np.concatenate(before)), ("after", np.concatenate(after))):
            b = _bins(q)
            c = np.bincount(b, minlength=N_BINS)
            ok = c > 0
            row[label] = dict(conf=(np.bincount(b, q, N_BINS)[ok] / c[ok]).tolist(),
                              acc=(np.bincount(b, h, N_BINS)[ok] / c[ok]).tolist(),
                              count=c[ok].tolist())
        row["gold"] = k
        out[name] = row
    return out


def prior_variants() -> dict:
    """TopTwo2's p_g with other truth-free priors over q: ECE on all tasks with truth."""
    from scipy.stats import beta as beta_dist

    from toptwo.extensions._em_grid import _pi_newton
    out = {}
    for name in DATASETS:
        ds = load_dataset(name, duplicates="last")
        R, known = ds.responses, ds.truth > 0
        est = toptwo.TopTwo2(rng=0).fit(R)
        top = est.top_two_
        p = plugin_reliability(R, top)
        qn = _nodes()
        Z = np.concatenate([Zc for *_, Zc, _ in _node_terms(R, p, qn)])[R.task_counts() > 0]
        hit = (top[:, 0] == ds.truth)[known].astype(float)
        row = {}
        flat = np.full(qn.size, 1.0 / qn.size)
        for label, delta in (("EB, delta 0.1 (used)", 0.1), ("EB, delta 1", 1.0),
                             ("EB, delta 10", 10.0), ("EB, delta 100", 100.0)):
            pi, _ = _pi_newton(Z, flat.copy(), delta, max_steps=100)
            row[label] = pi
        row["uniform"] = flat
        t = 2 * qn - 1

        def beta_pi(th, t=t):
            w = beta_dist.pdf(t, np.exp(th[0]), np.exp(th[1]))
            return w / w.sum()
        th = minimize(lambda th, Z=Z: -np.log(Z @ beta_pi(th)).sum(), np.zeros(2),
                      method="Nelder-Mead").x
        row["Beta family, EB"] = beta_pi(th)
        res = {}
        for label, pi in row.items():
            pg, _ = _at_pairs(R, p, pi, qn, top)
            res[label] = dict(ece=ece(np.clip(pg[known], 0, 1), hit),
                              mean_p_g=float(pg[known].mean()), weight_lowest_q=float(pi[0]))
        out[name] = res
        print(name, {k: round(v["ece"], 3) for k, v in res.items()}, flush=True)
    return out


def reaches(row: dict, name: str) -> bool:
    """The goal, on the mean over splits: ECE <= 0.05 on the datasets with at least 300
    tasks, ECE <= its noise (95%) on the others; never with fewer than MIN_GOLD gold."""
    if row["below_min"]:
        return False
    return row["ece_after"][0] <= (GOAL if name in LARGE else row["noise95"][0])


def table(data: dict) -> str:
    """The book's gold-calibration table (docs/calibration.md) from the stored JSON."""
    res = data["results"]
    lines = ["| dataset | gold tasks | ECE before (toptwo2 / em) | ECE after, toptwo2 "
             "| ECE after, em | calibrated p_g's own ECE: mean, 95% | goal reached "
             "(toptwo2 / em; share of splits) |",
             "|---|---:|---:|---|---|---:|---|"]
    for name in DATASETS:
        for s in SHARES:
            t, e = res[f"{name}/toptwo2/{s}"], res[f"{name}/em/{s}"]
            after = [f"{r['ece_after'][0]:.3f} [{r['ece_after'][1]:.3f}, "
                     f"{r['ece_after'][2]:.3f}]" for r in (t, e)]
            if t["below_min"]:
                after = [f"refused ({a})" for a in after]
                goal = f"refused: fewer than {MIN_GOLD} gold tasks"
            else:
                goal = " / ".join(f"{'yes' if reaches(r, name) else 'no'} "
                                  f"({round(100 * r['share_met'])}%)" for r in (t, e))
            lines.append(
                f"| {name} | {t['gold']} ({round(100 * s)}%) | {t['ece_before'][0]:.3f} / "
                f"{e['ece_before'][0]:.3f} | {after[0]} | {after[1]} | "
                f"{t['noise_mean'][0]:.3f}, {t['noise95'][0]:.3f} | {goal} |")
    return "\n".join(lines)


def compare_table(data: dict) -> str:
    """Mean ECE / Brier score of the compared calibrators, over the datasets with at
    least 300 tasks and both methods."""
    res = data["results"]
    lines = ["| gold share | " + " | ".join(COMPARED) + " |",
             "|---|" + "---:|" * len(COMPARED)]
    for s in SHARES:
        cells = []
        for c in COMPARED:
            v = [res[f"{n}/{m}/{s}"]["compared"][c] for n in LARGE for m in METHODS]
            cells.append(f"{np.mean([x['ece'] for x in v]):.3f} / "
                         f"{np.mean([x['brier'] for x in v]):.3f}")
        lines.append(f"| {round(100 * s)}% | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def prior_table(data: dict) -> str:
    pri = data["prior"]
    labels = list(pri[DATASETS[0]])
    lines = ["| prior over q | " + " | ".join(DATASETS) + " |",
             "|---|" + "---:|" * len(DATASETS)]
    for label in labels:
        lines.append(f"| {label} | " + " | ".join(f"{pri[n][label]['ece']:.3f}"
                                                 for n in DATASETS) + " |")
    return "\n".join(lines)


def figure(data: dict) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    pts = data["reliability"]
    fig, axes = plt.subplots(2, 4, figsize=(10.5, 6.0), sharex=True, sharey=True)
    for ax, name in zip(axes.ravel(), DATASETS):
        ax.plot([0, 1], [0, 1], color="0.6", lw=1)
        for label, color in (("before", "C3"), ("after", "C0")):
            r = pts[name][label]
            share = np.array(r["count"]) / sum(r["count"])
            ax.plot(r["conf"], r["acc"], "-", color=color, lw=1, label=label)
            ax.scatter(r["conf"], r["acc"], s=4 + 200 * share, color=color, zorder=3)
        ax.set_title(f"{name}: {pts[name]['gold']} gold tasks", fontsize=11)
        ax.legend(fontsize=10, loc="upper left")
        ax.tick_params(labelsize=10)
    last = axes.ravel()[-1]
    last.axis("off")
    last.text(0.0, 0.5, "TopTwo2's p_g on the tasks\nthat are not gold, before\nand after "
              "calibration on\n10% gold tasks (20% on\nfood and plot), 20 splits\npooled; marker "
              "area:\nshare of tasks in the bin", fontsize=10, va="center")
    for ax in axes[-1]:
        ax.set_xlabel("p_g (bin mean)", fontsize=10)
    for ax in axes[:, 0]:
        ax.set_ylabel("share with g true", fontsize=10)
    fig.tight_layout()
    FIG.parent.mkdir(exist_ok=True)
    fig.savefig(FIG, dpi=110)


def main() -> int:
    if "--figure" in sys.argv[1:]:
        figure(json.loads(OUT.read_text()))
        return 0
    data = dict(reps=REPS, noise_draws=NOISE_DRAWS, min_gold=MIN_GOLD, results=real(),
                reliability=reliability_points(), prior=prior_variants())
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    data = json.loads(OUT.read_text())
    figure(data)
    print(table(data))
    print(compare_table(data))
    print(prior_table(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
