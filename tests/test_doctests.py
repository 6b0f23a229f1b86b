"""The Examples sections of the public estimators and helpers run as doctests.

One test per module (``doctest.testmod``), so the docstrings' examples stay true without
collecting every module of the package with ``--doctest-modules`` (which would import the
optional plotting and teaching modules in every test run). Each module here must have at
least one example: a module that lost its examples fails.
"""

import doctest
import importlib

import pytest

MODULES = ["toptwo.model", "toptwo.spectral", "toptwo.mle", "toptwo.reliability", "toptwo._step2", "toptwo._split",
           "toptwo.extensions.em",
           "toptwo.report", "toptwo.softlabels", "toptwo.baselines.majority",
           "toptwo.baselines.dawid_skene", "toptwo.baselines.opt_ds", "toptwo.baselines.multispa",
           "toptwo.baselines.mmsr", "toptwo.baselines.pgd", "toptwo.baselines.mace",
           "toptwo.baselines.glad", "toptwo.baselines.ebcc"]


@pytest.mark.parametrize("name", MODULES)
def test_examples_in_docstrings(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no doctested example"
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"


def test_every_estimator_of_the_paper_has_an_example():
    import toptwo

    for cls in (toptwo.TopTwoModel, toptwo.TopTwo1, toptwo.TopTwo2, toptwo.OracleMLE,
                toptwo.TopTwoEM):
        examples = doctest.DocTestFinder(recurse=False).find(cls)
        assert examples and examples[0].examples, f"{cls.__name__} has no Examples section"


def test_every_baseline_has_an_example():
    from toptwo import baselines

    for name in ("MajorityVote", "DawidSkene", "OneCoinDawidSkene", "OptDawidSkene",
                 "MultiSPA", "MMSR", "PGD", "MACE", "GLAD", "EBCC"):
        examples = doctest.DocTestFinder(recurse=False).find(getattr(baselines, name))
        assert examples and examples[0].examples, f"{name} has no Examples section"
