"""Beyond the paper: estimators that extend TopTwo1/TopTwo2.

* :class:`TopTwoEM` -- EM on the top-two model itself, started from TopTwo2, with
  calibrated posteriors over the top-two pair.

TopTwo2's own refinement option (``n_refinements``) lives with TopTwo2 in
:mod:`toptwo.mle`.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["TopTwoEM"]


def __getattr__(name: str) -> Any:
    # on first use: importing a submodule (``toptwo.extensions._em_grid``) does not load
    # the estimators
    if name == "TopTwoEM":
        return importlib.import_module(".em", __name__).TopTwoEM
    raise AttributeError(f"module 'toptwo.extensions' has no attribute {name!r}")
