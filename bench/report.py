"""Render docs/benchmarks.md from the JSON the benchmarks wrote to bench/results/.

    python bench/report.py

Each section names the command that produced its figures; a missing result file leaves a note instead.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from stats import wilson

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def load(name: str) -> Any | None:
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def ci(values: list[float]) -> str:
    return f"[{100 * values[0]:.1f}, {100 * values[1]:.1f}]"


def ratio_ci(interval: list[float] | None) -> str:
    return "–" if not interval else f"[{interval[0]:.2f}, {interval[1]:.2f}]"


def overhead() -> str:
    r = load("gateway_overhead.json")
    if r is None:
        return "_not run yet_\n"

    def row(name: str, x: dict[str, Any]) -> str:
        added = f"{x['added_p50_ms']:.2f} [{x['added_p50_ci'][0]:.2f}, {x['added_p50_ci'][1]:.2f}]"
        return (f"| {name} | {x['n']} | {x['direct_p50_ms']:.2f} | {x['gateway_p50_ms']:.2f} | {added} | "
                f"{x['direct_p99_ms']:.2f} | {x['gateway_p99_ms']:.2f} | {x['ratio_p50']:.2f} |")  # fmt: skip

    h = r["http"]
    ours, bare = r["stdio"]["added_p50_ms"], r["stdio_bare_sdk_proxy"]["added_p50_ms"]
    against_bare = "less than" if ours < bare - 0.005 else "about as much as" if ours <= bare + 0.03 else "more than"
    return f"""Command: `python bench/gateway_overhead.py --calls 2000 --seconds 5`

The same `tools/call` (`echo` of `tests/fixtures/fault_server.py`, an `mcp` 2.3 server) direct and through
the gateway's `call_tool`, interleaved call by call in one run. `bare SDK proxy` is the floor of any
SDK-based proxy (`bench/bare_proxy.py`: the SDK's stdio server in front of its client, nothing else).
Latency in ms; added = per-call difference, median with bootstrap 95% interval.

| path | n | direct p50 | gateway p50 | added p50 [95% CI] | direct p99 | gateway p99 | ratio p50 |
|---|---|---|---|---|---|---|---|
{row("stdio (gateway)", r["stdio"])}
{row("stdio (bare SDK proxy)", r["stdio_bare_sdk_proxy"])}
{row("streamable HTTP (gateway)", r["http"])}
{row("streamable HTTP (gateway, `--json-response`)", r["http_json_response"])}

Throughput over streamable HTTP at concurrency {h["concurrency"]} (client, gateway and upstream share the 2
cores; each path measured twice, alternating, and averaged): direct {h["direct_calls_per_s"]:.0f} calls/s,
through the gateway {h["gateway_calls_per_s"]:.0f} calls/s, through the gateway serving `--json-response`
{h["json_response_calls_per_s"]:.0f} calls/s ({h["json_response_calls_per_s"] / h["gateway_calls_per_s"]:.2f}×). With
`--json-response` each HTTP request is answered with one JSON body instead of its own event stream, so
nothing reaches the host in the middle of a call (a call's progress, an upstream's sampling or
elicitation requests); it is off by default.

Since session 25 the gateways of this benchmark run with `generate: false`: `call_tool` needs no local
model, and one loading in the background shared the cores with the first calls (in a run with it on,
the medians were the same and the gateway's stdio p99 9.8 ms against 3.3 ms).

Since session 26 every upstream call asks for progress, so that a long call's reports can push its
deadline on (`docs/design.md`). What that costs, measured once A/B in two alternating rounds of this
benchmark (`--calls 2000`; the gateway without the progress request was a temporary switch in
`Upstream.call_tool`, not kept, so no command here reproduces that side): added p50 0.98 / 1.04 ms with it against
0.93 / 0.88 ms without (the bare SDK proxy in the same runs 1.13 / 1.15 and 1.07 / 1.01 ms), gateway / direct
ratio 1.84 / 1.86 against 1.81 / 1.81: about 0.05 ms a call, kept for calls that are not cut off.

Since session 27 the gateway journals every call it sends upstream (`nexus.journal`, on by default: a JSON
line when it is sent and one when it ends; `docs/design.md`), and this benchmark runs with it on. What it
costs, measured with a temporary `"journal": false` in this benchmark's config (not kept; runs of
`--calls 2000 --seconds 1` alternating on and off, the gateway's added p50 minus the bare SDK proxy's in
the same run, which cancels the machine's drift between runs): with the journal −0.02 to +0.06 ms over six
runs, without it −0.08 to −0.17 ms over eight (two of them with `pin_tools: "off"` as well, which touches no
call): **about 0.14 ms a call** (the means, +0.02 and −0.13 ms), although a loop of 5,000 journalled
calls outside the gateway takes 18 µs a call; inside the running gateway each line's encoding and `write`
took 22–36 µs (instrumented once), the rest is the journal's other Python work in a process whose caches
the SDK keeps cold. Writing the `done` lines in batches every 0.2 s instead of one by one (one system call
per call instead of two) did not change it (+0.07 / −0.02 ms in two runs with it, against −0.17 / −0.13 ms
without the journal in the same hour), so it was not kept. The journal stays on by default: a record of what the
gateway did on the user's behalf is worth a tenth of a millisecond next to an agent's turn; `"journal":
false` takes it back.

Since session 28 each call is also counted for `GET /metrics` (`metrics.py`: a counter and a histogram
per call, about 10 µs in a loop outside the gateway). Measured once A/B with the counting stubbed out
(a temporary edit, not kept; runs of `--calls 2000 --seconds 1` alternating, gateway minus bare proxy in
the same run, on a machine about a third slower than session 27's): +0.04 / +0.09 ms without it,
+0.06 / +0.13 ms with it (and +0.11 / +0.12 in two more runs with it): about 0.05 ms a call, inside
the spread between runs.

Against the targets:
- added p50 ≤ 1 ms on stdio: {verdict(r["stdio"]["added_p50_ms"] <= 1)} ({r["stdio"]["added_p50_ms"]:.2f} ms). The
  gateway adds {against_bare} the bare SDK proxy ({r["stdio_bare_sdk_proxy"]["added_p50_ms"]:.2f} ms in the same run;
  without the call journal and the metrics it adds about 0.2 ms less, above); what remains is the `mcp`
  SDK's own per-hop cost (request and result validation, version surfaces, task hand-offs). See
  `docs/design.md`. The figure moves with the machine more than with the code: this run found a direct
  call's p50 at
  {r["stdio"]["direct_p50_ms"]:.2f} ms, session 26's recorded run at 1.22 ms (added 1.00 ms, bare proxy 1.14 ms),
  an early session's (commit df2a872) at 3.22 ms (added 2.62 ms); the difference to the bare proxy in the
  same run is what the gateway controls.
- ≥ 500 calls/s over HTTP: {verdict(h["gateway_calls_per_s"] >= 500)} ({h["gateway_calls_per_s"]:.0f} calls/s,
  {h["json_response_calls_per_s"]:.0f} with `--json-response`; the upstream alone serves
  {h["direct_calls_per_s"]:.0f} calls/s to the same client on this machine).
"""


def conformance() -> str:
    c = load("conformance.json")
    if c is None:
        return "_not run yet_\n"
    rows = []
    for name, d in c["direct"].items():
        g = c["gateway"].get(name, {"passed": 0, "failed": 0})
        rows.append(
            f"| {name} | {d['passed']}/{d['passed'] + d['failed']} | {g['passed']}/{g['passed'] + g['failed']} |"
        )
    lost = ", ".join(c["lost_through_gateway"]) or "none"
    return f"""Command: `python bench/conformance.py` (also run in CI by `tests/test_conformance.py`).

`@modelcontextprotocol/conformance@0.1.13 server --url …` against `@modelcontextprotocol/server-everything@2026.8.31`
over streamable HTTP directly, and against the gateway's HTTP endpoint in passthrough mode
(`expose: ["everything/*"]`, `unprefixed: "everything"`) in front of the same server. Checks passed / run:

| scenario | direct | through the gateway |
|---|---|---|
{chr(10).join(rows)}

Scenarios fully passing: direct **{c["direct_passed"]}/{c["total"]}**, through the gateway
**{c["gateway_passed"]}/{c["total"]}**. Every scenario that passes directly passes through the gateway (lost: {lost}),
and `dns-rebinding-protection` passes fully on the gateway's own endpoint (it half-fails on server-everything
itself). The scenarios failing directly need the conformance suite's own test tools and resources, which
server-everything does not carry.
"""


def routing_table(document: dict[str, Any]) -> str:
    lines = [
        "| N | n | top-1 [95% CI] | R@1 | R@3 | R@10 | escalated | flips fixed/broken | abstain P | abstain R "
        "| p50 | p95 | BM25 top-1 | dense f32 top-1 | concat tokens |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, r in document["sizes"].items():
        bm = document["baselines"]["bm25"][label]
        dense = document["baselines"]["dense_f32"][label]
        overflow = ", ".join(document.get("concat_overflows", {}).get(label, [])) or "none"
        lines.append(
            f"| {label} | {r['n']} | {pct(r['top1'])} {ci(r['top1_ci'])} | {pct(r['recall_at_1'])} | "
            f"{pct(r['recall_at_3'])} | {pct(r['recall_at_10'])} | {pct(r['escalated'])} | "
            f"{r['flips_fixed']}/{r['flips_broken']} | {pct(r['abstain_precision'])} | {pct(r['abstain_recall'])} | "
            f"{r['p50_ms']:.1f} ms | {r['p95_ms']:.1f} ms | {pct(bm['top1'])} {ci(bm['top1_ci'])} | "
            f"{pct(dense['top1'])} {ci(dense['top1_ci'])} | "
            f"{document['concat_tokens'][label]:,} (overflows {overflow}) |"
        )
    return "\n".join(lines)


def follow_up_table(document: dict[str, Any]) -> str:
    """The dialogues' follow-up turns, routed as the gateway routes a session's turn and alone."""
    lines = [
        f"Follow-up turns of the dialogues (`{Path(document['dialogues']).name}`, every dialogue: no turn of them "
        "was used to calibrate), each routed with the session's window of the turns before it, as `call` "
        "routes them (`SessionWindow.carried_slots`), and alone:\n",
        "| N | n | top-1 with the window [95% CI] | top-1 alone | fixed / broken |",
        "|---|---|---|---|---|",
    ]
    for label, f in document["follow_ups"].items():
        lines.append(
            f"| {label} | {f['n']} | {pct(f['top1'])} {ci(f['top1_ci'])} | {pct(f['top1_alone'])} | "
            f"{f['fixed']} / {f['broken']} |"
        )
    return "\n".join(lines) + "\n"


ROUTING_NOTE = """Session 18's re-run (typo correction checked to one edit, identifier parts left alone, four more
verbs of change) moved the calibration: on the even half it chose name weight 0.2 and required-slot
penalty 0.3 instead of 0.15 and 0.2 (one decision better there at N = 250), which costs two decisions on
the odd half at N = 250 (75.9% → 73.5%) and none at all tools (68.7%); with session 15's weights the
same code gives 75.9% and 69.9% on the odd half. For the 117 GitHub tools it chose lexical weight 0.2
instead of 0.3: two answerable requests fewer routed right (74.7% → 72.3%), three more irrelevant ones
caught (abstention recall 40% → 55%, precision 67% → 79%) with fewer answerable ones abstaining (4.8% →
3.6%). A fit on 83 requests moves by a decision or two whenever the scores shift a little; these are
the figures the shipped command gives.

Session 19 added the platform signal (a request that names a platform, "… on Bitbucket", "our GitLab
project", lowers the tools of servers that work on another one by a fixed 0.5; `platforms.py`): the
abstention recall against the 117 GitHub tools goes 55% → 70% (11 → 14 of 20: the GitLab merge
requests, the Bitbucket pull request and the CircleCI workflow), precision 79% → 82%, and no answerable
request moves (3.6% abstain as before); the GitHub rows with the pool and BFCL are unchanged to the
decimal, but for R@3 at N = 250 over all 166 (87.3% → 88.0%, one request). The same session's plain
synonyms for words a registry never says ("folder" → directory) and number words kept from the typo
corrector ("five" is not "file") changed no figure here; they are for the local servers' intents (15 →
16 of 20, `docs/routing.md`).

Session 22 set BM25's k1 to 0.8 instead of the textbook 1.2 (`docs/routing.md`) and refitted the
calibrations with it: GitHub with the pool, odd half, 73.5% → 78.3% at N = 250 and 68.7% at all tools as
before, but R@3 at 250 91.6% → 89.2%; BFCL 69.0% → 70.3%; against the 117 GitHub tools, whose calibration
moved (mood weight 0.2 → 0.3, name weight 0.15 → 0.2), top-1 72.3% → 74.7% with abstention recall 70% →
65% and 3.6% → 4.8% of answerable requests abstaining (one request each way). The same session's
calibration keeps the cross-encoder's gate only when its flips are evidence (a sign test), which turned
it off for BFCL (p95 67.5 → 31.8 ms at the same top-1, before the k1 change).

Session 46 sends a request that sets fields in two clauses ("update the title … and mark it ready for
review") to a tool with a parameter for each (`compound.py`, `docs/routing.md`). With the stored
calibrations it fixes three of the 166 GitHub requests at N = 250, at all tools and against the 117
GitHub tools, and breaks none; all three are even lines, so the odd half above does not move. The refit
moved the 117 GitHub tools' calibration (lexical, affordance, mood and name weights 0.1 / 0.1 / 0.2 /
0.15 instead of 0.2 / 0.2 / 0.3 / 0.2, on a reciprocal rank 0.18 higher on the fitting half), which
routes three of the odd half's requests fewer right (79.5% → 75.9%) and catches one irrelevant request
fewer (65% → 60%); fitted on the odd half instead, the rule routes two more of the even half right
(69.9% → 72.3%, `bash bench/experiments/calibration_folds.sh`).

Session 47 lets a file name leave the word "file" where it was blanked from the lexical terms and the
embedded request (not from name coverage; `lexical.without_values`), and no longer reads a dotted
repository's name ("the next.js repo") as a file (`docs/routing.md`). With the stored calibrations: the
local set 34 → 37 of 65, BFCL one request fixed, GitHub one broken ("commits touching
src/auth/session.go" → `push_files`, an even line). The refit moved only the floors: the odd half as
before at N = 250 and all tools, one request more at N = 10; all 166 at N = 250 81.3% → 80.7% and at all
tools 75.9% → 75.3%.

Session 48 reads a request that leads with a plural noun and says no change ("repos tagged
topic:mcp-server, most stars first", "commits touching src/auth/session.go") as a read (`mood.py`). With
the stored calibrations: GitHub with the pool one request fixed at N = 250 and at all tools, and one
against the 117 GitHub tools (an even line each; the odd half does not move), none broken on BFCL or the
local set. The refit moved only the 117 GitHub tools' calibration (back to lexical, affordance, mood and
name weights 0.2 / 0.2 / 0.3 / 0.2, the fit session 46's refit left): odd half 75.9% → 78.3%, abstention
recall 60% → 65% at precision 92.3% → 86.7%, answerable requests abstaining 1.2% → 2.4% (one request).
Then a build file with no extension by convention ("Dockerfile", "Makefile") became a file name
(`lexical.CONVENTIONAL_FILES`): "show me teh Dockerfile in bluefin-io/edge-proxy plz", an odd line that
abstained, goes to `get_file_contents` at both sizes and against the 117 GitHub tools, and nothing else
moves on any set: odd half 80.7% → 81.9% at N = 250 and 71.1% → 72.3% at all tools, the 117 GitHub tools
78.3% → 79.5% with 1.2% of answerable requests abstaining (precision 92.9%); no calibration moved.
Last, "can you tell me …" reads (it was taken for telling someone, a change: 34 BFCL requests, one
irrelevant one) and numbers on both sides of "add" are a sum to compute. With the stored calibrations no
decision moves anywhere (BFCL's calibration had no mood weight); the refit gives BFCL a mood weight of
0.2, which the even half prefers by its reciprocal rank and which routes three of the odd half's
requests fewer right (72.2% → 71.5%); every other figure as above.

Session 50: a request that places its work on the user's own machine ("Delete the local branch
feature/old on my laptop", "Run npm test in my current project directory") names a place no hosted
platform reaches, and lowers GitHub's tools as a Bitbucket request does (`platforms.LOCAL_MACHINE`):
against the 117 GitHub tools both now abstain, abstention recall 65% → 75% at precision 92.9% → 93.8%,
answerable requests abstaining 1.2% as before. And the readers of verbs (the read/write mood, the change
clauses) read a misspelt verb as the verb it is one edit from (`mood.spelled_verbs`): "asign … issue 45
to ravi-n and nora-t and put it in milestone 3", an even line, reaches `issue_write` at both sizes and
against the 117 GitHub tools (all 166 at N = 250: 81.9% → 82.5%; at all tools 76.5% → 77.1%). Nothing
else moved on any set, and no calibration changed.

Session 51: the noun of a phrase that places the request ("on the develop branch", "in my dotfiles
repo", "to the refactor/db-layer branch") is no term of the lexical signal or of name coverage
(`lexical.PLACE_PHRASE`): it says where the operation happens, not what it acts on. With the stored
calibrations "I want to see what the most recent commit on the develop branch of lumen-labs/lumen-ui
actually changed" (an even line) leaves `list_commits` for `get_commit` at both sizes and against the 117
GitHub tools; nothing else moves on any set. The refit on the even half then moved the weights (GitHub
with the pool: the server share 0.1 → 0.3 and a higher floor; the 117 tools: lexical 0.2 → 0.3, names 0.2
→ 0.1), and with them the odd half: 81.9% → 80.7% at N = 250 (one request now under the floor; R@3 92.8%
→ 95.2%), 72.3% → 75.9% at all tools; the 117 GitHub tools 79.5% → 78.3%, abstention 75% at precision
88.2% (answerable requests abstaining 2.4%). The grid's choice moves by a request or two each refit
(`calibration_folds.sh`); these are the figures it gives. Then a named `owner/repo` that is no file
name costs a tool with nowhere to put it (no `owner`/`repo`, no search query) half the affordance weight
(`affordance.names_a_slug`, `routing.REPOSITORY_NOWHERE`): with the stored calibrations "git blame
lib/response.js in expressjs/express on the 4.x branch" and "Add a new file docs/CONTRIBUTING.md to
hexa-dev/cli-tools on main" leave a local git server's tools for GitHub's at all tools, and nothing else
moves on any set. Its refit took the server share back to 0.2 with a lower floor, and two requests of the
odd half the previous refit had fixed at all tools went back ("Mark notification 12345678901 as done",
"commits authored by sofia-g anywhere in the riverbank org"): 80.7% at N = 250, 74.7% at all tools (all
166: 82.5% and 79.5%), the 117 GitHub tools and BFCL as above; the dialogues' follow-ups 88.9% at N = 10,
72.2% at N = 250, 61.1% at all tools.

Session 52: a request for a change no tool of the registry makes abstains (`mood.ChangeVocabulary`: when
no tool that writes says any of the request's verbs of change, in a word that begins with the verb's root
or in a word for the same operation, every tool counts as a mood mismatch). Against the 117 GitHub tools
"Lock the conversation on issue 57 …" and "Archive hexa-dev/prototype-2022 so it becomes read-only" now
abstain: abstention recall 75% → **85%** at precision 88.2% → 89.5%, answerable requests abstaining 2.4%
as before. Nothing else moved on any set, at N = 10, 50, 250 or all tools. The refit on this machine moved τ
by 0.002 and the floor by 0.0001 (the same before the change: the machine's, not the rule's); weights and
decisions as before.

Session 54: two rules, each measured with the stored calibrations (`decisions_ab.py`), then refitted by this
command to the same weights and floors. (1) GitLab's project addressed by its path (`project_id`: "Project ID
or URL-encoded path") is a required repository as GitHub's `owner` and `repo` are
(`affordance.names_a_project_path`): "commits authored by sofia-g anywhere in the riverbank org" no longer
goes to GitLab's `list_commits`, which had paid nothing for the repository the request does not name (odd
half at all tools 74.7% → **75.9%**, R@3 92.8% → 94.0%; all 166 79.5% → 80.1%). (2) A change no tool
makes to the object the request names abstains, although some tool makes the change to another object
(`mood.ObjectChanges`): "Delete the branch feature/dark-mode from lumen-labs/lumen-ui" and "Create a new
milestone called 'v3.0'" against the 117 GitHub tools: abstention recall 85% → **95%** at precision 90.5%,
answerable requests abstaining 2.4% as before. Nothing else moved on any set, at N = 10, 50, 250 or all
tools.

Session 55: a tool whose name leads with a change the request refuses ("Start a pending review for me
first, don't submit anything yet", "Shut it down without merging") loses the mood weight
(`mood.refused_changes`). With the stored calibrations (`decisions_ab.py`): the pending-review request
leaves `submit_pending_pull_request_review` at N = 250, at all tools and against the 117 GitHub tools (3
fixed, 0 broken; the other moves from `merge_pull_request` to another wrong tool). It is on the even half:
the odd half stands to the decimal, all 166 at N = 250 82.5% → **83.1%** and at all tools 80.1% →
**80.7%**, dialogue follow-ups with their window 72.2% → **77.8%** at N = 250 and 61.1% → **66.7%** at
all tools ("start a pending review on it, don't submit yet"). The refit kept every weight and floor. And
"history" stands for "log" where a registry never says it (`lexical.SYNONYMS`): the local servers 37 →
**38 of 65** ("show the history of the repository" reaches `git_log`), nothing else moved; where a registry
names a word with and without "un" (`git_diff_staged`, `git_diff_unstaged`), a state the request denies
lowers the tool named for it (`mood.denied_words`): the local servers 38 → **39 of 65** ("show me the diff of
what I haven't staged yet"), nothing else moved. Last, a follow-up
that points back carries a number when the last turn's result numbers its records
(`SessionWindow.carried_slots`): "label it bug" after "open an issue …" reaches `update_issue_labels`, not
`label_write`; follow-ups 77.8% → **83.3%** at N = 250, 66.7% → **72.2%** at all tools, 88.9% → 94.4% at N =
10, none broken; single requests cannot move (the GitHub odd-half run above was repeated for it alone).

Session 56: two neighbouring words the registry writes as one count as that word too
(`BM25Index.query_terms`: "check out" → checkout, "board game" → boardgame; the first word no function
word, so "in it" is no init). With the stored calibrations (`decisions_ab.py`): the local servers 39 →
**40 of 65** ("check out the branch feature/login" reaches `git_checkout`), BFCL 1 fixed on the even half
(the odd half stands at 71.5%), nothing moved on GitHub or the irrelevant requests; this command refitted
every registry to the same weights and floors. Two other lexical changes were measured and not kept
(docs/routing.md): "-ee" agent nouns stemmed to their verb, and boolean parameters' names out of BM25's
document. The judge now always keeps the router's first choice among its candidates
(`mood.judge_candidates`); the held-out judge table below re-ran its local rows (both models) and the
GitHub 0.5B row on this router (`judge_held_out.py`): `calibrate --judge` still keeps the judge off on
both sets; the GitHub 1.5B row is session 31's.

Session 57: a code host's pasted link reads as what it points at (`lexical._link_words`: `…/issues/310`
leaves "issue", `…/pull/318#discussion_r…` "pull request comment") and names a repository and a number
(`affordance.query_slots`); a URL no longer ends with the sentence's comma or full stop. The tables above
are session 56's run: on the dev sets as they are no decision moved (`decisions_ab.py`). The dev set holds
two links; `python bench/experiments/pasted_links.py --json bench/results/pasted_links.json` rewrites the 43
GitHub dev requests that name an `owner/repo` and a number into the link form and routes both forms with
the stored calibration. Before this change the link form got 23 of 43 (53.5%) at N = 250 and 19 (44.2%) at
all tools, most of the misses taken by web fetchers; now:
"""

PASTED_NOTE = """Sessions 58–61: a request's pasted trace, log, code or data is no part of what it asks (`pasted.py`;
the router reads the request without its pasted lines, and since session 59 without a line that only says
what the block under it is, "I keep getting this:"; since session 60 a line only a program writes is
pasted wherever it stands: a diagnostic led by its file and line, a traceback's header, a line led by a
time or a loud log level, aligned table rows). Argument generation reads the request without them too,
and with them only for a required value the request leaves unsaid (session 59); the block becomes the
tool's body or content (`placement.pasted_material`), and since session 60 a search about the block
searches its headline (`placement.searched_material`); since session 61 a request that points at its block
("has anyone reported this?") counts the block as text a parameter must hold, so that tools with a
search query or a long text rank above those with neither. On the dev sets as they are no decision moves:
no dev request's split changes, and none points at a block. The dev sets paste nothing, so `python
bench/experiments/pasted_material.py --baseline 61cfcc6 --json bench/results/pasted_material.json`
(61cfcc6: session 60's package, a commit of session 61 that changed only a benchmark; run with the
calibration session 55 stored, before session 61's refit, which routes the searches 17 of 20 as well;
the searches' row of this tree re-run alone, `search_counts`, after the session's last mend of
`pasted.points_back`, which changes whether the text slot counts for no other pasted request of the
five sets or of `pasted-args-dev.jsonl`) pastes a
block beside each of the 166 GitHub dev requests in six forms (after or before, bare, under one
introducing line, or under eight other introducing lines in turn) and routes them at N = 250 with the
tree before and this one, side by side; five sets of blocks, each held out for one look and read after it
(`docs/routing.md`), so all are design sets now. "Read as written" counts the requests the split leaves
exactly as they were before the block was pasted. Then the arguments, with the 0.5B model and the
labelled tool, both trees: 16 requests that paste a body or a file's content
(`bench/data/pasted-args-dev.jsonl`), the 166 GitHub dev requests with a held-out-2 block after "Here's
what I'm seeing:" against the same requests as written (keys scored by `eval_args.score_arguments`), and
20 searches beside a block (`bench/data/pasted-search-dev.jsonl`, written in session 60 after the
headline rule and before it was run on them). (Session 60's run against 1b55309, before its rules: design
126–132 → 138 of 166, held-out 1 126–130 → 135, held-out 2 117–128 → 130, held-out 3 100–105 → 118–123,
held-out 4 89–98 → 125–127; searches routed 11 → 12 of 20. Session 59's run against 0705399: the forms
under "I keep getting this:" 117 → 129, 118 → 126, 113 → 118 of 166 in the first three sets; session 58's
against be44e21: 327, 373 and 382 of the 664 requests of the first four forms of each set right;
`docs/routing.md`, `docs/arguments.md`.) Session 62 routed the 20 searches again after its rule that a
version fills no identifier, session 63 after its rule that a number named by what it numbers fills
only a parameter about that thing, and session 65 after its five routing rules, with the stored GitHub
calibration's values (session 65's; the gate is off, so its τ moves no decision): `nexus-gateway eval
routing --registry ../shared/data/registries/github-mcp.json --registry
../shared/data/registries/mcp-pool.json --queries bench/data/pasted-search-dev.jsonl --sizes 250
--no-rerank --tau 0.05937 --floor 0.9078 --lexical-weight 0.3 --affordance-weight 0.2 --mood-weight 0.3
--name-weight 0.2 --unfilled-weight 0.3 --server-weight 0.3 --platform-weight 0.5`
(`bench/results/calibration-github.json`): **18 of 20** (90.0% [69.9, 97.2], in all three sessions; 17
before session 62: "Are there issues in celery/celery about logger
imports breaking in 5.3? This is the trace:" went to `issue_read`); the whole experiment was not re-run.
"""


def routing() -> str:
    parts = ["Command: `SHARED=../shared/data bash bench/run_routing_eval.sh` (calibrates on the even lines of each "
             "query file with `nexus-gateway calibrate … --part even`, reports on the odd lines).\n"]  # fmt: skip
    sections = [
        ("routing-github-odd.json", "GitHub dev queries (odd half), GitHub tools then the pool as distractors"),
        ("routing-github-all.json", "GitHub dev queries (all 166; half of them were used to calibrate)"),
        ("routing-irrelevant.json", "Abstention: irrelevant-dev.jsonl against the 117 GitHub tools (odd half)"),
        ("routing-bfcl.json", "BFCL dev queries (odd half) over the 2,555 BFCL functions"),
        (
            "routing-local.json",
            "Everyday local servers: `bench/data/local-dev.jsonl` (65 requests, session 30) over the 50 tools of "
            "time, git, filesystem, memory and everything (`tests/fixtures/local_registry.json`), uncalibrated, "
            "as a gateway routes before anyone runs `calibrate`",
        ),
    ]
    for name, title in sections:
        document = load(name)
        if document is None:
            parts.append(f"### {title}\n\n_not run yet_\n")
            continue
        calibration = document.get("calibration", {})
        knobs = ", ".join(f"{k} {v:.3g}" for k, v in calibration.items() if isinstance(v, int | float))
        parts.append(f"### {title}\n\n{routing_table(document)}\n\nCalibration used: {knobs}.\n")
        if name == "routing-local.json" and (preset := load("routing-local-defaults.json")):
            parts.append(
                f"With `{preset['config']}`'s `nexus.defaults` (git's `repo_path` set, which the gateway's router "
                f"then reads no path of a request into): {preset['right']['defaults']} of {preset['n']} right, "
                f"{preset['right']['plain']} without (`python bench/experiments/preset_defaults.py --json "
                "bench/results/routing-local-defaults.json`).\n"
            )
        if document.get("follow_ups"):
            parts.append(follow_up_table(document))
    parts.append(
        "Latency columns are the whole route (query embedding + scan + fusion + gate, and the cross-encoder when "
        "the gate escalates) measured inside the eval on a busy machine; `bench/slb_scan.py` below measures it "
        "alone. Concat tokens: mean schema length (bge WordPiece tokens) × N, i.e. what putting every schema "
        "in the host's context would cost; overflows lists the context sizes it exceeds.\n"
    )
    irrelevant = ((load("routing-irrelevant.json") or {}).get("sizes") or {}).get("all") or {}
    caught, answerable = irrelevant.get("abstain_recall"), irrelevant.get("abstain_answerable")
    abstains = caught is not None and answerable is not None and caught >= 0.9 and answerable <= 0.03
    verdict = "**the abstention target met**, the others not" if abstains else "**none met**"
    abstention = (
        f" (abstention: {100 * caught:.0f}% of irrelevant requests caught, {100 * answerable:.1f}% of answerable "
        "ones abstaining)"
        if caught is not None and answerable is not None
        else ""
    )
    parts.append(
        "Against the targets (GitHub top-1 ≥ 95% at N = 250 and ≥ 92% at all tools, recall@3 ≥ 99% at 250; BFCL "
        "top-1 ≥ 85%; abstain on ≥ 90% of irrelevant requests while abstaining on ≤ 3% of answerable ones): "
        f"{verdict}{abstention}. The router beats both baselines at every size; what was tried and measured "
        f"is in `docs/routing.md`.{bfcl_ceiling()}\n"
    )
    parts.append(ROUTING_NOTE)
    links = load("pasted_links.json")
    if links:
        rows = ["| form (n, top-1 [Wilson 95%]) | N = 250 | all tools |", "|---|---|---|"]
        for form, sizes in links["forms"].items():
            cells = [share(sizes[s], links["n"]) for s in ("250", "all")]
            rows.append(f"| {form} | {' | '.join(cells)} |")
        parts.append("\n".join(rows) + "\n")
    parts.append(pasted_material())
    parts.append("![top-1 vs registry size](img/routing-github.png)\n")
    return "\n".join(parts)


def share(cell: dict[str, Any], n: int) -> str:
    """A proportion cell of the experiments' JSON (``right``, ``top1``, ``top1_ci``) as "k / n (p% [lo, hi])"."""
    low, high = cell["top1_ci"]
    return f"{cell['right']} / {n} ({100 * cell['top1']:.1f}% [{100 * low:.1f}, {100 * high:.1f}])"


def pasted_material() -> str:
    """Routing and arguments with a block pasted into the request (sessions 58–60)."""
    document = load("pasted_material.json")
    if not document:
        return ""

    n = document["n"]
    base = document["baseline"]
    rows = [
        f"| blocks | form | routed right, {base} | this tree | read as written, {base} | this tree |",
        "|---|---|---|---|---|---|",
    ]
    for blocks, forms in document["sets"].items():
        for form, cells in forms.items():
            read = cells.get("read_as_written", {})
            rows.append(
                f"| {blocks} | {form} | {share(cells['baseline'], n)} | **{share(cells['this'], n)}** | "
                f"{read.get('baseline', '–')} | {read.get('this', '–')} |"
            )
    rows.append(f"| as written | – | – | {share(document['written'], n)} | – | {n} |")
    arguments = document["arguments"]
    count = arguments["this"]["n"]
    argument_rows = [f"| 0.5B, labelled tool (n = {count}) | {document['baseline']} | this tree |", "|---|---|---|"]
    for label, key in (
        ("the pasted block as the long text", "long_text"),
        ("every labelled key", "labelled_keys_all_right"),
    ):
        argument_rows.append(
            f"| {label} | {share(arguments['baseline'][key], count)} | **{share(arguments['this'][key], count)}** |"
        )
    beside = document.get("beside")
    beside_rows = []
    if beside:
        count = beside["this"]["n"]
        beside_rows = [
            f"| 0.5B, labelled tool, {beside['set']} block, {beside['form']} (n = {count}) | as written | "
            f"{document['baseline']} | this tree |",
            "|---|---|---|---|",
        ]
        sides = [beside[side] for side in ("written", "baseline", "this")]
        beside_rows.append(
            "| labelled keys right | " + " | ".join(f"{s['keys_right']} of {s['keys_total']}" for s in sides) + " |"
        )
        beside_rows.append(
            "| values no label holds, outside the long text | "
            + " | ".join(str(s["unlabelled_values"]) for s in sides)
            + " |"
        )
        beside_rows.append(
            "| requests with every labelled key and no such value | "
            + " | ".join(share(s["whole"], count) for s in sides)
            + " |"
        )
    search = document.get("search")
    search_rows = []
    if search:
        written = (Path(__file__).parent / "data" / "pasted-search-dev.jsonl").read_text().splitlines()
        styles = Counter(json.loads(line)["style"] for line in written)
        search_rows = [f"| searches beside a block (n = {len(written)}) | {base} | this tree |", "|---|---|---|"]
        for label, cell in search["this"].items():
            count = styles.get(label, len(written))
            wanted = "routed right at N = 250" if label == "routed" else f"{label}: every labelled key, nothing else"
            search_rows.append(f"| {wanted} | {share(search['baseline'][label], count)} | **{share(cell, count)}** |")
    tables = ["\n".join(rows), "\n".join(argument_rows), "\n".join(beside_rows), "\n".join(search_rows)]
    return PASTED_NOTE + "\n" + "\n\n".join(table for table in tables if table) + "\n"


def bfcl_ceiling() -> str:
    """How many BFCL misses choose a function that serves the request as well, judged by hand once
    (session 33's snapshot of the router; docs/routing.md)."""
    path = ROOT / "bench" / "data" / "bfcl-odd-misses-judged.jsonl"
    if not path.exists():
        return ""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    chose = sum(row["serves"] and not row["abstained"] for row in rows)
    abstained = sum(row["serves"] and row["abstained"] for row in rows)
    return (
        f" On BFCL, {chose} of the {len(rows)} misses of session 33's router (odd half) chose, by a judgement "
        "made by hand of each, a function that does what the request asks as well as the labelled one (another "
        f"task's look-alike, which the labels do not accept), and {abstained} more abstained with such a function "
        "or the labelled one first; `bench/data/bfcl-odd-misses-judged.jsonl`, `docs/routing.md`."
    )


def judge() -> str:
    """``calibrate --judge`` fitted on the even half of a request set, applied to the odd half."""
    rows = []
    for label, name in (
        ("local (65 requests), 0.5B", "judge-held-out-local-0.5b.json"),
        ("local (65 requests), 1.5B", "judge-held-out-local-1.5b.json"),
        ("GitHub N = 250 (166 requests), 0.5B", "judge-held-out-github-0.5b.json"),
        ("GitHub N = 250 (166 requests), 1.5B", "judge-held-out-github-1.5b.json"),
    ):
        document = load(name)
        if document is None:
            rows.append(f"| {label} | _not run yet_ | | | |")
            continue
        fitted, held = document["calibration_half"], document["held_out"]
        flips = ", ".join(f"{p['fixed']} / {p['broken']}" for p in fitted["policies"])
        kept = next((f"{p['share']:.0%}" for p in fitted["policies"] if p["margin"] == fitted["margin"]), "none")
        router, judged = held["router"], held["router + judge at the kept margin"]
        rows.append(
            f"| {label} | {flips} | {kept} | {pct(router['top1'])} {ci(router['ci'])} | "
            f"{pct(judged['top1'])} {ci(judged['ci'])} ({held['fixed']} fixed, {held['broken']} broken) |"
        )
    return (
        "Command, from `bench/experiments`: `python judge_held_out.py --set local|github [--model "
        "qwen2.5-coder-1.5b] --json ../results/judge-held-out-<set>-<model>.json`. The even half fits what "
        "`nexus-gateway calibrate "
        "--judge` stores: the margin below which the local LLM picks among the router's best three, kept only "
        "when its fixes and breaks pass a one-sided sign test at 5% / 5 (`judge_fit.py`); the odd half "
        "applies it.\n\n"
        "| set, model | even half: fixed / broken below the closest 20%, 40%, 60%, 80%, every decision | kept "
        "| odd half: router top-1 | odd half: with the judge |\n|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
    )


def verdict(met: bool) -> str:
    """A target's verdict from the figure itself, so a re-run that crosses the line says so."""
    return "**met**" if met else "**not met**"


SCAN_HEADER = (
    "| N | kernel | threads | C | C 1 thread | C no prefetch | prefetch | numpy int8 | numpy f32 matmul | C vs int8 "
    "| C vs f32 | same ranking |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def scan() -> str:
    s = load("slb_scan.json")
    if s is None:
        return "_not run yet_\n"
    rows = [
        f"| {r['n']:,} | {r['kernel']} | {r.get('threads', 1)} | "
        f"{r['c_us']:.2f} [{r['c_us_ci'][0]:.2f}, {r['c_us_ci'][1]:.2f}] | "
        f"{r.get('c_one_thread_us', r['c_us']):.2f} | "
        f"{r['c_no_prefetch_us']:.2f} | {r['prefetch_ratio']:.2f}× "
        f"[{r['prefetch_ratio_ci'][0]:.2f}, {r['prefetch_ratio_ci'][1]:.2f}] | "
        f"{r['numpy_int8_us']:.1f} | {r['numpy_f32_us']:.1f} | {r['speedup_vs_numpy_int8']:.0f}× | "
        f"{r['speedup_vs_numpy_f32']:.1f}× | {r['same_ranking']} |"
        for r in s["scan"]
    ]
    routes = s["route"]
    by_path = {} if isinstance(routes, str) else {(r["n"], r["path"]): r for r in routes}
    no_gate = by_path.get((250, "no gate"))
    gate_2, gate_4 = by_path.get((250, "gate always, 2 pairs")), by_path.get((250, "gate always, 4 pairs"))
    bfcl = load("routing-bfcl.json")
    bfcl_all = (bfcl or {}).get("sizes", {}).get("all") or {}
    bfcl_k = (bfcl or {}).get("calibration", {}).get("rerank_k", "?")
    bfcl_p95, bfcl_escalated = bfcl_all.get("p95_ms", float("nan")), 100 * (bfcl_all.get("escalated") or 0)
    p95_2, p95_4 = (row["p95_ms"] if row else float("nan") for row in (gate_2, gate_4))
    github_250 = ((load("routing-github-odd.json") or {}).get("sizes") or {}).get("250") or {}
    gh_p95, gh_escalated = github_250.get("p95_ms", float("nan")), 100 * (github_250.get("escalated") or 0)
    gh_text = (
        f"GitHub with the pool: its calibration leaves the gate off (p95 {gh_p95:.1f} ms at N = 250)."
        if gh_escalated == 0
        else f"GitHub with the pool: {gh_p95:.1f} ms at N = 250 with its gate ({gh_escalated:.0f}% escalated)."
    )
    gate_2_all = by_path.get((1317, "gate always, 2 pairs"))
    p95_2_all = gate_2_all["p95_ms"] if gate_2_all else float("nan")
    p95_met = max(p95_2, p95_2_all) <= 60  # at both sizes, or not met
    bfcl_gate = (
        f"{bfcl_escalated:.0f}% of decisions escalated, {bfcl_k} candidates re-ranked as `calibrate` chose (its "
        "sign test at 5% passed on the calibration half; on this half the gate fixed "
        f"{bfcl_all.get('flips_fixed')} decisions and broke {bfcl_all.get('flips_broken')})"
        if bfcl_escalated
        else "the gate off: `calibrate` keeps it only when its top-1 flips on the calibration half pass a "
        "one-sided sign test at 5% (session 22). Before, BFCL's calibration had switched it on for 4 decisions "
        "fixed and 3 broken (p = 0.5), and this table measured 67.5 ms, with 2 fixed and 2 broken on this half"
    )

    def stage(row: dict[str, Any] | None, name: str) -> str:
        value = (row or {}).get("stage_p50_ms", {}).get(name)
        return f"{value:.1f}" if value is not None else "not recorded"

    if isinstance(routes, str):
        route_text = routes
    else:
        route_text = "\n".join(
            f"| {r['n']:,} | {r['path']} | {r['p50_ms']:.1f} [{r['p50_ci'][0]:.1f}, {r['p50_ci'][1]:.1f}] | "
            f"{r['p95_ms']:.1f} | {r['queries']} |"
            for r in routes
        )
        route_text = "| N | gate | p50 ms [95% CI] | p95 ms | queries |\n|---|---|---|---|---|\n" + route_text
    return f"""Command: `python bench/slb_scan.py`

Top-10 of N random unit vectors (384-d), called from Python; median µs (bootstrap 95% CI for C). `C`
is the shipped scan, which splits a matrix of 1.5 MB or more (about 4k tools) over the machine's cores,
each thread with its own heap (`threads`); `C 1 thread` is the same kernel on the calling thread alone,
timed in the same run. Since session 36 the shipped scan asks for its rows 8 ahead of the ones it reads
once the matrix reaches 16 MB (about 42k tools), where rows stream from memory rather than the cache;
`C no prefetch` is the same scan without, called alternately with `C` (the order flipping each round),
and `prefetch` the median of the paired ratios with its bootstrap 95% CI (about 1.0 below 16 MB, where
nothing differs).

{SCAN_HEADER}
{chr(10).join(rows)}

Route end to end (query embedding + scan + fusion + gate) over the GitHub + pool
registries, the gate never escalating (`no gate`) and always escalating to the cross-encoder (`gate
always`, 2 or 4 candidates re-ranked, pairs cut to 64 tokens). Since session 22 the query embedding runs
on two threads (the same vectors bit for bit, `test_the_embedder_gives_the_same_vectors_on_one_or_two_threads`);
`embedder on 1 thread` is the route as it was, in the same run. Since session 20 the re-ranked pairs run
side by side on two threads, each still a batch of one, so every logit is the same bit for bit
(`test_cross_encoder_pairs_score_the_same_side_by_side_as_one_by_one`); the `serial` rows are the pairs one
after another, as before, in the same run:

{route_text}

Against the targets:
- scan of 250 tools ≤ 5 µs from Python: {verdict(s["scan"][0]["c_us"] <= 5)} ({s["scan"][0]["c_us"]:.2f} µs);
- 100k tools ≤ 1 ms: {verdict(s["scan"][-1]["c_us"] <= 1000)} ({s["scan"][-1]["c_us"] / 1000:.2f} ms; 38 MB of INT8
  rows per query is memory-bound here, about {38_400 / s["scan"][-1]["c_us"]:.1f} GB/s, and
  {s["scan"][-1]["c_no_prefetch_us"] / 1000:.2f} ms without the prefetch in the same run; a sign-bit prefilter
  reached 1.3 ms but lost recall, see `docs/routing.md`);
- route p50 ≤ 15 ms at N = 250: {verdict(bool(no_gate) and no_gate["p50_ms"] <= 15)} in this run (the query
  embedding alone: {stage(no_gate, "embed")} ms median);
- p95 ≤ 60 ms with the cross-encoder: {verdict(p95_met)} when it runs: every decision escalating costs
  {p95_2:.1f} ms with 2 candidates at N = 250 ({p95_2_all:.1f} ms at 1,317) and {p95_4:.1f} ms with 4
  (re-ranking alone {stage(gate_2, "rerank")} and
  {stage(gate_4, "rerank")} ms median). As shipped, a route's p95 depends on whether its registry's
  calibration finds the cross-encoder worth it: BFCL above {bfcl_p95:.1f} ms over 2,555 functions with
  {bfcl_gate}. {gh_text}

The C kernel and numpy give identical rankings at every size.

Machine of this run: {s.get("cpu", "not recorded")}. The figures depend on it more than on anything
the code does: session 6's machine (AVX2, no VNNI) scanned 250 tools in 4.4–7.0 µs and 100k in 3.0 ms,
embedded a query in ~14.5 ms and spent 27–35 ms per cross-encoder pair; its three re-runs of this
command gave route p50s of 16.0, 17.2 and 19.7 ms. Session 10's blocked kernels (the query's absolute
value taken once per scan, four rows' sums reduced together) are 1.2–1.3× faster than the row-by-row
ones at 250–10k rows in an interleaved A/B on the same machine, and equal at 100k, where the scan reads
38 MB and is bound by memory. Two threads over halves of it gained little on session 10's machine
(1.15–1.2 ms against 1.25–1.4 ms, from Python threads) and were not kept; on session 18's, one core
streamed ~17 GB/s and two ~31 GB/s (100k: 1.07–1.17 ms against 1.89 ms; 10k: 169 against 251 µs), so
the scan now starts its threads in C, from about 4k tools up (1k tools take 21 µs on one thread and 47
µs on two: below that, a thread's start costs more than it saves). The same session's machine was slower at small sizes
than session 17's (250 tools in 2.48 µs there): session 17's one-thread build, timed in fresh processes
here, took 3.2–6.2 µs for 250 tools and 9–18 µs for 1k, and interleaved with this build in one process
the two were equal (5.3–5.8 µs and 9.3–15.5 µs), so the 250-tool row moves with the machine, not the code.
Session 19 found what the code did cost: the VNNI scan fed one row's six 64-byte steps through one chain
of `dpbusd`, each step waiting for the last one's result. It now interleaves four rows (four independent
chains), reduces their four sums together, and keeps a usual k's heaps on the stack. Session 18's build
and this one loaded in one process, three rounds each (median µs): 250 tools 6.5–6.9 → 4.5–4.8, 1k
19.3–21.0 → 12.5–13.3; 10k and 100k no slower. That machine's memory speed moved severalfold within
minutes (100k took 1.4–16 ms from one round to the next), so the 100k row of any one run says little.
Session 22's machine (the same type as session 21's, whose run gave 4.02 µs at 250 tools with the same
scan code) swings between two speeds: one process timing the same 250-tool matrix 3,000 times a round
got 3.7 µs in some rounds and 7.4–8.1 µs in others, pinned to either core alike and whatever the
matrix's address (`taskset -c 0|1`, 16 offsets within a page); the kernel alone in C takes 3.5 µs in
the fast state. So the 250-tool row records which state the run met. Session 23's run, with the same
scan code, met the fast state throughout: 3.51 µs at 250 tools and 1.18 ms at 100k (session 22's run:
8.09 µs and 2.31 ms), and the route's p50 at N = 250 8.7 ms (13.9). Session 25's run, the same scan and
route code again: 3.58 µs and 1.04 ms, and escalating every decision at 1,317 tools with 2 pairs had a p95
of 42.1 ms where session 23's had 62.1 (its p50 33.2 against 46.2 ms): the cross-encoder's pairs and the
embedding moved with the machine, not with the code.
Session 36's machine streamed memory more slowly: session 25's scan code, built alone and timed in five
rounds of 300 scans, took 1.5–2.1 ms at 100k where session 25's run had 1.04 ms, and at 10k two threads
took longer than one in two of its four runs of this command (145–157 against 105–110 µs; a thread's start
and join alone cost 23–38 µs in a C loop here) and less in the other two (94 against 103, 156 against 218
µs). So that session
added the one change that lowers this row on any machine, the prefetch, and measured it paired: in a
separate script, 60k tools 1.34×, 100k 1.14–1.32× over four runs, 250 and 10k tools unchanged (the
prefetches cost 5–10% there, hence the 16 MB threshold); the table's `prefetch` column is the same
comparison inside this command.
Session 50's machine (AMD EPYC with AVX-512 VNNI, so the `vnni` kernel) scans 250 tools in 1.8 µs and 1k
in 5.3 µs, and 100k in 1.39 ms on two threads (2.27 on one). There a thread's start and join cost about
40 µs, so two threads lose below ~20k tools: timed alone with `_slb.set_threads` (median µs, three
rounds each), 4k tools 28 on one against 65–69 on two, 10k 70 against 93–97, 16k 109–112 against
119–121, 25k 178–180 against 152; 100k 2.1–2.3 ms against 1.05–1.18. Session 18's machine crossed at
~4k, which set the 1.5 MB a thread; the loss here, 30 µs at 10k tools, is half a percent of a route,
so the threshold stays where it is.
Session 52's machine is also called AMD EPYC but has no AVX-512, so the `avx2` kernel runs: 250 tools in
7.1 µs, 1k in 23.7 µs, 100k in 1.52 ms on two threads (2.63 on one). The scan code is session 50's; the
250-tool target, met there at 1.8 µs, is not met in this table. Its LLM and embedder ran about 1.6×
slower than session 50's as well. This machine runs at two speeds: session 53 ran the same command twice,
minutes apart on an idle machine, and got 250 tools in 3.51 µs, then in 7.46 µs (route p50 at N = 250
12.3, then 15.5 ms); within the first run the same 1k-tool scan took 23.8 µs in one column and 12.2 µs
in the next, and one process timing one matrix in rounds flipped between 3.5 and 7.2 µs. So the
250-tool target is met in its fast state and missed in its slow one; the table keeps session 52's run.
Session 58 found the AVX2 scan at half its speed: it read its count of 32-byte steps a row at run time,
so the compiler neither unrolled the step loop nor kept the query in registers. Timed in a standalone C
program on this machine (248 rows of 384 dimensions, minimum of 20,000 calls), the same code took 3.9 µs
with the count read at run time and 2.0 µs with it a constant; two other orders (a query step over four
and over eight rows) were no faster (2.1 and 1.9–2.0 µs; at 100k rows on one thread all four took
2.2–2.9 ms, memory-bound). The scan now inlines its blocked loop with the constant count where the width
is 384, bge-small's, and with the count read at run time otherwise (`native/slb.c`, `scan_avx2_blocked`;
the same sums in the same order, so the native and numpy rankings still agree, `tests/test_slb.py`). The
table above is that build: 250 tools **4.80 µs** (7.12 in session 52's run; a second run minutes later,
in the machine's fast state, 3.29), 1k 15.5 µs (23.7). Two threads lost at 10k tools in both runs (172
and 176 µs against 95 and 111 on one), and at 100k they took 2.78 and 2.43 ms against session 52's 1.52
on this machine's name, with one thread at 2.66 and 2.59 as before: the second core was slower here than
in session 52's run; the thread threshold stays (session 50's reasoning above). The route's p50 at N =
250 went with the query embedding, 18.0 ms median in the recorded run and 13.4 in the second (10.7 in
session 52's): the machine's state, not the scan, which is 0.18 ms of it.
Session 61's machine (an Intel Xeon with AVX-512 VNNI and AMX, so the `vnni` kernel) is the first to meet
all four latency targets in one run, with session 58's scan and route code: 250 tools in 2.15 µs, 100k in
0.86 ms on two threads (1.29 on one), the route's p50 at N = 250 6.1 ms (the query embedding 5.3) and its
p95 escalating every decision with 2 pairs 23.0 ms. A second run minutes later gave 2.17 µs, 0.89 ms, 5.6
ms and 35.0 ms. On this machine the query embedding is faster on one thread than on two (route p50 4.5
against 6.1 ms, and 4.6 against 5.6 in the second run), as it was at N = 250 in session 58's run (16.7
against 20.0) but not at 1,317 tools (15.0 against 12.6): a short query gives a second thread too little to
do on a fast core; the default stays at two until a machine's figures agree from run to run. Two threads
lost at 10k tools here too (179 and 175 µs against 122 and 139 on one).
"""


def ingest() -> str:
    r = load("ingest.json")
    if r is None:
        return "_not run yet_\n"
    return f"""Command: `python bench/ingest.py`

{r["tools"]:,} tools (GitHub + pool), {r["threads"]} thread: cold ingest (empty registry cache: ingest + embed every
tool + build the router) **{r["cold"]["total_s"]:.1f} s**; warm restart from the cache (no re-embedding)
**{r["warm"]["total_s"]:.2f} s** (registry {r["warm"]["registry_s"]:.2f} s + router {r["warm"]["router_s"]:.2f} s).
Loading and sha256-checking both models: {r["model_load_s"]:.2f} s, once per process.

Against the targets: cold ingest ≤ 60 s with a progress bar {verdict(r["cold"]["total_s"] <= 60)}; warm restart ≤ 1 s
with no re-embedding {verdict(r["warm"]["total_s"] <= 1)}.
"""


def _ms(value: float | None, interval: list[float] | None = None) -> str:
    if value is None:
        return "–"
    return f"{value:.0f} ms" + (f" [{interval[0]:.0f}, {interval[1]:.0f}]" if interval else "")


ARGS_RUNS = (
    ("args-github-0.5b.json", "GitHub, routed among the 117 GitHub tools, 0.5B, with the full-schema oracle"),
    ("args-github-1.5b.json", "GitHub, routed among the 117 GitHub tools, 1.5B"),
    ("args-github-gold-0.5b.json", "GitHub, labelled tool given, 0.5B"),
    ("args-github-gold-1.5b.json", "GitHub, labelled tool given, 1.5B"),
    ("args-bfcl-0.5b.json", "BFCL (first 100 of the odd half), routed among 2,555 functions, 0.5B"),
    ("args-bfcl-1.5b.json", "BFCL (first 100 of the odd half), routed among 2,555 functions, 1.5B"),
)


# Which code each row of the table comes from: the rows are re-run one by one, as the rules change.
ARGS_PROVENANCE = """\
Session 65 added two argument rules (`docs/arguments.md`: a write told to create that carries the key its schema
says names the record to update updates it; a tool that returns content or links gets the content unless the
request asks for links) and five routing rules (`docs/routing.md`), which route the odd half among the 117 GitHub
tools 80.7% → 83.1% after `calibrate`'s refit (weights unchanged). Every row was re-run. GitHub routed 0.5B 94.9%
→ **95.5%** on routed-right requests and 77.4% → **79.9%** end to end, 17 of 18 turns, no leaks, the first argument
token 4.7× sooner (440 against 2,089 ms), 28 tokens computed per turn against 286 (**90.2%**: the full schemas of
the tools now routed to are longer, 279 → 286 at the median; the IR side did not move); 1.5B 93.6% → 93.8% and
76.4% → **78.6%**, 14 → 15 of 18 turns. Labelled tool 0.5B 95.2% → **95.9%** (278 of 290: the two requests for
a job's logs), 1.5B 93.8% → 94.5% (15 of 18 turns). BFCL rows as in session 64 (no BFCL function has such a
key or flag, and the routing rules move none of the first 100 of the odd half).
Session 64 added two argument rules (`docs/arguments.md`): the model reads a request with its misspelt verbs
spelt right, as the router does ("asign … to ravi-n and nora-t" had no assignees), and a hyphenated login named
as where or whose ("project 5 of dana-k") fills the tool's one empty owner key. Every row was re-run after the
first (all as in session 63: the odd half's three misspelt verbs were right already; the labelled-tool even half
92.0% → 93.1%); the GitHub rows again after the second. Labelled tool 0.5B 94.8% → **95.2%** (276 of 290), 1.5B
93.5% → 93.8% (14 of 18 turns); routed among the 117 tools 0.5B 94.4% → **94.9%** on routed-right requests and
77.0% → **77.4%** end to end, 17 of 18 turns, no leaks, the first argument token 4.5× sooner (417 against 1,873
ms; a first run beside CI gave 3.5×, 1,254 against 4,406 ms, and was re-run alone), 28 tokens computed per turn
against 279 (89.96%, on the 90% line); 1.5B 93.2% → 93.6% and 76.0% → **76.4%**, 14 of 18 turns. BFCL rows: no
rule of the session touches the first 100 of the odd half (the spelling rule one BFCL request elsewhere, the
owner rule no BFCL function), and their re-run gave session 63's figures.
Session 63 changed no argument rule; its routing changes (a number named by what it numbers, the fit
counting the top three first; `docs/routing.md`) and the refit of the 117 GitHub tools by
`bench/run_args_eval.sh`'s `calibrate` step route the odd half 79.5% → 80.7% among them, which moves the
GitHub routed rows: 0.5B 94.3% → 94.4% on routed-right requests and 75.6% → **77.0%** end to end, 17 of
18 dialogue turns, no leaks, the first argument token 4.7× sooner (414 against 1,938 ms), 28 tokens
computed per turn against 279 (89.96%, on the 90% line again); 1.5B 93.0% → 93.2% and 74.3% → **76.0%**
(14 of 18 turns, as before). The labelled-tool 1.5B row was re-run (93.1% → 93.5%, 14 of 18 turns; session
62's rules, not re-run then); the labelled-tool 0.5B row gave 94.8% again (a one-off run of the same
command); the BFCL rows stand (no BFCL decision moved, `decisions_ab.py`).
A first refit with the fit's old objective had moved the 117 tools' weights and routed 77.1%: 0.5B 92.6%
/ 70.5% end to end, 1.5B 92.7% / 70.6%, 26.5 tokens against 274 (90.3%), 4.6× (`docs/routing.md`).
Session 57 added one argument rule and mended the URL pattern (`docs/arguments.md`: a free-text value that
is the head of the text after the request's last colon takes the whole text; a link ends where its
sentence's punctuation begins, so `…/issues/88,` cues its number). Re-run: the GitHub 0.5B rows. Labelled
tool 93.8% → **94.1%** (273 of 290: "search issues across all of github: memory leak after websocket
reconnect", every other call the same); routed 78.3% / 93.9% / 74.9% as before (that request is routed
elsewhere), 17 of 18 turns, no leaks, the first argument token 7.4× sooner (389 against 2,873 ms), 28
tokens computed per turn against 275 (89.8%). The BFCL rows stand: with the labelled tool no BFCL call of
all 956 differs (`bench/experiments/argument_rules_ab.py`). The 1.5B rows are session 55's.
Session 55 added one argument rule (`docs/arguments.md`: a key for the kind of another key's value,
`owner_type` of `owner`, takes the option the request says beside that value, "under the acme-corp org").
Re-run: the GitHub rows of both models. 0.5B: labelled tool 93.4% → **93.8%** (272 of 290, that request,
every other call the same), routed 78.3% / 93.4% → **93.9%** / 74.6% → **74.9%**, 17 of 18 turns, no leaks,
the first argument token 7.5× sooner (333 against 2,510 ms), 28 tokens computed per turn against 275
(89.8%). 1.5B: labelled tool 92.8% → 93.1%, routed 92.6% → 93.0% / 74.0% → 74.3%, 14 of 18 turns. Routing's
rules of the session move no request of the odd half among the 117 GitHub tools, and no BFCL request has
an `owner_type`, so the BFCL rows stand.
Session 54 added two argument rules (`docs/arguments.md`: the value a request renames something to goes to
the key named for a new name; a string the request states in other letters' case is spelt as the request
spells it, which the eval, comparing without case, cannot see). Re-run: the GitHub 0.5B rows, labelled
tool 92.8% → **93.4%** (271 of 290: "Rename the label 'bug' to 'type: bug'", every other call the same),
routed 78.3% / 92.6% → **93.4%** / 74.0% → **74.6%**, 17 of 18 turns, no leaks, the first argument token
6.5× sooner (393 against 2,551 ms: the oracle's median moved, the IR side did not), 28 tokens computed per
turn against 275 (89.8%); the 1.5B rows, labelled tool 92.1% → 92.8%, routed 91.8% → 92.6% / 73.4% → 74.0%,
14 of 18 turns as before. Routing's rules of the session move no GitHub request among the 117 GitHub
tools. No BFCL request renames anything, so the BFCL rows stand.
Session 53 changed grounding only (`docs/arguments.md`: a date in slashes and a code for words spelt out
count as stated; a flag spelt as a string is set by its key's words) and the leak count to match (a code
like CAD for "Canadian dollars" is the request's value in another form, as a time zone is). Re-run: the
routed GitHub 0.5B row, 78.3% / 92.6% / **74.0%** to the decimal (213 of 230 arguments on routed-right
requests where session 52 counted 214 of 231: one call's arguments came out otherwise, as near-ties do
between runs), 17 of 18 turns, no leaks, the first argument token 7.2× sooner (387 against 2,794 ms), 28
tokens computed per turn against 275 (89.8%: the oracle's median moved, the IR side did not); BFCL 0.5B
83.9% → **84.4%** on routed-right requests and 60.9% → 61.3% end to end (the currency and hotel
requests), no leaks (one before the leak count learnt codes); BFCL 1.5B as before to the decimal. The
labelled-tool GitHub rows were not re-run: the 0.5B model's odd half gave the same 270 of 291, call for
call, with the new rules (`eval args … --gold-tool --cases`), and no GitHub request holds a slashed
date, a code or a string flag.
Session 52 re-ran every row after two changes: routing's "a change no tool makes abstains" (no
answerable GitHub request moved) and `placement.labelled_lines` ("- description: …" in a listed request
fills `body`, `docs/arguments.md`). Labelled tool: 0.5B 92.8% (270 of 291; the same code without the
rule gave 269 on this machine, where session 51's gave 270: one near-tie), 1.5B 92.1%. Routed 0.5B:
78.3% routed right, 92.6% of arguments on those, **74.0%** end to end, 17 of 18 turns, no leaks; the first
argument token **7.6×** sooner than the oracle's (354 against 2,670 ms: this machine ran about 1.6× slower
than session 51's throughout, the ratio held); 28 tokens computed per turn against 279 (89.96%), as
before. 1.5B routed 91.8% / 73.4% as before, 14 of 18 turns (15 in session 51; the old code gives 14 on
this machine too, `--limit 1` with the dialogues). BFCL 0.5B 83.0% → 83.9% of arguments on routed-right
requests, 60.4% → 60.9% end to end (167 of 199 arguments right instead of 166 of 200: the arguments of one
call came out otherwise; no rule of this session reads a BFCL request), 1.5B as before.
Session 51 re-ran every row on the same kind of machine after the routing change of that session (a
placing phrase's noun is no term) and its refit; no argument rule changed. The 117 GitHub tools' stored
calibration now routes 65 of the odd half's 83 requests right (78.3%, from 79.5%), but different ones:
routed 0.5B 92.6% of arguments on routed-right requests and **74.0%** end to end (from 71.4%), 17 of 18
turns, no leaks, the first argument token **7.4×** sooner than the oracle's; 28 tokens computed per turn
against 279, a saving of 89.96%: on the issue's 90% line, where session 50's routing put it at 90.1%
(27.5 against 278.5). The median moves with the tools routing picks; the IR itself did not change.
1.5B 91.8% / 73.4%, 15 of 18 turns; labelled tool 0.5B 92.4%, 1.5B 91.8%; BFCL unchanged to the decimal.
Then "approve", "approved", "approval(s)" came to say the word "reviews" of `get_reviews` (`docs/arguments.md`),
and the two labelled-tool rows were re-run: 0.5B 92.4% → 92.8% (270 of 291), 1.5B 91.8% → 92.1%, the one
request "has anyone approved vercel/next.js PR 71234 yet?"; routed, that request goes elsewhere, so the
routed rows stand.
Session 50 ran on a new machine (AMD EPYC with AVX-512 VNNI, a fresh environment, llama.cpp built for
it). A first re-run after a bare date for a key that asks for a timestamp became the start of its day
(`grounding.as_timestamp`; the eval already counted the date right) gave the routed 0.5B row as in
session 49 to the decimal (91.9% / 70.8%), its first argument token 6.9× sooner than the oracle's (the
machine); the 1.5B model's near-ties fell differently on this CPU: routed 91.9% / 70.9% (91.5% / 70.6%),
15 of 18 turns (14), labelled tool 91.5% (91.1%); BFCL 0.5B 83.0% / 60.4% (83.5% / 60.7%) and 1.5B 87.6%
/ 63.2% (88.7% / 63.9%), the same 74 of 100 routed right, no leaks. The rows below are the second run,
after three more rules (`docs/arguments.md`: "opened" is the event, not the state; one branch is not
both ends of a pull request; a list of choices the model left out gets the items the request names):
routed 0.5B **92.8%** on routed-right requests and **71.4%** end to end, 17 of 18 turns, no leaks, the
first argument token **7.3×** sooner (224 against 1,644 ms), 27.5 tokens computed per turn against 278.5
(90.1% fewer); 1.5B 92.3% / 71.2%, 15 of 18 turns; labelled tool 0.5B 92.4%, 1.5B 91.8%; BFCL unchanged.
Session 49 re-ran every row (`bench/run_args_eval.sh`, calibrations as session 48 left them) after four
changes (`docs/arguments.md`): the request's label compiled into each tool's block, a flag set by a
description that says only what true does ("initialize it with a README" → `autoInit`), optional free
text that only copies a name dropped, and one batch split on every generation path (`docs/kv-splice.md`).
Routed 0.5B row 91.5% → 91.9% of arguments on routed-right requests, 70.6% → 70.8% end to end (17 of 18
dialogue turns, no leaks, the first argument token 4.5× sooner than the oracle's, 363 ms against 1,640
ms), **27.5 tokens computed per turn against 278.5, 90.1% fewer** (89.8% before); the 1.5B row 91.0% →
91.5% and 70.2% → 70.6% (14 of 18 turns, 15 before). Labelled tool 0.5B 90.8% → 91.1%, 1.5B 91.1% as
before. BFCL 0.5B 84.0% → 83.5% on routed-right requests and 61.1% → 60.7% end to end, 1.5B 88.1% →
88.7% and 63.6% → 63.9%; the leak count no longer counts a clock time the request says in another form
("3pm" → `15:00`) or the schema's own default (`info_type: "opening_hours"` for "the opening hours"),
which were BFCL's two and one leaks. A later rule (a number said once leaves every key that does not want
it most) changed one call of the two 0.5B GitHub rows (gh-0069 now asks for the parent issue), the same
arguments right: the rows stand.
Session 48 re-ran every row (`bench/run_args_eval.sh`) after `bench/run_routing_eval.sh` refitted the
calibrations around the plural-head read (`mood.py`, `docs/routing.md`): the 117 GitHub tools' calibration
went back to session 45's weights and routes two more of the odd half's requests right (75.9% → 78.3%).
Routed 0.5B row 91.2% → 91.4% of arguments on routed-right requests, 67.8% → 69.6% end to end (17 of 18
dialogue turns, no leaks, the first argument token 4.4× sooner than the oracle's, 394 ms against 1,747
ms; 29 tokens computed per turn against 278, 89.6%); the 1.5B row 90.7% → 90.9% and 67.5% → 69.2% (15 of
18 turns, 14 before).
The labelled-tool and BFCL rows give the same figures as before. Then the two routed rows again, after
conventional build files became file names ("show me teh Dockerfile …" routed right among the 117 tools,
78.3% → 79.5%): 0.5B 91.5% on routed-right requests and 70.6% end to end, the first argument token 4.6×
sooner (375 ms against 1,744 ms), 28.5 tokens computed per turn against 278.5 (89.8%); 1.5B 91.0% and
70.2% (15 of 18 turns). The BFCL rows again after BFCL's refit gave it a mood weight ("tell me" read as
asking, `docs/routing.md`): routed 75% → 74%, 0.5B 84.0% on routed-right requests and 61.1% end to end
(84.2% and 62.0% before), 1.5B 88.1% and 63.6% (88.3% and 64.6%).
Session 47 re-ran every row (`bench/run_args_eval.sh`): a tool whose IR takes more than 40 tokens is
shown focused on the request (`ir.IR_TOKEN_BUDGET`; 13 of the 117 GitHub tools; `docs/arguments.md`), so
the IR the gateway uses meets the issue's length targets (median 16, p99 39 tokens, below). Routed 0.5B
row 92.1% → 91.2% of arguments on routed-right requests, 68.5% → 67.8% end to end (17 of 18 dialogue
turns, no leaks, the first argument token 4.4× sooner than the oracle's, 383 ms against 1,678 ms; 29
tokens computed per turn against 275, 89.5%); the 1.5B row 88.9% → 90.7% and 66.2% → 67.5%. With the
labelled tool 0.5B 92.2% → 90.8% and 1.5B 89.5% → 91.1% (15 of 18 dialogue turns, 14 before). The 0.5B
rows move by rounding as much as by the rule: prefilled instead of spliced, the labelled-tool odd half
gets 265 of 293 arguments right without the rule and 265 of 294 with it; the rule itself loses
`projects_get`'s owner ("project 5 of dana-k") and gains `issue_dependency_write`'s repositories.
Session 46 re-ran the two routed GitHub rows after `bench/run_routing_eval.sh` refitted the calibrations
around `compound.py` (`docs/routing.md`): the 117 GitHub tools' calibration moved by one request's rank on
the fitting half and routes three of the odd half's requests fewer right (79.5% → 75.9%). The 0.5B row
92.4% → 92.1% of arguments on routed-right requests and 71.3% → 68.5% end to end (17 of 18 dialogue turns,
no leaks, the first argument token 4.3× sooner than the oracle's, 390 ms against 1,675 ms; the median IR
28 tokens against 275, a main-context saving of 89.8%); the 1.5B row 89.3% → 88.9% and 69.0% → 66.2%
(14 of 18 turns). The three requests the rule fixes are even lines; with the labelled tool the 0.5B model
fills every argument of all three (session 45's run of `eval args --part all --gold-tool --no-oracle`: 5 of 5, 5
of 5, 6 of 6).
Session 44 re-ran the two routed GitHub rows (the first two lines of `bench/run_args_eval.sh`, after
`bench/run_routing_eval.sh` refitted the calibrations): a required repository now counts as missing when a
request names none (`docs/routing.md`), which among the 117 GitHub tools routes one request more right and
one less (79.5% either way). The 0.5B row 90.7% → 92.4% of arguments on routed-right requests and 70.9% →
71.3% end to end (17 of 18 dialogue turns, no leaks), the 1.5B row 89.0% → 89.3% and 69.7% → 69.0%; the
first argument token 4.5× sooner than the oracle's (389 ms against 1,743 ms). The median IR is now 28.0
tokens instead of 27.5 (another tool routed), so the main-context saving is 89.9%, just under the 90%
target it met at 90.1%. The other rows do not route among GitHub's tools and were not re-run; with
session 44's "-ing" stems (`docs/routing.md`) the labelled GitHub 0.5B row and the BFCL 0.5B row gave the
same figures as below (92.2%; 75% routed, 84.2% / 62.0%), run before the calibrations were refitted.
Session 43 re-ran every row (`bench/run_args_eval.sh`) on its code: the lexical mends of
`docs/routing.md` route among the 117 GitHub tools better (77.1% → 79.5%, the refitted calibration of
that registry), so the routed 0.5B row goes 90.0% → 90.7% of arguments on routed-right requests and
68.4% → **70.9%** end to end (17 of 18 dialogue turns, coreference 94.4% as before, no leaks), the 1.5B
row 89.5% → 89.0% and 68.2% → 69.7% (14 of 18 turns, 13 before). With the labelled tool 0.5B 91.5% →
92.2% (the rows had last been run on session 35's code; sessions 36–42's argument rules, measured in
`docs/arguments.md`, account for it) and 1.5B 90.2% → 89.5%. BFCL: routed 74% → 75% (session 42's
time slot), 0.5B 84.8% → 84.2% of arguments on routed-right requests (61.5% → 62.0% end to end), 1.5B
87.6% → 88.3% (63.2% → 64.6%), leaks 2 and 0. The first argument token of the routed 0.5B row came
4.5× sooner than the full-schema oracle's (362 ms against 1,636 ms, medians, same run).
Session 36 re-ran the routed 1.5B row on the IR without prose (the last row still on the IR before):
routed 77.1% as before, arguments on routed-right requests 90.0% → 89.5% (197 of 219 → 197 of 220), end
to end 68.4% → 68.2%, 13 of 18 dialogue turns (14 before), no leaks; first argument token 701 ms [641, 762]
(1,121 ms in session 34's run, which shared the cores with other work; neither is paired with anything).
Session 35 dropped the description, the scalar types and the enum quotes from the IR (19 tokens at the
median instead of 31, `docs/arguments.md`) and re-ran every row but the routed 1.5B one on it: the
routed 0.5B row 90.5% → 90.0% of arguments on routed-right requests,
68.9% → 68.4% end to end, 17 of 18 dialogue turns as before, the context of a turn 69.5 → 55 tokens
(80% fewer than the full schema's, 75% before); with the labelled tool 0.5B 91.8% → 91.5%, 1.5B 90.5%
→ 90.2% (13 of 18 dialogue turns, 14 before); BFCL 0.5B 84.7% → 84.8%, 1.5B 89.6% → 87.6% (six requests
moved, four for the worse: `temp_unit: "C"` for Celsius, an invented `years`, a team named with the words
around it, a card too many; inside the noise of about 200 arguments, and the 0.5B row moved the other way).
Session 34 re-ran the GitHub rows that were older than session 33's code (`bench/run_args_eval.sh`'s
GitHub commands, the stored calibration of the 117 GitHub tools): with the labelled tool, 0.5B 91.5% →
91.8% and 1.5B 90.8% → 90.5% (14 of 18 dialogue turns, as before), no leaks; and added the 1.5B model
routed (no oracle): routed 77.1%, arguments on routed-right requests 90.0% against the 0.5B model's
90.5%, end to end 68.4% against 68.9%, 14 of 18 dialogue turns against 17. The quality model is no
better on GitHub: grounding and placement take most of what the model would get wrong
(`docs/arguments.md`), and what is left (a flag the request implies, `return_content`, a head branch in
the user's fork) the larger model misses as often. Its first argument token came at 1,121 ms [937,
1,290] against the 0.5B model's 460 ms (medians of separate runs, not paired, the 1.5B one while one-off
routing scripts shared the two cores). The routed 0.5B row is session 33's run. The BFCL rows, re-run on
session 34's code (its routing moves other BFCL requests, none among these 100), are the same to the
decimal as session 17's: routed 74%, 0.5B 84.7% / 61.3%, 1.5B 89.6% / 64.6%.
Session 24's decoder feeds a choice with the rest of the one option it leaves and guesses copied
values from the request, checking each guess in a batch (below, "Fewer decodes"); the routed GitHub row
re-run with both (`… --part odd --no-rerank --threads 2 --no-oracle --dialogues …`) is the same to the
decimal: routed 74.7%, arguments on routed-right requests 89.8%, end to end 69.3%, 17 of 18 dialogue
turns, validity 100%, no leaks.
Session 22 changed routing (BM25's k1 0.8, the calibrations refitted; `docs/routing.md`) and
re-ran the routed GitHub row without the oracle (`… --part odd --no-rerank --threads 2 --no-oracle
--dialogues …`): routed 72.3% → 74.7%, arguments on routed-right requests 89.8% as before, end to end
66.7% → 69.3%, 17 of 18 dialogue turns as before, validity 100%, no leaks; with the labelled tool 91.8%
as before (the argument path did not change). The BFCL 0.5B row, re-run with it, routes and fills the
same 100 requests to the decimal (74%, 84.7%, 61.3%).
Session 21 re-ran the routed GitHub row on session 20's machine without the oracle
(`… --part odd --no-rerank --threads 2 --no-oracle --dialogues …`): session 19's code gives 15 of 18
dialogue turns there, not 17 (the 0.5B model's near-ties fall the other way on that CPU); with session
21's two placement and grounding rules (`docs/arguments.md`) 17 of 18 again, routed 72.3%, arguments on
routed-right requests 89.8%, end to end 66.7%, and 91.8% with the labelled tool. The two 0.5B GitHub rows
were then from session 19's code, the 1.5B row from session 18's
(`bench/run_args_eval.sh`'s GitHub commands; the BFCL rows were not re-run and are from session 17's
code, whose changes since touch neither BFCL's grounding nor, beyond one decision, its routing). Session
19 taught the generator a flag's common opposite ("public pls" → `private: false`): with the labelled
tool 91.2% → 91.5%, that request alone; the routed row is the same to the decimal as session 18's (that
request abstains there), first argument token 4.13× sooner than the oracle in this run (3.99× in session
18's). With the labelled tool nothing else has moved since session 15: 90.8% with the 1.5B model, 14 of
18 dialogue turns for the 1.5B model, to the decimal. In session 18 the routed row had moved with its
routing: that session's calibration of the 117 GitHub tools (typo correction checked to one edit) chose
lexical weight 0.2 instead of 0.3, which routes 2 of the 83 requests fewer to an acceptable tool and
abstains on 3 (a request that abstains is a routing error here), and catches more irrelevant requests
(see the routing section): routed 74.7% → 72.3%, arguments right on routed-right requests 90.0% → 89.4%,
end to end 71.0% → 66.4%; dialogue turns 17 of 18 as before; the main-context saving 89.9% → 90.0% (27.5
against 274 tokens computed per turn). Earlier sessions, for the record: session 16 taught grounding the
values the model normalises (time zones, times of day, number words, percentages, dates said another
way): BFCL arguments right on routed-right requests 78.7% → 81.2% (0.5B) and 82.9% → 87.6% (1.5B);
session 17 fixed numbers (signs, exponents, thousands, rates): 0.5B 81.2% → **84.7%** (end to end 58.8%
→ **61.3%**), 1.5B 87.6% → **89.1%** (63.1% → **64.2%**, leaks 3 → 1). End to end on GitHub stays far
from 90% because routing does. `nexus.schema: ir-focused` (a shorter IR written for each request) is
measured in `docs/arguments.md` and is not the default: 1.4 points fewer arguments right over both
halves in session 9; in session 21, 2.3 points fewer on the odd half and the same on the even one, and
its first argument token 1.5–1.6× later (a per-request IR cannot be spliced from a compiled block).
"""

# The IR run the full-schema run was paired with (same session, same code); the IR rows above have moved
# on since, so comparing against them would mix code from different sessions.
PAIRED_IR = {"argument_accuracy_routed": 0.771, "placeholder_leaks": 3, "coreference_accuracy": 0.389}


def arguments() -> str:
    rows = []
    for name, title in ARGS_RUNS:
        r = load(name)
        if r is None:
            rows.append(f"| {title} | _not run yet_ | | | | | | |")
            continue
        rows.append(
            f"| {title} | {r['n']} | {pct(r['routed_accuracy'])} | {pct(r['argument_accuracy_routed'])} | "
            f"{pct(r['argument_accuracy_e2e'])} | {pct(r['json_validity'])} / {pct(r['schema_validity'])} | "
            f"{r['placeholder_leaks']} | {pct(r['coreference_accuracy'])} |"
        )
    main_run = load("args-github-0.5b.json")
    speed = "_oracle not run yet_\n"
    if main_run and main_run["first_arg_ms"]["ratio"]:
        f, t = main_run["first_arg_ms"], main_run["prompt_tokens"]
        held = main_run.get("context_tokens") or t
        speed = f"""First argument token (median, bootstrap 95% CI, same model, same decoder, system prefix warm
for both; the IR spliced from its compiled block, the oracle prefilling the full schema every turn):
compressed IR {_ms(f["ir"], f["ir_ci"])}, full JSON schema {_ms(f["full_schema"], f["full_schema_ci"])}:
**{f["ratio"]:.2f}×** sooner (session 13, the IR prefilled after the window: 3.24×; 3.12× in session 12's
run, 3.50× in session 11's on another machine, 3.40× in session 10's, 3.85× in session 8's).
Tokens each turn computes beyond the shared prefix (median; the IR's block is spliced, not computed):
IR {t["ir"]:.1f}, full schema {t["full_schema"]:.1f}: **{100 * t["saving"]:.2f}% fewer**. What the context
holds beyond the prefix: IR {held["ir"]:.1f}, full schema {held["full_schema"]:.1f}, {100 * held["saving"]:.0f}% fewer.
"""
    ir = load("ir_tokens.json")
    ir_text = "_not run yet_\n"
    if ir:
        ir_text = "| form | median | p90 | p99 | max |\n|---|---|---|---|---|\n" + "".join(
            f"| {form} | {ir[form]['median']:.0f} | {ir[form]['p90']:.0f} | {ir[form]['p99']:.0f} | "
            f"{ir[form]['max']} |\n"
            for form in (
                "ir_budgeted",
                "ir_budgeted_per_request",
                "ir",
                "ir_focused",
                "ir_focused_per_request",
                "choice",
                "signature",
                "full_schema",
            )
            if form in ir
        )
    decode = load("constrained_decode.json")
    decode_text = "_not run yet_\n"
    if decode:
        m = decode["ms_per_token"]
        decode_text = (
            f"Command: `python bench/constrained_decode.py` (n = {decode['n']} GitHub requests, {decode['threads']} "
            f"threads). Median ms per output token: our walker {m['walker']['median']:.1f} "
            f"{ci_ms(m['walker']['ci'])}, llama.cpp's GBNF sampler on the same grammar "
            f"{m['gbnf_sampler']['median']:.1f} "
            f"{ci_ms(m['gbnf_sampler']['ci'])}, unconstrained greedy {m['unconstrained']['median']:.1f} "
            f"{ci_ms(m['unconstrained']['ci'])}: the sampler costs **{decode['gbnf_over_walker']:.1f}×** "
            "the walker.\n"
        )
    speed_doc = load("decode_speed.json")
    speed_text = "_not run yet_\n"
    if speed_doc:
        ways = speed_doc["ways"]
        table = "".join(
            f"| {way} | {w['decode_ms']:.0f} {ci_ms(w['decode_ms_ci'])} | {w['ratio_p50']:.2f}× "
            f"{ratio_ci(w['ratio_p50_ci'])} | {w['ratio_total']:.2f}× | {w['decodes_p50']:.0f} | "
            f"{100 * w['arguments_right']:.1f}% | {w['same_arguments_as_plain']} of {speed_doc['n']} |\n"
            for way, w in ways.items()
        )
        speed_text = (
            f"Command: `python bench/decode_speed.py` (n = {speed_doc['n']} GitHub requests, {speed_doc['part']} half, "
            f"labelled tool, {speed_doc['threads']} threads; each request decoded the three ways one right after "
            "the other, each computing its prompt from the warm prefix). `merged`: a choice that leaves one "
            "option is fed with the option's rest in one batch; `merged+guessed` (the gateway): also values "
            "guessed from the request and checked in the same batch as the model's own token, "
            f"{speed_doc['kept_tokens']} of {speed_doc['guessed_tokens']} guessed tokens kept "
            "(`docs/arguments.md`). Decode time per call, median; ratio to `plain` per call (median, bootstrap "
            "95% CI) and in total; batches decoded per call (median); arguments right; requests whose "
            "arguments equal `plain`'s (a batch rounds differently from one-by-one decoding, and the 0.5B "
            "model's near-ties tip either way).\n\n"
            "| way | decode ms | vs plain, per call | vs plain, total | decodes | arguments right | same as plain |\n"
            "|---|---|---|---|---|---|---|\n" + table + "\nOn this 2-core CPU each extra token of a batch costs "
            "about 60% of a decode of its own, so saving decodes buys little; where a batch's extra rows are "
            "nearly free (a GPU or Metal build of llama.cpp) it would buy more, which is not measured here.\n"
        )
    return f"""Commands: `SHARED=../shared/data bash bench/run_args_eval.sh` (every row below; definitions in
`nexus_gateway/eval_args.py`). Per-argument accuracy = right labelled arguments / (labelled arguments +
arguments sent that the label lacks); end to end charges a routing error with all its arguments.

| run | n | routed | args (routed right) | args end to end | JSON / schema valid | placeholder leaks | coreference |
|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

{ARGS_PROVENANCE}
{speed}
Targets (issue 4): end-to-end argument accuracy ≥ 90% with the 0.5B model, validity 100%, leaks 0,
coreference ≥ 90%, first argument token ≥ 3× sooner, ≥ 90% fewer tokens. See the closing note of the
session for which are met; `docs/arguments.md` says what helped and what did not.

### Compressed IR length (model tokens, GitHub registry)

Command: `python bench/ir_tokens.py` (Qwen2.5 tokenizer, 117 tools). Target: median ≤ 20, p99 ≤ 40.
`ir_budgeted`: what the gateway shows since session 47, the `ir` form of each tool, or the focused form
for the 13 tools whose `ir` takes more than 40 tokens (`ir.IR_TOKEN_BUDGET`), here for a request that
names none of their optional parameters; `ir_budgeted_per_request`: what each of the 166 dev requests'
prompts holds for its labelled tool in that form. `ir`: every parameter but pagination, scalars untyped,
enum values unquoted, no description (session 35); `ir_focused` (`nexus.schema: ir-focused`, session 9):
each tool as a request that names none of its optional parameters sees it (required parameters, three
enum values); `ir_focused_per_request`: what each dev request's prompt holds in that form for its
labelled tool (the optional parameters and enum values the request names shown too); `choice`: a
candidate's line when the model chooses among close tools, which was the default IR up to session 34
(numbers and flags typed, enum values quoted, seven words of description). The `ir` form met the median
since session 35 but not the p99: the consolidated tools (`projects_write`, `actions_list`,
`issue_write`) carry a dozen parameters and long `method` enums. The focused form for every tool costs
arguments (session 21: 89.2% against 91.5% on the odd half, 93.4% against 93.5% on the even one); for
the 13 long tools only no loss shows beyond rounding (session 47: 91.6% of the arguments of all 166
requests with the labelled tool either way; the odd half's rows above move by a few arguments, as much
as splicing or prefilling alone moves them; `docs/arguments.md`), and the budgeted form meets both
targets.

{ir_text}
### Cost of the constraint

{decode_text}
### Fewer decodes: merged choices and guessed values

{speed_text}"""


def unrelated_window() -> str:
    """Arguments right after an unrelated earlier turn: the revision before session 41 and today's."""
    rows = []
    for part in ("odd", "even"):
        for name in (f"unrelated-window-{part}-39553f0.json", f"unrelated-window-{part}.json"):
            r = load(name)
            if r is None:
                rows.append(f"| {part} | _not run yet_ | | |")
                continue
            cells = []
            for side in ("after an unrelated turn", "alone"):
                right, total = r["totals"][side]
                cells.append(f"{right}/{total} = {pct(right / total)} {ci(list(wilson(right, total)))}")
            rows.append(f"| {part} | {r['rev']} | {' | '.join(cells)} |")
    table = "\n".join(rows)
    return f"""Command: `python bench/experiments/unrelated_window.py --part odd|even --json
bench/results/unrelated-window-<part>.json` (the rows at 39553f0 run in a worktree of that revision with
`PYTHONPATH=<worktree>`). Each GitHub dev request, labelled tool, 0.5B model, 2 threads, generated after
the half's previous request as one earlier turn (its labelled tool and arguments, a stub result), and
alone; arguments right / arguments scored. Up to 39553f0 every request's prompt showed the earlier turns;
since session 41 a request is read alone, and with them only when it points back and leaves a required
argument unsaid (`docs/arguments.md`).

| half | revision | after an unrelated turn [95% CI] | alone [95% CI] |
|---|---|---|---|
{table}
"""


def splice() -> str:
    document = load("splice.json")
    if document is None:
        return "_not run yet_\n"
    rows = []
    order = ("none", "suffix", "seam", "scattered", "auto")
    for cell in sorted(document["cells"], key=lambda c: (c["K"], c["dpos"], order.index(c["variant"]))):
        if cell["K"] != 4 and cell["variant"] == "none":
            continue  # "none" does not depend on K
        rows.append(
            f"| {cell['dpos']} | {cell['K']} | {cell['variant']} | {cell['repair_tokens']:.0f} | {cell['kl']:.2e} | "
            f"{cell['top1_agreement']:.2f} | {cell['ttft_splice_ms']:.0f} | {cell['ttft_prefill_ms']:.0f} | "
            f"{cell['ttft_ratio']:.2f}× | {ratio_ci(cell.get('ttft_ratio_ci'))} |"
        )
    autos = [c for c in document["cells"] if c["variant"] == "auto"]
    deep = [c for c in autos if c["dpos"] > 0]
    at_zero = [c for c in autos if c["dpos"] == 0]
    floor_max = document["noise_floor_kl_max"]
    partial_exact = [
        c
        for c in document["cells"]
        if c["dpos"] > 0
        and c["variant"] != "auto"
        and c["kl"] <= floor_max
        and c["repair_tokens"] < max(x["repair_tokens"] for x in document["cells"] if x["dpos"] == c["dpos"])
    ]
    lowest = min(autos, key=lambda c: c["ttft_ratio"])
    below = [c for c in autos if c.get("ttft_ratio_ci") and c["ttft_ratio_ci"][1] < 1.0]
    agreement = "met" if all(c["top1_agreement"] == 1.0 for c in document["cells"]) else "not met"
    n = document["cells"][0]["n"]
    agreeing = sum(round(c["top1_agreement"] * c["n"]) for c in document["cells"])
    compared = sum(c["n"] for c in document["cells"])
    targets = f"""Against the targets:
- top-1 agreement 1.0 at every Δpos: **{agreement}**
  ({agreeing} of {compared} next tokens over every cell; n = {n} a cell, so a cell's Wilson 95% lower bound
  is {wilson(n, n)[0]:.2f}).
- KL after repair at or below the noise floor: **met by what the gateway does** (`auto`: KL
  {min(c["kl"] for c in autos):.1e}–{max(c["kl"] for c in autos):.1e} at every Δpos, against a floor of
  {document["noise_floor_kl"]:.1e}, max {floor_max:.1e}), **not by any partial repair**
  ({len(partial_exact)} cells with a partial budget reach the floor's maximum).
- TTFT ≥ 2× for Δpos ≤ 512 at the K that holds fidelity: **met at Δpos 0 only** (`auto`
  {min(c["ttft_ratio"] for c in at_zero):.1f}–{max(c["ttft_ratio"] for c in at_zero):.1f}×, exact); deeper,
  fidelity holds only with a full recompute, which is a prefill.
- never below 1.0×: `auto` deeper than the anchor is the prefill itself plus a ~30 µs compatibility check;
  paired with a prefill timed right before it, its median ratios are
  {min(c["ttft_ratio"] for c in deep):.2f}–{max(c["ttft_ratio"] for c in deep):.2f}× (lowest: Δpos
  {lowest["dpos"]}, K {lowest["K"]}, {ratio_ci(lowest.get("ttft_ratio_ci"))}); {len(below)} of {len(autos)} cells
  have an interval wholly below 1.0.
"""
    gate = document.get("drift_gate")
    gate_text = (
        f"Spearman ρ = {gate['spearman_rho']:.2f} [{gate['ci'][0]:.2f}, {gate['ci'][1]:.2f}] over {gate['n_heads']} "
        "(Δpos, request, KV head) triples"
        if gate
        else "not measured"
    )
    return f"""Command: `nexus-gateway bench splice --requests {n} --threads 2 --json bench/results/splice.json --plot
docs/img/splice.png` ({document["model"]}, V layout {document["v_layout"]}, RoPE re-rotation
{document["rope_backend"]}, n = {n} requests per cell; the bundled requests over the MCP reference servers'
tools). KL = mean next-token KL divergence from a prefill of the same tokens (nats); top-1 = share of
requests whose next token agrees; TTFT = schema + request to the first logits, median; ratio = prefill /
splice. Noise floor (the same text prefilled with another batch split): **{document["noise_floor_kl"]:.1e}**
(max {document["noise_floor_kl_max"]:.1e}). Greedy full argument generations spliced vs prefilled:
**{"identical" if document["greedy_identical"] else "differ: " + ", ".join(document["greedy_differing"])}**.

![fidelity and speed vs Δpos](img/splice.png)

| Δpos | K | variant | repaired tokens | KL | top-1 | splice ms | prefill ms | ratio | 95% CI |
|---|---|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

Variants: `none` = spliced, no repair; `suffix` = the policy's trailing-suffix re-decode (R(Δpos), the
issue's formula); `seam` = the same budget spent on the first block tokens instead (where the block meets
text it was not compiled after); `scattered` = the same budget on the tokens whose keys drift most
(CacheBlend-style, chosen with the true keys: an oracle); `auto` = `Splicer.place` with the gateway's
default policy: it splices at Δpos 0, where the block is exact, and prefills deeper, because no partial
repair is (`RepairPolicy(approximate=True)` would splice there with the suffix repair when its measured
rates predict that cheaper). `auto`'s prefill column is timed right before each of its runs, in the
same cache state (paired); the other variants share one prefill timed before them. The 95% CI is a
bootstrap interval of the median per-request ratio.

{targets}
Drift gate (reference-free: each KV head's key variance over the inserted context, against the true
drift of that head's spliced values): {gate_text}.
"""


def full_schema_mode() -> str:
    accuracy = load("args-github-gold-full-0.5b.json")
    timing = load("args-github-gold-full-splice-timing.json")
    if accuracy is None or timing is None:
        return "_not run yet_\n"
    f = timing["first_arg_ms"]
    return f"""What `nexus.schema: full` buys. Commands: `nexus-gateway eval args --registry
../shared/data/registries/github-mcp.json --queries ../shared/data/queries/github-dev.jsonl --part odd
--no-rerank --threads 2 --gold-tool --no-oracle --schema full --dialogues
../shared/data/queries/github-dialogues-dev.jsonl` (accuracy; n = {accuracy["n"]}) and the same with
`--limit 20` and the oracle on (timing; the blocks compiled before first use).

| labelled tool given, 0.5B | the IR | the full schema, spliced |
|---|---|---|
| argument accuracy | {pct(PAIRED_IR["argument_accuracy_routed"])} | {pct(accuracy["argument_accuracy_routed"])} |
| placeholder leaks | {PAIRED_IR["placeholder_leaks"]} | {accuracy["placeholder_leaks"]} |
| coreference (dialogue turns) | {pct(PAIRED_IR["coreference_accuracy"])} | {pct(accuracy["coreference_accuracy"])} |

First argument token with the full schema spliced from its block {_ms(f["ir"], f["ir_ci"])} vs the same
schema prefilled {_ms(f["full_schema"], f["full_schema_ci"])}: **{f["ratio"]:.1f}×** sooner (n = 20; commit 9ccc851's
code, when the IR path still prefilled the IR; since session 14 the IR is spliced from its own block the
same way). Reading the full schema did not make the 0.5B model's arguments better, so `ir` stays the
default; `full` is there for models that use it.
"""


def prefix_replay() -> str:
    document = load("prefix_replay.json")
    if document is None:
        return "_not run yet_\n"
    rows = "".join(
        f"| {name} | {v['p50']:.0f} [{v['ci'][0]:.0f}, {v['ci'][1]:.0f}] | {v['speedup_vs_cold']:.1f}× |\n"
        for name, v in document["ttft_ms"].items()
    )
    return f"""Command: `python bench/prefix_replay.py` ({document["model"]}, {document["threads"]} threads; the
{document["sessions"]} GitHub dialogues, {document["turns"]} turns interleaved across sessions, prompts as
`ArgumentGenerator` renders them, median {document["prompt_tokens_median"]:.0f} tokens). Share of prompt
tokens served warm by the arena: **{100 * document["arena_hit_rate"]:.0f}%**. Measured with session 14's prompt
order (`[prefix] [Tool: IR] [window] [Request]`) and session 35's IR (no description words: 19
tokens at the registry median instead of 31), in session 38. Earlier runs: session 22's, on a slower
machine with the longer IR, cold 6.9 s, arena 5.8×, prefix alone 5.3×, blocks 8.0×; session 15's, cold
4.5 s, arena 4.8×, prefix alone 5.1×. The dialogues' turns change tool every turn, so what the arena
keeps beyond the fixed prefix seldom matches the next prompt, and the arena does no better than keeping
the prefix alone (their intervals overlap in every run; session 13's order, the window before the IR,
had given 5.1× and 5.2×). The shorter IR left less for a warm cache to save (cold 2.9 s here), so the
arena alone is under the issue's 5× in this run; the gateway's default path below is over it.
`blocks` is the gateway's default path: the prefix warm, the IR spliced from its
compiled block ({document.get("blocks_spliced", "?")} of {document["turns"]} turns spliced), the window and the request
computed; the arena still serves the turns of a model whose cache cannot be spliced.

| path | TTFT median ms [95% CI] | vs cold |
|---|---|---|
{rows}"""


def prefix_start() -> str:
    document = load("prefix_start.json")
    if document is None:
        return "_not run yet_\n"
    rows = "".join(
        f"| {name} | {v['p50']:.0f} [{v['ci'][0]:.0f}, {v['ci'][1]:.0f}] | {v['n']} | {v['speedup']:.1f}× |\n"
        for name, v in document["ms"].items()
    )
    later = document["ms"]["later starts"]
    return f"""Command: `python bench/prefix_start.py` ({document["model"]}, {document["threads"]} threads). Every
turn's prompt begins with the generator's system prefix ({document["prefix_tokens"]} tokens). Until
session 19 each start prefilled it, the most of a one-shot `nexus-gateway ask`; now the first start keeps
it as a block compiled at position 0 and later starts splice it there, exact (Δpos 0: the same cells bit
for bit, `test_the_system_prefix_starts_warm_from_its_own_block_bit_for_bit`). Later starts have the
prefix warm **{later["speedup"]:.0f}×** sooner. One engine, the three alternating, the arena emptied before each.
A whole one-shot `nexus-gateway ask --config examples/local.json "what time is it in Tokyo"` (five local
servers, `/usr/bin/time`, one run each, session 19): 19.2 s before, 12.4 and 13.9 s after; the rest is
the upstream servers starting (~4 s, `npx`), imports, loading the model beside them on two cores, and the
call. Session 21 stopped warming the tool chooser's prompt when `nexus.judge` is off (the default, when
that prompt is never read): three runs each on session 20's machine, 12.8–13.9 s before, 11.3–13.0 s after.

| start | median ms [95% CI] | n | vs prefill |
|---|---|---|---|
{rows}"""


def block_files() -> str:
    document = load("block_files.json")
    if document is None:
        return "_not run yet_\n"
    rows = "".join(
        f"| {name} | {v['apparent_mb']:.1f} | {v['on_disk_mb']:.1f} | {v['copied_mb']:.1f} | "
        f"{v['read_ms']:.3f} [{v['read_ms_ci'][0]:.3f}, {v['read_ms_ci'][1]:.3f}] |\n"
        for name, v in document["layouts"].items()
    )
    ratios = document["ratio_v1_over_v2"]
    form = "compressed-IR" if document["schema"] == "ir" else "full-schema"
    return f"""Command: `python bench/block_files.py` ({document["model"]}; the {form}
blocks of the {document["tools"]} GitHub tools, which the gateway compiles in the background at start,
each written in both layouts). Sections on 2 MiB boundaries (`.atb` version 1, until session 38) left
holes that a file system with sparse files does not store, but a copy that does not look for holes
writes out (Python's `shutil.copy2` here; zip, and tar or rsync without their sparse flags): after it
the registry cache's blocks took **{ratios["copied_mb"]:.1f}×** the bytes of the page-aligned layout
(version 2). Reading a block (map, checksum, views; best of 5 per file, median over the files) is no
slower. This build reads both versions.

| layout | apparent MB | on disk MB | after a plain copy MB | read ms, median [95% CI] |
|---|---|---|---|---|
{rows}"""


def ci_ms(values: list[float]) -> str:
    return f"[{values[0]:.1f}, {values[1]:.1f}]"


def main() -> None:
    text = f"""# Benchmarks

Latest figures, each with the exact command that produced it (regenerate this page with
`python bench/report.py`). Machine: 2 cores, 24 GB, no GPU, Python 3.11, shared with other work, so
figures move by ±15% between runs. Raw JSON in `bench/results/`. Proportions carry Wilson 95% intervals,
medians bootstrap 95% intervals.

## Gateway overhead (issue 2)

{overhead()}
## MCP conformance (issue 2)

{conformance()}
## Routing accuracy (issue 3)

{routing()}
### The local LLM as judge, decided per registry by `calibrate --judge`

{judge()}
## SLB scan and route latency (issue 3)

{scan()}
## Ingest (issue 3)

{ingest()}
## Argument generation (issue 4)

{arguments()}
### Arguments after an unrelated earlier turn

{unrelated_window()}
## Compiled schema blocks and the KV splice (issue 5)

{splice()}
### Block files on disk

{block_files()}
### Full-schema mode through spliced blocks

{full_schema_mode()}
## Radix prefix arena (issue 5)

{prefix_replay()}
### The system prefix at start

{prefix_start()}"""
    (ROOT / "docs" / "benchmarks.md").write_text(text)
    print("wrote docs/benchmarks.md")


if __name__ == "__main__":
    main()
