"""Mutation testing of the package's source: which layer of checks notices a changed formula.

``python -m theory_checks.mutate`` copies the repository to a temporary directory, and for each
:data:`SOURCE_MUTANTS` entry replaces one snippet of ``toptwo``'s source (found by its text, so
the mutants follow files when they move) and runs, in order,

1. ``symbolic`` — the code checks of ``theory_checks`` (:data:`theory_checks.checks_code.CODE_CHECKS`,
   the only checks that import ``toptwo``),
2. ``tests`` — a fast test subset (:data:`FAST_TESTS`, ``-m "not slow"``),
3. ``notebooks`` — the lessons that call the mutated code (nbval), only with ``--notebooks``.

A mutant is *killed* by a layer when that layer fails on the mutated copy (the unmutated copy
must pass every requested layer first, else the run stops). By default a mutant stops at the
first layer that kills it; ``--all-layers`` runs every requested layer. A mutant that survives
every layer must carry a written ``reason`` (an equivalent mutant, or what would be needed to
see it); ``--write`` stores the table as JSON for the theory status page.

``--fast`` runs :data:`FAST_SUBSET` through the symbolic layer only (CI, about two minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SourceMutant", "SOURCE_MUTANTS", "FAST_SUBSET", "FAST_TESTS", "LAYERS", "apply_mutant", "main"]

LAYERS = ("symbolic", "tests", "notebooks")

#: The fast test subset (layer 2): the unit tests of the model, Algorithms 1 and 2 (the printed and the
#: default paths), the EM and toptwo.theory (the theory_checks tests themselves are the symbolic layer).
FAST_TESTS = ("tests/test_model.py", "tests/test_binary.py", "tests/test_spectral.py", "tests/test_mle.py",
              # every default path: the leave-one-out p_hat, the pooled stage 1, the EM, the reference twins
              "tests/test_reliability_loo.py", "tests/test_stage1.py", "tests/test_em.py", "tests/test_reference.py",
              *(f"tests/test_theory_checks.py::{name}" for name in (
                  "test_theorem3a_max_sampling_rate_is_the_certified_root", "test_spammer_hammer_error_and_validation",
                  "test_theorem3b_as_printed_fails_for_heterogeneous_q", "test_theorem3b_corrected_bound_and_binomial_ci",
                  "test_lemma1_bound_and_tail", "test_theorem1_decay_and_every_task_small", "test_sign_rule_flips_small",
                  "test_minimax_gap_curves_small", "test_le_cam_queries_and_minimax_sample_complexity_small",
                  "test_sign_flip_probability", "test_scaling_checks_on_the_stored_results_and_a_wrong_law")))


@dataclass(frozen=True)
class SourceMutant:
    """One semantic change of ``toptwo``'s source.

    Attributes
    ----------
    name
        Short identifier.
    kind
        What kind of error it models (wrong constant, q <-> 1-q, removed step, ...).
    old, new
        ``old`` must occur exactly once in ``toptwo/**/*.py``; it is replaced by ``new``.
    paper
        The equation / step of the paper the mutated code implements.
    notebooks
        Lessons that call the mutated code (the notebook layer runs these).
    reason
        Why the mutant may survive every layer (required for a survivor).
    """

    name: str
    kind: str
    old: str
    new: str
    paper: str
    notebooks: tuple[str, ...] = ()
    reason: str = ""


_M = SourceMutant
SOURCE_MUTANTS: tuple[SourceMutant, ...] = (
    # ---- the model, eq. (1), Prop. 1, eq. (2)
    _M("eq1: q <-> 1-q in mu", "q <-> 1-q",
       "return base + p * (q * (c == a) + (1.0 - q) * (c == b))",
       "return base + p * ((1.0 - q) * (c == a) + q * (c == b))", "eq. (1)", ("01",)),
    _M("eq1: noise share (1-p)/(K-1)", "wrong constant",
       "base = (1.0 - p) / K\n", "base = (1.0 - p) / (K - 1)\n", "eq. (1)", ("01",)),
    _M("model weights: (1-q, q)", "q <-> 1-q",
       "weights = np.column_stack([conf, 1.0 - conf])", "weights = np.column_stack([1.0 - conf, conf])",
       "eq. (1), Prop. 1", ("01", "02")),
    _M("sampler: h drawn w.p. q", "q <-> 1-q",
       "cum = np.cumsum(self.weights[t], axis=1)", "cum = np.cumsum(self.weights[t][:, ::-1], axis=1)",
       "eq. (1) (sampler)", ("01",)),
    _M("sampler: reliable w.p. 1-p", "wrong sign",
       "reliable = gen.random(nnz) < self.reliability[w]", "reliable = gen.random(nnz) >= self.reliability[w]",
       "eq. (1) (sampler)", ("01",)),
    _M("binary conversion: A > k -> A >= k", "off-by-one in labels",
       "return np.where(np.asarray(labels) > np.asarray(k), 1.0, -1.0)",
       "return np.where(np.asarray(labels) >= np.asarray(k), 1.0, -1.0)", "Sec. 3 binary conversion", ("02",)),
    _M("Prop. 1: r^(k) sums weights up to k+1", "off-by-one in labels",
       "w = self.label_weights()[:, :k].sum(axis=1)", "w = self.label_weights()[:, :k + 1].sum(axis=1)",
       "Prop. 1", ("02",)),
    _M("Prop. 1: E[A^(k)] without the factor 2", "dropped factor",
       "return s * (K - 2 * k) / K + 2 * s * np.outer(self.reliability, self.r(k))",
       "return s * (K - 2 * k) / K + s * np.outer(self.reliability, self.r(k))", "Prop. 1", ("02", "03")),
    # ---- Algorithm 1
    _M("trimming threshold 2/(eta sqrt n) -> 1/(eta sqrt n)", "wrong constant",
       "out[out > 2.0 / (eta * np.sqrt(", "out[out > 1.0 / (eta * np.sqrt(", "Alg. 1 step 2 (trimming)", ("04", "05")),
    _M("trimming removed", "removed step",
       "out[out > 2.0 / (eta * np.sqrt(", "out[out > np.inf / (eta * np.sqrt(", "Alg. 1 step 2 (trimming)", ("04", "05")),
    _M("trimming threshold in 1/n", "wrong exponent",
       "out[out > 2.0 / (eta * np.sqrt(out.shape[-1] if n is None else n))]",
       "out[out > 2.0 / (eta * (out.shape[-1] if n is None else n))]", "Alg. 1 step 2 (trimming)", ("04", "05")),
    _M("sign rule removed", "removed step",
       "flip = (by_sum & (total < 0)) | (by_count & (pos < neg))", "flip = by_sum & False",
       "Alg. 1 step 2 (sign rule)", ("04", "05")),
    _M("step 3: 2s' -> s' (sparse path)", "dropped factor",
       "v /= 2.0 * s_prime", "v /= s_prime", "Alg. 1 step 3", ("04", "05")),
    _M("step 3: 2s' -> s' (dense path)", "dropped factor",
       "V.append(np.asarray(Yk, float).T @ ut / (2.0 * s_prime))", "V.append(np.asarray(Yk, float).T @ ut / s_prime)",
       "Alg. 1 step 3", ("09",)),
    _M("centring shift (K-2k)/K -> (K-k)/K", "wrong constant",
       "return (K - 2 * np.arange(1, K)) / K", "return (K - np.arange(1, K)) / K", "Prop. 1, Alg. 1 step 2",
       ("04", "05")),
    _M("step 5: K/(K-2) dropped", "dropped factor",
       "l_j = K / (K - n_top) * rest", "l_j = rest", "Alg. 1 step 5", ("04", "09")),
    _M("eq. (4): 1/K + dv/l", "wrong sign",
       "np.subtract(1.0 / n_labels, mass[:, t] / l_task, out=q[:, t])",
       "np.add(1.0 / n_labels, mass[:, t] / l_task, out=q[:, t])", "eq. (4)", ("04",)),
    # ---- the package's defaults (stacked left vector, automatic sign rule, leave-one-out p_hat) and ties
    _M("default sign rule: auto picks paper/sum the wrong way round", "changed default",
       'return "paper" if left_vector == "per_k" else "sum"', 'return "sum" if left_vector == "per_k" else "paper"',
       "Alg. 1 step 2 (sign rule, package default)", ("04",)),
    _M("stacked vector: projection onto u >= 0 dropped", "removed step",
       '[0.6, 0.0, 0.8]\n    """\n    return np.maximum(u, 0.0)\n', '[0.6, 0.0, 0.8]\n    """\n    return u\n', "Alg. 1 step 2 (pooled vector, package default)",
       ("04",)),
    _M("leave-one-out p_hat: c_ij not clipped to [2/K, 1]", "removed step",
       "np.clip(cij, T / K, 1.0, out=cij)", "np.clip(cij, -np.inf, np.inf, out=cij)",
       "eq. (5), leave-one-out (package default)", ("04",)),
    _M("leave-one-out p_hat: hits against 1/K", "wrong constant",
       "p_hat = (hits - T / K * n_used)", "p_hat = (hits - 1 / K * n_used)", "eq. (5), leave-one-out (package default)",
       ("04",)),
    _M("eq. (6) tie tolerance x1000", "changed tie rule",
       "return 2.0 * 8.0 * _EPS * (d + 2.0) * total", "return 1000.0 * 2.0 * 8.0 * _EPS * (d + 2.0) * total",
       "eq. (6) tie rule", ("04",)),
    _M("eq. (3) tie tolerance x1000", "changed tie rule",
       "return d * (U_ABS_TOL + d * _EPS) / s_prime + extra", "return 1000.0 * d * (U_ABS_TOL + d * _EPS) / s_prime + extra",
       "eq. (3) tie rule", ("04",)),
    _M("eq. (3): ties to the larger label", "changed tie rule",
       "else (cols[k] <= floor) & avail[k] for k in range(K)])\n",
       "else (cols[k] <= floor) & avail[k] for k in range(K)][::-1])\n        pick = K - 1 - pick\n",
       "eq. (3) tie rule", ("04",)),
    # ---- Algorithm 2
    _M("eq. (5): 2/K -> 1/K", "wrong constant",
       "p = K / (K - T) * (hits / denom - T / K)", "p = K / (K - T) * (hits / denom - 1 / K)", "eq. (5)", ("04",)),
    _M("eq. (5): K/(K-2) -> K/(K-1)", "wrong constant",
       "p = K / (K - T) * (hits / denom - T / K)", "p = K / (K - T + 1) * (hits / denom - T / K)", "eq. (5)", ("04",)),
    _M("eq. (6): (q, 1-q) -> (1-q, q)", "q <-> 1-q",
       "W = np.column_stack([W, 1.0 - W])", "W = np.column_stack([1.0 - W, W])", "eq. (6)", ("04",)),
    _M("eq. (6): weight without K", "wrong constant",
       "cwp = K * p / (1.0 - p)", "cwp = p / (1.0 - p)", "eq. (6)", ("04",)),
    _M("eq. (6): log(x+1) -> log(x)", "removed step",
       "np.log1p(w, out=w)", "np.log(w + 1e-300, out=w)", "eq. (6)", ("04",)),
    _M("eq. (6): ties to the larger label", "changed tie rule",
       "a = _first_true([pair_best[c] >= floor for c in range(K)])",
       "a = K - 1 - _first_true([pair_best[K - 1 - c] >= floor for c in range(K)])", "eq. (6) tie rule", ("04",)),
    _M("eq. (6): labels 0-based", "off-by-one in labels",
       "top[lo:hi, 0] = a + 1", "top[lo:hi, 0] = a", "eq. (6)", ("04",)),
    # ---- the theory module
    _M("Lemma 1: Bernstein's 1/2 dropped", "dropped factor",
       "expo = (t**2 / 2) / (m * sg + t / 3)", "expo = (t**2) / (m * sg + t / 3)", "Lemma 1", ("05",)),
    _M("Lemma 1: variance m sigma -> m sigma^2", "wrong variance",
       "expo = (t**2 / 2) / (m * sg + t / 3)", "expo = (t**2 / 2) / (m * sg**2 + t / 3)", "Lemma 1", ("05",)),
    _M("Lemma 1: 3/8 -> 3/4", "wrong constant",
       "expo = 3 * c**2 / 8 * m * sg * d**2", "expo = 3 * c**2 / 4 * m * sg * d**2", "Lemma 1", ("05",)),
    _M("Lemma 1: factor 2 of the two-sided bound dropped", "dropped factor",
       "return np.minimum(1.0, n * 2.0 * np.exp(-expo))", "return np.minimum(1.0, n * np.exp(-expo))", "Lemma 1",
       ("05",)),
    _M("Thm. 3(a): exponent 2 pbar ns -> pbar ns", "wrong exponent",
       "return (K - 1) / K * np.exp(-2.0 * pb * ns)", "return (K - 1) / K * np.exp(-pb * ns)", "Thm. 3(a)", ("05",)),
    _M("Thm. 3(a): (1-s)^n_h -> (1-s)^(n_h+1)", "off-by-one",
       "return (K - 1) / K * (1.0 - s) ** nh", "return (K - 1) / K * (1.0 - s) ** (nh + 1)", "Thm. 3(a)", ("05",)),
    _M("Thm. 3(a): s* -> 2/3", "wrong constant",
       "THEOREM3A_MAX_SAMPLING_RATE = 0.79681213002002", "THEOREM3A_MAX_SAMPLING_RATE = 0.6666666666666666",
       "Thm. 3(a)", ("05",)),
    _M("Thm. 3(b): Le Cam constant 3/8 (the paper's)", "wrong constant",
       "LE_CAM_PINSKER_CONSTANT = 0.5 - math.sqrt(2.0) / 8.0", "LE_CAM_PINSKER_CONSTANT = 0.375", "Thm. 3(b)",
       ("05",)),
    _M("Thm. 3(b): Pinsker sqrt(sD/8) -> sqrt(sD/4)", "wrong constant",
       "0.5 - np.sqrt(s * n * np.where(np.isinf(d), 0.0, d) / 8.0)",
       "0.5 - np.sqrt(s * n * np.where(np.isinf(d), 0.0, d) / 4.0)", "Thm. 3(b)", ("05",)),
    _M("Thm. 3(b): le_cam_queries (1/2-t) not squared", "wrong exponent",
       "return 8.0 * (0.5 - eps) ** 2 / d", "return 8.0 * (0.5 - eps) / d", "Thm. 3(b)", ("05",)),
    _M("Thm. 1: gap(q)^2 -> gap(q) on the x axis", "wrong exponent",
       "rates = xs / (P2 * gap**2)", "rates = xs / (P2 * gap)", "Thm. 1", ("05",)),
    _M("sign rule model: h + B <= n/2", "off-by-one",
       "threshold = math.ceil(n / 2 - h) - 1", "threshold = math.ceil(n / 2 - h)", "footnote l. 276", ("05",)),
    _M("D-bar: KL(mu_ab || mu_gh) (reversed)", "swapped arguments",
       "terms = np.where(P > 0, P * (np.log(P) - np.log(Q)), 0.0)",
       "terms = np.where(Q > 0, Q * (np.log(Q) - np.log(P)), 0.0)", "Sec. 5 D-bar", ("05",),
       reason="equivalent mutant: every alternative mu_(a,b) is a label permutation sigma of mu_(g,h), and "
              "KL(sigma P || P) = KL(P || sigma^-1 P) with sigma^-1 P another alternative, so the minimum D-bar^(j) "
              "is unchanged (for transpositions even each term is); no check can kill it."),
)

#: Mutants the CI runs through the symbolic layer (one per part of the package).
FAST_SUBSET = ("eq1: q <-> 1-q in mu", "binary conversion: A > k -> A >= k", "trimming threshold 2/(eta sqrt n) -> 1/(eta sqrt n)",
               "step 3: 2s' -> s' (sparse path)", "eq. (5): 2/K -> 1/K", "eq. (6): ties to the larger label",
               "Lemma 1: Bernstein's 1/2 dropped", "Thm. 3(a): exponent 2 pbar ns -> pbar ns",
               "default sign rule: auto picks paper/sum the wrong way round", "leave-one-out p_hat: hits against 1/K")


def _repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


def _ignore(dirpath: str, names: list[str]) -> list[str]:
    skip = {".git", ".ci-venv", "_build", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache",
            ".hypothesis", ".ipynb_checkpoints"}
    return [n for n in names if n in skip or n.endswith(".egg-info")]


def find_snippet(root: Path, old: str) -> list[Path]:
    """Files of ``root/toptwo`` (recursively) containing ``old`` (each counted once per occurrence)."""
    hits: list[Path] = []
    for path in sorted((root / "toptwo").rglob("*.py")):
        hits += [path] * path.read_text(encoding="utf-8").count(old)
    return hits


def apply_mutant(root: Path, mutant: SourceMutant) -> tuple[Path, str]:
    """Apply ``mutant`` in the copy at ``root``; return (file, original text) for :func:`restore`."""
    hits = find_snippet(root, mutant.old)
    if len(hits) != 1:
        raise LookupError(f"mutant {mutant.name!r}: its snippet occurs {len(hits)} times in toptwo/ "
                          f"(must be exactly once): {mutant.old!r}")
    path = hits[0]
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")
    return path, text


def _layer_command(layer: str, mutant: SourceMutant | None) -> list[str] | None:
    py = sys.executable
    if layer == "symbolic":
        return [py, "-m", "theory_checks.mutate", "--run-code-checks"]
    if layer == "tests":
        return [py, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow", *FAST_TESTS]
    if layer == "notebooks":
        nbs = sorted({nb for m in SOURCE_MUTANTS for nb in m.notebooks}) if mutant is None else list(mutant.notebooks)
        if not nbs:
            return None
        paths = sorted(str(p.relative_to(_repo_root())) for nb in nbs for p in (_repo_root() / "notebooks").glob(f"{nb}_*.ipynb"))
        return [py, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *paths]
    raise ValueError(f"unknown layer {layer!r}; choose from {LAYERS}")


def run_layer(root: Path, layer: str, mutant: SourceMutant | None, timeout: float) -> dict[str, Any]:
    """Run one layer in the copy at ``root``: {'passed': bool, 'seconds', 'detail'}."""
    cmd = _layer_command(layer, mutant)
    if cmd is None:
        return {"passed": True, "seconds": 0.0, "detail": "no notebook calls this code"}
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"passed": False, "seconds": time.perf_counter() - t0, "detail": f"timeout after {timeout:.0f} s"}
    out = (proc.stdout + proc.stderr).strip().splitlines()
    detail = next((ln for ln in reversed(out) if ln.startswith(("KILLED BY", "FAILED", "ERROR"))), out[-1] if out else "")
    return {"passed": proc.returncode == 0, "seconds": time.perf_counter() - t0, "detail": detail[:300]}


def run_code_checks() -> int:
    """Layer 1 inside the copy: run the code checks; print the first that fails; exit status."""
    from . import CHECKS, ClaimFailed
    from .checks_code import CODE_CHECKS

    for name in CODE_CHECKS:
        try:
            CHECKS[name]()
        except ClaimFailed as exc:
            print(f"KILLED BY {name}: {str(exc)[:200]}")
            return 1
        except Exception as exc:  # noqa: BLE001 - a crash of the mutated code also fails the layer
            print(f"KILLED BY {name} (crash): {type(exc).__name__}: {str(exc)[:200]}")
            return 1
    print(f"{len(CODE_CHECKS)} code checks passed")
    return 0


def run(mutants: Sequence[SourceMutant], layers: Sequence[str], *, all_layers: bool = False,
        timeout: float = 900.0, log=print) -> list[dict[str, Any]]:
    """Run ``mutants`` through ``layers`` in a temporary copy of the repository; one row per mutant."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="toptwo-mutants-") as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(_repo_root(), root, ignore=_ignore)
        for layer in layers:
            base = run_layer(root, layer, None, timeout)
            log(f"baseline {layer}: {'passes' if base['passed'] else 'FAILS'} ({base['seconds']:.0f} s)")
            if not base["passed"]:
                raise RuntimeError(f"the unmutated copy fails layer {layer!r}: {base['detail']}")
        for mt in mutants:
            path, text = apply_mutant(root, mt)
            row: dict[str, Any] = {"name": mt.name, "kind": mt.kind, "paper": mt.paper,
                                   "file": str(path.relative_to(root)), "layers": {}, "killed_by": None}
            try:
                for layer in layers:
                    res = run_layer(root, layer, mt, timeout)
                    row["layers"][layer] = {"killed": not res["passed"], "seconds": round(res["seconds"], 1),
                                            "detail": res["detail"]}
                    if not res["passed"] and row["killed_by"] is None:
                        row["killed_by"] = layer
                        if not all_layers:
                            break
            finally:
                path.write_text(text, encoding="utf-8")
            row["reason"] = mt.reason if row["killed_by"] is None else ""
            log(f"{mt.name}: {'killed by ' + row['killed_by'] if row['killed_by'] else 'SURVIVED'}")
            rows.append(row)
    return rows


def merge_rows(stored: dict[str, Any], rows: list[dict[str, Any]], layers: Sequence[str]
               ) -> tuple[list[dict[str, Any]], list[str]]:
    """Add this run's layer results to a stored run (same mutants); ``killed_by`` is the first killing
    layer in :data:`LAYERS` order, ``reason`` the mutant's reason if none kills it."""
    reasons = {m.name: m.reason for m in SOURCE_MUTANTS}
    new = {r["name"]: r for r in rows}
    out = []
    known = {r["name"] for r in stored["rows"]}
    order = {m.name: i for i, m in enumerate(SOURCE_MUTANTS)}
    fresh = [{**r, "layers": {}} for r in rows if r["name"] not in known]   # mutants the stored run lacks
    current = [r for r in stored["rows"] if r["name"] in order]              # mutants since removed: dropped
    for r in sorted(current + fresh, key=lambda r: order[r["name"]]):
        merged = {**r, "layers": {**r["layers"], **new.get(r["name"], {}).get("layers", {})}}
        merged["killed_by"] = next((la for la in LAYERS if merged["layers"].get(la, {}).get("killed")), None)
        merged["reason"] = reasons.get(r["name"], "") if merged["killed_by"] is None else ""
        out.append(merged)
    all_layers = [la for la in LAYERS if la in set(stored["layers"]) | set(layers)]
    return out, all_layers


def format_table(rows: list[dict[str, Any]], layers: Sequence[str]) -> str:
    """Markdown table: mutant | kind | paper | one column per layer | verdict."""
    def cell(r: dict[str, Any], layer: str) -> str:
        res = r["layers"].get(layer)
        return "-" if res is None else ("killed" if res["killed"] else "survived")

    lines = ["| mutant | kind | paper | " + " | ".join(layers) + " | verdict |",
             "|---|---|---|" + "---|" * len(layers) + "---|"]
    for r in rows:
        verdict = f"killed by {r['killed_by']}" if r["killed_by"] else f"survived: {r['reason'] or 'NO REASON GIVEN'}"
        esc = [str(x).replace("|", "\\|") for x in (r["name"], r["kind"], r["paper"], verdict)]
        lines.append(f"| {esc[0]} | {esc[1]} | {esc[2]} | " + " | ".join(cell(r, la) for la in layers)
                     + f" | {esc[3]} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line; exit 1 when a mutant survives without a written reason."""
    ap = argparse.ArgumentParser(prog="python -m theory_checks.mutate", description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", default="symbolic,tests", help="comma-separated, from symbolic,tests,notebooks")
    ap.add_argument("--notebooks", action="store_true", help="add the notebook layer")
    ap.add_argument("--all-layers", action="store_true", help="run every layer even after a kill")
    ap.add_argument("--fast", action="store_true", help="the CI subset through the symbolic layer only")
    ap.add_argument("--only", action="append", default=[], help="run only the mutant with this name (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--write", metavar="JSON", help="store the rows as JSON (for the status page)")
    ap.add_argument("--merge", metavar="JSON", help="merge this run's layers into a stored run's rows (per mutant)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per layer run")
    ap.add_argument("--run-code-checks", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.run_code_checks:
        return run_code_checks()
    if args.list:
        for m in SOURCE_MUTANTS:
            print(f"{m.name}  [{m.kind}; {m.paper}]")
        return 0
    layers = ["symbolic"] if args.fast else [x for x in args.layers.split(",") if x]
    if args.notebooks and "notebooks" not in layers:
        layers.append("notebooks")
    bad = [x for x in layers if x not in LAYERS]
    if bad:
        ap.error(f"unknown layer(s) {bad}; choose from {LAYERS}")
    names = list(FAST_SUBSET) if args.fast else args.only
    by_name = {m.name: m for m in SOURCE_MUTANTS}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        ap.error(f"unknown mutant(s) {unknown}; see --list")
    mutants = [by_name[n] for n in names] if names else list(SOURCE_MUTANTS)
    t0 = time.perf_counter()
    rows = run(mutants, layers, all_layers=args.all_layers, timeout=args.timeout,
               log=lambda s: print(s, file=sys.stderr, flush=True))
    if args.merge:
        rows, layers = merge_rows(json.loads(Path(args.merge).read_text(encoding="utf-8")), rows, layers)
    print(format_table(rows, layers))
    killed = sum(r["killed_by"] is not None for r in rows)
    explained = sum(r["killed_by"] is None and bool(r["reason"]) for r in rows)
    print(f"\n{killed}/{len(rows)} mutants killed ({explained} survivors with a written reason) "
          f"in {time.perf_counter() - t0:.0f} s")
    if args.write:
        Path(args.write).parent.mkdir(parents=True, exist_ok=True)
        summary = {"layers": layers, "mutants": len(rows), "killed": killed, "explained_survivors": explained,
                   "rows": rows}
        Path(args.write).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    if args.fast:
        return 0 if killed == len(rows) else 1
    return 0 if killed + explained == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
