r"""Algorithms 1 and 2 of Jeong & Chung (ICML 2023) as printed: dense NumPy, the paper's symbols.

``A`` is a dense (n workers x m tasks) array, labels 1..K, 0 = not answered; every worker
and task has a response and the worker-task graph is connected. The options are the
paper's choices and the package's deviations (design notes), so each configuration of
TopTwo1/TopTwo2 has its twin here; ``tests/test_reference.py`` checks they agree.
"""

from types import SimpleNamespace

import numpy as np

TIE = 1e-9  # values this close are equal up to round-off: the tie goes to the smaller label


def split(A, s_1, rng):
    """A^1 = A o S and A^2 = A o (1 - S) with S_ij ~ Bernoulli(s_1) i.i.d. (Alg. 2 step 1)."""
    S = np.zeros(A.shape, dtype=bool)
    S[A > 0] = rng.random(np.count_nonzero(A)) < s_1   # one draw per observed entry
    return A * S, A * ~S


def binary(A, k):
    """A^(k): -1 where 1 <= A_ij <= k, +1 where A_ij > k, 0 where unanswered (Sec. 3)."""
    return np.where(A > k, 1.0, -1.0) * (A > 0)


def centred(M, k, K, centering):
    """X^(k) = M^(k) - s'(K-2k)/K 1 (Sec. 4.1); "observed": - (K-2k)/K on answered entries."""
    s_prime = np.mean(M > 0)                             # s', estimated from M
    shift = s_prime if centering == "paper" else (M > 0)
    return binary(M, k) - shift * (K - 2 * k) / K, s_prime


def leading_left_vector(X, sign_rule="paper"):
    """u: leading left singular vector of X, sign fixed (Alg. 1 step 2, Sec. 4.1)."""
    u = np.linalg.svd(X, full_matrices=False)[0][:, 0]
    u[np.abs(u) <= 1e-8] = 0.0                           # round-off zeros are zeros
    n_pos, n_neg, total = np.sum(u > 0), np.sum(u < 0), u.sum()
    total = total if abs(total) > 1e-8 * u.size else 0.0
    if (sign_rule == "sum" and total != 0) or n_pos == n_neg:
        return np.sign(total) * u                        # positive sum (0: sign unknown)
    return u if n_pos > n_neg else -u                    # at least half the entries > 0


def smallest_two(delta_v):
    """Eq. (3): g = argmin_k Delta v^(k), h = argmin_{k != g} (0-based; ties: smaller k)."""
    d = delta_v.copy()
    g = np.argmax(d <= d.min(axis=1, keepdims=True) + TIE, axis=1)
    d[np.arange(len(d)), g] = np.inf
    h = np.argmax(d <= d.min(axis=1, keepdims=True) + TIE, axis=1)
    return g, h


def pooled_left_vector(Xs, sign_rule, left_vector):
    """One vector for every k: "stacked", u of [X^(1) ... X^(K-1)]; "averaged", the mean of
    the sign-fixed u^(k); then projected onto u >= 0 (clip at 0: p >= 0)."""
    if left_vector == "stacked":
        u = leading_left_vector(np.hstack(Xs), sign_rule)
    else:
        u = np.mean([leading_left_vector(X, sign_rule) for X in Xs], axis=0)
        u[np.abs(u) <= 1e-8] = 0.0
    return np.maximum(u, 0.0)


def algorithm1(A1, n_labels, eta=0.1, rng=None, *, sample_splitting=True,
               centering="paper", sign_rule="paper", left_vector="per_k"):
    """Algorithm 1 (TopTwo1) on A^1: ``top_two`` (labels 1..K; 0 = no data in C), ``q_hat``.

    ``sample_splitting=False`` uses A^1 for both B and C; ``centering="observed"`` and
    ``sign_rule="sum"`` are the package's options (see :class:`toptwo.TopTwo1`), and so is
    ``left_vector`` "stacked" / "averaged" (one left vector for every k).
    """
    K, (n, m) = n_labels, A1.shape
    rng = np.random.default_rng(rng)
    B, C = split(A1, 0.5, rng) if sample_splitting else (A1, A1)         # step 1
    u, u_tilde, v = np.zeros((K + 1, n)), np.zeros((K + 1, n)), np.zeros((m, K + 1))
    if left_vector != "per_k":                           # step 2, pooled over k
        u[1:K] = pooled_left_vector([centred(B, k, K, centering)[0] for k in range(1, K)],
                                    sign_rule, left_vector)
    for k in range(1, K):                                # v^(0) = v^(K) = 0
        X, _ = centred(B, k, K, centering)
        Y, s_prime = centred(C, k, K, centering)
        if left_vector == "per_k":
            u[k] = leading_left_vector(X, sign_rule)                       # step 2
        u_tilde[k] = np.where(u[k] > 2 / (eta * np.sqrt(n)), 0.0, u[k])    # step 2: trim
        v[:, k] = Y.T @ u_tilde[k] / s_prime                               # step 3
    delta_v = np.diff(v, axis=1)              # step 4: Delta v^(k) = v^(k) - v^(k-1), k in [K]
    g, h = smallest_two(delta_v)                                           # eq. (3)
    j = np.arange(m)
    l_j = K / (K - 2) * (delta_v.sum(axis=1) - delta_v[j, g] - delta_v[j, h])  # step 5: k != g, h
    seen = (C > 0).any(axis=0)                           # tasks with data in C
    l = l_j[seen].mean()                                                   # step 5
    q_hat = np.where(seen, 1 / K - delta_v[j, g] / l, np.nan)              # eq. (4)
    top_two = np.where(seen[:, None], np.column_stack([g, h]) + 1, 0)
    return SimpleNamespace(top_two=top_two, q_hat=q_hat, u=u[1:K], u_tilde=u_tilde[1:K],
                           v=v[:, 1:K], delta_v=delta_v, l=l, C=C)


def plugin_mle(A, p, q, n_labels):
    """Eq. (6): the pair a != b maximising the plug-in log-likelihood (ties: smallest (a, b))."""
    K, m = n_labels, A.shape[1]
    w = K * p[:, None] / (1 - p[:, None])
    log_a, log_b = np.log1p(w * q), np.log1p(w * (1 - q))  # log(K p_i q_j/(1 - p_i) + 1), ...
    top_two = np.zeros((m, 2), dtype=int)
    for j in np.flatnonzero((A > 0).any(axis=0)):
        S_a = np.array([log_a[A[:, j] == a, j].sum() for a in range(1, K + 1)])
        S_b = np.array([log_b[A[:, j] == b, j].sum() for b in range(1, K + 1)])
        score = S_a[:, None] + S_b[None, :]
        np.fill_diagonal(score, -np.inf)                 # a != b
        a, b = divmod(np.argmax(score >= score.max() - TIE), K)
        top_two[j] = a + 1, b + 1
    return top_two


def oracle_mle(A, p, q, n_labels):
    """Eq. (6) with the true (p, q): the paper's oracle MLE (p_i = 1 kept finite)."""
    return plugin_mle(A, np.minimum(p, 1 - 1e-9), q, n_labels)


def leave_one_out_reliability(A2, C, stage1, n_labels, centering, in_stage1):
    """Step 3 beyond the paper: eq. (5) with each answer scored against the pair stage 1
    gives its task without that worker's answers, and the chance c_ij (eq. (4) summed over
    that pair, clipped to [2/K, 1]) that a top-two answer lands in it in place of 1."""
    K, (n, m) = n_labels, A2.shape
    num, den = np.zeros(n), np.zeros(n)
    for i in range(n):
        C_i = C.copy()
        if in_stage1:
            C_i[i] = 0                                   # C without worker i's answers
        v = np.zeros((m, K + 1))
        for k in range(1, K):                            # step 3 with C_i, the same u~, s'
            entry = binary(C_i, k) - (C_i > 0) * (K - 2 * k) / K * (centering == "observed")
            shift = np.mean(C > 0) * (K - 2 * k) / K * (centering == "paper")
            v[:, k] = (entry - shift).T @ stage1.u_tilde[k - 1] / np.mean(C > 0)
        delta_v = np.diff(v, axis=1)                                       # step 4
        g, h = smallest_two(delta_v)                                       # eq. (3)
        j = np.arange(m)
        c = np.clip(2 / K - (delta_v[j, g] + delta_v[j, h]) / stage1.l, 2 / K, 1)  # eq. (4)
        use = (A2[i] > 0) & (stage1.top_two[:, 0] > 0) & (C_i > 0).any(axis=0)
        hit = (A2[i] == g + 1) | (A2[i] == h + 1)
        num[i] = np.sum(hit[use] - 2 / K)
        den[i] = np.sum(c[use] - 2 / K)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, np.clip(num / den, -2 / (K - 2), 1), np.nan)  # eq. (5)'s range


def algorithm2(A, n_labels, s_1=0.5, eta=0.1, rng=None, *, sample_splitting=True,
               centering="paper", sign_rule="paper", normalization="paper",
               p_range=(0.05, 0.99), q_range=(0.51, 0.99), left_vector="per_k",
               reliability="moment"):
    """Algorithm 2 (TopTwo2): ``top_two`` by eq. (6), ``q_hat`` (eq. (4) at g), ``p_hat`` (5).

    ``normalization="per_worker"`` divides eq. (5) by each worker's own answers;
    ``reliability="leave_one_out"`` is the package's default step 3
    (:func:`leave_one_out_reliability`); ``p_range``, ``q_range`` clip p_hat, q_hat
    before eq. (6) (None: as printed).
    """
    K, (n, m) = n_labels, A.shape
    rng = np.random.default_rng(rng)
    A1, A2 = split(A, s_1, rng) if sample_splitting else (A, A)            # step 1
    stage1 = algorithm1(A1, K, eta, rng, sample_splitting=sample_splitting,
                        centering=centering, sign_rule=sign_rule,
                        left_vector=left_vector)                            # step 2
    g, h = stage1.top_two.T
    hit = (A2 > 0) & ((A2 == g) | (A2 == h))             # 1(A2_ij = g_j or h_j)
    if normalization == "paper":
        N = np.count_nonzero(A2) / n                     # m s (1 - s_1), estimated
    else:
        N = np.sum((A2 > 0) & (g > 0), axis=1)           # worker i's answers in A^2
    with np.errstate(invalid="ignore", divide="ignore"):
        p_hat = K / (K - 2) * (hit.sum(axis=1) / N - 2 / K)                # eq. (5), step 3
    if reliability == "leave_one_out":
        C = A1 if not sample_splitting else stage1.C
        p_hat = leave_one_out_reliability(A2, C, stage1, K, centering, not sample_splitting)
    p = p_hat if p_range is None else np.clip(np.nan_to_num(p_hat, nan=p_range[0]), *p_range)
    q = stage1.q_hat.copy() if q_range is None else np.clip(stage1.q_hat, *q_range)
    q[np.isnan(q)] = np.median(q[~np.isnan(q)])          # tasks stage 1 could not see
    top_two = plugin_mle(A, p, q, K)                                       # eq. (6), step 4
    g_mle = np.maximum(top_two[:, 0] - 1, 0)
    q_hat = np.where(np.isnan(stage1.q_hat), np.nan,
                     1 / K - stage1.delta_v[np.arange(m), g_mle] / stage1.l)  # eq. (4) at g
    return SimpleNamespace(top_two=top_two, q_hat=q_hat, p_hat=p_hat, stage1=stage1)
