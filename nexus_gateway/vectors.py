"""Tool embeddings cached in the registry cache, under each tool's schema key.

``tools/<key>.<model tag>.vec`` holds one float32 vector (checksummed like every cache file), so an
unchanged tool is never embedded twice, across restarts and across registries. The model tag names
the embedder, its pooling, its document prefix and the document-text recipe, so a change to any of
them re-embeds instead of mixing incompatible vectors.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from .cache import CacheCorrupt, RegistryCache, seal, unseal, write_atomic
from .progress import ProgressPrinter


class DocumentEmbedder(Protocol):
    dimension: int

    def embed_document(self, text: str) -> np.ndarray: ...


class VectorStore:
    def __init__(self, cache: RegistryCache, model_tag: str) -> None:
        self.cache = cache
        self.model_tag = model_tag

    def path(self, key: str) -> Path:
        return self.cache.root / "tools" / f"{key}.{self.model_tag}.vec"

    def load(self, key: str, dimension: int) -> np.ndarray | None:
        path = self.path(key)
        try:
            payload = unseal(path.read_bytes(), str(path))
        except FileNotFoundError:
            return None
        except (CacheCorrupt, OSError):
            path.unlink(missing_ok=True)
            return None
        vector = np.frombuffer(payload, dtype=np.float32)
        return vector.copy() if vector.shape == (dimension,) else None

    def store(self, key: str, vector: np.ndarray) -> None:
        with contextlib.suppress(OSError):  # an unwritable cache only costs a re-embed next time
            write_atomic(self.path(key), seal(np.asarray(vector, dtype=np.float32).tobytes()))

    def embed(
        self,
        keys: Sequence[str],
        texts: Sequence[str],
        embedder: DocumentEmbedder,
        progress: Callable[[int, int], None] | None = None,
        label: str | None = None,
    ) -> np.ndarray:
        """Vectors for every (key, text): cached where present, embedded (and stored) otherwise.

        ``label`` shows a progress bar for the texts that do need embedding (none when all are cached).
        """
        out = np.zeros((len(keys), embedder.dimension), dtype=np.float32)
        missing = []
        for index, key in enumerate(keys):
            cached = self.load(key, embedder.dimension)
            if cached is None:
                missing.append(index)
            else:
                out[index] = cached
        if label and missing and progress is None:
            progress = ProgressPrinter(f"{label} ({len(missing)})")
        for done, index in enumerate(missing, 1):
            out[index] = embedder.embed_document(texts[index])
            self.store(keys[index], out[index])
            if progress:
                progress(done, len(missing))
        return out
