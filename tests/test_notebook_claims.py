"""Seed sweep of the lessons' statistical claims (notebooks 02, 03, 04 and 05).

A notebook asserts its claims on one seed. Each claim here is the same computation as the
notebook's cell (the same library call where the notebook makes one: notebook 02's
``theory.binary_sample_mean``, notebook 03's ``theory.singular_vector_errors`` and
``theory.first_order_sin_theta``, notebook 04's ``experiments.paired_tolerance``), re-run on
seeds 0-19 with the notebook's tolerance: a claim must hold for
every seed (its tolerance is derived from the sampling noise, so a failure on some seed
would mean a tolerance that is too tight or a claim that is false). Where a claim has a
designed false-alarm rate (notebook 02's Hoeffding tolerance: at most delta = 1e-3 per run,
so at most 2 % over 20 seeds) the test says so.

Reduced to keep the suite short (all of this file runs in about two minutes on one core):
notebook 03 draws 2 samples per sampling rate instead of 6 (noisier, so a stricter test of
the noise-derived tolerances); notebook 05's three slowest claims (Sec. 2's slopes, Sec. 5's
probability statements, Sec. 6's minimax curve; 4-5 s per seed) run on seeds 0-4, or on
0-19 with ``TOPTWO_FULL_SWEEP=1`` (done when they were written: every seed passed).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import toptwo
from toptwo import experiments as ex
from toptwo import theory
from toptwo.model import kl_divergence_bar
from toptwo.theory import fit_loglog_slope


def RAW_Q(est, model):
    """Score q_hat before its clip to [1/2, 1] (eq. (4) as printed)."""
    return ex.score_top_two(est, model, confusion_attr="confusion_raw_")

SEEDS = range(20)
HEAVY_SEEDS = range(20) if os.environ.get("TOPTWO_FULL_SWEEP") else range(5)
K = 5


def _instance(seed: int, s: float = 0.3):
    """Notebook 04's instance: n = 100, m = 500, K = 5, p ~ U[0, 1], q ~ U(1/2, 1]."""
    model = toptwo.TopTwoModel.random(100, 500, 5, rng=seed)
    return model, model.sample(s, rng=seed + 1)


#: 2 sd of a paired difference of error rates (they differ only where the pairs do): the
#: function notebook 04 calls
_paired_tol = ex.paired_tolerance


@pytest.mark.slow
@pytest.mark.parametrize("s", [0.1, 0.3])
def test_notebook04_mle_refines_stage1_every_seed(s):
    fails = []
    for seed in SEEDS:
        model, A = _instance(seed, s)
        t1 = toptwo.TopTwo1().fit(A)
        t2 = toptwo.TopTwo2().fit(A)
        e1 = toptwo.top_two_errors(t1.top_two_, model.top_two)["pair"]
        e2 = toptwo.top_two_errors(t2.top_two_, model.top_two)["pair"]
        if not e2 <= e1 + _paired_tol(t2.top_two_, t1.top_two_):
            fails.append((seed, e1, e2))
    assert not fails, f"TopTwo2 worse than stage 1 beyond the paired noise on {fails}"


@pytest.mark.slow
@pytest.mark.parametrize("s", [0.1, 0.3])
def test_notebook04_toptwo2_within_noise_of_oracle_every_seed(s):
    fails = []
    for seed in SEEDS:
        model, A = _instance(seed, s)
        t2 = toptwo.TopTwo2().fit(A)
        oracle = toptwo.OracleMLE(model.reliability, model.confusion).fit(A)
        mv = toptwo.baselines.MajorityVote(rng=3).fit(A)
        e2, eo, emv = (toptwo.top_two_errors(e.top_two_, model.top_two)["pair"]
                       for e in (t2, oracle, mv))
        if not (e2 - eo <= 0.01 + _paired_tol(t2.top_two_, oracle.top_two_) and e2 < emv):
            fails.append((seed, round(e2, 3), round(eo, 3), round(emv, 3)))
    assert not fails, f"TopTwo2 not within 0.01 + 2 sd of the oracle (or not below MV): {fails}"


@pytest.mark.slow
def test_the_paired_tolerance_rejects_a_worse_method():
    # negative twin: the same test flags majority vote against the oracle at s = 0.3. Its
    # power, not 1: MV's true gap (about 0.1) is twice the tolerance (about 0.055), but its
    # measured gap is noisy too. Measured: flagged on 19 of seeds 0-19 (seed 1 under the
    # order-invariant tie rule: gap 0.052 against 0.056); the floor 17/20 leaves room for
    # two more misses on other BLAS kernels or tie rules while rejecting a test without power.
    flagged, missed = 0, []
    for seed in SEEDS:
        model, A = _instance(seed)
        mv = toptwo.baselines.MajorityVote(rng=3).fit(A)
        oracle = toptwo.OracleMLE(model.reliability, model.confusion).fit(A)
        emv, eo = (toptwo.top_two_errors(e.top_two_, model.top_two)["pair"] for e in (mv, oracle))
        hit = emv - eo > 0.01 + _paired_tol(mv.top_two_, oracle.top_two_)
        flagged += hit
        if not hit:
            missed.append((seed, round(emv - eo, 3)))
    assert flagged >= 17, f"the paired test flagged MV on {flagged}/20 seeds (< 17); missed {missed}"


# ---------------------------------------------------------------- notebook 02 (Proposition 1)

def _nb02_claims(seed: int) -> list[str]:
    """Cells 17-21: the sample mean of A^(k) against eq. (1)'s expectation, and its rank."""
    K4 = 4
    model = toptwo.TopTwoModel.random(n_workers=30, n_tasks=40, n_labels=K4, rng=seed)
    s_rate, T, delta = 0.6, 400, 1e-3
    mean = theory.binary_sample_mean(model, s_rate, T, rng=seed + 1000)   # the notebook's call
    expected = np.stack([model.expected_binary(k, s_rate) for k in range(1, K4)])
    t_hoeff = np.sqrt(2 * np.log(2 * expected.size / delta) / T)
    fails = []
    if not np.abs(mean - expected).max() <= t_hoeff:
        fails.append(f"Hoeffding: {np.abs(mean - expected).max():.3f} > {t_hoeff:.3f}")
    wrong = np.stack([s_rate * (K4 - 2 * k) / K4 + s_rate * np.outer(model.reliability, model.r(k))
                      for k in range(1, K4)])
    if not np.abs(mean - wrong).max() > t_hoeff:
        fails.append("the wrong formula (factor 2 dropped) is not rejected")
    noise = (np.sqrt(model.n_workers) + np.sqrt(model.n_tasks)) * np.sqrt(s_rate / T)
    for k in range(1, K4):
        sv = np.linalg.svd(mean[k - 1] - s_rate * (K4 - 2 * k) / K4, compute_uv=False)
        if not sv[1] <= 1.2 * noise:
            fails.append(f"k={k}: sigma_2 = {sv[1]:.3f} > 1.2 x {noise:.3f}")
        if K4 != 2 * k and not np.linalg.svd(mean[k - 1], compute_uv=False)[1] > 5 * noise:
            fails.append(f"k={k}: uncentred sigma_2 not above 5 x noise")
    return fails


@pytest.mark.slow
def test_notebook02_sample_mean_claims_every_seed():
    # the Hoeffding tolerance has a designed false-alarm rate <= 1e-3 per seed (union bound),
    # so 20 seeds fail by chance with probability <= 2 %; the other two claims have wide margins
    fails = {seed: f for seed in SEEDS if (f := _nb02_claims(seed))}
    assert not fails, f"notebook 02 claims fail for {fails}"


# ---------------------------------------------------------------- notebook 03 (rank-one structure)

def _nb03_claims(seed: int, n_rep: int = 2) -> list[str]:  # noqa: C901 (one notebook section, kept in order)
    """Cells 8-19: ||E|| against sqrt(s max(m, n)) and the sharp scale, Wedin, the angle's rate.

    The instance is the notebook's (rng=41; the first-order slope -0.58 is a property of it:
    other draws of p give -0.570 to -0.576); the samples vary with ``seed``.
    """
    K4 = 4
    model = toptwo.TopTwoModel.random(n_workers=150, n_tasks=1500, n_labels=K4,
                                      reliability_range=(0.7, 1.0), rng=41)   # the notebook's instance
    n, m = model.n_workers, model.n_tasks
    s_grid = np.geomspace(0.1, 0.5, 5)
    rng = np.random.default_rng(seed + 1000)
    rows = theory.singular_vector_errors(model, s_grid, n_rep, rng=rng)   # the notebook's call
    fails = []
    ratio = rows[:, 2] / np.sqrt(rows[:, 0] * max(m, n))
    if not ratio.max() / ratio.min() < 1.2:
        fails.append(f"||E|| / sqrt(s max(m,n)) not flat: {ratio.max() / ratio.min():.3f}")
    sig = []
    for s_val, k, *_ in rows:
        var = s_val - model.expected_binary(int(k), s_val) ** 2
        sig.append((np.sqrt(var.sum(axis=1).max()), np.sqrt(var.sum(axis=0).max())))
    sig = np.array(sig)
    rel = rows[:, 2] / sig.sum(axis=1)
    if not (np.all(rows[:, 2] >= sig.max(axis=1)) and 0.9 <= rel.min() and rel.max() <= 1.05):
        fails.append(f"sharp scale: rel in [{rel.min():.3f}, {rel.max():.3f}]")
    wrong_ratio = rows[:, 2] / (rows[:, 0] * max(m, n))
    if not wrong_ratio.max() / wrong_ratio.min() >= 1.2:
        fails.append("the wrong scale s max(m,n) is not rejected")
    if not np.all(rows[:, 3] <= rows[:, 4]):
        fails.append("Wedin bound violated")
    mean_sin = np.array([rows[rows[:, 0] == s_val, 3].mean() for s_val in s_grid])
    slope, _ = fit_loglog_slope(s_grid, mean_sin)
    if not ((mean_sin * np.sqrt(s_grid * n)).max() < 1.0 and abs(slope + 0.5) <= 0.2 and abs(slope + 1) > 0.2):
        fails.append(f"angle: slope {slope:.2f}")
    first = theory.first_order_sin_theta(model, s_grid)                   # the notebook's call
    excess = mean_sin / first
    slope_1st, _ = fit_loglog_slope(s_grid, first)
    se_rel = np.array([rows[rows[:, 0] == s_val, 3].std(ddof=1) / np.sqrt(np.sum(rows[:, 0] == s_val))
                       for s_val in s_grid]) / first
    if not abs(slope_1st + 0.58) < 0.01:
        fails.append(f"first-order slope {slope_1st:.3f}")
    if not (np.all((excess > 1 - 3 * se_rel) & (excess < 1.25)) and excess[-1] < excess[0]):
        fails.append(f"excess {np.round(excess, 3)} vs floor {np.round(1 - 3 * se_rel, 3)}")
    # cells 17-19: TopTwo1 at s = 0.2
    A = model.sample(0.2, rng=rng)
    est = toptwo.TopTwo1(centering="paper").fit(A)
    errors = toptwo.top_two_errors(est.top_two_, model.top_two)
    wrong_g = est.top_two_[:, 0] != model.top_two[:, 0]
    margin = 2 * model.confusion - 1
    if not errors["g"] <= 0.15:
        fails.append(f"g error {errors['g']:.3f} > 0.15")
    if wrong_g.any() and not np.median(margin[wrong_g]) < 0.5 * np.median(margin):
        fails.append("the wrong g are not concentrated on small 2q - 1")
    return fails


@pytest.mark.slow
def test_notebook03_noise_and_angle_claims_every_seed():
    fails = {seed: f for seed in SEEDS if (f := _nb03_claims(seed))}
    assert not fails, f"notebook 03 claims fail for {fails}"


# ---------------------------------------------------------------- notebook 05 (sample complexity)
# "Sec. N" is a section of the former single lesson 05, now three lessons: Sec. 1-2 are lesson
# 05, Sec. 3, 5 (every pair) and 6 lesson 05b, Sec. 4, 5 (Theorem 1, Lemma 1) and 8 lesson 05c.

METHODS = {
    "TopTwo1": lambda mo: toptwo.TopTwo1(),
    "TopTwo2": lambda mo: toptwo.TopTwo2(),
    "majority vote": lambda mo, rng: toptwo.baselines.MajorityVote(rng=rng),
    "oracle MLE": lambda mo: toptwo.OracleMLE(mo.reliability, mo.confusion),
}


def _nb05_section1(seed):
    n, m, alpha, R1 = 50, 300, 0.3, 5
    def crowd(g):
        return toptwo.TopTwoModel.spammer_hammer(n, m, K, hammer_fraction=alpha, confusion_range=(0.9, 1.0), rng=g)
    ns_grid = np.array([1, 2, 3, 4, 6, 8, 11, 15, 20, 27, 35], dtype=float)
    err_g = ex.aggregate(ex.sweep(crowd, METHODS, ns_grid / n, R1, seed=seed), "err_g")
    bound = theory.minimax_lower_bound_g(K, alpha, ns_grid, n_workers=n)
    floor = theory.spammer_hammer_error_g(K, round(alpha * n), ns_grid / n)
    fails = []
    for name, sm in err_g.items():
        for b in (bound, floor):
            mc = 3 * np.maximum(sm["sem"], np.sqrt(b * (1 - b) / (m * R1)))
            if not np.all(sm["mean"] + mc >= b):
                fails.append(f"{name} below the bound")
    ratios = {}
    for eps in (0.1, 0.05, 0.02):
        ns_lb = np.log((K - 1) / (K * eps)) / (2 * alpha)
        ratios[eps] = {k: ex.queries_needed(sm["x"], sm["mean"], eps) / ns_lb for k, sm in err_g.items()}
    log2 = np.log((K - 1) / (K * 0.02)) / np.log((K - 1) / (K * 0.1))
    for name in ("TopTwo2", "oracle MLE"):
        g = ratios[0.02][name] / ratios[0.1][name]
        if not g < np.sqrt(log2):       # a log^2(1/eps) rate would give log2 = 1.77
            fails.append(f"{name}: ratio growth {g:.2f}")
        if any(ratios[e][name] < 1 for e in ratios):
            fails.append(f"{name}: ratio below 1")
    return fails


def _nb05_section2(seed):
    n2, m2, R2, eps2 = 300, 200, 3, 0.1
    alphas = np.array([0.1, 0.14, 0.2, 0.28])
    spectral = {k: METHODS[k] for k in ("TopTwo1", "TopTwo2", "oracle MLE")}   # the package defaults, as the notebook
    voting = {"majority vote": METHODS["majority vote"]}
    needed = {k: [] for k in [*spectral, *voting]}
    for i, a in enumerate(alphas):
        def crowd(g, a=a):
            return toptwo.TopTwoModel.spammer_hammer(n2, m2, K, hammer_fraction=a, confusion_range=(0.9, 1.0), rng=g)
        rec = ex.sweep(crowd, spectral, np.geomspace(2, 12, 6) / a / n2, R2, seed=seed, key=(i,))
        rec += ex.sweep(crowd, voting, np.geomspace(0.5, 2.5, 6) / a**2 / n2, R2, seed=seed, key=(100 + i,))
        for name, sm in ex.aggregate(rec, "err_g").items():
            needed[name].append(ex.queries_needed(sm["x"], sm["mean"], eps2))
    slopes = {k: fit_loglog_slope(alphas, np.array(v))[0] for k, v in needed.items()}
    fails = [f"{k}: slope {slopes[k]:.2f}" for k in ("TopTwo1", "TopTwo2", "oracle MLE") if not abs(slopes[k] + 1) <= 0.3]
    if not abs(slopes["majority vote"] + 2) <= 0.4:
        fails.append(f"MV slope {slopes['majority vote']:.2f}")
    if not slopes["majority vote"] <= max(slopes["TopTwo1"], slopes["TopTwo2"]) - 0.5:
        fails.append("MV not steeper by 0.5")
    return fails


def _nb05_section3(seed):
    n3, m3 = 100, 300
    base = toptwo.TopTwoModel.random(n3, m3, K, reliability_range=(0.2, 0.9), rng=3)   # the notebook's instance
    inst = toptwo.TopTwoModel(base.reliability, np.full(m3, 0.7), base.top_two, K)
    D_bar = kl_divergence_bar(inst)
    x_grid = np.array([1 / 16, 1 / 8, 1 / 4, 1 / 2, 1, 2, 4, 8, 14])
    pm = {k: METHODS[k] for k in ("TopTwo2", "majority vote", "oracle MLE")}
    err = ex.aggregate(ex.sweep(inst, pm, x_grid / (n3 * D_bar), 4, seed=seed), "err_pair", x="sampling_rate")
    le_cam = 0.5 - np.sqrt(x_grid / 8)
    below = x_grid <= 0.25
    fails = []
    for name, sm in err.items():
        slack = 3 * np.maximum(sm["sem"], np.sqrt(0.25 / (m3 * 4)))
        if not np.all(sm["mean"][below] + slack[below] >= le_cam[below]):
            fails.append(f"{name} below Le Cam")
        if not np.all(sm["mean"][below] > 0.8):
            fails.append(f"{name}: error below threshold {np.round(sm['mean'][below], 3)}")
        if not np.all(np.diff(sm["mean"]) < 3 * sm["sem"][1:] + 0.01):
            fails.append(f"{name}: not decreasing")
    for name in ("TopTwo2", "oracle MLE"):
        if not err[name]["mean"][-1] <= 0.03:
            fails.append(f"{name}: {err[name]['mean'][-1]:.3f} > 0.03 at x = 14")
    o, t2, mv = (err[k]["mean"] for k in ("oracle MLE", "TopTwo2", "majority vote"))
    STUDY.setdefault("section3", []).append(float((mv - t2)[x_grid == 0.5][0]))
    above = (x_grid >= 2) & (x_grid <= 8)
    if not (np.all(o <= t2 + 0.01) and np.all(np.abs(mv - t2) <= 0.08) and np.mean((mv - t2)[above]) > 0):
        fails.append(f"oracle/TopTwo2/MV: max o-t2 {np.max(o - t2):.3f}, mv-t2 in [{np.min(mv - t2):.3f}, "
                     f"{np.max(mv - t2):.3f}], mean over s n D = 2..8 {np.mean((mv - t2)[above]):.3f}")
    return fails


def _nb05_section4(seed):
    n4, m4 = 200, 200
    inst4 = toptwo.TopTwoModel.random(n4, m4, K, reliability_range=(0.3, 1.0), confusion_range=(0.6, 0.9), rng=4)   # the notebook's instance
    s_grid = np.geomspace(0.1, 1.0, 6)
    qm = {"split": lambda mo, rng: toptwo.TopTwo1(sample_splitting=True, centering="paper", left_vector="per_k", rng=rng),
          "full": lambda mo: toptwo.TopTwo1()}
    rec4 = ex.sweep(inst4, qm, s_grid, 3, seed=seed, score=RAW_Q)
    x4 = s_grid * inst4.norm_p ** 2
    fails = []
    for metric in ("max_abs_q_ok", "mean_abs_q_ok"):
        agg = ex.aggregate(rec4, metric, x="sampling_rate")
        sl = {k: fit_loglog_slope(x4, v["mean"])[0] for k, v in agg.items()}
        STUDY.setdefault(f"section4 {metric}", []).append(float(sl["split"]))
        if not abs(sl["split"] + 0.5) <= (0.28 if metric == "max_abs_q_ok" else 0.15):
            fails.append(f"{metric} split slope {sl['split']:.2f}")
        if not sl["full"] < -0.55:
            fails.append(f"{metric} full slope {sl['full']:.2f}")
    full = ex.aggregate(rec4, "mean_abs_q_ok", x="sampling_rate")
    if not np.all(full["full"]["mean"] < full["split"]["mean"]):
        fails.append(f"full not below split: {np.round(full['full']['mean'], 3)} vs {np.round(full['split']['mean'], 3)}")
    return fails


def _nb05_section5(seed):
    fails = []
    rows = theory.theorem1_decay(n_workers=400, n_tasks=300, reliability_ranges=((0.1, 0.5), (0.5, 1.0)),
                                 confusions=(0.75,), x_grid=(0.5, 1.0, 1.5, 2.0), n_reps=2, rng=seed)
    (b1, e1), (b2, e2) = [(r["slope"], r["slope_se"]) for r in rows]
    if not (b1 - 2 * e1 > 0 and b2 - 2 * e2 > 0):
        fails.append("thm1: no decay")
    if not abs(b1 - b2) <= 3 * np.hypot(e1, e2) + 0.15 * max(b1, b2):
        fails.append(f"thm1: rates {b1:.2f} vs {b2:.2f}")
    w1, w2 = (np.sqrt(r["norm_p2"]) for r in rows)
    if not abs(b1 * w1 - b2 * w2) > 3 * np.hypot(e1 * w1, e2 * w2) + 0.15 * max(b1 * w1, b2 * w2):
        fails.append("thm1: twin not rejected")
    lem = theory.lemma1_tail(n_workers=50, n_tasks=2000, rate=0.5, deltas=(0.1, 0.15, 0.2, 0.25, 0.3), n_reps=100, rng=seed)
    if not (np.all(lem["sup_ci"][0] <= lem["bound_sup"]) and np.all(lem["worker_ci"][0] <= lem["bound_worker"])):
        fails.append("lemma1 bound violated")
    if not lem["worker_ci"][0][0] > lem["bound_worker"][0] / 100:
        fails.append("lemma1 tail too small")
    ev = theory.every_task_recovery(n_workers=150, n_tasks_list=(20, 400), x_grid=tuple(range(2, 24, 2)), n_reps=20, rng=seed)
    if not abs(ev["measured_shift"] - ev["predicted_shift"]) <= 0.35 * ev["predicted_shift"]:
        fails.append(f"every-task shift {ev['measured_shift']:.2f} vs {ev['predicted_shift']:.2f}")
    return fails


def _nb05_section6(seed):
    mm = theory.minimax_sample_complexity(x_grid=(0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.5, 7.0, 9.0, 12.0, 16.0, 20.0), n_reps=3, rng=seed)
    return [f"{k}: {m}" for k, (ok, m) in theory.scaling_checks({"minimax_curve": mm}).items() if not ok]


def _nb05_section8(seed):
    fr = (1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05)
    sr = theory.sign_rule_flips(hammer_fractions=fr, n_reps=15, rng=seed)
    curve = {"hammer_fractions": list(fr), "n_reps": 15, "n_labels": 5,
             "settings": {"n100_ns20": {"n_workers": 100, "queries_per_task": 20,
                                        **{r: {"flipped": sr[r]["flipped"], "ci": list(sr[r]["ci"]), "err_g": sr[r]["err_g"]}
                                           for r in ("paper", "sum")}}}}
    return [f"{k}: {m}" for k, (ok, m) in theory.scaling_checks({"sign_rule_curve": curve}).items() if not ok]




#: Per-seed statistics the notebook's text quotes (filled by the section functions).
STUDY: dict[str, list[float]] = {}

#: What docs/lessons_checked.md says of them, over seeds 0-19: (mean, sd) as printed there, and the
#: largest deviation of the measured mean (about 2 standard errors of a mean over 20 seeds,
#: sd / sqrt(20)) and of the measured sd (about 30 %: the sd of a sample sd over 20 draws is
#: sd / sqrt(38) ~ 16 %, doubled).
STUDY_TEXT = {
    "section3": ((-0.016, 0.015), 0.007),                      # MV - TopTwo2 at s n D-bar = 1/2 (pooled stage 1)
    "section4 max_abs_q_ok": ((-0.55, 0.07), 0.035),           # Cor. 1 sup-norm slope
    "section4 mean_abs_q_ok": ((-0.51, 0.024), 0.012),         # Cor. 1 mean-error slope
}


def _check_study(section: str) -> list[str]:
    out = []
    for key, ((mean, sd), tol) in STUDY_TEXT.items():
        if key.split()[0] != section:
            continue
        vals = np.asarray(STUDY[key][-len(SEEDS):])
        m, d = float(vals.mean()), float(vals.std(ddof=1))
        if not (abs(m - mean) <= tol and 0.7 * sd <= d <= 1.3 * sd):
            out.append(f"{key}: mean {m:.4f} (text {mean}), sd {d:.4f} (text {sd})")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("section", ["section1", "section3", "section4"])
def test_notebook05_claims_every_seed(section):
    fn = globals()[f"_nb05_{section}"]
    fails = {seed: f for seed in SEEDS if (f := fn(seed))}
    assert not fails, f"notebook 05 {section} fails for {fails}"
    # the numbers the notebook's text gives for this seed study (they set its tolerances)
    if len(SEEDS) == 20:
        assert not (bad := _check_study(section)), f"notebook 05 {section}: {bad}"


@pytest.mark.slow
def test_notebook05_sign_rule_claims_every_seed():
    # Sec. 8: the deterministic-looking claims (no flips with <= 40 % spammers, flips at 95 %, the
    # sum rule never significantly worse) must hold for every seed. The binomial-model check has a
    # designed family-wise false-alarm rate of 5 % per seed (Bonferroni over 9 points): if the model
    # were exact, 4 or more of 20 seeds would fail with probability 1.6 % (binomial), so at most 3 may.
    model_fails, other = [], {}
    for seed in SEEDS:
        f = _nb05_section8(seed)
        model_fails += [seed] if any(x.startswith("sign rule flip rate = binomial model") for x in f) else []
        if rest := [x for x in f if not x.startswith("sign rule flip rate = binomial model")]:
            other[seed] = rest
    assert not other, f"notebook 05 sign-rule claims fail for {other}"
    assert len(model_fails) <= 3, f"the binomial flip model is rejected for seeds {model_fails} (at most 3 of 20 by chance)"


@pytest.mark.slow
@pytest.mark.parametrize("section", ["section2", "section5", "section6"])
def test_notebook05_slow_claims_reduced_seeds(section):
    fn = globals()[f"_nb05_{section}"]
    fails = {seed: f for seed in HEAVY_SEEDS if (f := fn(seed))}
    assert not fails, f"notebook 05 {section} fails for {fails}"


@pytest.mark.slow
def test_notebook05_sign_rule_check_rejects_the_footnote_reading():
    # negative twin: flip counts of a rule that never fails with a majority of spammers
    # (what "only o(n) spammers" would give) contradict the binomial model
    fr = (1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05)
    zero = np.zeros(len(fr), dtype=int)
    curve = {"hammer_fractions": list(fr), "n_reps": 15, "n_labels": 5,
             "settings": {"x": {"n_workers": 100, "queries_per_task": 20,
                                **{r: {"flipped": zero, "ci": list(theory.binomial_ci(zero, 15)), "err_g": zero * 0.0}
                                   for r in ("paper", "sum")}}}}
    checks = theory.scaling_checks({"sign_rule_curve": curve})
    assert not checks["sign rule flip rate = binomial model (x)"][0]
    assert not checks["sign rule (x)"][0]
