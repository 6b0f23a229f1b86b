"""Monte-Carlo checks of Algorithm 1's perturbation lemmas (Lemma 2, Theorem 4 / Corollary 3, Lemma 3,
Lemma 5, the q_hat part of Theorem 1; through :mod:`toptwo.theory.perturbation`) and of Theorem 2 under
its own hypothesis (the plug-in MLE given p_hat, q_hat within delta of the truth).

The lemmas carry unspecified constants (c~, Theta(.)), but each has an explicit part:

* Lemma 2's 4 sqrt(s max(m, n)) (and 5 sqrt(sm) for m >> n) are explicit; the bound with c~ = 0
  implies it for every c~ >= 0, and its sqrt(m) order is measured as a slope in m.
* Theorem 4 / Corollary 3: the event ||X|| >= 4 sqrt(nu) + t (t >= 0) never occurs on the draws, which
  is consistent with the bound for every constant c.
* Lemma 3's Theta(1/sqrt(sn)), Lemma 5's delta_1^-2 and Theorem 1's delta_1^-2 for q_hat are rate
  shapes: the slope of log(error) on log(s) is -1/2, the wrong laws 1/(sn) and delta_1^-1 (slope -1)
  are rejected.

Tolerances (derived, not tuned). A slope estimate is rejected when |slope - claim| > b + z se with
z = z_(1 - 1e-3/2): se is the standard error of the slope over the draws (independent), b is the
finite-size bias of the *true* law at the sizes used, computed, not fitted: for Lemma 2 the
Bai-Yin form sqrt(m) + sqrt(n) against sqrt(m); for Lemmas 3 and 5 and q_hat the first-order
prediction's deviation from -1/2 (the entry variance s - E[A]^2 saturates) plus the measured excess
of the error over that prediction at the smaller s (second-order terms, which shrink as s grows, so
they can only steepen the slope, by at most that excess). The false-alarm rate is <= 1e-3 per
check when the bias lies within b (nominal: normal se); the twins lie more than 5 tolerances away
(power ~1, reported in each note). The explicit bounds (Lemma 2, Theorem 4) hold with a margin
of more than 2 sqrt(nu) over ~2 sqrt(nu), and ||E|| concentrates within O(1) (Talagrand: entries
bounded by 2), so their false-alarm rate at other seeds is below 1e-20.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ._core import check, pinned_blas as _pinned, require
from .checks_montecarlo import MC_ALPHA, _Z

__all__ = ["noise_norm_data", "sin_theta_data", "projection_data", "perturbed_plugin_data", "q_error_data",
           "gaussian_block_max", "log_m_exponent_law"]


def _model(seed: int, n: int, m: int, q: float = 0.7):
    from toptwo.theory.montecarlo import _fixed_q_model

    return _fixed_q_model(np.random.default_rng(seed), n, m, 4, (0.6, 1.0), q)


# ---------------------------------------------------------------- Lemma 2, Theorem 4, Corollary 3
NOISE_SIZES = {"n": 50, "ms": (50, 800, 3200), "s": 0.3, "reps": 3}


@functools.lru_cache(maxsize=4)
def noise_norm_data(seed: int = 13) -> dict[int, np.ndarray]:
    """``toptwo.theory.perturbation.noise_norms`` at n = 50 workers, m = 50, 800, 3200 tasks, s = 0.3, K = 4
    (p_i ~ U(0.6, 1), q = 0.7), 3 draws each: ``{m: rows (k, ||E||, nu, sigma2)}``."""
    from toptwo.theory.perturbation import noise_norms

    gen = np.random.default_rng(seed)
    with _pinned():
        return {m: noise_norms(_model(seed + m, NOISE_SIZES["n"], m), NOISE_SIZES["s"], NOISE_SIZES["reps"], rng=gen)
                for m in NOISE_SIZES["ms"]}


def _slope(small: np.ndarray, large: np.ndarray, ratio: float) -> tuple[float, float]:
    """Slope of log(y) on log(x) between two groups of independent draws, and its standard error."""
    ls, ll = np.log(small), np.log(large)
    est = (ll.mean() - ls.mean()) / math.log(ratio)
    se = math.sqrt(ls.var(ddof=1) / ls.size + ll.var(ddof=1) / ll.size) / math.log(ratio)
    return float(est), float(se)


@check(
    "mc_lemma2_noise_norm",
    statement=(
        "Lemma 2: for m >= n, ||E|| <= 4 sqrt(s max(m, n)) + c~ sqrt(log(n + m)) (checked with c~ = 0, which implies "
        "every c~ >= 0), and ||E|| <= 5 sqrt(sm) for m >> n (m = 64 n); the order sqrt(m): the slope of log ||E|| on "
        "log m at fixed s and n is 1/2 (wrong laws: slope 1, slope 0)"
    ),
    reference="Lemma 2 [lem:spnorm], eq. (perturbation) (App. app:thm:main)",
    method=(
        "Monte Carlo through toptwo.theory.perturbation.noise_norms (E = A^(k) - E[A^(k)], every k, dense spectral "
        "norm), seeded; bounds checked on every draw; slope between m = 800 and 3200 from the mean log-norms, "
        "rejected when |slope - 1/2| > b + z se, b = 1/2 - log((sqrt 3200 + sqrt 50)/(sqrt 800 + sqrt 50))/log 4 "
        "(the Bai-Yin finite-size form), z = z_(1-5e-4): false-alarm rate <= 1e-3 (nominal)"
    ),
    scope="n=50, m in {50, 800, 3200}, s=0.3, K=4, p_i ~ U(0.6, 1), q=0.7, 3 draws x 3 k per m",
)
def check_mc_lemma2_noise_norm(constant: float = 4.0, large_m_constant: float = 5.0, exponent: float = 0.5,
                               seed: int = 13):
    """Lemma 2's explicit bounds and its sqrt(m) order.

    Parameters
    ----------
    constant
        Claimed C in ||E|| <= C sqrt(s max(m, n)) (4).
    large_m_constant
        Claimed C' in ||E|| <= C' sqrt(sm) for m >> n (5).
    exponent
        Claimed power of m in ||E|| at fixed s, n (1/2).
    seed
        Seed of the draws.
    """
    data = noise_norm_data(seed)
    n, s = NOISE_SIZES["n"], NOISE_SIZES["s"]
    worst = max(float((rows[:, 1] / math.sqrt(s * max(m, n))).max()) for m, rows in data.items())
    require(worst <= constant, f"||E||/sqrt(s max(m, n)) reaches {worst:.3f} > claimed {constant}")
    big = max(NOISE_SIZES["ms"])
    worst_big = float((data[big][:, 1] / math.sqrt(s * big)).max())
    require(worst_big <= large_m_constant, f"at m = {big} = {big // n} n, ||E||/sqrt(sm) reaches {worst_big:.3f} > "
            f"claimed {large_m_constant}")
    m1, m2 = 800, 3200
    est, se = _slope(data[m1][:, 1], data[m2][:, 1], m2 / m1)
    bias = 0.5 - math.log((math.sqrt(m2) + math.sqrt(n)) / (math.sqrt(m1) + math.sqrt(n))) / math.log(m2 / m1)
    tol = bias + _Z * se
    require(abs(est - exponent) <= tol, f"slope of log ||E|| on log m = {est:.3f} +- {se:.3f}; claimed {exponent}: "
            f"|difference| {abs(est - exponent):.3f} > b + z se = {bias:.3f} + {_Z:.2f} x {se:.3f} (alpha = {MC_ALPHA})")
    return {"note": (
        f"Lemma 2 holds on every draw with c~ = 0: ||E|| <= {worst:.2f} sqrt(s max(m, n)) (claimed 4; 1.9 at m = n), "
        f"and ||E|| <= {worst_big:.2f} sqrt(sm) at m = 64 n (claimed 5). Its sqrt(m) order: slope {est:.3f} +- {se:.3f} "
        f"between m = 800 and 3200, against 1/2 less the Bai-Yin finite-size bias {bias:.3f} (slopes 1 and 0 lie "
        f"{(1 - est) / tol:.0f} and {est / tol:.0f} tolerances away: power ~1). The constants are loose by about 2x."
    )}


@check(
    "mc_theorem4_corollary3_norm",
    statement=(
        "Theorem 4 / Corollary 3 on E = A^(k) - E[A^(k)]: the event ||E|| >= 4 sqrt(nu) + t, t >= 0, does not occur "
        "(so P(.) <= (n+m) exp(-t^2/(c B^2)) holds on the draws for every constant c), and ||E|| <= 4 sigma "
        "sqrt(max(m, n)) (Corollary 3 with c~ = 0); the constant 4 cannot be replaced by 1"
    ),
    reference="Thm. 4 [lem:bd_spnorm], Cor. 3 [cor:spect_norm] (Bandeira-van Handel), used in Lemma 2",
    method="the draws of mc_lemma2_noise_norm; nu = max row/column sum of Var(E_ij), sigma^2 = max Var(E_ij) from "
           "eq. (1); every draw checked (false-alarm rate < 1e-20: ||E|| concentrates within O(1) of ~2 sqrt(nu))",
    scope="n=50, m in {50, 800, 3200}, s=0.3, K=4, 9 norms per m",
)
def check_mc_theorem4_corollary3_norm(constant: float = 4.0, seed: int = 13):
    """Theorem 4's 4 sqrt(nu) and Corollary 3's 4 sigma sqrt(max(m, n)) on the noise of Proposition 1.

    Parameters
    ----------
    constant
        Claimed leading constant (4).
    seed
        Seed of the draws (shared with mc_lemma2_noise_norm).
    """
    data = noise_norm_data(seed)
    n = NOISE_SIZES["n"]
    r_nu = max(float((rows[:, 1] / np.sqrt(rows[:, 2])).max()) for rows in data.values())
    r_sig = max(float((rows[:, 1] / np.sqrt(rows[:, 3] * max(m, n))).max()) for m, rows in data.items())
    require(r_nu < constant, f"||E||/sqrt(nu) reaches {r_nu:.3f} >= claimed {constant}: the event of Theorem 4 occurs")
    require(r_sig < constant, f"||E||/(sigma sqrt(max(m, n))) reaches {r_sig:.3f} >= claimed {constant}")
    return {"note": (
        f"Theorem 4 and Corollary 3 hold on every draw: ||E|| <= {r_nu:.2f} sqrt(nu) and <= {r_sig:.2f} sigma "
        "sqrt(max(m, n)) (claimed 4; a constant 1 is refuted); the universal constants c, c~ of the tails stay "
        "untestable."
    )}


# ---------------------------------------------------------------- Lemma 3: Theta(1/sqrt(sn))
SIN_SIZES = {"n": 200, "m": 2000, "rates": (0.2, 0.8), "reps": 3}


@functools.lru_cache(maxsize=4)
def sin_theta_data(seed: int = 17):
    """``singular_vector_errors`` and ``first_order_sin_theta`` at n = 200, m = 2000, s = 0.2, 0.8."""
    from toptwo.theory.perturbation import first_order_sin_theta, singular_vector_errors

    model = _model(seed, SIN_SIZES["n"], SIN_SIZES["m"])
    with _pinned():
        rows = singular_vector_errors(model, SIN_SIZES["rates"], SIN_SIZES["reps"], rng=seed)
    return rows, first_order_sin_theta(model, SIN_SIZES["rates"])


def _law_tolerance(meas_small: float, first: np.ndarray, ratio: float) -> tuple[float, float]:
    """b = |first-order slope + 1/2| + max(0, log(measured/first-order at the smaller s))/log(ratio)."""
    first_slope = math.log(first[1] / first[0]) / math.log(ratio)
    excess = max(0.0, math.log(meas_small / first[0])) / math.log(ratio)
    return abs(first_slope + 0.5) + excess, first_slope


@check(
    "mc_lemma3_sin_theta",
    statement=(
        "Lemma 3: sin theta(u^(k), p*) <= Theta(1/sqrt(sn)): at fixed n the slope of log sin theta on log s is -1/2 "
        "(the wrong law 1/(sn), slope -1, is rejected), and the proof's Wedin step sin theta <= sqrt 2 ||E||/"
        "(sigma_1 - ||E||) holds on every draw"
    ),
    reference="Lemma 3 [lem:sin_uk_p], its proof (Thm. 5, Wedin), Alg. 1 [alg:top_two] step 2",
    method=(
        "Monte Carlo through toptwo.theory.perturbation.singular_vector_errors (TopTwo1, paper centring, per-k "
        "left vectors), seeded, 3 draws x 3 k per s; slope between s = 0.2 and 0.8, rejected when |slope + 1/2| > "
        "b + z se, b = the first-order prediction's deviation from -1/2 (first_order_sin_theta) + the measured "
        "excess over it at s = 0.2: false-alarm rate <= 1e-3 (nominal)"
    ),
    scope="n=200, m=2000, K=4, p_i ~ U(0.6, 1), q=0.7, s in {0.2, 0.8}",
)
def check_mc_lemma3_sin_theta(exponent: float = -0.5, seed: int = 17):
    """Lemma 3's 1/sqrt(sn) as a slope in s, and its Wedin step on the same draws.

    Parameters
    ----------
    exponent
        Claimed power of s in sin theta (-1/2).
    seed
        Seed of the draws.
    """
    rows, first = sin_theta_data(seed)
    lo, hi = SIN_SIZES["rates"]
    a, b = rows[rows[:, 0] == lo][:, 3], rows[rows[:, 0] == hi][:, 3]
    require(bool(np.all(rows[:, 3] <= rows[:, 4])), "sin theta exceeds Wedin's bound on some draw")
    # paired by k (the k differ systematically in ||r^(k)||): the mean over k of the per-k slopes
    per_k = [_slope(rows[(rows[:, 0] == lo) & (rows[:, 1] == k)][:, 3], rows[(rows[:, 0] == hi) & (rows[:, 1] == k)][:, 3],
                    hi / lo) for k in np.unique(rows[:, 1])]
    est = float(np.mean([e for e, _ in per_k]))
    se = math.sqrt(sum(s_ ** 2 for _, s_ in per_k)) / len(per_k)
    bias, first_slope = _law_tolerance(float(a.mean()), first, hi / lo)
    tol = bias + _Z * se
    require(abs(est - exponent) <= tol, f"slope of log sin theta on log s = {est:.3f} +- {se:.3f}; claimed {exponent}: "
            f"|difference| {abs(est - exponent):.3f} > b + z se = {bias:.3f} + {_Z:.2f} x {se:.3f}")
    return {"note": (
        f"Lemma 3's 1/sqrt(sn) measured: sin theta falls from {a.mean():.3f} (s = {lo}) to {b.mean():.3f} (s = {hi}), "
        f"slope {est:.3f} +- {se:.3f} (first order {first_slope:.3f}; tolerance b + z se = {bias:.3f} + {_Z * se:.3f}); "
        f"the law 1/(sn) (slope -1) is rejected ({abs(est + 1) - bias:.3f} = {(abs(est + 1) - bias) / se:.0f} se beyond b: "
        "power ~1). Wedin's step holds on every draw. The Theta constant stays "
        "untestable."
    )}


# ---------------------------------------------------------------- Lemma 5 and Theorem 1's q_hat: delta_1^-2
PROJ_SIZES = {"n": 200, "m": 1000, "rates": (0.1, 0.4), "reps": 4}


@functools.lru_cache(maxsize=4)
def projection_data(seed: int = 19, paper: bool = True):
    """``toptwo.theory.perturbation.projection_errors`` at n = 200, m = 1000, s = 0.1, 0.4 (4 draws each), with
    Algorithm 1 as printed (``paper=True``) or the package's default TopTwo1 (stacked left vector, observed
    centring, automatic sign rule)."""
    from toptwo.theory.perturbation import projection_errors

    model = _model(seed, PROJ_SIZES["n"], PROJ_SIZES["m"])
    opts = {"centering": "paper", "left_vector": "per_k", "sign_rule": "paper"} if paper else {}
    gen = np.random.default_rng(seed)
    with _pinned():
        return {s: projection_errors(model, s, PROJ_SIZES["reps"], rng=gen, **opts) for s in PROJ_SIZES["rates"]}


def _rate_check(column: int, exponent: float, seed: int, paper: bool, what: str) -> tuple[float, float, float, dict]:
    data = projection_data(seed, paper)
    lo, hi = PROJ_SIZES["rates"]
    a, b = data[lo][:, column], data[hi][:, column]
    est, se = _slope(a, b, hi / lo)
    first = np.array([data[lo][0, 3], data[hi][0, 3]])
    bias, _ = _law_tolerance(float(a.mean()) if column == 0 else float(first[0]), first, hi / lo)
    tol = bias + _Z * se
    require(abs(est - exponent) <= tol, f"{what}: slope of the error on log s = {est:.3f} +- {se:.3f}; claimed "
            f"{exponent}: |difference| {abs(est - exponent):.3f} > b + z se = {bias:.3f} + {_Z:.2f} x {se:.3f}")
    return est, se, tol, {s: float(d[:, column].mean()) for s, d in data.items()}


_PROJ_METHOD = (
    "Monte Carlo through toptwo.theory.perturbation.projection_errors (TopTwo1 with sample splitting: u~ from B, "
    "v from C), seeded, 4 draws per s, as printed and with the package's default stage 1; slope of log(rms error) "
    "between s = 0.1 and 0.4, rejected when |slope + 1/2| > b + z se, b = the first-order prediction's deviation "
    "from -1/2 + the measured excess over it at s = 0.1: false-alarm rate <= 1e-3 per configuration (nominal)"
)


@check(
    "mc_lemma5_delta1_scaling",
    statement=(
        "Lemma 5: |v_j^(k) - ||p|| r_j^(k)| < delta_1 ||p|| w.p. 1 - eps once s >~ log(1/eps)/(delta_1^2 ||p||^2): the "
        "error's noise part has standard deviation proportional to s^(-1/2) (the delta_1^-2 law), not s^-1 (a "
        "delta_1^-1 law); its second part ||u~|| cos theta - 1 is of order 1/(sn)"
    ),
    reference="Lemma 5 [lem:entrywisebd_new] (eqn:mainlem_part1, eqn:mainlem_part2), Alg. 1 [alg:top_two] step 3",
    method=_PROJ_METHOD,
    scope="n=200, m=1000, K=4, p_i ~ U(0.6, 1), q=0.7, s in {0.1, 0.4}; Algorithm 1 as printed and TopTwo1()",
)
def check_mc_lemma5_delta1_scaling(exponent: float = -0.5, seed: int = 19):
    """Lemma 5's delta_1^-2 as the s^(-1/2) law of the projection noise, for the printed and the default stage 1.

    Parameters
    ----------
    exponent
        Claimed power of s in the error (-1/2).
    seed
        Seed of the draws.
    """
    out = {}
    for paper in (True, False):
        out[paper] = _rate_check(0, exponent, seed, paper, "Lemma 5 " + ("as printed" if paper else "(default)"))
    (e1, s1, t1, m1), (e0, s0, _, _) = out[True], out[False]
    shrink = {s: float(d[:, 1].mean()) for s, d in projection_data(seed, True).items()}
    return {"note": (
        f"Lemma 5's delta_1^-2 measured: the noise of v^(k)/||p|| - r^(k) falls from {m1[0.1]:.4f} (s = 0.1) to "
        f"{m1[0.4]:.4f} (s = 0.4), slope {e1:.3f} +- {s1:.3f} (Algorithm 1 as printed; tolerance {t1:.3f}) and "
        f"{e0:.3f} +- {s0:.3f} with the package's default stage 1; the delta_1^-1 law (slope -1) lies "
        f"{abs(e1 + 1) / t1:.0f} tolerances away. The second part ||u~|| cos theta - 1 is {shrink[0.1]:.3f} and "
        f"{shrink[0.4]:.3f} (order 1/(sn), as the proof says). The Theta constant and m -> oo stay untestable."
    )}


@check(
    "mc_theorem1_q_hat",
    statement=(
        "Theorem 1's q part: |q_hat_j - q_j| < delta_1 w.p. 1 - eps once s s1 >~ log(K/eps)/(delta_1^2 ||p||^2): the "
        "error of eq. (4)'s q_hat (at the true g_j) has standard deviation proportional to s^(-1/2), not s^-1"
    ),
    reference="Thm. 1 [thm:main] (eqn:rec_q_main), its proof (App., l. 1206-1233), eq. (4) [eqn:est_q]",
    method=_PROJ_METHOD,
    scope="n=200, m=1000, K=4, p_i ~ U(0.6, 1), q=0.7, s in {0.1, 0.4}; Algorithm 1 as printed and TopTwo1()",
)
def check_mc_theorem1_q_hat(exponent: float = -0.5, seed: int = 19):
    """Theorem 1's q_hat: the s^(-1/2) law of its error, for the printed and the default stage 1.

    Parameters
    ----------
    exponent
        Claimed power of s in the q_hat error (-1/2).
    seed
        Seed of the draws.
    """
    out = {paper: _rate_check(2, exponent, seed, paper, "q_hat " + ("as printed" if paper else "(default)"))
           for paper in (True, False)}
    (e1, s1, t1, m1), (e0, s0, _, m0) = out[True], out[False]
    return {"note": (
        f"Theorem 1's q part measured: the rms error of q_hat falls from {m1[0.1]:.3f} (s = 0.1) to {m1[0.4]:.3f} "
        f"(s = 0.4), slope {e1:.3f} +- {s1:.3f} as printed (tolerance {t1:.3f}), {e0:.3f} +- {s0:.3f} with the "
        f"default stage 1 ({m0[0.1]:.3f} to {m0[0.4]:.3f}); the delta_1^-1 law (slope -1) lies {abs(e1 + 1) / t1:.0f} "
        "tolerances away."
    )}


# ---------------------------------------------------------------- Theorem 2 under its own hypothesis
_Z1 = 3.090232306167813  # Phi^{-1}(1 - 1e-3): the one-sided test below


@functools.lru_cache(maxsize=4)
def perturbed_plugin_data(seed: int = 23, n: int = 100, m: int = 4000, K: int = 3):
    """The plug-in MLE (eq. (6), ``toptwo.mle.plugin_mle``) given p_hat, q_hat drawn uniformly in the box of
    Theorem 2's hypothesis, |p_hat - p|, |q_hat - q| <= delta = rho Dbar/(4(6 + Dbar)), rho = (1 - max p)/K,
    at q = 0.6 and 0.7 (one worker pool, p_i ~ U(0.3, 0.9)): ``{q: (s grid, wrong tasks, tasks, Dbar, delta)}``."""
    import toptwo
    from toptwo.mle import plugin_mle
    from toptwo.model import kl_divergence_bar

    gen = np.random.default_rng(seed)
    p = gen.uniform(0.3, 0.9, n)
    g = gen.integers(1, K + 1, m)
    top = np.column_stack([g, (g - 1 + gen.integers(1, K, m)) % K + 1])
    out = {}
    with _pinned():
        for qv, ss in ((0.6, (0.2, 0.4, 0.6)), (0.7, (0.06, 0.12, 0.18))):
            model = toptwo.TopTwoModel(p, np.full(m, qv), top, K)
            D = kl_divergence_bar(model)
            delta = (1 - p.max()) / K * D / (4 * (6 + D))
            wrong = []
            for s in ss:
                A = model.sample(s, rng=gen)
                ph = np.clip(p + gen.uniform(-delta, delta, n), 0.0, 1.0)
                qh = qv + gen.uniform(-delta, delta, m)
                wrong.append(int(np.any(plugin_mle(A, ph, qh) != top, axis=1).sum()))
            out[qv] = (np.array(ss), np.array(wrong), np.full(len(ss), m), float(D), float(delta))
    return out


@check(
    "mc_theorem2_perturbed_plugin",
    statement=(
        "Theorem 2 under its own hypothesis (p_hat, q_hat within delta = rho Dbar/(4(6+Dbar)) of the truth): "
        "s = Omega(log(1/rho) log(mK^2/eps)/(n Dbar)) suffices, i.e. the plug-in MLE's per-task error decays as "
        "exp(-b s) with b >= c n Dbar (c not depending on Dbar): the power e of Dbar in b (same workers, rho and "
        "K; Dbar varied through q) is at most 1; the stronger claims b >= c n Dbar^(1/2) and b >= c n (no Dbar) "
        "are rejected"
    ),
    reference="Thm. 2 [thm:plugmin_mle] (eqn:cond_delta), eq. (6) [eqn:plug-in-mle], Alg. 2 [alg:plugin_MLE] step 4",
    method=(
        "Monte Carlo through toptwo.mle.plugin_mle with p_hat, q_hat uniform in the delta box, seeded; b fitted by "
        "binomial-weighted least squares of log(error) on s (3 s x 4000 tasks per q); e_hat = log(b_0.7/b_0.6)/"
        "log(Dbar_0.7/Dbar_0.6), delta-method se; one-sided: reject the claimed power e when e_hat > e + "
        "z_(1-1e-3) se (a sufficiency claim: a smaller e_hat is what it allows): false-alarm rate <= 1e-3 (nominal)"
    ),
    scope="n=100, m=4000, K=3, p_i ~ U(0.3, 0.9), q in {0.6, 0.7}, s in {0.2, 0.4, 0.6} and {0.06, 0.12, 0.18}",
)
def check_mc_theorem2_perturbed_plugin(dbar_power: float = 1.0, seed: int = 23):
    """Theorem 2's 1/(n Dbar) under its hypothesis, as an upper bound on the power of Dbar in the decay rate.

    Parameters
    ----------
    dbar_power
        Claimed e in "s >~ 1/(n Dbar^e) suffices" (1).
    seed
        Seed of the draws.
    """
    from toptwo.theory.montecarlo import _fit_decay

    data = perturbed_plugin_data(seed)
    (s1, w1, t1, D1, d1), (s2, w2, t2, D2, d2) = data[0.6], data[0.7]
    (b1, se1), (b2, se2) = _fit_decay(s1, w1, t1), _fit_decay(s2, w2, t2)
    require(b1 > 0 and b2 > 0, f"no exponential decay seen (b = {b1:.3g}, {b2:.3g})")
    est = math.log(b2 / b1) / math.log(D2 / D1)
    se = math.hypot(se1 / b1, se2 / b2) / abs(math.log(D2 / D1))
    require(est <= dbar_power + _Z1 * se, f"the decay rate in s grows like Dbar^{est:.2f} (+- {se:.2f}): Dbar = "
            f"{D1:.4f} -> {D2:.4f}, b = {b1:.2f} -> {b2:.2f}; a sufficient s ~ 1/(n Dbar^{dbar_power}) needs "
            f"e_hat <= {dbar_power} + {_Z1:.2f} se = {dbar_power + _Z1 * se:.2f}")
    return {"note": (
        f"Theorem 2 under its own hypothesis (p_hat, q_hat uniform within delta = {d1:.1e} / {d2:.1e} of the truth): "
        f"the plug-in MLE's per-task error decays in s at b = {b1:.2f} (Dbar = {D1:.4f}, q = 0.6) and {b2:.2f} "
        f"(Dbar = {D2:.4f}, q = 0.7): power of Dbar {est:.2f} +- {se:.2f} <= 1, as s ~ 1/(n Dbar) allows; the "
        f"stronger laws Dbar^(1/2) and Dbar^0 are rejected ({(est - 0.5) / se:.1f} and {est / se:.1f} se). Per unit "
        f"n s Dbar the decay does not slow down as Dbar shrinks ({b1 / (100 * D1):.2f} vs {b2 / (100 * D2):.2f})."
    )}


# ---------------------------------------------------------------- Corollary 1's q part: ||q_hat - q||_inf, log m
#: Sizes of the every-task q_hat experiment: one instance, ``reps`` draws at rate ``s``, blocks of ``blocks`` tasks.
QMAX_SIZES = {"n": 200, "M": 2000, "s": 0.6, "reps": 3, "blocks": (10, 100)}


@functools.lru_cache(maxsize=4)
def q_error_data(seed: int = 29) -> tuple[np.ndarray, np.ndarray]:
    """Per-task errors q_hat_j - q_j of eq. (4) at the true g_j (1/K - Delta v_j^(g_j)/l - q_j), Algorithm 1 as
    printed (``PAPER_ALGORITHM1``), n = 200, M = 2000 tasks, s = 0.6, K = 4, p_i ~ U(0.6, 1), q = 0.7: an array of
    shape (reps, M) (one row per draw of A; tasks independent given the draw's u~, by sample splitting), and each
    task's pair type 4(g - 1) + h - 1 (the error's scale depends on it: Delta v^(g) uses u~^(g) and u~^(g-1))."""
    import toptwo
    from toptwo.theory.montecarlo import PAPER_ALGORITHM1

    n, M, s, R = (QMAX_SIZES[k] for k in ("n", "M", "s", "reps"))
    model = _model(seed, n, M)
    gen = np.random.default_rng(seed)
    rows = []
    with _pinned():
        for _ in range(R):
            est = toptwo.TopTwo1(**PAPER_ALGORITHM1, rng=gen).fit(model.sample(s, rng=gen), 4)
            dv_g = est.result_.delta_v[np.arange(M), model.top_two[:, 0] - 1]
            rows.append(0.25 - dv_g / est.norm_p_ - model.confusion)
    return np.array(rows), (model.top_two[:, 0] - 1) * 4 + model.top_two[:, 1] - 1


def gaussian_block_max(m: int) -> tuple[float, float]:
    """Mean and standard deviation of max_{j <= m} |Z_j|, Z_j iid N(0, 1), by quadrature of its exact law
    P(max <= t) = (2 Phi(t) - 1)^m."""
    from scipy import integrate

    def tail(t: float) -> float:                          # P(max > t)
        return -math.expm1(m * math.log1p(-math.erfc(t / math.sqrt(2))))

    mean = integrate.quad(tail, 0, 12, epsabs=1e-12, limit=200)[0]
    second = integrate.quad(lambda t: 2 * t * tail(t), 0, 12, epsabs=1e-12, limit=200)[0]
    return mean, math.sqrt(second - mean * mean)


def log_m_exponent_law(n_small: int, n_large: int, m_small: int, m_large: int, gen: np.random.Generator,
                       sims: int = 4000) -> np.ndarray:
    """The sampling distribution, under iid N(0, 1) task errors, of gamma_hat = log(Q_large/Q_small)/log(log
    m_large/log m_small), Q_m the mean over the blocks of m tasks of the block's largest |error|, at the sizes used
    (``n_large`` blocks of ``m_large`` tasks, each cut into blocks of ``m_small``: the nesting of the data). Block
    maxima are drawn exactly by inversion, |Z|_max = Phi^-1((1 + U^(1/m))/2)."""
    from scipy import special

    per = m_large // m_small
    u = gen.random((sims, n_large, per))
    small = special.ndtri(0.5 + 0.5 * u ** (1.0 / m_small))              # maxima of the blocks of m_small
    q_small = small.mean(axis=(1, 2)) if n_small == n_large * per else None
    require(q_small is not None, "the small blocks must tile the large ones")
    q_large = small.max(axis=2).mean(axis=1)                              # a large block's max = its sub-blocks' max
    return np.log(q_large / q_small) / math.log(math.log(m_large) / math.log(m_small))


def _cornish_fisher(z: float, skew: float, kurt: float) -> float:
    """The Cornish-Fisher quantile z + g(z^2 - 1)/6 + k(z^3 - 3z)/24 (skewness g, excess kurtosis k)."""
    return z + skew * (z * z - 1) / 6 + kurt * (z ** 3 - 3 * z) / 24


@check(
    "mc_corollary1_q_max_log_m",
    statement=(
        "Corollary 1's q part: ||q_hat - q||_inf < delta_1 w.p. >= 1 - eps once s s1 >~ log(mK/eps)/(delta_1^2 "
        "||p||^2), i.e. at fixed s the largest of m tasks' errors grows like sqrt(log m) (Theorem 1's sub-Gaussian "
        "per-task tail and the union bound over the m tasks): the mean block maximum Q_m of |q_hat_j - q_j| "
        "scales as (log m)^gamma with gamma = 1/2; gamma = 0 (no log m: Theorem 1's log(K/eps) would do for every "
        "task) and gamma = 1 (the max linear in log m: log^2 m in s) are rejected"
    ),
    reference="Cor. 1 [cor:exact_alg1] (||q - q_hat||_inf), its proof (App., l. 1235-1237: union bound over j), "
              "Thm. 1 [thm:main] (eqn:rec_q_main), eq. (4) [eqn:est_q]",
    method=(
        "Monte Carlo through toptwo.TopTwo1 as printed (PAPER_ALGORITHM1), seeded: 3 draws x 2000 tasks, q_hat_j - q_j "
        "at the true g_j, standardised per draw and pair type; the tasks of each draw cut into blocks of 100 and each of those into blocks of 10; "
        "gamma_hat = log(Q_100/Q_10)/log 2. Tolerance derived from gamma_hat's sampling distribution at these "
        "sizes under the claim's extremal law (iid Gaussian errors: the sub-Gaussian tail for which the union bound "
        "is tight), drawn exactly by inversion of (2 Phi(t) - 1)^m with the check's rng (4000 replicates): its "
        "mean gives the finite-size bias b_G (the exact exponent of E max between m = 10 and 100 is not 1/2), its "
        "standard deviation the se; the non-Gaussian bias b_CF of the measured skewness and kurtosis (Cornish-"
        "Fisher at the Gaussian block maxima) is added. Reject gamma when |gamma_hat - gamma - b_G| > |b_CF| + "
        "z_(1-5e-4) se: false-alarm rate <= 1e-3 (the simulated law of gamma_hat is near normal: 600 and 60 blocks)"
    ),
    scope="Algorithm 1 as printed, n=200, M=2000, K=4, p_i ~ U(0.6, 1), q=0.7, s=0.6, 3 draws, m in {10, 100}",
)
def check_mc_corollary1_q_max_log_m(exponent: float = 0.5, seed: int = 29):
    """Monte-Carlo check of the log m in Corollary 1's ||q_hat - q||_inf (the every-task q part).

    Parameters
    ----------
    exponent
        Claimed power gamma of log m in the largest error of m tasks (1/2; 0 drops the log m, 1 squares it in s).
    seed
        Seed of the draws and of the simulated law.
    """
    from scipy import stats

    e, types = q_error_data(seed)
    R, M = e.shape
    m1, m2 = QMAX_SIZES["blocks"]
    z = np.empty_like(e)                 # standardised per draw and pair type (u~ and the type set the scale)
    for t in np.unique(types):
        sel = e[:, types == t]
        z[:, types == t] = (sel - sel.mean(axis=1, keepdims=True)) / sel.std(axis=1, ddof=1, keepdims=True)
    a = np.abs(z)
    small = a.reshape(R, M // m1, m1).max(axis=2)
    large = small.reshape(R, M // m2, m2 // m1).max(axis=2)
    lever = math.log(math.log(m2) / math.log(m1))
    est = math.log(large.mean() / small.mean()) / lever
    law = log_m_exponent_law(small.size, large.size, m1, m2, np.random.default_rng(seed))
    b_g, se = float(law.mean()) - 0.5, float(law.std(ddof=1))
    g, k = float(stats.skew(z, axis=None)), float(stats.kurtosis(z, axis=None))
    (z1, _), (z2, _) = gaussian_block_max(m1), gaussian_block_max(m2)
    b_cf = (math.log(_cornish_fisher(z2, abs(g), k) / _cornish_fisher(z1, abs(g), k)) - math.log(z2 / z1)) / lever
    tol = abs(b_cf) + _Z * se
    require(abs(est - exponent - b_g) <= tol,
            f"the largest |q_hat - q| of m tasks grows like (log m)^{est:.3f} (Q_10 = {small.mean():.3f}, Q_100 = "
            f"{large.mean():.3f} sd); claimed {exponent} + finite-size bias {b_g:+.3f}: |difference| "
            f"{abs(est - exponent - b_g):.3f} > |b_CF| + z se = {abs(b_cf):.3f} + {_Z:.2f} x {se:.3f}")
    # power against a twin c: the chance, under the simulated law (centred at 1/2 + b_G), of |gamma_hat - c - b_G| > tol
    power = {c: float(np.mean(np.abs(law - c - b_g) > tol)) for c in (0.0, 1.0)}
    return {"note": (
        f"Corollary 1's ||q_hat - q||_inf measured through Algorithm 1 as printed: over blocks of m tasks the mean "
        f"largest error is {small.mean():.3f} sd (m = 10) and {large.mean():.3f} sd (m = 100), an exponent of log m "
        f"of {est:.3f} +- {se:.3f}, against 1/2 + the Gaussian finite-size bias {b_g:+.3f} (non-Gaussian part "
        f"{b_cf:+.3f}: skewness {g:.2f}, excess kurtosis {k:.2f}); gamma = 0 (no log m) and gamma = 1 are rejected "
        f"with power {power[0.0]:.3f} and {power[1.0]:.3f} under the simulated law. The every-task q part needs the "
        "log m of log(mK/eps), as the union bound says; the Omega constant stays untestable."
    ), "scope": f"Algorithm 1 as printed, n=200, M=2000, K=4, q=0.7, s=0.6, 3 draws, m in {{10, 100}}, seed {seed}"}
