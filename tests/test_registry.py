"""Tool ids, signatures, BM25, argument validation and the checksummed registry cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nexus_gateway import cache as cache_module
from nexus_gateway.cache import RegistryCache, schema_key
from nexus_gateway.exceptions import ArgumentError, ToolNotFound
from nexus_gateway.lexical import BM25Index, LexicalDocument, NameCoverage, one_edit_apart, split_identifier, tokenize
from nexus_gateway.registry import Registry
from nexus_gateway.signature import first_sentence, signature
from nexus_gateway.toolids import VALID_ID, assign_ids
from nexus_gateway.validation import validate_arguments


def test_ids_are_valid_unique_and_deterministic() -> None:
    pairs = [
        ("github", "create_issue"),
        ("my.server", "tool with spaces/and:colons"),
        ("a" * 40, "b" * 40),
        ("x", "a.b"),
        ("x", "a_b"),
    ]
    ids = assign_ids(pairs)
    assert all(VALID_ID.match(i) for i in ids.values())
    assert len(set(ids.values())) == len(pairs)
    assert ids[("github", "create_issue")] == "github__create_issue"
    assert len(ids[("a" * 40, "b" * 40)]) == 64
    assert assign_ids(list(reversed(pairs))) == ids
    assert assign_ids(pairs, unprefixed="github")[("github", "create_issue")] == "create_issue"


def test_signature_covers_enums_arrays_nested_and_refs() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "state": {"type": "string", "enum": ["open", "closed"], "default": "open"},
            "labels": {"type": "array", "items": {"type": "string"}},
            "owner": {"$ref": "#/$defs/Owner"},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["name"],
        "$defs": {"Owner": {"type": "object", "properties": {"login": {"type": "string"}}}},
    }
    text = signature("list_issues", schema, "List issues. Many of them.")
    assert text == (
        'list_issues(name: string, state?: "open"|"closed" = "open", labels?: string[], '
        "owner?: {login?: string}, limit?: integer) — List issues."
    )
    assert first_sentence("One. Two.") == "One."


def test_tokenizer_splits_identifiers() -> None:
    assert split_identifier("list_pullRequests") == "list pull Requests"
    assert tokenize("get-PullRequestFiles") == ["get", "pull", "request", "file"]
    # "-ing" gives back its verb, silent e and all: "stage src/app.py" finds git_add's "staging area"
    assert tokenize("staging creating running opening listing") == ["stage", "create", "run", "open", "list"]
    assert tokenize("stage") == tokenize("staging") and tokenize("staged") == ["staged"]  # "-ed" stays


def test_bm25_ranks_the_matching_document_first() -> None:
    index = BM25Index([tokenize("create issue in repository"), tokenize("list pull requests"), tokenize("get time")])
    assert index.top("open a pull request list", 2)[0][0] == 1
    assert index.top("nothing matches zzz", 3) == []


def test_validation_names_the_failing_field() -> None:
    schema = {
        "type": "object",
        "properties": {"labels": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    with pytest.raises(ArgumentError, match=r"field 'labels\[1\]'"):
        validate_arguments("t", schema, {"n": 1, "labels": ["a", 2]})
    with pytest.raises(ArgumentError, match="field 'n': is required"):
        validate_arguments("t", schema, {})
    with pytest.raises(ArgumentError, match="field 'extra': is not an accepted"):
        validate_arguments("t", schema, {"n": 1, "extra": True})
    validate_arguments("t", schema, {"n": 1, "labels": ["a"]})


def tools() -> list[dict[str, object]]:
    return [
        {
            "name": "get_current_time",
            "description": "Get the time in a zone.",
            "inputSchema": {"type": "object"},
        },
        {
            "name": "convert_time",
            "description": "Convert a time between zones.",
            "inputSchema": {"type": "object"},
        },
    ]


def test_registry_caches_by_schema_key_and_rebuilds_corrupt_files(tmp_path: Path) -> None:
    cache = RegistryCache(tmp_path)
    registry = Registry(cache)
    assert registry.set_server_tools("time", tools()) == 2
    assert Registry(cache).set_server_tools("time", tools()) == 0, "an unchanged tool was ingested twice"
    path = cache.tool_path(schema_key(tools()[0]))
    path.write_bytes(path.read_bytes()[:-5])
    assert cache.load_tool(schema_key(tools()[0])) is None and not path.exists()
    assert Registry(cache).set_server_tools("time", tools()) == 1
    warm = Registry(cache)
    assert warm.load_cached_server("time") and len(warm) == 2
    assert warm.search("convert a time")[0].entry.id == "time__convert_time"
    with pytest.raises(ToolNotFound, match="time__convert_time"):
        warm.get("time__convert_tim")


def test_an_entry_cached_by_older_code_is_recomputed(tmp_path: Path) -> None:
    """Cached entries carry their format; one written before enum values joined the lexical tokens
    must not keep routing on the old tokens."""
    cache = RegistryCache(tmp_path)
    Registry(cache).set_server_tools("time", tools())
    key = schema_key(tools()[0])
    old = cache.load_tool(key)
    assert old is not None
    cache.store_tool(key, {k: v for k, v in old.items() if k != "format"})
    assert not Registry(cache).load_cached_server("time"), "a warm start served an outdated entry"
    assert Registry(cache).set_server_tools("time", tools()) == 1


def test_enum_values_are_part_of_a_tools_lexical_document() -> None:
    schema = {
        "properties": {
            "content": {"type": "string", "enum": ["+1", "heart", "rocket"]},
            "options": {"type": "array", "items": {"type": "object", "properties": {"mode": {"enum": ["squash", 3]}}}},
        }
    }
    tokens = LexicalDocument.of_tool("add_reaction", "Add a reaction.", schema).tokens()
    assert {"heart", "rocket", "squash", "content", "option"} <= set(tokens)
    assert LexicalDocument.of_tool("ping", "", None).tokens() == ["ping", "ping"]


def test_lexical_expands_abbreviations_and_corrects_typos() -> None:
    assert tokenize("open PRs in the repo") == ["open", "pull", "request", "repository"]
    index = BM25Index([tokenize("create branch in a repository"), tokenize("list notifications")])
    assert index.correct("brnach") == "branch" and index.correct("notifcation") == "notification"
    assert index.correct("zzzz") is None and index.correct("teh") is None  # short tokens stay as typed
    assert index.top("make a new brnach", 1)[0][0] == 0


def test_a_typo_is_one_edit_and_a_typed_name_is_not_a_typo() -> None:
    index = BM25Index([tokenize("upload a logo"), tokenize("create a branch onto a name")])
    # "look" and "logo" share the deletion form "loo" but are two edits apart; "acme" and "name" too.
    assert index.correct("look") is None and index.correct("acme") is None
    assert index.correct("fodler") is None and index.correct("brnach") == "branch"  # a swap is one edit
    assert one_edit_apart("fodler", "folder") and one_edit_apart("logo", "log") and not one_edit_apart("ab", "ba b")
    # the parts of an identifier are names: "octo" stays "octo" (not "onto"), while prose is corrected
    assert index.query_terms("merge the brnach of octo-org") == ["merge", "branch", "octo", "organization"]
    assert "onto" in index.query_terms("put the octo branch back")
    # a number is not a typo: "five" stays five, not "file"; "show" frames the request (show me X = read X),
    # so it does not match `git_show` by name
    shows = BM25Index([tokenize("get a file"), tokenize("git show: shows a commit")])
    assert shows.query_terms("show the last five commits") == ["last", "five", "commit"]
    # the framing of a request ("I need to see", "tell me") is no operation: a hub tool whose description
    # says "needs to check" and "wants to see" gains nothing from it
    hub = BM25Index([tokenize("get file contents"), tokenize("notifications: use when the user needs to see updates")])
    assert hub.query_terms("I need to see the file contents") == ["file", "content"]
    assert hub.top("tell me, I need to see the file", 1)[0][0] == 0  # "need" and "see" outweighed "file"


def test_a_word_the_registry_never_says_is_read_as_its_plain_synonym() -> None:
    index = BM25Index([tokenize("create a new directory"), tokenize("delete relations from the graph")])
    # "folder" and "forget" appear in no tool: the words the tools use for them stand in
    assert index.query_terms("create a folder named build") == ["create", "directory", "named", "build"]
    assert index.query_terms("forget the relation between Alice and Bob")[0] == "delete"
    assert index.top("create a folder named build", 1)[0][0] == 0
    # a repository's history is its log: git's server says "commit logs", never "history"
    git = BM25Index([tokenize("git_log Shows the commit logs"), tokenize("git_show Shows the contents of a commit")])
    assert git.query_terms("show the history of the repository") == ["log", "repository"]
    assert git.top("show the history of the repository", 1)[0][0] == 0
    # a registry that says "folder" keeps it, and a synonym the registry does not say is no help
    assert BM25Index([tokenize("list a folder")]).query_terms("list the folder") == ["list", "folder"]
    assert BM25Index([tokenize("list files")]).query_terms("forget it")[0] == "forget"


def test_argument_values_in_a_request_are_no_lexical_terms() -> None:
    """A request to print log.txt names a file to read, not ``git_log``: quoted text, paths, URLs, file names
    and globs are what a call acts on; a file name leaves only the word "file". Apostrophes inside words
    are not quotes."""
    index = BM25Index([tokenize("read the contents of a file"), tokenize("git log: shows the commit logs")])
    assert index.query_terms("print the contents of /tmp/log.txt") == ["print", "content", "file"]
    assert index.query_terms("print the contents of /tmp/log.txt", value_kinds=False) == ["print", "content"]
    assert index.top("print the contents of log.txt", 1)[0][0] == 0
    assert index.query_terms("find every file named *.log") == ["find", "every", "file", "named"]
    assert index.query_terms("save 'fix the log' to notes.md") == ["save", "file"]
    assert index.query_terms('commit with message "update logs" from https://x.io/a') == ["commit", "message"]
    assert {"log", "guess"} <= set(index.query_terms("what's in the log, don't guess"))


def test_query_function_words_and_name_coverage() -> None:
    # "what" in one long description no longer takes the lexical signal from a request that says "whats".
    index = BM25Index([tokenize("list notifications: see what changed"), tokenize("get file contents of a folder")])
    assert index.query_terms("whats in the docs folder") == ["doc", "folder"]
    assert index.top("whats in the docs folder", 2)[0][0] == 1
    names = NameCoverage(["search_issues", "search_code", "list_pull_requests", "get_me"])
    index = BM25Index([tokenize("search issues"), tokenize("search code"), tokenize("list pull requests")])
    said = names.scores(index.query_terms("search issues across all of github: memory leak"))
    assert said.tolist() == [1.0, 0.5, 0.0, 0.0]
    assert names.scores(index.query_terms("open PRs in facebook/react"))[2] == np.float32(2 / 3)


def test_an_installed_package_caches_in_the_users_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """site-packages may not be writable: only a source checkout keeps its cache beside the code."""
    monkeypatch.delenv("NEXUS_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(cache_module, "CHECKOUT", tmp_path / "site-packages")
    assert cache_module.default_cache_dir() == tmp_path / "xdg" / "nexus-gateway" / "registry"
    (tmp_path / "site-packages").mkdir()
    (tmp_path / "site-packages" / "pyproject.toml").write_text("")
    assert cache_module.default_cache_dir() == tmp_path / "site-packages" / "registry_cache"
    monkeypatch.setenv("NEXUS_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_module.default_cache_dir() == tmp_path / "mine"


def test_words_the_registry_writes_as_one_are_read_as_one() -> None:
    """git's server says "checkout", the request "check out": apart, the two words matched
    ``git_branch``'s "check" and nothing of ``git_checkout``."""
    git = BM25Index([tokenize("git_checkout Switches branches"), tokenize("git_branch List branches, check them")])
    assert git.query_terms("check out the branch feature/login") == ["check", "out", "branch", "checkout"]
    assert git.top("check out the branch feature/login", 1)[0][0] == 0
    # a function word does not open a compound ("in it" is no init), nor does a value ("'set up'")
    init = BM25Index([tokenize("init a repository"), tokenize("setup a project")])
    assert "init" not in init.query_terms("is there a README in it")
    assert "setup" not in init.query_terms("post 'set up' on issue 4")
