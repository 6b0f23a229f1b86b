r"""Monte-Carlo experiments: error curves, sample complexity and the minimax bounds.

The theory of Jeong & Chung (ICML 2023) is stated in terms of the *average number of
queries per task* n s, the collective quality ||p||_2^2 = n p-bar and the divergence
D-bar of Sec. 5. This module runs the sweeps that put measured error rates next to
those quantities:

* :func:`run_sweep` -- for every sampling rate s and replicate, draw A from a model
  (eq. (1) [`eqn:A_dist`]) and fit every method; returns tidy records (one dict per
  (rate, replicate, method)).
* :func:`aggregate` -- mean, standard error and 95% confidence interval per method
  and rate, as numpy arrays.
* :func:`queries_needed` -- the n s at which an error curve first drops below a
  target (log-log interpolation); fit rates to its output with
  :func:`toptwo.viz.fit_loglog_slope`.
* :func:`minimax_lower_bound_g` -- Theorem 1 / Theorem 3(a) [`thm:converse`]:
  ((K-1)/K) exp(-2 p-bar n s), valid for s <= s* = 0.797 (see :mod:`toptwo.theory`).
* :func:`kl_divergence_bar` -- D-bar of Sec. 5 (behind Theorem 2 [`thm:plugmin_mle`]
  and Theorem 3(b)).
* :func:`plot_error_curves` -- error against n s with confidence bands and an optional
  lower-bound curve; :func:`plot_estimates` -- estimates against the truth (p_hat, q_hat).
  Both return the Figure.

Reproducibility. All randomness flows from one :class:`numpy.random.SeedSequence`.
Replicate r at rate index a gets the child ``root.spawn(...)[a][r]``; from it the model
draw, the sample A and, per method, a generator keyed by a CRC-32 of the method's name.
The results of one method therefore depend neither on which other methods run nor on
their order.
"""

from __future__ import annotations

import inspect
import math
import sys
import zlib
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
from scipy import stats

from ._validation import check_int, check_rng
from .metrics import top_two_errors
from .model import TopTwoModel, label_distribution

__all__ = ["run_sweep", "aggregate", "queries_needed", "minimax_lower_bound_g",
           "kl_divergence_bar", "kl_divergence_per_task", "plot_error_curves",
           "plot_estimates", "METRICS"]

#: Metrics recorded by :func:`run_sweep` (NaN where the estimator lacks the estimate).
METRICS = ("err_g", "err_h", "err_pair", "mse_p", "mse_q", "max_abs_q", "mean_abs_q",
           "max_abs_q_ok", "mean_abs_q_ok")

def _t975(df: int) -> float:
    """97.5% quantile of Student's t with ``df`` degrees of freedom (NaN for df < 1)."""
    if df < 1:
        return float("nan")
    return float(stats.t.ppf(0.975, df))


def _seed_sequence(rng: Any, owner: str) -> np.random.SeedSequence:
    """One SeedSequence from an int seed, a SeedSequence or a Generator."""
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if rng is None:
        raise TypeError(f"The 'rng' parameter of {owner} must be an int seed, a "
                        f"numpy.random.Generator or SeedSequence (a sweep must be "
                        f"reproducible); got None instead.")
    gen = check_rng(rng, owner=owner)
    if isinstance(rng, np.random.Generator):
        # draw the root entropy from the generator (advances it once)
        return np.random.SeedSequence(int(gen.integers(0, 2**63 - 1)))
    return np.random.SeedSequence(int(rng))


def _method_seed(child: np.random.SeedSequence, name: str) -> np.random.SeedSequence:
    """A SeedSequence for one method, independent of the other methods' names."""
    key = zlib.crc32(name.encode("utf-8"))
    return np.random.SeedSequence(child.entropy, spawn_key=child.spawn_key + (2, key))


def _n_positional(func: Callable) -> int:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return 1
    params = [p for p in sig.parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values()):
        return 2
    return len(params)


def _metrics(est: Any, model: TopTwoModel, confusion_attr: str = "confusion_"
             ) -> dict[str, float]:
    err = top_two_errors(est.top_two_, model.top_two)
    out = {"err_g": err["g"], "err_h": err["h"], "err_pair": err["pair"]}
    p_hat = getattr(est, "reliability_", None)
    if p_hat is not None:
        d = np.asarray(p_hat, float) - model.reliability
        out["mse_p"] = float(np.nanmean(d * d))
    else:
        out["mse_p"] = float("nan")
    q_hat = getattr(est, confusion_attr, None)
    if q_hat is not None and model.n_top == 2:
        d = np.asarray(q_hat, float) - model.confusion
        ok = np.isfinite(d)
        if ok.any():
            out["mse_q"] = float(np.mean(d[ok] ** 2))
            out["max_abs_q"] = float(np.max(np.abs(d[ok])))
            out["mean_abs_q"] = float(np.mean(np.abs(d[ok])))
        else:
            out["mse_q"] = out["max_abs_q"] = out["mean_abs_q"] = float("nan")
        ok_g = ok & (np.asarray(est.top_two_)[:, 0] == model.top_two[:, 0])
        if ok_g.any():
            out["max_abs_q_ok"] = float(np.max(np.abs(d[ok_g])))
            out["mean_abs_q_ok"] = float(np.mean(np.abs(d[ok_g])))
        else:
            out["max_abs_q_ok"] = out["mean_abs_q_ok"] = float("nan")
    else:
        for key in ("mse_q", "max_abs_q", "mean_abs_q", "max_abs_q_ok", "mean_abs_q_ok"):
            out[key] = float("nan")
    return out


def run_sweep(model_factory: TopTwoModel | Callable[[np.random.Generator], TopTwoModel],
              methods: Mapping[str, Callable[..., Any]],
              sampling_rates: Iterable[float], n_replicates: int, rng: Any, *,
              tags: Mapping[str, Any] | None = None,
              confusion_attr: str = "confusion_",
              progress: bool = False) -> list[dict[str, Any]]:
    """Error rates of several methods over a grid of sampling rates s.

    For each rate s and replicate r: draw a model (``model_factory(gen)``, or use the
    given fixed :class:`~toptwo.TopTwoModel`), sample A with rate s (eq. (1)) and fit
    every method on A.

    Parameters
    ----------
    model_factory : TopTwoModel or callable(Generator) -> TopTwoModel
        A fixed model, or a function drawing a fresh model per replicate.
    methods : mapping name -> callable
        ``method(model)`` or ``method(model, rng)`` returning an *unfitted* estimator
        with ``fit(A)`` and ``top_two_`` (e.g. ``lambda model: toptwo.OracleMLE(
        model.reliability, model.confusion)``). The two-argument form receives a
        Generator private to (rate, replicate, method): pass it to the estimator's
        ``rng`` (majority vote's tie-breaking, TopTwo2's sample splits).
    sampling_rates : iterable of float in (0, 1]
        The sampling rates s of the sweep.
    n_replicates : int >= 1
        Replicates per sampling rate (a fresh instance and A each).
    rng : int, Generator or SeedSequence
        Root of every random draw (see the module docstring). ``None`` is refused.
    tags : mapping, optional
        Extra key/values copied into every record (e.g. ``{"alpha": 0.2}``).
    confusion_attr : str, default="confusion_"
        The estimator attribute scored as q_hat (``"confusion_raw_"`` for eq. (4)
        before clipping to [1/2, 1]).
    progress : bool, default=False
        Write a one-line text progress indicator to stderr.

    Returns
    -------
    list of dict
        One record per (rate, replicate, method) with keys ``method``,
        ``sampling_rate``, ``replicate``, ``n_workers``, ``n_tasks``, ``n_labels``,
        ``queries_per_task`` (n s), ``observed_queries_per_task`` (nnz/m), ``norm_p``,
        ``p_bar``, the tags, and the metrics of :data:`METRICS`: ``err_g``, ``err_h``,
        ``err_pair`` (:func:`toptwo.top_two_errors`), ``mse_p`` (mean over workers of
        (p_hat - p)^2, NaN without ``reliability_``), ``mse_q``, ``max_abs_q``
        (||q_hat - q||_inf) and ``mean_abs_q`` from ``confusion_`` (NaN without it), and
        ``max_abs_q_ok``, ``mean_abs_q_ok``: the same over the tasks whose g_hat is
        correct (Corollary 1 [`cor:exact_alg1`] bounds ||q_hat - q||_inf on the event
        that every pair is recovered).
    """
    owner = "run_sweep"
    if not isinstance(methods, Mapping) or not methods:
        raise TypeError(f"The 'methods' parameter of {owner} must be a non-empty mapping "
                        f"name -> callable(model[, rng]); got {methods!r} instead.")
    for name, meth in methods.items():
        if not isinstance(name, str) or not callable(meth):
            raise TypeError(f"The 'methods' parameter of {owner} must map str names to "
                            f"callables; got {name!r}: {meth!r} instead.")
    rates = np.atleast_1d(np.asarray(list(sampling_rates), dtype=float))
    if rates.ndim != 1 or rates.size == 0 or not np.all((rates > 0) & (rates <= 1)):
        raise ValueError(f"The 'sampling_rates' parameter of {owner} must be a non-empty "
                         f"1-D sequence of rates in (0, 1]; got {rates.tolist()!r} instead.")
    R = check_int(n_replicates, "n_replicates", owner=owner, minimum=1)
    fixed = isinstance(model_factory, TopTwoModel)
    if not fixed and not callable(model_factory):
        raise TypeError(f"The 'model_factory' parameter of {owner} must be a TopTwoModel or a "
                        f"callable(Generator) -> TopTwoModel; got {model_factory!r} instead.")
    root = _seed_sequence(rng, owner)
    children = root.spawn(rates.size)
    arity = {name: _n_positional(meth) for name, meth in methods.items()}
    tags = dict(tags or {})
    records: list[dict[str, Any]] = []
    total, done = rates.size * R, 0
    for a, s in enumerate(rates):
        for r, child in enumerate(children[a].spawn(R)):
            seed_model, seed_sample = child.spawn(2)
            model = (model_factory if fixed else
                     model_factory(np.random.default_rng(seed_model)))  # type: ignore[operator]
            if not isinstance(model, TopTwoModel):
                raise TypeError(f"{owner}: model_factory returned {type(model).__name__}; "
                                f"a TopTwoModel is required.")
            A = model.sample(float(s), rng=np.random.default_rng(seed_sample))
            base = {"sampling_rate": float(s), "replicate": r, "n_workers": model.n_workers,
                    "n_tasks": model.n_tasks, "n_labels": model.n_labels,
                    "queries_per_task": float(s) * model.n_workers,
                    "observed_queries_per_task": A.nnz / model.n_tasks,
                    "norm_p": model.norm_p, "p_bar": model.p_bar, **tags}
            for name, meth in methods.items():
                if arity[name] >= 2:
                    est = meth(model, np.random.default_rng(_method_seed(child, name)))
                else:
                    est = meth(model)
                est.fit(A)
                records.append({"method": name, **base, **_metrics(est, model, confusion_attr)})
            done += 1
            if progress:
                sys.stderr.write(f"\r{owner}: {done}/{total} draws ({100 * done // total}%)")
                sys.stderr.flush()
    if progress:
        sys.stderr.write("\n")
    return records


def aggregate(records: Sequence[Mapping[str, Any]], metric: str, *,
              x: str = "queries_per_task", by: str = "method"
              ) -> dict[Any, dict[str, np.ndarray]]:
    """Mean, standard error and 95% confidence interval of a metric per group and x.

    Parameters
    ----------
    records : sequence of dict
        Output of :func:`run_sweep` (possibly concatenated).
    metric : str
        The key to summarise, e.g. ``"err_pair"``.
    x : str, default="queries_per_task"
        The key giving the x-axis (one summary per distinct value, sorted).
    by : str, default="method"
        The key defining the groups (curves).

    Returns
    -------
    dict group -> dict of 1-D arrays ``x``, ``mean``, ``sem`` (sample standard
    deviation / sqrt(n), 0 for a single replicate), ``ci_low``, ``ci_high`` (mean -/+
    t_{0.975, n-1} sem, Student's t; equal to the mean for a single replicate) and
    ``n`` (replicates with a finite value). Groups are in order of first appearance.
    """
    if not records:
        raise ValueError("aggregate: `records` is empty; run a sweep first.")
    for key in (metric, x, by):
        if key not in records[0]:
            raise KeyError(f"aggregate: records have no key {key!r}; available keys are "
                           f"{sorted(records[0])}.")
    groups: dict[Any, dict[float, list[float]]] = {}
    for rec in records:
        groups.setdefault(rec[by], {}).setdefault(float(rec[x]), []).append(float(rec[metric]))
    out: dict[Any, dict[str, np.ndarray]] = {}
    for g, per_x in groups.items():
        xs = np.array(sorted(per_x))
        mean, sem, lo, hi, cnt = (np.empty(xs.size) for _ in range(5))
        for i, xv in enumerate(xs):
            vals = np.asarray(per_x[xv])
            vals = vals[np.isfinite(vals)]
            k = vals.size
            cnt[i] = k
            mean[i] = vals.mean() if k else np.nan
            sem[i] = vals.std(ddof=1) / math.sqrt(k) if k > 1 else (0.0 if k else np.nan)
            half = _t975(k - 1) * sem[i] if k > 1 else 0.0
            lo[i], hi[i] = mean[i] - half, mean[i] + half
        out[g] = {"x": xs, "mean": mean, "sem": sem, "ci_low": lo, "ci_high": hi,
                  "n": cnt.astype(np.int64)}
    return out


def queries_needed(x: Any, error: Any, target: float) -> float:
    """The x (e.g. n s) at which an error curve first drops to ``target`` or below.

    Between the last grid point above the target and the first at or below it, the
    curve is interpolated linearly in (log x, log error) (in (log x, error) when the
    lower point is 0). Returns ``x[0]`` if the curve starts at or below the target and
    NaN if it never gets there.

    Parameters
    ----------
    x : array-like, increasing, > 0
        Increasing grid of queries per task (n s).
    error : array-like, same length
        Mean error at each grid point.
    target : float > 0
        The error level epsilon to reach.
    """
    xs = np.asarray(x, float)
    ys = np.asarray(error, float)
    if xs.ndim != 1 or xs.shape != ys.shape or xs.size == 0:
        raise ValueError(f"queries_needed: `x` and `error` must be 1-D of equal length; got "
                         f"shapes {xs.shape} and {ys.shape}.")
    if not np.all(xs > 0) or np.any(np.diff(xs) <= 0):
        raise ValueError("queries_needed: `x` must be positive and strictly increasing.")
    if not target > 0:
        raise ValueError(f"queries_needed: `target` must be > 0; got {target!r} instead.")
    below = np.flatnonzero(ys <= target)
    if below.size == 0:
        return float("nan")
    i = int(below[0])
    if i == 0:
        return float(xs[0])
    x0, x1, y0, y1 = np.log(xs[i - 1]), np.log(xs[i]), ys[i - 1], ys[i]
    if y1 > 0:
        t = (np.log(y0) - np.log(target)) / (np.log(y0) - np.log(y1))
    else:
        t = (y0 - target) / (y0 - y1)
    return float(np.exp(x0 + t * (x1 - x0)))


def minimax_lower_bound_g(n_labels: int, p_bar: float, queries_per_task: Any, *,
                          n_workers: int) -> np.ndarray:
    """Minimax lower bound on the error of g_hat, Theorem 3(a) [`thm:converse`].

    ((K-1)/K) exp(-2 p-bar n s), with p-bar = ||p||_2^2 / n and n s the average number
    of queries per task. The proof's spammer-hammer crowd (p-bar n hammers) has the exact
    error ((K-1)/K)(1 - s)^(n p-bar) under eq. (1)'s sampling
    (:func:`toptwo.theory.spammer_hammer_error_g`), and (1 - s) >= exp(-2 s) holds exactly
    for s <= s* = 0.7968... (:data:`toptwo.theory.THEOREM3A_MAX_SAMPLING_RATE`; s <= 2/3 is
    sufficient, not needed). The condition is on the sampling rate s = (n s)/n, not on
    p-bar as the paper states ("p-bar <= 2/3"), so the number of workers is required.

    Parameters
    ----------
    n_labels : int >= 2
        K, the number of choices.
    p_bar : float in [0, 1]
        ||p||_2^2 / n, in [0, 1].
    queries_per_task : float or array of n s, 0 <= n s <= s* n
        n s, scalar or array.
    n_workers : int >= 1, keyword-only
        n, to turn n s into the sampling rate s.

    Raises
    ------
    ValueError
        When some s = queries_per_task / n_workers exceeds s* (the bound is then not
        implied by the proof: e.g. at s = 0.9, (1 - s) = 0.1 < exp(-1.8) = 0.165).
    """
    from .theory import THEOREM3A_MAX_SAMPLING_RATE as S_STAR

    owner = "minimax_lower_bound_g"
    K = check_int(n_labels, "n_labels", owner=owner, minimum=2)
    n = check_int(n_workers, "n_workers", owner=owner, minimum=1)
    pb = float(p_bar)
    if not 0.0 <= pb <= 1.0:
        raise ValueError(f"{owner}: `p_bar` must be in [0, 1] (p-bar = ||p||^2/n with p in "
                         f"[0, 1]^n); got {p_bar!r} instead.")
    ns = np.asarray(queries_per_task, dtype=float)
    if np.any(ns < 0) or not np.all(np.isfinite(ns)):
        raise ValueError(f"{owner}: `queries_per_task` must be finite and >= 0.")
    s = ns / n
    if np.any(s > S_STAR):
        bad = float(np.max(s))
        raise ValueError(f"{owner}: the sampling rate s = queries_per_task / n_workers must be "
                         f"<= s* = {S_STAR:.5f} (the root of -log(1-s) = 2s; Theorem 3(a)'s "
                         f"bound needs (1-s) >= exp(-2s)); got s = {bad!r} "
                         f"(n s = {bad * n!r}, n_workers = {n}).")
    return (K - 1) / K * np.exp(-2.0 * pb * ns)


def _all_pairs(K: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.meshgrid(np.arange(1, K + 1), np.arange(1, K + 1), indexing="ij")
    keep = a != b
    return a[keep], b[keep]


def _kl(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """KL(P, Q) along the last axis; 0 log 0 = 0, P > 0 = Q gives +inf."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(P > 0, P * (np.log(P) - np.log(Q)), 0.0)
    return terms.sum(axis=-1)


def kl_divergence_per_task(model: TopTwoModel, *, max_elements: int = 4_000_000
                           ) -> np.ndarray:
    """D-bar^(j) of Sec. 5 for every task j (shape (n_tasks,)).

    D-bar^(j) = min over (a, b) != (g_j, h_j), a != b, of
    (1/n) sum_i KL(mu^(i,j)_(g_j,h_j), mu^(i,j)_(a,b)), with mu from eq. (1)
    (:func:`toptwo.label_distribution`). Infinite terms arise when a worker with
    p_i = 1 gives positive probability to a label the alternative excludes.
    Computed in chunks of tasks so that no array exceeds ``max_elements``.
    """
    if not isinstance(model, TopTwoModel) or model.n_top != 2:
        raise TypeError("kl_divergence_per_task needs a top-two TopTwoModel (n_top=2).")
    K, n, m = model.n_labels, model.n_workers, model.n_tasks
    a, b = _all_pairs(K)
    P = a.size
    p = model.reliability
    g, h = model.top_two[:, 0], model.top_two[:, 1]
    chunk = max(1, int(max_elements // max(1, n * P * K)))
    out = np.empty(m)
    for start in range(0, m, chunk):
        sl = slice(start, min(m, start + chunk))
        q = model.confusion[sl]
        mu = label_distribution(p[:, None], q[None, :], g[None, sl], h[None, sl], K)
        alt = label_distribution(p[:, None, None], q[None, :, None], a[None, None, :],
                                 b[None, None, :], K)                    # (n, mc, P, K)
        kl = _kl(mu[:, :, None, :], alt).mean(axis=0)                   # (mc, P)
        same = (a[None, :] == g[sl, None]) & (b[None, :] == h[sl, None])
        kl[same] = np.inf
        out[sl] = kl.min(axis=1)
    return out


def kl_divergence_bar(model: TopTwoModel) -> float:
    """D-bar of Sec. 5: the minimum over tasks of :func:`kl_divergence_per_task`.

    Positive exactly when every q_j is in (1/2, 1) and some p_i > 0 (Sec. 5);
    Theorem 3(b) [`thm:converse`] says no estimator recovers a constant fraction of
    the pairs when s <= 1/(4 n D-bar).
    """
    return float(kl_divergence_per_task(model).min())


def plot_error_curves(summary: Mapping[Any, Mapping[str, np.ndarray]], *,
                      lower_bound: tuple[np.ndarray, np.ndarray] | None = None,
                      lower_bound_label: str = "minimax lower bound (Thm 3a)",
                      xlabel: str = "average queries per task  n s",
                      ylabel: str = "error rate", title: str | None = None,
                      logy: bool = True, ax: Any = None) -> Any:
    """Error curves with 95% CI bands (from :func:`aggregate`) against n s.

    Parameters
    ----------
    summary : dict name -> dict with ``x``, ``mean``, ``ci_low``, ``ci_high``
        Method -> {x, mean, ci_low, ci_high} (from :func:`aggregate`).
    lower_bound : (x, y), optional
        A bound to draw as a dashed black curve.
    logy : bool, default=True
        Log scale on the error axis (non-positive values are masked).
    ax : matplotlib Axes, optional
        Axes to draw on (a new figure when None).
    title
        Axes title.
    xlabel
        X-axis label.
    ylabel
        Y-axis label.
    lower_bound_label
        Legend entry of the lower bound.

    Returns
    -------
    matplotlib.figure.Figure
        Its first axes holds one line per method in the order of ``summary`` (then the
        bound), so the plotted data can be read back with ``line.get_xydata()``.
    """
    import matplotlib.pyplot as plt  # lazy: toptwo itself does not need matplotlib

    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4))
    else:
        fig = ax.figure
    markers = ("o", "s", "^", "v", "D", "x", "+", "*")
    styles = ("-", "--", "-.", ":")
    for i, (name, s) in enumerate(summary.items()):
        x = np.asarray(s["x"], float)
        mean = np.asarray(s["mean"], float)
        # marker and line style vary too, so curves that coincide stay visible
        line, = ax.plot(x, mean, marker=markers[i % len(markers)], ms=3,
                        ls=styles[i // len(markers) % len(styles)] if i >= len(markers) else "-",
                        label=str(name), zorder=3 + i % 3)
        lo = np.asarray(s.get("ci_low", mean), float)
        hi = np.asarray(s.get("ci_high", mean), float)
        if logy:
            floor = 1e-4
            lo = np.maximum(lo, floor)
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
    if lower_bound is not None:
        bx, by = (np.asarray(v, float) for v in lower_bound)
        ax.plot(bx, by, "k--", label=lower_bound_label)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


def plot_estimates(panels: Mapping[str, tuple[Any, Any]], *, ncols: int = 3) -> Any:
    """Scatter plots of estimates against the truth, one panel each, with y = x dashed.

    Parameters
    ----------
    panels : mapping title -> (truth, estimate)
        e.g. ``{"p_hat (eq. (5))": (model.reliability, est.reliability_)}``. Pairs with a
        non-finite value are left out.
    ncols : int, default=3
        Panels per row.

    Returns
    -------
    matplotlib.figure.Figure
        Panel t is ``fig.axes[t]``; its ``lines[0]`` holds the finite (truth, estimate)
        points and ``lines[1]`` the diagonal.
    """
    import matplotlib.pyplot as plt  # lazy

    if not isinstance(panels, Mapping) or not panels:
        raise ValueError("plot_estimates: `panels` must be a non-empty mapping "
                         "title -> (truth, estimate).")
    k = len(panels)
    nc = min(k, check_int(ncols, "ncols", owner="plot_estimates", minimum=1))
    nr = -(-k // nc)
    fig, axes = plt.subplots(nr, nc, figsize=(3.3 * nc, 3.1 * nr), squeeze=False)
    for ax, (title, (truth, est)) in zip(axes.ravel(), panels.items()):
        t = np.asarray(truth, float).ravel()
        e = np.asarray(est, float).ravel()
        if t.shape != e.shape:
            raise ValueError(f"plot_estimates: panel {title!r} has truth of length "
                             f"{t.size} and estimate of length {e.size}; they must match.")
        ok = np.isfinite(t) & np.isfinite(e)
        ax.plot(t[ok], e[ok], ".", ms=3, alpha=0.6)
        lo = float(min(t[ok].min(), e[ok].min())) if ok.any() else 0.0
        hi = float(max(t[ok].max(), e[ok].max())) if ok.any() else 1.0
        ax.plot([lo, hi], [lo, hi], "k--", lw=1)
        if ok.any():                  # the x axis spans the truth (q <= 1), not the estimates
            t_lo, t_hi = float(t[ok].min()), float(t[ok].max())
            pad = 0.05 * max(t_hi - t_lo, 1e-9)
            ax.set_xlim(t_lo - pad, t_hi + pad)
        ax.set_title(str(title), fontsize=9)
        ax.set_xlabel("truth")
        ax.set_ylabel("estimate")
    for ax in axes.ravel()[k:]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig
