"""Current version first (``read.current_first``, current mode only).

A superseded memory in the pool (the temporal intent includes them) is placed right after the memory that
replaced it, which is fetched when the search did not find it; and of two candidates where the newer updates
the older (:func:`reverie.text.updates.judge`), the newer takes the older's place and the older follows it.
Both are marked ``superseded`` in the explanation, with the reason. A superseded memory found only because
the search was widened to superseded memories is a *proxy*: it hands its score to what replaced it and
leaves the results. A question about the past ("When did Maya live in Berlin?") wants the superseded memory
itself, and is left alone.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from reverie import lexicon
from reverie.config import Settings
from reverie.config.read import ReadSettings
from reverie.model import MemoryRecord, RelationType, Status
from reverie.read import consolidated, filters
from reverie.read.hybrid import PoolEntry
from reverie.store.base import MemoryFilter, Store

F32 = npt.NDArray[np.float32]
#: the pool's order: (index into the pool, what the ordering steps noted about it)
Order = list[tuple[int, dict[str, Any]]]
Scored = tuple[float, dict[str, Any]]

_PAST_QUESTION = lexicon.pattern("read_past_question")
# Turkish asks about the past with its verb suffixes ("taşındı mı?", "yaşıyor muydu?"): a grammar, applied to
# Turkish queries only
_PAST_QUESTION_TR = re.compile(
    r"\b(önceden|eskiden|daha önce|ilk)\b|\w+(?:dı|di|du|dü|tı|ti|tu|tü)(?:m|n|k|nız|niz)?\s+m[ıiuü]\b|"
    r"\w+m[ıiuü]yd[ıiuü]\w*|\w+(?:dı|di|du|dü|tı|ti|tu|tü)(?:m|n|k)?\s*\?",
    re.IGNORECASE,
)


def asks_about_past(query: str) -> bool:
    """Whether ``query`` asks about how things were ("When did …", "Where did … live before?", "… taşındı
    mı?"), not about how they are now."""
    from reverie.text.updates import is_turkish

    if _PAST_QUESTION.search(query):
        return True
    return is_turkish(query) and bool(_PAST_QUESTION_TR.search(query))


def applies(settings: Settings, *, query: str, mode: str, as_of: datetime | None) -> bool:
    """Current version first: in the current mode, for a question about now — one that asks about
    the past ("When did Maya live in Berlin?") wants the superseded memory itself."""
    return settings.read.current_first and mode == "current" and as_of is None and not asks_about_past(query)


def proxies(
    store: Store,
    cands: Sequence[PoolEntry],
    records: dict[str, MemoryRecord],
    widened: bool,
    admissible: Callable[[PoolEntry], bool],
) -> set[str]:
    """Candidates superseded by a newer fact, found by the current-version search (``widened``): they
    hand their score to what replaced them. A member held by its consolidation summary is no such
    memory (recall through consolidation brings it back itself)."""
    if not widened:
        return set()
    old = [c for c in cands if c.id in records and records[c.id].status is Status.SUPERSEDED and not admissible(c)]
    wanted = [records[c.id].superseded_by for c in old if records[c.id].superseded_by not in records]
    parents = {**records, **(store.get([w for w in wanted if w]) if wanted else {})}
    out: set[str] = set()
    for c in old:
        parent = parents.get(records[c.id].superseded_by or "")
        if parent is None or c.id not in consolidated.members_of(parent):
            out.add(c.id)
    return out


def successors(
    store: Store, cands: list[PoolEntry], records: dict[str, MemoryRecord], flt: MemoryFilter
) -> list[PoolEntry]:
    """The memories that replaced the superseded candidates, when the search did not find them (the
    current version of what a superseded memory said), following a chain of at most three updates."""
    have = {c.id for c in cands}
    added: list[PoolEntry] = []
    wanted = {
        records[c.id].superseded_by: c
        for c in cands
        if records[c.id].status is Status.SUPERSEDED and records[c.id].superseded_by
    }
    for _ in range(3):
        missing = {mid: c for mid, c in wanted.items() if mid and mid not in have}
        if not missing:
            break
        found = store.get(list(missing))
        wanted = {}
        for mid, rec in found.items():
            origin = missing[mid]
            if not filters.matches(
                dataclasses.replace(rec, status=Status.ACTIVE), flt
            ) or origin.id in consolidated.members_of(rec):
                continue  # out of scope, or the consolidation summary holding it (not a newer fact)
            records[mid] = rec
            have.add(mid)
            if rec.status is Status.SUPERSEDED and rec.superseded_by:
                wanted[rec.superseded_by] = origin
            if rec.status is Status.ACTIVE or rec.superseded_by:
                added.append(PoolEntry(mid, origin.rrf, "successor", {"successor": {"of": origin.id, "rank": None}}))
    return added


def possible_updates(store: Store, ids: Sequence[str]) -> frozenset[tuple[str, str]]:
    """The ``may_update`` links among ``ids`` (the best candidates): (older id, newer id) pairs the write path kept
    side by side because its reading was unsure. One store round trip."""
    if len(ids) < 2:
        return frozenset()
    wanted = set(ids)
    links = store.relations(list(ids), types=frozenset({RelationType.MAY_UPDATE}), direction="out")
    return frozenset((r.dst_id, r.src_id) for r in links if r.dst_id in wanted)


def anchors(
    store: Store, cands: list[PoolEntry], records: dict[str, MemoryRecord], flt: MemoryFilter
) -> tuple[list[PoolEntry], dict[str, str]]:
    """For each disputed candidate (a statement written against an immutable memory), the immutable memory it
    contradicts: fetched into the pool when the search did not find it, so that it can be placed above the
    statement that disputes it (:func:`anchors_first`). Returns the added entries and disputed id -> anchor id.
    One store round trip, and only when a disputed memory is in the pool."""
    disputed = [c for c in cands if records[c.id].verification_state == "disputed"]
    if not disputed:
        return [], {}
    links = store.relations([c.id for c in disputed], types=frozenset({RelationType.CONTRADICTS}), direction="out")
    wanted = {r.dst_id for r in links} - set(records)
    found = {**records, **(store.get(list(wanted)) if wanted else {})}
    have = {c.id for c in cands}
    added: list[PoolEntry] = []
    anchor_of: dict[str, str] = {}
    by_id = {c.id: c for c in disputed}
    for r in links:
        anchor = found.get(r.dst_id)
        if anchor is None or not anchor.immutable or not filters.matches(anchor, flt) or r.src_id in anchor_of:
            continue
        anchor_of[r.src_id] = anchor.id
        if anchor.id not in have:
            records[anchor.id] = anchor
            have.add(anchor.id)
            added.append(PoolEntry(anchor.id, by_id[r.src_id].rrf, "anchor", {"anchor": {"of": r.src_id}}))
    return added, anchor_of


def anchors_first(order: Order, cands: list[PoolEntry], anchor_of: dict[str, str]) -> Order:
    """``order`` with each immutable memory right above a statement that disputes it, when it was below."""
    if not anchor_of:
        return order
    out = list(order)
    for disputed, anchor in anchor_of.items():
        pos = {cands[i].id: p for p, (i, _) in enumerate(out)}
        p_d, p_a = pos.get(disputed), pos.get(anchor)
        if p_d is None or p_a is None or p_a < p_d:
            continue
        i_a, extra = out.pop(p_a)
        out.insert(p_d, (i_a, {**extra, "anchor_of": disputed}))
    return out


def through_proxies(
    cands: list[PoolEntry],
    scored: list[Scored],
    vecs: F32,
    sims: np.ndarray,
    records: dict[str, MemoryRecord],
    proxies: set[str] | frozenset[str],
) -> tuple[list[PoolEntry], list[Scored], F32, np.ndarray]:
    """Superseded memories found by the search hand their score to their current version (following the
    chain of updates) and leave the results: the question they answer is answered by what replaced them.
    Superseding demotes, it never hides: the one that answers the question better than every current memory
    stays among the results, and :func:`first` places it right after its successor, marked as the earlier
    version — a false supersede then costs a rank, never the fact."""
    index = {c.id: i for i, c in enumerate(cands)}
    best_current = max((scored[i][0] for i, c in enumerate(cands) if c.id not in proxies), default=float("-inf"))
    kept: set[str] = set()
    for i, c in enumerate(cands):
        if c.id not in proxies:
            continue
        head, hops = records[c.id].superseded_by, 0
        while head in index and head in proxies and hops < 5:
            head, hops = records[head].superseded_by, hops + 1
        j = index.get(head) if head else None
        if j is None or cands[j].id in proxies or scored[i][0] <= scored[j][0]:
            continue
        if scored[i][0] > best_current and records[c.id].superseded_by == cands[j].id:
            kept.add(c.id)
        score, terms = scored[j]
        scored[j] = (
            scored[i][0],
            {
                **terms,
                "found_through": {
                    "id": c.id,
                    "score": round(scored[i][0], 6),
                    "own_score": round(score, 6),
                    "note": "the question matches the memory this one replaced; it answers with the current version",
                },
            },
        )
    keep = [i for i, c in enumerate(cands) if c.id not in proxies or c.id in kept]
    return [cands[i] for i in keep], [scored[i] for i in keep], vecs[keep], sims[keep]


def first(
    settings: Settings,
    profile: str,
    order: Order,
    cands: list[PoolEntry],
    records: dict[str, MemoryRecord],
    vecs: F32,
    scores: Sequence[float] = (),
    links: frozenset[tuple[str, str]] = frozenset(),
) -> Order:
    """``order`` with what is true now first, on evidence (module docs):

    - a superseded memory in the results is placed right after the memory that replaced it;
    - of two results where the newer updates the older by the update reading (the same subject and attribute,
      another value, or a value let go: :func:`reverie.text.updates.judge`), the newer takes the older's place
      and the older follows it;
    - of two results where the newer only *may* update the older (``links``: ``may_update`` relations the write
      path made, (older id, newer id); or the reading's same subject and attribute with a change said, values not
      aligned, found close in meaning), the newer comes first only when both answer the question: its score
      within ``read.same_answer_margin`` of the older's. Nothing else reorders: a change word, a shared subject
      or closeness in the embedding alone is no evidence that two statements answer the same question.
    """
    cfg = settings.read
    index = {cands[i].id: pos for pos, (i, _) in enumerate(order)}
    score_of = {cands[i].id: (scores[i] if scores else 0.0) for i, _ in order}
    successor = _stored_successors(order, cands, records, index)
    top = [i for i, _ in order[: cfg.update_check_top]]
    gate = settings.write.gate.profile(profile)
    floor, change_min = gate.update_candidate_min, gate.change_min
    found = read_time_updates(top, cands, records, vecs, floor, change_min=change_min)
    # a correction worded apart from the question may rank far down: the best results look for what updates
    # them in the whole pool (only a verdict at the update score brings one up from there)
    best = top[: cfg.successor_search_top]
    rest = [i for i, _ in order[cfg.update_check_top :]]
    found += [
        t
        for t in read_time_updates(
            best,
            cands,
            records,
            vecs,
            floor,
            newer=rest,
            nearest=cfg.successor_search_neighbours,
            change_min=change_min,
        )
        if t[2].updates and not t[2].by_similarity
    ]
    possible: list[tuple[str, str, str]] = []  # (old id, new id, why)
    for a, b, verdict in found:
        old, new = cands[a].id, cands[b].id
        if old in successor or new in successor:
            continue
        if verdict.updates and not verdict.by_similarity:
            successor[old] = (new, "read", f"the newer memory updates it: {verdict.reason}")
        elif verdict.by_similarity:  # the same subject and attribute, a change said, values not aligned
            possible.append((old, new, f"it may update the older one: {verdict.reason}"))
        # a likely update the reading could not confirm is no evidence: relevance decides
    possible += [
        (old, new, "it was written as a possible update of the older one (linked when it was written)")
        for old, new in sorted(links)
        if old in index and new in index
    ]
    ranked = _newer_of_two_answers(cfg, list(order), cands, records, score_of, possible, set(successor))
    return _place_successors(ranked, cands, successor)


def _stored_successors(
    order: Order, cands: list[PoolEntry], records: dict[str, MemoryRecord], index: dict[str, int]
) -> dict[str, tuple[str, str, str]]:
    """old id -> (new id, how, reason) for each superseded result whose successor is in the results too."""
    successor: dict[str, tuple[str, str, str]] = {}
    for i, _ in order:
        rec = records[cands[i].id]
        if (
            rec.status is Status.SUPERSEDED and rec.superseded_by in index and cands[i].stage not in ("cold", "summary")
        ):  # a member held by its summary is still true
            assert rec.superseded_by is not None
            successor[rec.id] = (rec.superseded_by, "stored", "superseded when the newer memory was written")
    return successor


def _place_successors(ranked: Order, cands: list[PoolEntry], successor: dict[str, tuple[str, str, str]]) -> Order:
    """Each newer version takes the place of the memory it replaces when it ranked below it; the older follows."""
    for old, (new, how, reason) in successor.items():
        pos_old = next(p for p, (i, _) in enumerate(ranked) if cands[i].id == old)
        pos_new = next(p for p, (i, _) in enumerate(ranked) if cands[i].id == new)
        i_old, mmr_old = ranked[pos_old]
        mark = {**mmr_old, "superseded": {"by": new, "how": how, "reason": reason[:300]}}
        if pos_new < pos_old:
            ranked[pos_old] = (i_old, mark)
            continue
        # the newer version takes the older one's place; the older follows right after it
        i_new, mmr_new = ranked.pop(pos_new)
        ranked.pop(pos_old)
        ranked[pos_old:pos_old] = [(i_new, {**mmr_new, "current_version_of": old}), (i_old, mark)]
    return ranked


def _newer_of_two_answers(
    cfg: ReadSettings,
    ranked: Order,
    cands: list[PoolEntry],
    records: dict[str, MemoryRecord],
    score_of: dict[str, float],
    possible: list[tuple[str, str, str]],
    skip: set[str],
) -> Order:
    """Each newer memory that may update an older one comes first when both answer the question: both active,
    its score within ``read.same_answer_margin`` of the older's. Two statements about different attributes
    answer different questions, so the one asked about scores clearly higher and keeps its place."""
    for old, new, why in possible:
        if old in skip or new in skip:
            continue
        a, b = records[old], records[new]
        if a.status is not Status.ACTIVE or b.status is not Status.ACTIVE:
            continue
        if (b.valid_from or b.created_at) <= (a.valid_from or a.created_at):
            continue
        if score_of[new] < score_of[old] - cfg.same_answer_margin:
            continue
        pos = {cands[i].id: p for p, (i, _) in enumerate(ranked)}
        p, q = pos[old], pos[new]
        if q < p:
            continue
        item = ranked.pop(q)
        note = f"the newer of two answers to this question comes first: {why}"
        ranked.insert(p, (item[0], {**item[1], "newer_first": {"over": old, "note": note[:300]}}))
        skip.add(new)
    return ranked


def _says_change(rec: MemoryRecord) -> bool:
    """Whether the memory's text says that something changed (read only for a pair that passed every cheaper
    test: the reading is the costly part)."""
    from reverie.text import updates as wupdates

    return wupdates.says_change(rec.content)


def read_time_updates(
    top: Sequence[int],
    cands: Sequence[PoolEntry],
    records: dict[str, MemoryRecord],
    vecs: F32,
    floor: float,
    *,
    newer: Sequence[int] | None = None,
    nearest: int = 0,
    change_min: float | None = None,
) -> list[tuple[int, int, Any]]:
    """Pairs (older, newer, verdict) among the ``top`` candidates where the newer one likely updates the
    older (same speaker or none named, similar from ``floor`` — the write gate's ``update_candidate_min``
    — and the newer says that something changed: a change or correction word, a value let go, a
    negation). ``newer``: look for the newer ones among these candidates instead of ``top``; ``nearest``: of
    them, read only each older memory's ``nearest`` most similar ones (0 = all); ``change_min``: the embedder's
    similarity from which a change whose values the reading could not align updates (the write gate's
    ``change_min``, see :func:`reverie.text.updates.unaligned_update`; None: only the reading decides)."""
    from reverie.text import updates as wupdates

    out: list[tuple[int, int, Any]] = []
    others = top if newer is None else newer
    when = {i: records[cands[i].id].valid_from or records[cands[i].id].created_at for i in (*top, *others)}
    active = [i for i in top if records[cands[i].id].status is Status.ACTIVE]
    if not active:
        return out
    # only a memory newer than and similar to one of the older ones is read (a cosine is cheaper than a reading;
    # the pair's own check below is exact, this one keeps a hair's margin for the matrix product's rounding)
    others = [i for i in others if records[cands[i].id].status is Status.ACTIVE]
    sims = vecs[others] @ vecs[active].T if others else np.zeros((0, len(active)), np.float32)
    near: set[int] = set()  # rows newer than and similar to an older memory (its nearest, with ``nearest``)
    for col, a in enumerate(active):
        fits = [
            (float(sims[row, col]), row)
            for row, b in enumerate(others)
            if a != b and when[b] > when[a] and sims[row, col] >= floor - 1e-6
        ]
        near.update(row for _, row in sorted(fits, reverse=True)[: nearest or None])
    others = [b for row, b in enumerate(others) if row in near]
    # a newer memory that says no change updates nothing: read once per memory, not once per pair, and only
    # for a pair that passed the cheaper tests
    says: dict[int, bool] = {}
    for a in active:
        for b in others:
            if a == b or when[b] <= when[a]:
                continue
            old, new = records[cands[a].id], records[cands[b].id]
            speaker = new.metadata.get("speaker")
            if wupdates.other_speaker(old, speaker if isinstance(speaker, str) else None):
                continue
            similarity = float(vecs[a] @ vecs[b])
            if similarity < floor:
                continue
            if b not in says:
                says[b] = _says_change(new)
            if not says[b]:
                continue
            verdict = wupdates.judge(old.content, new.content)
            if change_min is not None:
                verdict = wupdates.unaligned_update(verdict, similarity, change_min)
            if verdict.likely:
                out.append((a, b, verdict))
    out.sort(key=lambda t: -t[2].score)
    return out


__all__ = [
    "anchors",
    "anchors_first",
    "applies",
    "asks_about_past",
    "first",
    "possible_updates",
    "proxies",
    "successors",
    "through_proxies",
]
