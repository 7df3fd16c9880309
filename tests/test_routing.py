"""Routing with the real pinned models: embedder, cross-encoder, router, `call`, eval and calibrate."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import TESTS, real_servers, result_json, result_text, run_cli, stdio_gateway, write_config
from mcp import ClientSession

from nexus_gateway.affordance import (
    argument_slots,
    filled_slots,
    id_parameter_words,
    names_a_slug,
    names_a_whole_number,
    numbered_objects,
    query_slots,
    required_identifiers,
    requires_an_identifier,
    tool_affordances,
    tool_requirements,
)
from nexus_gateway.compound import change_clauses, clause_operation, requested_fields
from nexus_gateway.confirmation import confirmation_reason
from nexus_gateway.embedder import CrossEncoder, Embedder, EmbedderSpec
from nexus_gateway.lexical import LexicalDocument, tokenize, without_place_nouns, without_values
from nexus_gateway.models import BGE_SMALL, ModelError, PinnedFile, verify_file
from nexus_gateway.mood import (
    READ,
    WRITE,
    ChangeVocabulary,
    ObjectChanges,
    asked_changes,
    asked_objects,
    denied_words,
    judge_candidates,
    named_for,
    opposed_name_words,
    refused_changes,
    request_mood,
    spelled_verbs,
    tool_mood,
)
from nexus_gateway.pasted import Pasted, points_back, split_pasted, without_pasted
from nexus_gateway.platforms import LOCAL_MACHINE, named_platforms, server_platforms
from nexus_gateway.routing import (
    REPOSITORY_NOWHERE,
    Calibration,
    RouteDoc,
    Router,
    distinguishing_requirements,
    embedded_intent,
    lexical_documents,
    server_affordances,
    superseded_by,
    tool_document,
)
from nexus_gateway.window import SessionWindow

FIXTURES = TESTS / "fixtures"
REGISTRY = FIXTURES / "local_registry.json"
QUERIES = FIXTURES / "local_queries.jsonl"
IRRELEVANT = FIXTURES / "local_irrelevant.jsonl"
DIALOGUES = FIXTURES / "local_dialogues.jsonl"


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def test_embedder_is_deterministic_and_normalised(embedder: Embedder) -> None:
    first = embedder.embed_query("list open pull requests")
    second = embedder.embed_query("list open pull requests")
    assert first.shape == (384,) and np.array_equal(first, second)
    assert abs(float(np.linalg.norm(first)) - 1.0) < 1e-5
    near = embedder.embed_document(tool_document("list_pull_requests", "List pull requests in a repository."))
    far = embedder.embed_document(tool_document("get_current_time", "Get current time in a specific timezone."))
    assert float(first @ near) > float(first @ far) + 0.1


def test_the_embedder_gives_the_same_vectors_on_one_or_two_threads(embedder: Embedder) -> None:
    """Queries embed on two threads (faster); the registry cache and the calibrations hold vectors made
    on one, so the two must agree to the bit, documents and queries, short and long."""
    assert embedder.spec.threads == 2
    one = Embedder(EmbedderSpec(threads=1))
    texts = [
        "list open pull requests",
        "In northwind/inventory-api, open src/config/database.ts on the release/2.4 branch " * 4,
    ]
    for text in texts:
        assert np.array_equal(one.embed_query(text), embedder.embed_query(text))
        assert np.array_equal(one.embed_document(text), embedder.embed_document(text))
    assert one.model_tag == embedder.model_tag


def test_cross_encoder_prefers_the_relevant_document() -> None:
    scores = CrossEncoder().score(
        "what time is it in Tokyo", ["get current time: Get current time in a timezone", "git log: Shows commits"]
    )
    assert scores[0] > scores[1]


def test_cross_encoder_pairs_score_the_same_side_by_side_as_one_by_one() -> None:
    documents = [
        "get current time: Get current time in a timezone",
        "git log: Shows commits",
        "convert time: Convert a time between timezones",
        "read file: Read a file's contents",
    ]
    parallel = CrossEncoder(workers=2).score("what time is it in Tokyo", documents)
    serial = CrossEncoder(workers=1).score("what time is it in Tokyo", documents)
    assert parallel.tolist() == serial.tolist()  # bit for bit, in the documents' order
    assert int(np.argmax(parallel)) == 0


def test_a_corrupted_model_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"x" * 10)
    pin = BGE_SMALL.files[0]
    with pytest.raises(ModelError, match="partial or wrong file"):
        verify_file(bad, pin)
    with pytest.raises(ModelError, match="refusing to use it"):
        verify_file(bad, PinnedFile("model.onnx", 10, "0" * 64))


def chosen_tools(router: Router, *requests: str) -> list[str | None]:
    """The tool each request routes to, the gate off (what most tests here compare)."""
    return [router.route(request, allow_rerank=False).chosen for request in requests]


def local_router(embedder: Embedder, calibration: Calibration | None = None, registry: Path = REGISTRY) -> Router:
    from nexus_gateway.lexical import LexicalDocument

    tools = json.loads(registry.read_text())
    docs = [
        RouteDoc.of_tool(
            f"{t['server']}__{t['name']}",
            t["name"],
            t["description"],
            LexicalDocument.of_tool(t["name"], t["description"], t["inputSchema"]).tokens(),
            t["inputSchema"],
            t.get("annotations"),
            t["server"],
        )
        for t in tools
    ]
    vectors = np.stack([embedder.embed_document(tool_document(t["name"], t["description"])) for t in tools])
    return Router(embedder, docs, vectors, calibration or Calibration(floor=0.0), CrossEncoder())


def test_router_picks_the_right_local_tool(embedder: Embedder) -> None:
    router = local_router(embedder)
    queries = [json.loads(line) for line in QUERIES.read_text().splitlines()]
    right = 0
    for query in queries:
        result = router.route(query["query"])
        assert result.chosen is not None
        right += result.chosen.split("__", 1)[1] in query["acceptable_tools"]
        assert set(result.timings_ms) >= {"embed", "scan", "fuse"}
    # 16/20 is where the router stands on these intents (dense alone: 17, see docs/routing.md); the bar
    # guards against regressions, the eval harness tracks the real figure.
    assert right >= 16, f"only {right}/{len(queries)} local intents routed right"


def test_a_time_of_day_routes_to_the_tool_that_takes_one(embedder: Embedder) -> None:
    """Both time tools speak of time zones; only ``convert_time`` takes a time of day. These went to
    ``get_current_time`` before the time slot, and "the time in Sydney" went to ``convert_time``."""
    router = local_router(embedder)
    assert router.route("what is 10am Tokyo time in Berlin").chosen == "time__convert_time"
    assert router.route("my meeting is at 2pm Berlin time, what's that in India").chosen == "time__convert_time"
    assert router.route("what's the time in Sydney").chosen == "time__get_current_time"


def test_a_tool_its_server_retired_yields_to_the_one_it_names(embedder: Embedder) -> None:
    """The filesystem server keeps ``read_file`` ("DEPRECATED: Use read_text_file instead.") beside
    ``read_text_file``; the plainer name took "read notes.txt". The request's score for the retired tool
    goes to its successor, and the retired one ranks below it."""
    assert superseded_by("Read a file as text. DEPRECATED: Use read_text_file instead.") == "read_text_file"
    assert superseded_by("Deprecated in favour of `issue_write`.") == "issue_write"
    assert superseded_by("workspaceRoot (deprecated): use the new field instead") is None
    result = local_router(embedder).route("read notes.txt", limit=10)
    ranked = [c.id for c in result.candidates]
    assert result.chosen == "filesystem__read_text_file", ranked
    assert "filesystem__read_file" not in ranked[:3], ranked


PROJECT_TOOLS = [
    {
        "server": "github",
        "name": "projects_write",
        "description": "Create and manage GitHub Projects: create projects, add/update/delete items.",
        "inputSchema": {"type": "object", "properties": {"owner": {"type": "string"}, "title": {"type": "string"}}},
    },
    {
        "server": "basic-memory",
        "name": "create_memory_project",
        "description": "Create a new Basic Memory project. Creates a new project with the specified name and path.",
        "inputSchema": {"type": "object", "properties": {"project_name": {"type": "string"}}},
    },
]


def test_a_login_named_as_where_or_whose_wants_a_tool_that_takes_an_account(embedder: Embedder, tmp_path: Path) -> None:
    """ "in the quartz-ai org", "of user dana-k", "under the acme-corp org" name an account, which an
    ``owner`` (or a search's query: ``org:quartz-ai``) holds; a memory server's project has no owner. A
    hyphenated word only (no English word is read as a login), and no identifier of digits."""
    assert query_slots("Look through code in the quartz-ai org for AWS keys") == {"account"}
    assert query_slots("what fields does project 5 of user dana-k have?") == {"account", "number"}
    assert "account" not in query_slots("project 3 in octo-org/app")  # the repository says it
    assert "account" not in query_slots("Is there a GitHub security advisory for CVE-2024-3094?")
    assert "account" not in query_slots("find a well-maintained library for parsing PDFs in python")
    assert "account" in tool_affordances({"properties": {"query": {"type": "string"}}})
    assert "account" not in tool_affordances({"properties": {"project_name": {"type": "string"}}})
    registry = tmp_path / "projects.json"
    registry.write_text(json.dumps(PROJECT_TOOLS))
    request = "We need a fresh planning board. Set up a new project called 'Q3 Roadmap' under the acme-corp org."
    assert local_router(embedder, registry=registry).route(request, allow_rerank=False).chosen == (
        "github__projects_write"
    )


COPILOT_TOOLS = [
    {
        "server": "github",
        "name": "assign_copilot_to_issue",
        "description": "Assign Copilot to a specific issue in a GitHub repository.",
        "inputSchema": {"type": "object", "properties": {"owner": {}, "repo": {}, "issue_number": {}}},
    },
    {
        "server": "github",
        "name": "assign_copilot_to_issue_with_intent",
        "description": "Assign Copilot to a specific issue in a GitHub repository. Prefer this tool over "
        "assign_copilot_to_issue when available.",
        "inputSchema": {"type": "object", "properties": {"owner": {}, "repo": {}, "issue_number": {}}},
    },
    {
        "server": "github",
        "name": "update_issue_assignees",
        "description": "Update the assignees of an existing issue.",
        "inputSchema": {"type": "object", "properties": {"owner": {}, "repo": {}, "issue_number": {}, "assignees": {}}},
    },
]


def test_a_tool_its_server_prefers_takes_the_requests_of_the_other(embedder: Embedder, tmp_path: Path) -> None:
    """The successor may say it: "Prefer this tool over assign_copilot_to_issue when available." The
    plain name took "Assign Copilot to issue 145" before; now it ranks below the one its server prefers."""
    registry = tmp_path / "copilot.json"
    registry.write_text(json.dumps(COPILOT_TOOLS))
    result = local_router(embedder, registry=registry).route("Assign Copilot to issue 145 in acme/app.", limit=3)
    ranked = [c.id for c in result.candidates]
    assert result.chosen == "github__assign_copilot_to_issue_with_intent", ranked
    assert ranked[-1] == "github__assign_copilot_to_issue", ranked


def test_who_undergoes_a_verb_is_read_as_the_verb() -> None:
    """ "assign issue 67 to sofia-g" says the verb, ``update_issue_assignees`` the field; a short root stays."""
    assert tokenize("assign attend employ") == tokenize("assignees attendee employees")
    assert tokenize("degree agree coffee trees") == ["degree", "agree", "coffee", "tree"]


def test_which_requests_set_several_fields() -> None:
    fields = requested_fields("For acme/app#88, update the title to 'Fix it' and mark it ready for review.")
    assert fields == [{"title"}, {"ready", "review"}]
    # a verb that names its field keeps it: "assign it to carol" sets assignees
    assert requested_fields("add the label urgent to issue 4 and assign it to carol") == [
        {"label", "urgent", "issue"},
        {"assign", "carol"},
    ]
    # operations are no fields ("merge" is GitLab's merge request as often as a merge); "and" between
    # values joins them; a question reads; one change is one change
    assert requested_fields("merge PR 5 in acme/app and delete the branch") == []
    assert requested_fields("update the body of issue 9 and close it as not planned") == []
    assert requested_fields("add fatima-z and gus-o as reviewers to PR 145") == []
    assert requested_fields("what changed in #88 and who approved it?") == []
    assert len(requested_fields("Set the title to 'Flicker', label it bug and ui, and assign it to hana-k.")) == 3
    # a verb before a colon labels a value; an operation is its stemmed verb
    assert change_clauses("Add the file docs/API.md to acme/app. Commit message: 'docs: API'") == []
    assert [clause_operation(c) for c in change_clauses("merge PR 5 and delete the branch")] == ["merge", "delete"]


def test_a_request_for_several_changes_goes_to_the_tool_that_makes_them_all(embedder: Embedder) -> None:
    """The single-purpose tools each match half of the request better than ``update_pull_request``, which
    has a parameter for both halves; routed to one of them, the other change would be dropped. A request
    for one change still goes to its own tool."""
    router = local_router(embedder, registry=FIXTURES / "github_update_tools.json")
    both = "For riverbank/payments#88, update the title to 'Handle refund edge cases' and mark it ready for review."
    assert router.route(both).chosen == "github__update_pull_request"
    labels = "For issue #88 in octo-org/app, change the title to 'Crash on save' and set its labels to bug and ui."
    assert router.route(labels).chosen == "github__issue_write"
    assert router.route("mark riverbank/payments#88 ready for review").chosen == (
        "github__update_pull_request_draft_state"
    )
    assert router.route("change the title of issue 12 in octo-org/app to 'Crash on save'").chosen == (
        "github__update_issue_title"
    )


def test_a_file_name_is_no_directory(embedder: Embedder) -> None:
    """ "how big is notes.txt" went to ``list_directory_with_sizes``, whose ``path`` took the file name as
    well as ``get_file_info``'s did; a request for a folder still goes to the directory tools."""
    router = local_router(embedder)
    assert router.route("how big is notes.txt").chosen == "filesystem__get_file_info"
    assert router.route("list the files in src").chosen == "filesystem__list_directory"
    assert router.route("create the folder reports").chosen == "filesystem__create_directory"


def test_a_file_name_leaves_the_word_file(embedder: Embedder) -> None:
    """A file name is a value, blanked from the lexical terms and the embedded request; with nothing left
    of it, "print the contents of /tmp/log.txt" went to git's ``git_show`` (its description says
    "contents") and "show me the picture logo.png" too. That the request names a file says what it acts
    on; a dotted repository's name ("the next.js repo") is no file."""
    assert without_values("print the contents of /tmp/log.txt.").split() == ["print", "the", "contents", "of", "file"]
    assert "file" not in without_values("the discussions of the next.js repo, e.g. 'notes.md' at v11.0.x")
    router = local_router(embedder)
    assert router.route("print the contents of /tmp/log.txt").chosen == "filesystem__read_text_file"
    assert router.route("show me the picture logo.png").chosen == "filesystem__read_media_file"
    # a build file with no extension by convention is a file too ("print the Dockerfile" went to get-env)
    assert without_values("print the Dockerfile").split() == ["print", "the", "file"]
    assert query_slots("what does the Makefile say") == {"path"}
    assert router.route("print the Dockerfile").chosen == "filesystem__read_text_file"
    assert router.route("how big is the Dockerfile").chosen == "filesystem__get_file_info"


def test_real_words_are_no_typos_and_clitics_no_terms(embedder: Embedder) -> None:
    """The corrector read "keep" as deep, "note" as node, "date" as data; "what's" left the term "s"."""
    router = local_router(embedder)
    terms = router.bm25.query_terms("keep in mind the note: what's the date today")
    assert "deep" not in terms and "node" not in terms and "data" not in terms and "s" not in terms, terms
    assert router.bm25.query_terms("brnach comit") == ["branch", "commit"]  # typos are still mended
    assert "name" in router.bm25.query_terms("the file named notes")  # as is an inflection the stem keeps
    assert tokenize("Alice's file, don't") == ["alice", "file", "don"]
    # "like" was no query term but "likes" was: "remember that Bob likes tea" searched the file system with
    # path "Bob" (search_files says "Use pattern like '*.ext'"); now no tool fits and the request abstains
    assert router.bm25.query_terms("remember that Bob likes tea") == ["remember", "bob", "tea"]
    uncalibrated = local_router(embedder, Calibration())  # as a new gateway routes: its default floor
    assert uncalibrated.route("remember that Bob likes tea", allow_rerank=False).abstained
    # a word the tools never say stands for each of its synonyms they do: "plus" for get-sum's "sum"
    assert router.route("what is 7 plus 35").chosen == "everything__get-sum"
    # a sum changes nothing: not git_add (the gateway's default, no cross-encoder, which prefers git_add)
    assert router.route("add 2 and 3", allow_rerank=False).chosen == "everything__get-sum"


def test_a_request_that_names_a_server_leans_to_its_tools(embedder: Embedder) -> None:
    """Users name the server they mean, in the words of their config: this went to git's ``git_show``."""
    assert local_router(embedder).route("show me everything stored in memory").chosen == "memory__read_graph"
    # one server's name, shared by every tool, is no term: it would only lengthen each document
    alone = [RouteDoc("a", "a", "", ["x"], server="bfcl"), RouteDoc("b", "b", "", ["y"], server="bfcl")]
    assert lexical_documents(alone) == [["x"], ["y"]]
    two = [RouteDoc("a", "a", "", ["x"], server="memory"), RouteDoc("b", "b", "", ["y"], server="@acme/mcp-git")]
    assert lexical_documents(two) == [["x", *tokenize("memory")], ["y", *tokenize("acme mcp git")]]


def test_the_embedder_reads_an_intent_without_its_argument_values(embedder: Embedder) -> None:
    intent = "Replace the description of issue 41 in mkovacs/blog with: 'Comments are not rendered on mobile.'"
    assert embedded_intent(intent) == "Replace the description of issue 41 in with:"
    assert embedded_intent("open src/config/database.ts on the release branch") == "open file on the release branch"
    assert embedded_intent("'notes.txt'") == "'notes.txt'"  # nothing but a value: embedded as it is
    router = local_router(embedder)
    request = "write 'buy milk' to the file notes/todo.txt"
    routed = [c.cosine for c in router.route(request, limit=3).candidates]
    reads = router.route_vector(request, embedder.embed_query(embedded_intent(request)), limit=3).candidates
    as_written = router.route_vector(request, embedder.embed_query(request), limit=3).candidates
    assert routed == [c.cosine for c in reads] != [c.cosine for c in as_written]


def test_gate_escalates_only_below_tau(embedder: Embedder) -> None:
    never = local_router(embedder, Calibration(tau=-1.0, floor=0.0)).route("read the file notes.txt")
    always = local_router(embedder, Calibration(tau=10.0, floor=0.0)).route("read the file notes.txt")
    assert not never.escalated and "rerank" not in never.timings_ms
    assert always.escalated and always.candidates[0].rerank is not None
    switched_off = local_router(embedder, Calibration(tau=10.0, floor=0.0, rerank_weight=0.0))
    assert not switched_off.route("read the file notes.txt").escalated  # calibrate found no gain: no gate


def test_abstains_below_the_floor(embedder: Embedder) -> None:
    result = local_router(embedder, Calibration(floor=0.99)).route("book a table for two tonight")
    assert result.abstained and result.chosen is None and result.candidates


def test_calibration_is_reproducible_and_eval_writes_the_documented_shape(tmp_path: Path) -> None:
    common = ["--registry", str(REGISTRY), "--queries", str(QUERIES), "--cache-dir", str(tmp_path / "cache")]
    first = run_cli("calibrate", *common, cache=tmp_path)
    second = run_cli("calibrate", *common, cache=tmp_path)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == json.loads(second.stdout)
    assert json.loads(first.stdout)["rerank_k"] in (2, 3, 4)
    out = tmp_path / "eval.json"
    plot = tmp_path / "eval.png"
    done = run_cli(
        "eval", "routing", *common, "--irrelevant", str(IRRELEVANT), "--dialogues", str(DIALOGUES), "--sizes", "10,all",
        "--json", str(out), "--plot", str(plot), "--cases", str(tmp_path / "cases.jsonl"), cache=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    cases = [json.loads(line) for line in (tmp_path / "cases.jsonl").read_text().splitlines()]
    for label in ("10", "all"):  # one line a request and size, adding up to the table's figures
        at_size = [c for c in cases if c["size"] == label and not c["irrelevant"]]
        assert len(at_size) == 20 and sum(c["right"] for c in at_size) == round(document["sizes"][label]["top1"] * 20)
        for case in at_size:
            assert case["right"] == (case["chosen"] in case["acceptable"]) and len(case["candidates"]) <= 3
            assert case["abstained"] == (case["chosen"] is None)
        unserved = [c for c in cases if c["size"] == label and c["irrelevant"]]  # right when the router abstains
        assert unserved and all(c["right"] == c["abstained"] and c["acceptable"] == [] for c in unserved)
        assert sum(c["right"] for c in unserved) / len(unserved) == document["sizes"][label]["abstain_recall"]
    assert set(document["sizes"]) == {"10", "all"}
    for label in ("10", "all"):
        row = document["sizes"][label]
        assert set(row) >= {"n", "top1", "top1_ci", "recall_at_1", "recall_at_3", "recall_at_10", "escalated",
                            "abstain_precision", "abstain_recall", "p50_ms", "p95_ms"}  # fmt: skip
        assert row["n"] == 20 and 0 <= row["top1_ci"][0] <= row["top1"] <= row["top1_ci"][1] <= 1
        assert set(document["baselines"]["bm25"][label]) >= {"top1", "top1_ci", "recall_at_3"}
        assert isinstance(document["concat_tokens"][label], int)
        follow_ups = document["follow_ups"][label]  # the second turn of each local dialogue
        assert follow_ups["n"] == 2 and 0 <= follow_ups["top1_alone"] <= 1
        assert follow_ups["top1_ci"][0] <= follow_ups["top1"] <= follow_ups["top1_ci"][1]
    assert document["sizes"]["all"]["top1"] >= 0.6
    assert plot.stat().st_size > 10_000


def test_calibrate_judge_keeps_a_judge_margin_only_on_the_sign_test(tmp_path: Path) -> None:
    """``calibrate --judge`` lets the local LLM pick among the best candidates of the labelled requests
    and stores the margin below which it fixed significantly more than it broke (0: never)."""
    from nexus_gateway.evaluation import sign_test_p

    common = ["--registry", str(REGISTRY), "--queries", str(QUERIES), "--cache-dir", str(tmp_path / "cache")]
    done = run_cli("calibrate", *common, "--judge", "--threads", "1", "--no-rerank", cache=tmp_path)
    assert done.returncode == 0, done.stderr
    stored = json.loads(done.stdout)
    evidence = stored["judge_evidence"]
    policies = evidence["policies"]
    assert evidence["requests"] == 20 and [p["share"] for p in policies] == [0.2, 0.4, 0.6, 0.8, 1.0]
    asked = [p["asked"] for p in policies]
    assert asked == sorted(asked) and asked[-1] == evidence["judged"] >= 18  # every decision: all but abstentions
    for policy in policies:
        assert policy["fixed"] + policy["broken"] <= policy["asked"]
        assert policy["p"] == round(sign_test_p(policy["fixed"], policy["broken"]), 4)
    passing = [p for p in policies if p["p"] < evidence["p_needed"]]
    assert stored["judge_margin"] == evidence["margin"] == (max(
        passing, key=lambda p: (p["fixed"] - p["broken"], -p["asked"]))["margin"] if passing else 0.0)  # fmt: skip
    assert evidence["model"].endswith(".gguf") and "the router's best candidates" in done.stderr
    files = list((tmp_path / "cache" / "calibration").glob("*.json"))
    assert len(files) == 1 and f"calibration stored in {files[0]}" in done.stderr


def test_calibration_scores_each_cross_encoder_pair_once() -> None:
    """The calibration grid re-ranks the same pairs for every weight and candidate count; the memo
    must give the cross-encoder's own scores and ask it once per pair."""
    from nexus_gateway.evaluation import _MemoizedScores

    cross, asked = CrossEncoder(), []

    class Counting:
        def score(self, query: str, documents: list[str]) -> np.ndarray:
            asked.extend(documents)
            return cross.score(query, documents)

    memo = _MemoizedScores(Counting())  # type: ignore[arg-type]
    request, documents = "convert 9:30 to Berlin time", ["convert time: between zones", "git log: commits"]
    first = memo.score(request, documents)
    again = memo.score(request, [*reversed(documents), "read graph: the memory"])
    assert asked == [*documents, "read graph: the memory"]
    assert np.array_equal(first, cross.score(request, documents)) and np.array_equal(again[:2], first[::-1])


def test_the_fit_counts_the_ranks_a_host_is_shown_first() -> None:
    """A right tool that moves from 6th to 4th changes no answer and no candidate a host is shown; counted
    like a move into the top three, it moved the 117 GitHub tools' weights to a point worse in the top
    three (session 63). Deeper ranks only break ties."""
    from nexus_gateway.evaluation import fit_score

    assert fit_score([0, 1, 2, None]) == (1 + 1 / 2 + 1 / 3, 1 + 1 / 2 + 1 / 3)
    assert fit_score([0, 3, 5, 9])[0] == fit_score([0, 5, 3, None])[0] == 1.0
    assert fit_score([0, 1, None]) > fit_score([0, 3, 3, 3, 3, 3]) > fit_score([0, 5, 5, 5, 5, 5])


def test_the_gate_stays_on_only_when_its_flips_are_evidence() -> None:
    """BFCL's calibration half: re-ranking fixed 4 decisions and broke 3, which switched the gate on for
    ~40 ms of every escalated route; the sign test keeps it off until the flips are one-sided."""
    from nexus_gateway.evaluation import gate_earns_its_cost, sign_test_p

    assert sign_test_p(4, 3) == 0.5 and sign_test_p(0, 0) == 1.0 and sign_test_p(5, 0) == 1 / 32
    unchanged: list[int | None] = [0, 1, None, 2] * 10
    assert not gate_earns_its_cost(unchanged, [1 if r == 2 else r for r in unchanged])  # better, not first
    four_fixed_three_broken = [1, 1, 1, 1, 0, 0, 0] + [None] * 33
    flips = [0, 0, 0, 0, 1, 2, None] + [None] * 33
    assert not gate_earns_its_cost(four_fixed_three_broken, flips)
    six_fixed = [1, 2, None, 1, 3, 1] + [0] * 34
    assert gate_earns_its_cost(six_fixed, [0] * 40)  # 6 fixed, 0 broken: p = 1/64
    assert not gate_earns_its_cost([0] * 40, [1, 1, 1, 1, 1, 1] + [0] * 34)


def test_eval_rejects_bad_input_with_one_line(tmp_path: Path) -> None:
    done = run_cli("eval", "routing", "--registry", str(tmp_path / "none.json"), "--queries", str(QUERIES),
                   "--sizes", "ten", cache=tmp_path)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "error:" in done.stderr
    broken = tmp_path / "dialogues.jsonl"
    broken.write_text('{"id": "d1", "turns": [{"query": "close it"}]}\n')
    done = run_cli("eval", "routing", "--registry", str(REGISTRY), "--queries", str(QUERIES), "--dialogues",
                   str(broken), "--sizes", "10", cache=tmp_path)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "dialogues.jsonl:1: turns[0] needs 'query' and 'gold_tool'" in done.stderr


def test_a_query_file_that_does_not_fit_the_registries_is_refused_not_scored_zero(tmp_path: Path) -> None:
    """Queries written for other registries used to score 0% in `eval` and store a calibration fitted to
    nothing; an empty file (or the odd part of a one-line file) raised ZeroDivisionError."""
    others = tmp_path / "github.jsonl"
    others.write_text('{"query": "open issue 4 in o/r", "acceptable_tools": ["issue_read"]}\n')
    done = run_cli("calibrate", "--registry", str(REGISTRY), "--queries", str(others), cache=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "none of the 1 requests names a tool of the registry files (the first accepts issue_read)" in done.stderr
    assert not list(tmp_path.rglob("calibration/*.json"))
    done = run_cli("eval", "routing", "--registry", str(REGISTRY), "--queries", str(others), "--part", "odd",
                   cache=tmp_path)  # fmt: skip
    assert done.returncode == 2 and f"--queries {others} (odd lines): no requests to evaluate" in done.stderr
    not_text = tmp_path / "numbers.jsonl"
    not_text.write_text('{"query": 5, "acceptable_tools": ["get_current_time"]}\n')
    done = run_cli("eval", "routing", "--registry", str(REGISTRY), "--queries", str(not_text), cache=tmp_path)
    assert done.returncode == 2 and "numbers.jsonl:1: needs 'query', a non-empty string" in done.stderr
    # an output that cannot be written failed with a traceback after the whole run
    done = run_cli("eval", "routing", "--registry", str(REGISTRY), "--queries", str(QUERIES), "--json", str(tmp_path),
                   cache=tmp_path)  # fmt: skip
    assert done.returncode == 2 and f"argument --json: {tmp_path} is a folder; name a file" in done.stderr
    done = run_cli("eval", "routing", "--registry", str(REGISTRY), "--queries", str(QUERIES), "--cases",
                   str(not_text / "cases.jsonl"), cache=tmp_path)  # fmt: skip
    assert done.returncode == 2 and f"{not_text} is not a folder this user can write" in done.stderr
    # counts that meant something else: --limit -1 scored all but the last request, --requests 0 crashed
    for command in (("eval", "args", "--registry", str(REGISTRY), "--queries", str(QUERIES), "--limit", "-1"),
                    ("eval", "routing", "--registry", str(REGISTRY), "--queries", str(QUERIES), "--threads", "0"),
                    ("bench", "splice", "--requests", "0")):  # fmt: skip
        done = run_cli(*command, cache=tmp_path)
        assert done.returncode == 2 and f"{command[-2]}: must be a positive integer" in done.stderr, command


@pytest.fixture(scope="module")
async def gateway(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ClientSession]:
    workdir = tmp_path_factory.mktemp("routed")
    servers = real_servers(workdir)
    defaults = {"git": {"repo_path": str(workdir / "repo")}}  # the repository a project sidecar serves
    config = write_config(
        workdir / "config.json", servers, routing={"calibration": None}, generate=False, defaults=defaults
    )
    async with stdio_gateway(config, workdir / "cache") as session:
        yield session


@pytest.mark.anyio
async def test_configured_defaults_fill_what_a_call_leaves_out(gateway: ClientSession) -> None:
    described = result_json(await gateway.call_tool("describe_tool", {"tool": "git__git_status"}))
    assert described["defaults"] == {"repo_path": described["defaults"]["repo_path"]}
    assert described["defaults"]["repo_path"].endswith("repo")
    status = await gateway.call_tool("call_tool", {"tool": "git__git_status", "arguments": {}})
    assert not status.is_error and "On branch" in result_text(status), result_text(status)
    routed = await gateway.call_tool("call", {"intent": "show the commit log", "arguments": {"max_count": 1}})
    assert not routed.is_error and "first" in result_text(routed), result_text(routed)
    assert (routed.meta or {})["io.nexus-gateway/trace"]["arguments"]["repo_path"].endswith("repo")
    elsewhere = await gateway.call_tool("call_tool", {"tool": "git__git_status", "arguments": {"repo_path": "/nope"}})
    assert elsewhere.is_error and "/nope" in result_text(elsewhere)  # a value the caller gives wins
    no_repo = result_json(await gateway.call_tool("describe_tool", {"tool": "time__get_current_time"}))
    assert "defaults" not in no_repo


@pytest.mark.anyio
async def test_a_parameter_the_defaults_fill_takes_no_slot_of_the_request(gateway: ClientSession) -> None:
    """Every git tool takes a path, ``repo_path``, so "print the contents of notes.txt" found a path slot
    in ``git_show`` as well as in the filesystem's readers, and went there. The defaults fill
    ``repo_path``, so no request's path goes there."""
    for intent, tool in (
        ("print the contents of notes.txt", "filesystem__read_text_file"),
        ("show me the picture logo.png", "filesystem__read_media_file"),
    ):
        answer = result_json(await gateway.call_tool("call", {"intent": intent}))
        assert answer["tool"] == tool, answer


@pytest.mark.anyio
async def test_a_request_for_a_change_no_server_makes_says_so(gateway: ClientSession) -> None:
    """No tool of the test servers locks anything, nor deletes a branch: the request abstains and the
    answer names the change, so the host can tell the user what is missing instead of guessing among the
    closest tools."""
    answer = result_json(await gateway.call_tool("call", {"intent": "Lock the conversation on issue 57"}))
    assert answer["status"] == "no_confident_match", answer
    assert answer["message"].startswith("No tool here can lock.") and answer["trace"]["no_tool_makes"] == ["lock"]
    # git creates branches and the memory server deletes entities, but nothing here deletes a branch
    answer = result_json(await gateway.call_tool("call", {"intent": "delete the branch feature/old"}))
    assert answer["status"] == "no_confident_match", answer
    assert answer["message"].startswith("No tool here can delete a branch."), answer


@pytest.mark.anyio
async def test_call_intent_routes_and_asks_for_arguments(gateway: ClientSession) -> None:
    result = await gateway.call_tool("call", {"intent": "convert 9:30 from New York time to Berlin time"})
    answer = result_json(result)
    assert answer["status"] == "needs_arguments" and answer["tool"] == "time__convert_time"
    assert answer["signature"].startswith("convert_time(")
    trace = answer["trace"]
    assert trace["chosen"] == "time__convert_time" and trace["candidates"][0]["tool"] == "time__convert_time"
    assert {"embed", "scan", "fuse"} <= set(trace["ms"]) and isinstance(trace["escalated"], bool)


@pytest.mark.anyio
async def test_call_intent_with_arguments_forwards_and_traces(gateway: ClientSession) -> None:
    result = await gateway.call_tool("call", {"intent": "add two numbers", "arguments": {"a": 19, "b": 23}})
    assert not result.is_error and "42" in result_text(result)
    trace = (result.meta or {}).get("io.nexus-gateway/trace")
    assert trace and trace["chosen"] == "everything__get-sum" and "forward" in trace["ms"]
    bad = await gateway.call_tool("call", {"intent": "add two numbers", "arguments": {"a": "x", "b": 1}})
    assert bad.is_error and "field 'a'" in result_text(bad)
    blank = await gateway.call_tool("call", {"intent": " \n "})  # the schema's minLength lets it through
    assert blank.is_error and "field 'intent': is blank" in result_text(blank)
    blank_search = await gateway.call_tool("search_tools", {"query": "   "})
    assert blank_search.is_error and "field 'query': is blank" in result_text(blank_search)


@pytest.mark.anyio
async def test_a_follow_up_is_routed_with_the_slots_its_window_named(gateway: ClientSession) -> None:
    first = await gateway.call_tool(
        "call", {"intent": "add the two numbers 19 and 23", "arguments": {"a": 19, "b": 23}}
    )
    assert not first.is_error and "carried" not in (first.meta or {})["io.nexus-gateway/trace"]
    again = await gateway.call_tool(
        "call", {"intent": "now add those two numbers again", "arguments": {"a": 42, "b": 42}}
    )
    assert not again.is_error and "84" in result_text(again)
    assert "number" in (again.meta or {})["io.nexus-gateway/trace"]["carried"]


@pytest.mark.anyio
async def test_a_follow_up_that_cannot_name_an_operation_goes_on_with_the_last_tool(gateway: ClientSession) -> None:
    """Alone, "same thing for Tokyo" matches ``move_file`` ("same" is in its description) by a wide
    margin; it says no operation of its own, so it is routed joined to the request before it."""
    first = await gateway.call_tool(
        "call", {"intent": "what time is it in Berlin?", "arguments": {"timezone": "Europe/Berlin"}}
    )
    assert not first.is_error and (first.meta or {})["io.nexus-gateway/trace"]["chosen"] == "time__get_current_time"
    again = await gateway.call_tool("call", {"intent": "same thing for Tokyo", "arguments": {"timezone": "Asia/Tokyo"}})
    trace = (again.meta or {})["io.nexus-gateway/trace"]
    assert not again.is_error and "Asia/Tokyo" in result_text(again)
    assert trace["chosen"] == "time__get_current_time"
    assert trace["routed_as"] == "what time is it in Berlin. same thing for Tokyo"


def test_which_follow_ups_cannot_name_an_operation() -> None:
    window = SessionWindow()
    assert not window.names_no_operation("and in Tokyo?")  # a new session has nothing to go on with
    window.add("list the open issues in psf/requests", "list_issues", {"owner": "psf", "repo": "requests"}, "[]")
    for bare in ("and in Tokyo?", "same thing for pallets/flask", "what about the closed ones?", "same for main"):
        assert window.names_no_operation(bare), bare
    for named in (
        "and mute that thread too",
        "and delete notes.txt",
        "close it",
        "same thing for pallets/flask, but only bugs and then label them",
    ):
        assert not window.names_no_operation(named), named
    assert window.elided_request("and delete notes.txt") is None  # it asks for a change of its own
    # the joined route's candidates, best first: the last tool first always holds; deeper only for a bare one
    assert window.joined_choice("and mute that thread too", ["list_issues", "search_issues"]) == 0
    assert window.joined_choice("and mute that thread too", ["search_issues", "list_issues"]) is None
    assert window.joined_choice("same for the closed ones", ["search_issues", "list_issues"]) == 1
    assert window.joined_choice("same for the closed ones", ["a", "b", "c", "list_issues"]) is None
    assert window.elided_request("and the closed ones?") == "list the open issues in psf/requests. and the closed ones?"


def test_what_a_follow_up_carries_from_its_window(embedder: Embedder) -> None:
    window = SessionWindow()
    assert window.carried_slots("close it") == frozenset()  # nothing to point back at
    window.add("show issue 42 in octo-org/app", "issue_read", {"owner": "octo-org", "repo": "app"}, "{}")
    assert window.carried_slots("close it") == {"number", "repo"}
    assert window.carried_slots("close issue 7 too") == frozenset()  # names its own number
    assert window.carried_slots("list notifications") == frozenset()  # does not point back
    created = SessionWindow()
    created.add("open an issue in mkovacs/blog titled 'Dark mode'", "create_issue", {}, '{"id": 33, "number": 73}')
    assert created.carried_slots("label it bug") == {"number", "repo"}  # the new issue has a number
    created.add("label it bug", "update_issue_labels", {}, '{"status": "ok"}')
    assert created.carried_slots("and pin it") == {"repo"}  # the last result numbers nothing
    numbered = {"properties": {"owner": {}, "repo": {}, "issue_number": {"type": "integer"}}}
    docs = [
        RouteDoc.of_tool("gh__update_issue_state", "update_issue_state", "", [], numbered, None, "github"),
        RouteDoc.of_tool("pw__browser_close", "browser_close", "", [], {}, None, "playwright"),
    ]
    vector = embedder.embed_document("close")
    calibration = Calibration(floor=-9.0, lexical_weight=0.0, name_weight=0.0, server_weight=0.0)
    router = Router(embedder, docs, np.stack([vector, vector]), calibration)
    alone = {c.id: c.score for c in router.route("close it").candidates}
    assert alone["gh__update_issue_state"] == alone["pw__browser_close"]
    carried = router.route("close it", carried=window.carried_slots("close it"))
    assert carried.chosen == "gh__update_issue_state" and carried.margin == pytest.approx(0.2, abs=1e-6)


@pytest.mark.anyio
async def test_a_routed_tool_that_may_destroy_data_is_shown_not_run(gateway: ClientSession) -> None:
    """filesystem's write_file says ``destructiveHint: true``: the gateway chose it, the host never named
    it, so `call` answers with the call it would make and runs nothing; call_tool then runs it."""
    listing = result_text(
        await gateway.call_tool("call_tool", {"tool": "filesystem__list_allowed_directories", "arguments": {}})
    )
    target = Path(listing.strip().splitlines()[-1]) / "confirmed.txt"
    arguments = {"path": str(target), "content": "written after confirming\n"}
    intent = "overwrite the file confirmed.txt with new text"
    answer = result_json(await gateway.call_tool("call", {"intent": intent, "arguments": arguments}))
    assert answer["status"] == "needs_confirmation" and answer["reason"] == "destructive", answer
    assert answer["tool"] == "filesystem__write_file" and answer["arguments"] == arguments
    assert answer["candidates"][0]["tool"] == "filesystem__write_file" and "call_tool" in answer["message"]
    assert not target.exists()
    described = result_json(await gateway.call_tool("describe_tool", {"tool": answer["tool"]}))
    assert described["annotations"]["destructiveHint"] is True  # what the host sees before it runs it
    ran = await gateway.call_tool("call_tool", {"tool": answer["tool"], "arguments": answer["arguments"]})
    assert not ran.is_error and target.read_text() == "written after confirming\n"


def test_which_routed_choices_wait_for_the_host() -> None:
    destructive = {"readOnlyHint": False, "destructiveHint": True}
    additive = {"readOnlyHint": False, "destructiveHint": False}
    reading = {"readOnlyHint": True}
    tau = 0.05
    assert confirmation_reason("auto", "delete_repository", destructive, margin=0.9, tau=tau) == "destructive"
    assert confirmation_reason("auto", "create_issue", additive, margin=0.01, tau=tau) == "close_call"
    assert confirmation_reason("auto", "create_issue", additive, margin=0.2, tau=tau) is None
    assert confirmation_reason("auto", "list_issues", reading, margin=0.0, tau=tau) is None
    # no annotations: the name's verb decides whether it may change something; unknown mood runs
    assert confirmation_reason("auto", "create_entities", None, margin=0.01, tau=tau) == "close_call"
    assert confirmation_reason("auto", "git_log", None, margin=0.0, tau=tau) is None
    assert confirmation_reason("writes", "create_issue", additive, margin=0.9, tau=tau) == "writes"
    assert confirmation_reason("writes", "list_issues", reading, margin=0.9, tau=tau) is None
    assert confirmation_reason("never", "delete_repository", destructive, margin=0.0, tau=tau) is None
    # a server that says both read-only and destructive is believed on read-only
    assert confirmation_reason("auto", "peek", {"readOnlyHint": True, "destructiveHint": True}, 0.0, tau) is None


@pytest.mark.anyio
async def test_search_tools_uses_the_router(gateway: ClientSession) -> None:
    result = await gateway.call_tool("search_tools", {"query": "remember that Alice is an engineer", "limit": 3})
    tools = [r["tool"] for r in result_json(result)["results"]]
    assert tools[0] in ("memory__create_entities", "memory__add_observations")


def test_slot_affordances() -> None:
    assert query_slots("Open discussion #4521 in octo-org/app") == {"repo", "number"}
    # a code host's link names a repository, and the number of what it points at
    assert query_slots("thumbsdown https://github.com/a/b/pull/1#discussion_r2") == {"url", "repo", "number"}
    assert query_slots("fetch https://github.com/a/b") == {"url", "repo"}
    assert query_slots("summarise https://example.com/blog/3") == {"url"}
    assert query_slots("open src/config/database.ts on release/2.4") == {"path", "repo"}
    # a number inside quoted text or a name with a slash is no issue's, a hash still marks one
    assert "number" not in query_slots("Post 'Tracking this for 2.5.' on the issue")
    assert query_slots("octo-org/app#204 has two approvals") == {"repo", "number"}
    assert query_slots("add 2 and 3") == {"number"}
    assert query_slots("what time is it in Tokyo") == frozenset()
    # decimals, versions, release branches and "i.e." are no file paths ("v2.1.0" took the path slot to git_tag)
    for text in (
        "a house rated 4.5 or more",
        "the tag v2.1.0 in pixel-forge/engine",
        "base: release/3.2, Python 3.12",
        "hardcoded keys, i.e. strings starting with AKIA",
        "list commits on the v11.0.x branch",
        "send it to jo@example.com from Washington D.C.",
    ):
        assert "path" not in query_slots(text), text
    assert query_slots("open notes.md and pyproject.toml") == {"path"}
    assert query_slots("print the contents of /tmp/log.txt") == {"path"}
    assert query_slots("append a line to ~/notes.md") == {"path"}
    # a time of day is a slot of its own: only a time parameter holds it, and a tool that requires one
    # cannot serve "what time is it in Tokyo"
    assert query_slots("what is 10am Tokyo time in Berlin") == {"time"}
    assert query_slots("lunch at noon") == {"time"} and "time" in query_slots("at 17:30 UTC")
    assert "time" not in query_slots("a ratio of 4:5, Python 3.12")
    convert = {"properties": {"source_timezone": {"type": "string"}, "time": {"type": "string"}}, "required": ["time"]}
    assert tool_requirements(convert) == {"time"}
    assert tool_affordances({"properties": {"timezone": {}, "timestamp": {}, "meetingTime": {}}}) == {"time"}
    schema = {"type": "object", "properties": {"owner": {"type": "string"}, "repo": {"type": "string"},
                                               "pullNumber": {"type": "number"}}}  # fmt: skip
    assert tool_affordances(schema) == {"repo", "number", "account"}  # an owner is an account too
    assert tool_affordances({"type": "object"}) == frozenset()
    assert tool_affordances({"properties": {"n": {"type": ["integer", "null"]}, "x": True}}) == {"number"}
    assert tool_requirements(schema) == frozenset()  # nothing required
    assert tool_requirements(schema | {"required": ["owner", "repo", "pullNumber"]}) == {"repo", "number"}
    assert tool_requirements(schema | {"required": ["repo"]}) == frozenset()  # a repository is owner and repo
    assert tool_requirements({"properties": {"path": {"type": "string"}}, "required": ["path"]}) == {"path"}
    assert tool_requirements({"properties": {"x": True}, "required": ["missing", "x"]}) == frozenset()
    # GitLab names a repository as a project by its path; Linear's projectId is no repository
    gitlab = {"project_id": {"type": "string", "description": "Project ID or URL-encoded path to project"}}
    assert tool_requirements({"properties": gitlab, "required": ["project_id"]}) == {"repo"}
    assert tool_affordances({"properties": gitlab}) == frozenset()  # it does not draw GitHub's owner/repo
    linear = {"projectId": {"type": "string", "description": "ID of the project to get issues for"}}
    assert tool_requirements({"properties": linear, "required": ["projectId"]}) == frozenset()
    # a URL carries numbers the request does not spell out
    assert filled_slots("thumbsdown https://github.com/a/b/pull/1#discussion_r2") == {"url", "number", "repo"}
    assert filled_slots("read https://example.com/docs") == {"url", "repo"}
    assert argument_slots({"a": 19, "b": "x"}) == {"number"} and argument_slots({"flag": True}) == frozenset()
    assert argument_slots({"owner": "octo-org", "repo": "app"}) == {"repo"}
    # a repository named by a URL or by the word alone is there for the argument step to resolve
    assert "repo" in filled_slots("read https://github.com/a/b") and "repo" in filled_slots("open my dotfiles repo")
    assert "repo" not in filled_slots("commits authored by sofia-g anywhere in the riverbank org")


def test_a_requirement_most_of_a_server_shares_does_not_count() -> None:
    """git's tools all require repo_path; GitHub's get_file_blame is one of few to require a path."""

    def doc(server: str, name: str, required: list[str]) -> RouteDoc:
        schema = {"properties": {key: {"type": "string"} for key in required}, "required": required}
        return RouteDoc.of_tool(f"{server}__{name}", name, "", [], schema, None, server)

    docs = [doc("git", "git_status", ["repo_path"]), doc("git", "git_log", ["repo_path"])]
    docs += [doc("github", "get_file_blame", ["path"]), doc("github", "list_issues", []), doc("github", "get_me", [])]
    assert distinguishing_requirements(docs)["path"].tolist() == [False, False, True, False, False]
    # a repository tells tools apart unless every tool of the server needs one: "commits authored by
    # sofia-g anywhere in the riverbank org" is search_commits, not list_commits(owner, repo)
    scoped = [doc("github", "list_commits", ["owner", "repo"]), doc("github", "get_commit", ["owner", "repo"])]
    unscoped = [doc("github", "search_commits", ["query"])]
    assert distinguishing_requirements(scoped + unscoped)["repo"].tolist() == [True, True, False]
    assert distinguishing_requirements(scoped)["repo"].tolist() == [False, False]


def test_a_request_naming_a_repository_leans_to_the_server_whose_tools_take_one(embedder: Embedder) -> None:
    repo = {"properties": {"owner": {"type": "string"}, "repo": {"type": "string"}}}
    query_only = {"properties": {"query": {"type": "string"}}}
    docs = [
        RouteDoc.of_tool("gh__list_issues", "list_issues", "", [], repo, None, "github"),
        RouteDoc.of_tool("gh__get_me", "get_me", "", [], {}, None, "github"),
        RouteDoc.of_tool(
            "gh__search_code", "search_code", "Search code.", ["search", "code"], query_only, None, "github"
        ),
        RouteDoc.of_tool("mem__sync_status", "sync_status", "Sync status.", ["sync", "status"], {}, None, "memory"),
    ]
    shares = server_affordances(docs, {"repo": np.array([1, 0, 0, 0], dtype=np.float32)})["repo"]
    assert shares.tolist() == pytest.approx([1 / 3 - 1 / 4] * 3 + [-1 / 4])  # GitHub 1 of 3, centred on the mean
    one_server = server_affordances(docs[:3], {"repo": np.array([1, 0, 0], dtype=np.float32)})["repo"]
    assert one_server.tolist() == pytest.approx([0, 0, 0])  # one server: no offset, the floor stays put
    vectors = np.stack([embedder.embed_document("code search")] * 2 + [embedder.embed_document("code sync")] * 2)

    def margin(request: str, weight: float) -> float:
        calibration = Calibration(floor=-9.0, server_weight=weight, lexical_weight=0.0, name_weight=0.0)
        scores = {c.id: c.score for c in Router(embedder, docs, vectors, calibration).route(request).candidates}
        return scores["gh__search_code"] - scores["mem__sync_status"]

    request = "find usages of useSyncExternalStore in facebook/react"
    assert margin(request, 0.3) - margin(request, 0.0) == pytest.approx(0.3 * (1 / 3), abs=1e-5)
    plain = "find usages of useSyncExternalStore"  # names no repository: no lean
    assert margin(plain, 0.3) == pytest.approx(margin(plain, 0.0), abs=1e-6)


def test_a_tool_that_requires_what_the_request_leaves_out_ranks_lower(embedder: Embedder) -> None:
    vector = embedder.embed_document("issues: issues of a repository")
    numbered = {"properties": {"issue_number": {"type": "integer"}}, "required": ["issue_number"]}
    docs = [
        RouteDoc.of_tool("gh__issue_read", "issue_read", "Issues of a repository.", ["issue"], numbered, None),
        RouteDoc.of_tool("gh__list_issues", "list_issues", "Issues of a repository.", ["issue"], {}, None),
    ]

    def scores(request: str, weight: float, given: frozenset[str] = frozenset()) -> dict[str, float]:
        calibration = Calibration(floor=0.0, unfilled_weight=weight, affordance_weight=0.0, name_weight=0.0)
        router = Router(embedder, docs, np.stack([vector, vector]), calibration)
        return {c.id: c.score for c in router.route(request, given=given).candidates}

    browsing, one = (
        "what is open in the issue tracker of psf/requests?",
        "what labels does issue 42 of psf/requests have?",
    )
    assert scores(browsing, 0.0)["gh__issue_read"] == scores(browsing, 0.0)["gh__list_issues"]
    penalised = scores(browsing, 0.2)
    assert penalised["gh__list_issues"] - penalised["gh__issue_read"] == pytest.approx(0.2)
    stated = scores(one, 0.2)  # the number is there: no penalty
    assert stated["gh__issue_read"] == stated["gh__list_issues"]
    supplied = scores(browsing, 0.2, argument_slots({"issue_number": 42}))  # or the host gave it
    assert supplied["gh__issue_read"] == supplied["gh__list_issues"]


def test_router_updates_incrementally(embedder: Embedder) -> None:
    router = local_router(embedder)
    before = router.route("convert 9:30 from New York time to Berlin time").chosen
    assert before == "time__convert_time"
    kept_rows = {tool_id: row for row, tool_id in enumerate(router.slb.ids) if tool_id.startswith("git__")}
    router.apply([], np.zeros((0, 384), dtype=np.float32), ["time__convert_time", "time__get_current_time"])
    after = router.route("convert 9:30 from New York time to Berlin time").chosen
    assert after not in ("time__convert_time", "time__get_current_time") and len(router.slb) == 48
    doc = RouteDoc("clock__world_time", "world_time", "Convert a time between time zones.", ["world", "time"])
    vector = embedder.embed_document(tool_document(doc.name, doc.description))[None, :]
    router.apply([doc], vector, [])
    assert router.route("convert 9:30 from New York time to Berlin time").chosen == "clock__world_time"
    # Rows of untouched tools were not rewritten to new places wholesale.
    assert sum(router.slb.ids[row] == tool_id for tool_id, row in kept_rows.items() if row < len(router.slb)) >= 10


def test_read_or_write_mood_of_requests_and_tools() -> None:
    assert request_mood("What milestones are defined in acme-corp/billing-service?") == READ
    assert request_mood("Could you assign issue 67 in riverbank/payments to sofia-g?") == WRITE
    assert request_mood("Open an issue in octo-org/app titled 'Login button misaligned'") == WRITE
    assert request_mood("open PRs in facebook/react") is None  # "open" as an adjective
    assert request_mood("tag issue #18 as 'good first issue', then label it bug") == WRITE
    assert request_mood("Show me the label 'bug' and its color") == READ  # "label" as a noun
    assert request_mood("Which review threads are open? I need their ids so I can resolve them later.") == READ
    assert request_mood("add two numbers") is None and request_mood("add fatima-z as a reviewer") == WRITE
    # numbers on both sides of "add" are a sum to compute, whatever the "to" says; the rest still counts
    assert request_mood("Could you tell me what I get if I add 5.0 to 3.0?") == READ
    assert request_mood("add 7 and 35, then post the result on issue 5") == WRITE
    assert request_mood("add 5 to the allow list") == WRITE
    # "tell me" asks; telling someone else is a change
    assert request_mood("Can you tell me the current weather in Moscow?") == READ
    assert request_mood("tell the reporter of issue 19 we can't reproduce it") == WRITE
    assert request_mood("remember that Alice is an engineer") is None
    assert request_mood("Can you find all the pull requests nora-t has opened in lumen-labs/lumen-ui") == READ
    assert request_mood("I want to see what the most recent commit on develop changed") == READ
    assert request_mood("Let the reporter of issue 19 know we can't reproduce it") == WRITE
    assert request_mood("commit the staged changes with message 'fix typo'") == WRITE
    assert request_mood("which commit broke the build?") == READ  # "commit" as a noun
    # a change asked about after "did" happened already: looking it up reads
    assert request_mood("what did I change in a.txt since the last commit") == READ
    assert request_mood("when did we last update the README?") == READ
    assert request_mood("why did you close issue 5? reopen it") == WRITE  # the second sentence still writes
    # a request that leads with the records it wants, and no verb, reads
    assert request_mood("repos tagged topic:mcp-server, most stars first") == READ
    assert request_mood("whats in the docs folder of octo-org/app") == READ
    assert request_mood("this is where the docs live") is None  # a function word, not a plural
    assert request_mood("status of the deploy") is None  # a singular that ends in s
    assert request_mood("issues in acme/app: close the stale ones") == WRITE  # the verb says the change
    assert tool_mood("list_issues", None) == READ and tool_mood("issue_read", None) == READ
    assert tool_mood("get-sum", None) == READ and tool_mood("createIssue", None) == WRITE
    assert tool_mood("git_status", None) is None and tool_mood("sub_issue_write", {}) == WRITE
    assert tool_mood("create_issue", {"readOnlyHint": True}) == READ  # the server's word wins


def test_the_router_prefers_a_tool_of_the_requests_mood(embedder: Embedder) -> None:
    vector = embedder.embed_document("label: labels of a repository")
    docs = [
        RouteDoc("gh__label_write", "label_write", "Labels of a repository.", ["label", "repository"], mood=WRITE),
        RouteDoc("gh__get_label", "get_label", "Labels of a repository.", ["label", "repository"], mood=READ),
    ]

    def chosen(request: str, weight: float) -> str | None:
        router = Router(embedder, docs, np.stack([vector, vector]), Calibration(floor=0.0, mood_weight=weight))
        return router.route(request).chosen

    asking, changing = "what labels does octo-org/app have?", "rename the label bug to defect in octo-org/app"
    assert chosen(asking, 0.0) == chosen(changing, 0.0)  # a tie without the signal
    assert (chosen(asking, 0.2), chosen(changing, 0.2)) == ("gh__get_label", "gh__label_write")
    router = Router(embedder, docs, np.stack([vector, vector]), Calibration(floor=0.0, mood_weight=0.2))
    scores = {c.id: c.score for c in router.route("renmae the label bug to defect").candidates}
    assert scores["gh__label_write"] > scores["gh__get_label"] + 0.1  # its verb misspelt, still a change


def test_a_tool_named_for_a_change_the_request_refuses_ranks_lower(embedder: Embedder) -> None:
    """ "Start a pending review, don't submit anything yet" says "submit" and means its opposite: the tool
    that leads with the refused verb loses the mood weight; a tool that says the verb in its description
    (``pull_request_review_write`` submits reviews too) keeps its score."""
    assert refused_changes("Start a pending review for me first, don't submit anything yet.") == ("submit",)
    assert refused_changes("Shut it down without merging.") == ("merge",)
    assert refused_changes("Detach it from #12 (don't delete anything).") == ("delete",)
    assert refused_changes("I don't have any IDs; we never use it") == ()  # no verbs of change
    assert refused_changes("post 'do not merge' on PR 4") == ()  # a value says it, not the request
    # a refused change is not asked for: GitHub deletes no branch, yet this request is no call to abstain on
    assert ("delete", "branch") not in asked_objects("Merge PR 5 in acme/app, but don't delete the branch")
    assert named_for("submit", "submit_pending_pull_request_review") and named_for("close", "closeIssue")
    assert not named_for("request", "pull_request_read") and not named_for("add", "address_lookup")
    vector = embedder.embed_document("pending review: reviews of a pull request")
    names = ("submit_pending_pull_request_review", "pull_request_review_write")
    words = ["submit", "create", "pend", "pull", "request", "review"]  # both make the changes asked of them
    docs = [RouteDoc(f"gh__{name}", name, "Reviews of a pull request.", words, mood=WRITE) for name in names]

    def scores(weight: float) -> dict[str, float]:
        router = Router(embedder, docs, np.stack([vector, vector]), Calibration(floor=-9.0, mood_weight=weight))
        result = router.route("start a pending review on PR 318, don't submit it yet", allow_rerank=False)
        return {c.id: c.score for c in result.candidates}

    plain, weighed = scores(0.0), scores(0.3)
    assert weighed["gh__submit_pending_pull_request_review"] == pytest.approx(
        plain["gh__submit_pending_pull_request_review"] - 0.3, abs=1e-5
    )
    assert weighed["gh__pull_request_review_write"] == pytest.approx(plain["gh__pull_request_review_write"], abs=1e-5)
    assert max(weighed, key=weighed.__getitem__) == "gh__pull_request_review_write"


def test_a_state_the_request_denies_lowers_the_tool_named_for_it_beside_its_opposite(embedder: Embedder) -> None:
    """git's server names both states, ``git_diff_staged`` and ``git_diff_unstaged``: "what I haven't staged
    yet" wants the second, though it says the first's word."""
    assert denied_words("show me the diff of what I haven't staged yet") == ("staged",)
    assert denied_words("review threads that are not resolved; say 'not staged'") == ("resolved",)
    names_words = [name.split("_") for name in ("git_diff_staged", "git_diff_unstaged", "unit_convert", "it_works")]
    assert opposed_name_words(names_words) == {"staged"}
    names = ("git_diff_staged", "git_diff_unstaged")
    docs = [RouteDoc(f"git__{name}", name, "Shows changes.", ["diff", "change"], mood=READ) for name in names]
    vector = embedder.embed_document("git diff: shows changes")

    def scores(request: str, weight: float) -> dict[str, float]:
        router = Router(embedder, docs, np.stack([vector, vector]), Calibration(floor=-9.0, mood_weight=weight))
        return {c.id: c.score for c in router.route(request).candidates}

    request = "show the diff of what I haven't staged yet"
    denied, plain = scores(request, 0.3), scores(request, 0.0)
    assert plain["git__git_diff_staged"] > plain["git__git_diff_unstaged"]  # the word draws the staged diff
    assert denied["git__git_diff_staged"] == pytest.approx(plain["git__git_diff_staged"] - 0.3, abs=1e-5)
    assert denied["git__git_diff_unstaged"] > denied["git__git_diff_staged"]
    said = scores("show the diff of what I have staged", 0.3)
    assert said["git__git_diff_staged"] > said["git__git_diff_unstaged"]  # said, not denied: no penalty


def test_misspelt_verbs_are_spelt_right_for_the_readers_of_verbs(embedder: Embedder) -> None:
    known = embedder.whole_words
    assert request_mood("asign issue 45 to ravi-n") is None  # the typo hides the change
    spelt = spelled_verbs("asign issue 45 to ravi-n and put it in milestone 3", known)
    assert spelt == "assign issue 45 to ravi-n and put it in milestone 3" and request_mood(spelt) == WRITE
    assert spelled_verbs("chnage the title; serch for 'creat' in notes.md", known) == (
        "change the title; search for 'creat' in notes.md"  # a value keeps its spelling
    )
    # real words, inflections, short words and words near no verb or near two stay as they are
    for text in ("no more pings from it", "bake a cake", "opn the README", "songs by Tove Lo", "the gist"):
        assert spelled_verbs(text, known) == text


def test_platforms_named_by_requests_and_worked_on_by_servers() -> None:
    assert named_platforms("List the open merge requests in our GitLab project acme/infra.") == {"gitlab"}
    assert named_platforms("close https://github.com/octo-org/app/issues/3") == {"github"}
    assert named_platforms("What's in our current Linear cycle?") == {"linear"}
    assert named_platforms("post the release notes to Slack and Jira") == {"slack", "jira"}
    # English words, owner/repo slugs and hyphenated names are not platforms
    assert not named_platforms("Linear regression on age and income, then a linear fit")
    assert not named_platforms("mirror acme/gitlab-importer; which teams am I on? cut me some slack")
    # the user's own machine is a place a request can name; a shop or a time that is local is not it
    assert named_platforms("Delete the local branch feature/old on my laptop") == {LOCAL_MACHINE}
    assert named_platforms("stage and commit my local changes") == {LOCAL_MACHINE}
    assert named_platforms("run npm test in my current project directory") == {LOCAL_MACHINE}
    assert named_platforms("push my local branch to GitHub") == {LOCAL_MACHINE, "github"}
    assert not named_platforms("Find a local guitar shop near me; what's the local time in Tokyo?")
    github = ["list_issues List issues in a GitHub repository.", "get_me Get my user.", "get_teams Get teams."]
    assert server_platforms("github", github[1:]) == {"github"}  # the name says it
    assert server_platforms("gh", github) == {"github"}  # a third of its tools say it
    assert server_platforms("gh", github[1:] * 2 + github[:1]) == set()  # a fifth: said in passing
    assert server_platforms("@acme/mcp-linear", ["list_cycles List cycles."]) == {"linear"}
    assert server_platforms("@acme/gitlab", ["list_projects List projects."]) == {"gitlab"}
    assert server_platforms("filesystem", ["read_file Read a file from disk."]) == set()
    assert server_platforms("git", ["git_status Status of a local repository."]) == set()  # no server's place


def test_a_tool_of_another_platform_than_the_request_names_ranks_lower_and_abstains(embedder: Embedder) -> None:
    """ "Open a pull request on Bitbucket" shares every word with GitHub's create_pull_request; the
    request says where the work happens, and the GitHub server works elsewhere."""
    schema = {"properties": {"owner": {"type": "string"}, "repo": {"type": "string"}}}
    docs = [
        RouteDoc.of_tool(
            "gh__create_pull_request",
            "create_pull_request",
            "Create a pull request in a GitHub repository.",
            ["create", "pull", "request", "github", "repository"],
            schema,
            None,
            "github",
        ),
        RouteDoc.of_tool(
            "fs__read_file", "read_file", "Read a file.", ["read", "file"], {"properties": {}}, None, "filesystem"
        ),
    ]
    vectors = np.stack([embedder.embed_document(tool_document(d.name, d.description)) for d in docs])

    def route(request: str, weight: float, floor: float = -9.0) -> tuple[dict[str, float], bool]:
        router = Router(embedder, docs, vectors, Calibration(floor=floor, platform_weight=weight))
        result = router.route(request)
        return {c.id: c.score for c in result.candidates}, result.abstained

    bitbucket = "Open a pull request on Bitbucket for acme/website from develop into master."
    plain, _ = route(bitbucket, 0.0)
    lowered, _ = route(bitbucket, 0.5)
    assert lowered["gh__create_pull_request"] == pytest.approx(plain["gh__create_pull_request"] - 0.5, abs=1e-5)
    assert lowered["fs__read_file"] == pytest.approx(plain["fs__read_file"], abs=1e-6)  # works on no platform
    floor = plain["gh__create_pull_request"] - 0.25  # a floor the GitHub tool clears on its own words
    assert plain["fs__read_file"] < floor
    assert not route(bitbucket, 0.0, floor)[1] and route(bitbucket, 0.5, floor)[1]  # so the request abstains
    for request in ("Open a pull request on GitHub for acme/website", "Open a pull request for acme/website"):
        same, _ = route(request, 0.5)
        assert same == route(request, 0.0)[0]  # its own platform, or none named: no penalty
    laptop = "Open the local branch feature/old on my laptop."  # no hosted platform reaches it
    plain, _ = route(laptop, 0.0)
    lowered, _ = route(laptop, 0.5)
    assert lowered["gh__create_pull_request"] == pytest.approx(plain["gh__create_pull_request"] - 0.5, abs=1e-5)
    assert lowered["fs__read_file"] == pytest.approx(plain["fs__read_file"], abs=1e-6)


@pytest.mark.anyio
async def test_a_dry_run_shows_the_call_and_runs_nothing(gateway: ClientSession) -> None:
    listing = result_text(
        await gateway.call_tool("call_tool", {"tool": "filesystem__list_allowed_directories", "arguments": {}})
    )
    target = Path(listing.strip().splitlines()[-1]) / "planned.txt"
    arguments = {"path": str(target), "content": "never written\n"}
    intent = "overwrite the file planned.txt with new text"
    plan = result_json(await gateway.call_tool("call", {"intent": intent, "arguments": arguments, "dry_run": True}))
    assert plan["status"] == "planned" and plan["tool"] == "filesystem__write_file", plan
    assert plan["arguments"] == arguments and plan["confirm"] == "destructive"
    assert plan["signature"].startswith("write_file(") and "nothing ran" in plan["message"]
    assert not target.exists()
    # a dry run checks the arguments as the real call would
    bad = await gateway.call_tool("call", {"intent": intent, "arguments": {"path": 3}, "dry_run": True})
    assert bad.is_error and "'path'" in result_text(bad), result_text(bad)


# Fusion weights of the kind the GitHub calibration chooses (``bench/results/calibration-github.json``),
# for routers over a few GitHub tools, where the defaults' smaller lexical and name weights decide otherwise.
GITHUB_WEIGHTS = Calibration(
    lexical_weight=0.3, affordance_weight=0.2, mood_weight=0.3, name_weight=0.2, unfilled_weight=0.3,
    server_weight=0.1, rerank_weight=0.0,
)  # fmt: skip


def test_a_placing_phrase_says_where_not_what(embedder: Embedder) -> None:
    """ "the newest commit on the develop branch" asks for a commit; "branch" only says where, and as a
    term it lent ``list_commits`` (whose description says "branch") and ``list_branches`` the request.
    A branch that is the request's object keeps its word."""
    assert without_place_nouns("the newest commit on the develop branch of a/b").split() == [
        "the", "newest", "commit", "on", "the", "develop", "of", "a/b"
    ]  # fmt: skip
    assert without_place_nouns("open README.md in my dotfiles repo") == "open README.md in my dotfiles "
    assert without_place_nouns("delete the branch feature/x from a/b") == "delete the branch feature/x from a/b"
    router = local_router(embedder, GITHUB_WEIGHTS, registry=FIXTURES / "github_commit_tools.json")
    assert router.route("show the newest commit on the develop branch of a/b").chosen == "github__get_commit"
    assert router.route("list branches of octo-org/app").chosen == "github__list_branches"


def test_a_named_repository_needs_a_tool_that_can_hold_it(embedder: Embedder) -> None:
    """ "git blame lib/response.js in expressjs/express" went to a local git server's ``git_blame``, which
    takes the file and its line numbers but has nowhere to put the repository; GitHub's tool takes all
    three. A file path alone names no hosted repository (it looks like ``owner/repo``, as "vercel/next.js"
    does), so the local tool pays nothing for it. Which of the two a bare file path then reaches is a
    near-tie (GitHub's since session 65's shorter documents, by 0.025 here; docs/routing.md); a request
    that says where the file is reaches the local tool."""
    assert names_a_slug("lib/response.js in expressjs/express")
    assert not names_a_slug("git blame lib/response.js") and not names_a_slug("the notes of 12/3")
    router = local_router(embedder, GITHUB_WEIGHTS, registry=FIXTURES / "blame_tools.json")
    hosted = router.route("git blame lib/response.js in expressjs/express", allow_rerank=False, limit=4)
    assert hosted.chosen == "github__get_file_blame"
    bare = router.route("git blame lib/response.js", allow_rerank=False, limit=4)
    local = "git-mcp-server__git_blame"
    penalty = GITHUB_WEIGHTS.affordance_weight * REPOSITORY_NOWHERE
    scores = [{c.id: c.score for c in result.candidates}[local] for result in (bare, hosted)]
    assert scores[0] - scores[1] > 0.8 * penalty, scores
    assert router.route("git blame lib/response.js on my machine", allow_rerank=False).chosen == local


def test_a_pasted_link_reads_as_what_it_points_at(embedder: Embedder) -> None:
    """A link was a value blanked whole and a URL slot: "What have people been saying in the comments on
    https://github.com/riverbank/payments/issues/57?" went to a web fetcher, and 23 of 43 GitHub dev
    requests rewritten with links were routed right at N = 250 against 36 of the same requests as
    written (session 57). A code host's link now leaves the words for what it points at ("issue", "pull
    request", "file") and names a repository and a number; any other link stays a web page."""
    assert without_values("Post 'Thanks!' on https://github.com/o/r/issues/310.").split() == ["Post", "on", "issue"]
    assert without_values("see https://github.com/o/r/pull/3#discussion_r9").split() == [
        "see", "pull", "request", "comment"
    ]  # fmt: skip
    assert without_values("see https://example.com/o/r/issues/310").split() == ["see"]
    assert without_values("https://gitlab.com/group/sub/app/-/merge_requests/5").split() == ["merge", "request"]
    router = local_router(embedder, GITHUB_WEIGHTS, registry=FIXTURES / "pasted_link_tools.json")
    chosen = {
        request: router.route(request, allow_rerank=False).chosen
        for request in (
            "What have people been saying in the comments on https://github.com/riverbank/payments/issues/57?",
            "has anyone approved https://github.com/vercel/next.js/pull/71234 yet?",
            "grab the text of https://github.com/o/r/blob/main/README.md",
            "summarise the page https://example.com/blog/post-1",
            "fetch https://docs.python.org/3/library/re.html",
        )
    }
    assert list(chosen.values()) == [
        "github__issue_read",
        "github__pull_request_read",
        "github__get_file_contents",
        "firecrawl-mcp__firecrawl_scrape",
        "mcp-server-fetch__fetch",
    ], chosen


PASTED_TRACE = """Traceback (most recent call last):
  File "/app/server/main.py", line 88, in handle_request
    user = session.get_user(token)
KeyError: 'a81f3c'
"""
PASTED_LOG = """2024-06-11 14:02:17,331 INFO  worker.scheduler  picked job 8812 from queue "reports"
2024-06-11 14:02:19,902 WARN  worker.db  slow query (2411 ms): SELECT * FROM invoices
2024-06-11 14:02:21,004 ERROR worker.db  connection reset by peer"""


def test_pasted_material_is_no_part_of_what_the_request_asks(embedder: Embedder) -> None:
    """A pasted trace's paths and line numbers took "has anyone reported this in acme/api?" to
    ``get_file_blame``, and the GitHub dev requests with a trace, log, code or JSON pasted beside them
    went from 138 to 78–87 of 166 right at N = 250 (session 58). The router reads a request without its
    pasted lines; a list the request itself writes, or key-value lines, stay."""
    pasted = split_pasted("File this in acme/api please:\n" + PASTED_TRACE + "\nthanks")
    assert pasted == Pasted("File this in acme/api please:\n\nthanks", PASTED_TRACE.strip())
    # a header that ends in a colon, right under the request, may be the request introducing the block,
    # but a traceback's header is Python's own (session 60)
    assert without_pasted("Please file this in acme/api\n" + PASTED_TRACE) == "Please file this in acme/api"
    unsure = without_pasted("Please file this in acme/api\nWhile syncing:\n    x = f(1)\n    y = g(x)")
    assert unsure == "Please file this in acme/api\nWhile syncing:"
    assert without_pasted("TypeError: x is undefined\n    at f (a.js:1:2)\n    at g (b.js:3:4)\n\nwho broke it?") == (
        "who broke it?"
    )  # the header an indented run hangs under goes with it
    assert (
        without_pasted("search acme/api for this\n```py\nx = f(1)\n```\nthanks") == "search acme/api for this\nthanks"
    )
    assert without_pasted("npm ERR! code E1\nnpm ERR! peer dep\nnpm ERR! stop\nfix the build") == "fix the build"
    assert without_pasted('open an issue\n{"status": 500, "error": "Internal"}') == "open an issue"
    written = "Update gist 5b1e9f0c2d4a: replace todo.txt with\n- renew domain\n- file taxes\nand retitle it"
    assert without_pasted(written) == written
    listed = "Create a draft pull request in acme/app.\n- head: fix/rounding\n- base: release/3.2\n- title: Fix totals"
    assert without_pasted(listed) == listed
    items = 'Push two files:\n1. app/strings.json with content {"hi": "Hi!"}\n2. README.md with content # Hi'
    assert without_pasted(items) == items  # the request's own list, however little of it is words
    assert without_pasted("    just indented prose\n    on two lines") == "    just indented prose\n    on two lines"
    assert without_pasted(PASTED_LOG) == PASTED_LOG  # nothing but pasted: read as it is
    # a line that only says what the block is goes with it, when the request says something else
    assert without_pasted("I keep getting this:\n" + PASTED_TRACE + "\n\nwho broke it?") == "who broke it?"
    assert without_pasted("who broke it?\nHere's what I'm seeing:\n" + PASTED_TRACE) == "who broke it?"
    for asks in ("Open an issue in acme/api with this trace:", "I want to open an issue with this:"):
        assert without_pasted(f"{asks}\n{PASTED_TRACE}\n\nlabel it bug") == f"{asks}\n\nlabel it bug"
    assert without_pasted("Getting this in prod:\n" + PASTED_TRACE) == "Getting this in prod:"  # all it says
    # what only a program writes at a line's start goes with the block beside it: Go's panic over its
    # goroutines, a blank line apart, though it reads as words (session 60)
    panic = "panic: assignment to entry in nil map\n\ngoroutine 1 [running]:\nmain.(*R).Add(...)\n\t/src/r.go:42"
    assert split_pasted(f"{panic}\n\nhas this been reported?") == Pasted("has this been reported?", panic)
    assert without_pasted("fatal: errors like this keep coming\nfix the build") == (
        "fatal: errors like this keep coming\nfix the build"
    )  # no block beside it: the request's own line
    # what only a program writes, wherever it stands: a diagnostic led by its file and line, a line led by
    # a date and time or a loud level, a table's rows aligned by runs of spaces (session 60)
    for block in (
        "src/routes/orders.ts:88:15 - error TS2345: Argument of type 'string' is not assignable.",
        "Program.cs(12,17): error CS0103: The name 'taxRate' does not exist in the current context",
        "[ERROR] Failed to execute goal on project billing: There are test failures.",
        "2025/04/09 22:41:07 [error] 2211#2211: upstream timed out while reading response header",
        "NAME          READY   STATUS             RESTARTS\napi-7d9c8b6f5   0/1     CrashLoopBackOff   14",
        "thread 'main' panicked at src/parser.rs:214:18:\ncalled `Option::unwrap()` on a `None` value",
    ):
        assert split_pasted(f"{block}\n\nwho broke it?") == Pasted("who broke it?", block)
    for written in ("Error when I push to main, search the issues\nthanks", "The README says: run make\nok?"):
        assert without_pasted(written) == written
    router = local_router(embedder, GITHUB_WEIGHTS, registry=FIXTURES / "pasted_material_tools.json")
    chosen = chosen_tools(
        router,
        "Has anyone already reported this in acme/api?\n\n" + PASTED_TRACE,
        PASTED_TRACE + "\nhas anyone reported this in acme/api already?",
        "search the code of acme/api for where handle_request is defined\n\n" + PASTED_TRACE,
        PASTED_LOG + "\n\nwhat changed in acme/worker's last few commits on main?",
    )
    assert chosen == ["github__search_issues", "github__search_issues", "github__search_code", "github__list_commits"]


def test_material_the_request_points_at_goes_to_a_tool_that_can_hold_it(embedder: Embedder) -> None:
    """ "Any reports of this in acme/worker?" over a pasted log went to ``get_file_blame``, and "Did
    anybody open an issue for the error above?" to ``issue_write`` (session 61: 12 of the 20 searches of
    ``bench/data/pasted-search-dev.jsonl`` routed right). What the request points at is text that a
    parameter must hold, a search's query or a write's body, so it counts as a slot the request names;
    the tools that take none rank lower, but a request about something else still reaches them. And a
    change asked about after "did" reports one: "did anybody open …" reads. A caption left in the request
    over a block the rules do not read ("I keep getting this:" over an Elixir error) points at nothing
    the request asks about: with it, "what files are at the top level of psf/requests?" went to
    ``search_issues``."""
    assert points_back("Find where this is thrown in acme/billing:") and points_back("Is this a known bug?")
    assert not points_back("I keep getting this:\n** (FunctionClauseError) no function clause matching in f/1")
    assert points_back("We hit this in production:\n\nare there issues in apache/kafka about it?")  # block cut
    search = {"properties": {"query": {"type": "string"}, "sort": {"type": "string", "enum": ["created"]}}}
    assert "text" in tool_affordances(search) and "text" in tool_affordances(
        {"properties": {"issue_body": {"type": "string"}}}
    )
    assert "text" not in tool_affordances({"properties": {"body": {"type": "string", "enum": ["a", "b"]}}})
    assert "text" not in tool_affordances({"properties": {"owner": {"type": "string"}, "sha": {"type": "string"}}})
    assert "text" not in tool_requirements({**search, "required": ["query"]})  # a request without material lacks none
    assert request_mood("Did anybody open a PR for the error above?") == READ
    assert request_mood("open a PR for the error above") == WRITE
    router = local_router(embedder, GITHUB_WEIGHTS, registry=FIXTURES / "pasted_material_tools.json")
    chosen = chosen_tools(
        router,
        "Any reports of this in acme/worker?\n\n" + PASTED_LOG,
        "Did anybody open an issue for the error above in acme/api?\n" + PASTED_TRACE,
        "which job in acme/worker printed the log below?\n" + PASTED_LOG,
    )
    assert chosen == ["github__search_issues", "github__search_issues", "github__get_job_logs"]
    assert "issue" in router.bm25.query_terms("Is this a known bug in acme/api?")  # a bug report is an issue


def test_a_change_no_tool_makes_abstains(embedder: Embedder) -> None:
    """ "Lock the conversation on issue 57" asks GitHub's server for an operation it has no tool for;
    the tools that do another thing to the same issue took it. No writing tool says "lock" in any form
    or by a word for the same operation (a reader that reports whether an issue is locked makes no
    lock), so every tool counts as a mismatch of the request's mood and the request abstains."""
    assert asked_changes("Lock the conversation on issue 57, it's getting heated.") == ("lock",)
    assert asked_changes("Post 'please merge and close' on issue 5") == ("post",)  # the quote asks nothing
    assert asked_changes("did anyone close #12?") == () and asked_changes("watch the repo") == ()
    vocabulary = ChangeVocabulary(["assigne", "block", "closed", "comment", "add", "updat"])
    assert vocabulary.says("assign") and vocabulary.says("close") and not vocabulary.says("lock")
    assert vocabulary.makes_none_of(["lock"]) and not vocabulary.makes_none_of(["lock", "assign"])
    assert not vocabulary.makes_none_of(["post"]) and not vocabulary.makes_none_of(["rename"])  # add; update
    schema = {"properties": {"owner": {"type": "string"}, "repo": {"type": "string"}, "issue_number": {}}}
    tools = [
        ("issue_write", "Create a new or update an existing issue: title, body, state (open or closed)."),
        ("add_issue_comment", "Add a comment to an issue."),
        ("issue_read", "Get an issue: its title, body, comments and whether it is locked."),
    ]
    docs = [
        RouteDoc.of_tool(
            f"gh__{name}", name, text, LexicalDocument.of_tool(name, text, schema).tokens(), schema, None, "github"
        )
        for name, text in tools
    ]
    vectors = np.stack([embedder.embed_document(tool_document(d.name, d.description)) for d in docs])

    def scores(request: str, mood_weight: float) -> dict[str, float]:
        router = Router(embedder, docs, vectors, Calibration(floor=-9.0, mood_weight=mood_weight))
        return {c.id: c.score for c in router.route(request, allow_rerank=False).candidates}

    lock = "Lock the conversation on issue 57 in riverbank/payments."
    plain, lowered = scores(lock, 0.0), scores(lock, 0.3)
    floor = max(plain.values()) - 0.1  # one the request clears without the rule
    result = Router(embedder, docs, vectors, Calibration(floor=floor, mood_weight=0.3)).route(lock, allow_rerank=False)
    assert result.abstained and result.unmade == ("lock",) and result.trace()["no_tool_makes"] == ["lock"]
    assert lowered["gh__issue_write"] == pytest.approx(plain["gh__issue_write"] - 0.3, abs=1e-5)
    assert lowered["gh__issue_read"] == pytest.approx(plain["gh__issue_read"] - 0.6, abs=1e-5)  # reads, too
    for request in ("Close issue 57 in riverbank/payments.", "Post a reply on issue 57 in riverbank/payments."):
        plain, lowered = scores(request, 0.0), scores(request, 0.3)
        assert lowered["gh__issue_write"] == pytest.approx(plain["gh__issue_write"], abs=1e-5), request


def test_a_change_no_tool_makes_to_the_named_object_abstains(embedder: Embedder) -> None:
    """ "Delete the branch feature/dark-mode" asks GitHub's server for a change it makes to other objects
    (files, repositories) to an object it makes other changes to (it creates branches): no score tells
    the look-alikes from a call, so the request abstains, whatever the floor. An object held as a field
    only changes with it ("change the title"); a light verb says no change of its own ("make a fork")."""
    assert asked_objects("Delete the branch feature/dark-mode from lumen-labs/lumen-ui on GitHub.") == [
        ("delete", "branch")
    ]
    assert asked_objects("Create a new milestone called 'v3.0' due 2025-12-01") == [("create", "milestone")]
    assert asked_objects("add fatima-z and gus-o as reviewers") == []  # values only: no object named
    assert asked_objects("delete the repo dana-k/old-experiments. yes I'm sure") == [("delete", "repository")]
    schema = {"properties": {"owner": {}, "repo": {}, "branch": {}, "title": {}}}
    labels = {"properties": {"method": {"enum": ["create", "update", "delete"]}, "name": {}}}
    tools = [
        ("create_branch", "Create a new branch in a GitHub repository.", schema),
        ("delete_file", "Delete a file from a branch of a GitHub repository.", schema),
        ("update_issue_title", "Change the title of an issue.", schema),
        ("label_write", "Write operations on labels.", labels),
        ("fork_repository", "Fork a GitHub repository to your account.", schema),
        ("get_branch", "Get a branch.", schema),
    ]
    docs = [
        RouteDoc.of_tool(
            f"gh__{name}", name, text, LexicalDocument.of_tool(name, text, spec).tokens(), spec, None, "github"
        )
        for name, text, spec in tools
    ]
    changes = ObjectChanges((d.mood, d.tokens, d.objects) for d in docs)
    assert changes.unmade([("delete", "branch")]) == ["delete a branch"]  # delete_file's branch is a field
    assert changes.unmade([("create", "branch"), ("delete", "label"), ("change", "title")]) == []
    assert changes.unmade([("make", "fork"), ("delete", "milestone")]) == []  # light; no tool writes milestones
    vectors = np.stack([embedder.embed_document(tool_document(d.name, d.description)) for d in docs])
    router = Router(embedder, docs, vectors, Calibration(floor=-9.0, mood_weight=0.3))
    result = router.route("Delete the branch feature/dark-mode from lumen-labs/lumen-ui", allow_rerank=False)
    assert result.abstained and result.unmade == ("delete a branch",)
    assert router.route("Create a branch 'fix-login' in acme/web", allow_rerank=False).chosen == "gh__create_branch"
    off = Router(embedder, docs, vectors, Calibration(floor=-9.0, mood_weight=0.0))  # no mood, no reading of it
    assert not off.route("Delete the branch feature/dark-mode", allow_rerank=False).abstained


@dataclass(frozen=True)
class Listed:
    """A candidate as the judge's filter sees it: a name and the server's raw tool."""

    name: str
    raw: dict[str, Any]


def test_the_judge_is_shown_the_routers_choice_and_the_tools_of_the_requests_mood() -> None:
    """ "check out the branch" reads as a look-up ("check"), and git_checkout writes: the router ranked it
    first anyway, so the judge may keep it, while another writing tool still leaves the list."""
    writes, reads = {"annotations": {"readOnlyHint": False}}, {"annotations": {"readOnlyHint": True}}
    checkout, branch, commit = Listed("git_checkout", writes), Listed("git_branch", reads), Listed("git_commit", writes)
    request = "check out the branch feature/login"
    assert request_mood(request) == READ
    assert judge_candidates(request, [checkout, branch, commit]) == [checkout, branch]
    assert judge_candidates(request, [branch, checkout, commit]) == [branch]  # one left: the router's stands


def test_a_version_fills_no_identifier(embedder: Embedder) -> None:
    """ "Are there issues in celery/celery about logger imports breaking in 5.3?" went to
    ``issue_read(issue_number)``: the "5" and "3" of a version seemed to fill its number, so it paid no
    penalty for the number the request never gives. A version or a decimal fills no identifier (a
    required number named ``…_number``, ``…Id``), but still a height or a rating."""
    assert not names_a_whole_number("breaking in 5.3 and v11.0.x, rated 4.5")
    assert names_a_whole_number("issue 41 in 5.3") and names_a_whole_number("see https://github.com/a/b/issues/3")
    assert requires_an_identifier({"properties": {"pullNumber": {"type": "number"}}, "required": ["pullNumber"]})
    assert not requires_an_identifier({"properties": {"roomHeight": {"type": "number"}}, "required": ["roomHeight"]})
    router = local_router(embedder, GITHUB_WEIGHTS, registry=FIXTURES / "version_tools.json")
    chosen = chosen_tools(
        router,
        "Are there issues in celery/celery about logger imports breaking in 5.3?",
        "Show me issue 5 in celery/celery",
    )
    assert chosen == ["github__search_issues", "github__issue_read"]


def test_a_required_identifier_about_another_thing_is_unfilled(embedder: Embedder) -> None:
    """ "file an issue in acme-corp/billing-service '…' under milestone 7" went to
    ``update_issue_milestone``: its required ``issue_number`` seemed filled by the 7, which numbers a
    milestone. A number named by what it numbers fills only a required identifier about that thing."""
    tools = {t["name"]: t["inputSchema"] for t in json.loads((FIXTURES / "milestone_tools.json").read_text())}
    assert required_identifiers(tools["update_issue_milestone"]) == (frozenset({"issue", "number", "update"}),)
    assert required_identifiers(tools["issue_write"]) == ()
    router = local_router(embedder, GITHUB_WEIGHTS, registry=FIXTURES / "milestone_tools.json")
    chosen = chosen_tools(
        router,
        "file an issue in acme-corp/billing-service 'Add VAT support for EU invoices' under milestone 7",
        "Issue 92 in acme-corp/billing-service slipped, put it in milestone 8",
    )
    assert chosen == ["github__issue_write", "github__update_issue_milestone"]


def test_a_number_named_by_what_it_numbers_fills_only_a_parameter_about_that(embedder: Embedder) -> None:
    """ "workflow run 9876543210" went to ``actions_list``, whose ``page`` took the number as well as
    ``actions_get``'s run id (the string ``resource_id``, "… a workflow run ID") would have, and "has
    anyone approved PR 71234" to ``search_pull_requests`` by its page. A number the request names by what
    it numbers fills only a parameter about that thing; a count ("the last 5") or a bare ``#204`` still
    fills any number."""
    assert numbered_objects("has anyone approved vercel/next.js PR 71234 yet?") == [frozenset({"pull", "request"})]
    assert numbered_objects("workflow run 9876543210, job #3") == [frozenset({"run"}), frozenset({"job"})]
    for unnamed in ("the last 5 releases", "page 2 please", "octo-org/app#204 ship it", "add 2 and 3", "in 5.3"):
        assert numbered_objects(unnamed) is None, unnamed
    tools = {t["name"]: t["inputSchema"] for t in json.loads((FIXTURES / "numbered_tools.json").read_text())}
    assert "run" in id_parameter_words(tools["actions_get"])
    assert "pull" in id_parameter_words(tools["pull_request_read"])
    assert not id_parameter_words(tools["search_pull_requests"])  # a page numbers pages
    router = local_router(embedder, GITHUB_WEIGHTS, registry=FIXTURES / "numbered_tools.json")
    chosen = chosen_tools(
        router,
        "Something's off with workflow run 9876543210 in acme-corp/billing-service. What triggered it?",
        "show me the last 5 releases of home-assistant/core",
    )
    assert chosen == ["github__actions_get", "github__list_releases"]
