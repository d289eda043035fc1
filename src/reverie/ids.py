"""Short forms of memory ids for people.

Memory ids are time-ordered UUIDv7s: everything written within about a minute shares its first
eight characters, so a fixed ``id[:8]`` is useless. :func:`short_ids` gives each id of a list the
shortest prefix (at least ``min_len`` characters) that no other id *of that list* shares; every
interface accepts any unique prefix back (:meth:`reverie.Memory.resolve_id`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

MIN_SHORT_ID = 8


def short_ids(ids: Iterable[str], *, min_len: int = MIN_SHORT_ID) -> dict[str, str]:
    """``{id: short form}``: one common length for all (columns line up), the shortest at least
    ``min_len`` at which the shown ids are pairwise distinct. A trailing ``-`` is kept off the cut."""
    unique = sorted(set(ids))
    if not unique:
        return {}
    longest = max(len(i) for i in unique)
    # the distinguishing length of a sorted list is one past the longest common prefix of neighbours
    need = min_len
    for a, b in itertools.pairwise(unique):
        need = max(need, common_prefix_len(a, b) + 1)
    need = min(need, longest)
    out: dict[str, str] = {}
    for full in unique:
        cut = full[:need]
        if cut.endswith("-") and len(full) > need:
            cut = full[: need + 1]
        out[full] = cut
    return out


def common_prefix_len(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def short_id(memory_id: str, *, min_len: int = MIN_SHORT_ID) -> str:
    """One id shown on its own (``min_len`` characters)."""
    return memory_id[:min_len]


__all__ = ["MIN_SHORT_ID", "common_prefix_len", "short_id", "short_ids"]
