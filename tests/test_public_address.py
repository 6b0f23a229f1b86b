"""No link, badge or install line names an address or a release that does not exist.

The project's public address is one setting, ``[project.urls] Repository`` in
pyproject.toml, absent until the repository is public. Colab/Binder badges, launch
buttons and the lessons' Colab install cell are generated from it only
(notebooks/install_cell.py, docs/_ext/course_site.py); the book build is checked in
tests/test_book.py. Every install line in the README and the book installs from a clone
(``pip install -e ".[extra]"``) or from a built wheel (``dist/toptwo-<version>-...whl``),
never from a package index (there is no release); .ci/lessons_from_wheel.sh builds that
wheel and resolves the wheel lines.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "notebooks"))
import install_cell  # noqa: E402

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
REPO = install_cell.repository()
PLACEHOLDER = "toptwo-project/toptwo"
#: files that name the placeholder only to refuse it
REFUSERS = {"tests/test_public_address.py",
            "tests/test_install_cell.py", "tests/test_book.py"}


def _shipped() -> list[Path]:
    """Every tracked text file a reader gets: the package, the docs, the notebooks, the
    README, pyproject.toml (its [project.urls] go into the wheel's metadata)."""
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    keep = (".md", ".py", ".ipynb", ".toml", ".rst", ".txt", ".cfg", ".yml", ".sh", ".json")
    return [ROOT / f for f in out if f and f.endswith(keep) and f not in REFUSERS
            and (ROOT / f).is_file()]


def test_no_shipped_file_names_the_placeholder_address():
    files = _shipped()
    assert any(f.name == "README.md" for f in files) and len(files) > 50
    found = [f.relative_to(ROOT).as_posix() for f in files
             if PLACEHOLDER in f.read_text(encoding="utf-8", errors="replace")]
    assert found == [], f"the placeholder address {PLACEHOLDER} in: {found}"


def test_no_launch_link_without_a_public_address():
    if REPO:
        pytest.skip(f"the project has a public address: {REPO}")
    launch = re.compile(r"colab\.research\.google\.com/github|mybinder\.org/v2/gh")
    found = [f.relative_to(ROOT).as_posix() for f in _shipped()
             if not f.name.startswith("test_") and f.suffix != ".py"
             and launch.search(f.read_text(encoding="utf-8", errors="replace"))]
    assert found == [], f"Colab/Binder links without a public address in: {found}"


def test_a_placeholder_address_is_refused(tmp_path):
    p = tmp_path / "pyproject.toml"
    p.write_text('[project]\nname = "x"\nversion = "0"\n[project.urls]\n'
                 f'Repository = "https://github.com/{PLACEHOLDER}"\n')
    with pytest.raises(SystemExit, match="placeholder"):
        install_cell.repository(p)


# ------------------------------------------------------------------ install lines
INSTALL = re.compile(r"pip install ([^`\n]*)")
FROM_CLONE = re.compile(r'-e "\.\[([a-z,]+)\]"')
FROM_WHEEL = re.compile(r'"dist/toptwo-([^-]+)-py3-none-any\.whl\[([a-z,]+)\]"')


def _reader_texts() -> dict[str, str]:
    paths = [ROOT / "README.md", ROOT / "notebooks" / "README.md",
             ROOT / "notebooks" / "exercises" / "README.md"]
    paths += sorted((ROOT / "docs").rglob("*.md"))
    out = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in paths
           if "_build" not in p.parts and p.is_file()}
    import json
    for nb in sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        out[nb.relative_to(ROOT).as_posix()] = "\n".join("".join(c["source"]) for c in cells)
    return out


def install_line_problems(text: str, where: str) -> list[str]:
    """Install lines of ``text`` that do not install from a clone or a built wheel, or name
    an extra pyproject.toml does not declare, or a wheel of another version."""
    extras = set(PYPROJECT["project"]["optional-dependencies"])
    version = PYPROJECT["project"]["version"]
    problems = []
    for m in INSTALL.finditer(text):
        line = m[1].split("#")[0].split("&&")[0].strip().rstrip(";").strip()
        line = re.sub(r"(\\n)?'\)?$", "", line)        # inside a Python string literal
        clone, wheel = FROM_CLONE.fullmatch(line), FROM_WHEEL.fullmatch(line)
        if clone:
            named = clone[1].split(",")
        elif wheel:
            named = wheel[2].split(",")
            if wheel[1] != version:
                problems.append(f"{where}: wheel of version {wheel[1]}, not {version}: {line}")
        elif line in ("-e .", '-e "."', "--upgrade pip"):
            continue
        else:
            problems.append(f"{where}: not from a clone or a built wheel: pip install {line}")
            continue
        problems += [f"{where}: no extra {e!r} in pyproject.toml: {line}"
                     for e in named if e not in extras]
    return problems


def test_every_install_line_works_from_a_clone_or_a_wheel():
    texts = _reader_texts()
    assert {"README.md", "docs/index.md", "docs/course/syllabus.md"} <= set(texts)
    problems = [p for where, t in texts.items() for p in install_line_problems(t, where)]
    assert problems == [], "\n".join(problems)
    readme = texts["README.md"]
    assert 'pip install -e ".[notebooks]"' in readme and "whl[student]" in readme


def test_the_install_line_check_rejects_an_index_release():
    bad = ('pip install "toptwo[fast]"\npip install toptwo\npip install -e ".[nope]"\n'
           'pip install "dist/toptwo-9.9-py3-none-any.whl[student]"\n'
           'pip install "toptwo[student] @ git+<repository URL>"\n'
           'pip install -e ".[test]" && python -m toptwo demo\n')
    found = install_line_problems(bad, "x.md")
    assert len(found) == 5, found


def test_the_wheel_lines_are_resolved_in_ci():
    # .ci/lessons_from_wheel.sh builds the wheel like the README says and resolves every
    # extra the README and the book install from it
    script = (ROOT / ".ci" / "lessons_from_wheel.sh").read_text(encoding="utf-8")
    assert "pip wheel -q --no-deps -w" in script
    wheel_extras = {e for t in _reader_texts().values() for m in FROM_WHEEL.finditer(t)
                    for e in m[2].split(",")}
    m = re.search(r'pip install -q --dry-run "\$\{wheels\[0\]\}\[([a-z,]+)\]"', script)
    assert m and wheel_extras <= set(m[1].split(",")), (wheel_extras, m and m[1])
