"""toptwo: top-two answers and confusion probabilities in multi-choice crowdsourcing.

Implements the top-two model and both algorithms of

    H. Jeong and H. W. Chung, "Recovering Top-Two Answers and Confusion Probability in
    Multi-Choice Crowdsourcing", ICML 2023.

Conventions (the paper's): the response matrix A has shape (n_workers, n_tasks), labels
1..K, 0 = not answered. p = worker reliabilities, q = task confusion probabilities,
(g, h) = ground truth and most confusing answer.
"""

from . import datasets, experiments, io, paper, report, softlabels, theory, viz
from .baselines import MajorityVote
from .datasets import DATASETS, Dataset, answer_shares, load_dataset
from .em import TopTwoEM
from .dawid_skene import DawidSkene, OneCoinDawidSkene
from .ebcc import EBCC
from .glad import GLAD
from .mace import MACE
from .mmsr import MMSR
from .multispa import MultiSPA
from .opt_ds import OptDawidSkene
from .pgd import PGD
from .binary import binary_stack, from_binary, to_binary
from .metrics import top_two_errors
from .mle import OracleMLE, TopTwo2, best_pairs, estimate_reliability, plugin_mle
from .model import SCENARIOS, TopTwoModel, label_distribution
from .responses import Responses, as_responses
from .spectral import TopTwo1, spectral_estimate, spectral_from_matrices, split_entries

__version__ = "0.1.0"

__all__ = [
    "DATASETS", "Dataset", "answer_shares", "DawidSkene", "OneCoinDawidSkene", "load_dataset", "datasets", "experiments",
    "io", "paper", "report", "softlabels", "theory", "viz", "MajorityVote", "OracleMLE", "Responses", "SCENARIOS",
    "TopTwo1", "TopTwo2", "TopTwoEM",
    "TopTwoModel", "as_responses", "best_pairs", "binary_stack", "estimate_reliability",
    "from_binary", "label_distribution", "plugin_mle", "spectral_estimate",
    "spectral_from_matrices", "split_entries", "to_binary", "top_two_errors",
    "EBCC", "GLAD", "MACE", "MMSR", "OptDawidSkene", "PGD", "MultiSPA",
]
