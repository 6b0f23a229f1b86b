"""Stored benchmark results: where they are and how to read them.

The scripts in ``benchmarks/`` write their results as JSON files to
``benchmarks/results/`` (committed with the repository); the notebooks show them next to
their own reduced runs. Notebooks and users read them through :func:`load`, never by a
relative path, so a notebook runs from any working directory:

1. the folder named by the environment variable ``TOPTWO_RESULTS``, if set;
2. ``benchmarks/results`` of the source tree this package was imported from (a clone,
   an editable install, Binder).

A plain ``pip install`` has no source tree: clone the repository, or download the
``benchmarks/results`` folder and set ``TOPTWO_RESULTS`` to it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["load", "results_dir", "RESULT_NAMES"]

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
    "sample_complexity": "benchmarks/sample_complexity.py",
    "splitting": "benchmarks/splitting.py",
    "core": "benchmarks/bench_core.py",
}


def results_dir() -> Path:
    """The folder the stored results are read from (see the module docstring)."""
    env = os.environ.get("TOPTWO_RESULTS")
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise FileNotFoundError(f"TOPTWO_RESULTS={env!r} is not a folder; set it to a "
                                    f"copy of the repository's benchmarks/results folder.")
        return path
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "results"
    if not path.is_dir():
        raise FileNotFoundError(
            f"The stored benchmark results are not beside this installation (looked in "
            f"{path}). Clone the toptwo repository (they are in benchmarks/results), or set "
            f"the environment variable TOPTWO_RESULTS to a folder holding those JSON files.")
    return path


def load(name: str) -> dict[str, Any]:
    """The stored result set ``name`` (a key of :data:`RESULT_NAMES`) as a dict.

    Raises
    ------
    ValueError
        ``name`` is not a known result set (the message lists them).
    FileNotFoundError
        The results folder or file is missing (the message says where it looked and
        which script writes the file).
    """
    if name not in RESULT_NAMES:
        raise ValueError(f"toptwo.results.load: unknown result set {name!r}; known: "
                         f"{', '.join(sorted(RESULT_NAMES))}.")
    path = results_dir() / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"toptwo.results.load: {path} does not exist; run "
                                f"`python {RESULT_NAMES[name]}` from the repository root "
                                f"to write it.")
    return json.loads(path.read_text())
