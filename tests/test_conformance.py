"""The MCP conformance suite: whatever passes against server-everything directly passes through us."""

from __future__ import annotations

import sys

from conftest import REPO, node_server

sys.path.insert(0, str(REPO / "bench"))
import conformance


def test_conformance_through_the_gateway_matches_direct() -> None:
    node_server("conformance")
    result = conformance.run()
    assert result["direct_passed"] >= 10, result["direct"]
    assert result["lost_through_gateway"] == []
    rebinding = result["dns_rebinding_on_gateway"]
    assert rebinding is not None and rebinding["failed"] == 0 and rebinding["passed"] > 0
