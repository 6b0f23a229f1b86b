"""Re-execute the notebooks under every BLAS kernel and SIMD setting this CPU can run.

Usage (from the repository root, in the test environment)::

    python notebooks/check_portability.py                 # every notebook, every variant
    python notebooks/check_portability.py --jobs 2 notebooks/05_sample_complexity.ipynb

The stored outputs of the notebooks must re-execute identically on any machine. A reader's
laptop or a CI runner differs from the machine that stored them in its BLAS kernel
(OpenBLAS picks one per CPU at run time), its thread count and numpy's SIMD code paths.
This script forces each of them in turn and runs the README's test command on the
notebooks (``python -m pytest notebooks/``, nbval strict) once per variant:

* ``OPENBLAS_CORETYPE`` = Prescott, Nehalem, Sandybridge (every x86-64 CPU runs these),
  Haswell and Zen (CPUs with AVX2), SkylakeX (CPUs with AVX-512);
* the default kernel with 2 BLAS threads instead of 1;
* the default kernel with numpy's AVX-512 dispatch disabled (``NPY_DISABLE_CPU_FEATURES``).

It prints a markdown table of failing cells per variant (the table in
``notebooks/README.md`` comes from it) and exits 1 if any variant has a failing cell.
Only OpenBLAS on x86-64 honours ``OPENBLAS_CORETYPE``; elsewhere the kernel rows are
skipped and only the thread and SIMD rows run.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NO_AVX512 = "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"

#: kernel -> CPU flag it needs (None: every x86-64 CPU)
KERNELS = {"Prescott": None, "Nehalem": None, "Sandybridge": None,
           "Haswell": "avx2", "Zen": "avx2", "SkylakeX": "avx512f"}


def cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    m = re.search(r"^flags\s*:(.*)$", text, re.M)
    return set(m.group(1).split()) if m else set()


def openblas_x86() -> bool:
    import numpy as np

    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        return "openblas" in str(np.__config__.CONFIG["Build Dependencies"]["blas"]["name"]).lower()
    except Exception:
        return False


def variants() -> list[tuple[str, dict[str, str]]]:
    out = []
    if openblas_x86():
        flags = cpu_flags()
        for name, need in KERNELS.items():
            if need is None or need in flags:
                out.append((f"`OPENBLAS_CORETYPE={name}`", {"OPENBLAS_CORETYPE": name}))
    out.append(("default kernel, 2 BLAS threads",
                {"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2"}))
    out.append(("default kernel, numpy without AVX-512", {"NPY_DISABLE_CPU_FEATURES": NO_AVX512}))
    return out


def run_variant(env_extra: dict[str, str], paths: list[str]) -> tuple[list[str], str, float]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", **env_extra}
    env.pop("PYTEST_ADDOPTS", None)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *paths], cwd=ROOT, env=env, capture_output=True, text=True)
    failed = sorted(set(re.findall(r"^FAILED (\S+)", proc.stdout, re.M)))
    summary = (proc.stdout.strip().splitlines() or ["(no output)"])[-1]
    if proc.returncode not in (0, 1):
        failed.append(f"pytest exited {proc.returncode}: {summary}")
    return failed, summary, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=["notebooks"],
                        help="notebooks or folders (default: notebooks)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="variants run at once (each runs pytest with one BLAS thread)")
    args = parser.parse_args(argv)
    todo = variants()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda v: run_variant(v[1], args.paths), todo))
    print("| variant | failing notebook cells | pytest summary |")
    print("|---|---|---|")
    bad = 0
    for (name, _), (failed, summary, _) in zip(todo, results):
        bad += len(failed)
        cells = ", ".join(f.replace("notebooks/", "") for f in failed) if failed else "0"
        print(f"| {name} | {cells} | {summary} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
