"""Word lists for the text heuristics, one data file per language.

Every heuristic that reads natural language (the episode/note classifier, the observer, the contradiction and
update detectors, the intent router, …) takes its words from ``reverie/lexicons/<language>.toml``. Each file
maps a list name to the words and phrases of that language; a list is the union over all language files, so a
language is added by adding one file, without touching the logic.

Entries are regular-expression fragments (``yaptı\\w*``, ``step \\d+``) so that inflected languages can say
"this stem and its suffixes"; plain words need no escaping. A heuristic that wants a set of whole words uses
:func:`words`, one that wants a matcher uses :func:`pattern`.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources

__all__ = ["languages", "pattern", "terms", "words"]


@cache
def _tables() -> dict[str, dict[str, list[str]]]:
    folder = resources.files("reverie") / "lexicons"
    tables: dict[str, dict[str, list[str]]] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            data = tomllib.loads(entry.read_text(encoding="utf-8"))
            tables[entry.name.removesuffix(".toml")] = {k: [str(t) for t in v] for k, v in data.items()}
    return tables


def languages() -> tuple[str, ...]:
    """The languages that have a word-list file, by file name (``en``, ``tr``)."""
    return tuple(_tables())


@cache
def terms(name: str) -> tuple[str, ...]:
    """All languages' entries of the list ``name``, in file order (English first, then alphabetical).

    Raises ``KeyError`` for a list no language defines: a misspelt list name is a programming error."""
    tables = _tables()
    order = sorted(tables, key=lambda lang: (lang != "en", lang))
    found = [t for lang in order for t in tables[lang].get(name, ())]
    if not any(name in tables[lang] for lang in tables):
        raise KeyError(f"no word list named {name!r} in {', '.join(order)}")
    return tuple(found)


@cache
def words(name: str) -> frozenset[str]:
    """The entries of ``name`` as a set of case-folded words (for lists of plain words)."""
    return frozenset(t.casefold() for t in terms(name))


@cache
def pattern(
    name: str, *, word_start: bool = True, word_end: bool = True, flags: int = re.IGNORECASE
) -> re.Pattern[str]:
    """One alternation over the entries of ``name``, ``\\b(…|…)\\b`` by default: whole words. Drop either
    boundary for entries that carry their own (``i owe\\b``). Group 1 is the matched entry."""
    body = "|".join(terms(name))
    return re.compile(("\\b" if word_start else "") + f"({body})" + ("\\b" if word_end else ""), flags)
