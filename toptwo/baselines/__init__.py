"""The baselines of the paper's comparison (Sec. 6), one module per method.

Grouped as crowd-kit groups its aggregators: every class here has the estimator surface of
:class:`toptwo.TopTwo2` (``fit(A, n_labels)``, ``top_two_``, ``confusion_``,
``soft_labels()``), so the experiments can swap them freely.

========================  ==============================================================
:class:`MajorityVote`      the T most frequent answers of each task
:class:`DawidSkene`        Dawid & Skene (1979) EM, full / class / one-coin worker models
:class:`OneCoinDawidSkene` Dawid-Skene with one accuracy per worker
:class:`OptDawidSkene`     OPT-D&S: spectral initialisation + EM (Zhang et al. 2014)
:class:`MultiSPA`          MultiSPA (Ibrahim et al. 2019)
:class:`MMSR`              M-MSR (Ma & Olshevsky 2020)
:class:`PGD`               projected gradient descent on the rank-one model
:class:`MACE`              MACE (Hovy et al. 2013)
:class:`GLAD`              GLAD (Whitehill et al. 2009)
:class:`EBCC`              EBCC (Li et al. 2019)
========================  ==============================================================
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .dawid_skene import DawidSkene, OneCoinDawidSkene
    from .ebcc import EBCC
    from .glad import GLAD
    from .mace import MACE
    from .majority import MajorityVote
    from .mmsr import MMSR
    from .multispa import MultiSPA
    from .opt_ds import OptDawidSkene
    from .pgd import PGD

#: Each class's module, imported on first use (GLAD and MultiSPA need scipy.optimize,
#: 0.2-0.5 s, which ``python -m toptwo --help`` and majority vote do not).
_MODULES = {"DawidSkene": "dawid_skene", "OneCoinDawidSkene": "dawid_skene", "EBCC": "ebcc",
            "GLAD": "glad", "MACE": "mace", "MajorityVote": "majority", "MMSR": "mmsr",
            "MultiSPA": "multispa", "OptDawidSkene": "opt_ds", "PGD": "pgd",
            "EM_TOL": "_base", "em_converged": "_base"}


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return getattr(importlib.import_module(f".{_MODULES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULES))


__all__ = ["MajorityVote", "DawidSkene", "OneCoinDawidSkene", "OptDawidSkene", "MultiSPA",
           "MMSR", "PGD", "MACE", "GLAD", "EBCC", "EM_TOL", "em_converged"]
