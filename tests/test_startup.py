"""Start-up stays quick: ``import toptwo`` and ``python -m toptwo --help`` load no heavy
library (scipy.stats ~0.3 s, scipy.optimize, matplotlib, scikit-learn, pandas, pyarrow);
those load on first use."""

from __future__ import annotations

import json
import os
import subprocess
import sys

HEAVY = ("scipy.stats", "scipy.optimize", "matplotlib", "sklearn", "pandas", "pyarrow")

CHECK = """
import json, sys
{body}
heavy = sorted({{m.split('.')[0] if not m.startswith('scipy.') else '.'.join(m.split('.')[:2])
                for m in sys.modules}} & set({heavy!r}))
print(json.dumps(heavy))
"""


def _heavy_modules(body: str) -> list[str]:
    code = CHECK.format(body=body, heavy=HEAVY)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_import_toptwo_loads_no_heavy_library():
    assert _heavy_modules("import toptwo") == []


def test_cli_help_loads_no_heavy_library():
    body = ("import runpy, contextlib, io\n"
            "sys.argv = ['toptwo', '--help']\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n"
            "        runpy.run_module('toptwo', run_name='__main__', alter_sys=True)\n"
            "    except SystemExit:\n"
            "        pass")
    assert _heavy_modules(body) == []


def test_the_check_can_fail():
    # the same check sees a heavy import when there is one
    assert "scipy.stats" in _heavy_modules("import scipy.stats")
