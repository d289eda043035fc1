"""The configuration reference is generated from the settings object and must be current."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from reverie.config import iter_settings

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_config", DOCS / "gen_config.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_configuration_reference_is_current() -> None:
    committed = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert committed == _generator().render(), "docs/configuration.md is stale: run python docs/gen_config.py"


def test_every_setting_is_documented_with_its_environment_variable() -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    for name, _default, _description, _source in iter_settings():
        assert f"| `{name}` | `REVERIE_{name.upper().replace('.', '__')}` |" in text, name


def test_docs_pages_exist_and_link_each_other() -> None:
    for page in ("getting-started.md", "concepts.md", "configuration.md", "architecture.md", "production.md"):
        assert (DOCS / page).is_file(), page
    start = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    for needle in ('"mcpServers"', "claude mcp add", "reverie serve", "reverie mcp", "/v1/search", "production.md"):
        assert needle in start, needle
