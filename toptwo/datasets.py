"""The seven real multi-choice datasets of the paper (Appendix A.1 [`subsec:dataset`]).

``load_dataset(name)`` reads one of ``adult2, flag, food, plot, color, dog, web`` from a
directory holding the files published by the paper's authors (github.com/Hyeonsu-Jeong/
TopTwo, folder ``Datasets/``), checks them against pinned SHA-256 sums, and returns a
:class:`Dataset` whose :class:`~toptwo.Responses` follow the paper's convention:
``A`` is ``(n_workers, n_tasks)``, 0-based worker and task indices, labels ``1..K``.

The files differ in column order and index base (see the data README):

======  ==================  =========  ============================================
name    columns             base       truth file
======  ==================  =========  ============================================
adult2  worker task label   0          task label, 0-based
flag    worker task label   0          task label, 0-based
food    worker task label   0          task label, 0-based
plot    worker task label   0          task label, 0-based
color   worker task label   0          task label, 0-based; color_conf.txt gives the
                                       most confusing answer h_j (task, label)
dog     task worker label   1          task label, 1-based, one line per *response*
                                       (each task repeated; repeats must agree)
web     task worker label   1          task label, 1-based, 2653 of the 2665 tasks
======  ==================  =========  ============================================

Where the data live
-------------------
As scikit-learn's ``fetch_*`` functions and pooch do: ``data_dir`` if given, else the
environment variable ``TOPTWO_DATA``, else the folder ``shared/datasets`` beside the
repository checkout (``<checkout>/../shared/datasets``); a folder named this way is read
as it is (nothing is downloaded into it). When none of them is set or exists, the files
are downloaded once from the authors' repository (:data:`DATA_URL`, a pinned commit;
``TOPTWO_DATA_URL`` overrides the address, e.g. a ``file://`` mirror) into a cache
(:func:`data_home`: ``TOPTWO_CACHE``, else ``$XDG_CACHE_HOME/toptwo`` or
``~/.cache/toptwo``), each checked against its pinned SHA-256 sum before it is kept.
Offline, the message says where to put the files instead. Nothing is copied into the
package.

Duplicated (worker, task) pairs
-------------------------------
Five files hold a worker answering the same task more than once (7 to 440 extra lines).
``duplicates="error"`` (default) refuses them with a message giving the dataset, the count
and one repeated pair with its lines; ``"first"`` / ``"last"`` keep the first / last line in file order. The paper's
MATLAB loaders keep the last one read, and ``duplicates="last"`` reproduces the paper's
Table 3 [`tab:data_info_3`] for the six public datasets (to the printed two decimals,
except adult2's first sd, 0.1952 printed as 0.19); Table 4 [`tab:data_info`] counts every
line of the file. The color row of both tables describes a different version of the
data than the published files (196 vs 200 workers) and does not reproduce.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._validation import check_bool, check_choice, check_n_top
from .responses import DUPLICATE_POLICIES, Responses, _duplicates_error, _find_duplicates

__all__ = ["DATASETS", "Dataset", "PAPER_DATA_INFO", "PAPER_ANSWER_SHARES", "at_printed_precision", "SHA256",
           "answer_shares", "load_dataset", "resolve_data_dir", "data_home", "download_dataset",
           "DATA_URL", "DownloadError"]

DATASETS = ("adult2", "flag", "food", "plot", "color", "dog", "web")

ENV_VAR = "TOPTWO_DATA"

#: The authors' published files: github.com/Hyeonsu-Jeong/TopTwo, folder ``Datasets/``, at
#: a pinned commit (raw-file addresses; the sums in :data:`SHA256` are of these files).
DATA_URL = ("https://raw.githubusercontent.com/Hyeonsu-Jeong/TopTwo/"
            "9b94788f44a4c766565defd753ef4bfcb3351751/Datasets/")
#: Environment variables: another address for the files (a mirror, ``file://`` in CI) and
#: the cache folder.
URL_ENV_VAR = "TOPTWO_DATA_URL"
CACHE_ENV_VAR = "TOPTWO_CACHE"

# (responses file, truth file, column order, index base, K, truth repeated per response)
_SPECS: dict[str, tuple[str, str, tuple[int, int, int], int, int, bool]] = {
    # order = positions of (worker, task, label) in a line
    "adult2": ("adult2.txt", "adult2_truth.txt", (0, 1, 2), 0, 4, False),
    "flag": ("flag.txt", "flag_truth.txt", (0, 1, 2), 0, 10, False),
    "food": ("food.txt", "food_truth.txt", (0, 1, 2), 0, 5, False),
    "plot": ("plot.txt", "plot_truth.txt", (0, 1, 2), 0, 10, False),
    "color": ("color.txt", "color_truth.txt", (0, 1, 2), 0, 6, False),
    "dog": ("dog.txt", "dog_truth.txt", (1, 0, 2), 1, 4, True),
    "web": ("web.txt", "web_truth.txt", (1, 0, 2), 1, 5, False),
}

#: Pinned SHA-256 of every file (identical to ``SHA256SUMS`` in the data folder).
SHA256: dict[str, str] = {
    "adult2.txt": "e0b6a45a9d5060441b3f184bb5ef6c18de42b8368deaf5294476ad7ed1955b54",
    "adult2_truth.txt": "d46d0f8a3574e3117a6a301335058bfc6c13cc28723a4481bd6f47f4bb9e8e2d",
    "color.txt": "0f00164fd73993b5da77891a473847a7511828c268b7bde8f32af4db1e83fb8b",
    "color_conf.txt": "83b505f18a96133a13536af383ae85da7215ac9b00b3f58eb5dca8262293d8e2",
    "color_truth.txt": "fcbb4dcc2313dba8a10dd4aeeebe3ccee584b4dac82d583cc8fc9d4015fdd0e5",
    "dog.txt": "ca72e3d2f8d553042e01cdbb3dc1d696a99d68d339638bb1ea57bdd8cfe986c1",
    "dog_truth.txt": "846458cc2e4def1627f7db49705ed63da8a63268b44ac6d977d32c1b691738b9",
    "flag.txt": "c6ec62841adc6223d6606fae550a5bc2e0f85570bfc23b07a49bb4c47446a131",
    "flag_truth.txt": "1d7d92ff2a2c7abaf4908248652b3c7bc2c8c5ce546aca448ad0c8b5825d5b62",
    "food.txt": "71388506b59e85b1df3bc66dda755f2ee673ebde2ff0fa41e51e6f6938a74d42",
    "food_truth.txt": "eb6cc964b0c4492fbec46665128fdac18742868f336e83146ab15f06258180cc",
    "plot.txt": "1d6c7d5b03388812a53b00c250b6a9df289bacd562f10a4b6723dd8ba703a523",
    "plot_truth.txt": "cfd560fef7f6a8938d4b19887ebfb440b144e97cc4700288d68e1215dcfeacd6",
    "web.txt": "fbc550a8027407690f519970001184cfa534c64a6978954fb4241ab237bd8ec6",
    "web_truth.txt": "67044d2f1b1dfa4fc744595253cc5f1f7da9fb91e999dea8d8472d6dbba2095b",
}

#: The paper's Table 4 [`tab:data_info`] as printed (strings keep the printed precision):
#: workers, tasks, K, sparsity, d_task (responses per task), d_worker (responses per worker).
PAPER_DATA_INFO: dict[str, dict[str, int | str]] = {
    "adult2": dict(workers=269, tasks=333, n_labels=4, sparsity="0.037", d_task="10.0", d_worker="12.4"),
    "dog": dict(workers=109, tasks=807, n_labels=4, sparsity="0.092", d_task="10.0", d_worker="74.0"),
    "web": dict(workers=176, tasks=2653, n_labels=5, sparsity="0.033", d_task="5.9", d_worker="88.3"),
    "flag": dict(workers=220, tasks=100, n_labels=10, sparsity="0.073", d_task="16.0", d_worker="7.3"),
    "food": dict(workers=177, tasks=54, n_labels=5, sparsity="0.125", d_task="22.1", d_worker="6.7"),
    "plot": dict(workers=122, tasks=56, n_labels=10, sparsity="0.293", d_task="35.7", d_worker="16.4"),
    "color": dict(workers=196, tasks=1000, n_labels=6, sparsity="0.1", d_task="19.5", d_worker="99.4"),
}

#: The paper's Table 3 [`tab:data_info_3`] as printed: (mean, sd) over tasks of the share
#: of the most, second and third most frequent answer.
PAPER_ANSWER_SHARES: dict[str, tuple[tuple[str, str], ...]] = {
    "adult2": (("0.80", "0.19"), ("0.14", "0.13"), ("0.04", "0.07")),
    "dog": (("0.76", "0.15"), ("0.22", "0.14"), ("0.01", "0.04")),
    "web": (("0.59", "0.20"), ("0.25", "0.12"), ("0.12", "0.09")),
    "flag": (("0.90", "0.16"), ("0.09", "0.13"), ("0.01", "0.03")),
    "food": (("0.80", "0.18"), ("0.17", "0.15"), ("0.02", "0.05")),
    "plot": (("0.62", "0.21"), ("0.30", "0.16"), ("0.06", "0.07")),
    "color": (("0.43", "0.1"), ("0.23", "0.06"), ("0.15", "0.05")),
}


def at_printed_precision(value: float, printed: int | str) -> int | str:
    """``value`` written at the precision the paper printed ``printed`` with.

    Parameters
    ----------
    value : float
        Our measurement.
    printed : int or str
        The paper's cell (:data:`PAPER_DATA_INFO`, :data:`PAPER_ANSWER_SHARES`).

    Returns
    -------
    int or str
        ``round(value)`` for an int cell; otherwise ``value`` formatted with as many
        decimals as ``printed`` has (0.0992 against "0.1" gives "0.1"), to compare with ``==``.
    """
    if isinstance(printed, bool) or not isinstance(printed, (int, str)):
        raise TypeError(f"The 'printed' parameter of at_printed_precision must be an int or "
                        f"the printed string (e.g. '0.19'); got {printed!r} instead.")
    if isinstance(printed, int):
        return int(round(value))
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return f"{value:.{decimals}f}"


class ChecksumError(ValueError):
    """A data file does not match its pinned SHA-256 sum."""


@dataclass(frozen=True, eq=False)
class Dataset:
    """One real dataset: responses, ground truth and bookkeeping.

    Attributes
    ----------
    name : str
    responses : Responses
        ``(n_workers, n_tasks)``, 0-based indices, labels 1..K, one response per
        (worker, task) pair after the duplicate policy.
    truth : ndarray of int, shape (n_tasks,)
        Ground-truth label g_j in 1..K, 0 where unknown (web: 12 tasks).
    n_labels : int
        K.
    confusing : ndarray of int, shape (n_tasks,) or None
        The most confusing answer h_j in 1..K (color only; None elsewhere).
    triples : ndarray of int, shape (n_lines, 3)
        Every line of the responses file as (worker, task, label), normalised to
        0-based indices and labels 1..K, in file order (duplicates included).
    duplicates : str
        The policy used: "error", "first" or "last".
    n_duplicate_pairs : int
        Number of distinct (worker, task) pairs that occur more than once in the file.
    n_duplicate_responses : int
        Number of lines beyond the first for those pairs (``len(triples) - nnz``).
    data_dir : Path
    """

    name: str
    responses: Responses
    truth: np.ndarray
    n_labels: int
    confusing: np.ndarray | None
    triples: np.ndarray = field(repr=False)
    duplicates: str
    n_duplicate_pairs: int
    n_duplicate_responses: int
    data_dir: Path

    @property
    def has_truth(self) -> np.ndarray:
        """Boolean mask of tasks with a known ground truth."""
        return self.truth > 0

    def describe(self, *, restrict_to_truth: bool = False) -> dict[str, Any]:
        """Table 4's columns [`tab:data_info`] and a few more, for this dataset.

        ``sparsity`` = lines / (workers * tasks), ``d_task`` = lines / tasks and
        ``d_worker`` = lines / workers count **every line of the file** (duplicates
        included): that is the convention that reproduces the paper's Table 4
        (e.g. flag: 1600 lines -> d_task 16.0, whereas 1592 kept responses give 15.9).

        Parameters
        ----------
        restrict_to_truth : bool, default=False
            Count only tasks with a known ground truth and the workers who answered
            them (web's Table 4 row, 176 workers and 2653 tasks, is computed this way;
            for the other six datasets it changes nothing).

        Returns
        -------
        dict with keys name, workers, tasks, n_labels, sparsity, d_task, d_worker,
        lines, responses (kept after the duplicate policy), duplicate_pairs,
        duplicate_responses, tasks_with_truth.
        """
        tri = self.triples
        if restrict_to_truth:
            tri = tri[self.truth[tri[:, 1]] > 0]
            workers = int(np.unique(tri[:, 0]).size)
            tasks = int(np.count_nonzero(self.has_truth))
            kept = int(np.count_nonzero(self.truth[self.responses.tasks] > 0))
        else:
            workers, tasks = self.responses.shape
            kept = self.responses.nnz
        lines = int(tri.shape[0])
        return {
            "name": self.name,
            "workers": workers,
            "tasks": tasks,
            "n_labels": self.n_labels,
            "sparsity": lines / (workers * tasks),
            "d_task": lines / tasks,
            "d_worker": lines / workers,
            "lines": lines,
            "responses": kept,
            "duplicate_pairs": self.n_duplicate_pairs,
            "duplicate_responses": self.n_duplicate_responses,
            "tasks_with_truth": int(np.count_nonzero(self.has_truth)),
        }


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The folder holding the dataset files.

    Order: ``data_dir`` if given; else ``$TOPTWO_DATA``; else ``shared/datasets``
    beside the repository checkout (``Path(toptwo.__file__).resolve().parents[2] /
    "shared" / "datasets"``). Raises FileNotFoundError with instructions when the chosen
    folder does not exist.
    """
    if data_dir is not None:
        path = Path(data_dir).expanduser()
        source = f"data_dir={str(data_dir)!r}"
    elif os.environ.get(ENV_VAR):
        path = Path(os.environ[ENV_VAR]).expanduser()
        source = f"the environment variable {ENV_VAR}={os.environ[ENV_VAR]!r}"
    else:
        path = _default_dir()
        source = "the default location beside the repository checkout"
    if not path.is_dir():
        raise FileNotFoundError(
            f"No dataset folder at {path} (from {source}). Point toptwo at a copy of the "
            f"seven dataset files (github.com/Hyeonsu-Jeong/TopTwo, folder Datasets/) with "
            f"load_dataset(name, data_dir='/path/to/datasets') or by setting the "
            f"environment variable {ENV_VAR}=/path/to/datasets.")
    return path


def _default_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "shared" / "datasets"


def data_home() -> Path:
    """The cache the downloaded dataset files are kept in (created when needed).

    ``$TOPTWO_CACHE`` if set, else ``$XDG_CACHE_HOME/toptwo/datasets``, else
    ``~/.cache/toptwo/datasets``.
    """
    if os.environ.get(CACHE_ENV_VAR):
        return Path(os.environ[CACHE_ENV_VAR]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "toptwo" / "datasets"


def _files_of(name: str) -> list[str]:
    resp_file, truth_file = _SPECS[name][:2]
    return [resp_file, truth_file] + (["color_conf.txt"] if name == "color" else [])


class DownloadError(OSError):
    """A dataset file could not be downloaded (offline, or the address is unreachable)."""


def _urlopen(url: str) -> bytes:
    """The bytes at ``url`` (replaced in tests; ``file://`` addresses work offline)."""
    with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - fixed https/file address
        return response.read()


def download_dataset(name: str, data_home_dir: str | os.PathLike | None = None) -> Path:
    """Download the files of dataset ``name`` into the cache, unless they are there intact.

    Each file is fetched from ``$TOPTWO_DATA_URL`` (default :data:`DATA_URL`), checked
    against its pinned SHA-256 sum and only then moved into place, so the cache never
    holds a partial or altered file. A file already cached is checked against its sum
    too: a damaged one (a disk error, an edit) is downloaded again, once, and replaced;
    if the new copy does not match either, :class:`ChecksumError` names the cached path
    and the address. New files get the mode 0666 minus the umask, as any file the user
    creates.

    Parameters
    ----------
    name : {"adult2", "flag", "food", "plot", "color", "dog", "web"}
        One of :data:`DATASETS`.
    data_home_dir : path-like, optional
        The cache folder (default :func:`data_home`).

    Returns
    -------
    Path
        The folder holding the files.

    Raises
    ------
    DownloadError
        When a file cannot be fetched; the message says how to get the files by hand.
    ChecksumError
        When a downloaded file does not match its pinned sum (nothing is kept).
    """
    check_choice(name, "name", DATASETS, owner="download_dataset")
    folder = Path(data_home_dir).expanduser() if data_home_dir is not None else data_home()
    base = os.environ.get(URL_ENV_VAR) or DATA_URL
    if not base.endswith("/"):
        base += "/"
    for fname in _files_of(name):
        target = folder / fname
        damaged = None                      # the sum of a damaged cached file
        if target.is_file():
            got = hashlib.sha256(target.read_bytes()).hexdigest()
            if got == SHA256[fname]:
                continue
            damaged = got
        was = (f" The cached copy {target} does not match its pinned SHA-256 sum (got "
               f"{damaged}) and was to be replaced by a fresh download." if damaged else "")
        url = base + fname
        try:
            raw = _urlopen(url)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise DownloadError(
                f"Dataset {name!r}: could not download {fname} from {url} ({reason}).{was} "
                f"Without a network connection, copy the folder Datasets/ of "
                f"github.com/Hyeonsu-Jeong/TopTwo to this machine and point toptwo at it: "
                f"load_dataset({name!r}, data_dir='/path/to/Datasets') or the environment "
                f"variable {ENV_VAR}=/path/to/Datasets.") from None
        got = hashlib.sha256(raw).hexdigest()
        if got != SHA256[fname]:
            raise ChecksumError(
                f"Dataset {name!r}: {fname} downloaded from {url} does not match its pinned "
                f"SHA-256 sum (expected {SHA256[fname]}, got {got}); it was not kept. The "
                f"address serves a different version of the file."
                + (f" The cached copy {target} is damaged too (got {damaged}); delete it, "
                   f"or put the published file there by hand." if damaged else ""))
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = _new_file(folder, fname)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
            os.replace(tmp, target)              # atomic: never a partial file in place
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return folder


def _new_file(folder: Path, fname: str) -> tuple[int, str]:
    """A new hidden file in ``folder`` with the mode 0666 minus the umask (not 0600)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = str(folder / f".{fname}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary file name in {folder}")


def _read(path: Path, *, verify: bool, dataset: str, cached: bool = False) -> bytes:
    if not path.is_file():
        raise FileNotFoundError(f"Dataset {dataset!r}: file {path.name} is missing from "
                                f"{path.parent}.")
    raw = path.read_bytes()
    if verify:
        got = hashlib.sha256(raw).hexdigest()
        want = SHA256[path.name]
        if got != want:
            fix = ("it changed after it was checked; run load_dataset again to download "
                   "it afresh" if cached else
                   f"the file is damaged or a different version. Replace it with the "
                   f"published file ({DATA_URL}{path.name})")
            raise ChecksumError(
                f"Dataset {dataset!r}: {path} does not match its pinned SHA-256 sum "
                f"(expected {want}, got {got}); {fix}.")
    return raw


def _parse(raw: bytes, path: Path, n_cols: int, dataset: str) -> np.ndarray:
    rows = []
    for lineno, line in enumerate(raw.decode("ascii").splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != n_cols:
            raise ValueError(f"Dataset {dataset!r}: line {lineno} of {path.name} must hold "
                             f"{n_cols} integers; got {line!r} instead.")
        rows.append(parts)
    try:
        return np.array(rows, dtype=np.int64).reshape(-1, n_cols)
    except ValueError as exc:
        raise ValueError(f"Dataset {dataset!r}: {path.name} must hold integers only "
                         f"({exc}).") from None


def _truth_vector(arr: np.ndarray, n_tasks: int, K: int, base: int, *, repeated: bool,
                  dataset: str, fname: str) -> np.ndarray:
    tasks = arr[:, 0] - base
    labels = arr[:, 1] - base + 1
    if tasks.min() < 0 or tasks.max() >= n_tasks:
        bad = int(np.flatnonzero((tasks < 0) | (tasks >= n_tasks))[0])
        raise ValueError(f"Dataset {dataset!r}: {fname} line {bad + 1} names task "
                         f"{int(arr[bad, 0])}, outside the {n_tasks} tasks of the responses.")
    if labels.min() < 1 or labels.max() > K:
        bad = int(np.flatnonzero((labels < 1) | (labels > K))[0])
        raise ValueError(f"Dataset {dataset!r}: {fname} line {bad + 1} gives label "
                         f"{int(arr[bad, 1])}, outside 1..{K} after the index shift.")
    out = np.zeros(n_tasks, dtype=np.int64)
    order = np.argsort(tasks, kind="stable")
    ts, ls = tasks[order], labels[order]
    same_task = ts[1:] == ts[:-1]
    if same_task.any():
        if not repeated:
            e = int(np.flatnonzero(same_task)[0])
            raise ValueError(f"Dataset {dataset!r}: {fname} lists task {int(ts[e]) + base} "
                             f"more than once; one line per task is expected.")
        clash = same_task & (ls[1:] != ls[:-1])
        if clash.any():
            e = int(np.flatnonzero(clash)[0])
            raise ValueError(f"Dataset {dataset!r}: {fname} repeats task {int(ts[e]) + base} "
                             f"with different labels ({int(ls[e]) + base - 1} and "
                             f"{int(ls[e + 1]) + base - 1}); the repeats must agree.")
    out[ts] = ls
    return out


def load_dataset(name: str, data_dir: str | os.PathLike | None = None, *,  # noqa: C901 - one check per file field
                 duplicates: str = "error", verify: bool = True,
                 download: bool = True) -> Dataset:
    """Load one of the paper's seven real datasets (Appendix A.1 [`subsec:dataset`]).

    Parameters
    ----------
    name : {"adult2", "flag", "food", "plot", "color", "dog", "web"}
        One of ``DATASETS`` (adult2, flag, food, plot, color, dog, web).
    data_dir : path-like, optional
        Folder with the files; defaults to ``$TOPTWO_DATA``, else ``shared/datasets``
        beside the repository checkout (see :func:`resolve_data_dir`), else the
        download cache (:func:`download_dataset`).
    duplicates : {"error", "first", "last"}, default="error"
        What to do with a (worker, task) pair answered more than once: raise (naming the
        dataset and the count), or keep the first / last line in file order. The paper's
        MATLAB loaders keep the last.
    verify : bool, default=True
        Check every file read against its pinned SHA-256 sum (:data:`SHA256`) and raise
        :class:`ChecksumError` naming the file on a mismatch. A damaged file in the
        download cache is downloaded again once (:func:`download_dataset`), whatever
        ``verify`` says. ``verify=False`` is for a copy of the data edited on purpose: it
        loads whatever the files hold, and is no remedy for a damaged file.
    download : bool, default=True
        When no folder is named (neither ``data_dir`` nor ``$TOPTWO_DATA``) and there is
        none beside the checkout, download the files into the cache
        (:func:`download_dataset`); with False, raise FileNotFoundError instead.

    Returns
    -------
    Dataset

    Examples
    --------
    >>> from toptwo.datasets import load_dataset
    >>> ds = load_dataset("dog")                                  # doctest: +SKIP
    >>> ds.responses.shape, ds.n_labels                            # doctest: +SKIP
    ((109, 807), 4)
    """
    owner = "load_dataset"
    check_choice(name, "name", DATASETS, owner=owner)
    check_choice(duplicates, "duplicates", DUPLICATE_POLICIES, owner=owner)
    check_bool(verify, "verify", owner=owner)
    check_bool(download, "download", owner=owner)
    cached = (data_dir is None and not os.environ.get(ENV_VAR)
              and not _default_dir().is_dir() and download)
    if cached:
        folder = download_dataset(name)
    else:
        folder = resolve_data_dir(data_dir)
    resp_file, truth_file, (cw, ct, cl), base, K, repeated = _SPECS[name]

    path = folder / resp_file
    arr = _parse(_read(path, verify=verify, dataset=name, cached=cached), path, 3, name)
    w, t, lab = arr[:, cw] - base, arr[:, ct] - base, arr[:, cl] - base + 1
    for what, a in (("worker", w), ("task", t)):
        if a.min() < 0:
            e = int(np.argmax(a < 0))
            raise ValueError(f"Dataset {name!r}: line {e + 1} of {resp_file} has {what} id "
                             f"{int(a[e]) + base}, below the file's index base {base}.")
    if lab.min() < 1 or lab.max() > K:
        e = int(np.flatnonzero((lab < 1) | (lab > K))[0])
        raise ValueError(f"Dataset {name!r}: line {e + 1} of {resp_file} has label "
                         f"{int(arr[e, cl])}, outside the {K} choices (base {base}).")
    n_workers, n_tasks = int(w.max()) + 1, int(t.max()) + 1
    dups = _find_duplicates(w, t, n_tasks)
    if dups.n_pairs and duplicates == "error":
        raise _duplicates_error(
            dups, source=f"Dataset {name!r}, {resp_file}", unit="lines",
            where=lambda e: f"on line {e + 1}",
            show=lambda e: (int(arr[e, cw]), int(arr[e, ct]), int(arr[e, cl])),
            fix="Pass duplicates='first' or duplicates='last' to keep one answer per pair "
                "(the paper's MATLAB loaders keep the last).")
    responses = Responses.from_triples(w, t, lab, n_workers=n_workers, n_tasks=n_tasks,
                                       n_labels=K,
                                       duplicates=duplicates)  # type: ignore[arg-type]

    tpath = folder / truth_file
    tarr = _parse(_read(tpath, verify=verify, dataset=name, cached=cached), tpath, 2, name)
    truth = _truth_vector(tarr, n_tasks, K, base, repeated=repeated, dataset=name,
                          fname=truth_file)
    confusing = None
    if name == "color":
        cpath = folder / "color_conf.txt"
        carr = _parse(_read(cpath, verify=verify, dataset=name, cached=cached), cpath, 2,
                      name)
        confusing = _truth_vector(carr, n_tasks, K, 0, repeated=False, dataset=name,
                                  fname="color_conf.txt")
    triples = np.column_stack([w, t, lab])
    return Dataset(name=name, responses=responses, truth=truth, n_labels=K,
                   confusing=confusing, triples=triples, duplicates=duplicates,
                   n_duplicate_pairs=dups.n_pairs, n_duplicate_responses=dups.n_extra,
                   data_dir=folder)


def answer_shares(dataset: Dataset | Responses, n_top: int = 3, *,
                  restrict_to_truth: bool = False) -> dict[str, Any]:
    """Shares of the most, second, ... most frequent answers per task (Table 3).

    For every answered task j, count the answers per label, divide by the task's number
    of responses, sort decreasingly and keep the first ``n_top`` shares; then average
    over tasks (Table 3 [`tab:data_info_3`] and Fig. `fig:label_dist` of Appendix A).
    The paper's column "Ground truth" is the share of the *most frequent* answer, not of
    the true label.

    Parameters
    ----------
    dataset : Dataset or Responses
        Responses after the duplicate policy (``duplicates="last"`` reproduces the paper).
    n_top : int, default=3
        How many of the most frequent answers per task to report.
    restrict_to_truth : bool, default=False
        Average only over tasks with a known ground truth (needs a Dataset).

    Returns
    -------
    dict with
        ``mean``, ``sd`` : ndarray of shape (n_top,) -- mean and population standard
        deviation (ddof=0) over tasks;
        ``shares`` : ndarray of shape (n_tasks_used, n_top) -- per-task sorted shares;
        ``tasks`` : ndarray of int -- the task indices used.
    """
    R = dataset.responses if isinstance(dataset, Dataset) else dataset
    if not isinstance(R, Responses):
        raise TypeError(f"`dataset` passed to answer_shares must be a Dataset or Responses; "
                        f"got {type(dataset).__name__} instead.")
    n_top = check_n_top(n_top, R.n_labels, owner="answer_shares", minimum=1)
    counts = R.task_label_counts()
    tot = counts.sum(axis=1)
    use = tot > 0
    if restrict_to_truth:
        if not isinstance(dataset, Dataset):
            raise TypeError("restrict_to_truth=True needs a Dataset (with truth), not "
                            "bare Responses.")
        use &= dataset.has_truth
    tasks = np.flatnonzero(use)
    shares = -np.sort(-(counts[use] / tot[use, None]), axis=1)[:, :n_top]
    return {"mean": shares.mean(axis=0), "sd": shares.std(axis=0), "shares": shares,
            "tasks": tasks}
