"""Does onnxruntime's graph optimisation level or thread spinning change the query embedding's cost?
Times bge-small on the GitHub dev queries with each setting, interleaved, one thread, and checks that
the vectors agree (docs/routing.md, pipeline step 1).

    python bench/experiments/embed_graph_levels.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from nexus_gateway.embedder import Embedder
from nexus_gateway.models import BGE_SMALL, packaged_model_dir

S = Path(__file__).resolve().parents[3] / "shared" / "data"
LEVELS = ("ORT_ENABLE_BASIC", "ORT_ENABLE_EXTENDED", "ORT_ENABLE_ALL")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    queries = [json.loads(line)["query"] for line in (S / "queries/github-dev.jsonl").read_text().splitlines()][:100]
    embedder = Embedder()
    path = packaged_model_dir(BGE_SMALL) / "model.onnx"
    sessions: dict[str, Any] = {}
    for level in LEVELS:
        for spin in ("1", "0"):
            options = ort.SessionOptions()
            options.intra_op_num_threads = options.inter_op_num_threads = 1
            options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
            options.add_session_config_entry("session.intra_op.allow_spinning", spin)
            sessions[f"{level} spin={spin}"] = ort.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
    times: dict[str, list[float]] = {name: [] for name in sessions}
    vectors: dict[str, list[np.ndarray]] = {name: [] for name in sessions}
    for round_ in range(args.rounds):
        for query in queries:
            ids = np.asarray([embedder.tokenizer.encode(embedder.spec.query_prefix + query).ids], dtype=np.int64)  # type: ignore[attr-defined]
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
            for name, session in sessions.items():
                started = time.perf_counter()
                cls = session.run(None, feed)[0][0][0]
                times[name].append((time.perf_counter() - started) * 1000)
                if round_ == 0:
                    vectors[name].append(cls)
    reference = np.array(vectors["ORT_ENABLE_ALL spin=1"])
    for name in sessions:
        difference = float(np.abs(np.array(vectors[name]) - reference).max())
        print(f"{name:<26} p50 {statistics.median(times[name]):6.2f} ms  max |Δ| vs ALL {difference:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
