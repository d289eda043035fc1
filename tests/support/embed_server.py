"""A small OpenAI-compatible embeddings server on 127.0.0.1 (real HTTP) answering with the deterministic
test embedder's vectors, so that the ``reverie`` command runs in process without loading the local model:
point it there with :func:`cli_environment` (``embedding.provider = openai``)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from reverie.embed.testing import HashEmbedder

DIM = 64


class EmbeddingServer:
    """Answers ``POST /v1/embeddings`` with :class:`HashEmbedder` vectors."""

    def __init__(self, dim: int = DIM) -> None:
        embedder = HashEmbedder(dim)
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests += 1
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = embedder.embed(texts)
                payload = json.dumps(
                    {
                        "object": "list",
                        "model": body.get("model", ""),
                        "data": [
                            {"object": "embedding", "index": i, "embedding": [float(x) for x in vec]}
                            for i, vec in enumerate(vectors)
                        ],
                    }
                ).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def cli_environment(server: EmbeddingServer, *, empty_dir: str | None = None, **extra: Any) -> dict[str, str]:
    """Environment variables making reverie embed through ``server`` (and the given ``extra`` ones).

    With ``empty_dir`` (an empty directory) the HTTP client's CA store is that directory: the server speaks
    plain HTTP on loopback, and each new client would otherwise spend 80-180 ms loading the system's CA
    bundle — once per command, hundreds of times in the CLI corpus."""
    certs = {"SSL_CERT_FILE": "", "SSL_CERT_DIR": empty_dir} if empty_dir is not None else {}
    return {
        "REVERIE_EMBEDDING__PROVIDER": "openai",
        "REVERIE_EMBEDDING__BASE_URL": server.url,
        "REVERIE_EMBEDDING__MODEL": "hash-test",
        "REVERIE_EMBEDDING__DIMENSIONS": str(DIM),
        **certs,
        **{k: str(v) for k, v in extra.items()},
    }


__all__ = ["DIM", "EmbeddingServer", "cli_environment"]
