r"""Does the top-two model fit this crowd? (``python -m toptwo diagnose FILE``)

Two checks, each against the one-coin model (a worker answers the true label with
probability s_i, otherwise a uniformly wrong one; :class:`toptwo.baselines.OneCoinDawidSkene`)
and the full confusion model (a K x K confusion matrix per worker; Dawid and Skene 1979,
:class:`toptwo.baselines.DawidSkene`):

* **The shares of the top three answers per task** (the paper's Table 3
  [`tab:data_info_3`] statistic: per task, the shares of its most, second and third
  most frequent answers, averaged over tasks; :func:`toptwo.datasets.answer_shares`),
  observed and as each fitted model predicts them: answers drawn from the model (the
  posterior of each task's latent answer, then each worker's answer), on the same
  (worker, task) pattern, averaged over ``n_draws`` draws (a posterior predictive check).
  The top-two model's reason to exist is a second share well above the third.
* **Held-out log-likelihood.** The answers are split at random into ``n_folds`` folds
  (stratified by label, so every fit sees every label; an answer that is the only one
  with its label is never held out);
  each model is fitted without one fold and predicts each left-out answer A_ij = c from
  the task's other answers: for the top-two model (TopTwo2's pairs, p from eq. (5) at
  them and the empirical-Bayes prior over q of :mod:`toptwo.posterior`)
  P(c) = sum_{a,b,k} P(a, b, q_k | rest) [(1 - p_i)/K + p_i q_k 1(c = a) + p_i (1 - q_k)
  1(c = b)]; for one-coin and Dawid-Skene sum_t P(t | rest) P(c | t, worker i). A worker
  with no answer outside the fold gets the median parameters of the others. The mean
  log-probability per left-out answer compares the models on answers none of them saw;
  its standard error comes from the per-task sums of the paired differences.

The verdict compares the top-two model with the better of the other two: the difference of
the held-out log-likelihoods in nats per answer with a 95% interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validation import check_int
from .responses import Responses, as_responses, check_labels_used

__all__ = ["Diagnosis", "diagnose", "MODELS"]

#: The compared models, in the order printed.
MODELS = ("top-two", "one-coin", "Dawid-Skene")


@dataclass
class Diagnosis:
    """The result of :func:`diagnose`.

    Attributes
    ----------
    shares_observed : ndarray of shape (T,)
        Mean shares of the T = min(3, K) most frequent answers per task.
    shares_predicted : dict of str to ndarray of shape (T,)
        The same statistic under each fitted model (posterior predictive mean).
    heldout : dict of str to float
        Mean log-probability of a held-out answer under each model (nats).
    heldout_diff : dict of str to (float, float)
        Top-two minus each other model: (mean difference, standard error).
    verdict : str
        One line, with its number.
    """

    n_workers: int
    n_tasks: int
    n_labels: int
    n_answers: int
    shares_observed: np.ndarray
    shares_predicted: dict = field(default_factory=dict)
    heldout: dict = field(default_factory=dict)
    heldout_diff: dict = field(default_factory=dict)
    verdict: str = ""

    def report(self) -> str:
        """The text ``python -m toptwo diagnose`` prints."""
        T = self.shares_observed.size
        names = ["1st", "2nd", "3rd"][:T]
        lines = [f"{self.n_answers} answers, {self.n_workers} workers, {self.n_tasks} tasks, "
                 f"K={self.n_labels}", "",
                 "shares of the most frequent answers per task (paper's Table 3):",
                 f"{'':<14}" + "".join(f"{n:>8}" for n in names),
                 f"{'observed':<14}" + "".join(f"{v:>8.3f}" for v in self.shares_observed)]
        for m in MODELS:
            lines.append(f"{m:<14}" + "".join(f"{v:>8.3f}" for v in self.shares_predicted[m]))
        lines += ["", "held-out log-likelihood per answer (nats; higher fits better):"]
        for m in MODELS:
            extra = ""
            if m != "top-two":
                d, se = self.heldout_diff[m]
                extra = f"   top-two minus this: {d:+.4f} +- {1.96 * se:.4f}"
            lines.append(f"{m:<14}{self.heldout[m]:>9.4f}{extra}")
        lines += ["", f"verdict: {self.verdict}"]
        return "\n".join(lines)


def _folds(R: Responses, n_folds: int, gen: np.random.Generator) -> np.ndarray:
    """A fold per answer, -1 for an answer never held out.

    Stratified by label: each label's answers (in (task, worker) order, so independent of
    the row order) are shuffled and dealt to the folds in turn from a random fold, so
    every label with at least two answers keeps one outside each fold (the top-two fit
    needs every label in its data). The only answer with its label is never held out.
    """
    fold = np.full(R.nnz, -1, dtype=np.int64)
    order = np.lexsort((R.workers, R.tasks))
    labels = R.labels[order]
    for c in range(1, R.n_labels + 1):
        idx = order[labels == c]
        if idx.size >= 2:
            fold[gen.permutation(idx)] = (np.arange(idx.size) + gen.integers(n_folds)) % n_folds
    return fold


def _toptwo_parts(R: Responses, rng: Any):
    """(p, pi, q_nodes, GQ, Gm): the top-two fit's parameters, GQ[j, c] = sum over the
    posterior of q_k 1(c = a) + (1 - q_k) 1(c = b), and the g marginal."""
    from .mle import TopTwo2
    from .posterior import _nodes, _scores, fit_grid_weights, plugin_reliability
    est = TopTwo2(rng=rng).fit(R)
    p = plugin_reliability(R, est.top_two_)
    q = _nodes()
    pi = fit_grid_weights(R, p, q)
    K = R.n_labels
    GQ = np.empty((R.n_tasks, K))
    post = np.empty((R.n_tasks, K, K, q.size))
    for lo, hi, L in _scores(R, p, q):
        W = np.exp(L + np.log(pi))
        W /= W.sum(axis=(1, 2, 3))[:, None, None, None]
        GQ[lo:hi] = (W.sum(axis=2) * q).sum(axis=2) + (W.sum(axis=1) * (1 - q)).sum(axis=2)
        post[lo:hi] = W
    return p, pi, q, GQ, post


def _median_fill(x: np.ndarray, active: np.ndarray) -> np.ndarray:
    x = np.array(x, dtype=float)
    fill = np.nanmedian(x[active], axis=0) if active.any() else np.nanmedian(x, axis=0)
    x[~active] = fill
    return x


def _heldout(R: Responses, fold: np.ndarray, n_folds: int, rng: Any) -> dict[str, np.ndarray]:
    """Log-probability of every answer under each model fitted without its fold."""
    from .baselines.dawid_skene import DawidSkene, OneCoinDawidSkene
    K = R.n_labels
    out = {m: np.full(R.nnz, np.nan) for m in MODELS}
    for f in range(n_folds):
        test = fold == f
        if not test.any():
            continue
        T = R.subset(~test)
        active = T.worker_counts() > 0
        w, t, c = R.workers[test], R.tasks[test], R.labels[test] - 1
        # top-two
        try:
            p, _, _, GQ, _ = _toptwo_parts(T, rng)
        except ValueError as exc:
            raise ValueError(f"the top-two fit without held-out fold {f + 1} of {n_folds} "
                             f"failed ({exc}); with so few answers use fewer folds "
                             f"(n_folds) or more answers.") from None
        p = _median_fill(p, active)
        seen = T.task_counts() > 0
        GQ[~seen] = 1.0 / K                      # prior: every pair equally likely
        out["top-two"][test] = np.log((1 - p[w]) / K + p[w] * GQ[t, c])
        # one-coin
        oc = OneCoinDawidSkene().fit(T)
        s = _median_fill(oc.skills_, active)
        post = np.where(seen[:, None], np.nan_to_num(oc.posteriors_), oc.class_prior_)
        pc = post[t, c]
        out["one-coin"][test] = np.log(pc * s[w] + (1 - pc) * (1 - s[w]) / (K - 1))
        # Dawid-Skene
        ds = DawidSkene().fit(T)
        C = _median_fill(ds.confusion_matrices_.reshape(R.n_workers, K * K), active)
        C = C.reshape(R.n_workers, K, K)
        C /= C.sum(axis=2, keepdims=True)
        post = np.where(seen[:, None], np.nan_to_num(ds.posteriors_), ds.class_prior_)
        out["Dawid-Skene"][test] = np.log(np.einsum("ek,ek->e", post[t], C[w, :, c]))
    return out


def _simulated_shares(R: Responses, n_top: int, n_draws: int, gen: np.random.Generator,
                      rng: Any) -> dict[str, np.ndarray]:
    """Posterior predictive mean of the top-``n_top`` shares under each model."""
    from .baselines.dawid_skene import DawidSkene, OneCoinDawidSkene
    from .datasets import answer_shares
    K, m = R.n_labels, R.n_tasks
    w, t = R.workers, R.tasks
    active = R.worker_counts() > 0
    p, _, q, _, post = _toptwo_parts(R, rng)
    flat = post.reshape(m, -1)
    cdf = np.cumsum(flat, axis=1)
    oc = OneCoinDawidSkene().fit(R)
    s = _median_fill(oc.skills_, active)
    ds = DawidSkene().fit(R)
    C = np.nan_to_num(ds.confusion_matrices_)
    out: dict[str, list[np.ndarray]] = {mm: [] for mm in MODELS}

    def shares(labels):
        S = Responses(w, t, labels.astype(np.int32), shape=R.shape, n_labels=K)
        return answer_shares(S, n_top)["mean"]

    for _ in range(n_draws):
        u = gen.random(m)
        idx = np.minimum((cdf < (u * cdf[:, -1])[:, None]).sum(axis=1), flat.shape[1] - 1)
        a, rest = np.divmod(idx, K * q.size)
        b, k = np.divmod(rest, q.size)
        v = gen.random(w.size)
        pw, qk = p[w], q[k[t]]
        lab = np.where(v < pw * qk, a[t], np.where(v < pw, b[t], gen.integers(0, K, w.size)))
        out["top-two"].append(shares(lab + 1))
        for name, P in (("one-coin", oc.posteriors_), ("Dawid-Skene", ds.posteriors_)):
            P = np.nan_to_num(P)
            truth = (np.cumsum(P, axis=1) < gen.random(m)[:, None] * P.sum(axis=1)[:, None]
                     ).sum(axis=1).clip(0, K - 1)
            if name == "one-coin":
                right = gen.random(w.size) < s[w]
                other = (truth[t] + 1 + gen.integers(0, K - 1, w.size)) % K
                lab = np.where(right, truth[t], other)
            else:
                rows = C[w, truth[t]]
                lab = (np.cumsum(rows, axis=1) < gen.random(w.size)[:, None]
                       * rows.sum(axis=1)[:, None]).sum(axis=1).clip(0, K - 1)
            out[name].append(shares(lab + 1))
    return {mm: np.mean(v, axis=0) for mm, v in out.items()}


def diagnose(A: Any, n_labels: int | None = None, *, n_folds: int = 5, n_draws: int = 20,
             rng: int = 0) -> Diagnosis:
    """Goodness of fit of the top-two model against one-coin and Dawid-Skene.

    Parameters
    ----------
    A : Responses, dense or sparse (n_workers, n_tasks) matrix, or a DataFrame of triples
        The answers.
    n_labels : int, optional
        K (default: the largest label).
    n_folds : int, default=5
        Folds of the held-out log-likelihood (at least 2).
    n_draws : int, default=20
        Draws of the posterior predictive shares.
    rng : int, default=0
        Seed of the folds, the draws and TopTwo2.

    Returns
    -------
    Diagnosis

    Examples
    --------
    >>> import toptwo
    >>> from toptwo.diagnose import diagnose
    >>> model = toptwo.TopTwoModel.scenario("easy", n_workers=30, n_tasks=150, rng=0)
    >>> d = diagnose(model.sample(0.3, rng=1), n_labels=5, n_draws=2)
    >>> d.heldout_diff["one-coin"][0] > 0        # top-two beats one-coin on its own model
    True
    """
    owner = "diagnose"
    R = as_responses(A, n_labels, owner=owner)
    F = check_int(n_folds, "n_folds", owner=owner, minimum=2)
    D = check_int(n_draws, "n_draws", owner=owner, minimum=1)
    seed = check_int(rng, "rng", owner=owner, minimum=0)
    if R.n_labels < 3:
        raise ValueError(f"{owner} needs K >= 3 answer choices (the top-two model has a "
                         f"second answer to tell from the rest); got K={R.n_labels}.")
    if R.nnz < 2 * F:
        raise ValueError(f"{owner} needs at least {2 * F} answers for {F} folds; got "
                         f"{R.nnz}.")
    if np.count_nonzero(R.task_counts()) < 2:
        raise ValueError(f"{owner} needs answers to at least 2 tasks (the interval of the "
                         f"verdict comes from the spread over tasks); got "
                         f"{np.count_nonzero(R.task_counts())}.")
    check_labels_used(R, owner)            # as TopTwo2: every label 1..K answered
    gen = np.random.default_rng(seed)
    from .datasets import answer_shares
    n_top = min(3, R.n_labels)
    observed = answer_shares(R, n_top)["mean"]
    fold = _folds(R, F, gen)
    ll = _heldout(R, fold, F, seed)
    predicted = _simulated_shares(R, n_top, D, gen, seed)
    held = fold >= 0
    heldout = {m: float(v[held].mean()) for m, v in ll.items()}
    diff = {}
    n_held = int(held.sum())
    for m in MODELS[1:]:
        per_task = np.bincount(R.tasks[held], weights=(ll["top-two"] - ll[m])[held],
                               minlength=R.n_tasks)
        tasks = np.bincount(R.tasks[held], minlength=R.n_tasks) > 0
        se = float(np.sqrt(tasks.sum()) * per_task[tasks].std(ddof=1) / n_held)
        diff[m] = (float(per_task.sum() / n_held), se)
    d = Diagnosis(R.n_workers, R.n_tasks, R.n_labels, R.nnz, observed, predicted, heldout,
                  diff)
    d.verdict = _verdict(d)
    return d


def _verdict(d: Diagnosis) -> str:
    """Top-two against the better of the other two models, with a 95% interval."""
    rival = max(MODELS[1:], key=lambda m: d.heldout[m])
    diff, se = d.heldout_diff[rival]
    half = 1.96 * se
    num = f"{diff:+.4f} +- {half:.4f} nats per held-out answer"
    if diff - half > 0:
        return f"the top-two model fits best: {num} over {rival}"
    if diff + half < 0:
        why = ("answers depend on the true label in ways the top-two model leaves out"
               if rival == "Dawid-Skene" else "the second answers look like noise here")
        return f"{rival} fits better than the top-two model: {num} (top-two minus it); {why}"
    return f"the top-two model fits about as well as {rival}: {num}, within noise"


# --------------------------------------------------------------- command line
def add_parser(sub: Any, positive_int: Any, seed: Any) -> None:
    """The ``diagnose`` sub-command of ``python -m toptwo``."""
    p = sub.add_parser(
        "diagnose", help="does the top-two model fit these answers? (shares of the top "
                         "three answers, held-out fit against one-coin and Dawid-Skene)",
        description="Read answers as 'infer' does and print the shares of the three most "
                    "frequent answers per task (the paper's Table 3) with what the "
                    "top-two, one-coin and Dawid-Skene models predict, the held-out "
                    "log-likelihood of each model on answers left out (cross-validation "
                    "over answers), and a one-line verdict with its number.")
    from ._cli import add_input_arguments
    add_input_arguments(p)                # the formats and options of 'infer'
    p.add_argument("--folds", type=positive_int, default=5, metavar="F",
                   help="folds of the held-out log-likelihood, at least 2 (default: 5)")
    p.add_argument("--seed", type=seed, default=0,
                   help="seed of the folds and the simulated answers (default: 0)")


def run(args: Any, read: Any, show: Any) -> str:
    """Run ``diagnose`` on parsed arguments; returns the report."""
    if args.folds < 2:
        raise ValueError(f"--folds must be at least 2; got {args.folds}.")
    R = read(args)                        # toptwo._cli.read_input
    try:
        if R.n_labels >= 3:
            check_labels_used(R, "diagnose", cli=True, label_base=args.label_base)
        return diagnose(R, n_folds=args.folds, rng=args.seed).report()
    except ValueError as exc:
        raise ValueError(f"{show(args.file)}: {exc}") from None
