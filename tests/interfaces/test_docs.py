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


def test_getting_started_lists_the_mcp_tools_the_server_offers() -> None:
    """The default server's tools, then what ``--tools all`` adds: exactly, in the server's order."""
    import re

    from reverie.mcp_server import ALL_TOOLS, DEFAULT_TOOLS

    text = " ".join((DOCS / "getting-started.md").read_text(encoding="utf-8").split())
    default = re.search(r"By default it offers the (\d+) tools an agent needs in a conversation: (.*?)\. ", text)
    assert default is not None
    assert int(default.group(1)) == len(DEFAULT_TOOLS)
    assert tuple(re.findall(r"`(\w+)`", default.group(2))) == DEFAULT_TOOLS
    more = re.search(r"`--tools all` adds the operator's tools: (.*?);", text)
    assert more is not None
    assert tuple(re.findall(r"`(\w+)`", more.group(1))) == tuple(t for t in ALL_TOOLS if t not in DEFAULT_TOOLS)
