"""Cost bounded by the data: refuse up front what would allocate far more than the answers.

Cost model (measured in issue 39 with ``/tmp``-free ``ru_maxrss`` at m = 20,000 tasks,
K = 500 labels, 10 answers per task): every estimator keeps a few dense
``(n_tasks, n_labels)`` float64 arrays (answer counts per task and label, posteriors,
scores), so its peak memory is about ``c * 8 * m * K`` bytes on top of the answers, with
c = 4 (MajorityVote), 5 (TopTwo1), 11 (one-coin Dawid-Skene) and 17 (TopTwo2); its time
has an ``O(m K)`` term per pass. The answers themselves cost ``O(nnz)``. A fit is refused
before anything is allocated when the dense part is neither small in absolute terms nor
paid for by the data:

    m * K  >  max(DENSE_CELLS_FREE, DENSE_CELLS_PER_ANSWER * nnz)

``DENSE_CELLS_FREE`` = 2**24 cells (128 MiB per array; TopTwo2 then peaks near 2 GiB)
lets any small or moderate problem run whatever its sparsity; ``DENSE_CELLS_PER_ANSWER``
= 8 keeps larger problems proportional to the answers (at most 8 cells, i.e. about
c * 64 bytes, per answer: a task answered by d workers may have K up to 8 d). Real crowds
sit far below both (the paper's seven datasets: m K <= 13,300 cells; K = 5 on 10^7
answers: m K <= 5 nnz). The alternatives named: the true K (labels are 1..K; the largest
label used), or renumbering the labels actually used.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Dense (tasks x labels) cells any fit may use, whatever the number of answers.
DENSE_CELLS_FREE = 2**24
#: Dense cells allowed per answer beyond that.
DENSE_CELLS_PER_ANSWER = 8


def check_dense_cost(R: Any, owner: str) -> None:
    """Refuse (ValueError) a fit whose ``n_tasks x n_labels`` arrays the data do not justify.

    Parameters
    ----------
    R : Responses
        The validated responses.
    owner : str
        The caller, named in the message (e.g. ``"TopTwo2.fit"``).

    Raises
    ------
    ValueError
        When ``m K > max(DENSE_CELLS_FREE, DENSE_CELLS_PER_ANSWER * nnz)`` (module
        docstring); the message names the size, the memory one such array takes and
        what to do instead.

    Examples
    --------
    >>> import toptwo
    >>> from toptwo._cost import check_dense_cost
    >>> R = toptwo.Responses.from_triples([0], [0], [1], n_tasks=3, n_labels=4)
    >>> check_dense_cost(R, "demo")          # 12 cells: nothing to refuse
    """
    m, K, nnz = int(R.n_tasks), int(R.n_labels), int(R.nnz)
    cells = m * K
    allowed = max(DENSE_CELLS_FREE, DENSE_CELLS_PER_ANSWER * nnz)
    if cells <= allowed:
        return
    used = np.unique(np.asarray(R.labels)) if nnz else np.zeros(0, dtype=np.int64)
    top = int(used[-1]) if used.size else 0
    gib = 8 * cells / 2**30
    raise ValueError(
        f"{owner}: {m:,} tasks x K = {K:,} labels is {cells:,} cells, and the estimators "
        f"keep several dense (tasks x labels) arrays of 8 bytes per cell ({gib:.2f} GiB "
        f"each, 4 to 17 of them at once) for only {nnz:,} answers; refused before "
        f"allocating (the limit is max({DENSE_CELLS_FREE:,}, {DENSE_CELLS_PER_ANSWER} x "
        f"answers) cells). The answers use {used.size:,} distinct labels, the largest "
        f"{top:,}: pass the true K (n_labels=, --n-labels on the command line), "
        + (f"or renumber the labels actually used 1..{used.size:,}, " if used.size < K
           else "")
        + "or fit groups of tasks separately (fewer tasks per fit).")


#: Pair-posterior cells (answered tasks x K(K-1) ordered pairs) TopTwoEM may use per
#: E-step whatever the data, and per answer and label beyond that.
PAIR_CELLS_FREE = 2**24
PAIR_CELLS_PER_ANSWER_LABEL = 8


def check_pair_cost(R: Any, owner: str, max_iter: int) -> None:
    """Refuse (ValueError) an EM whose pair posteriors the answers do not pay for.

    Cost model: each E-step of :class:`toptwo.TopTwoEM` evaluates the posterior of every
    ordered pair (g, h) of every answered task, ``m_a K (K - 1)`` cells, while the rest
    of an iteration costs ``O(nnz K)`` (the per-answer label scores). The fit is refused
    up front when ``m_a K (K - 1) > max(PAIR_CELLS_FREE, PAIR_CELLS_PER_ANSWER_LABEL *
    nnz * K)``: below ``2**24`` cells (a few seconds for 100 iterations) anything runs;
    above, the pair part may be at most 8 times the part that reads the answers, so the
    time stays proportional to the data (issue 39: K = 1,000 on 6,000 answers took
    111 s of CPU; 6e8 cells per E-step against 4.8e7 allowed).

    Examples
    --------
    >>> import toptwo
    >>> from toptwo._cost import check_pair_cost
    >>> R = toptwo.Responses.from_triples([0], [0], [1], n_tasks=3, n_labels=4)
    >>> check_pair_cost(R, "demo", 100)      # 12 pair cells: nothing to refuse
    """
    K, nnz = int(R.n_labels), int(R.nnz)
    m_a = int(np.count_nonzero(np.asarray(R.task_counts()) > 0))
    cells = m_a * K * (K - 1)
    allowed = max(PAIR_CELLS_FREE, PAIR_CELLS_PER_ANSWER_LABEL * nnz * K)
    if cells <= allowed:
        return
    raise ValueError(
        f"{owner}: the E-step's pair posterior covers {m_a:,} answered tasks x K(K-1) = "
        f"{K * (K - 1):,} ordered pairs = {cells:,} cells per iteration (up to max_iter = "
        f"{max_iter} iterations, about {cells * max_iter:.1e} cell updates) for only "
        f"{nnz:,} answers; refused before fitting (the limit is max("
        f"{PAIR_CELLS_FREE:,}, {PAIR_CELLS_PER_ANSWER_LABEL} x answers x K) = {allowed:,} "
        f"cells). Use TopTwo2 (--method toptwo2; O(nnz K) per step), or pass the true K "
        f"(n_labels=, --n-labels) if fewer labels are possible.")
