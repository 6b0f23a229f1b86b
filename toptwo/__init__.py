"""toptwo: top-two answers and confusion probabilities in multi-choice crowdsourcing.

Implements the top-two model and both algorithms of

    H. Jeong and H. W. Chung, "Recovering Top-Two Answers and Confusion Probability in
    Multi-Choice Crowdsourcing", ICML 2023.

Conventions (the paper's): the response matrix A has shape (n_workers, n_tasks), labels
1..K, 0 = not answered. p = worker reliabilities, q = task confusion probabilities,
(g, h) = ground truth and most confusing answer.

Layout, by role:

* the core -- :mod:`toptwo.model` (eq. (1)), :mod:`toptwo.responses` (the response
  matrix), :mod:`toptwo.binary` (Proposition 1's conversion), :mod:`toptwo.spectral`
  (Algorithm 1, :class:`TopTwo1`), :mod:`toptwo.mle` (Algorithm 2, :class:`TopTwo2`,
  :class:`OracleMLE`), :mod:`toptwo.metrics`, and :mod:`toptwo.reference` (both
  algorithms exactly as printed, dense NumPy, for reading);
* :mod:`toptwo.baselines` -- the methods of the paper's comparison;
* :mod:`toptwo.extensions` -- beyond the paper (:class:`TopTwoEM`);
* :mod:`toptwo.experiments` -- sweeps, statistics, the method registry and the stored
  runs; :mod:`toptwo.theory` -- bounds, Monte-Carlo checks, scaling fits;
* :mod:`toptwo.viz` (plots), :mod:`toptwo.datasets` (the paper's real data),
  :mod:`toptwo.io` (CSV), :mod:`toptwo.softlabels`, :mod:`toptwo.teaching` (exercises).

Submodules other than the core load on first use, so ``import toptwo`` stays quick.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._startup import cli_imports as _cli_imports

# as the command line, a failed numpy/scipy import is one line, not a traceback
with _cli_imports():
    from .binary import binary_stack, from_binary, to_binary
    from .metrics import top_two_errors
    from .mle import OracleMLE, TopTwo2, best_pairs, estimate_reliability, plugin_mle
    from .model import SCENARIOS, TopTwoModel, label_distribution
    from .responses import Responses, as_responses
    from .spectral import TopTwo1, spectral_estimate, spectral_from_matrices, split_entries

__version__ = "0.1.0"

#: Submodules imported on first attribute access (``toptwo.experiments`` ...).
_LAZY_SUBMODULES = ("baselines", "datasets", "experiments", "extensions", "io", "posterior",
                    "reference", "report", "softlabels", "teaching", "theory", "viz")
#: Names kept for code written before the baselines moved to ``toptwo.baselines``
#: (``toptwo.MajorityVote`` is ``toptwo.baselines.MajorityVote``); resolved lazily.
_COMPAT = {name: "baselines" for name in (
    "MajorityVote", "DawidSkene", "OneCoinDawidSkene", "OptDawidSkene", "MultiSPA", "MMSR",
    "PGD", "MACE", "GLAD", "EBCC")}
_COMPAT.update({name: "datasets" for name in ("DATASETS", "Dataset", "answer_shares",
                                               "load_dataset")})


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _COMPAT:
        return getattr(importlib.import_module(f".{_COMPAT[name]}", __name__), name)
    if name == "TopTwoEM":   # beyond the paper: loaded on first use
        return importlib.import_module(".extensions.em", __name__).TopTwoEM
    if name == "paper":   # the stored runs and method registry, now in toptwo.experiments
        return importlib.import_module(".experiments.paper", __name__)
    raise AttributeError(f"module 'toptwo' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES) | {"TopTwoEM"})


__all__ = [
    "TopTwoModel", "SCENARIOS", "label_distribution", "Responses", "as_responses",
    "TopTwo1", "TopTwo2", "OracleMLE", "TopTwoEM",
    "spectral_estimate", "spectral_from_matrices", "split_entries",
    "best_pairs", "estimate_reliability", "plugin_mle",
    "binary_stack", "from_binary", "to_binary", "top_two_errors",
]
