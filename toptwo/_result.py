"""What stage 1 (Algorithm 1) computes: :class:`SpectralResult`.

Its own module so that the modules that read a stage-1 result (:mod:`toptwo.reliability`)
need not import the estimator (:mod:`toptwo.spectral`, which re-exports it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SpectralResult"]


@dataclass
class SpectralResult:
    """Everything Algorithm 1 computes: the labels, eq. (4) and the intermediate
    vectors of every step (u^(k), u~^(k), v^(k), Delta v, l)."""

    top: np.ndarray            #: (m, T) estimated top-T labels, 0 for tasks without data
    confusion_raw: np.ndarray  #: (m, T) eq. (4) per plausible answer, unclipped
    delta_v: np.ndarray        #: (m, K) Delta v_j^(k)
    v: np.ndarray              #: (m, K-1) v^(k)
    left_vectors: np.ndarray   #: (K-1, n) u^(k) after the sign rule, before trimming
    trimmed: np.ndarray        #: (K-1, n) u~^(k)
    singular_values: np.ndarray  #: (K-1,) leading singular value of X^(k)
    l_per_task: np.ndarray     #: (m,) l_j (NaN where the task has no data in C)
    norm_p: float              #: l, the estimate of ||p||_2
    s_prime_x: float           #: s' of B (estimated)
    s_prime_y: float           #: s' of C (estimated)
    #: (m,) connected component of every task (-1: no stage-1 estimate); see
    #: :func:`spectral_estimate`
    components: np.ndarray | None = None
    #: (m,) bound on the floating-point error of v_j (ties of eq. (3) within 4x it)
    v_error: np.ndarray | None = None
    #: (m,) the l that eq. (4) divides by for each task (its component's l)
    l_task: np.ndarray | None = None
    #: the centring of step 1, "observed" or "paper" (``spectral_estimate``'s argument)
    centering: str | None = None
