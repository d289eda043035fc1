"""What the dream writes, end to end: the demo conversation on its own clock, then a nightly dream for 60 days
without an LLM. Member texts glued together used to come out as "Recurring pattern (12 memories, …)", themes,
"Summary of entity memories: …" and "Entity card: Maya: Maya: …", and they outranked the turns in unrelated
searches ("allergies"). Now the only text the dream writes without an LLM is a consolidation summary that keeps
every member's words, and the turn that answers still comes first."""

from __future__ import annotations

import importlib.resources
import json
from typing import Any

import pytest

from reverie import Memory, SettableClock, io
from reverie.dream.consolidate import META
from reverie.dream.summarize import grounding_problem
from reverie.store.base import MemoryFilter

LLM_ONLY = ("themes", "abstraction", "category_summaries", "entity_cards")


@pytest.mark.model
@pytest.mark.minilm
def test_sixty_nightly_dreams_on_the_demo_write_no_glued_text(store_target: str, tmp_path: Any) -> None:
    from reverie.embed import MiniLMEmbedder

    data = json.loads(importlib.resources.files("reverie").joinpath("sample/conversation.json").read_text("utf-8"))
    conv = io.load_conversation(data)
    user = conv.user_id
    last = max(t.when for t in conv.turns if t.when is not None)
    clock = SettableClock(last)
    items = [
        {
            "content": io.turn_content(t),
            "session_id": t.session_id,
            "when": t.when,
            "metadata": {"turn_id": t.turn_id, "speaker": t.speaker},
        }
        for t in conv.turns
    ]
    with Memory(store_target, config={"opslog": {"enabled": False}}, clock=clock, embedder=MiniLMEmbedder()) as mem:
        mem.add_many(items, user_id=user, agent_id=conv.agent_id)
        skipped: dict[str, set[str]] = {name: set() for name in LLM_ONLY}
        for _ in range(60):
            clock.advance(days=1)
            for step in mem.dream()["steps"]:
                if step["name"] in LLM_ONLY:
                    assert step["changed"] == 0
                    skipped[step["name"]].add(step["details"].get("skipped", ""))
        assert skipped == {name: {"needs an LLM"} for name in LLM_ONLY}
        everything = [r for b in mem.store.scan(MemoryFilter.everything(user_id=user, all_users=False)) for r in b]
        by_id = {r.id: r for r in everything}
        made = [r for r in everything if r.write_source == "dream"]
        for rec in made:  # only consolidation summaries, each holding every member's own words
            meta = rec.metadata[META]
            assert meta["kind"] == "summary" and meta["method"] == "extractive"
            members = [by_id[i].content for i in meta["members"]]
            assert all(m.rstrip(".") in rec.content for m in members) and "more." not in rec.content
            assert grounding_problem(rec.content, members) is None
            assert len(rec.content) <= mem.settings.dream.consolidation.consolidate.summary_max_chars
        # the turns that state the allergy (Maya's, and the assistant's confirmation), or a summary holding one
        penicillin = {r.id for r in everything if "penicillin" in r.content and r.write_source != "dream"}
        holds = penicillin | {r.id for r in made if penicillin & set(r.metadata[META]["members"])}
        for query in ("allergies", "What is Maya allergic to?"):
            top = [h.memory.id for h in mem.search(query, user_id=user, k=10)]
            assert holds & set(top[:1]), (query, [by_id[i].content[:60] for i in top])
