"""Training with crowd labels (Sec. 6.3): hard, top-two soft and full-distribution targets.

Sec. 6.3 of the paper trains image classifiers on CIFAR-10H with three kinds of targets
built from crowd answers: one hard label per image, the *top-two soft label* (q on g,
1 - q on h, from TopTwo2's ``soft_labels()``), and the full empirical answer
distribution. This module holds what notebook 11 needs to repeat the experiment's logic
at a scale that runs anywhere (scikit-learn's bundled 8 x 8 digits): two small models
trained by L-BFGS on soft targets (numpy and scipy only), the empirical answer
distribution, and the expected calibration error.

It also holds the two experiments of notebook 11 as functions a test can re-run on other
seeds: :func:`digits_crowd_setup` (the digits, a held-out classifier's confusions as h_j)
and :func:`corrupted_label_experiment`, Appendix B.4's corrupted-label experiment
(Table 5 [`tab:corrupt_CIFAR10`]): spammer answers are added by :func:`add_spammers`
at the paper's ratios (eq. (25)) and the same corrupted answers feed every kind of target.

Every function is deterministic given its ``rng`` on one machine. The MLP's loss is not
convex: L-BFGS amplifies the last bits of the BLAS products (which differ between BLAS
kernels) into weights that differ after a hundred iterations, so its test accuracy can move
by an image or two from one CPU to another; the convex softmax regression converges to the
same optimum everywhere.
"""

from __future__ import annotations

import json
from numbers import Integral, Real
from typing import Any, Callable

import numpy as np
from scipy.optimize import minimize

from ._base import ParamsBase
from ._validation import Interval, check_int
from .responses import Responses, as_responses

__all__ = ["answer_distribution", "calibration_bins", "expected_calibration_error",
           "SoftmaxRegression", "MLP", "add_spammers", "digits_crowd_setup",
           "corrupted_label_experiment", "CORRUPTION_TARGETS", "SPAMMER_RATIOS", "merge_runs",
           "paired_ci"]


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


# ------------------------------------------------------------- corrupted labels (App. B.4)
#: The spammer ratios of Table 5 [`tab:corrupt_CIFAR10`].
SPAMMER_RATIOS = (0.1, 0.2, 0.3, 0.4, 0.5)
#: The kinds of target compared by :func:`corrupted_label_experiment`, all built from the
#: same (corrupted) answers: an equal annotation budget.
CORRUPTION_TARGETS = ("hard (MV)", "top-two (TopTwo2)", "top-two (TopTwoEM)", "full")


def add_spammers(A: Any, ratio: float, rng: Any = None, n_labels: int | None = None
                 ) -> Responses:
    """A plus spammer answers, as in Appendix B.4 (eq. (25)).

    The number of added answers is ``round(ratio / (1 - ratio) * N)`` for the N answers of
    A, so that a fraction ``ratio`` of all answers comes from spammers. They come from
    ``ceil(ratio / (1 - ratio) * n)`` new workers (rows appended after A's n workers: a
    spammer answers about as many tasks as a worker of A), each answer a label drawn
    uniformly from 1..K on a (spammer, task) pair drawn uniformly without replacement.

    Parameters
    ----------
    A : array-like, sparse matrix or Responses
        The original answers.
    ratio : float in [0, 1)
        The spammer ratio: the share of the returned answers that are random.
    rng : None, int or numpy.random.Generator
        Source of the spammers' (worker, task) pairs and labels.
    n_labels : int, optional
        K (default: inferred from A).
    """
    from ._validation import check_rng

    owner = "add_spammers"
    R = as_responses(A, n_labels, owner=owner)
    if isinstance(ratio, bool) or not isinstance(ratio, Real) or not 0 <= ratio < 1:
        raise ValueError(f"The 'ratio' parameter of {owner} must be a float in [0, 1); "
                         f"got {ratio!r} instead.")
    gen = check_rng(rng, owner=owner)
    n, m, K = R.n_workers, R.n_tasks, R.n_labels
    factor = float(ratio) / (1.0 - float(ratio))
    added = int(round(factor * R.nnz))                        # eq. (25)
    n_spam = int(np.ceil(factor * n)) if added else 0
    # added = round(f N) <= ceil(f n m) <= ceil(f n) m: the pairs always suffice.
    cells = gen.choice(n_spam * m, size=added, replace=False) if added else np.zeros(0, int)
    workers = np.concatenate([R.workers, n + cells // m]).astype(R.workers.dtype)
    tasks = np.concatenate([R.tasks, cells % m]).astype(R.tasks.dtype)
    labels = np.concatenate([R.labels, gen.integers(1, K + 1, size=added)]).astype(
        R.labels.dtype)
    return Responses.from_triples(workers, tasks, labels, n_workers=n + n_spam, n_tasks=m,
                                  n_labels=K)


def digits_crowd_setup(split_seed: int = 0) -> dict[str, np.ndarray]:
    """Notebook 11's set-up: scikit-learn's 8 x 8 digits and a confusion structure.

    The images (pixels / 16) are split by ``default_rng(split_seed)`` into 500 held-out,
    800 training and 497 test images. A softmax regression (``l2=1e-2``) trained on the
    held-out images gives every training image its most probable *wrong* class, h_j; g_j
    is the true digit. Returns a dict with ``X``, ``y``, ``held``, ``train``, ``test``
    (index arrays) and ``h`` (0-based, one per training image).
    """
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    K = 10
    perm = np.random.default_rng(split_seed).permutation(len(y))
    held, train, test = perm[:500], perm[500:1300], perm[1300:]
    clf = SoftmaxRegression(l2=1e-2, rng=0).fit(X[held], np.eye(K)[y[held]])
    P = clf.predict_proba(X[train])
    P[np.arange(train.size), y[train]] = -1.0
    return {"X": X, "y": y, "held": held, "train": train, "test": test,
            "h": P.argmax(axis=1)}


def _targets(A: Any, K: int, seed_seq: list[int], kinds: tuple[str, ...]) -> dict:
    from .baselines import MajorityVote
    from .extensions.em import TopTwoEM
    from .mle import TopTwo2

    out = {}
    for kind in kinds:
        rng = np.random.default_rng(seed_seq + [11])
        if kind == "hard (MV)":
            top = MajorityVote(rng=rng).fit(A, n_labels=K).top_two_[:, 0]
            T = np.full((top.size, K), np.nan)
            T[top > 0] = np.eye(K)[top[top > 0] - 1]
        elif kind == "top-two (TopTwo2)":
            # the paper's Algorithm 2 (eq. (5) as printed), as in the stored runs
            T = TopTwo2(reliability_estimator="moment", rng=rng).fit(A, n_labels=K).soft_labels()
        elif kind == "top-two (TopTwoEM)":
            T = TopTwoEM(rng=rng).fit(A, n_labels=K).soft_labels()
        elif kind == "full":
            T = answer_distribution(A, K)
        else:
            raise ValueError(f"unknown target {kind!r}; allowed: {CORRUPTION_TARGETS}.")
        out[kind] = T
    return out


def corrupted_label_experiment(*, ratios: Any = SPAMMER_RATIOS, replicates: int = 10,
                               first_replicate: int = 0, seed: int = 0,
                               models: Any = ("softmax regression",),
                               targets: Any = CORRUPTION_TARGETS, n_workers: int = 30,
                               sampling_rate: float = 0.2, setup: dict | None = None
                               ) -> dict[str, Any]:
    """Appendix B.4's experiment on the digits: targets from spammer-corrupted answers.

    For every replicate r a crowd of the top-two model (eq. (1)) answers the 800 training
    images of :func:`digits_crowd_setup` (``n_workers`` workers, p_i ~ U(0.3, 0.9),
    q_j ~ U(0.55, 0.95), (g_j, h_j) = (true digit, held-out classifier's confusion),
    sampling rate ``sampling_rate``): the crowd of notebook 11's Sec. 6.3 cells. For every
    spammer ratio, :func:`add_spammers` adds random answers (eq. (25)), and each kind of
    target is built from the same corrupted answers (an equal budget): the majority-vote
    hard label, the top-two soft label of TopTwo2 and of TopTwoEM (q_hat on g_hat,
    1 - q_hat on h_hat; TopTwoEM's from its posterior mode and posterior mean of q), and
    the full empirical answer distribution. Each model is trained on each target (images
    nobody answered left out) and scored on the 497 test images.

    Seeding: replicate r's crowd comes from ``default_rng([seed, r])``, its spammers at
    ratio x from ``default_rng([seed, r, round(100 x)])``, estimators and model weights
    from fixed streams of ``[seed, r, round(100 x)]``; so a replicate's numbers do not
    depend on which other replicates or ratios are run (a reduced run repeats a subset).

    Returns
    -------
    dict
        ``config``; ``accuracy[model][target][str(ratio)]``: list of test accuracies, one
        per replicate; ``label_accuracy[target][str(ratio)]``: share of the answered
        training images whose target's largest entry is the true digit (ties: smallest
        label); ``true_mass[target][str(ratio)]``: mean target mass on the true digit.
    """
    makers: dict[str, Callable[[Any], SoftmaxRegression | MLP]] = {
        "softmax regression": lambda r: SoftmaxRegression(rng=r),
        "MLP": lambda r: MLP(rng=r, max_iter=400)}
    owner = "corrupted_label_experiment"
    models = tuple(models)
    targets = tuple(targets)
    for name in models:
        if name not in makers:
            raise ValueError(f"{owner}: unknown model {name!r}; allowed: {tuple(makers)}.")
    for name in targets:
        if name not in CORRUPTION_TARGETS:
            raise ValueError(f"{owner}: unknown target {name!r}; allowed: "
                             f"{CORRUPTION_TARGETS}.")
    reps = check_int(replicates, "replicates", owner=owner, minimum=1)
    first = check_int(first_replicate, "first_replicate", owner=owner, minimum=0)
    base = check_int(seed, "seed", owner=owner, minimum=0)
    ratio_list = [float(x) for x in ratios]
    for x in ratio_list:
        if not 0 <= x < 1:
            raise ValueError(f"{owner}: every ratio must be in [0, 1); got {x!r}.")
    S = digits_crowd_setup() if setup is None else setup
    X, y, train, test, h = S["X"], S["y"], S["train"], S["test"], S["h"]
    K = 10
    from .model import TopTwoModel

    acc: dict[str, dict[str, dict[str, list[float]]]] = {
        mn: {tn: {str(x): [] for x in ratio_list} for tn in targets} for mn in models}
    lab: dict[str, dict[str, list[float]]] = {tn: {str(x): [] for x in ratio_list}
                                              for tn in targets}
    mass: dict[str, dict[str, list[float]]] = {tn: {str(x): [] for x in ratio_list}
                                               for tn in targets}
    for r in range(first, first + reps):
        g = np.random.default_rng([base, r])
        p = g.uniform(0.3, 0.9, n_workers)
        q = g.uniform(0.55, 0.95, train.size)
        crowd = TopTwoModel(p, q, np.column_stack([y[train] + 1, h + 1]), K)
        A = crowd.sample(sampling_rate, rng=g)
        for x in ratio_list:
            key = [base, r, int(round(100 * x))]
            Ax = add_spammers(A, x, rng=np.random.default_rng(key), n_labels=K)
            ok = Ax.task_counts() > 0
            T = _targets(Ax, K, key, targets)
            for tn in targets:
                Tt = T[tn][ok]
                lab[tn][str(x)].append(float((Tt.argmax(axis=1) == y[train][ok]).mean()))
                mass[tn][str(x)].append(float(Tt[np.arange(Tt.shape[0]), y[train][ok]].mean()))
                for mn in models:
                    fit = makers[mn](np.random.default_rng(key + [7])).fit(X[train][ok], Tt)
                    hit = fit.predict_proba(X[test]).argmax(axis=1) == y[test]
                    acc[mn][tn][str(x)].append(float(hit.mean()))
    return {"config": {"ratios": ratio_list, "replicates": reps, "first_replicate": first,
                       "seed": base, "models": list(models), "targets": list(targets),
                       "n_workers": n_workers, "sampling_rate": sampling_rate,
                       "n_train": int(train.size), "n_test": int(test.size)},
            "accuracy": acc, "label_accuracy": lab, "true_mass": mass}


def merge_runs(runs: Any) -> dict[str, Any]:
    """One result of :func:`corrupted_label_experiment` from runs over consecutive
    replicate ranges (same seed, ratios, models and targets), in replicate order."""
    runs = sorted(runs, key=lambda run: run["config"]["first_replicate"])
    out = json.loads(json.dumps(runs[0]))
    for run in runs[1:]:
        c, o = run["config"], out["config"]
        same = all(c[k] == o[k] for k in ("ratios", "seed", "models", "targets", "n_workers",
                                           "sampling_rate"))
        if not same or c["first_replicate"] != o["first_replicate"] + o["replicates"]:
            raise ValueError("merge_runs: the runs are not consecutive replicate ranges of "
                             "one configuration.")
        o["replicates"] += c["replicates"]
        for mn, d in run["accuracy"].items():
            for tn, dd in d.items():
                for x, v in dd.items():
                    out["accuracy"][mn][tn][x] += v
        for part in ("label_accuracy", "true_mass"):
            for tn, dd in run[part].items():
                for x, v in dd.items():
                    out[part][tn][x] += v
    return out


def paired_ci(a: Any, b: Any, level: float = 0.95) -> tuple[float, float]:
    """Mean of the paired differences a - b and the half-width of its t interval."""
    from scipy import stats

    d = np.asarray(a, float) - np.asarray(b, float)
    if d.ndim != 1 or d.size < 2:
        raise ValueError(f"paired_ci needs two equal-length 1-d samples of at least 2 "
                         f"values; got shapes {np.shape(a)} and {np.shape(b)}.")
    hw = stats.t.ppf(0.5 + level / 2, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size)
    return float(d.mean()), float(hw)
