r"""One experiment layer: a sweep, its draws and scores, and the statistics of comparisons.

Every sweep of methods over sampling rates or answer budgets -- the error curves of
notebooks 04-05, the reproductions of the paper's Sec. 6 and Appendices C-E (notebooks
06-09, ``benchmarks/reproduce_paper.py``, ``benchmarks/sample_complexity.py``) -- is one
call of :func:`sweep`:

    for every grid point x and replicate r:
        source  -> a model (fixed, or drawn fresh per replicate) or real responses
        draw    -> the data: A ~ eq. (1) [`eqn:A_dist`] at sampling rate s = x
                   (``draw="rate"``), or at most d = x answers per task of the real
                   responses (``draw="per_task"``, Fig. 2a [`fig:color_error`])
        methods -> every method fitted on the same A (paired comparisons)
        score   -> one record per method: error rates and estimation errors

and the statistics below summarise the records: :func:`aggregate` (mean and Student-t
95% CI per method and x), :func:`paired_gap` and :func:`paired_differences` (differences
paired per draw), :func:`paired_row_tests` (a t test per stored difference),
:func:`grid_average` and :func:`compare_methods` (paired t tests on grid averages), each
family Holm-corrected (:func:`holm`, :func:`holm_family`), and :func:`queries_needed`
(where an error curve reaches a target). Quantiles and tests come from :mod:`scipy.stats`.

Not sweeps, and seeded on their own (each documents how): the Monte-Carlo checks of single
theorems in :mod:`toptwo.theory` (their own grids of crowds), the one-fit-per-dataset table
of ``reproduce_paper.py baselines``, and the benchmarks ``em.py``, ``splitting.py``,
``baselines.py`` and ``theorems_mc.py``.

The theory quantities live beside the model and the theorems
(:func:`toptwo.model.kl_divergence_bar`, :func:`toptwo.theory.minimax_lower_bound_g`), the
plots in :mod:`toptwo.viz`, and the paper's method registry and the stored benchmark
results in :mod:`toptwo.experiments.paper`.

Seeding: one scheme (:func:`replicate_seed`)
--------------------------------------------
Replicate r at grid point x of a sweep with root ``seed`` and ``key`` draws everything from

    SeedSequence(seed, spawn_key=(*key, round(1e5 x), 0, r))

with three independent streams below it: ``(..., 0)`` draws the model (when the source is
a factory), ``(..., 1)`` draws the data (the sample A or the subsample), and
``(..., 2, crc32(name))`` is the generator handed to the method called ``name``. Hence

* replicate r at x is the same draw whatever the grid and however many replicates are run
  (a notebook's small run is a prefix of a benchmark's full run);
* a method's results depend neither on which other methods run nor on their order;
* ``key`` separates sweeps that share a seed (e.g. one scenario from another).

(The constant 0 before r is where earlier versions spawned one child per grid point; it is
kept so that the stored runs of ``benchmarks/reproduce_paper.py`` stay reproducible.)
"""

from __future__ import annotations

import inspect
import math
import numbers
import sys
import zlib
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from .._validation import check_int, check_rng
from ..metrics import top_t_errors, top_two_errors
from ..model import TopTwoModel
from ..responses import Responses, as_responses

from . import paper  # noqa: E402, F401  (the method registry and the stored runs)

__all__ = ["sweep", "replicate_seed", "grid_key", "score_top_two", "score_top_t",
           "score_truth", "subsample_per_task", "vote_ratio", "aggregate", "paired_gap",
           "paired_differences", "paired_row_tests", "holm_family", "grid_average", "compare_methods", "holm",
           "queries_needed", "METRICS", "DRAWS"]

#: Metrics recorded by :func:`score_top_two` (NaN where the estimator lacks the estimate).
METRICS = ("err_g", "err_h", "err_pair", "mse_p", "mse_q", "max_abs_q", "mean_abs_q",
           "max_abs_q_ok", "mean_abs_q_ok")

#: The draws :func:`sweep` knows by name (a callable is accepted too).
DRAWS = ("rate", "per_task")

_MODEL, _DATA, _METHOD = 0, 1, 2

#: A standard error at or below this is zero up to round-off: error rates and their
#: differences are multiples of 1/m (>= 1e-8 for any m the package handles), so paired
#: differences that vary at all have a standard error far above it, while equal
#: differences computed in floating point can leave ~1e-17.
_ROUNDOFF_SEM = 1e-12


# ------------------------------------------------------------------------- seeding
def grid_key(x: float) -> int:
    """The integer that identifies grid point ``x`` in the seeding scheme.

    Parameters
    ----------
    x : float >= 0
        A sampling rate or a budget.

    Returns
    -------
    int
        round(1e5 x): grid points closer than 1e-5 share their draws.
    """
    return int(round(float(x) * 100_000))


def replicate_seed(seed: int, x: float, replicate: int, key: Sequence[int] = ()
                   ) -> np.random.SeedSequence:
    """The SeedSequence of replicate ``replicate`` at grid point ``x`` (module docstring).

    Parameters
    ----------
    seed : int >= 0
        Root seed of the sweep.
    x : float
        The grid point (a sampling rate s, or a budget d of answers per task).
    replicate : int >= 0
        The replicate's index r.
    key : sequence of int >= 0, optional
        Separates sweeps that share a seed.

    Returns
    -------
    numpy.random.SeedSequence
        Below it: ``(..., 0)`` model, ``(..., 1)`` data, ``(..., 2, crc32(name))`` method.
    """
    owner = "replicate_seed"
    seed = check_int(seed, "seed", owner=owner, minimum=0)
    replicate = check_int(replicate, "replicate", owner=owner, minimum=0)
    key = _check_key(key, owner)
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not 0 <= float(x) < 1e12:
        raise ValueError(f"The 'x' parameter of {owner} must be a finite number >= 0 (a rate "
                         f"or a budget); got {x!r} instead.")
    return np.random.SeedSequence(seed, spawn_key=(*key, grid_key(x), 0, replicate))


def _check_key(key: Any, owner: str) -> tuple[int, ...]:
    if isinstance(key, (str, bytes)) or not isinstance(key, (Sequence, np.ndarray)):
        raise TypeError(f"The 'key' parameter of {owner} must be a sequence of ints >= 0 "
                        f"(e.g. (3,)); got {key!r} instead.")
    return tuple(check_int(k, "key", owner=owner, minimum=0) for k in key)


def _stream(child: np.random.SeedSequence, *tail: int) -> np.random.Generator:
    return np.random.default_rng(
        np.random.SeedSequence(child.entropy, spawn_key=child.spawn_key + tail))


def _method_key(name: str) -> int:
    return zlib.crc32(name.encode("utf-8"))


# ------------------------------------------------------------------------- scores
def score_top_two(est: Any, model: TopTwoModel, *, confusion_attr: str = "confusion_"
                  ) -> dict[str, float]:
    """Errors of a fitted top-two estimator against the true model (:data:`METRICS`).

    ``err_g``, ``err_h``, ``err_pair`` (:func:`toptwo.top_two_errors`); ``mse_p`` = mean
    over workers of (p_hat - p)^2 (NaN without ``reliability_``); ``mse_q``,
    ``max_abs_q`` (||q_hat - q||_inf) and ``mean_abs_q`` from ``confusion_attr`` (NaN
    without it), and ``max_abs_q_ok``, ``mean_abs_q_ok``: the same over the tasks whose
    g_hat is right (Corollary 1 [`cor:exact_alg1`] bounds ||q_hat - q||_inf on the event
    that every pair is recovered).

    Parameters
    ----------
    est : fitted estimator
        With ``top_two_`` and optionally ``reliability_`` and ``confusion_attr``.
    model : TopTwoModel
        The truth.
    confusion_attr : str, default="confusion_"
        The attribute scored as q_hat (``"confusion_raw_"``: eq. (4) before clipping).
    """
    err = top_two_errors(est.top_two_, model.top_two)
    out = {"err_g": err["g"], "err_h": err["h"], "err_pair": err["pair"]}
    nan = float("nan")
    p_hat = getattr(est, "reliability_", None)
    if p_hat is not None:
        d = np.asarray(p_hat, float) - model.reliability
        out["mse_p"] = float(np.nanmean(d * d))
    else:
        out["mse_p"] = nan
    for k in ("mse_q", "max_abs_q", "mean_abs_q", "max_abs_q_ok", "mean_abs_q_ok"):
        out[k] = nan
    q_hat = getattr(est, confusion_attr, None)
    if q_hat is not None and model.n_top == 2:
        d = np.asarray(q_hat, float) - model.confusion
        ok = np.isfinite(d)
        if ok.any():
            out["mse_q"] = float(np.mean(d[ok] ** 2))
            out["max_abs_q"] = float(np.max(np.abs(d[ok])))
            out["mean_abs_q"] = float(np.mean(np.abs(d[ok])))
        ok_g = ok & (np.asarray(est.top_two_)[:, 0] == model.top_two[:, 0])
        if ok_g.any():
            out["max_abs_q_ok"] = float(np.max(np.abs(d[ok_g])))
            out["mean_abs_q_ok"] = float(np.mean(np.abs(d[ok_g])))
    return out


def score_top_t(est: Any, model: TopTwoModel) -> dict[str, float]:
    """Errors of a fitted top-T estimator against a top-T model (Appendix `subsec:top_T`).

    Parameters
    ----------
    est : fitted estimator
        With ``top_`` (n_tasks, T) and optionally ``confusions_``.
    model : TopTwoModel
        The truth (``n_top`` = T).

    Returns
    -------
    dict
        ``err_ordered``, ``err_set`` and ``err_pos1..T`` (:func:`toptwo.metrics.top_t_errors`
        on ``top_``), and ``mse_q`` = mean over tasks and t of (q_hat_t - q_t)^2 from the
        estimator's ``confusions_`` (NaN without it, and for the oracle, which is handed
        the true weights).
    """
    err = top_t_errors(est.top_, model.top_two)
    out = {"err_ordered": err["ordered"], "err_set": err["set"]}
    for t, e in enumerate(err["per_position"]):
        out[f"err_pos{t + 1}"] = float(e)
    from ..mle import OracleMLE  # lazy: mle is heavy to import first

    qh = getattr(est, "confusions_", None)
    if qh is not None and not isinstance(est, OracleMLE):
        d = np.asarray(qh, float) - model.weights
        out["mse_q"] = float(np.nanmean(d * d))
    else:
        out["mse_q"] = float("nan")
    return out


def score_truth(est: Any, truth: np.ndarray) -> dict[str, float]:
    """Errors against known answers (real data).

    Parameters
    ----------
    est : fitted estimator
        With ``top_two_``.
    truth : int array of shape (n_tasks, 2)
        (g, h) with 0 = unknown: tasks with an unknown g take part in the inference but
        not in the score (:func:`toptwo.top_two_errors`).

    Returns
    -------
    dict
        ``err_g``, ``err_h``, ``err_pair`` (NaN where no task has the needed truth).
    """
    err = top_two_errors(est.top_two_, truth)
    return {"err_g": err["g"], "err_h": err["h"], "err_pair": err["pair"]}


def _default_score(source: Any) -> Callable[[Any, Any], dict[str, float]]:
    if isinstance(source, Responses):
        return score_truth
    return lambda est, model: (score_top_two(est, model) if model.n_top == 2
                               else score_top_t(est, model))


# ------------------------------------------------------------------------- draws
def subsample_per_task(A: Any, d: int, rng: Any) -> Responses:
    """Keep at most ``d`` responses of every task, chosen uniformly without replacement.

    A task with ``d`` or fewer responses keeps all of them. The draw ``"per_task"`` of
    :func:`sweep` (Fig. 2a [`fig:color_error`]: "we subsampled it to simulate how the
    prediction error decreases as the number of responses per task increases").

    Parameters
    ----------
    A : Responses, array or sparse matrix
        Responses (anything :func:`toptwo.as_responses` accepts).
    d : int >= 1
        Responses kept per task.
    rng : int or numpy.random.Generator
        Source of the subsample.
    """
    owner = "subsample_per_task"
    R = as_responses(A, owner=owner)
    d = check_int(d, "d", owner=owner, minimum=1)
    gen = check_rng(rng, owner=owner)
    # rank the responses of each task by a random key; keep the first d of each task
    order = np.lexsort((gen.random(R.nnz), R.tasks))
    t_sorted = R.tasks[order]
    starts = np.searchsorted(t_sorted, t_sorted, side="left")
    rank = np.arange(R.nnz) - starts
    keep = np.zeros(R.nnz, dtype=bool)
    keep[order[rank < d]] = True
    return R.subset(keep)


def _draw_rate(source: TopTwoModel, s: float, gen: np.random.Generator) -> Responses:
    return source.sample(s, rng=gen)


def _draw_per_task(source: Responses, d: float, gen: np.random.Generator) -> Responses:
    return subsample_per_task(source, int(d), gen)


def _check_grid(grid: Iterable[Any], draw: str | Callable, owner: str) -> list[float]:
    try:
        xs = list(grid)
    except TypeError:
        raise TypeError(f"The 'grid' parameter of {owner} must be an iterable of numbers; "
                        f"got {grid!r} instead.") from None
    if not xs:
        raise ValueError(f"The 'grid' parameter of {owner} must be non-empty; got "
                         f"{xs!r} instead.")
    out = []
    for x in xs:
        if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x):
            raise ValueError(f"The 'grid' parameter of {owner} must hold finite numbers; "
                             f"got {x!r} instead.")
        if draw == "rate" and not 0.0 < float(x) <= 1.0:
            raise ValueError(f"The 'grid' parameter of {owner} must hold sampling rates in "
                             f"(0, 1] with draw='rate'; got {x!r} instead.")
        if draw == "per_task" and (float(x) != math.floor(x) or float(x) < 1):
            raise ValueError(f"The 'grid' parameter of {owner} must hold whole numbers of "
                             f"answers per task >= 1 with draw='per_task'; got {x!r} "
                             f"instead.")
        out.append(float(x))
    if len(set(grid_key(x) for x in out)) != len(out):
        raise ValueError(f"The 'grid' parameter of {owner} has repeated points (equal after "
                         f"rounding to 1e-5, the seeding key); got {xs!r}.")
    return out


def _n_positional(func: Callable) -> int:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return 1
    if any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values()):
        return 2
    return len([p for p in sig.parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])


def _check_methods(methods: Any, owner: str) -> None:
    if not isinstance(methods, Mapping) or not methods:
        raise TypeError(f"The 'methods' parameter of {owner} must be a non-empty mapping "
                        f"name -> callable(model[, rng]); got {methods!r} instead.")
    for name, meth in methods.items():
        if not isinstance(name, str) or not callable(meth):
            raise TypeError(f"The 'methods' parameter of {owner} must map str names to "
                            f"callables; got {name!r}: {meth!r} instead.")


def _check_source(source: Any, draw: Any, truth: Any, owner: str) -> np.ndarray | None:
    """Validate the source against the draw; the (n_tasks, 2) truth of real responses."""
    if isinstance(source, Responses):
        if draw == "rate":
            raise ValueError(f"{owner}: real responses cannot be sampled at a rate; use "
                             f"draw='per_task' (at most d answers per task).")
        if truth is None:
            raise ValueError(f"{owner}: real responses need `truth` (shape (n_tasks, 2) or "
                             f"(n_tasks,), 0 = unknown) to be scored.")
        tr = np.asarray(truth)
        if tr.ndim == 1:
            tr = np.column_stack([tr, np.zeros_like(tr)])
        if tr.shape != (source.n_tasks, 2):
            raise ValueError(f"The 'truth' parameter of {owner} must have shape (n_tasks,) "
                             f"or (n_tasks, 2) with n_tasks={source.n_tasks}; got "
                             f"{np.shape(truth)} instead.")
        return tr
    if not (isinstance(source, TopTwoModel) or callable(source)):
        raise TypeError(f"The 'source' parameter of {owner} must be a TopTwoModel, a "
                        f"callable(Generator) -> TopTwoModel or toptwo.Responses; got "
                        f"{source!r} instead.")
    if truth is not None:
        raise ValueError(f"{owner}: `truth` is only for real responses; a model is "
                         f"scored against itself.")
    if draw == "per_task":
        raise ValueError(f"{owner}: draw='per_task' subsamples real responses; pass "
                         f"toptwo.Responses (and `truth`) as the source.")
    return None


def _base_record(draw: Any, x: float, r: int, model: Any, A: Responses) -> dict[str, Any]:
    """The fields of a record that describe the draw."""
    if draw == "rate":
        return {"sampling_rate": x, "replicate": r, "n_workers": model.n_workers,
                "n_tasks": model.n_tasks, "n_labels": model.n_labels,
                "queries_per_task": x * model.n_workers,
                "observed_queries_per_task": A.nnz / model.n_tasks,
                "norm_p": model.norm_p, "p_bar": model.p_bar}
    if draw == "per_task":
        return {"budget": int(x), "replicate": r, "responses_per_task": A.nnz / A.n_tasks}
    return {"x": x, "replicate": r}


# ------------------------------------------------------------------------- the sweep
def sweep(source: TopTwoModel | Callable[[np.random.Generator], TopTwoModel] | Responses,
          methods: Mapping[str, Callable[..., Any]], grid: Iterable[float],
          n_replicates: int, *, seed: int, key: Sequence[int] = (),
          draw: str | Callable[[Any, float, np.random.Generator], Any] = "rate",
          truth: Any = None, score: Callable[[Any, Any], Mapping[str, float]] | None = None,
          tags: Mapping[str, Any] | None = None, progress: bool = False
          ) -> list[dict[str, Any]]:
    """Fit every method on the same draws, over a grid and replicates; one record each.

    Parameters
    ----------
    source : TopTwoModel, callable(Generator) -> TopTwoModel, or Responses
        A fixed model; a factory drawing a fresh model per replicate (from the replicate's
        model stream); or real responses (with ``draw="per_task"`` and ``truth``).
    methods : mapping name -> callable
        ``method(model)`` or ``method(model, rng)`` returning an *unfitted* estimator
        (``model`` is None for real responses). The two-argument form receives the
        Generator private to (x, replicate, method): pass it to the estimator's ``rng``.
        :func:`toptwo.experiments.paper.method_factories` builds these for the paper's methods.
    grid : iterable of float
        Sampling rates s in (0, 1] (``draw="rate"``) or answers per task d >= 1
        (``draw="per_task"``).
    n_replicates : int >= 1
        Replicates per grid point.
    seed : int >= 0
        Root seed (see the module docstring for the scheme).
    key : sequence of int >= 0, optional
        Separates sweeps that share a seed.
    draw : {"rate", "per_task"} or callable(source, x, Generator) -> Responses
        ``"rate"``: A ~ eq. (1) at sampling rate x (:meth:`TopTwoModel.sample`);
        ``"per_task"``: at most x answers per task of the responses
        (:func:`subsample_per_task`).
    truth : array of shape (n_tasks, 2) or (n_tasks,), optional
        The known (g, h) or g of real responses (0 = unknown); required with a
        Responses source, refused otherwise (a model is its own truth).
    score : callable(estimator, truth) -> mapping, optional
        Default: :func:`score_top_two` (a top-two model), :func:`score_top_t` (a top-T
        model) or :func:`score_truth` (real responses, ``truth`` as an (n_tasks, 2) array).
    tags : mapping, optional
        Extra key/values copied into every record (e.g. ``{"scenario": "hard"}``).
    progress : bool, default=False
        Write a one-line progress indicator to stderr.

    Returns
    -------
    list of dict
        One record per (x, replicate, method), in that order, with ``method``,
        ``replicate``, the tags, the score's keys and, by draw: ``"rate"``:
        ``sampling_rate``, ``n_workers``, ``n_tasks``, ``n_labels``, ``queries_per_task``
        (n s), ``observed_queries_per_task`` (nnz/m), ``norm_p``, ``p_bar``;
        ``"per_task"``: ``budget`` (d) and ``responses_per_task`` (kept answers / m); a
        callable draw: ``x``.
    """
    owner = "sweep"
    _check_methods(methods, owner)
    if not callable(draw) and draw not in DRAWS:
        raise ValueError(f"The 'draw' parameter of {owner} must be one of {DRAWS} or a "
                         f"callable(source, x, Generator); got {draw!r} instead.")
    xs = _check_grid(grid, draw, owner)
    R = check_int(n_replicates, "n_replicates", owner=owner, minimum=1)
    seed = check_int(seed, "seed", owner=owner, minimum=0)
    key = _check_key(key, owner)
    tr = _check_source(source, draw, truth, owner)
    real, fixed = tr is not None, isinstance(source, TopTwoModel)
    draw_fn: Callable[[Any, float, np.random.Generator], Any] = (
        _draw_rate if draw == "rate" else _draw_per_task if draw == "per_task"
        else draw)  # type: ignore[assignment]
    score_fn = score if score is not None else _default_score(source)
    arity = {name: _n_positional(meth) for name, meth in methods.items()}
    tags = dict(tags or {})
    records: list[dict[str, Any]] = []
    total, done = len(xs) * R, 0
    for x in xs:
        for r in range(R):
            child = replicate_seed(seed, x, r, key)
            if real:
                model: Any = None
            elif fixed:
                model = source
            else:
                model = source(_stream(child, _MODEL))  # type: ignore[operator]
                if not isinstance(model, TopTwoModel):
                    raise TypeError(f"{owner}: the source factory returned "
                                    f"{type(model).__name__}; a TopTwoModel is required.")
            A = draw_fn(source if real else model, x, _stream(child, _DATA))
            base = _base_record(draw, x, r, model, A)
            base.update(tags)
            for name, meth in methods.items():
                if arity[name] >= 2:
                    est = meth(model, _stream(child, _METHOD, _method_key(name)))
                else:
                    est = meth(model)
                est.fit(A)
                scored = score_fn(est, tr if real else model)
                records.append({"method": name, **base, **scored})
            done += 1
            if progress:
                sys.stderr.write(f"\r{owner}: {done}/{total} draws ({100 * done // total}%)")
                sys.stderr.flush()
    if progress:
        sys.stderr.write("\n")
    return records


def vote_ratio(A: Any) -> np.ndarray:
    """Each task's vote ratio c1 / (c1 + c2) between its two most frequent answers.

    Under eq. (1) [`eqn:A_dist`] its expectation given the responses is about
    (p q + (1-p)/K) / (p + 2 (1-p)/K) averaged over the answering workers: it increases
    with q_j, so q_hat (eq. (4) [`eqn:est_q`]) and the vote ratio should be positively
    correlated (Appendix A [`sec:app:model`]).

    Parameters
    ----------
    A : Responses, array or sparse matrix
        Responses (anything :func:`toptwo.as_responses` accepts).

    Returns
    -------
    ndarray of shape (n_tasks,)
        c1 / (c1 + c2) with c1 >= c2 the two largest per-label counts (ties give 1/2);
        NaN for a task without responses.
    """
    R = as_responses(A, owner="vote_ratio")
    c = -np.sort(-R.task_label_counts(), axis=1)
    tot = c[:, 0] + c[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tot > 0, c[:, 0] / np.where(tot > 0, tot, 1), np.nan)


# ------------------------------------------------------------------------- statistics
def _t975(df: int) -> float:
    """97.5% quantile of Student's t with ``df`` degrees of freedom (NaN for df < 1)."""
    from scipy import stats  # lazy: scipy.stats takes ~0.3 s to import
    return float(stats.t.ppf(0.975, df)) if df >= 1 else float("nan")


def _mean_sem(values: Sequence[float]) -> tuple[float, float]:
    a = np.asarray(values, float)
    return float(a.mean()), (float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else 0.0)


def aggregate(records: Sequence[Mapping[str, Any]], metric: str, *,
              x: str = "queries_per_task", by: str = "method"
              ) -> dict[Any, dict[str, np.ndarray]]:
    """Mean, standard error and Student-t 95% confidence interval per group and x.

    Parameters
    ----------
    records : sequence of dict
        Output of :func:`sweep` (possibly concatenated).
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
    t_{0.975, n-1} sem, ``scipy.stats.t``; equal to the mean for a single replicate) and
    ``n`` (replicates with a finite value). Groups are in order of first appearance.
    """
    if not records:
        raise ValueError("aggregate: `records` is empty; run a sweep first.")
    for k in (metric, x, by):
        if k not in records[0]:
            raise KeyError(f"aggregate: records have no key {k!r}; available keys are "
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


def _paired_values(records: Sequence[Mapping[str, Any]], method: str, other: str,
                   metric: str, x: str, where: Mapping[str, Any]
                   ) -> dict[tuple[float, int], float]:
    """(x, replicate) -> metric(method) - metric(other), over the draws both have a finite
    value for. Two records of one method for the same (x, replicate) (e.g. two scenarios
    concatenated without a ``where`` filter) are refused: pairing them would be arbitrary."""
    vals: dict[str, dict[tuple[float, int], float]] = {method: {}, other: {}}
    for rec in records:
        if rec["method"] in vals and all(rec.get(k) == v for k, v in where.items()):
            key = (float(rec[x]), int(rec["replicate"]))
            if key in vals[rec["method"]]:
                raise ValueError(f"two records of {rec['method']!r} for {x} = {key[0]!r}, "
                                 f"replicate {key[1]}: select one group of draws with "
                                 f"`where=` (e.g. where={{'scenario': ...}}).")
            v = float(rec[metric])
            vals[rec["method"]][key] = v if math.isfinite(v) else math.nan
    common = sorted(set(vals[method]) & set(vals[other]))
    return {k: vals[method][k] - vals[other][k] for k in common
            if math.isfinite(vals[method][k] - vals[other][k])}


def paired_gap(records: Sequence[Mapping[str, Any]], method: str, reference: str,
               metric: str = "err_pair", *, x: str = "queries_per_task",
               where: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Gap ``metric(method) - metric(reference)`` paired per (x, replicate).

    Per replicate r the differences are averaged over the x grid; the mean over
    replicates of these averages is the gap, with a Student-t 95% CI (the replicates
    are independent draws). Only replicates with a finite difference at *every* x of the
    grid take part (an average over fewer points would weigh the grid differently); a
    replicate missing some x is left out of the gap but kept in ``per_x``. Also returns
    the gap per x value.

    Parameters
    ----------
    records : output of :func:`sweep`
        The records.
    method, reference : str
        Values of the ``method`` key.
    metric : str, default="err_pair"
        The record field compared.
    x : str, default="queries_per_task"
        The record field that indexes the grid.
    where : mapping, optional
        Keep only records whose keys equal these values (e.g. ``{"scenario": "hard"}``).

    Returns
    -------
    dict with ``mean``, ``sem``, ``ci_low``, ``ci_high``, ``n`` (complete replicates) and
    ``per_x``: dict x -> (mean difference, sem) over replicates at that x.
    """
    where = dict(where or {})
    diffs = _paired_values(records, method, reference, metric, x, where)
    if not diffs:
        raise ValueError(f"paired_gap: no (x, replicate) with both {method!r} and "
                         f"{reference!r} in the records (where={where!r}).")
    per_rep: dict[int, list[float]] = {}
    per_x: dict[float, list[float]] = {}
    for (xv, r), d in diffs.items():
        per_rep.setdefault(r, []).append(d)
        per_x.setdefault(xv, []).append(d)
    reps = [float(np.mean(v)) for _, v in sorted(per_rep.items()) if len(v) == len(per_x)]
    if not reps:
        raise ValueError(f"paired_gap: no replicate has both {method!r} and {reference!r} "
                         f"at every {x} of the grid {sorted(per_x)} (where={where!r}).")
    mean, sem = _mean_sem(reps)
    half = _t975(len(reps) - 1) * sem if len(reps) > 1 else 0.0
    return {"mean": mean, "sem": sem, "ci_low": mean - half, "ci_high": mean + half,
            "n": len(reps), "per_x": {xv: _mean_sem(v) for xv, v in sorted(per_x.items())}}


def paired_differences(records: Sequence[Mapping[str, Any]], method: str,
                       others: Sequence[str], metric: str = "err_pair", *,
                       x: str = "queries_per_task", where: Mapping[str, Any] | None = None
                       ) -> dict[str, list[list[float]]]:
    """Per x: ``[x, mean, sem, n]`` of the paired difference ``method - other``.

    The rows of the "TopTwo2 minus every method" tables of
    ``benchmarks/reproduce_paper.py`` and of :func:`toptwo.viz.plot_paired_differences`
    (one row per x; ``sem`` is the sample sd of the per-replicate differences over
    sqrt(n)). Pairs are the (x, replicate) draws with a finite value for both methods.

    Parameters
    ----------
    records : output of :func:`sweep`
        The records.
    method : str
        The method the others are subtracted from (e.g. ``"TopTwo2"``).
    others : sequence of str
        The methods compared with it (``method`` itself is skipped).
    metric : str, default="err_pair"
        The record field compared.
    x : str, default="queries_per_task"
        The record field that indexes the grid.
    where : mapping, optional
        Keep only records whose keys equal these values.

    Returns
    -------
    dict other -> list of ``[x, mean, sem, n]`` rows, sorted by x.
    """
    out = {}
    for other in others:
        if other == method:
            continue
        per_x: dict[float, list[float]] = {}
        for (xv, _), d in _paired_values(records, method, other, metric, x,
                                         dict(where or {})).items():
            per_x.setdefault(xv, []).append(d)
        out[other] = [[xv, *_mean_sem(d), len(d)] for xv, d in sorted(per_x.items())]
    return out


def holm(pvalues: Any) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error control).

    ``adjusted[i] <= alpha`` rejects hypothesis i with family-wise error rate at most
    alpha over all the hypotheses given (Holm, 1979). Same result as
    ``statsmodels.stats.multitest.multipletests(p, method="holm")[1]``.

    Parameters
    ----------
    pvalues : array-like of float in [0, 1]
        The unadjusted p-values of the family of hypotheses.
    """
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1 or p.size == 0 or np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"holm: pvalues must be a non-empty 1-D array of values in [0, 1]; "
                         f"got {np.asarray(pvalues)!r} instead.")
    order = np.argsort(p, kind="stable")
    m = p.size
    adj_sorted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj_sorted
    return out


def paired_row_tests(rows: Mapping[str, Sequence[Sequence[float]]], *,
                     exclude: Sequence[str] = (), tags: Mapping[str, Any] | None = None
                     ) -> list[dict[str, Any]]:
    """Two-sided t tests of stored paired differences, one per (method, x) row.

    Each row ``[x, mean, sem, n]`` (as from :func:`paired_differences`, or
    :meth:`toptwo.experiments.paper.StoredRun.paired`) summarises n paired differences; the test of
    "mean difference = 0" has t = mean / sem with n - 1 degrees of freedom
    (``scipy.stats.t``). A row with n < 2 or sem = 0 (up to round-off, ``_ROUNDOFF_SEM``)
    is **not testable** (``p`` is NaN):
    with sem = 0 every draw gave the same difference, which happens when the draws do
    not vary (e.g. keeping d answers per task when no task has more than d), so there
    is one comparison, not a sample of them. :func:`holm_family` leaves such rows out of
    the family and never calls them significant.

    Parameters
    ----------
    rows : mapping method -> list of [x, mean, sem, n]
        The paired differences per method.
    exclude : sequence of str, optional
        Methods to leave out (e.g. the reference itself).
    tags : mapping, optional
        Key/values copied into every result (e.g. ``{"knob": "n_tasks"}``).

    Returns
    -------
    list of dict with ``method``, ``x``, ``mean``, ``sem``, ``n``, ``half`` (half-width of
    the 95% CI; NaN where not testable), ``p`` and the tags. Adjust a family of them with
    :func:`holm_family`.
    """
    from scipy import stats  # lazy: scipy.stats takes ~0.3 s to import
    out = []
    for method, table in rows.items():
        if method in exclude:
            continue
        for x, mean, sem, n in table:
            n = int(n)
            testable = n >= 2 and sem is not None and sem > _ROUNDOFF_SEM
            p = float(2 * stats.t.sf(abs(mean / sem), n - 1)) if testable else math.nan
            out.append({"method": method, "x": x, "mean": mean, "sem": sem, "n": n,
                        "half": _t975(n - 1) * sem if testable else math.nan,
                        "p": p, **dict(tags or {})})
    return out


def holm_family(tests: list[dict[str, Any]], alpha: float = 0.05) -> list[dict[str, Any]]:
    """Holm-adjust the p-values of one family of tests, in place.

    Parameters
    ----------
    tests : list of dict with a ``p`` entry
        The family (e.g. from :func:`paired_row_tests`). Tests with a NaN ``p`` (not
        testable) are not part of the family: they get ``p_holm`` NaN and are never
        significant.
    alpha : float in (0, 1), default=0.05
        Family-wise error rate.

    Returns
    -------
    list of dict
        ``tests``, each with ``p_holm`` (:func:`holm`) and ``significant`` (``p_holm <=
        alpha``) added.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"The 'alpha' parameter of holm_family must be in (0, 1); got "
                         f"{alpha!r} instead.")
    family = [t for t in tests if not math.isnan(t["p"])]
    for t in tests:
        t["p_holm"], t["significant"] = math.nan, False
    if family:
        for t, q in zip(family, holm([t["p"] for t in family])):
            t["p_holm"] = float(q)
            t["significant"] = bool(q <= alpha)
    return tests


def grid_average(raw: Mapping[str, Mapping[str, Sequence[float]]], method: str,
                 xs: Sequence[float] | None = None) -> np.ndarray:
    """Per replicate, a method's error averaged over the grid points ``xs``.

    Parameters
    ----------
    raw : mapping method -> {str(x): [error of replicate 0, 1, ...]}
        The ``raw_err_pair`` tables of ``benchmarks/reproduce_paper.py``
        (:meth:`toptwo.experiments.paper.StoredRun.raw`).
    method : str
        A key of ``raw``.
    xs : sequence of float, optional
        Grid points to average over (default: every grid point of the method).

    Returns
    -------
    ndarray of shape (n_replicates,)
        Replicates present at every grid point (the smallest count over ``xs``).
    """
    if method not in raw:
        raise ValueError(f"grid_average: method {method!r} not in the table; "
                         f"available: {sorted(raw)}.")
    table = raw[method]
    keys = [str(float(x)) for x in xs] if xs is not None else list(table)
    missing = [k for k in keys if k not in table]
    if missing or not keys:
        raise ValueError(f"grid_average: grid points {missing or keys!r} missing for "
                         f"{method!r}; available: {list(table)}.")
    n = min(len(table[k]) for k in keys)
    return np.mean([np.asarray(table[k][:n], dtype=float) for k in keys], axis=0)


def compare_methods(raw: Mapping[str, Mapping[str, Sequence[float]]],
                    pairs: Sequence[tuple[str, str]], *, xs: Sequence[float] | None = None,
                    alpha: float = 0.05) -> list[dict[str, Any]]:
    """Paired comparisons ``a - b`` of grid-averaged errors, Holm-corrected as one family.

    For each pair (a, b) the per-replicate difference of :func:`grid_average` errors is
    tested against 0 with a two-sided paired t test (``scipy.stats.ttest_rel``); its mean
    gets a Student-t 95% CI (``scipy.stats.t.ppf``). The p-values of all the pairs are
    adjusted together with :func:`holm`, so "significant" claims over the whole family
    have a family-wise error rate of at most ``alpha``.

    Parameters
    ----------
    raw : mapping
        As in :func:`grid_average`.
    pairs : sequence of (str, str)
        The comparisons (a, b): difference a - b (negative: a has the lower error).
    xs : sequence of float, optional
        Grid points averaged over (default: all of each method's).
    alpha : float, default=0.05
        Family-wise error rate for the ``significant`` flag.

    Returns
    -------
    list of dict (one per pair, in order) with ``a``, ``b``, ``mean``, ``ci_low``,
    ``ci_high`` (unadjusted 95% CI), ``n``, ``p``, ``p_holm`` and ``significant``
    (``p_holm <= alpha``); a pair whose difference is the same in every replicate is not
    testable (``p`` NaN, never significant; see :func:`holm_family`).
    """
    from scipy import stats  # lazy: scipy.stats takes ~0.3 s to import
    if not pairs:
        raise ValueError("compare_methods: `pairs` must list at least one (a, b) pair.")
    if not 0 < alpha < 1:
        raise ValueError(f"The 'alpha' parameter of compare_methods must be in (0, 1); "
                         f"got {alpha!r} instead.")
    rows = []
    for a, b in pairs:
        da, db = grid_average(raw, a, xs), grid_average(raw, b, xs)
        n = min(da.size, db.size)
        d = da[:n] - db[:n]
        if n < 2:
            raise ValueError(f"compare_methods: {a!r} - {b!r} has {n} replicate(s); a "
                             f"paired t test needs at least 2.")
        sem = float(d.std(ddof=1) / math.sqrt(n))
        half = _t975(n - 1) * sem
        # sem = 0: every replicate gave the same difference -- one comparison, not testable
        p = float(stats.ttest_rel(da[:n], db[:n]).pvalue) if sem > _ROUNDOFF_SEM else math.nan
        rows.append({"a": a, "b": b, "mean": float(d.mean()), "ci_low": float(d.mean()) - half,
                     "ci_high": float(d.mean()) + half, "n": int(n), "p": p})
    return holm_family(rows, alpha)


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
