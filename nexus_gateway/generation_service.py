"""Keeps the local LLM for ``call(intent)``: loads it off the event loop, runs one turn at a time.

The model is optional: with no GGUF (not pulled, or ``nexus.model: null``) ``call`` without arguments
answers with the chosen tool and its signature and asks for the arguments, as before. A model file is
checked (size and sha256 when it is a known default) before llama.cpp ever opens it.
"""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable, Collection
from pathlib import Path

import anyio

from .arguments import ArgumentGenerator, Generation, tool_blocks
from .block_store import SchemaBlocks
from .cache import RegistryCache
from .engine import ContextOverflow, EngineError, EngineSettings, EngineStopped, LlamaEngine
from .exceptions import NexusError
from .ir import choice_ir
from .model_store import DEFAULT_MODEL, GGUF_MODELS, lookup, model_path, verify
from .progress import ProgressPrinter
from .registry import ToolEntry
from .window import HeldCall, SessionWindow

logger = logging.getLogger(__name__)
MAX_SESSIONS = 256


def resolve_model(setting: str | None) -> Path | None:
    """``nexus.model``: a GGUF path, a known model name, or unset for the pulled default."""
    if setting is None:
        path = model_path(lookup(DEFAULT_MODEL))
        return path if path.is_file() else None
    if setting in GGUF_MODELS:
        return model_path(lookup(setting))
    return Path(setting).expanduser()


class GenerationService:
    def __init__(
        self,
        model: str | None,
        threads: int,
        enabled: bool = True,
        schema_mode: str = "ir",
        cache: RegistryCache | None = None,
        judge: bool = False,
        known_words: Callable[[], frozenset[str]] | None = None,
    ) -> None:
        """``known_words``: the router's embedder's whole words (``embedder.whole_words``), read when the
        model loads, by which the generator tells a misspelt verb from a word as the router does."""
        self.model = model
        self.known_words = known_words
        self.judge = judge  # the chooser's prompt is warmed only for a judge (half a second of prefill here)
        self.threads = threads
        self.enabled = enabled
        self.schema_mode = schema_mode
        self.cache = cache
        self.generator: ArgumentGenerator | None = None
        self._engine: LlamaEngine | None = None  # from its creation on, for ``stop`` to cut its work short
        self._stopping = False
        self._tools_changed: anyio.Event | None = None  # made inside the event loop, by compile_blocks
        self.error: str | None = None
        self._limiter = anyio.CapacityLimiter(1)
        self._settled: anyio.Event | None = None  # made inside the event loop, by start or wait_settled
        self._windows: OrderedDict[str, SessionWindow] = OrderedDict()

    @property
    def ready(self) -> bool:
        return self.generator is not None

    def load(self) -> None:
        """Verify and load the model, prefill the fixed prompt prefix (blocking: call from a thread)."""
        if not self.enabled:
            self.error = "argument generation disabled in config"
            return
        path = resolve_model(self.model)
        if path is None:
            self.error = "no local model (run: nexus-gateway models pull)"
            logger.info("argument generation off: %s", self.error)
            return
        try:
            known = next((m for m in GGUF_MODELS.values() if model_path(m).name == path.name), None)
            if known is not None:
                verify(path, known)
            engine = self._engine = LlamaEngine(EngineSettings(str(path), n_threads=self.threads))
            if self._stopping:  # stopped while the model was loading
                engine.stop()
            generator = ArgumentGenerator(
                engine, focused=self.schema_mode == "ir-focused", known_words=self._known_words()
            )
            blocks = None
            if self.cache is not None:
                reason = engine.geometry().why_not_spliceable()
                if reason:  # generation still works, computing the prefix and the tool's form
                    logger.info("compiled blocks off (the tool's form is prefilled): %s", reason)
                else:
                    blocks = SchemaBlocks(engine, generator.prefix_tokens, self.cache)
                    report = blocks.warm_prefix()
                    logger.info("system prefix: %s (%d tokens, %.0f ms)", report.path, len(blocks.prefix), report.ms)
            generator.warm(chooser=self.judge)  # what the prefix block does not hold (the chooser's prompt)
            if self.schema_mode != "ir-focused":  # the focused IR differs per request: no blocks
                generator.blocks = blocks
        except EngineStopped:
            self.error = "stopped"
            logger.info("argument generation: stopped while warming up")
            return
        except (NexusError, EngineError, OSError) as exc:
            self.error = str(exc)
            logger.warning("argument generation off: %s", exc)
            return
        self.generator = generator
        logger.info("argument generation on: %s", path.name)

    def _known_words(self) -> frozenset[str]:
        try:
            return self.known_words() if self.known_words is not None else frozenset()
        except (NexusError, OSError) as exc:  # the router reports its embedder; requests are read as written
            logger.info("requests read as written (no embedder vocabulary: %s)", exc)
            return frozenset()

    async def start(self) -> None:
        try:
            await anyio.to_thread.run_sync(self.load, limiter=self._limiter)
        finally:
            self._settled_event().set()

    def stop(self) -> None:
        """The gateway is stopping: cut short the model's warm-up or a block's compilation now running
        (seconds of prefill on a first start) instead of waiting for it; later decodes are refused."""
        self._stopping = True
        if self._engine is not None:
            self._engine.stop()

    async def wait_settled(self) -> None:
        """Until the model has loaded or failed to (``error`` says why): for one-shot commands, which,
        unlike a served host, cannot ask again later."""
        await self._settled_event().wait()

    def _settled_event(self) -> anyio.Event:
        if self._settled is None:
            self._settled = anyio.Event()
        return self._settled

    def notify_tools_changed(self) -> None:
        if self._tools_changed is not None:
            self._tools_changed.set()

    async def compile_blocks(self, entries: Callable[[], list[ToolEntry]]) -> None:
        """Background task: compile the blocks of every tool that has none yet (its IR; in full and auto
        mode its full schema too), again whenever an upstream's tools change. One block per worker-thread
        hop, each under the engine lock, so calls interleave and a shutdown (a one-shot ``ask`` that is
        done) waits for one block at most, not for the whole registry."""
        while True:
            self._tools_changed = anyio.Event()
            todo = await anyio.to_thread.run_sync(self._blocks_to_compile, entries())
            progress, done = ProgressPrinter("compiling tool blocks"), 0
            try:
                for done, (key, tokens) in enumerate(todo, 1):
                    await anyio.to_thread.run_sync(self._compile_one, key, tokens, limiter=self._limiter)
                    progress(done, len(todo))
            finally:
                if 0 < done < len(todo):  # a one-shot command is done before the registry is
                    progress.stopped(done, len(todo), "the rest compile while the gateway runs")
            if todo:
                logger.info("schema blocks: %d compiled", len(todo))
            await self._tools_changed.wait()

    def _blocks_to_compile(self, entries: list[ToolEntry]) -> list[tuple[str, list[int]]]:
        generator = self.generator
        if generator is None or generator.blocks is None:
            return []
        blocks, tokenize = generator.blocks, generator.engine.tokenize
        full_schema = self.schema_mode in ("full", "auto")
        return [
            (key, tokenize(text))
            for e in entries
            for key, text in tool_blocks(e.key, e.name, e.input_schema, e.description, full_schema=full_schema)
            if not blocks.has(key)
        ]

    def _compile_one(self, key: str, tokens: list[int]) -> None:
        blocks = self.generator.blocks if self.generator is not None else None
        if blocks is not None and not blocks.has(key):
            # EngineStopped: the gateway is stopping; the block compiles on the next start
            with contextlib.suppress(EngineStopped):
                blocks.compile(key, tokens)

    def window(self, session: str) -> SessionWindow:
        """The window of one host session (the least recently used is forgotten beyond ``MAX_SESSIONS``)."""
        window = self._windows.pop(session, None) or SessionWindow()
        self._windows[session] = window
        while len(self._windows) > MAX_SESSIONS:
            self._windows.popitem(last=False)
        return window

    def release_held(self, session: str, tool_id: str) -> tuple[SessionWindow, HeldCall] | None:
        """The call that ``call`` held back in this session, if the host has now run that very tool, with
        the window it belongs to. Looked up without creating a window: every ``call_tool`` asks, and a
        session that never used ``call`` must not push other sessions' windows out."""
        window = self._windows.get(session)
        held = window.release(tool_id) if window is not None else None
        return (window, held) if window is not None and held is not None else None

    async def choose(self, entries: list[ToolEntry], intent: str) -> tuple[ToolEntry, float]:
        """The model's pick among close candidates (constrained to their names) and its time in ms."""
        generator = self.generator
        assert generator is not None
        candidates = [(e.id, choice_ir(e.name, e.input_schema, e.description)) for e in entries]  # ids: unique
        choice = await anyio.to_thread.run_sync(
            lambda: generator.choose_tool(intent, candidates), limiter=self._limiter
        )
        return entries[choice.index], choice.ms

    async def generate(
        self, entry: ToolEntry, intent: str, window: SessionWindow, given: Collection[str] = ()
    ) -> Generation:
        """``given``: keys the gateway fills in when the call leaves them out (``nexus.defaults``)."""
        generator = self.generator
        assert generator is not None
        mode = self.schema_mode

        def run() -> Generation:
            args = (entry.name, entry.input_schema, entry.description, intent, window)
            if mode == "full":
                return generator.generate(*args, full_schema=True, block_key=entry.key, given=given)
            generation = generator.generate(*args, block_key=entry.key, given=given)
            if mode == "auto" and generation.missing:
                # the signature left required arguments unresolved: let the model read the whole schema
                try:
                    full = generator.generate(*args, full_schema=True, block_key=entry.key, given=given)
                except ContextOverflow:  # the whole schema does not fit beside this request
                    return generation
                full.fallback_from = generation.missing
                if len(full.missing) < len(generation.missing):
                    return full
                generation.fallback_from = generation.missing
            return generation

        return await anyio.to_thread.run_sync(run, limiter=self._limiter)
