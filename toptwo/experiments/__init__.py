r"""One experiment layer: a sweep, its draws and scores, and the statistics of comparisons.

Every sweep of methods over sampling rates or answer budgets -- the error curves of
notebooks 04-05, the reproductions of the paper's Sec. 6 and Appendices C-E (notebooks
06-09, ``benchmarks/reproduce_paper.py``, ``benchmarks/sample_complexity.py``) -- is one
call of :func:`sweep`:

    for every grid point x and replicate r:
        source  -> a model (fixed, or drawn fresh per replicate) or real responses
        draw    -> the data: A ~ eq. (1) [`eqn:A_dist`] at sampling rate s = x
                   (``draw="rate"``), or at most d = x answers per task of the real
                   responses (``draw="per_task"``, Fig. 2a [`fig:color_error`])
        methods -> every method fitted on the same A (paired comparisons)
        score   -> one record per method: error rates and estimation errors

and the statistics below summarise the records: :func:`aggregate` (mean and Student-t
95% CI per method and x), :func:`paired_gap` and :func:`paired_differences` (differences
paired per draw), :func:`paired_row_tests` (a t test per stored difference),
:func:`grid_average` and :func:`compare_methods` (paired t tests on grid averages), each
family Holm-corrected (:func:`holm`, :func:`holm_family`), and :func:`queries_needed`
(where an error curve reaches a target). Quantiles and tests come from :mod:`scipy.stats`.

Not sweeps, and seeded on their own (each documents how): the Monte-Carlo checks of single
theorems in :mod:`toptwo.theory` (their own grids of crowds), the one-fit-per-dataset table
of ``reproduce_paper.py baselines``, and the benchmarks ``em.py``, ``splitting.py``,
``baselines.py`` and ``theorems_mc.py``.

The theory quantities live beside the model and the theorems
(:func:`toptwo.model.kl_divergence_bar`, :func:`toptwo.theory.minimax_lower_bound_g`), the
plots in :mod:`toptwo.viz`, and the paper's method registry and the stored benchmark
results in :mod:`toptwo.experiments.paper`.

Seeding: one scheme (:func:`replicate_seed`)
--------------------------------------------
Replicate r at grid point x of a sweep with root ``seed`` and ``key`` draws everything from

    SeedSequence(seed, spawn_key=(*key, round(1e5 x), 0, r))

with three independent streams below it: ``(..., 0)`` draws the model (when the source is
a factory), ``(..., 1)`` draws the data (the sample A or the subsample), and
``(..., 2, crc32(name))`` is the generator handed to the method called ``name``. Hence

* replicate r at x is the same draw whatever the grid and however many replicates are run
  (a notebook's small run is a prefix of a benchmark's full run);
* a method's results depend neither on which other methods run nor on their order;
* ``key`` separates sweeps that share a seed (e.g. one scenario from another).

(The constant 0 before r is where earlier versions spawned one child per grid point; it is
kept so that the stored runs of ``benchmarks/reproduce_paper.py`` stay reproducible.)
"""

from __future__ import annotations

from . import paper
from .stats import (aggregate, paired_gap, paired_differences, paired_row_tests, holm_family,
                    grid_average, compare_methods, holm, queries_needed, paired_tolerance,
                    t_claim, estimate_claim, sweep_failures)
from .sweeps import (sweep, replicate_seed, grid_key, score_top_two, score_top_t, score_truth,
                     subsample_per_task, vote_ratio, METRICS, DRAWS)

__all__ = ["sweep", "replicate_seed", "grid_key", "score_top_two", "score_top_t", "score_truth", "subsample_per_task", "vote_ratio", "METRICS", "DRAWS", "aggregate", "paired_gap", "paired_differences", "paired_row_tests", "holm_family", "grid_average", "compare_methods", "holm", "queries_needed", "paired_tolerance", "t_claim", "estimate_claim", "sweep_failures", "paper"]
