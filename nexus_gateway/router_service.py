"""Keeps a :class:`Router` in step with the live registry.

Models load once at start (a missing model package is a warning, not a crash: search falls back to
BM25). When an upstream's tools change, only tools whose schema key has no cached vector are
embedded, in a worker thread, and the router is rebuilt from cached vectors (cheap). Every ONNX call
runs in one worker thread at a time, so the event loop never stalls on a model.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from .cache import RegistryCache
from .config import RoutingSettings
from .embedder import CrossEncoder, Embedder, EmbedderSpec
from .exceptions import NexusError
from .registry import Registry, ToolEntry
from .routing import Calibration, RouteDoc, Router, RouteResult, tool_document
from .slb import backend as slb_backend
from .vectors import VectorStore

logger = logging.getLogger(__name__)


class RouterService:
    def __init__(
        self,
        registry: Registry,
        cache: RegistryCache,
        settings: RoutingSettings,
        preset: Callable[[ToolEntry], Collection[str]] = lambda entry: (),
    ) -> None:
        """``preset``: the parameters of a tool the gateway fills itself (``nexus.defaults``), which routing
        reads no slot of the request into (``RouteDoc.of_tool``)."""
        self.registry = registry
        self.cache = cache
        self.settings = settings
        self.preset = preset
        self.embedder: Embedder | None = None
        self.cross_encoder: CrossEncoder | None = None
        # read at once, not with the models: the gateway decides from it whether the judge warms up
        self.calibration = self._calibration()
        self.router: Router | None = None
        self.store: VectorStore | None = None
        self.error: str | None = None
        self._built_generation = -1
        self._limiter = anyio.CapacityLimiter(1)
        self._changed = anyio.Event()

    @property
    def ready(self) -> bool:
        return self.router is not None and self._built_generation == self.registry.generation

    def embedder_spec(self) -> EmbedderSpec:
        """The configured embedder (``nexus.routing``)."""
        spec = EmbedderSpec(
            folder=self.settings.embedder,
            pooling=self.settings.pooling,
            document_prefix=self.settings.document_prefix,
            threads=self.settings.threads,
        )
        if self.settings.query_prefix is not None:
            spec = EmbedderSpec(**{**spec.__dict__, "query_prefix": self.settings.query_prefix})
        return spec

    def load_models(self) -> None:
        """Load and verify the models (blocking: call from a worker thread)."""
        if not self.settings.enabled:
            self.error = "routing disabled in config"
            return
        try:
            self.embedder = Embedder(self.embedder_spec())
            self.store = VectorStore(self.cache, self.embedder.model_tag)
            if self.settings.rerank:
                self.cross_encoder = CrossEncoder(workers=self.settings.threads)  # one thread per pair
        except NexusError as exc:
            self.error = str(exc)
            logger.warning("routing: %s; search falls back to BM25", exc)

    def _calibration(self) -> Calibration:
        wanted = self.settings.calibration
        if wanted:
            document = self.cache.read_json(Path(wanted))
            if isinstance(document, dict):
                return Calibration.from_json(document)
            logger.warning("routing: calibration %s unreadable; using the defaults", wanted)
        return Calibration()

    def notify_changed(self) -> None:
        self._changed.set()

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Load models, then rebuild the router whenever the registry changes."""
        await anyio.to_thread.run_sync(self.load_models, limiter=self._limiter)
        task_status.started()
        if self.embedder is None:
            return
        while True:
            if self.registry.generation != self._built_generation:
                await self.rebuild()
            self._changed = anyio.Event()
            if self.registry.generation == self._built_generation:
                await self._changed.wait()

    async def rebuild(self) -> None:
        generation = self.registry.generation
        entries = self.registry.entries()
        started = time.perf_counter()
        router = await anyio.to_thread.run_sync(self._build, entries, limiter=self._limiter)
        if router is not None:
            self.router = router
            self._built_generation = generation
            logger.info("routing: %d tools ready (%.1f s)", len(entries), time.perf_counter() - started)

    def _build(self, entries: list[ToolEntry]) -> Router | None:
        assert self.embedder is not None and self.store is not None
        texts = [tool_document(e.name, e.description) for e in entries]
        keys = [e.key for e in entries]
        label = "embedding new tools"
        docs = [
            RouteDoc.of_tool(
                e.id,
                e.name,
                e.description,
                e.tokens,
                e.input_schema,
                e.raw.get("annotations"),
                e.server,
                self.preset(e),
            )
            for e in entries
        ]
        current = self.router
        if current is not None:
            # Incremental: rows whose id and document are unchanged stay as they are.
            known = {d.id: d for d in current.docs}
            wanted = {d.id for d in docs}
            changed = [i for i, d in enumerate(docs) if known.get(d.id) != d]
            removed = [tool_id for tool_id in known if tool_id not in wanted]
            vectors = self.store.embed(
                [keys[i] for i in changed], [texts[i] for i in changed], self.embedder, label=label
            )
            current.apply([docs[i] for i in changed], vectors, removed)
            return current
        vectors = self.store.embed(keys, texts, self.embedder, label=label)
        return Router(self.embedder, docs, vectors, self.calibration, self.cross_encoder)

    async def wait_ready(self, timeout: float) -> bool:
        with anyio.move_on_after(timeout):
            while not self.ready and self.embedder is not None:
                self.notify_changed()
                await anyio.sleep(0.05)
        return self.ready

    async def route(
        self,
        intent: str,
        limit: int = 5,
        given: frozenset[str] = frozenset(),
        carried: frozenset[str] = frozenset(),
    ) -> RouteResult | None:
        """Route on the current router (None when models are unavailable); ``given`` and ``carried`` as in
        ``Router.route``."""
        router = self.router
        if router is None:
            return None

        def run() -> RouteResult:
            return router.route(intent, limit=limit, given=given, carried=carried)

        return await anyio.to_thread.run_sync(run, limiter=self._limiter)

    def describe(self) -> dict[str, Any]:
        return {
            "ready": self.ready,
            "error": self.error,
            "tools": len(self.router.slb) if self.router else 0,
            "calibration": self.calibration.to_json(),
            "backend": slb_backend(),
        }
