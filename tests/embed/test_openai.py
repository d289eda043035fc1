"""OpenAIEmbedder against a real local HTTP server speaking the OpenAI embeddings format."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from reverie.clock import SettableClock
from reverie.config.core import EmbeddingSettings
from reverie.embed import CachedEmbedder, OpenAIEmbedder, make_embedder
from reverie.embed.openai import BACKOFF_MAX_S, backoff_delay
from reverie.embed.testing import HashEmbedder
from reverie.errors import EmbeddingError, InvalidInputError

API_KEY = "sk-test-0123456789abcdef"
DIM = 8
_REFERENCE = HashEmbedder(DIM)


def fake_vector(text: str) -> list[float]:
    """What the fake endpoint answers for ``text``: a HashEmbedder vector scaled by 3 (not unit)."""
    return [3.0 * float(v) for v in _REFERENCE.embed([text])[0]]


@dataclass
class Reply:
    """One scripted answer; ``body=None`` answers with real embeddings of the request."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    reverse: bool = False  # list rows in reverse order (clients must sort by index)
    dim: int = DIM


@dataclass
class FakeEndpoint:
    url: str
    script: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_reply(self) -> Reply:
        with self.lock:
            return self.script.pop(0) if self.script else Reply()


def _answer(endpoint: FakeEndpoint, handler: BaseHTTPRequestHandler) -> None:
    length = int(handler.headers.get("Content-Length", "0"))
    payload = json.loads(handler.rfile.read(length) or b"{}")
    endpoint.requests.append({"path": handler.path, "auth": handler.headers.get("Authorization"), "json": payload})
    reply = endpoint.next_reply()
    if reply.delay_s:
        endpoint.stop.wait(reply.delay_s)
    if handler.headers.get("Authorization") != f"Bearer {API_KEY}" and reply.status == 200:
        shown = handler.headers.get("Authorization", "")
        reply = Reply(401, {"error": {"message": f"Incorrect API key provided: {shown[7:]}", "type": "auth"}})
    if reply.raw is not None:
        data = reply.raw
    elif reply.body is not None:
        data = json.dumps(reply.body).encode()
    else:
        rows = [
            {"object": "embedding", "index": i, "embedding": fake_vector(t)[: reply.dim]}
            for i, t in enumerate(payload["input"])
        ]
        if reply.reverse:
            rows.reverse()
        data = json.dumps({"object": "list", "data": rows, "model": payload["model"]}).encode()
    handler.send_response(reply.status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for name, value in reply.headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that timed out closed its socket; nothing to report."""


@pytest.fixture
def endpoint() -> Iterator[FakeEndpoint]:
    holder: dict[str, FakeEndpoint] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            _answer(holder["endpoint"], self)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = _QuietServer(("127.0.0.1", 0), Handler)
    host, port = server.server_address[:2]
    holder["endpoint"] = FakeEndpoint(url=f"http://{host!s}:{port}/v1")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield holder["endpoint"]
    holder["endpoint"].stop.set()
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make(endpoint: FakeEndpoint, sleeps: list[float]) -> Iterator[Any]:
    made: list[OpenAIEmbedder] = []

    def factory(**kwargs: Any) -> OpenAIEmbedder:
        kwargs.setdefault("base_url", endpoint.url)
        kwargs.setdefault("api_key", API_KEY)
        kwargs.setdefault("model", "test-embed")
        kwargs.setdefault("sleep", sleeps.append)
        embedder = OpenAIEmbedder(**kwargs)
        made.append(embedder)
        return embedder

    yield factory
    for embedder in made:
        embedder.close()


def expected(texts: list[str]) -> np.ndarray[Any, Any]:
    return _REFERENCE.embed(texts)


# --------------------------------------------------------------------------- the happy path


def test_embeds_batches_in_order_and_normalises(make: Any, endpoint: FakeEndpoint) -> None:
    endpoint.script = [Reply(reverse=True), Reply(reverse=True)]
    embedder = make(batch_size=2)
    texts = ["alpha", "beta gamma", "delta"]
    out = embedder.embed(texts)
    assert out.dtype == np.float32
    assert out.shape == (3, DIM)
    np.testing.assert_allclose(out, expected(texts), atol=1e-6)  # sorted by index, unit length
    assert [r["json"]["input"] for r in endpoint.requests] == [["alpha", "beta gamma"], ["delta"]]
    first = endpoint.requests[0]
    assert first["path"] == "/v1/embeddings"
    assert first["auth"] == f"Bearer {API_KEY}"
    assert first["json"]["model"] == "test-embed"
    assert "dimensions" not in first["json"]


def test_identity_and_dim_discovered_from_the_first_response(make: Any, endpoint: FakeEndpoint) -> None:
    embedder = make()
    assert (embedder.name, embedder.profile) == ("test-embed", "api")
    embedder.embed(["x"])
    assert embedder.dim == DIM
    assert len(endpoint.requests) == 1


def test_dim_probe_when_read_before_any_call(make: Any, endpoint: FakeEndpoint) -> None:
    embedder = make()
    assert embedder.dim == DIM
    assert len(endpoint.requests) == 1


def test_dimensions_setting_is_sent_and_known_up_front(make: Any, endpoint: FakeEndpoint) -> None:
    endpoint.script = [Reply(dim=4)]
    embedder = make(dimensions=4)
    assert embedder.dim == 4
    assert not endpoint.requests
    assert embedder.embed(["a"]).shape == (1, 4)
    assert endpoint.requests[0]["json"]["dimensions"] == 4


def test_known_models_have_a_dim_without_a_call(make: Any, endpoint: FakeEndpoint) -> None:
    assert make(model="text-embedding-3-small").dim == 1536
    assert not endpoint.requests


def test_settings_are_read(endpoint: FakeEndpoint, sleeps: list[float]) -> None:
    settings = EmbeddingSettings.model_validate(
        {"provider": "openai", "base_url": endpoint.url + "/", "api_key": API_KEY, "model": "m", "batch_size": 1}
    )
    with OpenAIEmbedder(settings, sleep=sleeps.append) as embedder:
        embedder.embed(["a", "b"])
    assert len(endpoint.requests) == 2
    assert endpoint.requests[0]["auth"] == f"Bearer {API_KEY}"
    assert endpoint.requests[0]["path"] == "/v1/embeddings"


def test_empty_input_and_empty_strings(make: Any, endpoint: FakeEndpoint) -> None:
    embedder = make()
    assert embedder.embed([]).shape[0] == 0
    assert not endpoint.requests
    out = embedder.embed(["", "text"])
    assert out.shape == (2, DIM)
    assert endpoint.requests[0]["json"]["input"] == [" ", "text"]  # OpenAI rejects ""
    with pytest.raises(InvalidInputError):
        embedder.embed("one string")


# --------------------------------------------------------------------------- retries


def test_500_then_success_is_retried(make: Any, endpoint: FakeEndpoint, sleeps: list[float]) -> None:
    endpoint.script = [Reply(500, {"error": {"message": "upstream hiccup"}})]
    out = make().embed(["hello"])
    np.testing.assert_allclose(out, expected(["hello"]), atol=1e-6)
    assert len(endpoint.requests) == 2
    assert sleeps == [backoff_delay(0)]


def test_429_honours_retry_after(make: Any, endpoint: FakeEndpoint, sleeps: list[float]) -> None:
    endpoint.script = [Reply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "1.5"})]
    make().embed(["hello"])
    assert sleeps == [1.5]


def test_persistent_5xx_gives_up_with_the_endpoint_message(
    make: Any, endpoint: FakeEndpoint, sleeps: list[float]
) -> None:
    endpoint.script = [Reply(503, {"error": {"message": "model is loading"}}) for _ in range(5)]
    with pytest.raises(EmbeddingError, match="model is loading") as info:
        make(retries=2).embed(["hello"])
    assert "3 attempts" in str(info.value)
    assert len(endpoint.requests) == 3
    assert sleeps == [0.25, 0.5]


def test_timeout_is_retried_then_fails(make: Any, endpoint: FakeEndpoint) -> None:
    endpoint.script = [Reply(delay_s=5.0), Reply(delay_s=5.0)]
    with pytest.raises(EmbeddingError, match="timed out"):
        make(timeout_s=0.2, retries=1).embed(["slow"])
    assert len(endpoint.requests) == 2


def test_timeout_then_success(make: Any, endpoint: FakeEndpoint) -> None:
    endpoint.script = [Reply(delay_s=5.0)]
    out = make(timeout_s=0.3).embed(["eventually"])
    np.testing.assert_allclose(out, expected(["eventually"]), atol=1e-6)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens here any more


def test_connection_refused_is_an_embedding_error(make: Any, sleeps: list[float]) -> None:
    embedder = make(base_url=f"http://127.0.0.1:{_closed_port()}/v1", retries=1)
    with pytest.raises(EmbeddingError, match="connection failed"):
        embedder.embed(["x"])
    assert len(sleeps) == 1


def test_backoff_is_small_and_bounded() -> None:
    assert [backoff_delay(a) for a in range(4)] == [0.25, 0.5, 1.0, 2.0]
    assert backoff_delay(10) == BACKOFF_MAX_S
    assert backoff_delay(0, retry_after=3600) == BACKOFF_MAX_S
    assert backoff_delay(0, retry_after=-1) == 0.0


# --------------------------------------------------------------------------- bad answers


def test_malformed_json_is_an_embedding_error(make: Any, endpoint: FakeEndpoint) -> None:
    endpoint.script = [Reply(raw=b"{not json")]
    with pytest.raises(EmbeddingError, match="malformed JSON"):
        make().embed(["x"])
    assert len(endpoint.requests) == 1  # not retried


@pytest.mark.parametrize(
    "body",
    [
        {"data": []},
        {"object": "list"},
        [1, 2, 3],
        {"data": [{"index": 0}]},
        {"data": [{"index": 0, "embedding": "nope"}]},
        {"data": [{"index": 5, "embedding": [1.0, 0.0]}]},
        {"data": [{"index": 0, "embedding": [0.0, 0.0]}]},
        {"data": [{"index": 0, "embedding": []}]},
    ],
)
def test_unusable_answers_are_embedding_errors(make: Any, endpoint: FakeEndpoint, body: Any) -> None:
    endpoint.script = [Reply(body=body)]
    with pytest.raises(EmbeddingError):
        make().embed(["x"])


def test_changing_dim_is_an_embedding_error(make: Any, endpoint: FakeEndpoint) -> None:
    endpoint.script = [Reply(), Reply(dim=4)]
    embedder = make()
    embedder.embed(["a"])
    with pytest.raises(EmbeddingError, match="dim 4"):
        embedder.embed(["b"])


def test_wrong_api_key_is_not_retried_and_not_leaked(make: Any, endpoint: FakeEndpoint) -> None:
    wrong = "sk-wrong-key-abcdef987654"
    embedder = make(api_key=wrong)
    with pytest.raises(EmbeddingError, match="Incorrect API key") as info:
        embedder.embed(["x"])
    assert "401" in str(info.value)
    assert wrong not in str(info.value)
    assert wrong not in repr(embedder)
    assert len(endpoint.requests) == 1


def test_4xx_message_from_the_endpoint(make: Any, endpoint: FakeEndpoint) -> None:
    endpoint.script = [Reply(400, {"error": {"message": "input too long for model"}})]
    with pytest.raises(EmbeddingError, match="input too long for model"):
        make().embed(["x"])


def test_bad_arguments(endpoint: FakeEndpoint) -> None:
    with pytest.raises(InvalidInputError):
        OpenAIEmbedder(base_url=endpoint.url, retries=-1)


# --------------------------------------------------------------------------- wiring


def test_make_embedder_openai_with_and_without_cache(endpoint: FakeEndpoint) -> None:
    base = {"provider": "openai", "base_url": endpoint.url, "api_key": API_KEY, "model": "m"}
    cached = make_embedder(EmbeddingSettings.model_validate(base), clock=SettableClock())
    assert isinstance(cached, CachedEmbedder)
    assert cached.max_entries == 200
    assert isinstance(cached.inner, OpenAIEmbedder)
    cached.embed(["a", "a", "b"])
    cached.embed(["a", "b"])
    assert len(endpoint.requests) == 1
    assert endpoint.requests[0]["json"]["input"] == ["a", "b"]
    assert cached.dim == DIM and cached.profile == "api"
    cached.inner.close()
    plain = make_embedder(EmbeddingSettings.model_validate({**base, "cache_size": 0}))
    assert isinstance(plain, OpenAIEmbedder)
    plain.close()
