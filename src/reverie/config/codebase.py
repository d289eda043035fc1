"""Settings: the codebase layer — what ``Memory.ingest_code`` / ``reverie ingest-code`` read."""

from __future__ import annotations

from pydantic import Field

from reverie.config.core import Section
from reverie.config.sources import LAYERED


class CodebaseSettings(Section):
    """How a source tree becomes codebase-layer memories (the layered-memory design's "compressed code
    knowledge: file trees, function signatures")."""

    SOURCE = LAYERED

    max_file_bytes: int = Field(
        default=1_000_000,
        ge=1,
        description="Source files larger than this many bytes are skipped (reported with the reason); generated "
        "or vendored files of that size rarely hold signatures worth remembering.",
    )
    max_files: int = Field(
        default=20_000,
        ge=1,
        description="At most this many files are read per ingestion; a larger tree is refused with a clear "
        "error (point ingest-code at the part you need, or raise this).",
    )
    exclude_dirs: list[str] = Field(
        default_factory=lambda: ["__pycache__", "node_modules", "venv", "site-packages", "build", "dist", "htmlcov"],
        description="Directory names never entered (besides hidden ones, see skip_hidden).",
    )
    skip_hidden: bool = Field(
        default=True,
        description="Files and directories whose name starts with a dot (.git, .venv, .mypy_cache …) are left out.",
    )
    follow_symlinks: bool = Field(
        default=False,
        description="Follow symbolic links to files and directories inside the tree (a link pointing outside it, "
        "or back up into it — a loop — is skipped with the reason). Off: links are reported as skipped.",
    )
    include_private: bool = Field(
        default=False,
        description="Also remember private names (a leading underscore); by default only the public interface "
        "(classes, functions and methods without one, and __init__ for a class's signature).",
    )
    listing_max_entries: int = Field(
        default=60,
        ge=1,
        description="A directory's memory names at most this many of its files and subdirectories (and says how "
        "many more there are).",
    )
    embed_batch: int = Field(default=128, ge=1, description="Memories embedded per batch while ingesting.")


__all__ = ["CodebaseSettings"]
