"""SLB scan microbenchmark and end-to-end route latency.

Scan time called from Python, top-10 of N random 384-d tool vectors, for the C kernel
(``nexus_gateway._slb.topk``, the kernel the CPU dispatch picked; and the same scan without the prefetches
it makes in a matrix of 16 MB or more, timed alternately with it), numpy INT8 (exact int32 dot
products, the fallback) and numpy float32 matmul + argpartition (the plain baseline), side by side.
Then the router end to end (query embedding + scan + fusion + gate) at N = 250 and 1,317 over the
GitHub + pool registries (needs ``../shared``; skipped with a note when absent).

    python bench/slb_scan.py [--repeats 2000] [--json bench/results/slb_scan.json]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from stats import bootstrap_median_ci  # noqa: E402

from nexus_gateway import slb  # noqa: E402
from nexus_gateway.slb import scan_numpy  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"


def timed(function: Any, repeats: int) -> np.ndarray:
    for _ in range(min(repeats, 50)):
        function()
    samples = np.empty(repeats)
    for index in range(repeats):
        started = time.perf_counter_ns()
        function()
        samples[index] = time.perf_counter_ns() - started
    return samples / 1000.0  # µs


def timed_pair(call: Any, switch: Any, repeats: int) -> tuple[np.ndarray, np.ndarray]:
    """``call`` timed with ``switch(True)`` and with ``switch(False)`` alternately, the order flipping each
    round and the switch outside the timed call: on a shared machine whose memory speed drifts within
    minutes, a pair timed together compares them where separate runs would not."""
    for _ in range(min(repeats, 50)):
        for state in (True, False):
            switch(state)
            call()
    samples = np.empty((repeats, 2))
    for index in range(repeats):
        for state in (True, False) if index % 2 == 0 else (False, True):
            switch(state)
            started = time.perf_counter_ns()
            call()
            samples[index, 0 if state else 1] = time.perf_counter_ns() - started
    return samples[:, 0] / 1000.0, samples[:, 1] / 1000.0  # µs


def scan_table(repeats: int) -> list[dict[str, Any]]:
    from nexus_gateway import _slb  # type: ignore[attr-defined]

    rng = np.random.default_rng(0)
    rows = []
    for n in (250, 1000, 10_000, 100_000):
        vectors = rng.standard_normal((n, 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        buffer = slb.SemanticLookasideBuffer(384, capacity=n)
        buffer.add([str(i) for i in range(n)], vectors)
        query = vectors[n // 2] + 0.1 * rng.standard_normal(384).astype(np.float32)
        codes, _ = buffer.quantize_query(query)
        matrix, scales = buffer.matrix, buffer.scales
        count = max(20, repeats // (1 + n // 2000))

        # the shipped scan against the same scan without its prefetches (which start at 16 MB), paired
        c_kernel, c_no_prefetch = timed_pair(
            lambda m=matrix, s=scales, q=codes: _slb.topk(m, s, q, 10), _slb.set_prefetch, max(count, 200)
        )
        _slb.set_prefetch(True)
        _slb.set_threads(1)  # the same kernel on the calling thread alone, side by side
        c_one_thread = timed(lambda m=matrix, s=scales, q=codes: _slb.topk(m, s, q, 10), count)
        _slb.set_threads(0)
        numpy_int8 = timed(lambda m=matrix, s=scales, q=codes: scan_numpy(m, s, q, 10), max(20, count // 4))

        def float_baseline(v: np.ndarray = vectors, q: np.ndarray = query) -> Any:
            scores = v @ q
            top = np.argpartition(-scores, 10)[:10]
            return top[np.argsort(-scores[top])]

        numpy_f32 = timed(float_baseline, max(20, count // 4))
        same = np.array_equal(np.frombuffer(_slb.topk(matrix, scales, codes, 10)[0], dtype=np.int64),
                              scan_numpy(matrix, scales, codes, 10)[0])  # fmt: skip
        row = {
            "n": n,
            "kernel": _slb.kernel(),
            "c_us": float(np.median(c_kernel)),
            "c_us_ci": bootstrap_median_ci(c_kernel),
            "threads": _slb.threads_for(n, 384),
            "c_one_thread_us": float(np.median(c_one_thread)),
            "c_no_prefetch_us": float(np.median(c_no_prefetch)),
            "prefetch_ratio": float(np.median(c_no_prefetch / c_kernel)),
            "prefetch_ratio_ci": bootstrap_median_ci(c_no_prefetch / c_kernel),
            "numpy_int8_us": float(np.median(numpy_int8)),
            "numpy_f32_us": float(np.median(numpy_f32)),
            "speedup_vs_numpy_int8": float(np.median(numpy_int8) / np.median(c_kernel)),
            "speedup_vs_numpy_f32": float(np.median(numpy_f32) / np.median(c_kernel)),
            "same_ranking": bool(same),
        }
        rows.append(row)
    return rows


def cpu_name() -> str:
    """The CPU these figures belong to (they differ a lot between the machines this runs on)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def route_table(repeats: int) -> list[dict[str, Any]] | str:
    if not (SHARED / "registries" / "github-mcp.json").exists():
        return f"skipped: {SHARED} not found"
    from nexus_gateway.cache import RegistryCache
    from nexus_gateway.embedder import CrossEncoder, Embedder, EmbedderSpec
    from nexus_gateway.evaluation import RoutingEvaluation, embed_tools, load_queries, load_registries
    from nexus_gateway.routing import Calibration, Router
    from nexus_gateway.vectors import VectorStore

    tools = load_registries([SHARED / "registries" / "github-mcp.json", SHARED / "registries" / "mcp-pool.json"])
    queries = [q["query"] for q in load_queries(SHARED / "queries" / "github-dev.jsonl")]
    embedder = Embedder()  # the gateway's: two threads
    one_thread = Embedder(EmbedderSpec(threads=1))  # the baseline before session 22, same vectors
    cross = CrossEncoder()  # the gateway's: pairs side by side on two threads
    serial = CrossEncoder(workers=1)  # the baseline: one pair after another
    vectors = embed_tools(tools, embedder, VectorStore(RegistryCache(), embedder.model_tag))
    # the routing views exactly as the eval builds them
    all_docs = RoutingEvaluation(tools, embedder, vectors, Calibration(), cross).docs
    rows = []
    for n in (250, len(tools)):
        docs = all_docs[:n]
        for label, calibration, reranker, query_embedder in (
            ("no gate", Calibration(tau=-1.0, floor=0.0), cross, embedder),
            ("no gate, embedder on 1 thread", Calibration(tau=-1.0, floor=0.0), cross, one_thread),
            ("gate always, 2 pairs", Calibration(tau=9.0, floor=0.0, rerank_k=2), cross, embedder),
            ("gate always, 2 pairs, serial", Calibration(tau=9.0, floor=0.0, rerank_k=2), serial, embedder),
            ("gate always, 4 pairs", Calibration(tau=9.0, floor=0.0, rerank_k=4), cross, embedder),
            ("gate always, 4 pairs, serial", Calibration(tau=9.0, floor=0.0, rerank_k=4), serial, embedder),
        ):
            router = Router(query_embedder, docs, vectors[:n], calibration, reranker)
            totals = []
            stages: dict[str, list[float]] = {}
            for query in queries[: max(20, repeats // 20)]:
                started = time.perf_counter()
                result = router.route(query)
                totals.append((time.perf_counter() - started) * 1000)
                for stage, ms in result.timings_ms.items():
                    stages.setdefault(stage, []).append(ms)
            rows.append(
                {
                    "n": n,
                    "path": label,
                    "p50_ms": float(np.median(totals)),
                    "p95_ms": float(np.percentile(totals, 95)),
                    "p50_ci": bootstrap_median_ci(totals),
                    "queries": len(totals),
                    "stage_p50_ms": {stage: float(np.median(ms)) for stage, ms in stages.items()},
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=2000)
    parser.add_argument("--json", default=str(ROOT / "bench" / "results" / "slb_scan.json"))
    args = parser.parse_args()
    scans = scan_table(args.repeats)
    header = ("N", "kernel", "threads", "C (µs)", "C 1 thread", "C no pref.", "prefetch×", "numpy int8", "numpy f32",
              "×int8", "×f32", "same")  # fmt: skip
    print("  ".join(f"{h:>10}" for h in header))
    for r in scans:
        speedups = f"{r['speedup_vs_numpy_int8']:.1f}", f"{r['speedup_vs_numpy_f32']:.1f}"
        cells = (r["n"], r["kernel"], r["threads"], f"{r['c_us']:.2f}", f"{r['c_one_thread_us']:.2f}",
                 f"{r['c_no_prefetch_us']:.2f}", f"{r['prefetch_ratio']:.2f}", f"{r['numpy_int8_us']:.1f}",
                 f"{r['numpy_f32_us']:.1f}", *speedups, r["same_ranking"])  # fmt: skip
        print("  ".join(f"{c!s:>10}" for c in cells))
    routes = route_table(args.repeats)
    if isinstance(routes, str):
        print(routes)
    else:
        for r in routes:
            print(f"route N={r['n']:>5} {r['path']:>28}: p50 {r['p50_ms']:.1f} ms, p95 {r['p95_ms']:.1f} ms")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    document = {"cpu": cpu_name(), "scan": scans, "route": routes}
    Path(args.json).write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
