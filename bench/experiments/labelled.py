"""The set-up the argument experiments here start from: the gateway's generator (0.5B, 2 threads, the
prefix warm, tool forms spliced from compiled blocks) over one registry file, and one half of a query
file, each request to be generated with its labelled tool. Importable as ``from labelled import
labelled`` by the scripts of this folder (Python puts a script's folder first on ``sys.path``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from nexus_gateway.arguments import ArgumentGenerator
from nexus_gateway.block_store import SchemaBlocks
from nexus_gateway.cache import RegistryCache
from nexus_gateway.eval_args import ArgsEvaluation, _load_tools, open_engine
from nexus_gateway.eval_cli import select_part
from nexus_gateway.evaluation import load_queries

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


def add_options(parser: argparse.ArgumentParser) -> None:
    """The options every such script takes: which registry and queries, which half, how many, where to."""
    parser.add_argument("--registry", default=str(SHARED / "registries" / "github-mcp.json"))
    parser.add_argument("--queries", default=str(SHARED / "queries" / "github-dev.jsonl"))
    parser.add_argument("--part", choices=["all", "even", "odd"], default="odd")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--json")


def labelled(registry: str, queries: str, part: str, limit: int | None) -> tuple[ArgsEvaluation, list[dict[str, Any]]]:
    """The evaluation that generates as the gateway does, and the requests of ``part`` (first ``limit``)."""
    tools = _load_tools([registry])
    chosen = select_part(load_queries(Path(queries)), part)[:limit]
    engine, _ = open_engine(None, 2)
    generator = ArgumentGenerator(engine)
    generator.warm()
    generator.blocks = SchemaBlocks(engine, generator.prefix_tokens, RegistryCache())
    return ArgsEvaluation(tools, generator, None), chosen
