"""The math layer has no I/O: no import of the store, the clock, the network, and no clock reads."""

from __future__ import annotations

import ast
from pathlib import Path

import reverie.dynamics

DYNAMICS = Path(reverie.dynamics.__file__).parent
FORBIDDEN_MODULES = (
    "reverie.store", "reverie.clock", "reverie.memory", "reverie.embed", "reverie.llm", "reverie.read",
    "reverie.write", "reverie.dream", "fsrs", "socket", "http", "urllib", "httpx", "requests", "asyncio",
    "sqlite3", "psycopg", "time", "os", "subprocess", "random", "threading", "pathlib", "io", "shutil",
)  # fmt: skip
FORBIDDEN_CALLS = {"now", "utcnow", "today", "time", "open", "monotonic", "perf_counter", "system_clock"}


def modules() -> list[Path]:
    found = sorted(DYNAMICS.glob("*.py"))
    assert len(found) >= 15
    return found


def _imported(tree: ast.AST) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
    return names


def test_no_forbidden_imports() -> None:
    bad = []
    for path in modules():
        for name in _imported(ast.parse(path.read_text(encoding="utf-8"))):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN_MODULES):
                bad.append(f"{path.name}: {name}")
    assert bad == []


def test_no_clock_reads_or_file_access() -> None:
    bad = []
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                fn = node.func
                name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
                if name in FORBIDDEN_CALLS:
                    bad.append(f"{path.name}:{node.lineno} {name}()")
    assert bad == []


def test_no_module_state_is_mutated() -> None:
    """No ``global`` statements: functions depend only on their arguments."""
    for path in modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert not any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(tree)), path.name


def _module_file(name: str) -> Path | None:
    root = DYNAMICS.parent.parent  # src/
    base = root.joinpath(*name.split("."))
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def test_transitive_imports_reach_no_store_clock_or_network() -> None:
    """Follow every ``reverie.*`` import of the dynamics modules (and of their subpackages'
    ``__init__``, except the public facade ``reverie/__init__``): none reaches the store, the
    clock or the network."""
    banned = ("reverie.store", "reverie.clock", "reverie.memory", "reverie.embed", "reverie.llm",
              "socket", "http", "urllib", "httpx", "requests", "sqlite3", "psycopg")  # fmt: skip
    seen: set[str] = set()
    todo = [f"reverie.dynamics.{p.stem}" for p in modules() if p.stem != "__init__"] + ["reverie.dynamics"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        assert not any(name == b or name.startswith(b + ".") for b in banned), f"reaches {name}"
        if not name.startswith("reverie"):
            continue
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(2, len(parts))]  # parent packages (not the facade)
        path = _module_file(name)
        if path is not None:
            todo += [n for n in _imported(ast.parse(path.read_text(encoding="utf-8"))) if n]
    assert "reverie.model" in seen and "reverie.config.dynamics" in seen
