"""The perturbation side of Algorithm 1 (Lemmas 2-3 and 5, Theorem 4, Corollary 3), measured.

E = A^(k) - E[A^(k)] is the noise of Proposition 1; Lemma 2 bounds ||E||, Lemma 3 the angle of
Algorithm 1's u^(k) to p/||p||, Lemma 5 the entrywise error of v^(k). Notebooks 02 and 03 call
:func:`binary_sample_mean`, :func:`singular_vector_errors` and :func:`first_order_sin_theta`, and
tests/test_notebook_claims.py runs the same calls over many seeds; ``theory_checks`` calls
:func:`noise_norms` and :func:`projection_errors`. Dense: teaching-sized models.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_int, check_rng
from ..metrics import sin_theta
from ..model import TopTwoModel

__all__ = ["binary_sample_mean", "singular_vector_errors", "first_order_sin_theta", "noise_norms",
           "projection_errors"]



def binary_sample_mean(model: TopTwoModel, sampling_rate: float, n_samples: int,
                       rng: Any = None) -> np.ndarray:
    """The average of A^(k) over ``n_samples`` independent draws of A (Proposition 1).

    Returns an array of shape (K - 1, n_workers, n_tasks) (dense: for teaching-sized
    models); its expectation is ``model.expected_binary(k, sampling_rate)`` for each k.
    """
    from ..binary import to_binary

    owner = "binary_sample_mean"
    T = check_int(n_samples, "n_samples", owner=owner, minimum=1)
    gen = check_rng(rng, owner=owner)
    K = model.n_labels
    mean = np.zeros((K - 1, model.n_workers, model.n_tasks))
    for _ in range(T):
        A = model.sample(sampling_rate, rng=gen)
        for k in range(1, K):
            mean[k - 1] += to_binary(A, k).toarray() / T
    return mean


def _spectral_norm(M: np.ndarray) -> float:
    """||M||_2 = sqrt(largest eigenvalue of M M^T) (cheaper than an SVD for n << m)."""
    return float(np.sqrt(np.linalg.eigvalsh(M @ M.T)[-1]))


def singular_vector_errors(model: TopTwoModel, sampling_rates: Any, n_reps: int,
                           rng: Any = None) -> np.ndarray:
    """Noise, angle and Wedin bound of Algorithm 1's u^(k) over sampling rates.

    For every rate s, ``n_reps`` draws of A and every k, one row
    ``(s, k, ||E||, sin theta, wedin)``: E = A^(k) - E[A^(k)] (the noise of Proposition
    1), sin theta the angle between TopTwo1's per-k u^(k) (``centering="paper"``,
    ``left_vector="per_k"``) and
    p/||p||_2, and Wedin's bound sqrt(2) ||X_hat - E[X]|| / (sigma_1 - ||X_hat - E[X]||)
    on it, with sigma_1 = 2 s ||p|| ||r^(k)|| (Prop. 1). Dense: teaching-sized models.
    """
    from ..binary import to_binary
    from ..spectral import TopTwo1

    owner = "singular_vector_errors"
    R = check_int(n_reps, "n_reps", owner=owner, minimum=1)
    gen = check_rng(rng, owner=owner)
    K = model.n_labels
    p_star = model.reliability / model.norm_p
    rows = []
    for s_val in np.asarray(sampling_rates, dtype=float):
        for _ in range(R):
            A_s = model.sample(s_val, rng=gen)
            est = TopTwo1(centering="paper", left_vector="per_k").fit(A_s)
            for k in range(1, K):
                Ak = to_binary(A_s, k).toarray()
                EX_k = model.expected_binary(k, s_val) - s_val * (K - 2 * k) / K
                X_hat = Ak - est.result_.s_prime_x * (K - 2 * k) / K      # what TopTwo1 decomposes
                noise = _spectral_norm(Ak - model.expected_binary(k, s_val))
                noise_hat = _spectral_norm(X_hat - EX_k)
                sigma1 = 2 * s_val * model.norm_p * np.linalg.norm(model.r(k))
                wedin = np.sqrt(2) * noise_hat / (sigma1 - noise_hat)
                rows.append((s_val, k, noise, sin_theta(est.result_.left_vectors[k - 1], p_star),
                             wedin))
    return np.array(rows)


def first_order_sin_theta(model: TopTwoModel, sampling_rates: Any) -> np.ndarray:
    """First-order prediction of sin theta(u^(k), p/||p||), averaged over k, per rate.

    sqrt(sum_ij (1 - p*_i^2) Var(A^(k)_ij) w_j^2) / sigma_1 with w = r^(k)/||r^(k)|| (the
    right singular vector of E[X^(k)]), Var(A^(k)_ij) = s - E[A^(k)_ij]^2 and
    sigma_1 = 2 s ||p|| ||r^(k)||.
    """
    K = model.n_labels
    p_star = model.reliability / model.norm_p
    out = []
    for s_val in np.asarray(sampling_rates, dtype=float):
        vals = []
        for k in range(1, K):
            var = s_val - model.expected_binary(k, s_val) ** 2       # E[(A^(k))^2] = s
            w = model.r(k) / np.linalg.norm(model.r(k))
            sigma1 = 2 * s_val * model.norm_p * np.linalg.norm(model.r(k))
            vals.append(np.sqrt(((1 - p_star ** 2)[:, None] * var * w ** 2).sum()) / sigma1)
        out.append(np.mean(vals))
    return np.array(out)


def noise_norms(model: TopTwoModel, sampling_rate: float, n_reps: int, rng: Any = None) -> np.ndarray:
    """Spectral norms of the noise E = A^(k) - E[A^(k)] (Lemma 2, Theorem 4, Corollary 3).

    For ``n_reps`` draws of A at ``sampling_rate`` and every k = 1..K-1, one row
    ``(k, ||E||, nu, sigma2)``: nu = max(largest row sum, largest column sum) of Var(E_ij)
    (Theorem 4's nu) and sigma2 = max_ij Var(E_ij) (Corollary 3's sigma^2), with
    Var(E_ij) = s - E[A^(k)_ij]^2 (A^(k)_ij is in {-1, 0, 1}). Dense: teaching-sized models.
    """
    from ..binary import to_binary

    owner = "noise_norms"
    R = check_int(n_reps, "n_reps", owner=owner, minimum=1)
    gen = check_rng(rng, owner=owner)
    s = float(sampling_rate)
    rows = []
    for _ in range(R):
        A = model.sample(s, rng=gen)
        for k in range(1, model.n_labels):
            mean = model.expected_binary(k, s)
            var = s - mean ** 2
            nu = max(var.sum(axis=1).max(), var.sum(axis=0).max())
            rows.append((k, _spectral_norm(to_binary(A, k).toarray() - mean), nu, var.max()))
    return np.array(rows)


def projection_errors(model: TopTwoModel, sampling_rate: float, n_reps: int, rng: Any = None,
                      **options: Any) -> np.ndarray:
    """Lemma 5's entrywise error and Theorem 1's q error, through Algorithm 1, per draw.

    Each of ``n_reps`` draws of A at ``sampling_rate`` is fitted with
    ``TopTwo1(sample_splitting=True, **options)`` (u~ from B, v from C, s' = s/2 each). One row
    per draw: ``(rms_v, shrink, rms_q, first_order_v)`` -- the root mean square over tasks and
    k = 1..K-1 of the noise part of v_j^(k)/||p|| - r_j^(k) (Lemma 5's first term: the error less
    its component along r, ``shrink`` = <e, r>/<r, r>, which is ||u~|| cos theta - 1, the second
    term, of order sin^2 theta); the root mean square of eq. (4)'s q_hat_j - q_j at the true g_j,
    1/K - Delta v_j^(g_j)/l (Theorem 1's q part, given the pair; the shrink cancels in the
    ratio); and the first-order
    prediction of rms_v, sqrt(mean_jk sum_i p*_i^2 Var(C_ij^(k))) / (2 s' ||p||),
    Var(C_ij^(k)) = s' - E[C_ij^(k)]^2.
    """
    from ..spectral import TopTwo1

    owner = "projection_errors"
    R = check_int(n_reps, "n_reps", owner=owner, minimum=1)
    gen = check_rng(rng, owner=owner)
    s = float(sampling_rate)
    K, P = model.n_labels, model.norm_p
    r = np.stack([model.r(k) for k in range(1, K)], axis=1)            # (m, K-1)
    p2 = (model.reliability / P) ** 2
    sp_ = s / 2
    var = np.stack([sp_ - model.expected_binary(k, sp_) ** 2 for k in range(1, K)])   # (K-1, n, m)
    first = float(np.sqrt(np.einsum("i,kij->kj", p2, var).mean()) / (2 * sp_ * P))
    rows = []
    for _ in range(R):
        est = TopTwo1(sample_splitting=True, rng=gen, **options).fit(model.sample(s, rng=gen), K)
        e = est.result_.v / P - r
        shrink = float((e * r).sum() / (r * r).sum())
        rms_v = float(np.sqrt(np.mean((e - shrink * r) ** 2)))
        dv_g = est.result_.delta_v[np.arange(model.n_tasks), model.top_two[:, 0] - 1]
        rms_q = float(np.sqrt(np.mean((1.0 / K - dv_g / est.norm_p_ - model.confusion) ** 2)))
        rows.append((rms_v, shrink, rms_q, first))
    return np.array(rows)
