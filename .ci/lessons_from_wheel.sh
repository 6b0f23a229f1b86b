#!/usr/bin/env bash
# The lessons as a student runs them on Colab or Binder: the package built as a wheel and
# installed in a fresh venv outside the repository, the lesson notebooks copied to an
# empty folder (no matplotlibrc, no source tree beside them) and run top to bottom with
# nbclient, two at a time (errors fail the step; outputs are not compared -- nbval does
# that in-tree).
# The real datasets come through the loader's download path, pointed at a local copy
# (TOPTWO_DATA_URL=file://...) so CI stays offline; the stored results from the wheel.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
data="$(cd "${TOPTWO_DATA:-$repo/../shared/datasets}" && pwd)"
start=$SECONDS
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
. "$work/venv/bin/activate"
unset PYTHONPATH TOPTWO_DATA TOPTWO_RESULTS
python -m pip install -q --upgrade pip
python -m pip wheel -q --no-deps -w "$work/dist" "$repo"
wheels=("$work"/dist/toptwo-*.whl)
# the test extra pins what shapes the lessons' outputs (matplotlib, sympy, scikit-learn,
# ipykernel, nbclient)
python -m pip install -q "${wheels[0]}[test]"
# the install lines the README and the book give for a built wheel resolve
# (tests/test_public_address.py keeps this list complete)
python -m pip install -q --dry-run "${wheels[0]}[notebooks,student]"
mkdir "$work/lessons"
cp "$repo"/notebooks/[0-9]*.ipynb "$work/lessons/"
cd "$work/lessons"
export TOPTWO_DATA_URL="file://$data/" TOPTWO_CACHE="$work/cache" MPLBACKEND=Agg
python - <<'PY'
import multiprocessing, pathlib, sys, time
from concurrent.futures import ProcessPoolExecutor

import nbformat
from nbclient import NotebookClient
import toptwo

here = pathlib.Path.cwd()
assert "site-packages" in toptwo.__file__, f"toptwo imported from {toptwo.__file__}"


def run(path):
    """Execute one lesson in its own kernel; (name, seconds, status)."""
    t0 = time.perf_counter()
    nb = nbformat.read(path, as_version=4)
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(here)}}).execute()
        status = "ok"
    except Exception as exc:                       # a failing cell: report and go on
        status = f"FAILED: {str(exc).strip().splitlines()[-1][:300]}"
    return path.name, time.perf_counter() - t0, status


# two lessons at a time (CI has two cores; each lesson is one kernel). "fork": this script
# comes from stdin, so a spawned worker could not re-import `run`.
paths = sorted(here.glob("*.ipynb"))
failed = []
with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork")) as pool:
    for name, seconds, status in pool.map(run, paths):
        print(f"{name:40s} {seconds:6.1f} s  {status}", flush=True)
        if status != "ok":
            failed.append(name)
print(f"lessons: {len(paths) - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
PY
echo "lessons-from-wheel step: $((SECONDS - start)) s"
