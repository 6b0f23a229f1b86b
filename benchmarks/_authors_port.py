"""A NumPy port of the authors' released TopTwo1/TopTwo2 (github Hyeonsu-Jeong/TopTwo,
``helper_functions/run_TopTwo1.m`` and ``run_TopTwo2.m``), without their truth leak, and a
hybrid whose ingredients can be switched one at a time between theirs and toptwo's.

The authors' code (read at commit 9b94788):

* K = the largest label in the data; S = nnz / (N M) over all rows and columns.
* X^(k) = B^(k) - S (K - 2k)/K on every entry (toptwo's ``centering="paper"``).
* u^(k): leading left singular vector of X^(k), sign with a positive sum; the K-1
  vectors are averaged and clipped to [0, 1] (no trimming, no normalisation).
* w^(k) = X^(k)T u / (2 S); Delta w; (g, h) = the two largest -Delta w (first index on
  a tie, MATLAB's ``max``/``sort``). Ties are exact in exact arithmetic (labels nobody
  answered, or only workers with u_i = 0 answered, share one Delta w) but differ by about
  1e-13 in floating point, so a plain sort broke them by round-off and the port's labels
  depended on the BLAS kernel; values within 1e-9 times the task's largest |Delta w| are
  treated as tied (``toptwo._ties.tolerant_smallest``; on the color data no gap lies
  between 1e-14 and 1e-6 of it).
* p_i = (hits_i / N_i - 2/K) / (1 - 2/K) on all responses against (g, h), clipped to
  [0.001, 0.999] (an idle worker: 0/0 = NaN, which MATLAB's min/max turn into 0.999);
  ||p|| = the norm of that clipped p.
* q_j = 1/K - Delta w_j(g_j) / ||p||, clipped to [0.501, 0.999]. Their code evaluates
  Delta w at the *true* g_j (a leak); the port uses the estimated g_j.
* TopTwo2: eq. (6) with these p and q on all responses, (a, b) maximised over a != b
  (first pair on a tie).

This file is a benchmark helper (dense: n x m arrays of the small real datasets and
n = 50, m = 500 draws), not part of the package.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toptwo import Responses
from toptwo._ties import tolerant_smallest
from toptwo.mle import estimate_reliability, plugin_mle
from toptwo.spectral import spectral_estimate

AUTHORS = dict(stage1="authors", p_clip=(0.001, 0.999), q_clip=(0.501, 0.999), norm="p_hat",
               drop_idle=False, k_max=True, fill_idle_p=0.999)
TOPTWO = dict(stage1="toptwo", p_clip=(0.05, 0.99), q_clip=(0.51, 0.99), norm="l",
              drop_idle=True, k_max=False, fill_idle_p=0.05)


def authors_stage1(f: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray, float]:
    """run_TopTwo1.m lines 1-47 on the dense worker x task array f (0 = no answer).

    Returns (top (m, 2) labels 1..K, Delta w (m, K), l of step 5 from Delta w)."""
    N, M = f.shape
    S = np.count_nonzero(f) / f.size
    us = np.zeros((K - 1, N))
    X = []
    for k in range(1, K):
        b = np.where(f == 0, 0.0, np.where(f <= k, -1.0, 1.0)) - S * (K - 2 * k) / K
        U, _, _ = np.linalg.svd(b, full_matrices=False)
        us[k - 1] = U[:, 0] if U[:, 0].sum() > 0 else -U[:, 0]
        X.append(b)
    u = np.clip(us.mean(axis=0), 0.0, 1.0)
    w = np.zeros((M, K + 1))
    for k in range(1, K):
        w[:, k] = X[k - 1].T @ u / (2 * S)
    dw = w[:, 1:] - w[:, :-1]                       # Delta w^(k) = w^(k) - w^(k-1)
    # the two smallest Delta w, the first index on a tie (in exact arithmetic)
    pick = tolerant_smallest(dw, 2, 1e-9 * np.abs(dw).max(axis=1))
    top = pick + 1
    rest = dw.sum(axis=1) - np.take_along_axis(dw, pick, axis=1).sum(axis=1)
    l = float(np.mean(K / (K - 2) * rest))
    return top, dw, l


@dataclass
class Hybrid:
    """TopTwo1/TopTwo2 with each of the authors' / toptwo's choices switchable.

    stage1: "authors" (the port above) or "toptwo" (``spectral_estimate`` with
    ``centering``, ``sign_rule``, ``left_vector``); p_clip, q_clip; norm: "p_hat" (the
    norm of the clipped p) or "l" (stage 1's l); drop_idle: fit on the active workers and
    tasks only; k_max: K = the largest label seen (else the data's n_labels);
    fill_idle_p: p of a worker without answers; stage: 1 (TopTwo1's labels) or 2.
    """

    stage1: str = "toptwo"
    p_clip: tuple = (0.05, 0.99)
    q_clip: tuple = (0.51, 0.99)
    norm: str = "l"
    drop_idle: bool = True
    k_max: bool = False
    fill_idle_p: float = 0.05
    centering: str = "observed"
    sign_rule: str = "paper"
    left_vector: str = "per_k"
    stage: int = 2

    def fit(self, A, n_labels=None):
        R = A if isinstance(A, Responses) else Responses.from_dense(np.asarray(A))
        n, m = R.shape
        K = int(R.labels.max()) if self.k_max else R.n_labels
        keep_w = np.ones(n, bool)
        keep_t = np.ones(m, bool)
        if self.drop_idle:
            keep_w = R.worker_counts() > 0
            keep_t = R.task_counts() > 0
        wmap = np.cumsum(keep_w) - 1
        tmap = np.cumsum(keep_t) - 1
        Rs = Responses(wmap[R.workers].astype(np.int32), tmap[R.tasks].astype(np.int32),
                       R.labels, shape=(int(keep_w.sum()), int(keep_t.sum())), n_labels=K)
        if self.stage1 == "authors":
            f = Rs.toarray()
            top, dw, l = authors_stage1(f, K)
            l_task = np.full(Rs.n_tasks, l)
            answered = Rs.task_counts() > 0
        else:
            res = spectral_estimate(Rs, Rs, centering=self.centering, sign_rule=self.sign_rule,
                                    left_vector=self.left_vector)
            top, dw, l_task = res.top, res.delta_v, res.l_task
            answered = np.isfinite(res.confusion_raw[:, 0]) & (top[:, 0] > 0)
        p = estimate_reliability(Rs, top, normalization="per_worker",
                                 n_responses=Rs.worker_counts())
        p = np.where(np.isnan(p), self.fill_idle_p, p)
        p = np.clip(p, *self.p_clip)
        norm = np.full(Rs.n_tasks, np.linalg.norm(p)) if self.norm == "p_hat" else l_task
        g = np.clip(top[:, 0] - 1, 0, K - 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            q = 1.0 / K - dw[np.arange(Rs.n_tasks), g] / norm
        q[~(norm > 0)] = np.nan
        seen = np.isfinite(q) & answered
        q = np.clip(q, *self.q_clip)
        fill = float(np.median(q[seen])) if seen.any() else 0.75
        q = np.where(seen, q, fill)
        out = top if self.stage == 1 else plugin_mle(Rs, p, q)
        full = np.zeros((m, 2), dtype=np.int64)
        full[keep_t] = out[:, :2]
        full[R.task_counts() == 0] = 0
        self.top_two_ = self.top_ = full
        return self
