"""The local LLM engine: one llama.cpp context, several sequences, warm prompts reused.

Why the low-level API: ``llama_cpp.Llama`` always works on sequence 0 and trims the cache to what it
last saw, so a fixed system prefix cannot stay warm while turns come and go. Here every prompt is
remembered in a slot of the prefix arena (``prefix_arena.py``: 32 sequences, longest common prefix,
LRU) and each turn shares the longest warm prefix into the work sequence (``seq_cp`` in a unified KV
cache shares the cells, nothing is recomputed), then prefills only what is new: for a session's next
turn, its new window line and request.

Sequences: 0 is the work sequence, 1 the scratch a compiled block is loaded into (``kv_splice.py``),
2 a spare for benchmarks, 3… the arena's slots.

A turn holds :attr:`LlamaEngine.lock` (re-entrant, coarse): one context, one decode at a time.
:class:`Cursor` is the only way to feed tokens, so positions and sequences cannot drift apart.

``GenerationBackend`` is the seam for a remote OpenAI-compatible server (llama-server, vLLM): what
``arguments.py`` needs from an engine is a cursor that feeds tokens and returns next-token logits.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from . import kv_state
from .exceptions import NexusError
from .kv_state import KvGeometry
from .prefix_arena import PrefixArena

WORK_SEQ = 0  # the turn being decoded
SCRATCH_SEQ = 1  # where a compiled block lands before its cells are shared into the work sequence
SPARE_SEQ = 2  # for benchmarks' checkpoints
ARENA_FIRST_SEQ = 3  # then the prefix arena's slots


class EngineError(NexusError):
    """The model could not be loaded or a decode failed."""


class EngineStopped(EngineError):
    """The engine was stopped (the gateway is shutting down): the decode in progress was cut short."""


class ContextOverflow(EngineError):
    """A prompt, or a prompt and what is being generated after it, needs positions past the context."""


@dataclass(frozen=True)
class EngineSettings:
    """What the engine needs; ``n_threads=1`` in tests (two OpenMP threads on a busy 2-core box crawl)."""

    model_path: str
    n_ctx: int = 4096
    n_threads: int = 2
    n_batch: int = 512
    arena_slots: int = 32
    flash_attn: bool | None = None  # None: llama.cpp decides; off stores V transposed, on in rows


class GenerationBackend(Protocol):
    """The engine as ``arguments.py`` sees it."""

    lock: threading.RLock

    def tokenize(self, text: str) -> list[int]: ...

    def pieces(self) -> list[bytes]: ...

    def cursor(self, prompt: list[int], *, logits: bool = True) -> Cursor: ...

    def context_size(self) -> int: ...


@functools.cache
def _abort_check(llama_cpp: Any) -> Any:
    """llama.cpp's abort callback as the native core's flag check (``native/rope.c``), or None without
    the native core: a stop then waits for the batch being decoded to finish. Once per process, so the
    callback object outlives every context that holds its pointer."""
    try:
        from . import _kv  # type: ignore[attr-defined]
    except ImportError:
        return None
    return llama_cpp.ggml_abort_callback(_kv.abort_check_address())


@functools.cache
def _silence_llama_logs(llama_cpp: Any) -> Any:
    """llama.cpp logs to stderr by default; keep it quiet (stdout is the stdio transport's anyway).

    Once per process: llama.cpp keeps one global pointer to the callback, so the callback must outlive
    every engine (a second engine's callback, freed with it, crashed the first engine's ``close``)."""

    @llama_cpp.llama_log_callback
    def _ignore(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        return None

    llama_cpp.llama_log_set(_ignore, ctypes.c_void_p(0))
    return _ignore  # keep a reference: llama.cpp holds the pointer


class LlamaEngine:
    """One ``llama_context`` with a warm prefix in sequence 0."""

    def __init__(self, settings: EngineSettings) -> None:
        try:
            import llama_cpp
        except ImportError as exc:  # pragma: no cover - a dependency of the package
            raise EngineError("llama-cpp-python is not installed: pip install llama-cpp-python") from exc
        path = Path(settings.model_path).expanduser()
        if not path.is_file():
            raise EngineError(f"model file not found: {path} (run: nexus-gateway models pull)")
        self._ll = llama_cpp
        self._log_callback = _silence_llama_logs(llama_cpp)
        llama_cpp.llama_backend_init()
        self.settings = settings
        model_params = llama_cpp.llama_model_default_params()
        self._model = llama_cpp.llama_model_load_from_file(str(path).encode(), model_params)
        if not self._model:
            raise EngineError(f"llama.cpp could not load {path}: not a GGUF model it supports")
        self._vocab = llama_cpp.llama_model_get_vocab(self._model)
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = settings.n_ctx
        params.n_batch = settings.n_batch
        params.n_ubatch = settings.n_batch
        params.n_seq_max = ARENA_FIRST_SEQ + settings.arena_slots
        params.n_threads = settings.n_threads
        params.n_threads_batch = settings.n_threads
        params.kv_unified = True  # seq_cp shares cells instead of copying them
        if settings.flash_attn is not None:
            params.flash_attn_type = 1 if settings.flash_attn else 0
        self._kv_types = (int(params.type_k), int(params.type_v))
        self._ctx = llama_cpp.llama_init_from_model(self._model, params)
        if not self._ctx:
            llama_cpp.llama_model_free(self._model)
            raise EngineError(f"llama.cpp could not create a context of {settings.n_ctx} tokens")
        self._memory = llama_cpp.llama_get_memory(self._ctx)
        self._stopping = ctypes.c_ubyte(0)  # read by llama.cpp's threads between graph nodes (``stop``)
        abort_check = _abort_check(llama_cpp)
        if abort_check is not None:
            llama_cpp.llama_set_abort_callback(self._ctx, abort_check, ctypes.addressof(self._stopping))
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self._vocab))
        self._batch = llama_cpp.llama_batch_init(settings.n_batch, 0, 1)
        self.lock = threading.RLock()
        self.arena = PrefixArena(ARENA_FIRST_SEQ, settings.arena_slots, settings.n_ctx, self.share, self.drop)
        self._pieces: list[bytes] | None = None
        self.eos = {t for t in range(self.n_vocab) if llama_cpp.llama_vocab_is_eog(self._vocab, t)}
        self._geometry: KvGeometry | None = None

    # --- vocabulary -------------------------------------------------------------------------------------------
    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text``; chat-template markers such as ``<|im_start|>`` parse as special tokens."""
        data = text.encode()
        size = len(data) + 16
        while True:
            buffer = (self._ll.llama_token * size)()
            count = self._ll.llama_tokenize(self._vocab, data, len(data), buffer, size, False, True)
            if count >= 0:
                return list(buffer[:count])
            size = -count

    def pieces(self) -> list[bytes]:
        """The byte string of every token (control tokens are empty), built once."""
        if self._pieces is None:
            buffer = ctypes.create_string_buffer(256)
            to_piece, vocab, read = self._ll.llama_token_to_piece, self._vocab, ctypes.string_at
            self._pieces = [
                read(buffer, max(to_piece(vocab, token, buffer, 256, 0, False), 0)) for token in range(self.n_vocab)
            ]
        return self._pieces

    def context_size(self) -> int:
        """Positions one sequence can hold: its prompt and what is generated after it."""
        return self.settings.n_ctx

    def cursor(self, prompt: list[int], *, logits: bool = True) -> Cursor:
        """A fresh work sequence holding ``prompt``.

        The longest prefix of ``prompt`` warm in the arena is shared, not recomputed; the rest is prefilled
        and the prompt is remembered for the next turn. With ``logits`` at least the last token is decoded,
        so the cursor holds the next-token logits; without, a fully warm prompt is shared whole, so its
        cells are exactly the ones a block compiled after it saw (``kv_splice.py``)."""
        with self.lock:
            common = self.arena.attach(prompt, WORK_SEQ)
            if logits:
                common = min(common, len(prompt) - 1)
                self.drop(WORK_SEQ, common)
            cursor = Cursor(self, WORK_SEQ, common)
            if common < len(prompt):
                cursor.feed(prompt[common:])
            self.arena.remember(prompt, WORK_SEQ)
            return cursor

    def _decode(self, tokens: list[int], seq: int, position: int, want_logits: bool = True) -> np.ndarray | None:
        return self.decode_at(tokens, seq, range(position, position + len(tokens)), want_logits)

    def decode_at(
        self, tokens: list[int], seq: int, positions: Sequence[int], want_logits: bool = True, every: bool = False
    ) -> np.ndarray | None:
        """Decode ``tokens`` at ``positions`` (ascending; gaps allowed: the causal mask is by position) and
        return the last token's next-token logits; with ``every``, one row of logits per token (to check
        a guessed continuation in one batch, ``decoding.py``)."""
        if positions and positions[-1] >= self.settings.n_ctx:
            # before any decode: a prompt that cannot fit would otherwise be half computed first (a minute
            # for a pasted document) and evict every warm prompt from the arena on its way
            raise ContextOverflow(f"the prompt does not fit the context of {self.settings.n_ctx} tokens")
        batch = self._batch
        step = self.settings.n_batch
        rows: list[np.ndarray] = []
        if self._stopping.value:
            raise EngineStopped("the model is stopping")
        for start in range(0, len(tokens), step):
            chunk = tokens[start : start + step]
            batch.n_tokens = len(chunk)
            for i, token in enumerate(chunk):
                batch.token[i] = token
                batch.pos[i] = positions[start + i]
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = seq
                batch.logits[i] = every
            last = start + step >= len(tokens)
            if last and want_logits:
                batch.logits[len(chunk) - 1] = True
            code = self._ll.llama_decode(self._ctx, batch)
            while code == 1 and self.arena.evict_lru():  # no free cells: forget the least recently used prompt
                code = self._ll.llama_decode(self._ctx, batch)
            if code == 2 and self._stopping.value:
                raise EngineStopped("the model is stopping")
            if code != 0:
                raise EngineError(f"llama_decode failed with code {code}")
            if every:
                pointer = self._ll.llama_get_logits(self._ctx)
                rows.append(np.ctypeslib.as_array(pointer, shape=(len(chunk), self.n_vocab)).copy())
        if every:
            return np.concatenate(rows)
        if not want_logits:
            return None
        pointer = self._ll.llama_get_logits_ith(self._ctx, -1)
        return np.ctypeslib.as_array(pointer, shape=(self.n_vocab,)).copy()

    # --- KV state, for compiled blocks (kv_splice.py) ------------------------------------------------------
    def metadata(self, key: str) -> str | None:
        buffer = ctypes.create_string_buffer(4096)
        n = self._ll.llama_model_meta_val_str(self._model, key.encode(), buffer, 4096)
        return buffer.value.decode(errors="replace") if n >= 0 else None

    def geometry(self) -> KvGeometry:
        """The model's KV shapes and RoPE parameters and this context's cache layout, probed once."""
        if self._geometry is not None:
            return self._geometry
        ll, model = self._ll, self._model
        digest = hashlib.blake2b(digest_size=16)
        buffer = ctypes.create_string_buffer(4096)
        for index in range(ll.llama_model_meta_count(model)):
            ll.llama_model_meta_key_by_index(model, index, buffer, 4096)
            key = buffer.value
            ll.llama_model_meta_val_str_by_index(model, index, buffer, 4096)
            digest.update(key + b"=" + buffer.value + b"\n")
        ll.llama_model_desc(model, buffer, 4096)
        digest.update(buffer.value)
        digest.update(f"{ll.llama_model_n_params(model)}:{ll.llama_model_size(model)}".encode())
        arch = self.metadata("general.architecture") or ""
        n_head = int(ll.llama_model_n_head(model))
        n_head_kv = int(ll.llama_model_n_head_kv(model))
        head_dim = int(self.metadata(f"{arch}.attention.key_length") or ll.llama_model_n_embd(model) // n_head)
        yarn = (self.metadata(f"{arch}.rope.scaling.type") or "") == "yarn"
        with self.lock:
            self._decode([self.tokenize(" ")[0]], SCRATCH_SEQ, 0, want_logits=False)
            probe = kv_state.parse(self.state_get(SCRATCH_SEQ))
            self.drop(SCRATCH_SEQ)
        assert probe is not None
        self._geometry = KvGeometry(
            fingerprint=digest.digest(),
            n_layer=int(ll.llama_model_n_layer(model)),
            n_head_kv=n_head_kv,
            head_dim=head_dim,
            n_rot=int(self.metadata(f"{arch}.rope.dimension_count") or head_dim),
            rope_type=int(ll.llama_model_rope_type(model)),
            freq_base=float(self.metadata(f"{arch}.rope.freq_base") or 10000.0),
            freq_scale=float(ll.llama_model_rope_freq_scale_train(model)),
            yarn_ext_factor=1.0 if yarn else 0.0,
            yarn_attn_factor=float(self.metadata(f"{arch}.rope.scaling.attn_factor") or 1.0),
            yarn_beta_fast=32.0,
            yarn_beta_slow=1.0,
            yarn_orig_ctx=int(self.metadata(f"{arch}.rope.scaling.original_context_length") or 0),
            k_type=self._kv_types[0],
            v_type=self._kv_types[1],
            v_trans=probe.v_trans,
        )
        return self._geometry

    def state_get(self, seq: int) -> bytes:
        """The sequence's cells as llama.cpp's state blob (see kv_state.py)."""
        size = self._ll.llama_state_seq_get_size(self._ctx, seq)
        buffer = (ctypes.c_uint8 * size)()
        written = self._ll.llama_state_seq_get_data(self._ctx, buffer, size, seq)
        return bytes(memoryview(buffer)[:written])

    def state_set(self, seq: int, blob: bytes) -> None:
        """Replace sequence ``seq`` with the cells of ``blob``."""
        buffer = (ctypes.c_uint8 * len(blob)).from_buffer_copy(blob)
        if self._ll.llama_state_seq_set_data(self._ctx, buffer, len(blob), seq) != len(blob):
            raise EngineError("llama.cpp refused the KV state blob")

    def share(self, source: int, target: int, start: int, end: int) -> None:
        """Make cells [start, end) of ``source`` part of ``target`` too (no copy in a unified cache)."""
        self._ll.llama_memory_seq_cp(self._memory, source, target, start, end)

    def drop(self, seq: int, start: int = 0, end: int = -1) -> None:
        self._ll.llama_memory_seq_rm(self._memory, seq, start, end)

    def stop(self) -> None:
        """Cut the decode in progress short and refuse new ones (``EngineStopped``), from any thread: a
        stopping gateway need not wait out seconds of prefill (a fresh start's system prefix, a tool
        block being compiled) that nobody will use."""
        self._stopping.value = 1

    def close(self) -> None:
        with self.lock:
            if self._ctx:
                self._ll.llama_batch_free(self._batch)
                self._ll.llama_free(self._ctx)
                self._ll.llama_model_free(self._model)
                self._ctx = None
                self._model = None


class Cursor:
    """The end of a work sequence: feed tokens, read the next-token logits, step back."""

    def __init__(self, engine: LlamaEngine, seq: int, position: int) -> None:
        self.engine = engine
        self.seq = seq
        self.position = position
        self.logits: np.ndarray | None = None
        self.computed = 0  # tokens put through the model by this cursor (the prompt's cost, not the arena's)
        self.decodes = 0  # batches put through the model (each costs a fixed part on top of its tokens)

    def feed(self, tokens: list[int]) -> np.ndarray:
        if not tokens:
            if self.logits is None:
                raise EngineError("nothing fed yet")
            return self.logits
        logits = self.engine._decode(tokens, self.seq, self.position)
        assert logits is not None
        self._advance(len(tokens), logits)
        return logits

    def feed_every(self, tokens: list[int]) -> np.ndarray:
        """Feed ``tokens`` in one batch; row i of the result is the next-token logits after ``tokens[i]``.
        The cursor then stands after the last token: :meth:`rewind` takes back a guess that was wrong."""
        rows = self.engine.decode_at(tokens, self.seq, range(self.position, self.position + len(tokens)), every=True)
        assert rows is not None
        self._advance(len(tokens), rows[-1])
        return rows

    def _advance(self, count: int, logits: np.ndarray) -> None:
        """``count`` tokens went through the model in one batch; ``logits`` follow the last of them."""
        self.position += count
        self.computed += count
        self.decodes += 1
        self.logits = logits

    def rewind(self, count: int, logits: np.ndarray) -> None:
        """Forget the last ``count`` tokens; ``logits`` are the ones that preceded them."""
        self.position -= count
        self.engine.drop(self.seq, self.position)
        self.logits = logits
