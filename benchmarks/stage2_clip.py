"""Does the p-hat clip of eq. (6) explain TopTwo2's gap on spammer-heavy crowds? (issue 25)

TopTwo2 (default stage 1) with p_hat clipped to [0.05, 0.99] (the package),
[0.01, 0.99] and [0.001, 0.999] (the authors' code), and TopTwo1, against the oracle MLE:
mean paired pair-error gap over the rates with its s.e., n = 50, m = 500, K = 5, 20
replicates per rate (seed 2025, key (25,): not the draws of ``benchmarks/stage1.py``,
which keys each crowd by its index)::

    OMP_NUM_THREADS=1 python benchmarks/stage2_clip.py hammer5 few_smart

Prints one line per (crowd, variant); nothing is written. About a minute per crowd.
"""

from __future__ import annotations

import sys

import toptwo
import toptwo.mle as mle
from toptwo import experiments as ex

RATES = (0.1, 0.2, 0.3, 0.5, 1.0)


def crowd(name):
    if name == "hammer5":
        return lambda g: toptwo.TopTwoModel.spammer_hammer(50, 500, 5, hammer_fraction=0.1,
                                                            rng=g)
    return lambda g: toptwo.TopTwoModel.scenario(name, 50, 500, 5, rng=g)


class Clipped:
    """TopTwo2() whose fit runs with p_hat clipped to [lo, hi] (module constants)."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __call__(self, model):
        est, lo, hi = toptwo.TopTwo2(reliability_estimator="moment"), self.lo, self.hi
        fit = est.fit

        def clipped_fit(A, *args, **kwargs):
            old = mle.MIN_RELIABILITY, mle.MAX_RELIABILITY
            mle.MIN_RELIABILITY, mle.MAX_RELIABILITY = lo, hi
            try:
                return fit(A, *args, **kwargs)
            finally:
                mle.MIN_RELIABILITY, mle.MAX_RELIABILITY = old

        est.fit = clipped_fit
        return est


METHODS = {"Oracle": lambda mo: toptwo.OracleMLE(mo.reliability, mo.confusion),
           "TopTwo2 clip [0.05, 0.99]": Clipped(0.05, 0.99),
           "TopTwo2 clip [0.01, 0.99]": Clipped(0.01, 0.99),
           "TopTwo2 clip [0.001, 0.999]": Clipped(0.001, 0.999),
           "TopTwo1": lambda mo: toptwo.TopTwo1()}


def main(argv):
    for name in argv or ["hammer5"]:
        recs = ex.sweep(crowd(name), METHODS, RATES, 20, seed=2025, key=(25,))
        for m in METHODS:
            if m != "Oracle":
                g = ex.paired_gap(recs, m, "Oracle", "err_pair", x="sampling_rate")
                print(f"{name:10s} {m:28s} {g['mean']:+.4f} ± {g['sem']:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
