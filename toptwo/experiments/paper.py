"""The paper's comparison: which methods, and the stored runs of ``benchmarks/``.

Two things the reproductions (notebooks 06-09, ``benchmarks/``) share, and nothing else:

* **The method registry.** :data:`METHODS` maps each display name of the comparison in
  Sec. 6.1 / Fig. 1 [`fig:synthetic_acc`] (and the package's extras) to a builder
  ``(model, rng, n_top) -> unfitted estimator``; :func:`make` builds one estimator and
  :func:`method_factories` the ``methods`` argument of :func:`toptwo.experiments.sweep`.
  :data:`METHOD_NOTES` says what each name means where a choice was made.
* **The stored results.** The scripts in ``benchmarks/`` write JSON files: the runs a
  lesson reads to ``toptwo/experiments/results/`` (package data: they ship in the wheel,
  so the lessons run from a plain ``pip install``, on Colab and on Binder), the others
  (:data:`BENCHMARK_RESULTS`: timings, speed, the runs behind the design notes) to
  ``benchmarks/results/`` in the repository. :func:`load` reads one as a
  :class:`StoredRun`, whose accessors (:meth:`StoredRun.summary`, :meth:`StoredRun.raw`,
  :meth:`StoredRun.paired`, :meth:`StoredRun.gap_to_oracle`) replace paths into the raw
  JSON. The folder is

  1. the one named by the environment variable ``TOPTWO_RESULTS``, if set;
  2. ``results/`` beside this module (installed with the package), or
     ``benchmarks/results/`` of the repository checkout for :data:`BENCHMARK_RESULTS`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .._validation import check_int

__all__ = ["METHODS", "METHOD_NOTES", "PAPER_NAMES", "ALL_METHOD_NAMES", "BASELINE_NAMES",
           "ESTIMATOR_NAMES", "TOP_T_NAMES", "make", "method_factories", "load", "results_dir",
           "RESULT_NAMES", "BENCHMARK_RESULTS", "StoredRun"]


# ------------------------------------------------------------------------- registry
def _oracle(model: Any, rng: Any, T: int) -> Any:
    """The oracle MLE of ``model`` (it needs the true p and q)."""
    from ..mle import OracleMLE

    if model is None:
        raise ValueError("the oracle MLE needs the true model (p, q); none was given "
                         "(real data have no oracle).")
    return OracleMLE(model.reliability, model.confusion if T == 2 else model.weights)


def _registry() -> dict[str, Callable[[Any, Any, int], Any]]:
    from ..baselines.majority import MajorityVote
    from ..baselines.dawid_skene import DawidSkene, OneCoinDawidSkene
    from ..baselines.ebcc import EBCC
    from ..extensions.em import TopTwoEM
    from ..baselines.glad import GLAD
    from ..baselines.mace import MACE
    from ..mle import TopTwo2
    from ..baselines.mmsr import MMSR
    from ..baselines.multispa import MultiSPA
    from ..baselines.opt_ds import OptDawidSkene
    from ..baselines.pgd import PGD
    from ..spectral import TopTwo1

    return {
        "MV": lambda model, rng, T: MajorityVote(n_top=T, rng=rng),
        "MV-D&S": lambda model, rng, T: DawidSkene(confusion="one_coin"),
        "MV-D&S (full)": lambda model, rng, T: DawidSkene(),
        "OneCoinDS": lambda model, rng, T: OneCoinDawidSkene(),
        "OPT-D&S": lambda model, rng, T: OptDawidSkene(confusion="one_coin", rng=rng),
        "OPT-D&S (full)": lambda model, rng, T: OptDawidSkene(rng=rng),
        "PGD": lambda model, rng, T: PGD(),
        "M-MSR": lambda model, rng, T: MMSR(rng=rng),
        "MultiSPA-KL": lambda model, rng, T: MultiSPA(refine="kl"),
        "MultiSPA-EM": lambda model, rng, T: MultiSPA(refine="em", confusion="one_coin"),
        "MultiSPA-EM (full)": lambda model, rng, T: MultiSPA(refine="em"),
        "EBCC": lambda model, rng, T: EBCC(rng=rng),
        "MACE": lambda model, rng, T: MACE(rng=rng),
        "GLAD": lambda model, rng, T: GLAD(),
        "TopTwo1": lambda model, rng, T: TopTwo1(n_top=T, rng=rng),
        # Algorithm 2 with eq. (5) as printed (the stored runs); "TopTwo2 LOO" is
        # toptwo.TopTwo2()'s default, eq. (5) left one out
        "TopTwo2": lambda model, rng, T: TopTwo2(reliability_estimator="moment", n_top=T,
                                                 rng=rng),
        "TopTwo2 LOO": lambda model, rng, T: TopTwo2(n_top=T, rng=rng),
        "TopTwo2 split": lambda model, rng, T: TopTwo2(reliability_estimator="moment",
                                                       sample_splitting=True, n_top=T,
                                                       rng=rng),
        "TopTwo2 refine3": lambda model, rng, T: TopTwo2(reliability_estimator="moment",
                                                         n_refinements=3, rng=rng),
        "TopTwoEM": lambda model, rng, T: TopTwoEM(rng=rng),
        "Oracle": _oracle,
    }


#: Display name -> builder ``(model, rng, n_top) -> unfitted estimator``. ``model`` is
#: needed by the oracle only (the true p and q); ``rng`` goes to the estimators that take
#: one; ``n_top`` > 2 is accepted by the names in :data:`TOP_T_NAMES` only.
METHODS: dict[str, Callable[[Any, Any, int], Any]] = _registry()

#: The methods that recover ordered top-T answers (Appendix `subsec:top_T`).
TOP_T_NAMES = ("MV", "TopTwo1", "TopTwo2", "TopTwo2 LOO", "TopTwo2 split", "Oracle")

#: Every name of :data:`METHODS` except the oracle: the estimators a user can run on data.
ESTIMATOR_NAMES = tuple(name for name in METHODS if name != "Oracle")

#: The paper's methods (Sec. 6.1, Fig. 1 [`fig:synthetic_acc`]) in the notebooks' plotting
#: order.
PAPER_NAMES = ("MV", "MV-D&S", "OPT-D&S", "PGD", "M-MSR", "MultiSPA-KL", "MultiSPA-EM",
               "EBCC", "TopTwo1", "TopTwo2", "Oracle")
#: The paper's methods, then the package's extras (the textbook full-matrix D&S, MACE, GLAD
#: and two variants of TopTwo2): the methods of ``benchmarks/reproduce_paper.py``.
#: ``OneCoinDS`` is left out: it is the same one-coin EM as ``"MV-D&S"`` (identical answers).
ALL_METHOD_NAMES = PAPER_NAMES + ("MV-D&S (full)", "MACE", "GLAD", "TopTwo2 split",
                                  "TopTwo2 refine3")
#: The methods of ``benchmarks/reproduce_paper.py baselines`` (the seven datasets).
BASELINE_NAMES = ("MV", "MV-D&S", "MV-D&S (full)", "OPT-D&S", "PGD", "M-MSR",
                  "MultiSPA-KL", "MultiSPA-EM", "EBCC", "MACE", "GLAD", "TopTwo1",
                  "TopTwo2", "Oracle")

#: What each name means where a choice was made (see the modules for details).
METHOD_NOTES: dict[str, str] = {
    "MV-D&S": "Dawid-Skene EM from majority vote with the one-coin worker model "
              "(Zhang et al.'s AggregateCFG mode 1); the free K x K model drifts to "
              "label-mixing optima on top-two data (see DawidSkene's Notes) and is "
              "'MV-D&S (full)'.",
    "OPT-D&S": "Zhang et al.'s three-view tensor initialisation, then the same one-coin "
               "EM as 'MV-D&S'; 'OPT-D&S (full)' runs the free K x K EM.",
    "PGD": "projected-gradient rank-one completion of the agreement matrix, then the "
           "one-coin MLE (step size and start chosen here, see toptwo.pgd).",
    "M-MSR": "M-MSR iteration; signs from the leading eigenvector of sign(C) (the paper "
             "uses a graph construction).",
    "MultiSPA-KL": "SPA on pairwise co-occurrences (permutations resolved by maximising "
                   "the diagonal), then the KL fit of the co-occurrences by L-BFGS.",
    "MultiSPA-EM": "MultiSPA matrices, then the same one-coin EM as 'MV-D&S'; "
                   "'MultiSPA-EM (full)' runs the free K x K EM.",
    "EBCC": "mean-field VB with 10 subtypes per class, the authors' default priors.",
    "MACE": "EM (no variational Bayes), best of 10 random restarts.",
    "GLAD": "EM with an L-BFGS M-step, N(1, 1) priors on alpha and log beta.",
    "TopTwo2": "Algorithm 2 with the package's stage 1 and eq. (5) as printed "
               "(reliability_estimator='moment'); toptwo.TopTwo2()'s default p is eq. (5) left "
               "one out, 'TopTwo2 LOO' (docs/design_stage1.md).",
    "TopTwo2 LOO": "toptwo.TopTwo2() with its defaults: eq. (5) with each answer left out "
                   "of its own task's pair (beyond the paper).",
    "TopTwo2 refine3": "TopTwo2 followed by three hard-EM refinements of (p, q) (beyond "
                       "the paper).",
    "TopTwoEM": "EM on the full likelihood of eq. (1) from TopTwo2 (beyond the paper).",
}


def _check_name(name: Any, T: int, owner: str) -> str:
    if not isinstance(name, str) or name not in METHODS:
        raise ValueError(f"The method names given to {owner} must be names from "
                         f"{sorted(METHODS)}; got {name!r} instead.")
    if T != 2 and name not in TOP_T_NAMES:
        raise ValueError(f"{owner}: {name!r} recovers top-two answers only; with n_top={T} "
                         f"use one of {TOP_T_NAMES}.")
    return name


def make(name: str, *, rng: Any = None, model: Any = None, n_top: int = 2) -> Any:
    """One unfitted estimator of the comparison by its display name.

    Parameters
    ----------
    name : str
        A key of :data:`METHODS` (e.g. ``"MV-D&S"``, ``"TopTwo2"``, ``"Oracle"``).
    rng : int, Generator or None
        Passed to the estimators that take an ``rng``.
    model : TopTwoModel, optional
        The true model: needed by ``"Oracle"`` only.
    n_top : int, default=2
        T; values above 2 are accepted by the names in :data:`TOP_T_NAMES` only.
    """
    T = check_int(n_top, "n_top", owner="make", minimum=2)
    return METHODS[_check_name(name, T, "make")](model, rng, T)


def method_factories(names: Sequence[str] = ALL_METHOD_NAMES, *, n_top: int = 2
                     ) -> dict[str, Callable[[Any, np.random.Generator], Any]]:
    """The ``methods`` argument of :func:`toptwo.experiments.sweep` for these names.

    Parameters
    ----------
    names : sequence of str, default=ALL_METHOD_NAMES
        Display names (keys of :data:`METHODS`).
    n_top : int, default=2
        T passed to the top-T methods (and which weights the oracle gets).

    Returns
    -------
    dict name -> ``f(model, rng)`` building the unfitted estimator.
    """
    T = check_int(n_top, "n_top", owner="method_factories", minimum=2)
    if isinstance(names, str):
        raise TypeError(f"The 'names' parameter of method_factories must be a sequence of "
                        f"names; got the single string {names!r} instead.")
    out = {}
    for name in names:
        build = METHODS[_check_name(name, T, "method_factories")]
        out[name] = (lambda b: (lambda model, rng: b(model, rng, T)))(build)
    return out


# ------------------------------------------------------------------------- stored runs
#: The result sets written by ``benchmarks/`` (file stem -> script that writes it).
RESULT_NAMES = {
    "reproduce_synthetic": "benchmarks/reproduce_paper.py synthetic",
    "reproduce_robustness": "benchmarks/reproduce_paper.py robustness",
    "reproduce_estimation": "benchmarks/reproduce_paper.py estimation",
    "reproduce_real": "benchmarks/reproduce_paper.py real",
    "reproduce_topt": "benchmarks/reproduce_paper.py topt",
    "reproduce_baselines": "benchmarks/reproduce_paper.py baselines",
    "theorems_mc": "benchmarks/theorems_mc.py",
    "em": "benchmarks/em.py --replicates 30 --timing",
    "em_budget": "benchmarks/em_budget.py --replicates 30 --timing",
    "em_scaling": "benchmarks/em.py --scaling --memory",
    "u_precision": "benchmarks/u_precision.py --paired 30",
    "sample_complexity": "benchmarks/sample_complexity.py",
    "splitting": "benchmarks/splitting.py",
    "core": "benchmarks/bench_core.py",
    "corrupted_labels": "benchmarks/corrupted_labels.py",
    "stage1": "benchmarks/stage1.py --replicates 20 --data-dir <datasets>",
    "reliability": "benchmarks/reliability.py --data-dir <datasets>",
}

#: Stored runs that no lesson and no installed code reads: kept in the repository
#: (``benchmarks/results/``), not shipped with the package.
BENCHMARK_RESULTS = frozenset({"core", "em_budget", "em_scaling", "reliability", "splitting",
                               "u_precision"})

#: Where each result set keeps its groups (scenarios, knobs, datasets, shapes).
_GROUPS = {"reproduce_synthetic": "scenarios", "reproduce_robustness": "sweeps",
           "reproduce_estimation": "shapes", "reproduce_real": "datasets",
           "reproduce_baselines": "datasets"}


def results_dir() -> Path:
    """The folder the stored results are read from (see the module docstring)."""
    env = os.environ.get("TOPTWO_RESULTS")
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise FileNotFoundError(f"TOPTWO_RESULTS={env!r} is not a folder; set it to a "
                                    f"folder of toptwo's stored results (JSON files).")
        return path
    path = Path(__file__).resolve().parent / "results"
    if not path.is_dir():
        raise FileNotFoundError(
            f"The stored benchmark results are not beside this installation (looked in "
            f"{path}): reinstall toptwo, or set the environment variable TOPTWO_RESULTS to a "
            f"folder holding those JSON files.")
    return path


def _arrays(summary: Mapping[str, Any]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v, dtype=np.int64 if k == "n" else float) for k, v in summary.items()}


class StoredRun(Mapping):
    """One stored result set: named accessors, plus read-only ``run[key]`` for the rest.

    A reproduction set (``reproduce_*``) is organised in groups -- the scenarios of
    ``reproduce_synthetic``, the knobs of ``reproduce_robustness``, the datasets of
    ``reproduce_real`` and ``reproduce_baselines``, the (n, m) shapes of
    ``reproduce_estimation``; ``reproduce_topt`` has a single, unnamed group. Each accessor
    takes the group's name (``group=None`` where there is only one).
    """

    def __init__(self, name: str, data: Mapping[str, Any]):
        self.name = name
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"StoredRun({self.name!r}, keys={list(self._data)})"

    def _top(self, key: str) -> Any:
        if key not in self._data:
            raise KeyError(f"StoredRun {self.name!r} stores no {key!r}; its keys are "
                           f"{list(self._data)}.")
        return self._data[key]

    @property
    def config(self) -> dict[str, Any]:
        """The run's configuration (sizes, grid, replicates, seed, methods)."""
        return self._top("config")

    @property
    def meta(self) -> dict[str, Any]:
        """How the run was made (command, seconds, worker processes, versions)."""
        return self._top("meta")

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON as a plain dict (a deep copy), e.g. for ``json.dumps``."""
        return json.loads(json.dumps(self._data))

    @property
    def groups(self) -> tuple[str, ...]:
        """The names of the groups (empty for a set with a single unnamed group)."""
        where = _GROUPS.get(self.name)
        return tuple(self._data[where]) if where else ()

    def group(self, group: str | None = None) -> Mapping[str, Any]:
        """The stored dict of one group (``None``: the only one)."""
        where = _GROUPS.get(self.name)
        if where is None:
            if group is not None:
                raise ValueError(f"StoredRun {self.name!r} has no named groups; call it "
                                 f"with group=None (got {group!r}).")
            return self._data
        groups = self._data[where]
        if group is None:
            if len(groups) == 1:
                return next(iter(groups.values()))
            raise ValueError(f"StoredRun {self.name!r} has the groups {list(groups)}; name "
                             f"one.")
        if group not in groups:
            raise ValueError(f"StoredRun {self.name!r} has no group {group!r}; its groups "
                             f"are {list(groups)}.")
        return groups[group]

    def _part(self, part: str, group: str | None) -> Mapping[str, Any]:
        g = self.group(group)
        if part not in g:
            raise KeyError(f"StoredRun {self.name!r} (group {group!r}) stores no {part!r}; "
                           f"it stores {list(g)}.")
        return g[part]

    def summary(self, metric: str, group: str | None = None, *,
                methods: Sequence[str] | None = None) -> dict[str, dict[str, np.ndarray]]:
        """The stored form of :func:`toptwo.experiments.aggregate` for one metric.

        Parameters
        ----------
        metric : str
            E.g. ``"err_pair"``.
        group : str, optional
            The scenario, knob, dataset or shape (None where there is one group).
        methods : sequence of str, optional
            Select and order the methods (default: all, in stored order).

        Returns
        -------
        dict method -> dict of arrays ``x``, ``mean``, ``sem``, ``ci_low``, ``ci_high``,
        ``n`` (ready for :func:`toptwo.viz.plot_error_curves`).
        """
        table = self._part("summary", group)
        if metric not in table:
            raise KeyError(f"StoredRun {self.name!r}: no summary of {metric!r}; stored: "
                           f"{list(table)}.")
        table = table[metric]
        if isinstance(methods, str):
            raise TypeError(f"The 'methods' parameter of StoredRun.summary must be a sequence "
                            f"of names; got the single string {methods!r} instead.")
        names = list(table) if methods is None else list(methods)
        missing = [m for m in names if m not in table]
        if missing:
            raise KeyError(f"StoredRun {self.name!r}: no {metric!r} summary for {missing}; "
                           f"stored methods: {list(table)}.")
        return {m: _arrays(table[m]) for m in names}

    def raw(self, metric: str = "err_pair", group: str | None = None
            ) -> Mapping[str, Mapping[str, list[float]]]:
        """Every replicate of one metric.

        Parameters
        ----------
        metric : str, default="err_pair"
            The metric (the reproductions store the pair error).
        group : str, optional
            As in :meth:`summary`.

        Returns
        -------
        mapping method -> {str(x): [value of replicate 0, 1, ...]}: the input of
        :func:`toptwo.experiments.grid_average` and :func:`~toptwo.experiments.compare_methods`.
        """
        return self._part(f"raw_{metric}", group)

    def paired(self, metric: str = "err_pair", group: str | None = None, *,
               x: Mapping[float, float] | None = None) -> dict[str, list[list[float]]]:
        """TopTwo2 minus every method, paired per draw.

        The one helper the notebooks need for the paired-difference figures and tests
        (notebooks 06-08 once defined ``rows_of`` each around it).

        Parameters
        ----------
        metric : str, default="err_pair"
            ``err_pair``, ``err_g`` or ``err_h``.
        group : str, optional
            As in :meth:`summary`.
        x : mapping, optional
            New x for the stored ones (e.g. a subsampling level -> answers per task);
            every stored x must be a key.

        Returns
        -------
        dict other -> rows ``[x, mean, sem, n]``, as
        :func:`toptwo.experiments.paired_differences` returns them (the input of
        :func:`toptwo.experiments.paired_row_tests` and
        :func:`toptwo.viz.plot_paired_differences`).
        """
        table = self._part("toptwo2_minus", group)
        if metric not in table:
            raise KeyError(f"StoredRun {self.name!r}: no paired differences of {metric!r}; "
                           f"stored: {list(table)}.")
        if x is None:
            return table[metric]
        xs = {float(k): v for k, v in x.items()}
        missing = sorted({float(r[0]) for rows in table[metric].values() for r in rows} - set(xs))
        if missing:
            raise KeyError(f"StoredRun {self.name!r}.paired: `x` has no entry for the stored "
                           f"x {missing[:5]}.")
        return {m: [[xs[float(r[0])], *r[1:]] for r in rows] for m, rows in table[metric].items()}

    def gap_to_oracle(self, group: str | None = None) -> Mapping[str, Any]:
        """Per method: its pair error minus the oracle's, averaged over the grid.

        Parameters
        ----------
        group : str, optional
            As in :meth:`summary`.

        Returns
        -------
        mapping method -> dict with ``mean``, ``sem``, ``ci_low``, ``ci_high``, ``n``
        (:func:`toptwo.experiments.paired_gap`).
        """
        return self._part("gap_to_oracle", group)


def load(name: str) -> StoredRun:
    """The stored result set ``name`` (a key of :data:`RESULT_NAMES`).

    Raises
    ------
    ValueError
        ``name`` is not a known result set (the message lists them).
    FileNotFoundError
        The results folder or file is missing (the message says where it looked and
        which script writes the file).
    """
    if name not in RESULT_NAMES:
        raise ValueError(f"toptwo.experiments.paper.load: unknown result set {name!r}; known: "
                         f"{', '.join(sorted(RESULT_NAMES))}.")
    if name in BENCHMARK_RESULTS and not os.environ.get("TOPTWO_RESULTS"):
        path = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / f"{name}.json"
    else:
        path = results_dir() / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"toptwo.experiments.paper.load: {path} does not exist; run "
                                f"`python {RESULT_NAMES[name]}` from the repository root "
                                f"to write it.")
    return StoredRun(name, json.loads(path.read_text()))
