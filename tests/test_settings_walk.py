"""The configuration reference lists no setting the engine ignores.

Every leaf setting of :class:`reverie.Settings` must be read by some code path. The check is dynamic:
attribute reads of settings sections are recorded while a representative workload runs through
``Memory`` on a real SQLite file (and on PostgreSQL when a server is available) — add, observe, search,
context, feedback, end_session, tick, the scheduled maintenance, every dream step over simulated weeks,
compaction, code ingestion, the documents and the markdown export — once without an LLM and once with
the loopback OpenAI-compatible server answering every stage. Settings the workload does not
reach (a branch it does not take: an OpenAI embedder's token limit, HNSW settings of large candidate sets,
archival after months) must at least have a live reader in the source: a function outside ``config/`` that
reads the attribute (or names it as a string, for per-profile tables) and that is itself called somewhere —
a reader nobody calls (the unwired case) does not count. A setting with neither fails the walk, with its
name: wire it into the engine or remove it from the settings and the docs.

Reads made while a settings object is built (pydantic validators) are not counted: recording starts
after the settings are validated.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from reverie import Memory, SettableClock
from reverie.config import Settings
from reverie.config.core import Section
from tests.support.llm_server import ChatServer


def _leaves(model: type[BaseModel], prefix: str = "") -> list[tuple[str, type[BaseModel], str]]:
    """(dotted name, owning section class, field name) of every leaf setting."""
    out: list[tuple[str, type[BaseModel], str]] = []
    for name, info in model.model_fields.items():
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, Section):
            out.extend(_leaves(ann, f"{prefix}{name}."))
        else:
            out.append((f"{prefix}{name}", model, name))
    return out


def _owners(cls: type[BaseModel], name: str) -> set[str]:
    """The class names a read of ``name`` on an instance of ``cls`` may be recorded under (subclasses)."""
    out = {cls.__name__}
    stack = list(cls.__subclasses__())
    while stack:
        sub = stack.pop()
        out.add(sub.__name__)
        stack.extend(sub.__subclasses__())
    return out


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> Iterator[set[tuple[str, str]]]:
    """Record (section class name, field name) of every settings attribute read while it is active."""
    reads: set[tuple[str, str]] = set()
    fields_of: dict[type, frozenset[str]] = {}

    def getattribute(self: Any, name: str) -> Any:
        cls = type(self)
        names = fields_of.get(cls)
        if names is None:
            names = fields_of[cls] = frozenset(cls.model_fields)
        if name in names:
            reads.add((cls.__name__, name))
        return object.__getattribute__(self, name)

    monkeypatch.setattr(Section, "__getattribute__", getattribute)
    monkeypatch.setattr(Settings, "__getattribute__", getattribute)
    yield reads


_FACTS = [
    "I prefer dark roast coffee in the morning.",
    "My sister Ana lives in Lisbon and works as an architect.",
    "We decided to use PostgreSQL for the billing service.",
    "Yesterday I went hiking at Mount Rainier with Tom.",
    "Last week I went kayaking at Lake Washington.",
    "On Saturday I ran a 5K in Fremont.",
    "I went rock climbing at Stone Gardens on Sunday.",
    "I joined a cycling club in March.",
    "I have a dentist appointment on May 3 at 10am.",
    "Correction: my sister Ana lives in Porto, not Lisbon.",
    "Always run the tests before merging a pull request.",
    "How to deploy: build the image, push it, then run the migration.",
    "I promised to send Maria the quarterly report by Friday.",
    "The API rate limit is 100 requests per minute.",
    "I am thrilled: I got the job offer from Acme!",
    "Tom prefers tea over coffee.",
    "I switched from Vim to Neovim last month.",
    "We use Python 3.11 for every service.",
]

_QUERIES = [
    "what coffee do I like?",
    "where does Ana live?",
    "why did we choose PostgreSQL?",
    "when did I go hiking?",
    "tell me about Tom",
    "what outdoor activities did I do?",
    "which editor do I use?",
]


def _llm_answer(req: dict[str, Any]) -> tuple[int, Any, float]:
    """A plausible JSON answer for each LLM stage (by keywords of its system prompt); ``{}`` otherwise
    (every stage parses fail-open)."""
    system = str(req["messages"][0]["content"]).lower()
    user = str(req["messages"][-1]["content"])
    if "intent" in system:
        return 200, json.dumps({"intent": "factual"}), 0.0
    if "extract" in system:
        return 200, json.dumps({"facts": [{"text": user[:200], "category": "fact", "confidence": 0.8}]}), 0.0
    if "summar" in system or "consolidat" in system or "merge" in system:
        return 200, json.dumps({"text": "A summary of related activities.", "summary": "A summary."}), 0.0
    return 200, "{}", 0.0


def _workload(target: str, tmp_path: Path, llm_url: str | None, tag: str) -> None:
    clock = SettableClock(datetime(2025, 3, 1, 9, 0, tzinfo=UTC))
    cfg: dict[str, Any] = {"opslog": {"path": str(tmp_path / f"ops-{tag}.jsonl")}}
    if llm_url:
        cfg["llm"] = {"base_url": llm_url, "timeout_s": 2.0, "retries": 0}
    settings = Settings.load(**cfg)
    # the default embedder is built from the embedding settings (read here)
    with Memory(target, config=settings, clock=clock) as m:
        for i, fact in enumerate(_FACTS):
            m.add(fact, user_id="u1", session_id=f"s{i % 3}")
            clock.advance(timedelta(minutes=7))
        for i, turn in enumerate(
            [
                "Hi! I moved to Berlin last month.",
                "ok",
                "thanks!",
                "My favourite band is Radiohead and I love their album OK Computer.",
                "Can you remind me what I said about coffee?",
            ]
        ):
            m.observe(turn, role="user" if i % 2 == 0 else "assistant", user_id="u1", session_id="chat")
        m.flush(user_id="u1", session_id="chat")
        for q in _QUERIES:
            hits = m.search(q, user_id="u1", session_id="chat")
            if hits:
                m.feedback(hits[0].memory.id, useful=True)
                m.get(hits[0].memory.id)
                m.explain_strength(hits[0].memory.id)
        # restatements (REINFORCE), related facts seen again (edge reinforcement), an elaborated note (UPDATE)
        for text in [
            "Ana Silva and Tom Berg work at Acme Labs in Lisbon",
            "Ana Silva phoned Tom Berg about quarterly budget spreadsheets",
            "Ana Silva phoned Tom Berg about quarterly budget spreadsheets again",
            "I prefer dark roast coffee in the morning!",
            "I always prefer dark roast coffee in the morning, with oat milk and no sugar",
            "Correction: Tom Berg works at Acme Labs in Porto, not Lisbon.",
        ]:
            m.add(text, user_id="u1", session_id="s9")
            clock.advance(timedelta(minutes=3))
        for hit in m.search("Ana Silva", user_id="u1", k=3):
            m.pin(hit.memory.id)
            m.unpin(hit.memory.id)
        for q in ["what did I do last week?", "what happened before March 5?", "what did I do after March 1?"]:
            m.search(q, user_id="u1")
        m.search("coffee", all_users=True)
        m.context("plan my weekend outdoors", user_id="u1", session_id="chat")
        m.search("hiking", user_id="u1", deep=True)
        m.working_memory("chat", user_id="u1")
        m.end_session("chat", user_id="u1")
        m.tick()
        for _ in range(6):  # weeks pass: decay, promotion, consolidation, forgetting, archival
            clock.advance(timedelta(days=9))
            m.maintain()
            m.dream()
            m.search("outdoor activities", user_id="u1")
        (tmp_path / f"code-{tag}" / "pkg" / "__pycache__").mkdir(parents=True)
        (tmp_path / f"code-{tag}" / "pkg" / "util.py").write_text("def g() -> None:\n    pass\n")
        (tmp_path / f"code-{tag}" / "link.py").symlink_to(tmp_path / f"code-{tag}" / "pkg" / "util.py")
        (tmp_path / f"code-{tag}" / "mod.py").write_text(
            '"""A module."""\n\ndef f(x: int) -> int:\n    """Double."""\n    return 2 * x\n'
        )
        m.ingest_code(tmp_path / f"code-{tag}", user_id="u1")
        m.documents(user_id="u1", refresh=True)
        m.topic_index(user_id="u1", refresh=True)
        m.export_markdown(tmp_path / f"export-{tag}", user_id="u1")
        m.compact()
        m.stats()


def _other_entry_points(tmp_path: Path) -> None:
    """Readers outside one Memory's calls: the default database location, and an OpenAI-compatible
    embedder built from the embedding settings."""
    from reverie.config.core import EmbeddingSettings
    from reverie.embed import make_embedder
    from reverie.memory import default_target

    default_target(Settings.load(storage={"data_dir": str(tmp_path / "data")}))
    make_embedder(EmbeddingSettings(provider="openai", base_url="http://127.0.0.1:9/v1", model="m", dimensions=8))


SRC = Path(__file__).resolve().parents[1] / "src" / "reverie"


def _live_readers() -> dict[str, set[str]]:
    """Attribute names (and string constants) read by live code: {name: {function, ...}}. A function is live
    when its name is used (called, passed, registered) somewhere in the source, not only defined, imported or
    listed in ``__all__``. In ``config/`` only the helper methods count (a validator reads every field)."""
    files = list(SRC.rglob("*.py"))
    trees = {p: ast.parse(p.read_text()) for p in files}
    used: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                used.add(node.id)
            elif isinstance(node, ast.Attribute):
                used.add(node.attr)
    reads: dict[str, set[str]] = {}

    def visit(node: ast.AST, where: str, in_config: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                validator = any("validator" in ast.unparse(d) for d in child.decorator_list)
                live = child.name in used or child.name.startswith("__") or bool(child.decorator_list)
                visit(child, child.name if live and not validator else "<dead>", in_config)
                continue
            if where != "<dead>" and not (in_config and where == "<module>"):
                if isinstance(child, ast.Attribute):
                    reads.setdefault(child.attr, set()).add(where)
                elif isinstance(child, ast.Constant) and isinstance(child.value, str):
                    reads.setdefault(child.value, set()).add(where)
            visit(child, where, in_config)

    for path, tree in trees.items():
        visit(tree, "<module>", "config" in path.relative_to(SRC).parts)
    return reads


def test_every_setting_is_read_by_the_engine(
    recording: set[tuple[str, str]], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    server = ChatServer()
    server.script = _llm_answer
    try:
        _workload(str(tmp_path / "plain.db"), tmp_path, None, "plain")
        _workload(str(tmp_path / "llm.db"), tmp_path, server.url, "llm")
    finally:
        server.close()
    _other_entry_points(tmp_path)
    try:  # the PostgreSQL backend reads its own storage settings
        pg = request.getfixturevalue("pg_url")
    except pytest.skip.Exception:
        pg = None
    if pg is not None:
        _workload(pg, tmp_path, None, "pg")
    unreached = [
        (dotted, name)
        for dotted, cls, name in _leaves(Settings)
        if not any((owner, name) in recording for owner in _owners(cls, name))
    ]
    live = _live_readers()
    unread = [dotted for dotted, name in unreached if not live.get(name)]
    assert not unread, (
        f"{len(unread)} setting(s) no code path reads (not read during the workload, and no "
        "function that is called reads them):\n  " + "\n  ".join(unread)
    )
