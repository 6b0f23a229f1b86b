"""Where TopTwo2's few-smart gap lives: the p-hat or the q-hat of the plug-in (issue 25).

TopTwo2 (default: pooled stage 1, eq. (5) p-hat, stage-1 q-hat) is refitted on every draw,
and the plug-in MLE of eq. (6) is then re-run with one of its two inputs swapped:

* ``true p, est q``: the model's p_i (the oracle's, clipped to 1 - 1e-9 as
  :class:`toptwo.OracleMLE` does) with TopTwo2's own q-hat;
* ``est p, true q``: TopTwo2's p-hat with the model's q_j;
* ``p = ||p||-hat u~``: p-hat from stage 1's pooled left vector (Proposition 1:
  u = p / ||p||) times stage 1's ||p|| estimate l, clipped like eq. (5)'s;
* ``p = c u~ / n_i``: the same direction divided by each worker's relative workload
  (u_i grows with the number of answers), scaled by the least-squares fit c of eq. (5)'s
  p-hat on it;
* ``p = MLE | stage 1``: ``TopTwo2(reliability_estimator="mle")``, each worker's
  maximum-likelihood p_i under eq. (1) given stage 1's pairs (g-hat_j, h-hat_j) and q-hat_j
  (:func:`toptwo.reliability.estimate_reliability_mle`), where eq. (5) is a moment estimator (the
  fraction of answers in the pair), clipped like eq. (5)'s;
* ``p = EB | stage 1``: empirical Bayes on the same likelihood: a prior over a grid of p
  fitted to all workers (the nonparametric MLE of the mixing distribution, by EM on its
  weights), then each worker's posterior mean (:func:`p_empirical_bayes`);
* ``p = EB, eq. (5) only``: the same on eq. (5)'s own likelihood, which sees only whether
  an answer is in the pair (Bin(n_i, p + 2(1 - p)/K), whose MLE is eq. (5)): shrinkage
  without q-hat.

Mean paired pair-error gap to the oracle MLE over the rates, with its s.e., n = 50,
m = 500, K = 5, 20 replicates per rate, the draws of ``benchmarks/stage1.py`` (seed
2025, key (25, crowd index)); and, with ``--data-dir``, the g error on the seven real datasets and on
10 subsamples of color at rate 0.2 (as ``benchmarks/stage1.py``)::

    OMP_NUM_THREADS=1 python benchmarks/stage2_p.py hammer5 few_smart easy hard high_variance \\
        --data-dir ../shared/datasets

About two minutes per crowd and three for the real data; prints, writes nothing. Also
prints the spread of eq. (5)'s p-hat over hammer5's spammers (:func:`spammers`). These are
diagnostics (they read the true p or q), not estimators.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import toptwo
import toptwo.mle as mle
from toptwo import experiments as ex

RATES = (0.1, 0.2, 0.3, 0.5, 1.0)
SEED, KEY = 2025, 25
#: benchmarks/stage1.py's crowds, in its order: crowd i is drawn with key (KEY, i) there
SCENARIOS = ("easy", "hard", "few_smart", "high_variance", "hammer5")


def crowd(name):
    if name == "hammer5":
        return lambda g: toptwo.TopTwoModel.spammer_hammer(50, 500, 5, hammer_fraction=0.1,
                                                            rng=g)
    return lambda g: toptwo.TopTwoModel.scenario(name, 50, 500, 5, rng=g)


def _clip_p(p):
    return np.clip(np.nan_to_num(p, nan=mle.MIN_RELIABILITY), mle.MIN_RELIABILITY,
                   mle.MAX_RELIABILITY)


def _grid_loglik(R, top, q, grid, pair_only):
    """(n_workers, len(grid)) log-likelihood of each worker's answers at each p (eq. (1))."""
    K = R.n_labels
    w, t, c = R.workers, R.tasks, R.labels
    if pair_only:                      # only "in the pair or not": eq. (5)'s binomial
        inside = (c == top[t, 0]) | (c == top[t, 1])
        n_in = np.bincount(w, weights=inside.astype(float), minlength=R.n_workers)
        n_all = np.bincount(w, minlength=R.n_workers).astype(float)
        pin = grid + 2.0 * (1.0 - grid) / K
        return np.outer(n_in, np.log(pin)) + np.outer(n_all - n_in, np.log1p(-pin))
    g, h, qe = top[t, 0], top[t, 1], q[t]
    a = np.where(c == g, qe, np.where(c == h, 1.0 - qe, 0.0))
    return np.column_stack([np.bincount(w, weights=np.log(pk * a + (1.0 - pk) / K),
                                        minlength=R.n_workers) for pk in grid])


def p_empirical_bayes(R, top, q, pair_only=False, nodes=41, steps=300):
    """Posterior mean of p_i under the prior over ``nodes`` grid values that maximises the
    marginal likelihood of all workers' answers (EM on the prior's weights)."""
    grid = np.linspace(0.0, 1.0, nodes)
    grid[-1] = 0.999
    L = _grid_loglik(R, top, q, grid, pair_only)
    E = np.exp(L - L.max(axis=1, keepdims=True))
    prior = np.full(nodes, 1.0 / nodes)
    for _ in range(steps):
        post = E * prior
        post /= post.sum(axis=1, keepdims=True)
        prior = post.mean(axis=0)
    post = E * prior
    post /= post.sum(axis=1, keepdims=True)
    return post @ grid


class Swapped:
    """TopTwo2's fit, then eq. (6) again with p and/or q taken from elsewhere."""

    def __init__(self, model, p_from: str, q_from: str):
        self.model, self.p_from, self.q_from = model, p_from, q_from

    def fit(self, A):
        est = toptwo.TopTwo2(reliability_estimator="moment").fit(A)
        R = toptwo.as_responses(A)
        u = np.asarray(est.stage1_.trimmed, float)[0]      # pooled: the same row for all k
        if self.p_from == "true":
            p = np.minimum(self.model.reliability, 1.0 - 1e-9)
        elif self.p_from == "norm_u":
            p = _clip_p(est.stage1_.norm_p * u)
        elif self.p_from == "u_per_workload":
            nw = R.worker_counts().astype(float)
            nw /= np.mean(nw[nw > 0])
            d = np.where(nw > 0, u / np.where(nw > 0, nw, 1.0), 0.0)
            ok = np.isfinite(est.reliability_)
            c = float(est.reliability_[ok] @ d[ok]) / max(float(d[ok] @ d[ok]), 1e-300)
            p = _clip_p(c * d)
        elif self.p_from in ("eb", "eb_pair"):
            p = _clip_p(p_empirical_bayes(R, est.stage1_.top, est._q_mle,
                                          pair_only=self.p_from == "eb_pair"))
        else:
            p = _clip_p(est.reliability_)
        q = self.model.confusion if self.q_from == "true" else est._q_mle
        top = mle.plugin_mle(R, p, q)
        self.top_, self.top_two_ = top, top[:, :2]
        return self


def methods(oracle=True):
    out = {"Oracle": lambda mo: toptwo.OracleMLE(mo.reliability, mo.confusion)} if oracle else {}
    out["TopTwo2 (est p, est q)"] = lambda mo: toptwo.TopTwo2(reliability_estimator="moment")
    if oracle:
        out["true p, est q"] = lambda mo: Swapped(mo, "true", "est")
        out["est p, true q"] = lambda mo: Swapped(mo, "est", "true")
    out["p = ||p||-hat u~"] = lambda mo: Swapped(mo, "norm_u", "est")
    out["p = c u~ / n_i"] = lambda mo: Swapped(mo, "u_per_workload", "est")
    out["p = MLE | stage 1"] = lambda mo: toptwo.TopTwo2(reliability_estimator="mle")
    out["p = EB | stage 1"] = lambda mo: Swapped(mo, "eb", "est")
    out["p = EB, eq. (5) only"] = lambda mo: Swapped(mo, "eb_pair", "est")
    out["TopTwo1"] = lambda mo: toptwo.TopTwo1()
    return out


def synthetic(names, replicates):
    meth = methods()
    for name in names:
        recs = ex.sweep(crowd(name), meth, RATES, replicates, seed=SEED,
                        key=(KEY, SCENARIOS.index(name)))
        for m in meth:
            if m != "Oracle":
                g = ex.paired_gap(recs, m, "Oracle", "err_pair", x="sampling_rate")
                d = ex.paired_gap(recs, m, "TopTwo2 (est p, est q)", "err_pair",
                                  x="sampling_rate")
                print(f"{name:14s} {m:24s} {g['mean']:+.4f} ± {g['sem']:.4f}   "
                      f"- TopTwo2: {d['mean']:+.4f} ± {d['sem']:.4f}", flush=True)


def spammers(replicates):
    """Eq. (5)'s p-hat of the 45 spammers (p = 0) of hammer5, per rate: mean, s.d., and the
    share whose eq. (6) weight log(1 + K p q/(1 - p)) at q = 3/4 (the mean of U(1/2, 1]) is at
    least 1/2 after the clip, i.e. p-hat >= 0.148 (the oracle gives them weight 0)."""
    make = crowd("hammer5")
    print("hammer5 spammers, eq. (5) p-hat:  rate | mean | s.d. | weight >= 1/2")
    for i, rate in enumerate(RATES):
        vals = []
        for r in range(replicates):
            g = np.random.default_rng(np.random.SeedSequence(SEED, spawn_key=(KEY, 98, i, r)))
            model = make(g)
            est = toptwo.TopTwo2(reliability_estimator="moment").fit(model.sample(rate, rng=g))
            vals.append(est.reliability_[model.reliability == 0])
        v = np.concatenate(vals)
        heavy = np.mean(_clip_p(v) >= 0.148)
        print(f"  {rate:4.1f} | {np.nanmean(v):.2f} | {np.nanstd(v):.2f} | {heavy:.2f}", flush=True)


def real(data_dir):
    from toptwo.datasets import DATASETS, load_dataset
    meth = methods(oracle=False)
    print("dataset   " + " | ".join(meth))
    for name in DATASETS:
        ds = load_dataset(name, data_dir, duplicates="last")
        has = ds.has_truth
        errs = [np.mean(make(None).fit(ds.responses).top_two_[has, 0] != ds.truth[has])
                for make in meth.values()]
        print(f"{name:9s} " + " | ".join(f"{e:.4f}" for e in errs), flush=True)
    ds = load_dataset("color", data_dir, duplicates="last")
    errs = {m: [] for m in meth}
    for r in range(10):
        gen = np.random.default_rng(np.random.SeedSequence(SEED, spawn_key=(KEY, 99, r)))
        sub = ds.responses.subset(gen.random(ds.responses.nnz) < 0.2)
        for m, make in meth.items():
            errs[m].append(np.mean(make(None).fit(sub).top_two_[:, 0] != ds.truth))
    print("color 20% " + " | ".join(f"{np.mean(v):.4f}" for v in errs.values()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("crowds", nargs="*", default=["hammer5", "few_smart"])
    ap.add_argument("--replicates", type=int, default=20)
    ap.add_argument("--data-dir", default=None)
    a = ap.parse_args(argv)
    synthetic(a.crowds, a.replicates)
    spammers(a.replicates)
    if a.data_dir:
        real(a.data_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
