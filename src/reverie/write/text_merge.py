"""Write-time merge: on UPDATE, the old text and the new information become one text.

LLM path: combine old + new, preserve every fact, resolve contradictions. Heuristic fallback:
append the sentences of the new text that the old one lacks, with a separator.
"""

from __future__ import annotations

from reverie.model import normalize_content
from reverie.text.words import sentences

SEPARATOR = "; "


def heuristic_merge(old: str, new: str, *, max_chars: int = 100_000) -> str:
    """``old`` plus the sentences of ``new`` it does not already contain (or ``new`` if it contains ``old``)."""
    known = normalize_content(old)
    if known == normalize_content(new):
        return old
    if known in normalize_content(new):
        return new[:max_chars]
    extra = [s for s in sentences(new) if normalize_content(s) not in known]
    if not extra:
        return old
    merged = old.rstrip() + SEPARATOR + " ".join(extra)
    return merged[:max_chars]
