"""Which host connections a list's change is told to (the telling itself is tested over real MCP in
test_faults.py): at most the most recent few, since the SDK never says when a host connection ends."""

from __future__ import annotations

from typing import Any

from nexus_gateway.list_viewers import ListViewers


def test_the_oldest_of_too_many_hosts_are_forgotten() -> None:
    viewers = ListViewers("tools", limit=3)
    session: Any = object()  # never sent anything here
    for name in "abcd":
        viewers.saw(name, session)
    viewers.saw("b", session)  # seen again: now the most recent
    viewers.saw("e", session)
    assert list(viewers.seen) == ["d", "b", "e"]


def test_a_list_of_something_else_is_refused() -> None:
    try:
        ListViewers("roots")
    except ValueError as exc:
        assert "roots" in str(exc)
    else:
        raise AssertionError("ListViewers accepted a kind of list MCP does not announce")
