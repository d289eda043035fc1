"""The public ideas reverie's settings come from.

Every setting carries one of these names as ``source`` in its field metadata
(``json_schema_extra={"source": ...}``); a section names the source of most of its settings once
(``Section.SOURCE``) and a setting that comes from elsewhere names its own. The generated
configuration reference shows the source beside each setting, and ``docs/design-notes.md`` says
where each idea comes from.
"""

from __future__ import annotations

from pydantic.config import JsonDict

ENERGY = "three-tier energy model"
COGNITIVE_MEMORY = "Cognitive Memory v9 design"
FSRS = "FSRS-6"
ACTR = "ACT-R"
DUAL_STRENGTH = "dual-strength memory"
PE_GATE = "prediction-error gate"
RRF = "reciprocal rank fusion"
MMR = "maximal marginal relevance"
HYDE = "HyDE"
TAGGING = "synaptic tagging and capture"
PAHF = "PAHF"
AMEM = "A-MEM"
EMOTION = "emotional memory"
WORKING_MEMORY = "working-memory capacity"
LAYERED = "layered memory design (engram)"
CONSOLIDATION = "consolidation design"
LIFECYCLE = "lifecycle policy design"
REVERIE = "reverie"

#: Every known source and one line on what it is (the design-notes page says more).
SOURCES: dict[str, str] = {
    ENERGY: "energy per memory that decays per tier and grows with use; co-activation clusters, "
    "retroactive strengthening, consolidation under optimistic concurrency",
    COGNITIVE_MEMORY: "the Cognitive Memory v9 agent-memory design: observer, importance channels, hybrid "
    "search, dream cycle, relations, bitemporal facts, truth anchors, hot tier, utility, ops log",
    FSRS: "the Free Spaced Repetition Scheduler, version 6 (checked against the py-fsrs reference)",
    ACTR: "base-level activation of the ACT-R cognitive architecture",
    DUAL_STRENGTH: "storage strength that never decays beside retrieval strength that does (Bjork & Bjork)",
    PE_GATE: "a prediction-error gate: a new memory is created, merged, reinforced or supersedes by how "
    "similar it is to what is already stored",
    RRF: "reciprocal rank fusion of ranked lists (Cormack, Clarke & Büttcher, 2009)",
    MMR: "maximal marginal relevance re-ranking for diversity (Carbonell & Goldstein, 1998)",
    HYDE: "hypothetical document embeddings: search with the embedding of a hypothetical answer (Gao et al., 2022)",
    TAGGING: "synaptic tagging and capture (Frey & Morris, 1997) and Hebbian co-activation",
    PAHF: "personalized adaptive hierarchical forgetting: per-category decay multipliers",
    AMEM: "A-MEM, agentic memory: linked notes that evolve, spreading activation to neighbours",
    EMOTION: "emotional memory: flashbulb memories and mood-congruent recall",
    WORKING_MEMORY: "a small working memory of about seven items (Miller, 1956) with a short recency half-life",
    LAYERED: "layered memory (working, episodic, semantic, procedural, codebase), nine-factor importance, "
    "surprise, retention modes, trust-weighted decay, embedding quantization (engram)",
    CONSOLIDATION: "consolidation of fading memories into summaries, hot and cold stores, deep recall, tick()",
    LIFECYCLE: "buffered extraction, episodes and notes, memory boxes, lifecycle policy, tier routing, "
    "graph-edge confidence (Remnic)",
    REVERIE: "reverie's own choice: engineering limits, or a value calibrated on the default embedder and "
    "the benchmarks",
}


def source(name: str) -> JsonDict:
    """Field metadata naming the public idea a setting comes from (``json_schema_extra=source(PAHF)``)."""
    if name not in SOURCES:
        raise ValueError(f"unknown setting source {name!r}; known: {', '.join(SOURCES)}")
    return {"source": name}


__all__ = ["SOURCES", "source"]
