"""The default embedder beside other packages: it needs no protobuf (so an environment pinned to protobuf < 7,
as mem0ai, qdrant-client and many Google and gRPC libraries are, does not break it) and onnxruntime leaves no
telemetry behind (no device id, no event database, no upload)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reverie.embed.minilm import default_graph_cache

pytestmark = pytest.mark.model

#: a child process in which importing protobuf (or the sentencepiece library, which needs it) fails
_BUILD_WITHOUT_PROTOBUF = textwrap.dedent(
    """
    import importlib.abc, sys

    class Blocked(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "google.protobuf" or name.startswith(("google.protobuf.", "sentencepiece")):
                raise ImportError(f"{name} is blocked in this test")
            return None

    sys.meta_path.insert(0, Blocked())
    from reverie.embed import E5Embedder

    vectors = E5Embedder(graph_cache=sys.argv[1]).embed(["Maya is allergic to penicillin", "Kedim Pixel"])
    assert vectors.shape == (2, 384), vectors.shape
    print("imported:", sorted(m for m in sys.modules if m.startswith(("google.protobuf", "sentencepiece"))))
    """
)


def _run(code: str, tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**base, "XDG_CACHE_HOME": str(tmp_path / "cache"), **(env or {})},
        check=False,
    )


def test_the_default_embedder_builds_and_embeds_without_protobuf(tmp_path: Path) -> None:
    res = _run(_BUILD_WITHOUT_PROTOBUF, tmp_path, str(default_graph_cache()))
    assert res.returncode == 0, res.stderr
    assert "imported: []" in res.stdout


def test_onnxruntime_leaves_no_telemetry_behind(tmp_path: Path) -> None:
    """Without reverie's switch, importing onnxruntime writes a device id and an event database under the
    user's cache directory (onnxruntime 1.32); through reverie, nothing."""
    res = _run(
        "import sys; from reverie.embed import E5Embedder; E5Embedder(graph_cache=sys.argv[1]).embed(['x'])",
        tmp_path,
        str(default_graph_cache()),
    )
    assert res.returncode == 0, res.stderr
    left = [p for p in (tmp_path / "cache").rglob("*") if "Microsoft" in p.parts]
    assert not left, left


def test_protobuf_older_than_7_beside_reverie(tmp_path: Path) -> None:
    """An environment with protobuf < 7 on the path first (CI installs one into .ci/protobuf6, as
    ``pip install mem0ai qdrant-client`` would pin it): the default embedder builds and embeds."""
    target = Path(__file__).resolve().parents[2] / ".ci" / "protobuf6"
    if not (target / "google" / "protobuf").is_dir():
        pytest.skip(
            "no protobuf < 7 in .ci/protobuf6 (.ci/run installs it: pip install --target .ci/protobuf6 'protobuf<7')"
        )
    code = (
        "import sys; sys.path.insert(0, sys.argv[2]); import google.protobuf as pb; "
        "assert int(pb.__version__.split('.')[0]) < 7, pb.__version__; "
        "from reverie.embed import E5Embedder; "
        "print(E5Embedder(graph_cache=sys.argv[1]).embed(['x']).shape, pb.__version__)"
    )
    res = _run(code, tmp_path, str(default_graph_cache()), str(target))
    assert res.returncode == 0, res.stderr
    assert "(1, 384)" in res.stdout
