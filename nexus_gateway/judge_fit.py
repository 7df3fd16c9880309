"""Whether, and on which decisions, the local LLM's pick among close candidates (``nexus.judge``) earns
its place on a registry.

Measured on two registries (docs/routing.md): among the local reference servers' one-line tools the
0.5B model fixed 7 of 65 everyday requests and broke none; among GitHub's near-duplicate tools it broke
8 of 83 and fixed 2. Nothing in a registry alone told the two apart, so ``calibrate --judge`` asks the
labelled requests instead. The judge picks among the best :data:`JUDGE_CANDIDATES` of every request once;
then, for each margin below which the gateway could ask it (the closest 20%, 40%, … of the requests, or
every decision), its fixes and breaks of the router's top-1 are counted. The calibration keeps the margin
with the most net fixes among those whose flips pass a one-sided sign test, at the cross-encoder gate's
level divided by the number of margins tried (each judgement costs 1–3 s of the call on two threads, so
a gain that chance explains is not worth it); none passing leaves the judge off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .evaluation import GATE_EVIDENCE, RoutingEvaluation, sign_test_p
from .ir import choice_ir
from .mood import judge_candidates
from .routing import JUDGE_CANDIDATES
from .toolids import base_id

# The judge: the request and the candidates as the gateway shows them, ``(tool id, compressed IR)``
# (the id as the registry gives it, ``toolids.base_id``);
# returns the index of its pick.
Judge = Callable[[str, list[tuple[str, str]]], int]
# Shares of the calibration requests, closest first, the judge may be asked on.
JUDGED_SHARES = (0.2, 0.4, 0.6, 0.8, 1.0)
EVERY_DECISION = 1e9  # a margin no route reaches: the judge asked on every decision


@dataclass(frozen=True)
class JudgedRequest:
    margin: float  # the router's top-1 − top-2
    router_right: bool
    judge_right: bool


@dataclass(frozen=True)
class JudgePolicy:
    """The judge asked wherever the margin is below ``margin``, and what that did."""

    share: float
    margin: float
    asked: int
    fixed: int  # the router's top-1 wrong, the judge's pick right
    broken: int  # the router's top-1 right, the judge's pick wrong

    @property
    def p(self) -> float:
        return sign_test_p(self.fixed, self.broken)

    def to_json(self) -> dict[str, Any]:
        return {
            "share": self.share,
            "margin": self.margin,
            "asked": self.asked,
            "fixed": self.fixed,
            "broken": self.broken,
            "p": round(self.p, 4),
        }


@dataclass(frozen=True)
class JudgeVerdict:
    """Every policy tried, and the one the calibration keeps (None: the judge stays off)."""

    requests: int
    judged: int  # those the router did not abstain on
    policies: tuple[JudgePolicy, ...]

    @property
    def evidence_needed(self) -> float:
        return GATE_EVIDENCE / max(len(self.policies), 1)  # Bonferroni over the margins tried

    @property
    def chosen(self) -> JudgePolicy | None:
        passing = [p for p in self.policies if p.p < self.evidence_needed]
        # the most net fixes; of equals, the one that asks the judge least often
        return max(passing, key=lambda p: (p.fixed - p.broken, -p.asked), default=None)

    @property
    def margin(self) -> float:
        """``Calibration.judge_margin``: 0 (never below it) when no policy passed."""
        chosen = self.chosen
        return chosen.margin if chosen is not None else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "judged": self.judged,
            "p_needed": self.evidence_needed,
            "policies": [p.to_json() for p in self.policies],
            "margin": self.margin,
        }


def judge_requests(
    evaluation: RoutingEvaluation,
    queries: Sequence[dict[str, Any]],
    query_vectors: np.ndarray,
    size: int | None,
    judge: Judge,
    progress: Callable[[int, int], None] | None = None,
) -> list[JudgedRequest]:
    """Route each request with ``evaluation.calibration`` (fitted first) at ``size`` and let ``judge``
    pick among the best candidates of each one the router does not abstain on."""
    judged = []
    for done, (query, vector) in enumerate(zip(queries, query_vectors, strict=True), start=1):
        registry, accepted = evaluation.protocol.registry(query, size)
        result = evaluation.router(registry).route_vector(
            query["query"], vector, limit=JUDGE_CANDIDATES, allow_rerank=True
        )
        if not result.abstained and result.candidates:
            best = [evaluation.tools[int(c.id)] for c in result.candidates[:JUDGE_CANDIDATES]]
            tools = judge_candidates(query["query"], best)  # as ``routed_call`` shows them
            shown = [(base_id(t.server, t.name), choice_ir(t.name, t.schema, t.description)) for t in tools]
            pick = tools[judge(query["query"], shown)] if len(tools) > 1 else best[0]
            judged.append(JudgedRequest(result.margin, best[0].uid in accepted, pick.uid in accepted))
        if progress:
            progress(done, len(queries))
    return judged


def judge_verdict(requests: int, judged: Sequence[JudgedRequest]) -> JudgeVerdict:
    """Each share's margin (the quantile of the judged requests' margins; every decision at 1.0) and
    what asking the judge below it did."""
    margins = np.array([j.margin for j in judged], dtype=np.float64)
    policies = tuple(
        judged_below(judged, EVERY_DECISION if share >= 1.0 else float(np.quantile(margins, share)), share)
        for share in (JUDGED_SHARES if judged else ())
    )
    return JudgeVerdict(requests, len(judged), policies)


def judged_below(judged: Sequence[JudgedRequest], margin: float, share: float = 0.0) -> JudgePolicy:
    """What asking the judge wherever the margin is below ``margin`` did to ``judged``."""
    asked = [j for j in judged if j.margin < margin]
    fixed = sum(j.judge_right and not j.router_right for j in asked)
    broken = sum(j.router_right and not j.judge_right for j in asked)
    return JudgePolicy(share, margin, len(asked), fixed, broken)
