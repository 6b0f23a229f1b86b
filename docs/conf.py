"""Sphinx configuration of the toptwo book (lessons and exercise handouts).

The book is built from the notebooks' stored outputs: nothing is executed.  The
notebooks stay where they are (``../notebooks``); at configuration time a symlink
``docs/notebooks -> ../notebooks`` is created (it is git-ignored), so the pages keep
the notebooks' own relative paths and figures, and no copy can go stale.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

_link = HERE / "notebooks"
if not _link.exists():
    if _link.is_symlink():  # dangling link left by a moved checkout
        _link.unlink()
    os.symlink(os.path.join("..", "notebooks"), _link, target_is_directory=True)

project = "toptwo: top-two answers in multi-choice crowdsourcing"
author = "toptwo developers"
copyright = "toptwo developers"

extensions = [
    "myst_nb",
    "sphinx-mathjax-offline",  # MathJax 3 shipped in the wheel, copied into _static
    "paper_refs",
    # the course site (issue 24): launch buttons, .ipynb downloads, lesson links, plain
    # titles in search, zoomable figures; an API reference from the docstrings
    "course_site",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
]

# The stored outputs are the book: never execute (no kernel needed, nothing drifts).
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "amsmath"]
# The lessons' figures are stored PNGs; prefer them over any other representation.
nb_mime_priority_overrides = [("html", "image/svg+xml", 5)]

root_doc = "index"
include_patterns = ["index.md", "design.md", "design_stage1.md", "reproduction.md", "notebooks/[0-9][0-9]_*.ipynb", "notebooks/exercises/ex*.ipynb"]
# the reference pages moved out of the README (issue 24) and the generated API pages
include_patterns += ["library.md", "cli.md", "reproducibility.md", "theory_checks.md",
                     "measurements.md", "instructors.md", "api.md", "api/*.rst"]
autosummary_generate = True
autodoc_typehints = "none"            # the numpy docstrings say the types
autodoc_default_options = {"members": False}
napoleon_google_docstring = False
# numpy-style "References" list [1], [2] that the text cites by name, not as [1]_
suppress_warnings = ["ref.footnote"]
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "README.md"]

html_theme = "furo"  # previous/next links at the foot of every page, sidebar TOC
html_title = "toptwo book"
html_static_path: list[str] = []
html_show_sourcelink = False
