"""The task guide and the integration pages: they exist, are linked, and the 10-line recipe runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [
    "guide.md",
    "llm.md",
    "integrations/langgraph.md",
    "integrations/langchain.md",
    "integrations/openai-agents.md",
]


def _recipe() -> str:
    guide = (DOCS / "guide.md").read_text(encoding="utf-8")
    section = guide.split("## Give an agent long-term memory in 10 lines", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def test_pages_exist_and_are_linked() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    guide = (DOCS / "guide.md").read_text(encoding="utf-8")
    for page in PAGES:
        text = (DOCS / page).read_text(encoding="utf-8")
        assert "seed 0" not in text and "SEED-NOTES" not in text, page
        assert f"docs/{page}" in readme or page in guide, page
    for task in (
        "10 lines",
        "MCP server for Claude",
        "many users on PostgreSQL",
        "Plug in an LLM",
        "dream cycle does to your data",
    ):
        assert task in guide, task
    llm = (DOCS / "llm.md").read_text(encoding="utf-8")
    for server in ("Ollama", "vLLM", "llama.cpp", "OpenAI"):
        assert server in llm, server


@pytest.mark.model
def test_the_ten_line_recipe_is_ten_lines_and_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _recipe()
    assert len([line for line in code.splitlines() if line.strip()]) <= 10
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    namespace: dict[str, Any] = {}
    exec(compile(code, "guide.md", "exec"), namespace)
    namespace["mem"].close()
    assert "penicillin" in capsys.readouterr().out
