"""Optional OpenAI-compatible chat client (JSON answers, retries, circuit breaker)."""

from reverie.llm.client import ChatJSON, LLMClient, make_llm

__all__ = ["ChatJSON", "LLMClient", "make_llm"]
