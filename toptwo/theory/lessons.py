"""The Monte-Carlo experiments of lessons 10 and 11, as library functions.

A notebook cell calls one of these on its seeds; ``tests/test_lesson_sweeps.py`` calls the same
function on other seed blocks (the seed sweep), checks that the notebook's claim holds there and
that a wrong claim is rejected. Each claim's false-alarm rate -- the probability that a re-run
on fresh seeds fails the check although the claim holds -- comes from
:func:`toptwo.experiments.t_claim` (a t interval over seeds, at the measured effect) or
:func:`toptwo.experiments.estimate_claim` (a point estimate against a bound).

* :func:`em_paired_gaps` -- notebook 10, Sec. 2: TopTwoEM against TopTwo2 on one cell, paired.
* :func:`em_calibration` -- notebook 10, Sec. 3: ``pair_proba_`` and whether each pair is right.
* :func:`labelling_curve`, :func:`adaptive_labelling` -- notebook 10, Sec. 4.
* :func:`soft_label_experiment` -- notebook 11, Sec. 1: classifiers trained on three kinds of
  crowd targets (digits).
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

__all__ = ["em_paired_gaps", "em_calibration", "labelling_curve", "adaptive_labelling",
           "soft_label_experiment", "SOFT_TARGETS", "SOFT_MODELS", "notebook10_claims", "notebook11_claims",
           "family_false_alarm", "bootstrap_sem", "format_rate", "rate_bin", "check_claims", "topt_summary",
           "notebook09_claims", "TOPT_RATES"]


def _seeds(seeds: Iterable[int], owner: str) -> list[int]:
    out = [int(s) for s in seeds]
    if not out:
        raise ValueError(f"{owner}: `seeds` is empty; give at least one seed.")
    return out


def em_paired_gaps(seeds: Iterable[int], *, scenario: str = "few_smart", sampling_rate: float = 0.1,
                   n_workers: int = 50, n_tasks: int = 500, n_labels: int = 5) -> dict[str, np.ndarray]:
    """Pair error minus the oracle MLE's, for TopTwo2 and TopTwoEM, one instance per seed.

    Per seed: ``TopTwoModel.scenario(scenario, ..., rng=seed)``, A drawn at ``sampling_rate``
    with ``rng=seed + 100``; the oracle is ``OracleMLE`` with the true p, q; TopTwo2 with the
    package defaults, ``TopTwoEM(rng=0)``. Returns ``{"TopTwo2": gaps, "TopTwoEM": gaps}``
    (arrays over seeds; the claim of notebook 10 is on TopTwoEM - TopTwo2).
    """
    import toptwo

    gaps: dict[str, list[float]] = {"TopTwo2": [], "TopTwoEM": []}
    for seed in _seeds(seeds, "em_paired_gaps"):
        model = toptwo.TopTwoModel.scenario(scenario, n_workers=n_workers, n_tasks=n_tasks, n_labels=n_labels,
                                            rng=seed)
        A = model.sample(sampling_rate, rng=seed + 100)
        oracle = toptwo.OracleMLE(model.reliability, model.confusion).fit(A)
        eo = toptwo.top_two_errors(oracle.top_two_, model.top_two)["pair"]
        for name, est in (("TopTwo2", toptwo.TopTwo2(reliability_estimator="moment")),   # EM's start
                          ("TopTwoEM", toptwo.TopTwoEM(rng=0))):
            gaps[name].append(toptwo.top_two_errors(est.fit(A).top_two_, model.top_two)["pair"] - eo)
    return {k: np.array(v) for k, v in gaps.items()}


def em_calibration(seeds: Iterable[int], confusion: str = "grid", *, scenario: str = "hard",
                   sampling_rate: float = 0.2, n_workers: int = 50, n_tasks: int = 500,
                   n_labels: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """TopTwoEM's ``pair_proba_`` and whether each chosen pair is right, pooled over seeds.

    Per seed: ``TopTwoModel.scenario(scenario, ..., rng=seed)``, A at ``sampling_rate`` with
    ``rng=seed + 200``, ``TopTwoEM(confusion=confusion, rng=0)``. Returns (probabilities,
    right as 0/1 floats), both of length len(seeds) * n_tasks, for
    :func:`toptwo.softlabels.expected_calibration_error`.
    """
    import toptwo

    P, OK = [], []
    for seed in _seeds(seeds, "em_calibration"):
        model = toptwo.TopTwoModel.scenario(scenario, n_workers=n_workers, n_tasks=n_tasks, n_labels=n_labels,
                                            rng=seed)
        A = model.sample(sampling_rate, rng=seed + 200)
        em = toptwo.TopTwoEM(confusion=confusion, rng=0).fit(A)
        P.append(em.pair_proba_)
        OK.append(np.all(em.top_two_ == model.top_two, axis=1))
    return np.concatenate(P), np.concatenate(OK).astype(float)


def labelling_curve(model: Any, R0: Any, policy: str, rounds: int = 8, batch: int = 250,
                    seed: int = 0) -> np.ndarray:
    """TopTwoEM's pair error after each round of ``batch`` more answers (``rounds + 1`` values).

    ``policy="adaptive"`` sends the round's answers to the ``batch`` least certain tasks
    (``TopTwoEM.uncertain_tasks``), ``"uniform"`` to ``batch`` tasks drawn without replacement
    (``default_rng(seed)``); ``TopTwoModel.add_answers`` draws the answers.
    """
    import toptwo

    if policy not in ("adaptive", "uniform"):
        raise ValueError(f"labelling_curve: `policy` must be 'adaptive' or 'uniform'; got {policy!r} instead.")
    rng = np.random.default_rng(seed)
    R, curve = R0, []
    for _ in range(rounds + 1):
        em = toptwo.TopTwoEM(rng=0).fit(R)
        curve.append(toptwo.top_two_errors(em.top_two_, model.top_two)["pair"])
        if len(curve) > rounds:
            break
        tasks = em.uncertain_tasks(batch) if policy == "adaptive" else rng.choice(model.n_tasks, batch, replace=False)
        R = model.add_answers(R, np.asarray(tasks), rng=rng)
    return np.array(curve)


def adaptive_labelling(seeds: Iterable[int], *, scenario: str = "hard", start_rate: float = 0.04,
                       rounds: int = 8, batch: int = 250, n_workers: int = 50, n_tasks: int = 500,
                       n_labels: int = 5) -> dict[str, np.ndarray]:
    """:func:`labelling_curve` for both policies, one instance per seed (notebook 10, Sec. 4).

    Per seed: ``TopTwoModel.scenario(scenario, ..., rng=seed)``, the first answers at
    ``start_rate`` with ``rng=seed + 10``, the curves with ``seed=seed + 100``. Returns
    ``{"uniform": (len(seeds), rounds + 1), "adaptive": ...}``.
    """
    import toptwo

    curves: dict[str, list[np.ndarray]] = {"uniform": [], "adaptive": []}
    for seed in _seeds(seeds, "adaptive_labelling"):
        model = toptwo.TopTwoModel.scenario(scenario, n_workers=n_workers, n_tasks=n_tasks, n_labels=n_labels,
                                            rng=seed)
        R0 = model.sample(start_rate, rng=seed + 10)
        for policy in curves:
            curves[policy].append(labelling_curve(model, R0, policy, rounds, batch, seed=seed + 100))
    return {k: np.array(v) for k, v in curves.items()}


#: The three kinds of target of notebook 11, Sec. 1.
SOFT_TARGETS = ("hard (MV)", "top-two soft (TopTwo2)", "full distribution")
#: The two classifiers of notebook 11, Sec. 1.
SOFT_MODELS = ("softmax regression", "MLP")


def soft_label_experiment(seeds: Iterable[int], *, setup: dict[str, np.ndarray] | None = None,
                          models: tuple[str, ...] = SOFT_MODELS, mlp_seeds: int | None = None,
                          n_workers: int = 30, sampling_rate: float = 0.2) -> dict[tuple[str, str], np.ndarray]:
    """Test accuracy and ECE of classifiers trained on crowd targets (notebook 11, Sec. 1).

    ``setup`` is :func:`toptwo.softlabels.digits_crowd_setup` (computed when None). Per seed a
    crowd of the top-two model on the training images (p_i ~ U(0.3, 0.9) for ``n_workers``
    workers, q_j ~ U(0.55, 0.95), (g_j, h_j) = (true digit, most confused wrong class), all from
    ``default_rng(seed)``) answers at ``sampling_rate``; images nobody labelled are left out.
    The targets: majority-vote one-hot labels, TopTwo2's ``soft_labels()``, the empirical answer
    distribution. The classifiers: ``SoftmaxRegression(rng=seed)``, ``MLP(rng=seed,
    max_iter=400)``, fitted with one BLAS thread. Returns ``{(model, target): array of shape
    (len(seeds), 2)}`` with columns (test accuracy, expected calibration error). With
    ``mlp_seeds`` the MLP (the slow model) runs on the first ``mlp_seeds`` seeds only.
    """
    from threadpoolctl import threadpool_limits

    import toptwo
    from toptwo.softlabels import (MLP, SoftmaxRegression, answer_distribution, digits_crowd_setup,
                                   expected_calibration_error)

    makers: dict[str, Any] = {"softmax regression": lambda seed: SoftmaxRegression(rng=seed),
              "MLP": lambda seed: MLP(rng=seed, max_iter=400)}
    bad = [m for m in models if m not in makers]
    if bad:
        raise ValueError(f"soft_label_experiment: unknown model {bad[0]!r}; allowed: {sorted(makers)}.")
    seeds = _seeds(seeds, "soft_label_experiment")
    st = digits_crowd_setup() if setup is None else setup
    X, y, train, test, h = st["X"], st["y"], st["train"], st["test"], st["h"]
    K = 10
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with threadpool_limits(limits=1):
        for seed in seeds:
            g = np.random.default_rng(seed)
            p = g.uniform(0.3, 0.9, n_workers)
            q = g.uniform(0.55, 0.95, train.size)
            crowd = toptwo.TopTwoModel(p, q, np.column_stack([y[train] + 1, h + 1]), K)
            A = crowd.sample(sampling_rate, rng=g)
            ok = A.task_counts() > 0
            targets = {
                "hard (MV)": np.eye(K)[toptwo.MajorityVote(rng=seed).fit(A, n_labels=K).top_two_[:, 0] - 1],
                "top-two soft (TopTwo2)": toptwo.TopTwo2(reliability_estimator="moment", rng=seed
                                                         ).fit(A, n_labels=K).soft_labels(),
                "full distribution": answer_distribution(A, K),
            }
            for mname in models:
                if mname == "MLP" and mlp_seeds is not None and seed not in seeds[:mlp_seeds]:
                    continue
                for tname in SOFT_TARGETS:
                    fitted = makers[mname](seed).fit(X[train][ok], targets[tname][ok])
                    Pt = fitted.predict_proba(X[test])
                    results.setdefault((mname, tname), []).append(
                        (float((Pt.argmax(axis=1) == y[test]).mean()), float(expected_calibration_error(Pt, y[test]))))
    return {k: np.array(v) for k, v in results.items()}


# ------------------------------------------------------------------ the lessons' claims
# Each returns {name: record}; a record is the output of t_claim / estimate_claim plus ``text``
# (the claim in words) and ``bound``. The notebook asserts ``holds`` for each and prints the
# false-alarm rates; the seed sweep asserts the same on other seeds.

def _rec(text: str, bound: float, res: dict[str, Any], side: str) -> dict[str, Any]:
    return {"text": text, "bound": float(bound), "side": side, **res}


def check_claims(claims: dict[str, dict[str, Any]]) -> None:
    """Assert every claim (``toptwo.report.claim``: a ClaimFailed naming the claim, the t
    interval's end or the estimate, and the bound)."""
    from ..report import claim

    for c in claims.values():
        claim(c["limit"] if "limit" in c else c["estimate"], c["side"], c["bound"], why=c["text"])


def rate_bin(p: float, edges: tuple[float, ...] = (0.05, 0.5)) -> str:
    """A false-alarm rate as the smallest "< edge" it satisfies (">= last edge" otherwise): for
    results that move in the last digits with the BLAS kernel (the MLP of notebook 11)."""
    for e in edges:
        if p < e:
            return f"< {e:g}"
    return f">= {edges[-1]:g}"


def bootstrap_sem(statistic: Any, *arrays: np.ndarray, n_boot: int = 200, rng: Any = 0) -> float:
    """Bootstrap standard error of ``statistic(*arrays)``, resampling the rows of all arrays
    together (``default_rng(rng)``; deterministic for a fixed ``rng``)."""
    gen = np.random.default_rng(rng)
    n = len(arrays[0])
    vals = [statistic(*(a[idx] for a in arrays)) for idx in (gen.integers(0, n, n) for _ in range(n_boot))]
    return float(np.std(vals, ddof=1))


def notebook10_claims(gaps: dict[str, np.ndarray], calib: dict[str, tuple[np.ndarray, np.ndarray]],
                      curves: dict[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    """Notebook 10's Monte-Carlo claims, from :func:`em_paired_gaps`, :func:`em_calibration`
    (``{"grid": ..., "map": ...}``) and :func:`adaptive_labelling`.

    * ``em_below_toptwo2``: mean of TopTwoEM - TopTwo2 gaps < 0, whole 95% t interval below 0;
    * ``ece_grid``: ECE (10 bins) of the grid posterior <= 0.04 (bootstrap s.e. over tasks);
    * ``ece_map_worse``: ECE(map) - ECE(grid) > 0 (bootstrap s.e. of the paired difference);
    * ``adaptive_below_uniform``: final pair error adaptive - uniform < 0, 95% t interval below 0.
    """
    from ..experiments.stats import estimate_claim, t_claim
    from ..softlabels import expected_calibration_error

    def ece(prob: np.ndarray, ok: np.ndarray) -> float:
        return expected_calibration_error(prob, ok, n_bins=10)

    (pg, og), (pm, om) = calib["grid"], calib["map"]
    e_grid, e_map = ece(pg, og), ece(pm, om)
    se_grid = bootstrap_sem(ece, pg, og)
    se_diff = bootstrap_sem(lambda a, b, c, d: ece(c, d) - ece(a, b), pg, og, pm, om)
    final = curves["adaptive"][:, -1] - curves["uniform"][:, -1]
    return {
        "em_below_toptwo2": _rec("TopTwoEM's gap below TopTwo2's (paired 95% t interval < 0)", 0.0,
                                  t_claim(gaps["TopTwoEM"] - gaps["TopTwo2"], "<", 0.0), "<"),
        "ece_grid": _rec("ECE of the grid posterior <= 0.04", 0.04, estimate_claim(e_grid, se_grid, "<", 0.04), "<"),
        "ece_map_worse": _rec("ECE(map) - ECE(grid) > 0", 0.0, estimate_claim(e_map - e_grid, se_diff, ">", 0.0), ">"),
        "adaptive_below_uniform": _rec("adaptive labelling below uniform at the end (paired 95% t interval < 0)",
                                       0.0, t_claim(final, "<", 0.0), "<"),
    }


def notebook11_claims(R: dict[tuple[str, str], np.ndarray]) -> dict[str, dict[str, Any]]:
    """Notebook 11's Sec. 1 claims from :func:`soft_label_experiment` (paired over seeds;
    column 0 test accuracy, column 1 ECE). Point-estimate claims use the t interval's s.e."""
    from ..experiments.stats import estimate_claim, t_claim

    S, M = "softmax regression", "MLP"
    T2, HARD, FULL = SOFT_TARGETS[1], SOFT_TARGETS[0], SOFT_TARGETS[2]

    def d(model: str, a: str, b: str, col: int) -> np.ndarray:
        return R[(model, a)][:, col] - R[(model, b)][:, col]

    def sem(x: np.ndarray) -> float:
        return float(x.std(ddof=1) / np.sqrt(x.size))

    near = d(S, T2, FULL, 0)
    mlp = d(M, T2, HARD, 0)
    out = {
        "softmax_soft_above_hard": _rec("softmax: top-two soft beats hard labels (accuracy, 95% t interval above 0)",
                                        0.0, t_claim(d(S, T2, HARD, 0), ">", 0.0), ">"),
        "softmax_soft_near_full": _rec("softmax: |top-two soft - full| < 0.01 (accuracy)", 0.01,
                                       estimate_claim(abs(float(near.mean())), sem(near), "<", 0.01), "<"),
        "softmax_ece_up": _rec("softmax: soft targets raise the ECE (95% t interval above 0)", 0.0,
                               t_claim(d(S, T2, HARD, 1), ">", 0.0), ">"),
    }
    if (M, T2) in R:
        out |= {
            # on average only (measured +0.007 to +0.034 over four blocks of ten seeds; > 0.01 failed on one)
            "mlp_soft_above_hard": _rec("MLP: top-two soft above hard on average", 0.0,
                                        estimate_claim(float(mlp.mean()), sem(mlp), ">", 0.0), ">"),
            "mlp_full_above_soft": _rec("MLP: full - top-two soft > 0.03 (95% t interval)", 0.03,
                                        t_claim(d(M, FULL, T2, 0), ">", 0.03), ">"),
            "mlp_ece_up": _rec("MLP: soft targets raise the ECE by > 0.05 (95% t interval)", 0.05,
                               t_claim(d(M, T2, HARD, 1), ">", 0.05), ">"),
        }
    return out


def family_false_alarm(claims: dict[str, dict[str, Any]]) -> float:
    """Bonferroni bound on the family-wise false-alarm rate: the sum of the claims' rates (<= 1)."""
    return float(min(1.0, sum(c["false_alarm"] for c in claims.values())))


def format_rate(p: float) -> str:
    """A false-alarm rate for printing: one significant digit, "< 1e-6" below that (so the
    printed text does not depend on round-off in the last digits)."""
    p = float(p)
    return "< 1e-6" if p < 1e-6 else f"{p:.1g}"


# ------------------------------------------------------------------ notebook 09: the top-T run
#: The sampling rates, replicates and seed of the stored top-T run (``reproduce_topt.json``).
TOPT_RATES = (0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0)


def topt_summary(seed: int, replicates: int = 20, rates: tuple[float, ...] = TOPT_RATES,
                 key: tuple[int, ...] = (500,)) -> dict[str, dict[str, dict[str, np.ndarray]]]:
    """The top-T experiment of ``benchmarks/reproduce_paper.py --part topt`` on another seed.

    ``TopTwoModel.random(50, 500, 5, n_top=3)`` per replicate; MV, TopTwo1, TopTwo2 and the
    oracle with ``n_top=3`` (``toptwo.experiments.paper.method_factories``); ``replicates``
    per sampling rate (``toptwo.experiments.sweep``, seeded by ``seed`` and ``key``). Returns
    ``{metric: toptwo.experiments.aggregate(...)}`` for the metrics :func:`notebook09_claims`
    reads, the form of ``toptwo.paper.load("reproduce_topt").summary(metric)``.
    """
    import toptwo
    from .. import experiments as ex

    factory = lambda g: toptwo.TopTwoModel.random(50, 500, 5, n_top=3, rng=g)  # noqa: E731
    methods = ex.paper.method_factories(["MV", "TopTwo1", "TopTwo2", "Oracle"], n_top=3)
    recs = ex.sweep(factory, methods, rates, replicates, seed=seed, key=list(key))
    return {metric: {str(k): v for k, v in ex.aggregate(recs, metric).items()}
            for metric in ("err_ordered", "err_set", "mse_q")}


def notebook09_claims(S: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Notebook 09's claims on the top-T run (the stored one or :func:`topt_summary`).

    Each is a point estimate against a bound (``estimate_claim``) with the standard error of
    the means over replicates (``sem``; a difference of two means: their root sum of squares,
    unpaired, so the false-alarm rate is overestimated for paired methods): the ordered-triple
    error of TopTwo1, TopTwo2 and the oracle falls at every step of the grid, and TopTwo1's q_hat
    MSE; at s = 1 TopTwo2 is within [0, 0.01) of the oracle and MV more than 0.08 above it,
    TopTwo1's MSE below half of MV's; at the smallest s MV within 0.02 of TopTwo2 and below
    TopTwo1; the oracle's ordered error at s = 1 above 0.5 and its set error below 0.32.
    (Measured on seeds 1-7 under the pooled default stage 1: MV - TopTwo2 at the smallest s is
    0.001-0.013, so the earlier bound 0.01 failed on 3 of 7 seeds; the oracle's set error is
    0.283-0.299, so 0.3 would fail often.)
    """
    from ..experiments.stats import estimate_claim

    def arr(metric: str, m: str, key: str) -> np.ndarray:
        return np.asarray(S[metric][m][key], float)

    def diff(metric: str, a: str, b: str, i: int) -> tuple[float, float]:
        return (float(arr(metric, a, "mean")[i] - arr(metric, b, "mean")[i]),
                float(np.hypot(arr(metric, a, "sem")[i], arr(metric, b, "sem")[i])))

    out: dict[str, dict[str, Any]] = {}
    for metric, ms in (("err_ordered", ("TopTwo1", "TopTwo2", "Oracle")), ("mse_q", ("TopTwo1",))):
        for m in ms:
            mean, sem = arr(metric, m, "mean"), arr(metric, m, "sem")
            for i in range(mean.size - 1):
                out[f"{metric} {m} falls {i}"] = _rec(
                    f"{m}: {metric} falls from step {i} to {i + 1}", 0.0,
                    estimate_claim(mean[i + 1] - mean[i], float(np.hypot(sem[i], sem[i + 1])), "<", 0.0), "<")
    g, se = diff("err_ordered", "TopTwo2", "Oracle", -1)
    out["TopTwo2 >= oracle"] = _rec("s = 1: TopTwo2 - oracle >= 0", 0.0, estimate_claim(g, se, ">", -1e-12), ">")
    out["TopTwo2 near oracle"] = _rec("s = 1: TopTwo2 - oracle < 0.01", 0.01, estimate_claim(g, se, "<", 0.01), "<")
    g, se = diff("err_ordered", "MV", "Oracle", -1)
    out["MV above oracle"] = _rec("s = 1: MV - oracle > 0.08", 0.08, estimate_claim(g, se, ">", 0.08), ">")
    t1, mv = arr("mse_q", "TopTwo1", "mean")[-1], arr("mse_q", "MV", "mean")[-1]
    se = float(np.hypot(arr("mse_q", "TopTwo1", "sem")[-1], 0.5 * arr("mse_q", "MV", "sem")[-1]))
    out["MSE below half MV"] = _rec("s = 1: TopTwo1's q MSE below half of MV's", 0.0,
                                    estimate_claim(0.5 * mv - t1, se, ">", 0.0), ">")
    g, se = diff("err_ordered", "MV", "TopTwo2", 0)
    out["MV near TopTwo2 at small s"] = _rec("smallest s: |MV - TopTwo2| < 0.02", 0.02,
                                             estimate_claim(abs(g), se, "<", 0.02), "<")
    g, se = diff("err_ordered", "TopTwo1", "MV", 0)
    out["MV below TopTwo1 at small s"] = _rec("smallest s: MV below TopTwo1", 0.0, estimate_claim(g, se, ">", 0.0), ">")
    o, so = arr("err_ordered", "Oracle", "mean")[-1], arr("err_ordered", "Oracle", "sem")[-1]
    out["oracle ordered hard"] = _rec("s = 1: the oracle's ordered error > 0.5", 0.5,
                                      estimate_claim(o, so, ">", 0.5), ">")
    o, so = arr("err_set", "Oracle", "mean")[-1], arr("err_set", "Oracle", "sem")[-1]
    out["oracle set easy"] = _rec("s = 1: the oracle's set error < 0.32", 0.32, estimate_claim(o, so, "<", 0.32), "<")
    return out
