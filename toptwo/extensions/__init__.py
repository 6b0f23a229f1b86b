"""Beyond the paper: estimators that extend TopTwo1/TopTwo2 (notebook 10).

* :class:`TopTwoEM` -- EM on the top-two model itself, started from TopTwo2, with
  calibrated posteriors over the top-two pair.

TopTwo2's own refinement option (``n_refinements``) lives with TopTwo2 in
:mod:`toptwo.mle`.
"""

from .em import TopTwoEM

__all__ = ["TopTwoEM"]
