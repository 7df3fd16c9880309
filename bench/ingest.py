"""Cold ingest vs warm restart of the GitHub + pool registries (1,317 tools) through the registry cache.

Cold: an empty cache; every tool is ingested (signature, lexical tokens) and embedded, then the router
is built. Warm: the same with the cache left by the cold run (no re-embedding). Model loading (with its
sha256 checks) is timed on its own. Needs ``../shared``.

    python bench/ingest.py [--threads 1] [--json bench/results/ingest.json]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from nexus_gateway.cache import RegistryCache
from nexus_gateway.config import RoutingSettings
from nexus_gateway.embedder import Embedder, EmbedderSpec
from nexus_gateway.evaluation import load_registries
from nexus_gateway.models import packaged_model_dir
from nexus_gateway.registry import Registry
from nexus_gateway.router_service import RouterService

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"


def ingest(cache_dir: Path, servers: dict[str, list[dict[str, Any]]], embedder: Embedder) -> dict[str, float]:
    started = time.perf_counter()
    registry = Registry(RegistryCache(cache_dir))
    for server, tools in servers.items():
        registry.set_server_tools(server, tools)
    registered = time.perf_counter()
    service = RouterService(registry, RegistryCache(cache_dir), RoutingSettings(rerank=False))
    service.embedder = embedder
    from nexus_gateway.vectors import VectorStore

    service.store = VectorStore(service.cache, embedder.model_tag)
    router = service._build(registry.entries())  # prints its own progress bar while embedding
    done = time.perf_counter()
    assert router is not None and len(router.slb) == len(registry)
    return {"registry_s": registered - started, "router_s": done - registered, "total_s": done - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", default=str(ROOT / "bench" / "results" / "ingest.json"))
    args = parser.parse_args()
    if not (SHARED / "registries" / "github-mcp.json").exists():
        sys.exit(f"needs {SHARED}")
    tools = load_registries([SHARED / "registries" / "github-mcp.json", SHARED / "registries" / "mcp-pool.json"])
    servers: dict[str, list[dict[str, Any]]] = {}
    for tool in tools:
        servers.setdefault(tool.server, []).append(tool.raw)
    started = time.perf_counter()
    packaged_model_dir.cache_clear()
    embedder = Embedder(EmbedderSpec(threads=args.threads))
    model_s = time.perf_counter() - started
    cache = Path(tempfile.mkdtemp(prefix="nexus-ingest-"))
    cold = ingest(cache, servers, embedder)
    warm = ingest(cache, servers, embedder)
    result = {"tools": len(tools), "threads": args.threads, "model_load_s": model_s, "cold": cold, "warm": warm}
    print(f"{len(tools)} tools, {args.threads} thread(s): model load {model_s:.2f} s; "
          f"cold ingest {cold['total_s']:.1f} s; warm restart {warm['total_s']:.2f} s "
          f"(registry {warm['registry_s']:.2f} s + router {warm['router_s']:.2f} s)")  # fmt: skip
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
