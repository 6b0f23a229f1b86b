"""Training with crowd labels (Sec. 6.3): hard, top-two soft and full-distribution targets.

Sec. 6.3 of the paper trains image classifiers on CIFAR-10H with three kinds of targets
built from crowd answers: one hard label per image, the *top-two soft label* (q on g,
1 - q on h, from TopTwo2's ``soft_labels()``), and the full empirical answer
distribution. This module holds what notebook 11 needs to repeat the experiment's logic
at a scale that runs anywhere (scikit-learn's bundled 8 x 8 digits): two small models
trained by L-BFGS on soft targets (numpy and scipy only), the empirical answer
distribution, and the expected calibration error.

Every function is deterministic given its ``rng`` on one machine. The MLP's loss is not
convex: L-BFGS amplifies the last bits of the BLAS products (which differ between BLAS
kernels) into weights that differ after a hundred iterations, so its test accuracy can move
by an image or two from one CPU to another; the convex softmax regression converges to the
same optimum everywhere.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy.optimize import minimize

from ._base import ParamsBase
from ._validation import Interval, check_int
from .responses import as_responses

__all__ = ["answer_distribution", "calibration_bins", "expected_calibration_error", "SoftmaxRegression", "MLP"]


def answer_distribution(A: Any, n_labels: int | None = None) -> np.ndarray:
    """(n_tasks, K): each task's answers as a distribution (counts / answers; NaN rows
    for tasks nobody answered)."""
    R = as_responses(A, n_labels, owner="answer_distribution")
    counts = R.task_label_counts()
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, counts / np.where(total > 0, total, 1.0), np.nan)


def calibration_bins(confidence: Any, correct: Any, n_bins: int = 15
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Equal-width bins of predicted probabilities: count, mean probability, share correct.

    Parameters
    ----------
    confidence : array-like of shape (n,)
        Predicted probability that each prediction is right, in [0, 1].
    correct : array-like of shape (n,)
        Whether it was right (bool or 0/1).
    n_bins : int, default=15
        Number of bins of [0, 1]; probability 1 falls in the last bin.

    Returns
    -------
    count, mean_confidence, accuracy : ndarray of shape (n_bins,)
        Per bin; the two means are NaN for an empty bin. A reliability diagram plots
        ``accuracy`` against ``mean_confidence``.
    """
    conf = np.asarray(confidence, float)
    hit = np.asarray(correct).astype(float)
    if conf.ndim != 1 or hit.shape != conf.shape:
        raise ValueError(f"calibration_bins needs confidence and correct of one shape (n,); "
                         f"got {conf.shape} and {hit.shape}.")
    bins = check_int(n_bins, "n_bins", owner="calibration_bins", minimum=1)
    idx = np.minimum((conf * bins).astype(int), bins - 1)
    count = np.bincount(idx, minlength=bins)
    mean_conf, acc = np.full(bins, np.nan), np.full(bins, np.nan)
    for b in np.flatnonzero(count):
        sel = idx == b
        mean_conf[b], acc[b] = conf[sel].mean(), hit[sel].mean()
    return count, mean_conf, acc


def expected_calibration_error(probs: Any, y: Any, n_bins: int = 15) -> float:
    """ECE: sum over equal-width confidence bins of (share of samples) x |accuracy - mean
    confidence| (Guo et al., 2017).

    Parameters
    ----------
    probs : array-like of shape (n, K) or (n,)
        Predicted class probabilities (rows sum to 1): the confidence is the largest one,
        right when its class is ``y``. Or, 1-D, the predicted probability of an event
        (e.g. ``TopTwoEM.pair_proba_``, that the pair is right), with ``y`` saying whether
        it happened.
    y : array-like of shape (n,)
        True classes, 0..K-1 (or, with 1-D ``probs``, bool outcomes).
    n_bins : int, default=15
        Number of equal-width bins of the confidence.

    Examples
    --------
    >>> ece = expected_calibration_error([0.9, 0.9, 0.2, 0.2], [True, False, False, False])
    >>> round(ece, 3)            # |0.5 - 0.9| / 2 + |0 - 0.2| / 2
    0.3
    """
    P = np.asarray(probs, float)
    t = np.asarray(y)
    if P.ndim not in (1, 2) or t.shape != (P.shape[0],):
        raise ValueError(f"expected_calibration_error needs probs of shape (n, K) and y of "
                         f"shape (n,) (or 1-D probs of an event and its outcomes); got "
                         f"{P.shape} and {t.shape}.")
    if P.ndim == 1:
        conf, hit = P, t.astype(float)
    else:
        conf, hit = P.max(axis=1), (P.argmax(axis=1) == t).astype(float)
    count, mean_conf, acc = calibration_bins(conf, hit, n_bins)
    total = 0.0
    for b in np.flatnonzero(count):
        total += count[b] / conf.size * abs(acc[b] - mean_conf[b])
    return float(total)


def _softmax(Z: np.ndarray) -> np.ndarray:
    Z = Z - Z.max(axis=1, keepdims=True)
    E = np.exp(Z)
    return E / E.sum(axis=1, keepdims=True)


def _check_targets(X: Any, T: Any, owner: str) -> tuple[np.ndarray, np.ndarray]:
    Xa = np.asarray(X, float)
    Ta = np.asarray(T, float)
    if Xa.ndim != 2 or Ta.ndim != 2 or Xa.shape[0] != Ta.shape[0]:
        raise ValueError(f"{owner}.fit needs X of shape (n, d) and targets of shape (n, K); "
                         f"got {Xa.shape} and {Ta.shape}.")
    if not np.isfinite(Ta).all() or (Ta < 0).any() or not np.allclose(Ta.sum(axis=1), 1.0):
        raise ValueError(f"{owner}.fit needs targets that are distributions (rows >= 0 "
                         f"summing to 1, no NaN); drop the tasks nobody answered first.")
    return Xa, Ta


class SoftmaxRegression(ParamsBase):
    """Multinomial logistic regression on soft targets (cross-entropy + L2), by L-BFGS.

    Parameters
    ----------
    l2 : float, default=1e-3
        Weight (>= 0) of the L2 penalty on the weights (not on the biases).
    max_iter : int, default=200
        L-BFGS iterations (>= 1).
    rng : None, int or numpy.random.Generator
        Source of the small random initial weights.
    """

    def __init__(self, *, l2: float = 1e-3, max_iter: int = 200, rng: Any = None):
        self.l2 = l2
        self.max_iter = max_iter
        self.rng = rng

    _parameter_constraints = {
        "l2": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "rng": ["random_state"],
    }

    def _unpack(self, w: np.ndarray, d: int, K: int) -> tuple[np.ndarray, np.ndarray]:
        return w[:d * K].reshape(d, K), w[d * K:]

    def fit(self, X: Any, targets: Any) -> "SoftmaxRegression":
        """Fit on features X (n, d) and target distributions (n, K)."""
        params = self._validate_params()
        l2, gen = params["l2"], params["rng"]
        Xa, T = _check_targets(X, targets, self._name)
        n, d = Xa.shape
        K = T.shape[1]
        w0 = np.concatenate([0.01 * gen.standard_normal(d * K), np.zeros(K)])

        def loss(w):
            W, b = self._unpack(w, d, K)
            P = _softmax(Xa @ W + b)
            val = -np.sum(T * np.log(np.clip(P, 1e-300, None))) / n + 0.5 * l2 * np.sum(W * W)
            G = (P - T) / n
            return val, np.concatenate([(Xa.T @ G + l2 * W).ravel(), G.sum(axis=0)])

        res = minimize(loss, w0, jac=True, method="L-BFGS-B",
                       options={"maxiter": params["max_iter"]})
        self.coef_, self.intercept_ = self._unpack(res.x, d, K)
        self.loss_ = float(res.fun)
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, shape (n, K)."""
        return _softmax(np.asarray(X, float) @ self.coef_ + self.intercept_)


class MLP(ParamsBase):
    """One hidden layer (tanh) and a softmax output, trained on soft targets by L-BFGS.

    Parameters
    ----------
    hidden : int, default=32
        Units of the hidden layer.
    l2 : float, default=1e-3
        Weight (>= 0) of the L2 penalty on both weight matrices.
    max_iter : int, default=150
        L-BFGS iterations (>= 1).
    rng : None, int or numpy.random.Generator
        Source of the initial weights (Glorot-scaled normal).
    """

    def __init__(self, *, hidden: int = 32, l2: float = 1e-3, max_iter: int = 150,
                 rng: Any = None):
        self.hidden = hidden
        self.l2 = l2
        self.max_iter = max_iter
        self.rng = rng

    _parameter_constraints = {
        "hidden": [Interval(Integral, 1, None, closed="left")],
        "l2": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "rng": ["random_state"],
    }

    def fit(self, X: Any, targets: Any) -> "MLP":
        """Fit on features X (n, d) and target distributions (n, K)."""
        params = self._validate_params()
        H, l2, gen = params["hidden"], params["l2"], params["rng"]
        Xa, T = _check_targets(X, targets, self._name)
        n, d = Xa.shape
        K = T.shape[1]
        sizes = [(d, H), (H,), (H, K), (K,)]
        w0 = np.concatenate([gen.standard_normal(d * H) * np.sqrt(1.0 / d), np.zeros(H),
                             gen.standard_normal(H * K) * np.sqrt(1.0 / H), np.zeros(K)])

        def unpack(w):
            out, i = [], 0
            for s in sizes:
                k = int(np.prod(s))
                out.append(w[i:i + k].reshape(s))
                i += k
            return out

        def loss(w):
            W1, b1, W2, b2 = unpack(w)
            Z = np.tanh(Xa @ W1 + b1)
            P = _softmax(Z @ W2 + b2)
            val = (-np.sum(T * np.log(np.clip(P, 1e-300, None))) / n
                   + 0.5 * l2 * (np.sum(W1 * W1) + np.sum(W2 * W2)))
            G2 = (P - T) / n
            dZ = (G2 @ W2.T) * (1.0 - Z * Z)
            grads = [Xa.T @ dZ + l2 * W1, dZ.sum(axis=0), Z.T @ G2 + l2 * W2,
                     G2.sum(axis=0)]
            return val, np.concatenate([g.ravel() for g in grads])

        res = minimize(loss, w0, jac=True, method="L-BFGS-B",
                       options={"maxiter": params["max_iter"]})
        self.params_ = unpack(res.x)
        self.loss_ = float(res.fun)
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, shape (n, K)."""
        W1, b1, W2, b2 = self.params_
        return _softmax(np.tanh(np.asarray(X, float) @ W1 + b1) @ W2 + b2)
