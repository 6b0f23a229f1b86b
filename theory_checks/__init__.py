"""Exact symbolic checks of the theory in Jeong & Chung (ICML 2023), bound to the code.

Every check raises :class:`ClaimFailed` when its claim fails and returns a
:class:`CheckRecord` when it holds. :data:`CHECKS` maps names to checks in
run order; :func:`run_all` runs them all. Every claim check takes its *claimed* expressions as
parameters; :mod:`theory_checks.mutants` lists wrong claims (mutants) each check must reject
(``python -m theory_checks --mutants``). The ``code_*`` checks (:mod:`theory_checks.checks_code`)
evaluate ``toptwo``'s functions at exact rational points against the same SymPy expressions, and
:mod:`theory_checks.mutate` (``python -m theory_checks.mutate``) shows that they fail when the
package's source is changed. :mod:`theory_checks.checks_statements` checks the paper's numbered
statements as stated, and :mod:`theory_checks.status` generates the theory status page
(``python -m theory_checks --status-page docs/theory_status.md``). This package alone imports
SymPy; ``toptwo`` never imports it.
"""

from __future__ import annotations

from ._core import CHECKS, CheckRecord, ClaimFailed
from . import checks_model  # noqa: F401  (registers checks, in this order)
from . import checks_algorithm  # noqa: F401
from . import checks_divergence  # noqa: F401
from . import checks_converse  # noqa: F401
from . import checks_probability  # noqa: F401
from . import checks_top_t  # noqa: F401
from . import checks_em  # noqa: F401
from . import checks_code  # noqa: F401
from . import checks_statements  # noqa: F401
from . import checks_montecarlo  # noqa: F401
from . import checks_perturbation  # noqa: F401
from .checks_model import *  # noqa: F401,F403
from .checks_algorithm import *  # noqa: F401,F403
from .checks_divergence import *  # noqa: F401,F403
from .checks_converse import *  # noqa: F401,F403
from .checks_probability import *  # noqa: F401,F403
from .checks_top_t import *  # noqa: F401,F403
from .checks_em import *  # noqa: F401,F403
from .checks_code import *  # noqa: F401,F403
from .checks_statements import *  # noqa: F401,F403
from .checks_montecarlo import *  # noqa: F401,F403
from .checks_perturbation import *  # noqa: F401,F403
from .model import (
    answer_probabilities,
    paper_delta_r,
    r_from_indicators,
    symbolic_delta_r,
    symbolic_expected_binary,
    symbolic_r,
)

__all__ = [
    "CHECKS",
    "LONG_CHECKS",
    "CheckRecord",
    "ClaimFailed",
    "run_all",
    "answer_probabilities",
    "paper_delta_r",
    "r_from_indicators",
    "symbolic_delta_r",
    "symbolic_expected_binary",
    "symbolic_r",
]
__all__ += [f"check_{name}" for name in CHECKS]


#: Monte-Carlo checks left out of the default ``python -m theory_checks`` (its budget is a minute on a 2-core
#: machine); ``python -m theory_checks --long`` runs them, and CI does (``.ci/run``).
LONG_CHECKS: tuple[str, ...] = ("mc_corollary1_log_K", "mc_corollary2_log_K")


def run_all() -> list[CheckRecord]:
    """Run every registered check in order; raise :class:`ClaimFailed` at the first failure."""
    return [fn() for fn in CHECKS.values()]
