"""The input gate's label and duplicate checks: K from the data, unused labels, repeated pairs.

Private: used by :func:`toptwo.responses.as_responses`, :meth:`toptwo.Responses.from_triples`,
the CSV reader and the estimators that need every label 1..K.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np

from ._validation import (check_choice, check_int)

if TYPE_CHECKING:
    from .responses import Responses

Duplicates = Literal["error", "first", "last"]
#: The policies for a (worker, task) pair given more than once.
DUPLICATE_POLICIES = ("error", "first", "last")

#: Largest K inferred from the data without an explicit ``n_labels`` (the estimators
#: allocate n_tasks x K arrays, so one stray label of 10^6 must not set K silently).
MAX_INFERRED_LABELS = 1000

#: Indices and labels are stored as int32 (CSR indices, compact arrays); anything larger
#: is refused instead of being wrapped around.
INT32_MAX = int(np.iinfo(np.int32).max)



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


def _resolve_n_labels(labels: np.ndarray, n_labels: Any, *, owner: str, where,
                      subject: str | None = None) -> int:
    """Check labels >= 1 and <= K; infer K as the largest label when not given.

    An explicit K above :data:`MAX_INFERRED_LABELS` is accepted only when a label that
    large occurs in the data (see :func:`check_n_labels_bound`). ``subject`` (e.g.
    "`A` passed to TopTwo2.fit") starts every message.
    """
    lead = f"{subject}: " if subject else ""
    neg = labels < 0
    if neg.any():
        e = int(np.argmax(neg))
        raise ValueError(f"{lead}labels must be in 1..n_labels with 0 for 'not answered'; found "
                         f"{int(labels[e])} at {where(e)}.")
    top = int(labels.max())
    if top > INT32_MAX:
        e = int(np.argmax(labels > INT32_MAX))
        raise ValueError(f"{lead}labels must be in 1..n_labels with n_labels <= {INT32_MAX} "
                         f"(stored as int32); found {int(labels[e])} at {where(e)}.")
    if n_labels is None:
        if top > MAX_INFERRED_LABELS:
            e = int(np.argmax(labels))
            raise ValueError(f"{lead}n_labels was not given and the largest label in the data is "
                             f"{top} (at {where(e)}), so K would be {top} > "
                             f"{MAX_INFERRED_LABELS}, which is almost always a stray value; "
                             f"pass n_labels=K explicitly if K is really that large.")
        if top < 2:
            raise ValueError(f"{lead}n_labels was not given and the largest label in the data is "
                             f"{top}, so K would be {top} < 2; pass n_labels=K explicitly.")
        return top
    K = check_int(n_labels, "n_labels", owner=owner, minimum=2)
    check_n_labels_bound(K, top, owner=owner)
    if top > K:
        e = int(np.argmax(labels > K))
        raise ValueError(f"{lead}labels must be in 1..n_labels with 0 for 'not answered'; found "
                         f"{int(labels[e])} at {where(e)} with n_labels={K}.")
    return K


def exceeds_label_bound(K: int, top: int) -> bool:
    """True if K is refused for data whose largest label is ``top`` (see below)."""
    return K > max(MAX_INFERRED_LABELS, top)


def check_n_labels_bound(K: int, top: int, *, owner: str, name: str = "n_labels") -> None:
    """Refuse an explicit K far beyond the data: K > max(MAX_INFERRED_LABELS, top).

    The estimators allocate ``n_tasks x K`` arrays and loop over the K labels, so a K
    the data do not use (``n_labels=2**40``, ``--n-labels 100000000``) would exhaust
    memory or run for hours. Up to :data:`MAX_INFERRED_LABELS` choices are accepted
    whatever the data; beyond, K must equal the largest label present.
    """
    if exceeds_label_bound(K, top):
        raise ValueError(f"The '{name}' parameter of {owner} is {K}, but the largest label in "
                         f"the data is {top}; a K above {MAX_INFERRED_LABELS} is accepted "
                         f"only when the data contain a label that large (the estimators "
                         f"allocate n_tasks x K arrays). Pass the real number of choices.")


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
