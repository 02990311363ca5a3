"""The shards' results files ``skillab merge`` joins (``scoring.merge``), read and checked to be shards."""

from __future__ import annotations

from pathlib import Path

from ..scoring.merge import MergeError, ShardDocument
from .results import load_documents


def load_shards(paths: list[Path], *, allow_none: bool = False) -> list[ShardDocument]:
    """Every suite document in ``paths``; a file that cannot be read is an error naming it.
    ``allow_none``: the files may hold no document (each shard failed every suite)."""
    shards = []
    for path in paths:
        try:
            documents = load_documents(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise MergeError(f"{path}: cannot be read as a results document ({exc})") from None
        for document in documents:
            if not isinstance(document.get("shard"), dict):
                raise MergeError(f"{path}: not a shard's document (no shard marker); merge joins "
                                 "the documents of `skillab run --shard I/N`")
            shards.append(ShardDocument(str(path), document))
    if not shards and not allow_none:
        raise MergeError("no results documents to merge")
    return shards
