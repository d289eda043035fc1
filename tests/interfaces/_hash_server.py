"""Launch reverie's MCP server or REST server on a SQLite file with the deterministic test embedder.

Used by the transport tests (stdio, streamable HTTP, a real uvicorn process) so that they do not
need the local model: ``python _hash_server.py mcp|mcp-http|rest DB [--user U]``.
"""

from __future__ import annotations

import argparse
import json
import os

from reverie import Memory
from reverie.embed.testing import HashEmbedder


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["mcp", "mcp-http", "rest"])
    parser.add_argument("db")
    parser.add_argument("--user")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--tools")
    parser.add_argument("--serve-options", help="JSON of reverie.http.server.ServeOptions fields")
    args = parser.parse_args()
    with Memory(args.db, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}) as mem:
        if args.mode == "rest":
            from reverie.http.server import ServeOptions, serve

            fields = json.loads(args.serve_options) if args.serve_options else {"access_log": False}
            opts = ServeOptions(**{"host": args.host, "port": 0, **fields})
            serve(mem, token=os.environ.get("REVERIE_API_TOKEN") or None, options=opts)
            return
        from reverie.mcp_server import Defaults, build_server, parse_tools, run_http, run_stdio

        server = build_server(mem, Defaults(user_id=args.user), tools=parse_tools(args.tools))
        if args.mode == "mcp":
            run_stdio(server)
        else:
            run_http(server, port=0)


if __name__ == "__main__":
    main()
