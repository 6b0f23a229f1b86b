"""Scaling fits: log-log slopes, threshold crossings and the sample-complexity report.

The numerics behind notebooks 03 and 05: fitted exponents and crossing points of error
curves, and the checks that compare them with the theory's predictions.

There is one log-log least-squares fit, ``_loglog_fit`` (``numpy.polyfit`` of log y on
log x, optionally weighted). :func:`fit_loglog_slope` is it on plain points (a rate such as
sin theta ~ s^(-1/2)); :func:`loglog_slope` is it on replicate means, weighted by their
standard errors, with the slope's standard error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .bounds import sign_flip_probability
from .montecarlo import binomial_ci


def _loglog_fit(x: Any, y: Any, owner: str, w: Any = None) -> tuple[float, float, float]:
    """Least-squares fit of log y = slope * log x + intercept: (slope, intercept, s.e. of slope).

    ``w`` weights the residuals of log y (1 / their standard deviations, as in
    ``numpy.polyfit``); the standard error takes those standard deviations as known (the
    unscaled covariance), so it only means something when ``w`` is given.
    """
    xa = np.asarray(x, dtype=float).ravel()
    ya = np.asarray(y, dtype=float).ravel()
    if xa.shape != ya.shape:
        raise ValueError(f"x and y of {owner} must have the same length; got {xa.shape[0]} "
                         f"and {ya.shape[0]} instead.")
    if xa.shape[0] < 2:
        raise ValueError(f"{owner} needs at least 2 points; got {xa.shape[0]} instead.")
    for name, arr in (("x", xa), ("y", ya)):
        bad = ~np.isfinite(arr) | (arr <= 0)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"All values of '{name}' in {owner} must be finite and > 0 (log "
                             f"scale); got {float(arr[i])!r} at index {i} instead.")
    lx, ly = np.log(xa), np.log(ya)
    if np.ptp(lx) == 0:
        raise ValueError(f"The values of 'x' in {owner} must not all be equal; got "
                         f"{float(xa[0])!r} everywhere instead.")
    (slope, intercept), cov = np.polyfit(lx, ly, 1, w=w, cov="unscaled")
    return float(slope), float(intercept), float(np.sqrt(cov[0, 0]))


def fit_loglog_slope(x: Any, y: Any) -> tuple[float, float]:
    """Least-squares fit of log y = slope * log x + intercept (natural logarithms).

    Used to measure rates such as sin theta ~ s^(-1/2) (Lemma [`lem:sin_uk_p`]) or
    error ~ (n s)^a. ``exp(intercept)`` is the constant in y ~ C x^slope.

    Parameters
    ----------
    x, y : array-like of shape (N,)
        Positive, finite values; N >= 2 and x not all equal.

    Returns
    -------
    (slope, intercept) : tuple of float
    """
    slope, intercept, _ = _loglog_fit(x, y, "fit_loglog_slope")
    return slope, intercept


def loglog_slope(x: Any, y_reps: Any) -> tuple[float, float]:
    """Slope of log(mean y) on log x, weighted by the replicate standard errors, and its standard error.

    ``y_reps`` has one row per x and one column per replicate (NaN entries are dropped). The
    standard error of log(mean y) is taken as sd / (sqrt(R) mean) (delta method), floored at 2 %
    so that a point whose replicates happen to agree does not get infinite weight. The fit is
    :func:`fit_loglog_slope`'s, weighted by 1 / standard error.
    """
    means, ses = [], []
    for row in y_reps:
        v = np.asarray(row, dtype=float)
        v = v[np.isfinite(v)]
        if v.size < 2:
            raise ValueError(f"loglog_slope: every x needs at least 2 finite replicates; got {row!r}.")
        means.append(v.mean())
        ses.append(max(v.std(ddof=1) / (np.sqrt(v.size) * v.mean()), 0.02))
    slope, _, se = _loglog_fit(x, means, "loglog_slope", w=1.0 / np.asarray(ses))
    return slope, se


def first_crossing(x: Any, y: Any, level: float, *, increasing: bool = False, log_y: bool = False) -> float:
    """The x at which a curve first reaches ``level`` (linear interpolation, in log y if ``log_y``).

    ``increasing=False``: first x with y <= level (an error curve); ``True``: first x with
    y >= level (a success probability). Returns x[0] if the curve starts there and NaN if it
    never gets there. Used with the Clopper-Pearson limits of a curve, it turns binomial
    intervals on y into an interval on the crossing point.
    """
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    if xs.ndim != 1 or xs.shape != ys.shape or xs.size == 0 or np.any(np.diff(xs) <= 0):
        raise ValueError(f"first_crossing: `x` must be 1-D, strictly increasing and as long as `y`; "
                         f"got shapes {xs.shape}, {ys.shape}.")
    hit = np.flatnonzero(ys >= level) if increasing else np.flatnonzero(ys <= level)
    if hit.size == 0:
        return float("nan")
    i = int(hit[0])
    if i == 0:
        return float(xs[0])
    y0, y1, lv = ys[i - 1], ys[i], float(level)
    if log_y and y0 > 0 and y1 > 0 and lv > 0:
        y0, y1, lv = np.log(y0), np.log(y1), np.log(lv)
    if y1 == y0:
        return float(xs[i])
    return float(xs[i - 1] + (lv - y0) / (y1 - y0) * (xs[i] - xs[i - 1]))


def _crossing_interval(x: Any, est: Any, lo: Any, hi: Any, level: float, *, increasing: bool,
                       log_y: bool = False) -> tuple[float, float, float]:
    """Crossing of ``level`` by a curve and by its two confidence limits (earliest, estimate, latest)."""
    a = first_crossing(x, hi if increasing else lo, level, increasing=increasing, log_y=log_y)
    b = first_crossing(x, est, level, increasing=increasing, log_y=log_y)
    c = first_crossing(x, lo if increasing else hi, level, increasing=increasing, log_y=log_y)
    return a, b, c


def scaling_summary(res: dict[str, Any], *, k_target: float = 0.1) -> dict[str, Any]:
    """Derived numbers of the scaling measurements (the stored JSON of ``benchmarks/theorems_mc.py``).

    * ``minimax``: per method, n s needed per D-bar (mean over replicates), the ratio to the lower
      bound ``le_cam_queries``, and the log-log slope on D-bar (``loglog_slope``) with its s.e.;
      the slope of Cor. 2's first term (-2 up to the 6 + D-bar factor).
    * ``every_m``: per m, the x = s n D-bar where P(all pairs right) crosses 1/2, with the
      interval from the Clopper-Pearson limits; the slope of that crossing on log m (weighted,
      s.d. = interval width / 4) and the prediction 1/b (b = per-task decay rate, Theorem 2's
      log m): crossing(m) ~ const + log(m)/b.
    * ``K``: per K, the x = s ||p||^2 gap^2 at which Algorithm 1's per-task pair error reaches
      ``k_target`` (interpolated in log error, interval from the binomial limits), and the
      union-bound allowance log(K/3)/b for the shift from K = 3.
    """
    out: dict[str, Any] = {}
    if "minimax_curve" in res:
        out["minimax"] = _minimax_summary(res["minimax_curve"])
    if "every_task_m" in res:
        out["every_m"] = _every_m_summary(res["every_task_m"])
    if "theorem1_K" in res:
        out["K"] = _k_summary(res["theorem1_K"], k_target)
    return out


def _minimax_summary(mc: dict[str, Any]) -> dict[str, Any]:
    d = np.array([r["d_bar"] for r in mc["rows"]])
    mm: dict[str, Any] = {"d_bar": d, "lower": np.array([r["lower"] for r in mc["rows"]]),
                          "cor2": np.array([r["cor2_queries"] for r in mc["rows"]])}
    mm["cor2_slope"] = fit_loglog_slope(d, mm["cor2"])[0]
    for name in ("TopTwo2", "oracle MLE"):
        reps = [np.asarray(r["queries"][name], dtype=float) for r in mc["rows"]]
        mean = np.array([np.nanmean(v) if np.any(np.isfinite(v)) else np.nan for v in reps])
        slope, se = loglog_slope(d, reps)
        mm[name] = {"queries": mean, "ratio": mean / mm["lower"], "slope": slope, "slope_se": se,
                    "missing": int(sum(int(np.sum(~np.isfinite(v))) for v in reps))}
    return mm


def _every_m_summary(ev: dict[str, Any]) -> dict[str, Any]:
    ms = np.array(ev["n_tasks_list"], dtype=float)
    x = np.asarray(ev["x"], dtype=float)
    R = ev["n_reps"]
    rows = []
    for m in ms:
        per = ev["per_m"][str(int(m))]
        lo, hi = (np.asarray(c, dtype=float) for c in per["ci"])
        rows.append(_crossing_interval(x, np.asarray(per["all_ok"]) / R, lo, hi, 0.5, increasing=True))
    cross = np.array(rows)
    sd = np.maximum((cross[:, 2] - cross[:, 0]) / 4, 0.25)
    X = np.column_stack([np.ones(ms.size), np.log(ms)])
    w = 1 / sd**2
    cov = np.linalg.inv((X * w[:, None]).T @ X)
    beta = cov @ (X * w[:, None]).T @ cross[:, 1]
    b, b_se = ev["slope"], ev["slope_se"]
    return {"m": ms, "crossing": cross, "beta": float(beta[1]), "beta_se": float(np.sqrt(cov[1, 1])),
                      "predicted": 1 / b, "predicted_se": b_se / b**2,
                      "task_rate": {str(int(m)): np.asarray(ev["per_m"][str(int(m))]["task_wrong"])
                                    / ev["per_m"][str(int(m))]["task_trials"] for m in ms}}


def _k_summary(tk: dict[str, Any], k_target: float) -> dict[str, Any]:
    Ks = tk["Ks"]
    xk = {}
    for K in Ks:
        r = tk["per_K"][str(K)]
        rate = np.asarray(r["rate"], dtype=float)
        xk[K] = _crossing_interval(r["x"], rate, np.asarray(r["ci_low"]), np.asarray(r["ci_high"]),
                                   k_target, increasing=False, log_y=True)
    b_min = min(tk["per_K"][str(K)]["slope"] for K in Ks)
    return {"Ks": Ks, "target": k_target, "x_needed": xk, "b_min": b_min,
            "allowance": {K: float(np.log(K / Ks[0]) / b_min) for K in Ks}}


def scaling_checks(res: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    """The shapes asserted on the scaling measurements; name -> (holds, message with the values).

    Tolerances come from the sampling noise: replicate standard errors for the minimax slope,
    Clopper-Pearson limits for the crossings and flip rates.
    """
    sm = scaling_summary(res)
    out: dict[str, tuple[bool, str]] = {}
    if "minimax" in sm:
        out.update(_minimax_checks(sm["minimax"]))
    if "every_m" in sm:
        out.update(_every_m_checks(sm["every_m"], res["every_task_m"]["n_reps"]))
    if "K" in sm:
        out.update(_k_checks(sm["K"]))
    if "sign_rule_curve" in res:
        out.update(_sign_checks(res["sign_rule_curve"]))
    return out


def _minimax_checks(mm: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    out: dict[str, tuple[bool, str]] = {}
    for name in ("TopTwo2", "oracle MLE"):
        q = mm[name]["queries"]
        out[f"minimax lower bound ({name})"] = (
            bool(np.all(q >= mm["lower"])),
            f"{name} needs n s = {np.round(q, 1).tolist()}, the lower bound 8(1/2-eps)^2/D-bar = "
            f"{np.round(mm['lower'], 1).tolist()}: no method can need less")
        sl, se = mm[name]["slope"], mm[name]["slope_se"]
        out[f"minimax no D-bar^2 gap ({name})"] = (
            bool(sl >= -1 - 3 * se and mm[name]["missing"] == 0),
            f"{name}: log-log slope of n s needed on D-bar = {sl:.2f} +- {se:.2f}; the lower bound has -1, "
            f"Cor. 2's first term {mm['cor2_slope']:.2f}; a D-bar^2 gap would show a slope below -1 - 3 s.e. "
            f"(missing crossings: {mm[name]['missing']})")
    return out


def _every_m_checks(em: dict[str, Any], R: int) -> dict[str, tuple[bool, str]]:
    out: dict[str, tuple[bool, str]] = {}
    cr = em["crossing"]
    tol = 3 * np.hypot(em["beta_se"], em["predicted_se"])
    out["every-task threshold grows like log m"] = (
        bool(np.all(np.isfinite(cr)) and abs(em["beta"] - em["predicted"]) <= tol and em["beta"] > 3 * em["beta_se"]),
        f"crossing of P(all pairs) = 1/2 at x = {np.round(cr[:, 1], 2).tolist()} for m = {em['m'].astype(int).tolist()}; "
        f"slope on log m {em['beta']:.2f} +- {em['beta_se']:.2f}, predicted 1/b = {em['predicted']:.2f} "
        f"+- {em['predicted_se']:.2f} (tolerance {tol:.2f})")
    # log m against a power law sqrt(m): weighted residual chi^2 of each two-parameter fit (s.d. from the
    # crossing intervals); the log law must fit (chi^2 below its 99 % point, 2 d.o.f.) and beat sqrt(m)
    from scipy.stats import chi2 as _chi2

    sd = np.maximum((cr[:, 2] - cr[:, 0]) / 4, 0.25)
    w = 1 / sd**2

    def _chi(f: np.ndarray) -> float:
        X = np.column_stack([np.ones(f.size), f])
        coef = np.linalg.solve((X * w[:, None]).T @ X, (X * w[:, None]).T @ cr[:, 1])
        return float(np.sum(w * (cr[:, 1] - X @ coef) ** 2))

    c_log, c_sqrt = _chi(np.log(em["m"])), _chi(np.sqrt(em["m"]))
    limit = float(_chi2.ppf(0.99, em["m"].size - 2))
    out["every-task threshold: log m, not a power of m"] = (
        bool(np.all(np.isfinite(cr)) and c_log <= limit and c_log < c_sqrt),
        f"weighted chi^2 of the crossing: log m law {c_log:.2f}, sqrt(m) law {c_sqrt:.2f} (99 % point {limit:.2f})")
    rates = np.array(list(em["task_rate"].values()))
    # Bonferroni over the grid points, so that the family-wise false-alarm rate is 5 %
    lo, hi = binomial_ci(np.round(rates * (R * em["m"][:, None])).astype(int),
                         np.repeat(R * em["m"][:, None].astype(int), rates.shape[1], axis=1),
                         confidence=1 - 0.05 / rates.shape[1])
    out["per-task error does not depend on m"] = (
        bool(np.all(lo.max(axis=0) <= hi.min(axis=0))),
        "per-task error at each x, Clopper-Pearson intervals (Bonferroni) over m overlap: "
        f"{np.round(rates[:, :6], 3).tolist()}")
    return out


def _k_checks(kk: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    out: dict[str, tuple[bool, str]] = {}
    Ks = kk["Ks"]
    x3 = kk["x_needed"][Ks[0]]
    ok_grow = all(kk["x_needed"][K][2] >= x3[0] for K in Ks[1:])
    ok_union = all(kk["x_needed"][K][0] - x3[2] <= kk["allowance"][K] for K in Ks[1:])
    last = kk["x_needed"][Ks[-1]]
    out["per-task error grows with K, at most like log K"] = (
        bool(ok_grow and ok_union and last[0] > x3[2]),
        "x = s||p||^2 gap^2 for per-task error {}: ".format(kk["target"])
        + ", ".join(f"K={K}: {v[1]:.2f} [{v[0]:.2f}, {v[2]:.2f}]" for K, v in kk["x_needed"].items())
        + "; union-bound allowance log(K/3)/b: "
        + ", ".join(f"{K}: {a:.2f}" for K, a in kk["allowance"].items()))
    return out


def _sign_checks(sr: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    out: dict[str, tuple[bool, str]] = {}
    fr = np.array(sr["hammer_fractions"])
    for key, st in sr["settings"].items():
        pap, sm_ = np.array(st["paper"]["flipped"]), np.array(st["sum"]["flipped"])
        paper_lo, paper_hi = (np.array(c) for c in st["paper"]["ci"])
        sum_lo = np.array(st["sum"]["ci"][0])
        safe = fr >= 0.6
        out[f"sign rule ({key})"] = (
            bool(np.all(pap[safe] == 0) and np.all(sm_[safe] == 0) and paper_lo[-1] > 0
                 and np.all(sum_lo <= paper_hi)),
            f"flips of {sr['n_reps']} per spammer fraction {np.round(1 - fr, 2).tolist()}: paper {pap.tolist()}, "
            f"sum {sm_.tolist()} (none with <= 40 % spammers; the paper's rule flips at 95 % spammers; "
            f"the sum rule never flips significantly more often)")
        # the symmetric-noise model (sign_flip_probability) against the measured flip rates, with
        # Bonferroni-corrected Clopper-Pearson intervals (family-wise false-alarm rate 5 %)
        n, R = int(st["n_workers"]), int(sr["n_reps"])
        k_vec = int(sr.get("n_labels", 5)) - 1
        pred = np.array([sign_flip_probability(n, int(round(a * n)), k_vec) for a in fr])
        lo, hi = binomial_ci(pap, R, confidence=1 - 0.05 / fr.size)
        out[f"sign rule flip rate = binomial model ({key})"] = (
            bool(np.all((lo <= pred) & (pred <= hi))),
            f"paper rule, measured {np.round(pap / R, 3).tolist()} vs model {np.round(pred, 3).tolist()} "
            f"(intervals at {1 - 0.05 / fr.size:.4f})")
    return out


def scaling_report(res: dict[str, Any]) -> str:
    """Markdown tables of the scaling measurements (printed by ``benchmarks/theorems_mc.py``)."""
    sm = scaling_summary(res)
    mm = sm["minimax"]
    mc = res["minimax_curve"]
    lines = [f"## Minimax: n s needed for pair error {mc['target']} (n = {mc['n_workers']}, m = {mc['n_tasks']}, "
             f"K = {mc['n_labels']})", "",
             "| q | D-bar | lower 8(1/2-eps)^2/D | TopTwo2 | ratio | oracle | ratio | Cor. 2 first term |",
             "|---|---|---|---|---|---|---|---|"]
    for i, r in enumerate(mc["rows"]):
        lines.append(f"| {r['confusion']} | {r['d_bar']:.4f} | {mm['lower'][i]:.1f} | {mm['TopTwo2']['queries'][i]:.1f} | "
                     f"{mm['TopTwo2']['ratio'][i]:.2f} | {mm['oracle MLE']['queries'][i]:.1f} | "
                     f"{mm['oracle MLE']['ratio'][i]:.2f} | {mm['cor2'][i]:.3g} |")
    lines.append(f"\nlog-log slopes on D-bar: TopTwo2 {mm['TopTwo2']['slope']:.2f} ± {mm['TopTwo2']['slope_se']:.2f}, "
                 f"oracle {mm['oracle MLE']['slope']:.2f} ± {mm['oracle MLE']['slope_se']:.2f}, lower bound -1, "
                 f"Cor. 2 first term {mm['cor2_slope']:.2f}")
    for name, (ok, msg) in scaling_checks(res).items():
        lines.append(f"- {'ok' if ok else 'FAILED'} {name}: {msg}")
    return "\n".join(lines)
