"""Copy the README's figure out of lesson 05's stored outputs (so it cannot go stale).

    python docs/readme_figure.py          # writes docs/images/sample_complexity.png

``tests/test_readme.py`` checks that the committed PNG is byte-identical to the figure
stored in the notebook.
"""
from __future__ import annotations

import base64
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "05_sample_complexity.ipynb"
CELL_ID = "45149922"                  # g error against n*s, with the minimax lower bound
TARGET = ROOT / "docs" / "images" / "sample_complexity.png"


def figure_bytes() -> bytes:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c.get("id") == CELL_ID)
    png = next(o["data"]["image/png"] for o in cell["outputs"] if "image/png" in o.get("data", {}))
    return base64.b64decode(png if isinstance(png, str) else "".join(png))


if __name__ == "__main__":
    TARGET.write_bytes(figure_bytes())
    print(TARGET)
