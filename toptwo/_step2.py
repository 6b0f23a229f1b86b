r"""Algorithm 1, step 2: the rules that turn a leading eigenvector into u^(k) and u~^(k).

One definition of each rule, called by every stage-1 path: the per-component path
(:func:`toptwo.spectral._spectral_block`), the batched small components
(:mod:`toptwo._batched`) and the one-worker components (:mod:`toptwo._components`).
Each function works on one vector of length n or on a stack of them (shape (..., n),
the rule applied along the last axis), so the batched path applies the very same code
to many components at once.

* :func:`fix_sign` -- the sign of u^(k) (Sec. 4.1: at least half the entries positive);
* :func:`clip_nonnegative` -- the projection of a pooled vector onto u >= 0;
* :func:`average_signed` -- the "averaged" pooled vector (mean of the sign-fixed u^(k));
* :func:`trim` -- u~^(k): entries above 2/(eta sqrt(n)) set to 0;
* :func:`signed_left` -- the sequence for each ``left_vector``: round-off zeros, sign,
  (pooled: mean and) clip, as every path applies it before :func:`trim`.

The round-off rule that comes first (entries within ``U_ABS_TOL`` of 0 are 0) is
:func:`toptwo._ties._clean`.
"""

from __future__ import annotations

import numpy as np

from ._ties import U_ABS_TOL, _clean

__all__ = ["fix_sign", "trim", "clip_nonnegative", "average_signed", "signed_left",
           "SIGN_RULES"]

#: Values of ``rule`` of :func:`fix_sign`.
SIGN_RULES = ("paper", "sum")


def fix_sign(u: np.ndarray, rule: str = "paper") -> np.ndarray:
    """The paper's sign rule: of {u, -u}, the one with at least half its entries > 0.

    Parameters
    ----------
    u : ndarray of shape (n,) or (..., n)
        The vector(s); the rule is applied to each along the last axis.
    rule : {"paper", "sum"}, default="paper"
        "paper": more positive than negative entries first, then a positive sum.
        "sum" (beyond the paper): a positive sum first, then the count.

    Returns
    -------
    ndarray of the shape of u
        u or -u for each vector, or the zero vector where the sign is not identified.

    Notes
    -----
    "More positive than negative entries" is the paper's rule whenever that rule
    decides, and still decides when many entries are zero (then neither u nor -u has
    half its entries positive). Entries within ``U_ABS_TOL`` of 0 are zero for this
    count (the solvers cannot tell their sign; ``_clean`` sets them to exactly 0).
    When the counts tie, the one with a positive sum is kept; when the sum is 0 too (to
    within the accuracy of u, n ``U_ABS_TOL``), u and -u are equally supported by the
    data (e.g. two workers who answered one task with opposite binary answers) and the
    zero vector is returned. So the result never depends on the eigen-solver's sign,
    on round-off or on the order of the workers.

    ``rule="sum"`` suits a pooled vector: the population vector p/||p|| has no negative
    entry, and when most workers are spammers (p_i = 0) the count of positive entries
    is decided by their noise, while the sum is dominated by the reliable workers
    (design notes, "Sign rule").

    Examples
    --------
    >>> import numpy as np
    >>> fix_sign(np.array([-0.2, -0.2, 0.9])).tolist()       # 2 of 3 negative: flip
    [0.2, 0.2, -0.9]
    >>> fix_sign(np.array([-0.2, -0.2, 0.9]), "sum").tolist()   # positive sum: keep
    [-0.2, -0.2, 0.9]
    >>> fix_sign(np.array([[1.0, -1.0]])).tolist()           # not identified
    [[0.0, 0.0]]
    """
    u = np.asarray(u, dtype=float)
    n = u.shape[-1]
    big = np.abs(u) > U_ABS_TOL
    pos = (big & (u > 0)).sum(axis=-1)
    neg = (big & (u < 0)).sum(axis=-1)
    total = np.where(big, u, 0.0).sum(axis=-1)
    sum_decides = np.abs(total) > n * U_ABS_TOL
    by_sum = sum_decides if rule == "sum" else sum_decides & (pos == neg)
    by_count = ~by_sum & (pos != neg)
    flip = (by_sum & (total < 0)) | (by_count & (pos < neg))
    out = np.where(flip[..., None], -u, u)
    out[~by_sum & ~by_count] = 0.0                 # the sign is not identified
    return out


def clip_nonnegative(u: np.ndarray) -> np.ndarray:
    """The projection of a pooled left vector onto the cone u >= 0 (p >= 0).

    Entrywise max(u, 0): non-expansive towards p/||p||_2 >= 0 and never raises an
    entry, so Theorem 1's bounds that held for u hold for the result
    (:mod:`toptwo._pooled`).

    Examples
    --------
    >>> import numpy as np
    >>> clip_nonnegative(np.array([0.6, -0.1, 0.8])).tolist()
    [0.6, 0.0, 0.8]
    """
    return np.maximum(u, 0.0)


def average_signed(U: np.ndarray, rule: str) -> np.ndarray:
    """The "averaged" pooled vector: the mean over k of the sign-fixed u^(k).

    ``U`` has shape (K-1, ..., n) (axis 0: k), entries within ``U_ABS_TOL`` of 0
    already 0. The mean is cleaned again (an entry the K-1 vectors cancel to round-off
    is 0); the clip at 0 is :func:`clip_nonnegative`, applied by the caller.

    Examples
    --------
    >>> import numpy as np
    >>> average_signed(np.array([[0.6, 0.8], [-0.8, -0.6]]), "paper").tolist()
    [0.7, 0.7]
    """
    return _clean(np.mean(fix_sign(U, rule), axis=0))


def trim(u: np.ndarray, eta: float, n: int | None = None) -> np.ndarray:
    """Alg. 1 step 2: u~, the entries u_i > 2/(eta sqrt(n)) set to 0.

    Parameters
    ----------
    u : ndarray of shape (n,) or (..., n)
        Sign-fixed left vector(s).
    eta : float
        The eta of the assumption eta sqrt(n) <= ||p||_2 <= sqrt(n), 0 < eta <= 1.
    n : int, optional
        The n of the threshold (default: the length of the last axis of u).

    Examples
    --------
    >>> import numpy as np
    >>> trim(np.array([0.9, 0.3, 0.3]), eta=1.0).tolist()    # threshold 2/sqrt(3) = 1.15
    [0.9, 0.3, 0.3]
    >>> trim(np.array([0.9, 0.3, 0.3]), eta=1.0, n=9).tolist()   # 2/sqrt(9) = 0.67
    [0.0, 0.3, 0.3]
    """
    out = np.array(u, dtype=float, copy=True)
    out[out > 2.0 / (eta * np.sqrt(out.shape[-1] if n is None else n))] = 0.0
    return out


def signed_left(U: np.ndarray, left_vector: str, rule: str) -> np.ndarray:
    """Step 2 between the eigen-solver and the trimming, for each ``left_vector``.

    ``U`` holds the solver's leading vector(s) with exact zeros set (idle workers):
    shape (K-1, ..., n) for "per_k" and "averaged" (axis 0: k), (..., n) for "stacked".
    Entries within ``U_ABS_TOL`` of 0 become 0 (:func:`toptwo._ties._clean`), then

    * "per_k": :func:`fix_sign` on every u^(k) (Algorithm 1 as printed);
    * "averaged": :func:`average_signed`, then :func:`clip_nonnegative`;
    * "stacked": :func:`fix_sign`, then :func:`clip_nonnegative`.

    Returns u of shape (K-1, ..., n) for "per_k", (..., n) otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> signed_left(np.array([-0.6, -0.8, 1e-12]), "stacked", "paper").tolist()
    [0.6, 0.8, 0.0]
    """
    u = _clean(U)
    if left_vector == "per_k":
        return fix_sign(u, rule)
    if left_vector == "averaged":
        return clip_nonnegative(average_signed(u, rule))
    if left_vector == "stacked":
        return clip_nonnegative(fix_sign(u, rule))
    raise ValueError(f"`left_vector` must be one of ('stacked', 'averaged', 'per_k'); got "
                     f"{left_vector!r} instead.")
