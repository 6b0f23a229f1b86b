"""The input gate's checks of whole responses: repeated pairs, unused labels, consistency.

(The checks of label values and of K, applied entry by entry while the gate reads an
array, live in :mod:`toptwo._validation`, with the other value checks.) Private: used by :func:`toptwo.responses.as_responses`, :meth:`toptwo.Responses.from_triples`,
the CSV reader and the estimators that need every label 1..K.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Literal, NamedTuple

import numpy as np

from ._validation import (INT32_MAX, MAX_INFERRED_LABELS, _resolve_n_labels,  # noqa: F401
                          check_choice, check_n_labels_bound, exceeds_label_bound)

if TYPE_CHECKING:
    from .responses import Responses

Duplicates = Literal["error", "first", "last"]
#: The policies for a (worker, task) pair given more than once.
DUPLICATE_POLICIES = ("error", "first", "last")




class _DuplicatePairs(NamedTuple):
    """Repeated (worker, task) pairs among N responses, from :func:`_find_duplicates`."""

    order: np.ndarray      #: stable sort of the responses by (worker, task)
    repeats: np.ndarray    #: repeats[e]: sorted response e + 1 has the pair of response e
    n_pairs: int           #: distinct pairs that occur more than once
    n_extra: int           #: responses beyond the first of their pair
    example: tuple[int, int]  #: (first, second) input positions of the first repeat

    def kept(self, policy: str) -> np.ndarray:
        """Sorted positions of the responses kept by ``policy`` ("first" or "last")."""
        if policy == "first":
            return self.order[np.r_[True, ~self.repeats]]
        return self.order[np.r_[~self.repeats, True]]


def _find_duplicates(workers: np.ndarray, tasks: np.ndarray, n_tasks: int) -> _DuplicatePairs:
    """Sort responses by (worker, task), stably, and find the repeated pairs.

    The one place that detects repeated (worker, task) pairs: triples, CSV files, the
    real datasets and sparse matrices all go through it (a sparse matrix already sorted
    by (worker, task), pairs strictly increasing, is recognised by
    :func:`~toptwo.responses.as_responses` in one O(N) pass and has none to find).
    O(N log N) time, O(N) memory.
    The example is the repeat that comes first in input order, with its pair's first
    occurrence.
    """
    key = np.asarray(workers, dtype=np.int64) * int(n_tasks) + tasks
    order = np.argsort(key, kind="stable")
    sk = key[order]
    repeats = sk[1:] == sk[:-1]
    if not repeats.any():
        return _DuplicatePairs(order, repeats, 0, 0, (-1, -1))
    starts = repeats & ~np.r_[False, repeats[:-1]]
    second = order[1:][repeats]
    e2 = int(second.min())
    e1 = int(order[np.searchsorted(sk, key[e2], side="left")])
    return _DuplicatePairs(order, repeats, int(np.count_nonzero(starts)),
                      int(np.count_nonzero(repeats)), (e1, e2))


def _duplicates_error(dups: _DuplicatePairs, *, source: str, unit: str, where, show,
                     fix: str = "Pass duplicates='first' or duplicates='last' to keep one "
                                "answer per pair.") -> ValueError:
    """The one message refusing repeated (worker, task) pairs.

    ``where(e)`` locates input position e ("in triple 3", "on line 5"); ``show(e)`` gives
    the (worker, task, label) of position e as the caller's input spells them.
    """
    e1, e2 = dups.example
    w, t, l1 = show(e1)
    l2 = show(e2)[2]
    return ValueError(
        f"{source}: {dups.n_pairs} (worker, task) pair(s) occur more than once "
        f"({dups.n_extra} extra {unit} out of {dups.order.size}); e.g. worker {w} answered "
        f"task {t} {where(e1)} (label {l1}) and {where(e2)} (label {l2}). {fix}")


def check_labels_used(R: "Responses", owner: str, *, cli: bool = False,
                      action: Literal["error", "warn"] = "error",
                      label_base: int = 1) -> None:
    """Refuse responses in which some label in ``1..K`` never occurs (TopTwo1/TopTwo2).

    With a label nobody chose, every answer "agrees" with the top-two model on that
    label's binary matrix A^(k) (Prop. 1 [`prop:binary`]), so eq. (5) [`eqn:hatpi`]
    credits every worker with a hit and the reliabilities p_hat collapse towards 1
    (binary data padded to K = 3 gives p_hat in 0.85-1.0 for every worker).

    Parameters
    ----------
    R : Responses
        The responses to check.
    owner : str
        Name used in the message (e.g. ``"TopTwo2.fit"``).
    cli : bool, default=False
        Word the alternatives as command-line options (``--method majority``).
    action : {"error", "warn"}, default="error"
        Raise ValueError, or issue the same text as a UserWarning and return.
    label_base : int, default=1
        Show labels in the file's numbering: label c is written c + label_base - 1
        (``--label-base 0`` files number their choices 0..K-1).

    The advice depends on where the unused labels are: only above the largest used
    label -- pass the smaller K; in between -- K cannot be lowered without relabelling
    (a smaller K would refuse the larger labels), so the message says so and names the
    methods that accept an unused choice.
    """
    check_choice(action, "action", ("error", "warn"), owner="check_labels_used")
    unused = R.unused_labels()
    if unused.size == 0:
        return
    used = np.setdiff1d(np.arange(1, R.n_labels + 1), unused)
    shift = int(label_base) - 1
    shown = ", ".join(str(int(c) + shift) for c in unused[:10]) + \
        (", ..." if unused.size > 10 else "")
    first, last = 1 + shift, R.n_labels + shift
    alt = ("--method majority or --method onecoin" if cli
           else "toptwo.baselines.MajorityVote or toptwo.baselines.OneCoinDawidSkene")
    top_used = int(used.max()) if used.size else 0
    if used.size and (unused > top_used).all() and top_used >= 3:
        k = f"--n-labels {top_used}" if cli else f"n_labels={top_used}"
        advice = (f"Pass the real number of choices ({k} if the unused labels are not "
                  f"choices), or for binary tasks use {alt}.")
    elif used.size and (unused > top_used).all():
        advice = f"The answers use fewer than 3 labels: for binary tasks use {alt}."
    else:
        advice = (f"Lowering the number of choices would not help: unused label(s) lie "
                  f"below the largest used label {top_used + shift}, so a smaller K would "
                  f"refuse that label; relabel the choices consecutively, or use {alt}, "
                  f"which accept a choice nobody made.")
    msg = (
        f"{owner} needs every label {first}..{last} to occur in the data; label(s) {shown} "
        f"never occur ({unused.size} of n_labels={R.n_labels}; the answers use "
        f"{used.size} label(s)). With a label nobody chose every answer counts as a hit in "
        f"eq. (5), so every worker's reliability is estimated near 1 (this is what padding "
        f"binary data to K = 3 does). {advice}")
    if action == "warn":
        warnings.warn(msg, UserWarning, stacklevel=2)
        return
    raise ValueError(msg)


def binary_labels_message(owner: str, *, cli: bool = False) -> str:
    """The message refusing K = 2 in TopTwo1/TopTwo2 (eq. (1) is not identifiable)."""
    alt = ("--method majority or --method onecoin" if cli
           else "toptwo.baselines.MajorityVote or toptwo.baselines.OneCoinDawidSkene (one-coin Dawid-Skene)")
    return (f"{owner} needs n_labels >= 3; got n_labels=2. With K = 2 the model (eq. (1)) "
            f"depends on (p, q) only through p_i (2 q_j - 1), so ||p|| and q are not "
            f"identifiable and Alg. 1 step 5 / eq. (5) divide by K - 2 = 0. Do not pad "
            f"binary data to K = 3 (an unused label makes every answer a hit in eq. (5)); "
            f"for binary tasks use {alt}.")


def _check_consistent(R: Responses, owner: str) -> None:
    """Re-check a :class:`Responses` at the gate: O(nnz), a few vectorised passes.

    Its arrays are read-only, but the constructor trusts its arguments, so responses
    built directly (not through :func:`as_responses` / ``from_triples``) are checked
    here: equal-length 1-D integer arrays, indices inside the shape, labels in 1..K,
    sorted by (worker, task) with no pair twice.
    """
    subject = f"`A` passed to {owner} (a Responses)"
    arrays = {"workers": R.workers, "tasks": R.tasks, "labels": R.labels}
    for name, a in arrays.items():
        if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype.kind not in "iu":
            raise TypeError(f"{subject} must hold 1-D integer arrays; its {name} is "
                            f"{type(a).__name__} with dtype "
                            f"{getattr(a, 'dtype', None)} and shape {getattr(a, 'shape', None)}.")
    if not R.workers.size == R.tasks.size == R.labels.size:
        raise ValueError(f"{subject} has workers, tasks and labels of different lengths "
                         f"({R.workers.size}, {R.tasks.size}, {R.labels.size}).")
    if R.n_labels < 2 or min(R.shape) < 1:
        raise ValueError(f"{subject} has n_labels={R.n_labels} and shape {R.shape}; it "
                         f"needs n_labels >= 2 and at least one worker and one task.")
    if R.nnz == 0:
        raise ValueError(f"{subject} holds no responses; nothing to estimate from.")
    for name, a, hi in (("worker", R.workers, R.n_workers), ("task", R.tasks, R.n_tasks),
                        ("label", R.labels - 1, R.n_labels)):
        bad = (a < 0) | (a >= hi)
        if bad.any():
            e = int(np.argmax(bad))
            shown = int(a[e]) + (1 if name == "label" else 0)
            allowed = f"1..{hi}" if name == "label" else f"0..{hi - 1}"
            raise ValueError(f"{subject} holds {name} {shown} at entry {e} (worker "
                             f"{int(R.workers[e])}, task {int(R.tasks[e])}); allowed: "
                             f"{allowed}.")
    key = R.workers.astype(np.int64) * R.n_tasks + R.tasks
    if R.nnz > 1 and not (key[1:] > key[:-1]).all():
        e = int(np.argmax(key[1:] <= key[:-1])) + 1
        raise ValueError(f"{subject} is not sorted by (worker, task) with each pair once "
                         f"(entry {e}: worker {int(R.workers[e])}, task {int(R.tasks[e])}); "
                         f"build it with Responses.from_triples.")
