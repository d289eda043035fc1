"""What publishing needs, checked on every run: the source distribution and the wheel build from this checkout,
pass ``twine check`` (the index's own checks of the metadata and the README), and hold what they must — the
package with its data files (lexicons, the sample conversation, the dashboard's templates and assets, the type
marker) and nothing of the test suite, the benchmarks or their data."""

from __future__ import annotations

import email.parser
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

import reverie

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "reverie"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel, built once with the installed build backend (no download: fast)."""
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert "deprecated" not in built.stdout + built.stderr, "the build warns: fix pyproject.toml"
    [wheel] = out.glob("*.whl")
    [sdist] = out.glob("*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def test_twine_check_passes(dist: dict[str, Path]) -> None:
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(dist["wheel"]), str(dist["sdist"])],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2


def test_the_wheel_holds_the_package_and_its_data_and_nothing_else(dist: dict[str, Path]) -> None:
    names = zipfile.ZipFile(dist["wheel"]).namelist()
    top = {n.split("/")[0] for n in names}
    assert top == {"reverie", f"reverie-{reverie.__version__}.dist-info"}
    sources = {str(p.relative_to(PACKAGE.parent)) for p in PACKAGE.rglob("*.py")}
    assert sources <= set(names), sorted(sources - set(names))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for pattern in project["tool"]["setuptools"]["package-data"]["reverie"]:
        files = [str(p.relative_to(PACKAGE.parent)) for p in PACKAGE.glob(pattern)]
        assert files and set(files) <= set(names), pattern
    for name in names:
        parts = name.split("/")
        assert not {"tests", "bench", "data", "results", "__pycache__"} & set(parts), name
        assert not name.endswith((".db", ".jsonl", ".pyc")), name


def test_the_wheel_metadata(dist: dict[str, Path]) -> None:
    wheel = zipfile.ZipFile(dist["wheel"])
    info = f"reverie-{reverie.__version__}.dist-info"
    meta = email.parser.Parser().parsestr(wheel.read(f"{info}/METADATA").decode())
    assert meta["Name"] == "reverie" and meta["Version"] == reverie.__version__
    assert meta["License-Expression"] == "Apache-2.0" and meta["License-File"] == "LICENSE"
    assert "Apache License" in wheel.read(f"{info}/licenses/LICENSE").decode()
    assert meta.get_content_type() == "text/markdown" or meta["Description-Content-Type"] == "text/markdown"
    runtime = [r for r in meta.get_all("Requires-Dist") or [] if "extra ==" not in r]
    assert runtime and all(">=" in r or "==" in r for r in runtime)
    assert not any(r.split(";")[0].strip().startswith(("torch", "sentence-transformers")) for r in runtime)
    assert "reverie = reverie.cli:main" in wheel.read(f"{info}/entry_points.txt").decode()


def test_the_sdist_holds_the_sources_and_documents_not_the_tests_or_benchmarks(dist: dict[str, Path]) -> None:
    with tarfile.open(dist["sdist"]) as tar:
        names = [n.split("/", 1)[1] for n in tar.getnames() if "/" in n]
    assert {"pyproject.toml", "README.md", "LICENSE", "PKG-INFO", "src/reverie/__init__.py", "docs/guide.md"} <= set(
        names
    )
    assert "src/reverie/lexicons/en.toml" in names and "src/reverie/web/templates/base.html" in names
    assert not [n for n in names if n.split("/")[0] in ("tests", "bench", ".venv", "dist", "build")]
