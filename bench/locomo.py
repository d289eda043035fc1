"""LoCoMo retrieval benchmark: recall@5/10/20 of evidence turns, per category and per session,
measured on the memory as users run it.

Every dialogue turn of each LoCoMo conversation is added as one memory, turn by turn, on the
conversation's own clock (one user scope per conversation, ``user_id`` = the sample id; each turn
``TURN_GAP`` after the previous one from its session's date; metadata ``turn_id``/``speaker``/
``session``). How the memory is maintained meanwhile is the ``--lifecycle``:

* ``default`` (the headline): the default settings — the automatic maintenance tick — and a
  ``dream()`` whenever the clock passes a day boundary between sessions (``reverie dream --every 1d``);
* ``agent``: the same, and before each turn is stored the agent asks ``context()`` with it;
* ``off``: ABLATION — automatic tick off, no dream.

After the last session the clock moves one day on (a nightly dream runs in the lifecycle modes) and
every question is asked three times, with ``search(k=5)``, ``search(k=10)`` and ``search(k=20)``:
recall@k comes from the search that asked for exactly k. A question's recall@k is the fraction of
its (parseable) evidence dia_ids found among the first k result slots; a consolidation summary (or
theme) that is retrieved stands for the turns its members hold, in member order, each taking one of
the k slots. Session recall@k is the fraction of its evidence sessions among the sessions of those
slots. Both are averaged over questions. Also reported: the store's composition at question time
(hot/cold × status, summaries, dream-made memories, the share of turns older than 60 days that
consolidation compressed), the share of top-10 hits made by the dream that hold no evidence turn,
and R@10 after one more full ``dream()`` on a copy of the final store taken before the questions
(SQLite; the questions' own accesses are not in it; its questions are asked as the store's were, k = 5, 10
and 20 in turn, so that the two R@10 differ only by the dream).

Categories (numbering of the LoCoMo authors' code): 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial. Headline = categories 1–4; 5 is reported separately.

``--baseline`` also measures a plain hybrid baseline on the ``off`` store, in the same run:
BM25 (``store.text_search``) + dense (``store.vector_search``, same embedder model) fused by
RRF (K = 60, ``reverie.read.fusion.rrf``), no other stage. It runs through the store directly
(no access is counted) and before the ``Memory.search`` questions of that conversation, so the
access updates made by ``Memory.search`` cannot influence it.

Usage::

    PYTHONPATH=src .venv/bin/python bench/locomo.py --baseline
    PYTHONPATH=src .venv/bin/python bench/locomo.py --mode infer --lifecycle default
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from datetime import time as dtime
from pathlib import Path
from typing import Any

from _benchlib import (
    RESULTS_DIR,
    PgServer,
    Timer,
    console,
    finish,
    fmt,
    latency_stats,
    machine_info,
    make_bench_embedder,
    memory_config,
    now_iso,
    peak_rss_mb,
    shared_data,
)

DEFAULT_DATA = shared_data("locomo", "locomo_dev5.json")
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
HEADLINE_CATEGORIES = (1, 2, 3, 4)
KS = (5, 10, 20)
K_MAX = max(KS)
_DIA = re.compile(r"^D:?(\d+):(\d+)$")
_SPLIT = re.compile(r"[;,\s]+")


# evidence ids ---------------------------------------------------------------------------------


@dataclass
class EvidenceStats:
    """How the raw evidence strings were read (LoCoMo has a handful of malformed ids)."""

    raw_entries: int = 0
    ids: int = 0
    normalised: int = 0  # entries rewritten: split lists, leading zeros, stray ':'
    skipped_unparseable: int = 0
    not_in_conversation: int = 0
    questions: int = 0
    questions_without_evidence: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)

    def note(self, kind: str, raw: str, result: Any, sample: str) -> None:
        if len(self.examples) < 25:
            self.examples.append({"sample": sample, "raw": raw, kind: result})


def parse_evidence(raw: Iterable[Any], stats: EvidenceStats, *, sample: str = "") -> list[str]:
    """Canonical dia_ids ("D<session>:<turn>", no leading zeros) of one question's evidence.

    "D8:6; D9:17" -> D8:6, D9:17; "D30:05" -> D30:5; "D:11:26" -> D11:26; "D" is skipped.
    """
    out: list[str] = []
    for entry in raw:
        stats.raw_entries += 1
        text = str(entry).strip()
        tokens = [t for t in _SPLIT.split(text) if t]
        parsed: list[str] = []
        for tok in tokens:
            m = _DIA.match(tok)
            if m is None:
                stats.skipped_unparseable += 1
                stats.note("skipped", tok, None, sample)
                continue
            parsed.append(f"D{int(m.group(1))}:{int(m.group(2))}")
        if not tokens:
            stats.skipped_unparseable += 1
            stats.note("skipped", text, None, sample)
        if parsed and (len(parsed) > 1 or parsed[0] != text):
            stats.normalised += 1
            stats.note("normalised", text, parsed, sample)
        for p in parsed:
            if p not in out:
                out.append(p)
    return out


def session_of(dia_id: str) -> int | None:
    m = _DIA.match(dia_id)
    return int(m.group(1)) if m else None


#: How the memory is maintained while the conversation is added (``--lifecycle``):
#:
#: * ``default`` — the default settings, as a user runs them: the automatic maintenance tick runs
#:   every ``dream.schedule.tick_every`` adds, and a full ``dream()`` runs whenever the
#:   conversation's clock passes a day boundary between sessions (as ``reverie dream --every 1d``
#:   would). The README's headline numbers come from this mode.
#: * ``agent`` — ``default``, plus the agent loop: before each turn is stored the agent asks
#:   ``context()`` with that turn, as an agent does before it answers (so what is used gets stronger).
#: * ``off`` — ABLATION: no automatic tick and no dream; every stored turn stays as stored.
LIFECYCLES = ("default", "agent", "off")
#: the settings of the ``off`` ablation (the automatic tick switched off); the other modes use the defaults
NO_LIFECYCLE: dict[str, Any] = {"dream": {"schedule": {"tick_every": 0}}}
#: the clock advances this much per turn inside a session (LoCoMo dates sessions, not turns)
TURN_GAP = timedelta(seconds=30)
#: turns older than this at question time are where consolidation is expected to have worked
OLD_DAYS = 60


# embeddings ----------------------------------------------------------------------------------

CACHE_DIR = RESULTS_DIR / "cache"


class DiskEmbedCache:
    """Bench-only persistent embedding cache (SQLite file keyed by SHA-256 of model + text).

    LoCoMo runs embed the same 2,960 turns and ~3,000 query texts every time; with the local model
    that is minutes of CPU per run on this machine. The cache sits *under* the engine's own LRU
    cache, so the engine behaves exactly as with the bare model, only faster on repeats. Search
    latencies of a run that hits this cache exclude model inference (``--no-embed-cache`` for a
    run that embeds everything; ``bench/scale.py`` is the latency reference)."""

    def __init__(self, inner: Any, path: Path) -> None:
        import sqlite3

        self.inner = inner
        self.name, self.dim, self.profile = inner.name, inner.dim, inner.profile
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._db.execute("create table if not exists emb (key text primary key, vec blob not null)")
        self.hits = self.misses = 0
        query = getattr(inner, "embed_query", None)
        if callable(query):  # an asymmetric model (e5): queries are embedded and kept apart from passages
            self.embed_query = lambda texts: self._cached(texts, query, f"{self.name}\x00query")

    @property
    def identity(self) -> dict[str, Any]:
        from reverie.embed import identity_of

        return identity_of(self.inner)

    def embed(self, texts: Sequence[str]) -> Any:
        return self._cached(texts, self.inner.embed, self.name)

    def _cached(self, texts: Sequence[str], compute: Any, model: str) -> Any:
        import numpy as np

        from reverie.embed.cache import cache_key

        keys = [cache_key(model, t) for t in texts]
        found: dict[str, Any] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, blob in self._db.execute(f"select key, vec from emb where key in ({marks})", chunk):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in found))
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            vecs = np.asarray(compute(missing), dtype=np.float32)
            rows = [(cache_key(model, t), v.tobytes()) for t, v in zip(missing, vecs, strict=True)]
            with self._db:
                self._db.executemany("insert or replace into emb values (?, ?)", rows)
            found.update({k: v for k, v in zip((r[0] for r in rows), vecs, strict=True)})
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, key in enumerate(keys):
            out[i] = found[key]
        return out


def bench_embedder(kind: str, *, hash_dim: int = 384, engine_cache: bool = True, disk_cache: bool = True) -> Any:
    """The benchmark's embedder: ``make_bench_embedder``'s, with the local model's vectors kept on
    disk between runs (:class:`DiskEmbedCache`) unless ``disk_cache`` is false."""
    if kind != "local" or not disk_cache:
        return make_bench_embedder(kind, hash_dim=hash_dim, cached=engine_cache)
    from reverie.config import Settings
    from reverie.embed import CachedEmbedder, make_provider

    settings = Settings.load().embedding
    inner = make_provider(settings)
    disk = DiskEmbedCache(inner, CACHE_DIR / f"locomo-embeddings-{inner.name.replace('/', '_')}.sqlite")
    if not engine_cache or settings.cache_size == 0:
        return disk
    return CachedEmbedder(disk, max_entries=settings.cache_size, ttl_s=settings.cache_ttl_s)


# data ----------------------------------------------------------------------------------------


@dataclass
class Question:
    index: int
    text: str
    category: int
    evidence: list[str]
    split: str = "tune"


@dataclass
class Sample:
    sample_id: str
    sessions: list[tuple[int, Any, list[Any]]]  # (session number, when, turns)
    questions: list[Question]
    turns: int


def load_samples(
    path: Path,
    *,
    limit_conversations: int | None,
    limit_sessions: int | None,
    limit_questions: int | None,
    stats: EvidenceStats,
) -> list[Sample]:
    from reverie import io

    raw = json.loads(path.read_text(encoding="utf-8"))
    if limit_conversations:
        raw = raw[:limit_conversations]
    samples: list[Sample] = []
    for item in raw:
        sid = str(item["sample_id"])
        conv = io.load_conversation(item)
        by_session: dict[int, list[Any]] = defaultdict(list)
        for t in conv.turns:
            by_session[int(t.session_id.split("-")[-1])].append(t)
        numbers = sorted(by_session)
        if limit_sessions:
            numbers = numbers[:limit_sessions]
        sessions = [(n, by_session[n][0].when, by_session[n]) for n in numbers]
        known = {t.turn_id for _, _, ts in sessions for t in ts}
        all_known = {t.turn_id for t in conv.turns}
        questions: list[Question] = []
        for qi, qa in enumerate(item.get("qa", [])):
            ev = parse_evidence(qa.get("evidence", []), stats, sample=sid)
            missing = [e for e in ev if e not in all_known]
            if missing:
                stats.not_in_conversation += len(missing)
                stats.note("not_in_conversation", ",".join(missing), None, sid)
            ev = [e for e in ev if e in all_known]
            if limit_sessions and any(e not in known for e in ev):
                continue  # evidence outside the sessions loaded: not answerable in this run
            stats.questions += 1
            if not ev:
                stats.questions_without_evidence += 1
                continue
            stats.ids += len(ev)
            questions.append(Question(qi, str(qa["question"]), int(qa["category"]), ev, split_of(sid, qi)))
        if limit_questions:
            questions = questions[:limit_questions]
        samples.append(Sample(sid, sessions, questions, sum(len(ts) for _, _, ts in sessions)))
    return samples


# scoring -------------------------------------------------------------------------------------


#: the share of the questions kept unseen while the read path is tuned on this data (reported apart: the honest
#: figure for questions the rules were not fitted to); chosen by a fixed hash of the question's id
UNSEEN_SHARE = 3


def split_of(sample_id: str, index: int) -> str:
    """``"unseen"`` for the third of the questions set aside (a fixed hash of conversation and question
    number, so the split never changes between runs), else ``"tune"``."""
    digest = hashlib.sha256(f"locomo:{sample_id}:{index}".encode()).digest()
    return "unseen" if int.from_bytes(digest[:8], "big") % UNSEEN_SHARE == 0 else "tune"


def score_question(q: Question, ranked_turns: Sequence[Sequence[str]]) -> dict[str, float]:
    """Recall of one question: ``ranked_turns[i]`` are the dia_ids held by the i-th hit."""
    wanted = set(q.evidence)
    wanted_sessions = {session_of(e) for e in wanted}
    out: dict[str, float] = {}
    for k in KS:
        found = {t for hit in ranked_turns[:k] for t in hit}
        out[f"r@{k}"] = len(wanted & found) / len(wanted)
        sessions = {session_of(t) for t in found}
        out[f"s@{k}"] = len(wanted_sessions & sessions) / len(wanted_sessions)
    return out


#: a row's mark of a question in the unseen third (:func:`split_of`)
UNSEEN = "unseen"


def aggregate(rows: Sequence[tuple[int, dict[str, float]]], *, splits: bool = True) -> dict[str, Any]:
    """Mean recall (and characters returned, ``c@k``) per category, over the headline categories (1–4), and
    over all; with ``splits`` the same for the tuning two thirds and the unseen third apart (``by_split``)."""

    def mean(sel: list[dict[str, float]]) -> dict[str, Any]:
        if not sel:
            return {"n": 0}
        names = [f"r@{k}" for k in KS] + [f"s@{k}" for k in KS] + [f"c@{k}" for k in KS]
        keys = [key for key in names if key in sel[0]]
        return {"n": len(sel), **{key: round(sum(r[key] for r in sel) / len(sel), 4) for key in keys}}

    by_cat: dict[str, Any] = {}
    for cat in sorted({c for c, _ in rows}):
        by_cat[str(cat)] = {"name": CATEGORY_NAMES.get(cat, "unknown"), **mean([r for c, r in rows if c == cat])}
    out: dict[str, Any] = {
        "headline_1_4": mean([r for c, r in rows if c in HEADLINE_CATEGORIES]),
        "adversarial_5": mean([r for c, r in rows if c == 5]),
        "all": mean([r for _, r in rows]),
        "by_category": by_cat,
    }
    if splits and any(r.get(UNSEEN) for _, r in rows):
        out["by_split"] = {
            name: aggregate([(c, r) for c, r in rows if bool(r.get(UNSEEN)) == (name == "unseen")], splits=False)
            for name in ("tune", "unseen")
        }
    return out


# one run -------------------------------------------------------------------------------------


@dataclass
class RunResult:
    rows: list[tuple[int, dict[str, float]]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    ingest_s: float = 0.0
    search_s: float = 0.0
    embed_s: float = 0.0
    dream_s: float = 0.0
    dreams: int = 0
    context_calls: int = 0
    memories: int = 0
    turns: int = 0
    skipped_duplicates: int = 0
    per_conversation: dict[str, Any] = field(default_factory=dict)
    channels: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    #: per question: share of the top-10 hits that the dream made and that hold no evidence turn
    dream_slots: list[float] = field(default_factory=list)
    #: per question: share of the top-10 hits that are consolidation summaries (each takes a slot per turn)
    summary_hits: list[float] = field(default_factory=list)
    composition: dict[str, Any] = field(default_factory=dict)
    after_dream_rows: list[tuple[int, dict[str, float]]] = field(default_factory=list)
    #: with ``--diagnose``: (category, split, trace) of every evidence turn the k = 10 search missed
    misses: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)


def ingest(mem: Any, clock: Any, sample: Sample, *, infer: bool, result: RunResult) -> dict[str, list[str]]:
    """Add every turn with one ``add_many`` per session (no lifecycle between turns); returns
    memory id -> dia_ids it holds. The lifecycle benchmark adds turn by turn (:func:`ingest_turns`)."""
    from reverie import io

    held: dict[str, list[str]] = defaultdict(list)
    for number, when, turns in sample.sessions:
        if when is not None:
            clock.set(when)
        items = [
            {
                "content": io.turn_content(t),
                "when": t.when,
                "session_id": t.session_id,
                "metadata": {"turn_id": t.turn_id, "speaker": t.speaker, "session": number},
            }
            for t in turns
        ]
        with Timer() as t_add:
            results = mem.add_many(items, user_id=sample.sample_id, infer=infer)
        result.ingest_s += t_add.seconds
        for turn, res in zip(turns, results, strict=True):
            for mid in res.ids or ((res.id,) if res.id is not None else ()):
                held[mid].append(turn.turn_id)
            if res.action.value == "SKIP":
                result.skipped_duplicates += 1
    result.turns += sample.turns
    return held


def _dream(mem: Any, clock: Any, day: Any, result: RunResult) -> None:
    """The scheduled nightly dream: at midnight of ``day`` (the conversation's clock)."""
    clock.set(datetime.combine(day, dtime(0, 0), tzinfo=UTC))
    with Timer() as t_dream:
        mem.dream()
    result.dream_s += t_dream.seconds
    result.dreams += 1


def ingest_turns(
    mem: Any, clock: Any, sample: Sample, *, infer: bool, lifecycle: str, result: RunResult
) -> dict[str, list[str]]:
    """Add the conversation turn by turn on its own clock (each turn ``TURN_GAP`` after the previous
    one from its session's start) as a user's agent would; with a lifecycle, a ``dream()`` runs at
    each day boundary the clock passes between sessions, and in the agent loop ``context()`` is asked
    with each turn before it is stored. Returns memory id -> dia_ids it holds."""
    from reverie import io

    held: dict[str, list[str]] = defaultdict(list)
    last_day = None
    for number, when, turns in sample.sessions:
        start = when if when is not None else clock()
        if lifecycle != "off" and last_day is not None and start.date() > last_day:
            _dream(mem, clock, start.date(), result)
        for i, turn in enumerate(turns):
            at = start + i * TURN_GAP
            clock.set(at)
            content = io.turn_content(turn)
            with Timer() as t_add:
                if lifecycle == "agent":
                    mem.context(content, user_id=sample.sample_id, session_id=turn.session_id)
                    result.context_calls += 1
                res = mem.add(
                    content,
                    user_id=sample.sample_id,
                    session_id=turn.session_id,
                    when=at,
                    infer=infer,
                    metadata={"turn_id": turn.turn_id, "speaker": turn.speaker, "session": number},
                )
            result.ingest_s += t_add.seconds
            for mid in res.ids or ((res.id,) if res.id is not None else ()):
                held[mid].append(turn.turn_id)
            if res.action.value == "SKIP":
                result.skipped_duplicates += 1
        last_day = (start + len(turns) * TURN_GAP).date()
    result.turns += sample.turns
    return held


def _consolidated_kind(rec: Any) -> str | None:
    """``summary``/``theme`` for a memory that stands for members it replaced, else None."""
    info = rec.metadata.get("consolidation") if isinstance(rec.metadata, dict) else None
    if isinstance(info, dict) and info.get("kind") in ("summary", "theme"):
        return str(info["kind"])
    return None


def _made_by_dream(rec: Any) -> bool:
    return rec.write_source == "dream" or "consolidation" in rec.metadata or "synthesis" in rec.metadata


class TurnCredit:
    """Which dia_ids a retrieved memory stands for: its own turns, or — for a consolidation summary
    or theme — the turns its members hold, in member order (recursively)."""

    def __init__(self, mem: Any, held: dict[str, list[str]]) -> None:
        self.mem, self.held = mem, held
        self._cache: dict[str, list[str]] = {}

    def turns(self, rec: Any, depth: int = 0) -> list[str]:
        if rec.id in self._cache:
            return self._cache[rec.id]
        if _consolidated_kind(rec) is not None and depth < 4:
            members = [str(m) for m in rec.metadata["consolidation"].get("members", [])]
            found = self.mem.store.get(members)
            out: list[str] = []
            for mid in members:
                if mid in found:
                    out.extend(t for t in self.turns(found[mid], depth + 1) if t not in out)
        else:
            out = list(self.held.get(rec.id) or ([str(rec.metadata["turn_id"])] if "turn_id" in rec.metadata else []))
        self._cache[rec.id] = out
        return out

    def slots(self, hits: Sequence[Any]) -> list[list[str]]:
        """One slot per turn: a summary takes as many of the k slots as it holds turns not shown
        above it (at least one); any other hit takes one."""
        placed: set[str] = set()
        out: list[list[str]] = []
        for h in hits:
            turns = self.turns(h.memory)
            fresh = [t for t in turns if t not in placed]
            placed.update(fresh)
            if _consolidated_kind(h.memory) is not None:
                out.extend([[t] for t in fresh] or [[]])
            else:
                out.append(fresh)
        return out


def ask_memory(
    mem: Any,
    sample: Sample,
    held: dict[str, list[str]],
    result: RunResult,
    *,
    rows: list[tuple[int, dict[str, float]]] | None = None,
    ks: Sequence[int] = KS,
    questions: list[dict[str, Any]] | None = None,
    diagnose: bool = False,
) -> None:
    """Ask every question once per k with ``search(k=k)`` (a search asks for exactly what it shows). With
    ``diagnose``, each question is first replayed through the read path's stages (no access counted) to say,
    for every evidence turn the ``k = 10`` search misses, where it was lost (:func:`diagnose_question`)."""
    credit = TurnCredit(mem, held)
    home = _turn_homes(held)
    out_rows = result.rows if rows is None else rows
    mine: list[tuple[int, dict[str, float]]] = []
    for q in sample.questions:
        merged: dict[str, float] = {}
        misses: list[dict[str, Any]] = []
        shown: list[list[str]] = []
        for k in ks:
            trace = diagnose_question(mem, sample, q, credit, home) if diagnose and k == 10 else None
            with Timer() as t_q:
                hits = mem.search(q.text, user_id=sample.sample_id, k=k)
            if k == 10:
                result.latencies.append(t_q.seconds)
                if rows is None:
                    wanted = set(q.evidence)
                    junk = sum(
                        1 for h in hits[:10] if _made_by_dream(h.memory) and not (set(credit.turns(h.memory)) & wanted)
                    )
                    result.dream_slots.append(junk / 10)
                    result.summary_hits.append(sum(1 for h in hits[:10] if _consolidated_kind(h.memory)) / 10)
            result.search_s += t_q.seconds
            for h in hits:
                for ch in h.explain.get("channels", {}):
                    result.channels[ch] += 1
            slots = credit.slots(hits)
            score = score_question(q, slots)
            merged.update({key: v for key, v in score.items() if key.endswith(f"@{k}")})
            merged[f"c@{k}"] = float(sum(returned_chars(h) for h in hits))
            if trace is not None:
                found = {t for slot in slots[:k] for t in slot}
                misses = [m for m in trace if m["turn"] not in found]
                shown = slots[:k]
        if q.split == UNSEEN:
            merged[UNSEEN] = 1.0
        mine.append((q.category, merged))
        if diagnose and rows is None:
            result.misses.extend((q.category, q.split, m) for m in misses)
        if questions is not None:
            row: dict[str, Any] = {
                "sample": sample.sample_id,
                "question": q.index,
                "category": q.category,
                "split": q.split,
                **{key: v for key, v in merged.items() if key != UNSEEN},
            }
            if diagnose and q.split != UNSEEN:  # the unseen third's losses are counted, never listed
                row["missed@10"] = misses
                row["shown@10"] = shown
            questions.append(row)
    out_rows.extend(mine)
    if rows is None:
        result.per_conversation[sample.sample_id] = aggregate(mine, splits=False)["headline_1_4"]


def returned_chars(hit: Any) -> int:
    """The characters one result hands its reader: the memory's text and any context attached to it."""
    extra = getattr(hit, "context", None) or ()
    return len(hit.memory.content) + sum(len(getattr(c, "content", "")) for c in extra)


# diagnostics ---------------------------------------------------------------------------------

#: how deep each channel is searched to find a missed evidence turn's best rank
DIAG_DEPTH = 1000


def _turn_homes(held: dict[str, list[str]]) -> dict[str, str]:
    """dia_id -> the memory that stored it (the first, when a turn was stored in several)."""
    home: dict[str, str] = {}
    for mid, tids in held.items():
        for tid in tids:
            home.setdefault(tid, mid)
    return home


def diagnose_question(
    mem: Any, sample: Sample, q: Question, credit: TurnCredit, home: dict[str, str]
) -> list[dict[str, Any]]:
    """Every evidence turn of ``q``, traced through the read path as ``search(k=10)`` runs it, replayed through
    the pipeline's stages without counting an access: the turn's best rank in each channel over all of the
    user's memories (hot and cold, any status; ``None`` beyond :data:`DIAG_DEPTH`), whether the candidate
    pool held it after the channels' fusion and expansion (``gathered``) and after screening (``screened``),
    its slot in the whole ordered pool (``position``, 1-based, as the benchmark credits slots), and the stage
    that dropped it: ``not_stored``, ``channels`` (neither channel ranks it within the pool size), ``fusion``
    (a channel ranks it there, the fused pool lost it), ``screen``, or ``rank`` (in the ordered pool, below 10)."""
    import dataclasses

    from reverie.embed import embed_queries
    from reverie.store.base import MemoryFilter

    pipe = mem._reader
    mem._settle()
    now = mem.now()
    req = mem._read_request(q.text, user_id=sample.sample_id, agent_id=None, session_id=None, k=10, filters=None)
    routed = pipe.route(req.query)
    pool = pipe._gather(req, routed, now, None)
    size = max(pipe.settings.read.candidate_pool, routed[0].strategy.limit * pipe.settings.read.overfetch, req.k)
    gathered = {c.id: c for c in pool.cands}
    pipe._screen(pool, req, now)
    screened = {c.id: c for c in pool.cands}
    hits, _ = pipe._rank(pool, dataclasses.replace(req, k=max(len(pool.cands), 1) + 20), now)
    slots = credit.slots(hits)
    position = {}
    for i, slot in enumerate(slots, start=1):
        for t in slot:
            position.setdefault(t, i)
    flt = MemoryFilter(user_id=sample.sample_id, statuses=None, stores=None)
    vec = embed_queries(pipe.embedder, [q.text])[0]
    vranks = {h.id: i for i, h in enumerate(mem.store.vector_search(vec, flt, DIAG_DEPTH), start=1)}
    tranks = {h.id: i for i, h in enumerate(mem.store.text_search(q.text, flt, DIAG_DEPTH), start=1)}
    records = mem.store.get([home[t] for t in q.evidence if t in home])
    out: list[dict[str, Any]] = []
    for turn in q.evidence:
        mid = home.get(turn)
        rec = records.get(mid or "")
        info: dict[str, Any] = {"turn": turn, "vector_rank": vranks.get(mid or ""), "text_rank": tranks.get(mid or "")}
        if rec is not None:
            info["store"] = f"{rec.store.value}/{rec.status.value}"
            info["chars"] = len(rec.content)
        info["gathered"] = mid in gathered
        info["screened"] = mid in screened
        info["position"] = position.get(turn)
        if mid is None or rec is None:
            stage = "not_stored"
        elif info["position"] is not None:
            stage = "rank"
        elif mid in gathered and mid not in screened:
            stage = "screen"
        elif mid in screened:
            stage = "rank"  # held by the pool but not credited (a summary's slot, a proxy)
        elif min(info["vector_rank"] or DIAG_DEPTH + 1, info["text_rank"] or DIAG_DEPTH + 1) <= size:
            stage = "fusion"
        else:
            stage = "channels"
        info["stage"] = stage
        out.append(info)
    return out


def summarise_misses(misses: Sequence[tuple[int, str, dict[str, Any]]]) -> dict[str, Any]:
    """Missed evidence turns at k = 10 counted by the stage that dropped them, per category and split; for
    those the ranking dropped, where they ended up (slots 11-20, 21-40, beyond); for those the channels never
    reached, the best channel rank."""

    def bucket(pos: int | None) -> str:
        if pos is None:
            return "none"
        return "11-20" if pos <= 20 else "21-40" if pos <= 40 else "41+"

    out: dict[str, Any] = {}
    for split in ("tune", "unseen"):
        mine = [(c, m) for c, sp, m in misses if sp == split]
        table: dict[str, Any] = {}
        for cat in sorted({c for c, _ in mine}):
            sel = [m for c, m in mine if c == cat]
            stages: dict[str, int] = defaultdict(int)
            for m in sel:
                stages[m["stage"]] += 1
            ranked: dict[str, int] = defaultdict(int)
            for m in sel:
                if m["stage"] == "rank":
                    ranked[bucket(m["position"])] += 1
            best: dict[str, int] = defaultdict(int)
            for m in sel:
                if m["stage"] == "channels":
                    r = min(m["vector_rank"] or DIAG_DEPTH + 1, m["text_rank"] or DIAG_DEPTH + 1)
                    best["61-120" if r <= 120 else "121-300" if r <= 300 else ">300"] += 1
            table[f"{cat} {CATEGORY_NAMES.get(cat, '?')}"] = {
                "missed": len(sel),
                "stages": dict(stages),
                "rank_positions": dict(ranked),
                "channel_best_rank": dict(best),
            }
        out[split] = table
    return out


def ask_baseline(
    store: Any, embedder: Any, sample: Sample, held: dict[str, list[str]], result: RunResult, *, pool: int
) -> None:
    """Plain hybrid: BM25 + dense, RRF K=60, nothing else; straight through the store."""
    from reverie.embed import embed_queries
    from reverie.read.fusion import rrf
    from reverie.store.base import MemoryFilter

    flt = MemoryFilter(user_id=sample.sample_id)
    with Timer() as t_emb:
        vecs = embed_queries(embedder, [q.text for q in sample.questions]) if sample.questions else []
    result.embed_s += t_emb.seconds
    rows: list[tuple[int, dict[str, float]]] = []
    for q, vec in zip(sample.questions, vecs, strict=True):
        with Timer() as t_q:
            dense = store.vector_search(vec, flt, pool)
            sparse = store.text_search(q.text, flt, pool)
            fused = rrf({"vector": [h.id for h in dense], "text": [h.id for h in sparse]})[:K_MAX]
        result.latencies.append(t_q.seconds)
        result.search_s += t_q.seconds
        for f in fused:
            for ch in f.ranks:
                result.channels[ch] += 1
        row = score_question(q, [held.get(f.id, []) for f in fused])
        texts = store.get([f.id for f in fused])
        for k in KS:
            row[f"c@{k}"] = float(sum(len(texts[f.id].content) for f in fused[:k] if f.id in texts))
        if q.split == UNSEEN:
            row[UNSEEN] = 1.0
        rows.append((q.category, row))
    result.rows.extend(rows)
    result.per_conversation[sample.sample_id] = aggregate(rows, splits=False)["headline_1_4"]


def composition(mem: Any, sample: Sample, held: dict[str, list[str]], now: datetime) -> dict[str, Any]:
    """What the store holds for this conversation at question time, and how much of the old part
    of the conversation consolidation compressed (cold, and reachable through an active summary)."""
    from reverie.store.base import MemoryFilter

    counts: dict[str, int] = defaultdict(int)
    records: dict[str, Any] = {}
    for batch in mem.store.scan(MemoryFilter.everything(user_id=sample.sample_id, all_users=False), batch_size=2000):
        for rec in batch:
            records[rec.id] = rec
            counts[f"{rec.store.value}/{rec.status.value}"] += 1
            kind = _consolidated_kind(rec)
            if kind is not None:
                counts[f"{kind}s"] += 1
            elif "consolidation" in rec.metadata:
                counts[f"{rec.metadata['consolidation'].get('kind', 'other')}s"] += 1
            elif "synthesis" in rec.metadata:
                counts["synthesis_notes"] += 1
            if _made_by_dream(rec):
                counts["dream_made"] += 1
    when_of = {t.turn_id: (t.when or now) for _, _, ts in sample.sessions for t in ts}
    turn_home: dict[str, str] = {}
    for mid, tids in held.items():
        for tid in tids:
            turn_home.setdefault(tid, mid)
    old = [tid for tid, w in when_of.items() if (now - w).days > OLD_DAYS]
    compressed = 0
    for tid in old:
        rec = records.get(turn_home.get(tid, ""))
        hops = 0
        while rec is not None and rec.store.value == "cold" and rec.superseded_by and hops < 5:
            rec, hops = records.get(rec.superseded_by), hops + 1
        if hops and rec is not None and rec.status.value == "active" and _consolidated_kind(rec) is not None:
            compressed += 1
    return {
        "memories": len(records),
        **dict(sorted(counts.items())),
        "turns_older_than_60d": len(old),
        "old_turns_consolidated": compressed,
        "old_turns_consolidated_share": round(compressed / len(old), 4) if old else None,
    }


def summarise(result: RunResult, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = dict(extra)
    out.update(
        {
            "turns": result.turns,
            "memories": result.memories,
            "questions": len(result.rows),
            "recall": aggregate(result.rows),
            "per_conversation_headline": result.per_conversation,
            "hits_by_channel": dict(result.channels),
            "search_s": round(result.search_s, 3),
            "search_latency": latency_stats(result.latencies),
        }
    )
    if result.ingest_s:
        out["ingest_s"] = round(result.ingest_s, 3)
        out["ingest_items_per_s"] = round(result.turns / result.ingest_s, 1)
        out["skipped_duplicates"] = result.skipped_duplicates
    if result.embed_s:
        out["query_embed_s"] = round(result.embed_s, 3)
    if result.dreams:
        out["dreams"] = {"runs": result.dreams, "seconds": round(result.dream_s, 3)}
    if result.context_calls:
        out["context_calls"] = result.context_calls
    if result.dream_slots:
        out["dream_made_top10_share_without_evidence"] = round(sum(result.dream_slots) / len(result.dream_slots), 4)
    if result.summary_hits:
        out["summary_top10_share"] = round(sum(result.summary_hits) / len(result.summary_hits), 4)
    if result.composition:
        total: dict[str, Any] = defaultdict(int)
        for comp in result.composition.values():
            for key, v in comp.items():
                if isinstance(v, int):
                    total[key] += v
        old = total.get("turns_older_than_60d", 0)
        total["old_turns_consolidated_share"] = round(total.get("old_turns_consolidated", 0) / old, 4) if old else None
        out["composition"] = {"total": dict(total), "per_conversation": result.composition}
    if result.after_dream_rows:
        out["after_extra_dream"] = aggregate(result.after_dream_rows)
    if result.misses:
        out["missed_at_10"] = summarise_misses(result.misses)
    return out


def run(
    *,
    data: Path = DEFAULT_DATA,
    modes: Sequence[str] = ("verbatim",),
    lifecycles: Sequence[str] = LIFECYCLES,
    backend: str = "sqlite",
    embedder: str = "local",
    hash_dim: int = 384,
    limit_conversations: int | None = None,
    limit_sessions: int | None = None,
    limit_questions: int | None = None,
    baseline: bool = False,
    baseline_pool: int = 3 * K_MAX,
    db: str | None = None,
    quiet: bool = False,
    embed_cache: bool = True,
    extra_dream: bool = True,
    questions_out: Path | None = None,
    diagnose: bool = False,
) -> dict[str, Any]:
    """Run the benchmark and return the result document (see the module docs)."""
    from reverie import Memory, SettableClock
    from reverie.store.base import MemoryFilter

    stats = EvidenceStats()
    samples = load_samples(
        data,
        limit_conversations=limit_conversations,
        limit_sessions=limit_sessions,
        limit_questions=limit_questions,
        stats=stats,
    )
    doc: dict[str, Any] = {
        "benchmark": "locomo-retrieval",
        "date": now_iso(),
        "machine": machine_info(),
        "data": str(data),
        "conversations": [s.sample_id for s in samples],
        "backend": backend,
        "embedder": None,
        "ks": list(KS),
        "k_protocol": "each recall@k from a search that asks for exactly k",
        "category_names": {str(k): v for k, v in CATEGORY_NAMES.items()},
        "headline": "mean over questions of categories 1-4; category 5 (adversarial) reported separately",
        "limits": {"conversations": limit_conversations, "sessions": limit_sessions, "questions": limit_questions},
        "embed_cache": embed_cache and embedder == "local",
        "evidence": vars(stats),
        "runs": {},
    }
    log = console()
    combos = [(m, lc) for m in modes for lc in lifecycles]
    if db and len(combos) > 1:
        raise SystemExit("--db holds one run: give one --mode and one --lifecycle with it")
    base_lc = "off" if "off" in lifecycles else lifecycles[0]
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="reverie-locomo-")))
        pg = PgServer() if backend == "postgres" and not db else None
        for mode, lifecycle in combos:
            infer = mode == "infer"
            name = lifecycle if len(modes) == 1 else f"{mode}:{lifecycle}"
            if db:
                target: str = db
            elif pg is not None:
                target = stack.enter_context(pg.database())
            else:
                target = str(workdir / f"locomo-{mode}-{lifecycle}.db")
            clock = SettableClock()
            emb = bench_embedder(embedder, hash_dim=hash_dim, disk_cache=embed_cache)
            extra = NO_LIFECYCLE if lifecycle == "off" else {}
            mem = stack.enter_context(
                Memory(
                    target, config=memory_config(workdir / name.replace(":", "-"), **extra), clock=clock, embedder=emb
                )
            )
            doc["embedder"] = mem.embedder.name
            want_base = baseline and mode == modes[0] and lifecycle == base_lc
            base_emb = (
                bench_embedder(embedder, hash_dim=hash_dim, engine_cache=False, disk_cache=embed_cache)
                if want_base
                else None
            )
            res, base = RunResult(), RunResult()
            question_rows: list[dict[str, Any]] = []
            for sample in samples:
                if mem.store.count(MemoryFilter.everything(user_id=sample.sample_id, all_users=False)):
                    raise SystemExit(f"{target} already holds memories of {sample.sample_id}: use a fresh --db")
                run_sample(
                    mem,
                    clock,
                    sample,
                    infer=infer,
                    lifecycle=lifecycle,
                    result=res,
                    base=base,
                    base_emb=base_emb,
                    baseline_pool=baseline_pool,
                    questions=question_rows,
                    diagnose=diagnose,
                    copy_to=(
                        workdir / f"{name.replace(':', '-')}-{sample.sample_id}-extra.db"
                        if extra_dream and lifecycle != "off" and pg is None and not str(target).startswith("postgres")
                        else None
                    ),
                    reopen=lambda path, extra=extra, emb=emb, clock=clock, name=name: Memory(
                        str(path),
                        config=memory_config(workdir / name.replace(":", "-"), **extra),
                        clock=clock,
                        embedder=emb,
                    ),
                )
                if not quiet:
                    log.print(
                        f"[dim]{name}: {sample.sample_id}: {sample.turns} turns, "
                        f"{len(sample.questions)} questions, headline r@10 "
                        f"{fmt(res.per_conversation[sample.sample_id].get('r@10'))}[/dim]"
                    )
            doc["runs"][name] = summarise(
                res,
                mode=mode,
                lifecycle=lifecycle,
                method=f"Memory.search (k = 5, 10, 20 asked separately), add(infer={infer}) turn by turn, "
                + {
                    "default": "default settings (automatic tick) + a dream() at each day boundary",
                    "agent": "default settings + nightly dream + context() before each turn is stored",
                    "off": "ABLATION: automatic tick off, no dream",
                }[lifecycle],
            )
            if questions_out is not None:
                questions_out.mkdir(parents=True, exist_ok=True)
                (questions_out / f"{name.replace(':', '-')}.jsonl").write_text(
                    "".join(json.dumps(r) + "\n" for r in question_rows), encoding="utf-8"
                )
            if base_emb is not None:
                base.turns, base.memories = res.turns, res.memories
                doc["runs"]["baseline"] = summarise(
                    base,
                    method=f"store.vector_search + store.text_search (pool {baseline_pool} each), "
                    "RRF K=60, nothing else; query embeddings batched per conversation",
                    store_of_run=name,
                )
    doc["peak_rss_mb"] = peak_rss_mb()
    if "baseline" in doc["runs"]:
        doc["comparison"] = compare(doc["runs"])
    if "off" in lifecycles:
        doc["lifecycle_vs_off"] = lifecycle_delta(doc["runs"], modes)
    return doc


def run_sample(
    mem: Any,
    clock: Any,
    sample: Sample,
    *,
    infer: bool,
    lifecycle: str,
    result: RunResult,
    base: RunResult,
    base_emb: Any,
    baseline_pool: int,
    questions: list[dict[str, Any]],
    copy_to: Path | None,
    reopen: Any,
    diagnose: bool = False,
) -> None:
    """One conversation: add it turn by turn, move the clock to the day after (a nightly dream in the
    lifecycle modes), record the store's composition, ask the baseline and the questions, and — with
    ``copy_to`` — ask again on a copy of the store after one more full dream."""
    from reverie.store.base import MemoryFilter

    held = ingest_turns(mem, clock, sample, infer=infer, lifecycle=lifecycle, result=result)
    last = sample.sessions[-1][1] if sample.sessions else None
    if last is not None:
        ask_at = last + timedelta(days=1)
        if lifecycle != "off":
            _dream(mem, clock, ask_at.date(), result)
        clock.set(ask_at)
    result.memories += mem.store.count(MemoryFilter(user_id=sample.sample_id))
    result.composition[sample.sample_id] = composition(mem, sample, held, clock())
    if base_emb is not None:
        ask_baseline(mem.store, base_emb, sample, held, base, pool=baseline_pool)
    copy = _sqlite_copy(Path(mem.target), copy_to) if copy_to is not None else None
    ask_memory(mem, sample, held, result, questions=questions, diagnose=diagnose)
    if copy is not None:  # one more full dream on the store as it was before the questions
        with reopen(copy) as again:
            with Timer() as t_dream:
                again.dream()
            result.dream_s += t_dream.seconds
            # asked the same way as the store itself (k = 5, 10, 20 in turn: each search's accesses count in the next)
            ask_memory(again, sample, held, result, rows=result.after_dream_rows)


def _sqlite_copy(source: Path, dest: Path) -> Path:
    """A consistent copy of a live SQLite store (the online backup API)."""
    import sqlite3

    src, dst = sqlite3.connect(str(source)), sqlite3.connect(str(dest))
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    return dest


def lifecycle_delta(runs: dict[str, Any], modes: Sequence[str]) -> dict[str, Any]:
    """R@10 of each lifecycle mode minus the ``off`` ablation, overall (1–4) and per category."""
    out: dict[str, Any] = {}
    for mode in modes:
        prefix = "" if len(modes) == 1 else f"{mode}:"
        off = runs.get(prefix + "off")
        if off is None:
            continue
        for name, r in runs.items():
            if not name.startswith(prefix) or name == prefix + "off" or name == "baseline":
                continue
            row = {"headline": round(r["recall"]["headline_1_4"]["r@10"] - off["recall"]["headline_1_4"]["r@10"], 4)}
            for cat, vals in r["recall"]["by_category"].items():
                if int(cat) in HEADLINE_CATEGORIES:
                    row[cat] = round(vals["r@10"] - off["recall"]["by_category"][cat]["r@10"], 4)
            out[name] = row
    return out


def compare(runs: dict[str, Any]) -> dict[str, Any]:
    """Headline recall of each run minus the baseline's (positive = better than baseline)."""
    base = runs["baseline"]["recall"]["headline_1_4"]
    out: dict[str, Any] = {}
    for name, r in runs.items():
        if name == "baseline":
            continue
        head = r["recall"]["headline_1_4"]
        out[name] = {key: round(head[key] - base[key], 4) for key in head if key != "n"}
    return out


# output --------------------------------------------------------------------------------------


def recall_table(title: str, rec: dict[str, Any]) -> Any:
    """One run's recall, session recall and characters returned per search, per category; the tuning two
    thirds and the unseen third apart."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column("category")
    table.add_column("n", justify="right")
    for head in ("R", "S", "chars"):
        for k in KS:
            table.add_column(f"{head}@{k}", justify="right")

    def add(label: str, row: dict[str, Any]) -> None:
        table.add_row(
            label,
            str(row.get("n", 0)),
            *[fmt(row.get(f"r@{k}")) for k in KS],
            *[fmt(row.get(f"s@{k}")) for k in KS],
            *[fmt(row.get(f"c@{k}"), 0) for k in KS],
        )

    for cat, row in rec["by_category"].items():
        add(f"{cat} {row['name']}", row)
    add("headline (1–4)", rec["headline_1_4"])
    add("adversarial (5)", rec["adversarial_5"])
    add("all", rec["all"])
    for split, part in rec.get("by_split", {}).items():
        label = "unseen third" if split == "unseen" else "tuning two thirds"
        for cat, row in part["by_category"].items():
            if int(cat) in HEADLINE_CATEGORIES:
                add(f"  {label}: {cat} {row['name']}", row)
        add(f"{label}: headline (1–4)", part["headline_1_4"])
    return table


def print_tables(doc: dict[str, Any]) -> None:
    log = console()
    ev = doc["evidence"]
    log.print(
        f"LoCoMo retrieval — {len(doc['conversations'])} conversations, backend {doc['backend']}, "
        f"embedder {doc['embedder']}; evidence ids: {ev['ids']} used, {ev['normalised']} entries "
        f"normalised, {ev['skipped_unparseable']} unparseable skipped, "
        f"{ev['not_in_conversation']} not in the conversation; "
        f"{ev['questions_without_evidence']} questions without evidence"
    )
    for name, r in doc["runs"].items():
        log.print(recall_table(f"{name}: {r.get('method', '')}", r["recall"]))
        if "missed_at_10" in r:
            log.print(
                f"  evidence turns missed at k=10, by the stage that dropped them: {json.dumps(r['missed_at_10'])}"
            )
        lat = r["search_latency"]
        extra = (
            f"; ingest {r['ingest_s']} s ({r['ingest_items_per_s']} turns/s), {r['memories']} memories"
            if "ingest_s" in r
            else ""
        )
        log.print(f"  search(k=10) p50 {fmt(lat.get('p50_ms'), 2)} ms, p95 {fmt(lat.get('p95_ms'), 2)} ms{extra}")
        if "dreams" in r:
            log.print(f"  dreams: {r['dreams']['runs']} runs, {r['dreams']['seconds']} s")
        if "composition" in r:
            log.print(f"  store at question time: {json.dumps(r['composition']['total'])}")
        if "dream_made_top10_share_without_evidence" in r:
            log.print(
                f"  top-10 slots held by dream-made memories without evidence: "
                f"{fmt(r['dream_made_top10_share_without_evidence'])}"
            )
        if "after_extra_dream" in r:
            log.print(f"  R@10 (1–4) after one more dream(): {fmt(r['after_extra_dream']['headline_1_4'].get('r@10'))}")
    if "comparison" in doc:
        log.print(f"headline recall minus baseline: {json.dumps(doc['comparison'])}")
    if doc.get("lifecycle_vs_off"):
        log.print(
            f"R@10 minus the no-lifecycle ablation (headline and per category): {json.dumps(doc['lifecycle_vs_off'])}"
        )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON (default: %(default)s)")
    p.add_argument(
        "--mode",
        choices=["verbatim", "infer", "both"],
        default="verbatim",
        help="verbatim = add(infer=False); infer = the write path (add(infer=True))",
    )
    p.add_argument(
        "--lifecycle",
        default=",".join(LIFECYCLES),
        help="comma-separated: default (the default settings, automatic tick, a dream at each day "
        "boundary), agent (default + context() before each turn), off (ABLATION: no tick, no "
        "dream); default: %(default)s",
    )
    p.add_argument(
        "--no-extra-dream",
        dest="extra_dream",
        action="store_false",
        help="skip the extra dream() on a copy of the final store (SQLite) and the R@10 measured after it",
    )
    p.add_argument(
        "--questions-out",
        type=Path,
        default=None,
        help="directory for one JSONL file per run with every question's recall (for per-question diffs)",
    )
    p.add_argument(
        "--diagnose",
        action="store_true",
        help="replay each question through the read path's stages and report, for every evidence turn the "
        "k=10 search misses, its best rank in each channel and the stage that dropped it (slower)",
    )
    p.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    p.add_argument(
        "--embedder",
        choices=["local", "hash"],
        default="local",
        help="local = the configured local embedder (default multilingual-e5-small); hash = test embedder",
    )
    p.add_argument("--hash-dim", type=int, default=384)
    p.add_argument("--limit-conversations", type=int, default=None)
    p.add_argument(
        "--limit-sessions",
        type=int,
        default=None,
        help="only the first N sessions of each conversation (questions about later ones dropped)",
    )
    p.add_argument("--limit-questions", type=int, default=None, help="at most N questions per conversation")
    p.add_argument("--baseline", action="store_true", help="also measure the plain BM25+dense RRF baseline")
    p.add_argument("--baseline-pool", type=int, default=3 * K_MAX, help="hits per channel before fusion")
    p.add_argument("--db", default=None, help="SQLite file or postgresql:// URL (default: a temp dir)")
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "locomo.json")
    p.add_argument("--quiet", action="store_true")
    p.add_argument(
        "--no-embed-cache",
        dest="embed_cache",
        action="store_false",
        help="embed every text with the model (default: reuse vectors kept in bench/results/cache)",
    )
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if not args.data.is_file():
        raise SystemExit(f"LoCoMo data not found: {args.data} (see --data)")
    modes = ("verbatim", "infer") if args.mode == "both" else (args.mode,)
    lifecycles = tuple(x.strip() for x in args.lifecycle.split(",") if x.strip())
    unknown = [x for x in lifecycles if x not in LIFECYCLES]
    if unknown or not lifecycles:
        raise SystemExit(f"--lifecycle: unknown {unknown}; choose from {', '.join(LIFECYCLES)}")
    doc = run(
        data=args.data,
        modes=modes,
        lifecycles=lifecycles,
        backend=args.backend,
        embedder=args.embedder,
        hash_dim=args.hash_dim,
        limit_conversations=args.limit_conversations,
        limit_sessions=args.limit_sessions,
        limit_questions=args.limit_questions,
        baseline=args.baseline,
        baseline_pool=args.baseline_pool,
        db=args.db,
        quiet=args.quiet,
        embed_cache=args.embed_cache,
        extra_dream=args.extra_dream,
        questions_out=args.questions_out,
        diagnose=args.diagnose,
    )
    return finish(doc, args.out, quiet=args.quiet, show=print_tables)


if __name__ == "__main__":
    main(sys.argv[1:])
