"""``ReverieRetriever`` against the real ``langchain-core`` package, on both storage backends."""

from __future__ import annotations

import asyncio

import pytest

from reverie import AsyncMemory, Memory

pytest.importorskip("langchain_core")

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda

from reverie.integrations.langchain import ReverieRetriever

FACTS = [
    "Maya prefers window seats on long flights",
    "Maya is allergic to penicillin",
    "Maya's cat is called Pixel",
    "Maya's sister Lena lives in Hamburg",
]


def test_invoke_returns_documents_from_the_users_scope(mem: Memory) -> None:
    mem.add_many(FACTS, user_id="maya", infer=False)
    mem.add("Tom is allergic to peanuts", user_id="tom", infer=False)
    retriever = ReverieRetriever(memory=mem, user_id="maya", k=2)
    assert isinstance(retriever, BaseRetriever)
    docs = retriever.invoke("what is Maya allergic to")
    assert all(isinstance(d, Document) for d in docs) and len(docs) == 2
    assert docs[0].page_content == "Maya is allergic to penicillin"
    meta = docs[0].metadata
    assert meta["user_id"] == "maya" and meta["score"] >= docs[1].metadata["score"] and meta["layer"] == "working"
    assert docs[0].id == meta["id"] and mem.peek(meta["id"]).access_count == 1  # a retrieval is a recall
    assert "Tom" not in " ".join(d.page_content for d in retriever.invoke("peanuts allergy"))


def test_filters_batch_async_and_a_chain(mem: Memory) -> None:
    mem.add_many(FACTS, user_id="maya", infer=False)
    mem.add("Maya decided to rent the flat in Graça", user_id="maya", infer=False, metadata={"topic": "home"})
    only = ReverieRetriever(memory=mem, user_id="maya", filters={"metadata": {"topic": "home"}})
    assert [d.page_content for d in only.invoke("where will Maya live")] == ["Maya decided to rent the flat in Graça"]
    retriever = ReverieRetriever(memory=AsyncMemory(memory=mem), user_id="maya", k=1)
    batch = retriever.batch(["cat name", "sister"])
    assert [b[0].page_content for b in batch] == [FACTS[2], FACTS[3]]

    async def main() -> list[list[Document]]:
        return await asyncio.gather(retriever.ainvoke("window seat"), retriever.ainvoke("penicillin"))

    seats, allergy = asyncio.run(main())
    assert seats[0].page_content == FACTS[0] and allergy[0].page_content == FACTS[1]

    def joined(docs: list[Document]) -> str:
        return "\n".join(d.page_content for d in docs)

    chain = retriever | RunnableLambda(joined)
    assert chain.invoke("Lena") == FACTS[3]
