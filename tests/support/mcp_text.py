"""The text of an MCP answer: a tool call's first content block or a resource's first contents."""

from __future__ import annotations

from mcp.types import CallToolResult, ReadResourceResult, TextContent, TextResourceContents


def text_of(result: CallToolResult | ReadResourceResult) -> str:
    """The text of the first block of ``result``; fails the test if that block is not text."""
    first = result.content[0] if isinstance(result, CallToolResult) else result.contents[0]
    assert isinstance(first, TextContent | TextResourceContents), f"not a text answer: {first!r}"
    return first.text
