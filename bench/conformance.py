"""MCP conformance suite against server-everything: direct, and through the gateway in passthrough.

Runs ``@modelcontextprotocol/conformance`` (pinned in ``tests/servers/package.json``; later versions
need Node 22) against ``server-everything`` served over streamable HTTP, then against the gateway's
HTTP endpoint exposing that same server's tools, prompts and resources unprefixed. Every scenario
that passes directly must pass through the gateway, and ``dns-rebinding-protection`` must pass on the
gateway's own endpoint.

    python bench/conformance.py [--json bench/results/conformance.json]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import orjson
from procs import free_port, gateway_command, running

ROOT = Path(__file__).resolve().parent.parent
NODE_BIN = ROOT / "tests" / "servers" / "node_modules" / ".bin"
SUMMARY_LINE = re.compile(r"^[✓✗]\s+(?P<name>[\w-]+):\s+(?P<passed>\d+) passed, (?P<failed>\d+) failed")


def run_suite(url: str) -> dict[str, dict[str, int]]:
    """Scenario → {passed, failed} checks, parsed from the suite's summary."""
    done = subprocess.run(
        [str(NODE_BIN / "conformance"), "server", "--url", url],
        capture_output=True,
        text=True,
        timeout=600,
    )
    scenarios = {}
    for line in done.stdout.splitlines():
        match = SUMMARY_LINE.match(line.strip())
        if match:
            scenarios[match["name"]] = {"passed": int(match["passed"]), "failed": int(match["failed"])}
    if not scenarios:
        raise RuntimeError(f"no conformance summary in output:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return scenarios


def passing(scenarios: dict[str, dict[str, int]]) -> set[str]:
    return {name for name, r in scenarios.items() if r["failed"] == 0 and r["passed"] > 0}


def run() -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="nexus-conformance-"))
    upstream_port, gateway_port = free_port(), free_port()
    config = work / "passthrough.json"
    config.write_bytes(
        orjson.dumps(
            {
                "mcpServers": {"everything": {"url": f"http://localhost:{upstream_port}/mcp"}},
                "nexus": {"expose": ["everything/*"], "unprefixed": "everything"},
            }
        )
    )
    upstream = [str(NODE_BIN / "mcp-server-everything"), "streamableHttp"]
    gateway = gateway_command(config, "--http", f"127.0.0.1:{gateway_port}")
    gateway_env = {"NEXUS_CACHE_DIR": str(work / "cache"), "NEXUS_LOG_LEVEL": "WARNING"}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    with (
        running(upstream, upstream_port, env={"PORT": str(upstream_port)}, **quiet),
        running(gateway, gateway_port, env=gateway_env, cwd=str(ROOT)),
    ):
        direct = run_suite(f"http://localhost:{upstream_port}/mcp")
        through = run_suite(f"http://localhost:{gateway_port}/mcp")
    lost = sorted(passing(direct) - passing(through))
    return {
        "direct": direct,
        "gateway": through,
        "direct_passed": len(passing(direct)),
        "gateway_passed": len(passing(through)),
        "total": len(direct),
        "lost_through_gateway": lost,
        "dns_rebinding_on_gateway": through.get("dns-rebinding-protection"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", default=str(ROOT / "bench" / "results" / "conformance.json"))
    args = parser.parse_args()
    result = run()
    print(f"{'scenario':32}  {'direct':>8}  {'gateway':>8}")
    for name in result["direct"]:
        d, g = result["direct"][name], result["gateway"].get(name, {"passed": 0, "failed": 0})
        direct, through = (
            f"{d['passed']}/{d['passed'] + d['failed']}",
            f"{g['passed']}/{g['passed'] + g['failed']}",
        )
        print(f"{name:32}  {direct:>8}  {through:>8}")
    print(
        f"scenarios fully passing: direct {result['direct_passed']}/{result['total']}, "
        f"gateway {result['gateway_passed']}/{result['total']}; "
        f"lost through gateway: {result['lost_through_gateway']}"
    )
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
