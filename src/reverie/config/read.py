"""Settings of the read path. Every setting names the public idea it comes from (``source``).

Thresholds that are cosine similarities depend on the embedding model (see "Similarity thresholds
depend on the embedding model" in docs/design-notes.md): they are dicts keyed by the embedder's ``profile``
(``"api"`` = the designs' values for large API models, ``"e5"`` = the default local model
multilingual-e5-small, mapped from the ``minilm`` values by the share of LoCoMo question/evidence
cosines they let through (hot tier 0.80 ≈ 85%, full injection 0.835 ≈ 45%, abbreviated 0.78 ≈ 96%),
``"minilm"`` = all-MiniLM-L6-v2,
``"hash"`` = the unit-test embedder); :meth:`ReadSettings.for_profile` picks one, falling back to
``"api"`` for an unknown profile.

Constants the designs describe only qualitatively (the lifecycle policy's "small boost", "slight penalty",
"stronger penalty") carry reverie's chosen numbers and say so.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from reverie.config.core import Section
from reverie.config.sources import ACTR, COGNITIVE_MEMORY, HYDE, LIFECYCLE, MMR, REVERIE, RRF, source

INTENTS = ("factual", "temporal", "causal", "entity_profile", "preference", "general")


class IntentStrategy(Section):
    """One row of the retrieval strategy table (one per query intent)."""

    SOURCE = COGNITIVE_MEMORY

    vector_weight: float = Field(
        ge=0,
        description="RRF weight of the vector channel.",
        json_schema_extra=source(RRF),
    )
    text_weight: float = Field(
        ge=0,
        description="RRF weight of the full-text channel.",
        json_schema_extra=source(RRF),
    )
    limit: int = Field(ge=1, le=200, description="Candidate limit of the intent (before the 3x over-fetch).")
    sort: str = Field(
        default="relevance",
        pattern=r"^(relevance|valid_from|utility)$",
        description="Sort column; 'valid_from' and 'utility' are applied as a secondary key "
        "(a bounded tie-break term, see read.scoring) so that relevance still decides the top-k.",
    )
    utility_boost: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="Utility boost: share of the 0.6/0.2/0.2 utility score in the final score "
        "(used inside utility-aware intents).",
    )
    categories: list[str] = Field(
        default_factory=list,
        description="Category filter (preference: preference, correction); applied fail-open "
        "as a boost, see read.scoring.",
    )
    include_superseded: bool = Field(default=False, description="Temporal intent includes superseded facts.")
    graph_hops: int = Field(default=1, ge=0, le=4, description="BFS hops of the graph expansion (causal: 2).")
    graph_types: list[str] = Field(
        default_factory=lambda: ["supersedes", "elaborates", "same_entity", "related_to", "summarizes", "reinforces"],
        description="Relation types followed (causal: causes, elaborates).",
    )
    entity_hub: bool = Field(default=False, description="entity_profile queries the entity hub.")


def _default_strategies() -> dict[str, IntentStrategy]:
    return {
        "factual": IntentStrategy(vector_weight=0.6, text_weight=0.4, limit=10, utility_boost=0.2),
        "temporal": IntentStrategy(
            vector_weight=0.4, text_weight=0.6, limit=15, sort="valid_from", include_superseded=True
        ),
        "causal": IntentStrategy(
            vector_weight=0.3, text_weight=0.3, limit=20, graph_hops=2, graph_types=["causes", "elaborates"]
        ),
        "entity_profile": IntentStrategy(
            vector_weight=0.5, text_weight=0.5, limit=15, sort="utility", utility_boost=0.3, entity_hub=True
        ),
        "preference": IntentStrategy(
            vector_weight=0.5, text_weight=0.5, limit=10, sort="utility", categories=["preference", "correction"]
        ),
        "general": IntentStrategy(vector_weight=0.5, text_weight=0.5, limit=10, utility_boost=0.2),
    }


def _profiled(api: float, minilm: float, hash_: float, *, e5: float) -> dict[str, float]:
    return {"api": api, "e5": e5, "minilm": minilm, "hash": hash_}


class ReadSettings(Section):
    """The read path: hybrid search, deep recall into the cold store, lifecycle-aware retrieval."""

    SOURCE = COGNITIVE_MEMORY

    # stage switches (every stage LLM-optional; switching one off is the ablation of bench/locomo_ablation.py)
    gate: bool = Field(default=True, description="Pre-retrieval gate (skip trivial messages).")
    intent: bool = Field(default=True, description="Intent router; off = every query is 'general'.")
    decompose: bool = Field(default=True, description="Multi-query decomposition.")
    hyde: bool = Field(
        default=False,
        description="HyDE-style template expansion (zero LLM cost): the query's embedding call also embeds a "
        "hypothetical answer built from templates, and the vector search uses their centroid. Off by default: "
        "it made no recall difference on LoCoMo with either local model (multilingual-e5-small R@10 0.678 on, "
        "0.680 off; MiniLM 0.669 / 0.668, bench/locomo_ablation.py) and the second text makes every "
        "search's embedding call a batch of two. Turn it on for "
        "short keyword queries against long documents, where the expansion has more to add.",
        json_schema_extra=source(HYDE),
    )
    graph: bool = Field(default=True, description="Graph expansion, weighted by edge confidence.")
    episode_context: bool = Field(
        default=True,
        description="Episode boost, inferred when the caller names no session: every episode in "
        "the candidate pool is boosted in proportion to how well its best memory matches the query "
        "(read.scoring.episode_strengths).",
    )
    coactivation: bool = Field(default=True, description="Co-activation boost.")
    llm_router: bool = Field(
        default=True,
        description="The intent router asks the LLM first which kind of question a query is (factual, temporal, "
        "causal, entity profile, preference, general), when an LLM is configured; its keyword rules decide when "
        "there is none or its answer is unusable (the cognitive-memory design's LLM-primary router).",
    )
    llm_router_cache: int = Field(
        default=256,
        ge=0,
        le=100_000,
        description="How many queries' LLM intents the router remembers (least recently used dropped first), so a "
        "repeated query asks the LLM once (0 = ask every time).",
    )
    hybrid_similarity: bool = Field(
        default=True,
        description="The composite's similarity term (0.40) is the hybrid similarity: cosine "
        "and lexical score weighted by the intent's vector/FTS weights (read.scoring.hybrid_similarity). The "
        "lexical score is on an absolute scale: the share of the query's words (each weighted by how rare it "
        "is among the candidates) that the memory holds, so a memory matching only a word every memory has "
        "scores near 0, never 1 (read.hybrid.lexical_scores). Off = the cosine alone (the design's 'vector "
        "distance').",
    )
    time_anchor: bool = Field(
        default=True,
        description="Temporal anchoring (on the bitemporal valid_from): a query that names a "
        "time ('in December 2023', 'last week', 'dün') boosts memories whose event time falls into it "
        "(read.when).",
        json_schema_extra=source(REVERIE),
    )
    scoring: bool = Field(
        default=True,
        description="Composite re-rank; off = RRF order.",
        json_schema_extra=source(RRF),
    )
    mmr: bool = Field(default=True, description="MMR diversity re-rank.", json_schema_extra=source(MMR))
    hot_tier: bool = Field(default=True, description="Hot tier merged into results.")
    follow_summaries: bool = Field(
        default=True,
        description="Recall through consolidation: when consolidation summaries are among the best candidates "
        "(read.summaries_followed), the originals they hold are searched too and compete on their own relevance; "
        "a member that made the results takes its summary's slot. A summary is an index over its members, not a "
        "replacement.",
    )
    summaries_followed: int = Field(
        default=5,
        ge=0,
        le=200,
        description="How many of the best candidates (by fused rank) are followed to their members when they "
        "are consolidation summaries; bounds the extra search per query.",
    )
    cold_search: Literal["always", "merged", "when_weak", "never"] = Field(
        default="always",
        description="When a plain search also looks in the cold store, among the memories still true there (cold "
        "active, dormant, archived, and originals held by a consolidation summary; never facts replaced by a newer "
        "one): 'always'; 'when_weak' = only when the hot store's best match has a cosine below "
        "read.cold_weak_below; 'never' = only deep=True does. Forgetting orders and compresses what is shown; it "
        "must not make a stated fact unreachable. 'always' is the default because the benchmark of a months-long "
        "conversation run with the default lifecycle (bench/locomo.py) found no threshold on the hot results "
        "that tells when the answer sits in the cold store: the recall of 'when_weak' rose monotonically with "
        "the threshold and only matched the memory without a lifecycle when the cold store was always searched "
        "(the cold store costs one more search of each channel). 'merged' = both stores searched as one pool: "
        "each channel keeps the best read.candidate_pool hits of the two by their raw scores, so a store the dream "
        "cycle has made mostly cold is re-ranked from one pool instead of two — for latency-bound deployments, at "
        "a cost in recall (measured in bench/history/2026-11-journal.md: search after a dream, read.cold_search).",
    )
    cold_weak_below: dict[str, float] = Field(
        default_factory=lambda: _profiled(0.55, 0.45, 0.35, e5=0.82),
        description="With read.cold_search = 'when_weak': the cosine below which the hot store's best vector "
        "match counts as weak, so the cold store is searched too; per embedder profile.",
    )

    cosine_scale: dict[str, tuple[float, float]] = Field(
        default_factory=lambda: {"e5": (0.753, 0.825)},
        description="Similarity calibration per embedder profile: (typical cosine of a question and an unrelated "
        "memory, typical cosine of a question and a memory that answers it). The composite score's weights, its "
        "prior margin and the read path's 'close score' margins are set on the scale of a model whose cosines "
        "spread widely (all-MiniLM-L6-v2: 0.12 unrelated, 0.46 relevant, medians over LoCoMo questions); a model "
        "whose cosines are compressed into a narrow band (multilingual-e5-small: 0.753 and 0.825) is mapped "
        "linearly onto that scale before the cosine joins the lexical score, so relevance is not drowned by the "
        "lexical score and the prior. Profiles not listed are used as they are. Raw cosines still drive the "
        "per-profile thresholds (hot tier, context injection, cold search).",
    )

    # hybrid search
    overlap_embedding: bool = Field(
        default=True,
        description="reverie latency: the full-text channel needs no query vector, so the query and its "
        "HyDE variants are embedded in a worker thread while the full-text searches run (results are "
        "identical either way).",
        json_schema_extra=source(REVERIE),
    )
    rrf_k: int = Field(default=60, ge=1, description="RRF K = 60.", json_schema_extra=source(RRF))
    overfetch: int = Field(
        default=3,
        ge=1,
        le=10,
        description="Vector over-fetch 3x for the MMR pool — of the intent's candidate limit, never of "
        "the number of results asked for (read.candidate_pool).",
        json_schema_extra=source(MMR),
    )
    candidate_pool: int = Field(
        default=60,
        ge=10,
        le=1000,
        description="Candidates each channel (vector, full text) contributes to the re-rank, at least (the "
        "intent's limit × overfetch when larger; k when more results are asked for). The pool does not grow "
        "with k, so the first n results of a search are the same whether it asks for n or for 50.",
    )
    strategies: dict[str, IntentStrategy] = Field(
        default_factory=_default_strategies, description="Retrieval strategy table, per intent."
    )
    max_subqueries: int = Field(default=4, ge=2, le=8, description="Compound queries → 2–4 sub-queries.")
    hyde_variants: int = Field(
        default=1,
        ge=0,
        le=3,
        description="2–3 hypothetical documents per intent; reverie embeds 1 by default. Each "
        "variant is one more text in the query's embedding call, and on LoCoMo 0, 1 and 2 variants gave the "
        "same recall (R@10 0.676 / 0.675 / 0.674, "
        "bench/locomo_ablation.py); 2–3 restores HyDE's expansion.",
        json_schema_extra=source(HYDE),
    )
    hyde_query_weight: float = Field(
        default=2.0,
        gt=0,
        description="Weight of the query itself in the centroid of query + variants (reverie: the "
        "query counts twice so the templates widen recall without drowning the question).",
        json_schema_extra=source(HYDE),
    )

    # composite re-rank
    w_similarity: float = Field(default=0.40, ge=0, description="Composite: 0.40 × similarity.")
    prior_margin: float = Field(
        default=0.04,
        ge=0,
        le=1,
        description="Relevance leads: the composite's other terms (ACT-R activation, importance, RRF, utility, "
        "episode and co-activation boosts, multipliers) add at most this much to a memory's score, as a "
        "share of their largest possible value. 0.04 equals 0.1 of hybrid similarity at the 0.40 weight: "
        "access history and importance reorder memories that are about as relevant, but never lift one "
        "above a clearly more relevant memory (read.scoring).",
        json_schema_extra=source(RRF),
    )
    w_activation: float = Field(
        default=0.30,
        ge=0,
        description="Composite: 0.30 × ACT-R activation.",
        json_schema_extra=source(ACTR),
    )
    w_importance: float = Field(default=0.15, ge=0, description="Composite: 0.15 × importance.")
    w_rrf: float = Field(
        default=0.15,
        ge=0,
        description="Composite: 0.15 × RRF score (scaled as read.rrf_scale says).",
        json_schema_extra=source(RRF),
    )
    rrf_scale: str = Field(
        default="raw",
        pattern=r"^(raw|possible|minmax)$",
        description="How the RRF score enters the composite: 'raw' = Σ w/(K + rank) as the design "
        "writes it (at most 2/61 with K = 60, so 0.15 × RRF breaks ties: the hybrid similarity already "
        "carries both channels); 'possible' = divided by its largest possible value (rank 1 on every "
        "channel = 1.0); 'minmax' = min-max over the candidate pool. Rescaled, the rank term counts the "
        "weaker channel a second time: LoCoMo R@10 −2.0 points for 'possible', −0.4 for 'minmax' "
        "(bench/locomo_ablation.py).",
        json_schema_extra=source(RRF),
    )
    activation_min_age_s: float = Field(
        default=86400.0,
        ge=1,
        description="Calibration of the ACT-R term in the composite: an access less than a "
        "day ago counts as one day old, so the term measures availability over days (frequency and "
        "spacing), not which memories the previous question returned. With the dynamics' 1-second floor a "
        "memory returned seconds ago has activation >= 0.5 against ~0.003 for one untouched for a day, and "
        "the 0.30 weight lets earlier results crowd out later, unrelated queries (LoCoMo, conversation 1, "
        "R@10: 0.36 with a 1-second floor, 0.56 with one hour, 0.58 with one day, 0.58 without the term; "
        "bench/locomo_ablation.py).",
        json_schema_extra=source(REVERIE),
    )
    entity_boost: float = Field(default=0.1, ge=0, description="+0.1 per matching entity.")
    entity_boost_max: int = Field(
        default=3,
        ge=1,
        description="At most 3 entity matches count.",
        json_schema_extra=source(REVERIE),
    )
    attribute_boost: float = Field(
        default=0.05,
        ge=0,
        description="A question about something that holds one value at a time (where someone lives or works, "
        "whom they report to, a diet, a commute, when they get up, an age: 'Which company did Maya join?') "
        "adds this to the relevance of each memory that names the same attribute ('accepted the job offer') "
        "and, when the question names someone, names them too. 0 = off.",
        json_schema_extra=source(REVERIE),
    )
    episode_boost: float = Field(default=0.15, ge=0, description="+0.15 for the same session episode.")
    episode_context_boost: float = Field(
        default=0.05,
        ge=0,
        description="The inferred episode context (no session named) adds up to +0.05 — a third "
        "of the +0.15 for a known session, since the episode is a guess — times the episode's "
        "strength (read.scoring.episode_strengths).",
        json_schema_extra=source(REVERIE),
    )
    episode_relevance_boost: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description="The inferred episode's strength counts as relevance too: a memory whose session holds the "
        "pool's best matches gains up to +0.05 (times the strength to the power read.episode_relevance_power), "
        "so the turns of the session a question is about outrank loose matches from elsewhere. 0 = off. "
        "LoCoMo dev half, tuning two thirds, with the neighbours: R@10 0.740 -> 0.760 (+0.1: 0.767, +0.2: "
        "0.733); +0.1 put a turn next to the question's session above the answer in the demo's conversation "
        "(8 of 9 answered first, 9 of 9 at +0.05); when the caller names a session, the +0.15 session boost "
        "applies instead.",
        json_schema_extra=source(REVERIE),
    )
    episode_relevance_power: float = Field(
        default=2.0,
        ge=0,
        description="Exponent of the episode strength in the relevance boost: 2 = the sessions whose best "
        "match is close to the pool's best gain most (strength 0.9 -> 0.81 of the boost, 0.5 -> 0.25). "
        "LoCoMo tuning two thirds R@10: 0.765 with 2, 0.761 with 4.",
        json_schema_extra=source(REVERIE),
    )
    neighbour_seeds: int = Field(
        default=3,
        ge=0,
        le=20,
        description="The best candidates by composite score whose session neighbours (the memories recorded "
        "just before and after them in the same session) join the pool (read.neighbours): a reply or short "
        "turn next to a strong match often carries the answer without the question's words. 0 = off. LoCoMo "
        "dev half, tuning two thirds: R@10 0.670 -> 0.740, characters per search unchanged (1742 -> 1726).",
        json_schema_extra=source(REVERIE),
    )
    neighbour_width: int = Field(
        default=2,
        ge=0,
        le=10,
        description="How many neighbours on each side of a seed join the pool.",
        json_schema_extra=source(REVERIE),
    )
    neighbour_pull: list[float] = Field(
        default_factory=lambda: [0.5, 0.25],
        max_length=10,
        description="The share of the way a neighbour's score moves toward its seed's, by distance (1, 2, ...): "
        "the turn next to a strong match rises half way, the one after it a quarter; never down.",
        json_schema_extra=source(REVERIE),
    )
    time_anchor_boost: float = Field(
        default=0.1,
        ge=0,
        description="Up to +0.1 (the scale of the entity boost) for a memory whose event "
        "time (valid_from, else created_at) lies in a period the query names.",
        json_schema_extra=source(REVERIE),
    )
    time_anchor_after_days: float = Field(
        default=30.0,
        ge=0,
        description="The time boost fades to 0 over 30 days after the named period (events are "
        "often recorded some days after they happen: 'last week I …').",
        json_schema_extra=source(REVERIE),
    )
    time_anchor_before_days: float = Field(
        default=7.0,
        ge=0,
        description="The time boost fades to 0 over 7 days before the named period.",
        json_schema_extra=source(REVERIE),
    )
    episode_context_power: float = Field(
        default=1.0,
        ge=0,
        description="Exponent of the episode strength (best similarity in the episode / best "
        "overall); 1 = proportional, larger = only episodes close to the best one count.",
        json_schema_extra=source(REVERIE),
    )
    sub_tier_boost: dict[str, float] = Field(
        default_factory=lambda: {
            "personal": 1.1,
            "observed": 1.0,
            "vicarious": 0.9,
            "schematic": 1.1,
            "procedural": 1.05,
            "factual": 1.0,
        },
        description="Sub-tier retrieval boosts.",
    )
    category_boost: float = Field(
        default=1.25,
        ge=1,
        description="The intent's category filter, fail-open, as ×1.25.",
        json_schema_extra=source(REVERIE),
    )
    low_source_confidence: float = Field(
        default=0.3, ge=0, le=1, description="Memories with source confidence < 0.3 are deprioritised."
    )
    low_source_confidence_factor: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Deprioritised = score ×0.5.",
        json_schema_extra=source(REVERIE),
    )
    lifecycle_factor: dict[str, float] = Field(
        default_factory=lambda: {"active": 1.05, "validated": 1.05, "candidate": 0.95, "stale": 0.8, "archived": 0.8},
        description="Lifecycle weighting: active/validated small boost, candidate slight penalty, "
        "stale stronger penalty (reverie's numbers; unknown states fail open at 1.0).",
        json_schema_extra=source(LIFECYCLE),
    )
    filter_stale: bool = Field(
        default=False,
        description="Searches leave out memories the lifecycle policy (dream.forgetting.lifecycle_policy) found "
        "stale or archived, before the final top k, instead of only ranking them lower (lifecycle_factor). "
        "Fail-open: memories the policy never scored are never left out. Off by default, as in the lifecycle "
        "design (lifecycleFilterStaleEnabled).",
    )
    disputed_factor: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="verificationState=disputed additional penalty (×0.8).",
        json_schema_extra=source(LIFECYCLE),
    )
    sort_weight: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description="Weight of an intent's sort column (valid_from recency or utility) as a secondary key.",
        json_schema_extra=source(REVERIE),
    )

    # graph expansion (breadth-first, weighted by edge confidence)
    graph_seeds: int = Field(
        default=10,
        ge=1,
        description="BFS starts from the 10 best fused hits.",
        json_schema_extra=source(REVERIE),
    )
    graph_hop_decay: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="Score ×0.5 per hop.",
        json_schema_extra=source(REVERIE),
    )
    graph_max_added: int = Field(
        default=20,
        ge=0,
        description="At most 20 memories admitted by the graph.",
        json_schema_extra=source(REVERIE),
    )
    pagerank_iterations: int = Field(
        default=8, ge=0, description="graphTraversalPageRankIterations = 8.", json_schema_extra=source(LIFECYCLE)
    )
    pagerank_damping: float = Field(default=0.85, gt=0, lt=1, description="PageRank damping factor 0.85.")
    entity_hub_limit: int = Field(
        default=10,
        ge=1,
        description="Memories per entity-hub lookup.",
        json_schema_extra=source(REVERIE),
    )

    current_first: bool = Field(
        default=True,
        description="What is true now comes first: a superseded memory in the results (the temporal intent, "
        "deep recall) is placed right after the memory that replaced it — fetched when the search did not "
        "find it — and marked 'superseded' in its explanation and in context(); and of two results that "
        "state one attribute with different values, the older is placed after the newer when the newer "
        "updates it (the write path's update reading, reverie.text.updates), so a store written verbatim "
        "answers with the update too.",
    )
    same_answer_margin: float = Field(
        default=0.15,
        ge=0,
        le=1,
        description="Time reasoning for questions about now (read.current_first): of two results where the newer "
        "may update the older (linked as a possible update when it was written, or a change the update reading "
        "could not align), the newer comes first when its score is within this margin of the older's — when both "
        "answer the question. Two statements about different attributes of one subject answer different "
        "questions: the one asked about scores clearly higher and keeps its place. 0.15: on the update suite the "
        "corrections that are only possible updates sit up to 0.15 below the statement they correct; no wider "
        "margin helped, and the blind compatible pairs lost nothing at it (bench/README.md). 0 = only updates the "
        "reading is sure of reorder.",
        json_schema_extra=source(REVERIE),
    )
    update_check_top: int = Field(
        default=10,
        ge=0,
        le=50,
        description="How many of the best candidates are read pairwise for an update of one by another "
        "(read.current_first); 0 reads none.",
    )
    successor_search_top: int = Field(
        default=3,
        ge=0,
        le=50,
        description="How many of the best candidates look through the whole candidate pool for a newer memory "
        "that updates them (read.current_first): a correction worded apart from the question ranks far down, "
        "and is brought up to the place of what it corrects when the update reading finds an update. 0 = off.",
        json_schema_extra=source(REVERIE),
    )
    successor_search_neighbours: int = Field(
        default=1,
        ge=0,
        le=100,
        description="With read.successor_search_top: of the pool's memories newer than and similar to one of the "
        "best candidates, only its this many most similar ones are read for an update (0 = every one). A "
        "correction is among the nearest neighbours of what it corrects: on the knowledge-update suite 1, 3 and "
        "every one gave the same results, while reading every similar memory of a large store cost 3–6 ms per "
        "search at 100k memories (bench/history/2026-11-journal.md).",
        json_schema_extra=source(REVERIE),
    )
    hebbian_top: int = Field(
        default=5,
        ge=0,
        le=20,
        description="Hebbian co-activation after each search: pairs among the 5 best hits (10 pairs) "
        "are bumped and those memories get +2% stability (0 = off).",
    )
    session_coaccess_max: int = Field(
        default=20,
        ge=1,
        le=500,
        description="Co-activation counts memories used in the same session (the energy-model consolidation "
        "design: 'memories accessed in the same session'): a memory a search shows at the top (the "
        "hebbian_top best) or a get reads is paired with each of the last this-many memories its session used "
        "before, each pair once per session. Bounds the work of a long session. A call without a session pairs "
        "only the memories it used together.",
    )

    # MMR and hot tier
    mmr_lambda: float = Field(
        default=0.7,
        ge=0,
        le=1,
        description="MMR λ = 0.7.",
        json_schema_extra=source(MMR),
    )
    hot_min_utility: float = Field(default=0.8, description="Hot tier: utility >= 0.8.")
    hot_min_accesses: int = Field(default=10, description="Hot tier: >= 10 accesses.")
    hot_max_age_days: float = Field(default=30.0, description="Hot tier: age < 30 days.")
    hot_max_items: int = Field(default=15, ge=0, description="Hot tier: max 15 items.")
    hot_ttl_s: float = Field(default=300.0, ge=0, description="Hot tier: TTL cache 5 minutes.")
    hot_min_similarity: dict[str, float] = Field(
        default_factory=lambda: _profiled(0.5, 0.35, 0.3, e5=0.80),
        description="cosine a hot-tier memory needs to the query to be merged into search results "
        "(context() always includes the hot tier); per embedder profile.",
    )

    # confidence-gated injection
    inject_full: dict[str, float] = Field(
        default_factory=lambda: _profiled(0.7, 0.5, 0.45, e5=0.835),
        description="Confidence >= 0.7 → full injection with metadata (cosine; calibrated per profile).",
    )
    inject_abbreviated: dict[str, float] = Field(
        default_factory=lambda: _profiled(0.4, 0.25, 0.2, e5=0.78),
        description="0.4–0.7 → abbreviated; below → skipped and logged (cosine, per profile).",
    )
    context_budget_tokens: int = Field(
        default=800,
        ge=16,
        description="Default context() budget.",
        json_schema_extra=source(REVERIE),
    )
    chars_per_token: float = Field(
        default=4.0,
        gt=0,
        description="reverie token estimate: ceil(characters / 4) (no tokenizer needed).",
        json_schema_extra=source(REVERIE),
    )
    abbreviated_chars: int = Field(
        default=160,
        ge=20,
        description="Abbreviated injection keeps 160 chars.",
        json_schema_extra=source(REVERIE),
    )
    item_budget_share: float = Field(
        default=0.34,
        gt=0,
        le=1,
        description="One item may use at most 34% of the budget (a large memory is truncated, "
        "never allowed to crowd out everything else).",
        json_schema_extra=source(REVERIE),
    )

    @model_validator(mode="after")
    def _check(self) -> ReadSettings:
        missing = [i for i in INTENTS if i not in self.strategies]
        if missing:
            raise ValueError(f"strategies is missing intents: {missing}")
        for name in ("hot_min_similarity", "inject_full", "inject_abbreviated", "cold_weak_below"):
            if "api" not in getattr(self, name):
                raise ValueError(f"{name} needs an 'api' entry (the fallback profile)")
        bad = [p for p, v in self.inject_full.items() if v < self.inject_abbreviated.get(p, 0.0)]
        if bad:
            raise ValueError(f"inject_full must be >= inject_abbreviated for profiles {bad}")
        if any(not 0 <= v <= 1 for v in self.neighbour_pull):
            raise ValueError("neighbour_pull shares must lie in [0, 1]")
        return self

    def for_profile(self, name: str, profile: str) -> float:
        """The value of a per-profile threshold for an embedder profile ('api' if unknown)."""
        table: dict[str, float] = getattr(self, name)
        return table.get(profile, table["api"])


__all__ = ["INTENTS", "IntentStrategy", "ReadSettings"]
