"""The knowledge-update reading by an LLM, shared by the write path and the dream: does a newer statement
update (contradict) an older one? ``None`` when the model is unavailable or its answer does not validate;
the caller falls back to the heuristic reading (:mod:`reverie.text.updates`). Every text is clipped to
``limit`` characters before it is sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reverie.llm.client import ChatJSON

#: default character bound of one text in a prompt (``write.llm_input_chars``)
INPUT_CHARS = 4000

_CONTRADICT = (
    "A memory engine keeps what is true now. OLD is a stored memory, NEW was just said. Does NEW update "
    "or contradict OLD, so that OLD is no longer true now (the same subject and the same attribute with "
    "another value: moved, switched, now, instead, no longer, a correction, a changed number or date, "
    "someone left and another took the role)? Two related facts that can both be true (the same person "
    "or place, another attribute, another occasion, one more item) are no update. The text may be in any "
    'language (English, Turkish, ...). Answer JSON: {"contradicts": true|false, "reason": "one short '
    'sentence"}'
)


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text`` (bounded prompts)."""
    return text if len(text) <= limit else text[:limit]


def contradicts(llm: ChatJSON, old: str, new: str, *, limit: int = INPUT_CHARS) -> bool | None:
    """Whether ``new`` contradicts (updates) ``old`` according to the LLM, or ``None``."""
    answer = updates(llm, old, new, limit=limit)
    return None if answer is None else answer[0]


def updates(llm: ChatJSON, old: str, new: str, *, limit: int = INPUT_CHARS) -> tuple[bool, str] | None:
    """The LLM's verdict on a knowledge update: ``(new updates old, its reason)``, or ``None`` when the
    answer is missing or invalid (``contradicts`` must be a boolean; the reason is optional text)."""
    answer = llm.chat_json(
        system=_CONTRADICT, user=f"OLD: {clip(old, limit)}\nNEW: {clip(new, limit)}", op="contradiction"
    )
    if answer is None:
        return None
    value = answer.get("contradicts", answer.get("updates"))
    if not isinstance(value, bool):
        return None
    reason = answer.get("reason")
    return value, reason.strip()[:500] if isinstance(reason, str) and reason.strip() else "no reason given"
