"""Chat messages as input: ``add([{"role": "user", "content": "..."}, ...])``.

Agent frameworks hand over a conversation as a list of chat messages (the OpenAI / mem0 shape).
:func:`as_messages` recognises that shape and checks it; :meth:`reverie.Memory.add` runs each kept
message through the observer (as ``observe`` does) and then stores what is still buffered, so the
facts of the conversation are stored when ``add`` returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reverie.errors import InvalidInputError

#: roles whose text is observed; the others (system prompts, tool output) are not the user's facts
OBSERVED_ROLES = frozenset({"user", "assistant"})
SKIPPED_ROLES = frozenset({"system", "developer", "tool", "function"})


@dataclass(frozen=True, slots=True)
class Message:
    role: str
    text: str
    name: str | None = None


def looks_like_messages(value: Any) -> bool:
    """A chat message (a mapping with ``role``) or a non-empty list of them."""
    if isinstance(value, Mapping):
        return "role" in value
    if isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray) and value:
        return all(isinstance(m, Mapping) and "role" in m for m in value)
    return False


def as_messages(value: Any) -> list[Message]:
    """The messages of ``value`` (one mapping or a list), checked: every message needs a known
    ``role`` and text ``content`` (a string, or OpenAI content parts of ``{"type": "text"}``)."""
    items = [value] if isinstance(value, Mapping) else list(value)
    out: list[Message] = []
    for n, item in enumerate(items, start=1):
        if not isinstance(item, Mapping):
            raise InvalidInputError(f"message {n} must be a mapping with 'role' and 'content'")
        role = item.get("role")
        if role not in OBSERVED_ROLES | SKIPPED_ROLES:
            raise InvalidInputError(
                f"message {n}: role must be one of {sorted(OBSERVED_ROLES | SKIPPED_ROLES)}, got {role!r}"
            )
        if "content" not in item:
            raise InvalidInputError(f"message {n} has no 'content'")
        name = item.get("name")
        out.append(Message(str(role), _text(item["content"], n), name if isinstance(name, str) else None))
    return out


def _text(content: Any, n: int) -> str:
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, Sequence) and not isinstance(content, bytes | bytearray):
        parts = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type") in ("text", "input_text", "output_text"):
                parts.append(str(part.get("text", "")))
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(p for p in parts if p)
    raise InvalidInputError(f"message {n}: content must be text or a list of text parts, got {type(content).__name__}")


__all__ = ["OBSERVED_ROLES", "SKIPPED_ROLES", "Message", "as_messages", "looks_like_messages"]
