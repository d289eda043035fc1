"""The codebase stays readable: no source file over 800 lines, no function over 80 lines.

A file that grows past the limit is split by what its parts do; a function that grows past it is split
into named steps. The limits are the ones the architecture notes promise (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "reverie"
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80


def _sources() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def test_no_source_file_over_the_limit() -> None:
    long = {str(p.relative_to(SRC)): n for p in _sources() if (n := len(p.read_text().splitlines())) > MAX_FILE_LINES}
    assert long == {}, f"split these files (lines > {MAX_FILE_LINES}): {long}"


def test_no_function_over_the_limit() -> None:
    long: dict[str, int] = {}
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(SRC)}:{node.name}"] = lines
    assert long == {}, f"split these functions (lines > {MAX_FUNCTION_LINES}): {long}"
