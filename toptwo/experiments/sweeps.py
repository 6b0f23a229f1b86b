"""Sweeps: draws, scores and the seeding scheme of every experiment (see :mod:`toptwo.experiments`)."""

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

__all__ = ["sweep", "replicate_seed", "grid_key", "score_top_two", "score_top_t", "score_truth", "subsample_per_task", "vote_ratio", "METRICS", "DRAWS"]



#: Metrics recorded by :func:`score_top_two` (NaN where the estimator lacks the estimate).
METRICS = ("err_g", "err_h", "err_pair", "mse_p", "mse_q", "max_abs_q", "mean_abs_q",
           "max_abs_q_ok", "mean_abs_q_ok")

#: The draws :func:`sweep` knows by name (a callable is accepted too).
DRAWS = ("rate", "per_task")

_MODEL, _DATA, _METHOD = 0, 1, 2



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
