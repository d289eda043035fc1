"""One version source: ``reverie.__version__`` is written once; the package metadata is built from
it, and the interfaces report it."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

import reverie
from reverie.cli import app
from reverie.http import create_app

ROOT = Path(__file__).resolve().parent.parent


def test_the_version_is_written_once_in_the_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "reverie.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+([.-]?(a|b|rc|dev|post)\d+)*", reverie.__version__)


def test_the_installed_metadata_carries_the_package_version() -> None:
    """An install built from this checkout carries its version (an editable install made before the
    version changed fails here: reinstall)."""
    assert importlib.metadata.version("reverie") == reverie.__version__


def test_the_interfaces_report_the_package_version(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["--version"])
    assert out.exit_code == 0 and out.output.strip() == f"reverie {reverie.__version__}"
    from reverie import Memory
    from reverie.embed.testing import HashEmbedder

    with Memory(tmp_path / "m.db", embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}) as mem:
        health = TestClient(create_app(mem)).get("/healthz").json()
    assert health == {"status": "ok", "version": reverie.__version__}


def test_python_dash_m_reverie_is_the_command() -> None:
    """``python -m reverie`` runs the same command as the installed ``reverie`` script."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "reverie", "--version"], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0 and out.stdout.strip() == f"reverie {reverie.__version__}", out.stderr
