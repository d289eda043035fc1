"""Sub-tiers are set where the information exists, so that their retrieval boosts apply (through ``Memory``,
both backends): episodic by where a memory came from, semantic by its kind of knowledge."""

from __future__ import annotations

from reverie import Layer, Memory, SettableClock
from reverie.model import MemoryRecord
from reverie.text.classify import episodic_sub_tier, semantic_sub_tier


def _rec(mem: Memory, mid: str) -> MemoryRecord:
    return mem.store.get([mid])[mid]


def test_episodic_sub_tier_follows_the_source(mem: Memory) -> None:
    said = mem.add("I always run the linter before I push to main", user_id="u").id
    conv = mem.add(
        [
            {"role": "user", "content": "My sister Ana lives in Porto and works as a nurse"},
            {"role": "assistant", "content": "Your sister Ana is a nurse who lives in Porto, good to know"},
        ],
        user_id="u",
    )
    by_text = {_rec(mem, i).content: _rec(mem, i) for i in conv.ids}
    assert _rec(mem, said).sub_tier == "personal"
    assert [r.sub_tier for t, r in by_text.items() if "sister Ana lives" in t] == ["personal"]
    assert [r.sub_tier for t, r in by_text.items() if t.startswith("Assistant")] == ["observed"]
    ai = mem.add("The deploy script needs the AWS profile named staging", user_id="u", source="ai").id
    assert _rec(mem, ai).sub_tier == "observed"


def test_sub_tier_boost_reaches_the_ranking(mem: Memory) -> None:
    mem.add("I always run the linter before I push to main", user_id="u")
    hit = mem.search("linter before push", user_id="u")[0]
    assert hit.explain["multipliers"].get("sub_tier") == mem.settings.read.sub_tier_boost["personal"]


def test_promotion_sets_the_semantic_sub_tier(mem: Memory, clock: SettableClock) -> None:
    rule = mem.add("Never deploy on a Friday afternoon without a rollback plan", user_id="u").id
    fact = mem.add("The staging database runs PostgreSQL version fifteen", user_id="u").id
    clock.advance(hours=1)
    mem.dream(steps=["promote"])
    for _ in range(3):  # three accesses: episodic → semantic (access frequency rule)
        mem.get(rule)
        mem.get(fact)
    clock.advance(hours=1)
    mem.dream(steps=["promote"])
    r, f = _rec(mem, rule), _rec(mem, fact)
    assert r.layer in (Layer.SEMANTIC, Layer.PROCEDURAL) and f.layer is Layer.SEMANTIC
    assert r.sub_tier == "schematic" and f.sub_tier == "factual"
    # a manual move sets it too
    mem.demote(fact)
    assert _rec(mem, fact).sub_tier == "personal"


def test_sub_tier_rules() -> None:
    assert episodic_sub_tier(data_source="federation", write_source="observer", source="interaction") == "vicarious"
    assert episodic_sub_tier(data_source="user_message", write_source="observer", source="interaction") == "personal"
    assert episodic_sub_tier(data_source="user_message", write_source="dream", source="dream") == "observed"
    assert semantic_sub_tier("How to rotate the API keys: step 1 open the vault", category="fact") == "procedural"
    assert semantic_sub_tier("Ana prefers tea", category="preference") == "factual"
    assert semantic_sub_tier("anything", category="pattern") == "schematic"
