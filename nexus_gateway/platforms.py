"""Which hosted platform a request names, and which one each upstream server works on.

"Open a pull request on Bitbucket for acme/website" shares nearly every word with GitHub's
``create_pull_request``, and "List the open merge requests in our GitLab project" with
``merge_pull_request``: no signal built from the words alone can tell them apart, and the gateway would
call the GitHub tool. The request says where the work happens; a server's tools say where theirs does
(GitHub's tools say "GitHub" in half their descriptions, the GitLab server's "GitLab" or "merge
request"). When a request names platforms and a server works on others, its tools cannot serve it: the
router lowers them by a fixed penalty (``Calibration.platform_weight``), so a request for a platform no
upstream serves falls below the abstention floor instead of reaching the nearest look-alike.

The list is deliberately short: services that tools act *on* (code hosting, trackers, wikis, chat, CI),
not technologies a request mentions in passing ("npm dependencies", "AWS keys", "a Python library").
Names that are also English words ("Linear", "Notion", "Slack") count only capitalised and not as the
request's first word; a name inside an ``owner/repo`` slug or a hyphenated identifier does not count.

The user's own machine is a place too: "Delete the local branch feature/old on my laptop" shares its
words with GitHub's ``delete_repository`` and ``create_branch``, but no hosted platform's tool can reach
a laptop. A request that places its work there (``LOCAL_MACHINE``) names that place; no server is said to
work on it (a filesystem or git server works on no hosted platform and is never lowered), so it lowers
exactly the servers of hosted platforms, as a GitLab request lowers GitHub's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

# platform -> the ways a request or a tool names it (lower case: matched case-insensitively)
PLATFORMS: dict[str, tuple[str, ...]] = {
    "github": ("github",),
    "gitlab": ("gitlab", "merge request", "merge requests"),
    "bitbucket": ("bitbucket",),
    "gitea": ("gitea",),
    "azure devops": ("azure devops", "azure repos", "azure boards", "azure pipelines"),
    "jira": ("jira",),
    "confluence": ("confluence",),
    "asana": ("asana",),
    "trello": ("trello",),
    "clickup": ("clickup",),
    "discord": ("discord",),
    "microsoft teams": ("microsoft teams", "ms teams"),
    "circleci": ("circleci", "circle ci"),
    "jenkins": ("jenkins",),
    "travis ci": ("travis ci", "travis-ci"),
    "buildkite": ("buildkite",),
    "hubspot": ("hubspot",),
    "salesforce": ("salesforce",),
    "zendesk": ("zendesk",),
    "pagerduty": ("pagerduty",),
    "figma": ("figma",),
    "airtable": ("airtable",),
    "dropbox": ("dropbox",),
    "google drive": ("google drive",),
}
# also English words: these count only capitalised, and not as a request's first word
CAPITALISED: dict[str, tuple[str, ...]] = {
    "linear": ("Linear",),
    "notion": ("Notion",),
    "slack": ("Slack",),
    "sentry": ("Sentry",),
}
# the user's machine, named only by requests: a local copy or a place on one's own computer
LOCAL_MACHINE = "local machine"
_LOCAL = re.compile(
    r"\blocal(?:ly)?\s+(?:git\s+)?(?:branch(?:es)?|repo(?:sitory|s)?|clone|copy|checkout|changes|commits?|"
    r"files?|director(?:y|ies)|folders?|machine|disk|working\s+(?:tree|copy|directory))\b"
    r"|\b(?:my|our)\s+(?:own\s+)?local\b"
    r"|\b(?:on|from|to)\s+(?:my|this|our)\s+(?:own\s+)?(?:laptop|machine|computer|desktop|workstation)\b"
    r"|\b(?:my|this)\s+current\s+(?:project\s+|working\s+)?(?:directory|folder)\b",
    re.IGNORECASE,
)
SERVER_SHARE = 0.25  # a platform is a server's when its name says it or this share of its tools do

# not inside a word, a hyphenated name or an owner/repo slug; a URL's host ("https://github.com/…") counts
_BOUNDARY_BEFORE, _BOUNDARY_AFTER = r"(?<![\w\-])(?<![^/]/)", r"(?![\w/\-])"


def _pattern(aliases: Sequence[str], flags: int) -> re.Pattern[str]:
    words = "|".join(re.escape(alias).replace(r"\ ", r"\s+") for alias in aliases)
    return re.compile(f"{_BOUNDARY_BEFORE}(?:{words}){_BOUNDARY_AFTER}", flags)


_ANY_CASE = {name: _pattern(aliases, re.IGNORECASE) for name, aliases in PLATFORMS.items()}
_CASED = {name: _pattern(aliases, 0) for name, aliases in CAPITALISED.items()}


def named_platforms(text: str, *, first_word_counts: bool = False) -> frozenset[str]:
    """The platforms ``text`` names, ``LOCAL_MACHINE`` among them when it places its work there."""
    found = {name for name, pattern in _ANY_CASE.items() if pattern.search(text)}
    if _LOCAL.search(text):
        found.add(LOCAL_MACHINE)
    for name, pattern in _CASED.items():
        for match in pattern.finditer(text):
            if first_word_counts or text[: match.start()].strip():
                found.add(name)
                break
    return frozenset(found)


def server_platforms(server: str, tool_texts: Sequence[str]) -> frozenset[str]:
    """The platforms a server works on: those its name says, and those a quarter of its tools say."""
    words = re.sub(r"[-/_@.:]+", " ", server).lower()  # "@acme/mcp-gitlab" → " acme mcp gitlab"
    by_name = {name for name, pattern in _ANY_CASE.items() if pattern.search(words)}
    by_name |= {name for name in CAPITALISED if re.search(rf"\b{name}\b", words)}
    counts: dict[str, int] = {}
    for text in tool_texts:
        for name in named_platforms(text, first_word_counts=True):
            counts[name] = counts.get(name, 0) + 1
    said = {name for name, count in counts.items() if count >= SERVER_SHARE * len(tool_texts)}
    return frozenset(by_name | said) - {LOCAL_MACHINE}


class PlatformIndex:
    """Per row of a router, the platforms its tool's server works on; per request, which rows cannot
    serve it (their server works on platforms, none of them one the request names)."""

    def __init__(self, servers: Sequence[str], tool_texts: Sequence[str]) -> None:
        members: dict[str, list[int]] = {}
        for row, server in enumerate(servers):
            members.setdefault(server, []).append(row)
        self.rows = len(servers)
        self._serves: dict[str, np.ndarray] = {}
        self._has_platform = np.zeros(self.rows, dtype=bool)
        for server, rows in members.items():
            for platform in server_platforms(server, [tool_texts[row] for row in rows]):
                serves = self._serves.setdefault(platform, np.zeros(self.rows, dtype=bool))
                serves[rows] = True
                self._has_platform[rows] = True

    def mismatch(self, intent: str) -> np.ndarray | None:
        """1.0 for each row whose server works elsewhere than every platform ``intent`` names; None when
        the intent names none, or no server works on any platform."""
        named = named_platforms(intent)
        if not named or not self._has_platform.any():
            return None
        served = np.zeros(self.rows, dtype=bool)
        for platform in named:
            if platform in self._serves:
                served |= self._serves[platform]
        return (self._has_platform & ~served).astype(np.float32)
