"""Local argument generation on the real default model (pulled by ``.ci/run``), and ``call(intent)``
end to end through the gateway to the real filesystem server."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import llama_cpp
import pytest
from conftest import (
    TESTS,
    node_server,
    python_server,
    real_servers,
    result_json,
    result_text,
    run_cli,
    stdio_gateway,
    write_config,
)
from mcp import ClientSession
from mcp.types import CallToolResult

from nexus_gateway.arguments import ArgumentGenerator, Generation
from nexus_gateway.decoding import _value_end, schema_grammar
from nexus_gateway.embedder import whole_words
from nexus_gateway.engine import (
    ContextOverflow,
    EngineSettings,
    EngineStopped,
    LlamaEngine,
    _abort_check,
    _silence_llama_logs,
)
from nexus_gateway.eval_args import leaks, schema_valid, score_arguments
from nexus_gateway.generation_service import GenerationService
from nexus_gateway.grounding import (
    as_globs,
    excluded_when_said,
    file_kind_globs,
    ground,
    said_once_used_once,
    spelled_numbers,
)
from nexus_gateway.ir import IR_TOKEN_BUDGET, choice_ir, compressed_ir
from nexus_gateway.mentions import (
    branch_roles,
    free_text_keys,
    named_keys,
    named_values,
    number_cues,
    ones_from_an_end,
    quoted_spans,
    said_flags,
    stated_branches,
    stated_entities,
)
from nexus_gateway.model_store import DEFAULT_MODEL, lookup, model_path
from nexus_gateway.pasted import headline, split_pasted
from nexus_gateway.placement import (
    anchor_repository,
    bare_quotes,
    carried_identifiers,
    content_not_links,
    cued_numbers,
    labelled_lines,
    listed_items,
    my_repository,
    number_not_id,
    other_repository,
    own_repository_elsewhere,
    pasted_material,
    place_stated,
    pointed_branch,
    pull_request_branches,
    quotes_where_named,
    renamed_to,
    result_values_unasked,
    scope_qualifiers,
    searched_material,
    singled_out_number,
    source_branch_from_window,
    split_owner_repo,
    stated_homes,
    stated_kinds,
    stated_owner,
    stated_pairs,
    update_of_a_named_record,
    whole_colon_tail,
    whole_path,
    whole_word,
    window_numbers_of_their_kind,
    window_numbers_placed,
)
from nexus_gateway.signature import described_options, with_described_options
from nexus_gateway.window import SessionWindow, referent, surrogate

REGISTRY = json.loads((TESTS / "fixtures" / "local_registry.json").read_text())
ISSUE = {
    "type": "object",
    "properties": {
        "owner": {"type": "string"},
        "repo": {"type": "string"},
        "issue_number": {"type": "integer"},
        "state": {"type": "string", "enum": ["open", "closed"]},
        "page": {"type": "integer"},
    },
    "required": ["owner", "repo", "issue_number"],
}


@pytest.fixture(scope="module")
def generator() -> Iterator[ArgumentGenerator]:
    engine = LlamaEngine(EngineSettings(str(model_path(lookup(DEFAULT_MODEL))), n_threads=1, n_ctx=4096))
    generator = ArgumentGenerator(engine)
    # as the gateway does at start: a cold first prompt is prefilled in one batch and a warm one in two, and
    # the 0.5B model's near-ties (the chooser's convert_time / get_current_time) can tip either way
    generator.warm()
    yield generator
    engine.close()


def test_compressed_ir_covers_enums_arrays_nested_refs_and_unions() -> None:
    schema = {
        "type": "object",
        "$defs": {"Ref": {"type": "object", "properties": {"branch": {"type": "string"}, "sha": {"type": "string"}}}},
        "properties": {
            "state": {"type": "string", "enum": ["open", "closed"]},
            "labels": {"type": "array", "items": {"type": "string"}},
            "head": {"$ref": "#/$defs/Ref"},
            "due": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "perPage": {"type": "integer"},
            "name": {"type": "string"},
        },
        "required": ["name"],
    }
    assert compressed_ir("make_thing", schema) == (
        "make_thing(state?: open|closed, labels?: str[], head?: {branch?, sha?}, due?, name)"
    )  # no types for scalars, no quotes, no pagination, no description: the router has chosen the tool
    spaced = {"properties": {"status": {"enum": ["in progress", "done"]}, "count": {"type": "integer"}}}
    assert compressed_ir("set_status", spaced) == 'set_status(status?: "in progress"|done, count?)'
    # choosing among close tools reads them typed, quoted and described
    described = choice_ir("make_thing", schema, "Make a thing in a place. Long details follow here.")
    assert described == (
        'make_thing(state?: "open"|"closed", labels?: str[], head?: {branch?, sha?}, due?, name) '
        "— Make a thing in a place"
    )


def test_the_ir_for_a_request_shows_the_parameters_it_can_fill() -> None:
    schema = {
        "properties": {
            "method": {"type": "string", "enum": ["create", "update", "delete", "lock"]},
            "owner": {"type": "string"},
            "issue_number": {"type": "integer"},
            "issue_fields": {"type": "array", "items": {"type": "string"}},
            "assignees": {"type": "array", "items": {"type": "string"}},
            "labels": {"type": "array", "items": {"type": "string"}},
            "state": {"type": "string", "enum": ["open", "closed"]},
            "body": {"type": "string"},
            "milestone": {"type": "integer"},
        },
        "required": ["method", "owner"],
    }
    full = compressed_ir("issue_write", schema)
    assert "milestone?)" in full and "create|update|delete|lock" in full  # no request: every parameter
    assert compressed_ir("issue_write", schema, intent="") == (
        "issue_write(method: create|update|delete|…, owner)"
    )  # a request that names nothing: the required ones
    said = "edit issue 5 in acme/web: assign it to hana-k, label it bug and close it"
    # "assign" names assignees, "label" labels, "close" the value closed; "edit" the update method (only the
    # values said are shown); "5" is a number for issue_number; "issue" is the tool's own word, no mention
    # of issue_fields
    assert compressed_ir("issue_write", schema, intent=said) == (
        "issue_write(method: update|…, owner, issue_number?, assignees?: str[], labels?: str[], state?: closed|…)"
    )
    quoting = compressed_ir("issue_write", schema, intent="comment 'works for me' on acme/web#5")
    assert "body?" in quoting  # a quoted span needs a free-text key to live in
    string = {"type": "string"}
    search = {"properties": {"query": string, "owner": string, "repo": string, "path": string}, "required": ["query"]}
    focused = compressed_ir("search_code", search, intent="find TODO in octo-org/app")
    assert focused == "search_code(query, owner?, repo?)"
    # a flag the request names by its opposite ("public" → private: false) is shown, not an enum to cut
    flag = {"properties": {"name": string, "private": {"type": "boolean"}}, "required": ["name"]}
    assert compressed_ir("create_repository", flag, intent="make a public repo called blog") == (
        "create_repository(name, private?)"
    )


def test_grammar_compiles_for_every_registry_schema() -> None:
    for tool in REGISTRY:
        grammar = schema_grammar(tool["inputSchema"])
        assert llama_cpp.LlamaGrammar.from_string(grammar, verbose=False) is not None, tool["name"]


def test_grounding_drops_what_the_request_does_not_say() -> None:
    raw = {"owner": "octo-org", "repo": "<repo>", "issue_number": 412, "page": 1, "state": "closed"}
    kept, dropped = ground(raw, ISSUE, "what's issue 412 in octo-org/app about?")
    assert kept == {"owner": "octo-org", "issue_number": 412}
    assert set(dropped) == {"repo", "page", "state"}
    assert split_owner_repo({"owner": "octo-org/app", "repo": "x"}, ISSUE) == {"owner": "octo-org", "repo": "app"}
    labels = {"properties": {"labels": {"type": "array", "items": {"type": "string"}}}}
    kept, _ = ground({"labels": ["bug", "label"]}, labels, "show me the bug-labelled issues")
    assert kept == {"labels": ["bug"]}  # the key's own name is no value of it


def test_pasted_material_grounds_no_optional_value_but_prose() -> None:
    """The 0.5B model took ``issue_number: 8`` from a Docker log's step "#8" for a new issue; a pasted
    block says what the request is about, and an optional value must come from the request itself (the
    block itself becomes the body, ``placement.pasted_material``)."""
    issue = {
        "properties": {"owner": {}, "repo": {}, "title": {}, "issue_number": {"type": "number"}},
        "required": ["owner", "repo"],
    }
    log = "#8 2.314 ERROR: no matching distribution\n#8 2.315 ERROR: torch==2.9.1\n#8 ERROR: exit code: 1"
    request = f"file an issue in acme/ml titled 'build fails' with this log:\n{log}"
    raw = {"owner": "acme", "repo": "ml", "title": "build fails", "issue_number": 8}
    kept, dropped = ground(raw, issue, request, split_pasted(request).request)
    assert kept == {k: v for k, v in raw.items() if k != "issue_number"} and dropped == ["issue_number"]
    assert ground(raw, issue, request) == (raw, [])  # read as a whole, the log states an 8
    # a required value may come from the material: "which issue is this?" over a pasted header
    issue["required"] = ["owner", "repo", "issue_number"]
    assert ground(raw, issue, request, split_pasted(request).request) == (raw, [])


def test_a_value_said_once_fills_one_argument_the_current_directory_is_dot_the_last_commit_head() -> None:
    """The 0.5B model copied a search's pattern into its exclusions (which would exclude every match), and
    "the current directory" was dropped as a path nobody stated, so the gateway asked for it."""
    search = {
        "properties": {"path": {}, "pattern": {}, "excludePatterns": {"type": "array", "items": {}}},
        "required": ["path", "pattern"],
    }
    raw = {"path": ".", "pattern": "*.py", "excludePatterns": ["*.py"]}
    request = "search for *.py files in the current folder"
    assert ground(raw, search, request) == (raw, [])
    kept, dropped = said_once_used_once(raw, request)
    assert kept == {"path": ".", "pattern": "*.py"} and dropped == ["excludePatterns"]
    request = "find *.py files in the cwd, leaving out tests/*.py"
    assert said_once_used_once(raw, request) == (raw, [])  # said twice, used twice
    title = {"title": "fix login", "body": "fix login", "branch": "fix-login"}
    assert said_once_used_once(title, "open a PR 'fix login' from fix-login") == (title, [])  # free text repeats
    # optional free text that only copies a name another key holds is dropped; required, it stays
    repository = {"name": "scratchpad", "description": "scratchpad", "private": False}
    kept, dropped = said_once_used_once(repository, "new repo 'scratchpad', public pls")
    assert kept == {"name": "scratchpad", "private": False} and dropped == ["description"]
    assert said_once_used_once(repository, "new repo 'scratchpad', public pls", ["description"])[1] == []
    described = "new repo 'scratchpad' described as 'scratchpad'"
    assert said_once_used_once(repository, described) == (repository, [])
    kept, dropped = ground({"path": "."}, search, "what's in the docs folder")
    assert kept == {} and dropped == ["path"]  # no folder of the request is "."
    # the word before a value said once says which key keeps it: "to Paris" is the conversion's target
    paris = {"source_timezone": "Europe/Paris", "time": "15:00", "target_timezone": "Europe/Paris"}
    kept, dropped = said_once_used_once(paris, "and to Paris? convert 3pm")
    assert kept == {"time": "15:00", "target_timezone": "Europe/Paris"} and dropped == ["source_timezone"]
    named = {"path": "app.py", "pattern": "app.py"}  # "named" gives a name: the search's pattern, not its path
    assert said_once_used_once(named, "find files named app.py") == ({"pattern": "app.py"}, ["path"])
    kept, dropped = said_once_used_once(paris, "what is 3pm from Paris")
    assert kept == {"source_timezone": "Europe/Paris", "time": "15:00"} and dropped == ["target_timezone"]
    assert ground({"path": "."}, search, "list what is in this directory") == ({"path": "."}, [])
    show = {"properties": {"revision": {"type": "string"}}, "required": ["revision"]}
    assert ground({"revision": "HEAD"}, show, "show the last commit") == ({"revision": "HEAD"}, [])
    assert ground({"revision": "HEAD"}, show, "show the commit that added the logo") == ({}, ["revision"])


def test_an_identifier_must_be_stated_as_a_run_of_words() -> None:
    files = {"properties": {"owner": {}, "repo": {}, "path": {}, "branch": {}, "message": {}}}
    request = "in northwind/inventory-api delete old/legacy_api.py from the docs refresh branch, message 'tidy up'"
    raw = {
        "owner": "my-northwind",  # a possessive glued on
        "repo": "inventory-api",  # stated verbatim
        "path": "inventory-api.py",  # words from two places glued into one value
        "branch": "docs-refresh",  # re-spelled, but its words stand together
        "message": "tidy up the api",  # free text: half of its words suffice
    }
    kept, dropped = ground(raw, files, request)
    assert kept == {"repo": "inventory-api", "branch": "docs-refresh", "message": "tidy up the api"}
    assert set(dropped) == {"owner", "path"}
    kept, dropped = ground({"path": "docs/folder", "branch": "docs"}, files, "what is in the docs folder")
    assert kept == {"branch": "docs"} and dropped == ["path"]  # "/" is not a space
    kept, dropped = ground({"path": "top-level"}, files, "what files are at the top level of psf/requests")
    assert kept == {} and dropped == ["path"]  # a path is never re-spelled
    request = "In our Q&A discussion, mark the comment DC_kw4M as the answer"
    kept, dropped = ground({"owner": "Q&A", "repo": "our", "branch": "DC_kw4M"}, files, request)
    assert "owner" in dropped and kept.get("branch") == "DC_kw4M"  # an account name is a slug, not "Q&A"
    kept, _ = ground({"owner": "gitlab-org/ci.d", "repo": "runner_2"}, files, "in gitlab-org/ci.d/runner_2")
    assert kept == {"owner": "gitlab-org/ci.d", "repo": "runner_2"}


def test_a_bare_date_becomes_the_start_of_its_day_where_the_key_wants_a_timestamp() -> None:
    """GitHub's ``list_issues(since)`` asks for an ISO 8601 timestamp; the model writes "since March 1st,
    2025" as ``2025-03-01``. ``list_commits(since)`` takes either form and keeps what it was given."""
    schema = {
        "properties": {
            "since": {"type": "string", "description": "Filter by date (ISO 8601 timestamp)"},
            "until": {"type": "string", "description": "Before (ISO 8601: YYYY-MM-DDTHH:MM:SSZ or YYYY-MM-DD)"},
            "due": {"type": "string", "format": "date-time"},
            "day": {"type": "string", "description": "A day (YYYY-MM-DD)"},
        }
    }
    request = "issues touched between March 1st, 2025 and April 2nd, 2025, due May 3rd 2025, on the day June 4 2025"
    raw = {"since": "2025-03-01", "until": "2025-04-02", "due": "2025-05-03", "day": "2025-06-04"}
    kept, dropped = ground(raw, schema, request)
    assert not dropped
    assert kept == {**raw, "since": "2025-03-01T00:00:00Z", "due": "2025-05-03T00:00:00Z"}
    assert ground({"since": "2025-03-01T09:30:00Z"}, schema, "since 9:30 on March 1st, 2025")[0] == {
        "since": "2025-03-01T09:30:00Z"  # an instant already: as written
    }


def test_times_and_time_zones_the_model_normalised_count_as_stated() -> None:
    """The time server wants IANA names and HH:MM; requests say "in Tokyo" and "3pm"."""
    convert = {
        "properties": {
            "source_timezone": {"type": "string", "description": "Source IANA timezone name"},
            "time": {"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"},
            "target_timezone": {"type": "string", "description": "Target IANA timezone name"},
        },
        "required": ["source_timezone", "time", "target_timezone"],
    }
    raw = {"source_timezone": "America/New_York", "time": "15:00", "target_timezone": "Asia/Tokyo"}
    assert ground(raw, convert, "what's 3pm New York time in Tokyo?") == (raw, [])
    assert leaks({"source_timezone": "America/New_York"}, convert, "what's 3pm New York time?") == 0
    assert leaks({"source_timezone": "Europe/Paris"}, convert, "what's 3pm New York time?") == 1
    # a clock time the request says in another form, and the schema's own default, are no leaks
    assert leaks({"time": "15:00"}, convert, "what's 3pm New York time?") == 0
    assert leaks({"time": "16:00"}, convert, "what's 3pm New York time?") == 1
    museum = {"properties": {"info_type": {"type": "string", "default": "opening_hours"}}}
    assert leaks({"info_type": "opening_hours"}, museum, "the opening hours of the Met") == 0
    assert leaks({"info_type": "prices"}, museum, "the opening hours of the Met") == 1
    # a name the request writes as one is no placeholder sent, whatever it looks like
    key = {"properties": {"api_key": {"type": "string"}}}
    assert leaks({"api_key": "YOUR_API_KEY"}, key, "My API is called YOUR_API_KEY") == 0
    assert leaks({"api_key": "YOUR_API_KEY"}, key, "list all the configured websites") == 1
    # a place or a time copied as said becomes the form the key wants
    said = {"source_timezone": "Lisbon", "time": "9:30 am", "target_timezone": "Europe/Berlin"}
    kept, _ = ground(said, convert, "convert 9:30 am Lisbon time to Berlin")
    assert kept == {"source_timezone": "Europe/Lisbon", "time": "09:30", "target_timezone": "Europe/Berlin"}
    # with the zone it was said in ("convert 3pm UTC to Tokyo time" gave the server "3pm UTC", which it refused)
    kept, _ = ground({**raw, "time": "3pm UTC"}, convert, "what's the time in Tokyo and convert 3pm UTC to Tokyo time")
    assert kept["time"] == "15:00"
    # a required zone the description names for when the user gives none is the server's local zone
    local = {
        "properties": {
            "timezone": {
                "type": "string",
                "description": "IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use 'UTC' as local "
                "timezone if no timezone provided by the user.",
            }
        },
        "required": ["timezone"],
    }
    assert ground({"timezone": "UTC"}, local, "what time is it") == ({"timezone": "UTC"}, [])
    assert ground({"timezone": "Europe/London"}, local, "what time is it") == ({}, ["timezone"])  # an example
    optional = {"properties": local["properties"]}
    assert ground({"timezone": "UTC"}, optional, "what time is it") == ({}, ["timezone"])  # the server's own
    # a zone the request does not place and a bare number are not stated: asked for, not invented
    kept, dropped = ground(raw, convert, "convert issue 3 to another zone")
    assert kept == {} and set(dropped) == set(raw)
    kept, dropped = ground({**raw, "time": "09:00"}, convert, "convert 9am in Tokyo to another zone")
    assert kept == {"time": "09:00", "target_timezone": "Asia/Tokyo"} and dropped == ["source_timezone"]
    # the wrong half of the day for the one time said on that clock face is that time; any other is not said
    assert ground({"time": "05:00"}, convert, "what about 5pm?") == ({"time": "17:00"}, [])
    assert ground({"time": "05:00"}, convert, "from 5am to 5pm") == ({"time": "05:00"}, [])
    assert ground({"time": "15:00"}, convert, "what about 5pm?") == ({}, ["time"])


def test_number_words_percentages_and_dates_the_model_normalised_count_as_stated() -> None:
    booking = {
        "properties": {
            "nights": {"type": "integer"},
            "rate": {"type": "number"},
            "start": {"type": "string"},
            "issue_number": {"type": "integer"},
        }
    }
    said = "Book two nights from March.11, 2022 at 8% for the 14:30 train"
    raw = {"nights": 2, "rate": 0.08, "start": "2022-03-11T14:30:00"}
    assert ground(raw, booking, said) == (raw, [])
    assert leaks(raw, booking, said) == 0 and leaks({"nights": 5}, booking, said) == 1  # the eval agrees
    # "one" points at a record, not a number; a day, a month or a time the request never gave is made up
    kept, dropped = ground({"issue_number": 1}, booking, "close the one where I was mentioned")
    assert kept == {} and dropped == ["issue_number"]
    kept, dropped = ground({"start": "2022-04-20"}, booking, "concerts in April 2022")
    assert kept == {} and dropped == ["start"]
    kept, dropped = ground({"start": "2022-03-11T09:00:00"}, booking, "on March 11, 2022")
    assert kept == {} and dropped == ["start"]


def test_a_slashed_date_and_a_code_for_spelt_out_words_count_as_stated() -> None:
    """BFCL's "starting from 10th December 2022" became 10/12/2022 and "Canadian dollars" CAD, and both
    were dropped as made up, leaving required keys to ask for."""
    booking = {
        "properties": {
            "start_date": {"type": "string", "description": "The start date for the booking."},
            "check_in": {"type": "string", "description": "The check-in date in the format yyyy-mm-dd."},
            "to_currency": {"type": "string"},
        }
    }
    said = "Book from 10th December 2022 and convert 150 Euros to Canadian dollars"
    for date in ("10/12/2022", "12/10/2022", "2022/12/10"):
        assert ground({"start_date": date}, booking, said) == ({"start_date": date}, [])
    kept, dropped = ground({"start_date": "11/12/2022", "check_in": "10/12/2022"}, booking, said)
    assert kept == {} and dropped == ["start_date", "check_in"]  # a day never said; not the format asked for
    assert ground({"to_currency": "CAD"}, booking, said) == ({"to_currency": "CAD"}, [])
    # the eval's leak count agrees: the request's values in another form, as a time zone is
    assert leaks({"to_currency": "CAD", "start_date": "10/12/2022"}, booking, said) == 0
    assert leaks({"to_currency": "CDN"}, booking, said) == 1
    # the letters must begin consecutive words that are no function words ("Euros to Canadian" is no ETC)
    assert ground({"to_currency": "ETC"}, booking, said) == ({}, ["to_currency"])
    assert ground({"to_currency": "CDN"}, booking, said) == ({}, ["to_currency"])


def test_a_flag_spelt_as_a_string_is_set_by_its_keys_words() -> None:
    """BFCL's service schemas spell flags as strings: ``free_entry`` in "True", "False", "dontcare"."""
    flags = {"type": "string", "enum": ["True", "False", "dontcare"]}
    schema = {"properties": {"free_entry": flags, "good_for_kids": flags}}
    said = "parks in New York that have free entry and are suitable for children"
    assert ground({"free_entry": "True", "good_for_kids": "True"}, schema, said) == (
        {"free_entry": "True"},
        ["good_for_kids"],  # "good" and "kids" unsaid ("for" is no word of the key's)
    )
    # "False" is not taken on the key's words: "any free performance venue" got it from the 0.5B model
    assert ground({"free_entry": "False"}, schema, "any free performance venue in London") == ({}, ["free_entry"])


def test_a_percentage_written_as_said_becomes_a_rate_where_the_key_holds_one() -> None:
    rates = {
        "properties": {
            "annual_return": {"type": "number", "description": "The annual return rate of the investment."},
            "annual_rate": {"type": "number", "description": "The interest rate for a year as a percentage."},
            "years": {"type": "integer"},
        }
    }
    said = "profit over 5 years at an annual return rate of 7%"
    assert ground({"annual_return": 7, "years": 5}, rates, said)[0] == {"annual_return": 0.07, "years": 5}
    assert ground({"annual_return": 0.07}, rates, said)[0] == {"annual_return": 0.07}  # already a fraction
    assert ground({"annual_rate": 7}, rates, said)[0] == {"annual_rate": 7}  # the key asks for a percentage
    assert ground({"annual_return": 5}, rates, said)[0] == {"annual_return": 5}  # "5 years": no percentage


def test_signs_thousands_exponents_and_scale_words_are_part_of_the_stated_number() -> None:
    money = {"properties": {"net_income": {"type": "number"}, "c": {"type": "integer"}, "charge": {"type": "number"}}}
    said = "net income of $2,000,000, a charge of 1e-9 and coefficients 5, 3 and -4"
    raw = {"net_income": 2000000, "charge": 1e-09, "c": -4}
    assert ground(raw, money, said) == (raw, [])
    assert leaks(raw, money, said) == 0
    # the sign, the exponent and the thousands are the number's: 4, 1 and 2 alone are not stated
    assert ground({"c": 4, "charge": 1, "net_income": 2}, money, said) == ({}, ["c", "charge", "net_income"])
    assert ground({"net_income": 100000000}, money, "100 million shares")[0] == {"net_income": 100000000}
    point = {"properties": {"point": {"type": "array", "items": {"type": "number"}}}}
    assert ground({"point": [40.7128, -74.006]}, point, "at (40.7128, -74.0060)")[0] == {"point": [40.7128, -74.006]}
    assert ground({"c": 12}, money, "from Dec 12-15")[0] == {"c": 12}  # a range, not a minus


def test_the_request_pasted_as_prose_is_no_value() -> None:
    """Found in front of mcp-server-git: "undo my last commit" went to ``git_commit`` (the server cannot undo
    one) with the request as its message, which would have made a commit. The message is dropped, so the
    call asks for it; a message the request states is kept."""
    commit = {
        "properties": {"repo_path": {"type": "string"}, "message": {"type": "string", "description": "Commit message"}},
        "required": ["repo_path", "message"],
    }
    kept, dropped = ground({"message": "undo my last commit"}, commit, "undo my last commit")
    assert kept == {} and dropped == ["message"]
    assert ground({"message": "wip"}, commit, "commit everything with message 'wip'")[0] == {"message": "wip"}
    echo = {"properties": {"message": {"type": "string"}}, "required": ["message"]}
    assert ground({"message": "testing one two"}, echo, "repeat after me: testing one two")[0] == {
        "message": "testing one two"
    }


def test_numbers_prose_and_lists_are_grounded_too() -> None:
    runs = {
        "properties": {
            "run_id": {"type": "integer"},
            "workflow_id": {"type": "string"},
            "discussionNumber": {"type": "integer"},
            "description": {"type": "string"},
            "status": {"type": "string", "enum": ["in_progress", "completed"]},
        }
    }
    # digits inside an id are not a stated number; a number stated once fills one slot, numbers first
    raw = {"workflow_id": "4433221100", "run_id": 4433221100, "discussionNumber": 1}
    kept, dropped = ground(raw, runs, "cancel run 4433221100 (node DC_kwDOAbCd4M4AxYz1) in progress")
    assert kept == {"run_id": 4433221100} and set(dropped) == {"workflow_id", "discussionNumber"}
    assert ground({"run_id": 10}, runs, "the run that took 10min")[0] == {"run_id": 10}  # a unit is no id
    # "in" does not name ``in_progress``; prose nobody asked for is dropped, quoted prose is kept
    kept, _ = ground({"status": "in_progress", "description": "A demo repository"}, runs, "make a demo repo in acme")
    assert kept == {}
    kept, _ = ground({"description": "Tracks Q3 work"}, runs, "make a repo, description 'Tracks Q3 work'")
    assert kept == {"description": "Tracks Q3 work"}
    kept, _ = ground({"description": "Tracks Q3 work"}, runs, "make a repo with the description Tracks Q3 work")
    assert kept == {"description": "Tracks Q3 work"}  # asked for by the key's name
    listed = {"owner": "riverbank", "repo": "payments", "assignees": ["sofia-g", "riverbank/payments"]}
    assert own_repository_elsewhere(listed)["assignees"] == ["sofia-g"]
    team = {"owner": "acme-corp", "repo": "billing", "reviewers": ["acme-corp/backend-team"]}
    assert own_repository_elsewhere(team) == team


def test_objects_inside_a_list_are_grounded_key_by_key() -> None:
    item = {"field_id": {"type": "string"}, "delete": {"type": "boolean"}, "date_value": {"type": "string"}}
    fields = {"properties": {"fields": {"type": "array", "items": {"properties": item, "required": ["field_id"]}}}}
    request = "On hexa-dev/cli-tools issue #9, clear the value of the issue field IFT_kwDOC1a2b3"
    raw = {"fields": [{"field_id": "IFT_kwDOC1a2b3", "delete": True, "date_value": "2023-04-15T12:34:56Z"}]}
    kept, dropped = ground(raw, fields, request)
    # the invented date goes; the item's required key and its flag stay (an item is not asked for in parts)
    assert kept == {"fields": [{"field_id": "IFT_kwDOC1a2b3", "delete": True}]}
    assert dropped == ["fields[0].date_value"]
    file = {"properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}
    files = {"properties": {"files": {"type": "array", "items": file}}}
    typed = 'push strings.json with content {"welcome": "Hi!"}'
    pushed = {"files": [{"path": "strings.json", "content": '{"welcome": "Hi!"}'}]}
    assert ground(pushed, files, typed)[0] == pushed  # braces typed out are content, not a placeholder
    # a placeholder voids the item (a required key lost), and with its only item the list
    placeholder = {"files": [{"path": "strings.json", "content": "{content}"}]}
    assert ground(placeholder, files, typed) == ({}, ["files[0].content", "files"])
    # a name the request writes as one is the request's own, however much it looks like a placeholder
    dataset = {"properties": {"dataset": {"type": "string"}}, "required": ["dataset"]}
    named = "Train a random forest classifier on dataset your_dataset_name, max depth 5"
    assert ground({"dataset": "your_dataset_name"}, dataset, named)[0] == {"dataset": "your_dataset_name"}
    assert ground({"dataset": "your_dataset"}, dataset, "Train a random forest classifier")[0] == {}
    # an item's required list the request gives nothing for is empty, not invented and not lost
    entity = {"properties": {"name": {}, "observations": {"type": "array", "items": {"type": "string"}}}}
    entities = {
        "properties": {"entities": {"type": "array", "items": {**entity, "required": ["name", "observations"]}}}
    }
    invented = {"entities": [{"name": "Alice", "observations": ["Alice is a person."]}]}
    kept, dropped = ground(invented, entities, "create an entity named Alice of type person")
    assert kept == {"entities": [{"name": "Alice", "observations": []}]} and dropped == ["entities[0].observations"]


def test_a_branch_shaped_like_owner_repo_is_a_branch() -> None:
    pull = {"properties": {"owner": {}, "repo": {}, "head": {}, "base": {}}}
    request = "open a PR in acme-corp/billing from hotfix/invoice-rounding into release/3.2"
    model = {"owner": "acme-corp", "repo": "billing", "head": "hotfix/invoice-rounding", "base": "release/3.2"}
    assert own_repository_elsewhere(anchor_repository(model, pull, request)) == model
    echoed = {**model, "base": "acme-corp/billing"}  # the call's own repository as a branch: an echo
    assert "base" not in own_repository_elsewhere(anchor_repository(echoed, pull, request))


def test_a_path_the_request_names_is_sent_whole() -> None:
    intent = "comment on render/shader.cpp line 41 of pixel-forge/engine"
    cut = {"owner": "pixel-forge", "repo": "engine", "path": "shader.cpp"}
    assert whole_path(cut, intent)["path"] == "render/shader.cpp"
    same_name = {"owner": "pixel-forge", "repo": "engine", "path": "engine"}
    assert whole_path(same_name, intent) == same_name  # the repository is not a path


def test_entities_the_request_names_win_over_the_models_guesses() -> None:
    repo_and_path = {"properties": {"owner": {}, "repo": {}, "path": {}}}
    assert anchor_repository({"owner": "psf", "repo": "requests"}, ISSUE, "same thing for pallets/flask") == {
        "owner": "pallets",
        "repo": "flask",
    }
    kept = anchor_repository({"owner": "pixel-forge", "repo": "engine"}, repo_and_path, "comment on render/shader.cpp")
    assert kept == {"owner": "pixel-forge", "repo": "engine"}  # a path, not a repository
    linked = {"properties": {"owner": {}, "repo": {}, "related_owner": {}, "related_repo": {}}}
    said = "octo-org/app#10 no longer blocks octo-org/app-backend#15, remove that link"
    assert other_repository({"owner": "octo-org", "repo": "app"}, linked, said) == {
        "owner": "octo-org",
        "repo": "app",
        "related_owner": "octo-org",
        "related_repo": "app-backend",
    }
    said = "what's being discussed in the next.js repo under vercel?"
    assert anchor_repository({"owner": "vercel"}, ISSUE, said) == {"owner": "vercel", "repo": "next.js"}
    numbers = {"properties": {"after_id": {"type": "integer"}, "before_id": {"type": "integer"}}}
    kept, dropped = ground({"after_id": 2718, "before_id": 2718}, numbers, "move it after 2718")
    assert kept == {"after_id": 2718} and dropped == ["before_id"]


def test_my_repo_names_the_repository_and_the_owner_is_the_user() -> None:
    said = "make a new branch 'docs-refresh' on my blog repo from develop"
    guessed = {"owner": "develop", "repo": "blog", "branch": "docs-refresh"}
    assert my_repository(guessed, ISSUE, said, "") == {"repo": "blog", "branch": "docs-refresh"}  # asked for
    earlier = 'who am I? {} name="Dana Kowalski" login=dana-k'
    guessed = {"owner": "dotfiles", "repo": "repo"}
    assert my_repository(guessed, ISSUE, "list the branches in my dotfiles repo", earlier) == {
        "owner": "dana-k",
        "repo": "dotfiles",
    }
    named = {"owner": "octo", "repo": "site"}
    assert my_repository(named, ISSUE, "my site repo, octo/site", "") == named  # a named pair wins


OWNED_PROJECT = {
    "properties": {
        "method": {"type": "string", "enum": ["get_project", "get_project_field"]},
        "owner": {"type": "string"},
        "owner_type": {"type": "string", "enum": ["user", "org"]},
        "project_number": {"type": "number"},
    },
    "required": ["method", "project_number"],
}


def test_a_login_named_as_where_or_whose_is_the_owner() -> None:
    got = {"method": "get_project", "project_number": 3}
    assert stated_owner(got, OWNED_PROJECT, "Get details of project 3 in octo-org.") == {**got, "owner": "octo-org"}
    assert stated_owner(got, OWNED_PROJECT, "project 5 of user dana-k")["owner"] == "dana-k"
    assert stated_owner(got, OWNED_PROJECT, "project 3 in the zenith-hq org")["owner"] == "zenith-hq"
    # no login: a repository, a season, an English word; a named pair is anchor_repository's; a value holds it
    for said in ("items in the mobile-app repo", "stats of the 2019-2020 season", "project 3 in octo-org/app"):
        assert stated_owner(got, OWNED_PROJECT, said) == got
    assert stated_owner(got, OWNED_PROJECT, "project 3 in my sandbox") == got
    said = "project 3 in octo-org"
    assert stated_owner({**got, "owner": "acme"}, OWNED_PROJECT, said) == {**got, "owner": "acme"}
    # two logins: which one owns the project is not said
    assert stated_owner(got, OWNED_PROJECT, "copy project 3 of dana-k in octo-org") == got
    # placed before the owner's kind is read ("in the zenith-hq org" → org)
    placed = place_stated(got, OWNED_PROJECT, "project 3 in the zenith-hq org", "projects_get", None)
    assert placed == {**got, "owner": "zenith-hq", "owner_type": "org"}


JOB_LOGS = {
    "properties": {
        "owner": {"type": "string"},
        "repo": {"type": "string"},
        "job_id": {"type": "number"},
        "failed_only": {"type": "boolean", "description": "When true, gets logs for all failed jobs in run_id"},
        "return_content": {"type": "boolean", "description": "Returns actual log content instead of URLs"},
    },
    "required": ["owner", "repo"],
}


def test_a_request_to_read_gets_content_not_links() -> None:
    got = {"owner": "lumen-labs", "repo": "lumen-ui", "job_id": 27182818284}
    said = "why did job 27182818284 in lumen-labs/lumen-ui blow up? pull its log output so we can see"
    assert content_not_links(got, JOB_LOGS, said) == {**got, "return_content": True}
    assert place_stated(got, JOB_LOGS, said, "get_job_logs", None)["return_content"] is True
    # asked for the links, or the model set the flag: left as it is; a flag about something else: untouched
    assert content_not_links(got, JOB_LOGS, "give me the URLs of job 27182818284's logs") == got
    assert content_not_links({**got, "return_content": False}, JOB_LOGS, said)["return_content"] is False
    assert "failed_only" not in content_not_links(got, JOB_LOGS, said)


ISSUE_WRITE = {
    "properties": {
        "method": {"type": "string", "enum": ["create", "update"], "description": "Write operation to perform"},
        "owner": {"type": "string"},
        "repo": {"type": "string"},
        "issue_number": {"type": "number", "description": "Issue number to update"},
        "title": {"type": "string"},
        "assignees": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["method", "owner", "repo"],
}


def test_a_write_that_names_the_record_to_update_updates_it() -> None:
    said = "asign hexa-dev/cli-tools issue 45 to ravi-n and nora-t"
    got = {"method": "create", "owner": "hexa-dev", "repo": "cli-tools", "issue_number": 45, "assignees": ["ravi-n"]}
    assert update_of_a_named_record(got, ISSUE_WRITE) == {**got, "method": "update"}
    assert place_stated(got, ISSUE_WRITE, said, "issue_write", None)["method"] == "update"
    # a create without the number stays one; an update without it is never made a create (it would write an
    # issue nobody asked for: upstream refuses the update instead)
    new = {"method": "create", "owner": "acme", "repo": "app", "title": "Broken link"}
    assert update_of_a_named_record(new, ISSUE_WRITE) == new
    assert update_of_a_named_record({**new, "method": "update"}, ISSUE_WRITE)["method"] == "update"
    # a schema that names no record to update (label_write's name is the label's either way) is left alone
    labels = {"properties": {"method": {"enum": ["create", "update"]}, "name": {"type": "string"}}}
    assert update_of_a_named_record({"method": "create", "name": "bug"}, labels)["method"] == "create"


CODE_SEARCH = {
    "properties": {
        "query": {"type": "string", "description": "Search query. Qualifiers: `repo:owner/repo`, `org:`, `user:`"},
        "page": {"type": "integer"},
    },
    "required": ["query"],
}


def test_a_search_gets_the_scope_its_query_documents() -> None:
    said = "find usages of useSyncExternalStore in facebook/react"
    assert scope_qualifiers({"query": "useSyncExternalStore"}, CODE_SEARCH, said) == {
        "query": "useSyncExternalStore repo:facebook/react"
    }
    named = {"query": "useSyncExternalStore facebook/react"}  # named, but not as a qualifier
    assert scope_qualifiers(named, CODE_SEARCH, said) == {"query": "useSyncExternalStore repo:facebook/react"}
    said = "look through code in the quartz-ai org for strings starting with AKIA"
    assert scope_qualifiers({"query": "AKIA"}, CODE_SEARCH, said) == {"query": "AKIA org:quartz-ai"}
    # a search with owner/repo parameters of its own, or one that documents no qualifier, is left alone
    own = {"properties": {**CODE_SEARCH["properties"], "owner": {}, "repo": {}}}
    assert scope_qualifiers({"query": "leak"}, own, "leaks in facebook/react") == {"query": "leak"}
    plain = {"properties": {"query": {"type": "string"}}}
    assert scope_qualifiers({"query": "leak"}, plain, "leaks in facebook/react") == {"query": "leak"}
    # the programming language of what it looks for, where the query documents ``language:``; a version
    # of a language, or "go" as a verb, names none
    repos = {"properties": {"query": {"type": "string", "description": "e.g. 'stars:>1000 language:python'"}}}
    python = "I'm looking for a well-maintained open-source Python library for parsing PDFs"
    assert scope_qualifiers({"query": "PDF parsing"}, repos, python) == {"query": "PDF parsing language:python"}
    assert scope_qualifiers({"query": "tracing"}, repos, "Go modules for tracing")["query"] == "tracing language:go"
    assert scope_qualifiers({"query": "cli"}, repos, "a cli written in C++") == {"query": "cli language:cpp"}
    for unnamed in ("libraries that support Python 3.12", "go find PDF tools"):
        assert scope_qualifiers({"query": "x"}, repos, unnamed) == {"query": "x"}
    assert scope_qualifiers({"query": "x"}, plain, python) == {"query": "x"}  # no language: documented


def test_surrogate_keeps_identifiers_and_stays_short() -> None:
    result = {
        "candidates": [
            {"number": 377, "title": "UI hangs on big photo upload", "body": "x" * 5000, "similarity": 0.93},
            {"number": 120, "title": "Slow gallery scrolling", "state": "closed"},
        ]
    }
    text = surrogate(json.dumps(result))
    assert "number=377" in text and "number=120" in text and len(text) <= 240 and "xxxx" not in text


def test_surrogate_keeps_what_tells_list_items_apart() -> None:
    """ "the critical one", "the one where I was mentioned", "the failing job": the attributes that
    pick one record of a list, one level down too."""
    alerts = [
        {"number": 14, "state": "open", "security_advisory": {"severity": "critical", "summary": "x" * 300}},
        {"number": 15, "state": "open", "security_advisory": {"severity": "low"}},
    ]
    assert "number=14 state=open security_advisory.severity=critical" in surrogate(alerts)
    threads = [
        {
            "id": "1",
            "reason": "mention",
            "subject": {"title": "Stock goes negative"},
            "repository": {"full_name": "n/i"},
        }
    ]
    assert surrogate(threads) == '[1] id=1 reason=mention subject.title="Stock goes negative" repository=n/i'
    assert (
        surrogate({"logs": [{"job_id": 277, "job_name": "tests", "tail": "FAIL"}]})
        == "logs: [1] job_id=277 job_name=tests"
    )


def test_a_follow_up_that_leaves_its_operation_out_is_joined_to_the_request_that_said_it() -> None:
    """ "and in Tokyo?" alone fits no tool; routed with the requests back to the one that says the
    operation, it fits the tool the session just used (``routed_call`` keeps that route only then)."""
    window = SessionWindow()
    assert window.elided_request("and in Tokyo?") is None  # a new session has nothing to join
    window.add("what time is it in Berlin?", "get_current_time", {"timezone": "Europe/Berlin"}, "{}")
    assert window.elided_request("and in Tokyo?") == "what time is it in Berlin. and in Tokyo?"
    window.add("and in Tokyo?", "get_current_time", {"timezone": "Asia/Tokyo"}, "{}")
    joined = "what time is it in Berlin. and in Tokyo. What about London?"
    assert window.elided_request("What about London?") == joined and window.last_tool() == "get_current_time"
    assert window.elided_request("close the issue") is None  # it says its own operation
    assert (
        window.elided_request("same thing for Paris") == "what time is it in Berlin. and in Tokyo. same thing for Paris"
    )
    assert window.elided_request("and then list every file of the repository, biggest first") is None  # long


def test_a_request_that_singles_out_a_record_sees_only_that_record() -> None:
    runs = {
        "workflow_runs": [
            {"id": 5101, "name": "CI", "conclusion": "success"},
            {"id": 5102, "name": "CI", "conclusion": "failure"},
        ]
    }
    window = SessionWindow()
    window.add("recent CI runs in acme/api", "list_runs", {"owner": "acme", "repo": "api"}, runs)
    both = "workflow_runs: [1] id=5101 name=CI conclusion=success; [2] id=5102 name=CI conclusion=failure"
    assert both in window.render()
    assert "workflow_runs: [2] id=5102 name=CI conclusion=failure" in window.render("why did the failed one fail?")
    assert "[1] id=5101 name=CI conclusion=success;" not in window.render("why did the failed one fail?")
    assert both in window.render("rerun it")  # names no record: all of them
    assert both in window.render("list failed runs in acme/web")  # refers back to nothing
    matches = [{"number": 377, "state": "open"}, {"number": 120, "state": "closed"}]
    assert referent("close it as a duplicate of the top match", [[f"number={m['number']}"] for m in matches]) == 0
    threads = [["id=1", "reason=review_requested"], ["id=2", "reason=mention"]]
    assert referent("mark the one where I was mentioned as done", threads) == 1


def test_a_number_parameter_takes_the_records_number_not_its_id() -> None:
    window = SessionWindow()
    window.add(
        "open an issue in m/blog", "create_issue", {"owner": "m", "repo": "blog"}, {"number": 73, "id": 3300112233}
    )
    window.add("list alerts", "list_alerts", {}, [{"number": 14, "id": 901}, {"number": 15, "id": 902}])
    fixed = number_not_id(
        {"issue_number": 3300112233, "sub_issue_id": 3300112233, "alertNumber": 902}, window.numbers_by_id()
    )
    assert fixed == {"issue_number": 73, "sub_issue_id": 3300112233, "alertNumber": 15}
    apart = SessionWindow()  # a number and an id of different records are no pair
    apart.add("show issue 5", "issue_read", {}, {"number": 5, "title": "x"})
    apart.add("show comment 901", "get_comment", {}, '{"id": 901}')
    assert number_not_id({"issue_number": 901}, apart.numbers_by_id()) == {"issue_number": 901}


def test_a_number_from_an_earlier_turn_goes_to_the_key_its_kind_names() -> None:
    window = SessionWindow()
    runs = {"workflow_runs": [{"id": 9876543210, "conclusion": "failure"}, {"id": 9876500001}]}
    window.add("recent workflow runs in a/b", "actions_list", {"owner": "a", "repo": "b"}, runs)
    logs = {"properties": {"job_id": {"type": "integer"}, "run_id": {"type": "integer"}}}
    kinds = window.number_kinds()
    assert window_numbers_placed({"job_id": 9876543210}, logs, kinds) == {"run_id": 9876543210}
    window.add("logs of its failed jobs", "get_job_logs", {"run_id": 9876543210}, {"logs": [{"job_id": 277}]})
    # a job's id stays a job id; a key already written is not overwritten
    assert window_numbers_placed({"job_id": 277}, logs, window.number_kinds()) == {"job_id": 277}
    both = {"job_id": 9876543210, "run_id": 1}
    assert window_numbers_placed(both, logs, window.number_kinds()) == both


def owner_and(**described: str) -> dict[str, Any]:
    """A schema of an owner and string properties with these descriptions."""
    properties = {name: {"type": "string", "description": text} for name, text in described.items()}
    return {"properties": {"owner": {"type": "string"}, **properties}}


def session_on_branch_docs_guide() -> SessionWindow:
    """A session whose one turn made the branch docs/guide."""
    window = SessionWindow()
    window.add("create branch docs/guide off main in h/c", "create_branch", {"owner": "h", "branch": "docs/guide"}, {})
    return window


def test_a_pull_requests_source_is_the_branch_the_session_worked_on() -> None:
    pull = owner_and(head="Branch containing changes", base="Branch to merge into")
    window = session_on_branch_docs_guide()
    window.add("add docs/API.md on that branch", "create_or_update_file", {"owner": "h", "branch": "docs/guide"}, {})
    wrong = {"owner": "h", "head": "docs/API.md", "base": "main"}
    said = "open a PR for it into main"
    assert source_branch_from_window(wrong, pull, said, window.branches())["head"] == "docs/guide"
    window.add("show main", "get_branch", {"owner": "h", "branch": "main"}, {})
    into_itself = {"owner": "h", "head": "main", "base": "main"}  # a PR from main into main
    assert source_branch_from_window(into_itself, pull, said, window.branches())["head"] == "docs/guide"
    fork = SessionWindow()  # a branch made in the user's fork is a cross-repository head
    fork.add("create a branch fix-typo in my fork", "create_branch", {"owner": "dana-k", "branch": "fix-typo"}, {})
    upstream = {"owner": "sveltejs", "head": "fix-typo", "base": "main"}
    got = source_branch_from_window(upstream, pull, "open a PR from that branch to main", fork.branches())
    assert got["head"] == "dana-k:fix-typo"


def test_that_branch_is_the_branch_the_session_worked_on() -> None:
    files = owner_and(path="Path where to create/update the file", branch="Branch to create/update the file in")
    window = session_on_branch_docs_guide()
    said = "add a file docs/API.md on that branch containing '# API'"
    wrong = {"owner": "h", "path": "docs/API.md", "branch": "docs/API.md"}  # the 0.5B model, dialogue 7
    assert pointed_branch(wrong, files, said, window.branches())["branch"] == "docs/guide"
    assert pointed_branch({"path": "a.md"}, files, said, window.branches())["branch"] == "docs/guide"
    stated = {"path": "a.md", "branch": "main"}  # a branch the request names stays
    assert pointed_branch(stated, files, "put a.md on the main branch, not that branch", window.branches()) == stated
    assert pointed_branch(wrong, files, "add docs/API.md to the repo", window.branches()) == wrong  # no pointer
    window.add("create branch fix off main", "create_branch", {"owner": "h", "branch": "fix"}, {})
    assert pointed_branch(wrong, files, said, window.branches()) == wrong  # two branches: which one?


LABELS = {
    "type": "object",
    "properties": {
        **ISSUE["properties"],
        "labels": {"type": "array", "items": {"type": "string"}},
        "line": {"type": "integer"},
        "per_page": {"type": "integer"},
    },
    "required": ["owner", "repo", "issue_number"],
}


def test_enum_values_the_request_says_narrow_the_choice() -> None:
    trigger = {
        "properties": {
            "method": {"type": "string", "enum": ["run_workflow", "rerun_failed_jobs", "cancel_workflow_run"]},
            "run_id": {"type": "integer"},
        },
        "required": ["method"],
    }
    assert named_values(trigger, "looks flaky. rerun just the jobs that failed") == {"method": ["rerun_failed_jobs"]}
    assert named_values(trigger, "what is going on there?") == {}
    # no value said whole: a required choice keeps the values with the largest share of words said
    assert named_values(trigger, "what happened in run 42?") == {"method": ["run_workflow"]}
    projects = {"properties": {"method": {"enum": ["create_project", "add_project_item", "delete_project_item"]}}}
    assert named_values(projects, "set up a new project called 'Q3 Roadmap'") == {"method": ["create_project"]}
    labels = {"properties": {"method": {"enum": ["create", "update", "delete"]}}}
    assert named_values(labels, "change the title to 'Crash on save'") == {"method": ["update"]}
    assert named_values(labels, "throw away my pending review, I'll start over") == {}
    # a state said as its event is no state: "issues opened since March" includes those closed since
    issues = {"properties": {"state": {"enum": ["OPEN", "CLOSED"]}, "since": {"type": "string"}}}
    assert named_values(issues, "Which issues have been opened or touched since March 1st, 2025?") == {}
    assert named_values(issues, "the open issues, and the ones closed this week") == {"state": ["OPEN", "CLOSED"]}
    hours = {"properties": {"info_type": {"enum": ["opening_hours", "prices"]}}}
    assert named_values(hours, "the opening hours of the Met") == {"info_type": ["opening_hours"]}
    # an approval is a review: the 0.5B model read the pull request's files for this
    reads = {"properties": {"method": {"enum": ["get", "get_files", "get_review_comments", "get_reviews"]}}}
    reads["required"] = ["method"]
    assert named_values(reads, "has anyone approved vercel/next.js PR 71234 yet?") == {"method": ["get_reviews"]}
    kept, dropped = ground({"state": "OPEN"}, issues, "Which issues have been opened since March 1st, 2025?")
    assert (kept, dropped) == ({}, ["state"])  # the model's choice, unsaid, is not sent


def test_keys_the_request_names_are_found_by_their_words() -> None:
    assert named_keys(LABELS, "label issue 5 in acme/web as bug") == {"labels"}
    assert named_keys(LABELS, "show me the bug-labelled issues, 10 per page") == {"labels"}  # per_page: generic
    assert named_keys(LABELS, "comment on lines 40-41") == {"line"}
    assert named_keys(LABELS, "is issue 7 of acme/web closed?") == {"state"}  # by an enum value
    assert named_keys(LABELS, "what's issue 412 in octo-org/app about?") == set()  # required keys are not listed
    replies = {"properties": {"discussionNumber": {"type": "number"}, "includeReplies": {"type": "boolean"}}}
    assert named_keys(replies, "all the comments on discussion 7, including replies") == {"includeReplies"}
    failed = {"properties": {"failed_only": {"type": "boolean"}, "run_id": {"type": "number"}}}
    assert named_keys(failed, "the failing jobs, and only those") == {"failed_only"}  # "failing" says failed


COMMENT = {
    "type": "object",
    "properties": {
        **ISSUE["properties"],
        "body": {"type": "string"},
        "state_reason": {"type": "string", "enum": ["completed", "not_planned"]},
    },
    "required": ["owner", "repo", "issue_number"],
}


def test_quoted_text_and_the_keys_that_can_hold_it() -> None:
    said = "Post 'Thanks for the report! Tracking this for 2.5.' on issue 3, don't close it"
    assert quoted_spans(said) == ["Thanks for the report! Tracking this for 2.5."]  # "don't" opens no quote
    assert quoted_spans('set the title to "fix: can\'t log in" (urgent)') == ["fix: can't log in"]
    assert free_text_keys(COMMENT) == {"body"}  # an enum is no prose, a required key is written anyway


def test_stated_numbers_and_paths_are_values_not_versions_dates_or_links() -> None:
    assert stated_entities("commits touching src/auth/session.go in cobalt-systems/auth-gateway") == [
        ("path", "src/auth/session.go")  # a two-part owner/repo is not a path
    ]
    assert stated_entities("Show me the items in project #3 for octo-org, issue 45.") == [
        ("number", "3"),
        ("number", "45"),
    ]
    assert stated_entities("opn the README.md in my dotfiles repo, e.g. the setup steps") == [("path", "README.md")]
    # versions, dates, URLs and quoted text state no value of their own
    assert stated_entities("git blame lib/response.js on the 4.x branch, Python 3.12") == [
        ("path", "lib/response.js"),
        ("branch", "4.x"),
    ]
    assert stated_entities("target date 2025-10-15 for v11.0.x") == []
    assert stated_entities("react to https://github.com/o/r/pull/318#discussion_r1650022311") == []
    assert stated_entities("a gist with 'meeting notes 12/3: ship v2 friday'") == []
    # paths from the root or home, of any length; an email's domain and an abbreviation are none
    assert stated_entities("print /tmp/log.txt, then list /var/log and ~/projects.") == [
        ("path", "/tmp/log.txt"),
        ("path", "/var/log"),
        ("path", "~/projects"),
    ]
    assert stated_entities("mail jo@example.com the Washington D.C. notes at 7 p.m.") == [("number", "7")]


def test_stated_branches_are_names_not_descriptions() -> None:
    assert stated_branches("what changed in the latest commit on the develop branch of a/b") == ["develop"]
    assert stated_branches("make pr in lumen-labs/lumen-ui  fix/tooltip -> develop") == ["fix/tooltip", "develop"]
    assert stated_branches("pushed to the refactor/db-layer branch; open a PR against develop") == [
        "refactor/db-layer",
        "develop",
    ]
    assert stated_branches("push to branch feat/onboarding in one commit") == ["feat/onboarding"]
    # words that describe a branch name none
    assert stated_branches("create a new branch from the default branch, then list branches") == []


def test_a_flag_is_set_by_the_meaning_its_description_gives() -> None:
    draft = {
        "properties": {
            "draft": {
                "type": "boolean",
                "description": "Mark pull request as draft (true) or ready for review (false)",
            },
            "convert": {"type": "boolean", "description": "Set to true to convert to draft, false to mark as ready"},
            "public": {"type": "boolean", "description": "Whether the gist is public"},
        }
    }
    assert said_flags(draft, "mark PR 77 in a/b as ready for review") == {"draft": [False], "convert": [False]}
    assert said_flags(draft, "convert PR 5 to a draft") == {"convert": [True]}
    assert said_flags(draft, "update the title of PR 5") == {}
    # no meanings given: the opposite of the flag's word says false
    repository = {"properties": {"private": {"type": "boolean", "description": "Whether repo should be private"}}}
    assert said_flags(repository, "new repo 'scratchpad', public pls") == {"private": [False]}
    assert said_flags(repository, "a private repo, not public") == {}
    assert said_flags(repository, "new repo 'scratchpad'") == {}
    assert ground({"private": False}, repository, "new repo 'scratchpad', public pls")[0] == {"private": False}
    assert "draft" in named_keys(draft, "mark it ready for review")
    # the flag's name is not said, yet the value the description gives it is grounded
    assert ground({"draft": False}, draft, "mark it ready for review")[0] == {"draft": False}
    # a description that says only what true does: said whole and not denied, the flag is true
    created = {
        "properties": {
            "autoInit": {"type": "boolean", "description": "Initialize with README"},
            "failed_only": {"type": "boolean", "description": "When true, gets logs for all failed jobs"},
            "public": {"type": "boolean", "description": "Whether the gist is public"},
        }
    }
    assert said_flags(created, "new repo nexus-demo, initialize it with a README") == {"autoInit": [True]}
    assert said_flags(created, "new repo nexus-demo; don't initialize it with a README") == {}
    assert said_flags(created, "initialize the repo") == {}
    assert said_flags(created, "get the logs of all the failed jobs of run 5") == {"failed_only": [True]}
    assert "autoInit" in named_keys(created, "new repo nexus-demo, initialize it with a README")


def test_list_items_and_numbers_come_from_what_the_request_states() -> None:
    issue = {"properties": {"owner": {}, "repo": {}, "labels": {"type": "array", "items": {"type": "string"}}}}
    raw = {"owner": "lumen-labs", "repo": "lumen-ui", "labels": ["bug", "ui", "lumen", "lumen-ui"]}
    kept, _ = ground(raw, issue, "open an issue in lumen-labs/lumen-ui, label it bug and ui")
    assert kept == {"owner": "lumen-labs", "repo": "lumen-ui", "labels": ["bug", "ui"]}
    objects = {"properties": {"files": {"type": "array", "items": {"type": "object"}}}}
    assert ground({"files": [{"path": "a.md"}]}, objects, "push a.md to a/b")[0] == {"files": [{"path": "a.md"}]}
    blame = {"properties": {"ref": {}, "start_line": {"type": "integer"}, "comment_id": {"type": "integer"}}}
    kept, dropped = ground({"ref": "4.x", "start_line": 4}, blame, "git blame lib/response.js on the 4.x branch")
    assert kept == {"ref": "4.x"} and dropped == ["start_line"]  # a version's digits are no number
    link = "react to https://github.com/o/r/pull/318#discussion_r1650022311"
    assert ground({"comment_id": 1650022311}, blame, link)[0] == {"comment_id": 1650022311}


def test_what_the_request_says_it_does_not_want_names_no_value() -> None:
    pull = {
        "properties": {"method": {"type": "string", "enum": ["get", "get_comments", "get_review_comments"]}},
        "required": ["method"],
    }
    said = "show the general conversaton comments (not the code review ones) on a/b pr 91"
    assert named_values(pull, said) == {"method": ["get_comments"]}
    reason = {"properties": {"state_reason": {"type": "string", "enum": ["completed", "not_planned", "duplicate"]}}}
    assert named_values(reason, "close it as not planned") == {"state_reason": ["not_planned"]}
    assert named_values(reason, "close it, it's not a duplicate") == {}
    # a negation ends at its clause: "not exceeding $100 and prefer exploring nature" still says nature
    trip = {"properties": {"kind": {"type": "string", "enum": ["nature", "urban"]}}}
    assert named_values(trip, "budgets not exceeding $100 and prefer exploring nature") == {"kind": ["nature"]}
    # a quoted value names it, whole
    report = {"properties": {"status": {"type": "string", "enum": ["draft", "concluded"]}}}
    said = "retrieve the MRI report with the status 'concluded'"
    assert named_values(report, said) == {"status": ["concluded"]}
    assert ground({"status": "concluded"}, report, said)[0] == {"status": "concluded"}
    action = {"properties": {"action": {"type": "string", "enum": ["ignore", "watch", "delete"]}}}
    assert named_values(action, "and mute that thread too") == {"action": ["ignore"]}
    # "Open an issue" creates one; it names no state
    state = {"properties": {"state": {"type": "string", "enum": ["open", "closed"]}, "title": {"type": "string"}}}
    assert named_keys(state, "Open an issue in a/b titled 'x'") == {"title"}
    assert ground({"state": "open", "title": "x"}, state, "Open an issue in a/b titled 'x'")[0] == {"title": "x"}
    assert ground({"state": "open"}, state, "list the open issues in a/b")[0] == {"state": "open"}


def test_a_list_of_choices_holds_the_items_the_request_says() -> None:
    releases = {
        "properties": {"fields": {"type": "array", "items": {"enum": ["id", "tag_name", "name", "published_at"]}}}
    }
    said = "list the last 5 releases of a/b. Just tag names and publish dates is fine."
    assert listed_items({"fields": ["tag_name"]}, releases, said, "list_releases") == {
        "fields": ["tag_name", "published_at"]
    }
    # left out, it gets the items the request names, two or more; one alone may be what the request is about
    assert listed_items({}, releases, said, "list_releases") == {"fields": ["tag_name", "published_at"]}
    assert listed_items({}, releases, "show me the release named v2", "list_releases") == {}
    earlier = 'get_file_contents {"path": "a.md"} name=a.md path=a.md id=7'
    assert listed_items({"fields": ["name", "id"]}, releases, "open that file", "get_file_contents", earlier) == {}
    # without a window an item no word says is kept: labels map synonyms ("author" is ``user``)
    assert listed_items({"fields": ["id"]}, releases, "which one is newest", "list_releases") == {"fields": ["id"]}
    # an item said inside another argument, or inside a longer item of another list, is not named
    museum = {
        "properties": {
            "museum": {"type": "string"},
            "features": {"type": "array", "items": {"enum": ["timings", "history", "exhibitions"]}},
        }
    }
    said = "Natural History Museum in London including timings and exhibitions"
    called = {"museum": "Natural History Museum", "features": ["timings"]}
    assert listed_items(called, museum, said, "museum_info")["features"] == ["timings", "exhibitions"]
    shop = {
        "properties": {
            "services": {"type": "array", "items": {"enum": ["Violin Lessons", "Guitar Lessons"]}},
            "instruments": {"type": "array", "items": {"enum": ["Guitars", "Violins"]}},
        }
    }
    said = "Find a local guitar shop that also offers violin lessons"
    called = {"services": ["Violin Lessons"], "instruments": ["Guitars"]}
    assert listed_items(called, shop, said, "find_music_shop") == called
    commits = {"properties": {"fields": {"type": "array", "items": {"enum": ["sha", "html_url", "commit"]}}}}
    said = "list commits on the v11 branch, i only need sha + html url"
    assert listed_items({"fields": ["sha", "commit"]}, commits, said, "list_commits") == {"fields": ["sha", "html_url"]}


def test_name_value_pairs_go_to_the_object_the_request_names() -> None:
    trigger = {"properties": {"method": {"type": "string"}, "inputs": {"type": "object", "properties": {}}}}
    said = "run the deploy.yml workflow on main and pass the input environment=staging; QA waits"
    got = stated_pairs({"method": "run_workflow"}, trigger, said)
    assert got == {"method": "run_workflow", "inputs": {"environment": "staging"}}
    assert stated_pairs({}, trigger, "rerun it with debug=true") == {}  # no key named


def test_a_listed_request_gives_each_labelled_value_to_the_key_its_label_names() -> None:
    """ "- description: …" in a listed pull request is ``body``, the one key whose description says
    "description"; the 0.5B model left it out. A key the model filled keeps its value, and a label no
    key answers to, or a line of a plain list, places nothing."""
    schema = {
        "properties": {
            "title": {"type": "string", "description": "PR title"},
            "body": {"type": "string", "description": "PR description"},
            "base": {"type": "string", "description": "Branch to merge into"},
            "draft": {"type": "boolean", "description": "Create as draft PR"},
        }
    }
    said = "Open a PR.\n- base: release/3.2\n- title: Fix rounding\n- description: Rounds items. Fixes #230.\n"
    got = labelled_lines({"title": "Fix rounding in totals"}, schema, said + "- reviewer: ivan-p\n- draft: yes")
    assert got == {"title": "Fix rounding in totals", "base": "release/3.2", "body": "Rounds items. Fixes #230."}
    assert labelled_lines({}, schema, "replace the contents with\n- renew domain\n- file taxes") == {}


def test_placement_never_breaks_a_valid_call_of_any_registry_schema() -> None:
    """Every rule on every schema of the local servers, with requests full of the entities they read:
    the result is still an object the schema accepts (required keys aside: they are asked for)."""
    window = SessionWindow()
    window.add("list runs in a/b", "actions_list", {"owner": "a", "branch": "feat/x"}, {"workflow_runs": [{"id": 7}]})
    intents = [
        "Add issue ID 2718281828 as a sub-issue of #12 in a/b, the second page, 50 per page",
        "open a PR from the develop branch into main; set the description to 'x y' with input env=prod",
        "delete old/legacy.py from the main branch of a/b and c/d, not the docs ones; see https://h/a/b/pull/3#r4",
        "open that file again, just names and sizes",
    ]
    random_values = [None, 3, "feat/x", ["x"], {"k": "v"}, True]
    for index, tool in enumerate(REGISTRY):
        schema = tool["inputSchema"]
        keys = list(schema.get("properties") or {})
        for intent in intents:
            raw = {key: random_values[(index + i) % len(random_values)] for i, key in enumerate(keys)}
            raw = {key: value for key, value in raw.items() if value is not None}
            valid = {key: value for key, value in raw.items() if schema_valid({key: value}, schema)}
            placed = place_stated(valid, schema, intent, tool["name"], window)
            assert schema_valid(placed, schema), (tool["name"], intent, placed)


def test_a_number_goes_to_the_key_its_cue_words_name() -> None:
    sub = {
        "properties": {
            "issue_number": {"type": "integer"},
            "sub_issue_id": {"type": "integer"},
            "before_id": {"type": "integer"},
        }
    }
    said = "Add issue ID 2718281828 as a sub-issue of #12 in z/m"
    swapped = {"issue_number": 2718281828, "sub_issue_id": 12}
    assert cued_numbers(swapped, sub, said) == {"issue_number": 12, "sub_issue_id": 2718281828}
    # said once, a number leaves a key that wants other numbers (here #2 or #9, which the rule cannot
    # choose between: the call asks for it rather than send the sub-issue's id as the parent's number)
    moved = "The issue with id 44002211 hangs under #2 in z/m but belongs to #9"
    twice = {"issue_number": 44002211, "sub_issue_id": 44002211}
    add = {"properties": {"issue_number": {"type": "integer"}, "sub_issue_id": {"type": "integer"}}}
    assert cued_numbers(twice, add, moved) == {"sub_issue_id": 44002211}
    # "#12" wins over the previous turn's issue; "it" keeps the id the window supplied
    earlier = {"issue_number": 431, "sub_issue_id": 2718281828}
    assert cued_numbers(earlier, sub, "make it a sub-issue of epic #12")["issue_number"] == 12
    # two numbers cued alike name no key; an uncued number moves nowhere
    twice = {"issue_number": 9, "before_id": 2}
    assert cued_numbers(twice, sub, "it hangs under #2 but belongs to #9") == twice
    assert cued_numbers({"issue_number": 5}, sub, "show the last 5 of them") == {"issue_number": 5}
    logs = {"properties": {"run_id": {"type": "integer"}, "job_id": {"type": "integer"}}}
    assert cued_numbers({"job_id": 98765}, logs, "Run 98765 went red") == {"run_id": 98765}
    pages = {"properties": {"page": {"type": "integer"}, "perPage": {"type": "integer"}}}
    assert cued_numbers({"page": 50}, pages, "the second page, 50 per page") == {"page": 2, "perPage": 50}
    assert cued_numbers({}, pages, "the last 5 releases") == {"perPage": 5}
    # "the last 3600 seconds" is a span of time, no page size; a word of time ends a cue
    assert cued_numbers({}, pages, "readings of the last 3600 seconds") == {}
    assert number_cues("a 5% annual yield after 3 years")[-1] == ("3", frozenset())
    # a number with its unit is stated, and the unit cues it: "a 1kg ice block … under 1 atmosphere" lost
    # its mass when the 1 seemed said once, for the pressure; an id's digits and a time of day are not it
    entropy = {
        "properties": {
            "mass": {"type": "integer", "description": "The mass of the substance in kg."},
            "pressure": {"type": "integer", "description": "The pressure the substance is under in atmospheres."},
        }
    }
    heated = "the change in entropy of a 1kg ice block heated under 1 atmosphere of pressure"
    assert cued_numbers({"mass": 1, "pressure": 1}, entropy, heated) == {"mass": 1, "pressure": 1}
    assert number_cues("a 5km run")[0] == ("5", frozenset({"km"}))
    assert number_cues("commit 5b1e9f0c at 10am") == []
    # "the last release" is one, counted from its end; "the last six months" and "the last week" are spans
    # a 1 the model did not write is not added: "the latest release" moves a 1, it asks for no limit
    assert cued_numbers({}, pages, "show the latest release of acme/app") == {}
    assert cued_numbers({"page": 1}, pages, "show the latest release of acme/app") == {"perPage": 1}
    first_n, last_n = "If provided, returns only the first N lines", "If provided, returns only the last N lines"
    lines = {"properties": {"head": {"type": "number", "description": first_n},
                            "tail": {"type": "number", "description": last_n}}}  # fmt: skip
    assert cued_numbers({"tail": 1}, lines, "show the first line of notes.txt") == {"head": 1}
    assert "1" in spelled_numbers("who wrote the last commit")
    # that 1 is a count or an end, not any number: "what changed in the last commit" sent context_lines 1
    diff = {"properties": {"context_lines": {"type": "integer"}, "max_count": {"type": "integer"}}}
    assert ground({"context_lines": 1, "max_count": 1}, diff, "what changed in the last commit")[0] == {"max_count": 1}
    assert ground({"tail": 1}, lines, "show the first line of notes.txt")[0] == {"tail": 1}  # placement moves it
    assert ground({"context_lines": 1}, diff, "the last commit, with 1 line of context")[0] == {"context_lines": 1}
    for span in ("rain in the last six months", "what changed the last week", "the last few commits", "the first time"):
        assert ones_from_an_end(span) == [], span
    # a URL's path numbers a pull request, its anchor a comment by id
    react = {"properties": {"comment_id": {"type": "number"}, "content": {"type": "string"}}}
    link = "thumbsdown this comment: https://github.com/p/e/pull/318#discussion_r1650022311"
    assert cued_numbers({"comment_id": 318}, react, link) == {"comment_id": 1650022311}
    # the sentence's comma is not the link's: "…/pull/318, answer the comment" left ``pullNumber`` out
    reply = {"properties": {"pullNumber": {"type": "number"}, "commentId": {"type": "number"}}}
    answer = "In https://github.com/p/e/pull/318, answer the comment (id 1650022311): 'ok'"
    assert cued_numbers({"commentId": 1650022311}, reply, answer) == {"commentId": 1650022311, "pullNumber": 318}
    ids = {"properties": {"notificationID": {"type": "string"}}}
    assert cued_numbers({}, ids, "mark notification id 1234 as read") == {"notificationID": "1234"}
    # a cue word of the key's description counts, after those of key names: "first" is ``head``'s
    lines = {
        "properties": {
            "tail": {"type": "number", "description": "If provided, returns only the last N lines of the file"},
            "head": {"type": "number", "description": "If provided, returns only the first N lines of the file"},
        }
    }
    assert cued_numbers({"tail": 5}, lines, "show the first 5 lines of notes.txt") == {"head": 5}
    assert cued_numbers({"head": 5}, lines, "show the last 5 lines of notes.txt") == {"tail": 5}
    described = {"properties": {"comment_id": {"type": "number", "description": "The pull request comment"}}}
    assert cued_numbers({"comment_id": 318}, described, link) == {"comment_id": 1650022311}


def test_a_pull_requests_branches_follow_from_and_into() -> None:
    assert branch_roles("make pr in a/b  fix/tooltip -> develop, title 'x'") == {
        "source": "fix/tooltip",
        "target": "develop",
    }
    assert branch_roles("I pushed to the refactor/db-layer branch on a/b. Open a PR against develop") == {
        "target": "develop",
        "source": "refactor/db-layer",
    }
    assert branch_roles("open a PR from the develop branch into main") == {"target": "main", "source": "develop"}
    # "to" names the target only after a "from": "I pushed to the x branch" names no target
    assert branch_roles("now open a PR from that branch to upstream main") == {"target": "main"}
    assert branch_roles("open a PR from feature-x to develop") == {"target": "develop", "source": "feature-x"}
    assert branch_roles("any prs open from teh branch octo-org:feature/dark-mode?") == {
        "source": "octo-org:feature/dark-mode"
    }
    pull = {
        "properties": {
            "head": {"type": "string", "description": "Branch containing changes"},
            "base": {"type": "string", "description": "Branch to merge into"},
            "title": {"type": "string"},
        }
    }
    said = "pushed to the refactor/db-layer branch; open a PR against develop"
    assert pull_request_branches({"base": "refactor/db-layer"}, pull, said) == {
        "base": "develop",
        "head": "refactor/db-layer",
    }
    # the one branch a request names is not both ends: the source leaves the target's key
    open_from = "any prs open from teh branch octo-org:feature/dark-mode in octo-org/app?"
    assert pull_request_branches({"base": "octo-org:feature/dark-mode"}, pull, open_from) == {
        "head": "octo-org:feature/dark-mode"
    }
    assert pull_request_branches({"head": "main", "base": "main"}, pull, "a PR from main into main") == {
        "head": "main",
        "base": "main",  # both said
    }
    # a branch the request states for the key stays; "a review from ivan-p" names no branch
    stated = "- head: hotfix/x\n- base: main\nAlso request a review from ivan-p."
    assert pull_request_branches({"head": "hotfix/x", "base": "main"}, pull, stated) == {
        "head": "hotfix/x",
        "base": "main",
    }
    # a stated branch goes to the one key that holds branches, over a word the request did not call one
    contents = {"properties": {"path": {"type": "string"}, "ref": {"type": "string"}, "sha": {"type": "string"}}}
    said = "open src/db.ts on the release/2.4 branch, not on main"
    assert stated_homes({"path": "src/db.ts", "ref": "main"}, contents, said)["ref"] == "release/2.4"
    commits = {"properties": {"sha": {"type": "string", "description": "Commit SHA, branch or tag name"}}}
    assert stated_homes({}, commits, "the latest commit on the develop branch") == {"sha": "develop"}
    assert stated_branches("add a file on that branch containing 'x'") == []
    # a key about branches is no branch name; a file is no repository's or folder's path
    git = {"properties": {"repo_path": {"type": "string"}, "branch_type": {"type": "string"}}}
    assert stated_homes({}, git, "list branches like the main branch") == {}
    assert stated_homes({}, git, "stage src/a.py and commit") == {}
    delete = {"properties": {"path": {"type": "string"}, "branch": {"type": "string"}, "message": {"type": "string"}}}
    said = "delete old/legacy_api.py from the main branch, commit message 'rm'"
    assert stated_homes({"message": "rm"}, delete, said) == {
        "message": "rm",
        "path": "old/legacy_api.py",
        "branch": "main",
    }
    gist = {"properties": {"filename": {"type": "string"}, "content": {"type": "string"}}}
    said = "creat a gist notes.md w/ 'meeting notes 12/3'"
    unwrapped = bare_quotes({"content": "meeting notes.md w/ 'meeting notes 12/3'"}, said)
    assert stated_homes(unwrapped, gist, said) == {"content": "meeting notes 12/3", "filename": "notes.md"}
    file = {"content": '# Title\nCommit message: "docs: add guide"', "message": "docs: add guide"}
    assert bare_quotes(file, "Add docs/X.md. Content: # Title. Commit message: 'docs: add guide'") == file
    branch = {"properties": {"branch": {"type": "string"}, "from_branch": {"description": "Source branch"}}}
    branch["properties"]["from_branch"]["type"] = "string"
    assert pull_request_branches({"branch": "docs"}, branch, "new branch 'docs' from develop") == {
        "branch": "docs",
        "from_branch": "develop",
    }


def test_the_text_after_a_colon_is_meant_whole() -> None:
    """The 0.5B model wrote ``query: "memory leak"`` for "search issues across all of github: memory leak
    after websocket reconnect"; a free-text value that is the head of the colon's tail takes the tail."""
    search = {"properties": {"query": {"type": "string"}, "order": {"type": "string", "enum": ["asc", "desc"]}}}
    said = "search issues across all of github: memory leak after websocket reconnect."
    assert whole_colon_tail({"query": "memory leak"}, search, said) == {
        "query": "memory leak after websocket reconnect"
    }
    # a value that is no head of the tail, a key that holds no text, and a link's colon are left alone
    assert whole_colon_tail({"query": "websocket"}, search, said) == {"query": "websocket"}
    runs = {"properties": {"branch": {"type": "string"}}}
    assert whole_colon_tail({"branch": "main"}, runs, "runs on this branch: main and develop") == {"branch": "main"}
    assert whole_colon_tail({"query": "memory"}, search, "search https://x.org/a memory leak") == {"query": "memory"}


def test_pasted_material_is_the_long_text_the_model_left_out() -> None:
    """ "Open an issue … with this trace:" and the trace came out with a title and no body (session 58):
    what the request pastes goes to the tool's long-text key when the model leaves it out or copies part
    of it; text of the model's own, a commit message, or two keys of one rank are left alone."""
    trace = "Traceback (most recent call last):\n  File \"/app/main.py\", line 8, in run\nKeyError: 'a1'"
    said = f"Open an issue in acme/api titled 'KeyError on login' with this trace:\n{trace}\n\nthanks"
    issue = {"properties": {"title": {"type": "string"}, "body": {"type": "string"}}}
    titled = {"title": "KeyError on login"}
    assert pasted_material(titled, issue, split_pasted(said)) == {**titled, "body": trace}
    assert pasted_material({"body": "KeyError: 'a1'"}, issue, split_pasted(said))["body"] == trace
    assert pasted_material({"body": "Login fails."}, issue, split_pasted(said)) == {"body": "Login fails."}
    assert pasted_material({}, issue, split_pasted("Open an issue in acme/api titled 'x'")) == {}
    fenced = "save this as app.ts:\n```ts\nconst x = 1;\n```"
    file = {"properties": {"content": {"type": "string"}, "message": {"type": "string"}}}
    assert pasted_material({"message": "add"}, file, split_pasted(fenced)) == {
        "message": "add",
        "content": "```ts\nconst x = 1;\n```",
    }
    commit = {"properties": {"message": {"type": "string"}}}
    assert pasted_material({}, commit, split_pasted(fenced)) == {}
    two = {"properties": {"issue_body": {"type": "string"}, "pr_body": {"type": "string"}}}
    assert pasted_material({}, two, split_pasted(said)) == {}


def test_the_headline_of_pasted_material_is_the_line_that_names_what_went_wrong() -> None:
    """A search for pasted material quotes the line a person would: the exception and its message, not
    the traceback's first line, a frame, a runtime's wrapper or a logger's timestamp."""
    python = "Traceback (most recent call last):\n  File \"/app/w.py\", line 8, in run\n    job.ack()\nKeyError: 'a1'"
    assert headline(python) == "KeyError: 'a1'"
    java = 'Exception in thread "main" java.lang.IllegalStateException: pool shut down\n\tat a.B.c(B.java:3)'
    assert headline(f"```\n{java}\n```") == "java.lang.IllegalStateException: pool shut down"
    assert headline("app/models/o.rb:23:in `total': undefined method `price' for nil:NilClass (NoMethodError)") == (
        "undefined method `price' for nil:NilClass (NoMethodError)"
    )
    log = "2025-03-02 14:11:07,112 INFO  [main] start\n2025-03-02 14:11:09,530 ERROR [pool-2] kafka: broker down."
    assert headline(log) == "kafka: broker down"
    assert headline("panic: assignment to entry in nil map\n\ngoroutine 1 [running]:") == (
        "panic: assignment to entry in nil map"
    )
    assert headline("def f(x):\n    return x + 1") == ""  # code names nothing that went wrong
    assert len(headline("ValueError: " + "word " * 60)) <= 120


def test_a_search_about_pasted_material_searches_its_headline() -> None:
    """ "Has anyone reported this in acme/api? <trace>" came out with no query, "Any open bug for this
    one?" searched ``bug`` and "find where this is thrown in acme/billing" ``billing repo:acme/billing``
    (0.5B model, session 60): when the request points at its material and the query says nothing of its
    own, the search key takes the material's headline, its qualifiers kept. A query with words of its
    own, a request that points at nothing, and an optional search key the model left out stay."""
    trace = "Traceback (most recent call last):\n  File \"/app/w.py\", line 8, in run\nKeyError: 'a1'"
    issues = {
        "properties": {"query": {"type": "string"}, "owner": {"type": "string"}, "repo": {"type": "string"}},
        "required": ["query"],
    }
    said = split_pasted(f"Has anyone reported this in acme/api?\n\n{trace}")
    repo = {"owner": "acme", "repo": "api"}
    assert searched_material(repo, issues, "search_issues", said) == {**repo, "query": "KeyError: 'a1'"}
    for query in ("bug", "this one", "acme api issues", "reported", "is:open"):
        expected = " ".join(["KeyError: 'a1'", *[w for w in query.split() if ":" in w]])
        assert searched_material({**repo, "query": query}, issues, "search_issues", said)["query"] == expected
    code = {"properties": {"query": {"type": "string"}}, "required": ["query"]}
    thrown = split_pasted(f"Find where this is thrown in acme/billing:\n{trace}")
    assert searched_material({"query": "billing repo:acme/billing"}, code, "search_code", thrown) == {
        "query": "KeyError: 'a1' repo:acme/billing"
    }
    own = {**repo, "query": "login cache misses"}
    assert searched_material(own, issues, "search_issues", said) == own  # the request's own topic
    unpointed = split_pasted(f"list the open bugs in acme/api\n\n{trace}")
    assert searched_material({**repo, "query": "bug"}, issues, "search_issues", unpointed)["query"] == "bug"
    weekly = split_pasted(f"search this repo's issues\n\n{trace}")  # "this repo" points at no block
    assert searched_material({"query": "issues"}, issues, "search_issues", weekly) == {"query": "issues"}
    optional = {"properties": {"query": {"type": "string"}, "repo": {"type": "string"}}}
    assert searched_material({"repo": "api"}, optional, "list_commits", said) == {"repo": "api"}


def test_quoted_text_goes_to_the_key_the_word_before_it_names() -> None:
    pull = {
        "properties": {
            "title": {"type": "string", "description": "New title"},
            "body": {"type": "string", "description": "New description"},
            "state": {"type": "string", "enum": ["open", "closed"]},
        }
    }
    said = "On a/b PR 145: set the description to 'Implements the new Button API.'"
    got = quotes_where_named({"title": "Implements the new Button API."}, pull, said)
    assert got == {"body": "Implements the new Button API."}
    titled = "open an issue titled 'Tooltip flickers' with body 'see video'"
    both = {"title": "Tooltip flickers", "body": "see video"}
    assert quotes_where_named(both, pull, titled) == both
    # a word that names no key moves nothing
    assert quotes_where_named({"body": "Thanks!"}, pull, "Post 'Thanks!' on it") == {"body": "Thanks!"}
    # a list of quotes is not one value; a generic word ("host name") names no key by its description;
    # a key that holds the quote inside more text keeps it
    model = {"properties": {"target": {"type": "string", "description": "Target variable"}}}
    assert quotes_where_named({}, model, "predictor variables 'Age', 'Income' and 'Education'") == {}
    server = {"properties": {"database": {"type": "string", "description": "The name of the database"}}}
    assert quotes_where_named({}, server, "the host name 'pg.example.org'") == {}
    search = {"properties": {"query": {"type": "string", "description": "The song to play"}}}
    query = {"query": "track:Dil Nu artist:Maninder Buttar"}
    assert quotes_where_named(query, search, "play the song 'Dil Nu' by Maninder Buttar") == query


def test_an_optional_key_is_named_by_the_start_of_its_word_or_a_synonym() -> None:
    logs = {"properties": {"run_id": {"type": "integer"}, "failed_only": {"type": "boolean"}}}
    assert "failed_only" in named_keys(logs, "pull the logs of run 5 for just the jobs that failed")
    people = {"properties": {"assignees": {"type": "array"}, "title": {"type": "string"}}}
    assert named_keys(people, "open an issue titled 'x' and assign it to hana-k") == {"assignees", "title"}


def test_an_identifier_inside_a_longer_word_is_meant_whole() -> None:
    schema = {"properties": {"owner": {}, "cveId": {}, "ref": {}, "body": {}}}
    got = whole_word({"owner": "astro", "cveId": "2024-3094"}, schema, "categories for withastro, CVE-2024-3094")
    assert got == {"owner": "withastro", "cveId": "CVE-2024-3094"}
    # a word of its own, or prose, stays as written
    said = "in octo-org/app on main, body: domain main"
    assert whole_word({"ref": "main", "body": "dom"}, schema, said) == {"ref": "main", "body": "dom"}
    # the start of a word is its stem, not a part of a name; text without spaces holds values mid-word
    assert whole_word({"ref": "gas", "owner": "mi"}, schema, "a gas-powered car, in milesfrom") == {
        "ref": "gas",
        "owner": "mi",
    }
    assert whole_word({"owner": "北京"}, schema, "北京后天的天气如何？") == {"owner": "北京"}


def test_sort_order_and_noun_forms_name_enum_values() -> None:
    advisories = {
        "properties": {
            "sort": {"type": "string", "enum": ["created", "updated", "published"]},
            "direction": {"type": "string", "enum": ["asc", "desc"]},
        }
    }
    said = "advisories in the quartz-ai org, oldest first by creation date"
    assert named_values(advisories, said) == {"sort": ["created"], "direction": ["asc"]}
    chosen = {"sort": "created", "direction": "asc"}
    assert ground(chosen, advisories, said)[0] == chosen
    assert named_values(advisories, "newest first") == {"direction": ["desc"]}
    assert named_values(advisories, "list the advisories") == {}
    # quoted text is a value, not an instruction: "Closes #130" in a PR body closes nothing
    state = {"properties": {"state": {"type": "string", "enum": ["open", "closed"]}, "body": {"type": "string"}}}
    kept, dropped = ground({"state": "closed", "body": "Closes #130."}, state, "set the body to 'Closes #130.'")
    assert kept == {"body": "Closes #130."} and dropped == ["state"]


def test_a_required_choice_narrows_to_the_values_the_request_describes_best() -> None:
    projects = {
        "properties": {
            "method": {
                "type": "string",
                "enum": ["list_project_items", "list_project_fields", "get_project", "get_project_field"],
            }
        },
        "required": ["method"],
    }
    assert named_values(projects, "what fields does project 5 of dana-k have?") == {
        "method": ["list_project_fields", "get_project_field"]
    }
    assert named_values(projects, "show me feild 123456 in project 5") == {"method": ["get_project_field"]}
    assert named_values(projects, "has anyone approved it?") == {}  # under half of any value's words
    optional = {"properties": projects["properties"]}
    assert named_values(optional, "what fields does project 5 have?") == {}  # only where a value must be chosen


COMMITS = {
    "type": "object",
    "properties": {
        "owner": {"type": "string"},
        "repo": {"type": "string"},
        "sha": {"type": "string"},
        "author": {"type": "string"},
        "path": {"type": "string", "description": "Only commits containing this file path"},
        "page": {"type": "integer"},
        "perPage": {"type": "integer"},
    },
    "required": ["owner", "repo"],
}
PROJECT = {
    "type": "object",
    "properties": {
        "method": {"type": "string", "enum": ["get_project", "get_project_field", "get_project_item"]},
        "owner": {"type": "string"},
        "project_number": {"type": "number"},
        "field_id": {"type": "number"},
        "item_id": {"type": "number"},
    },
    "required": ["method"],
}


def test_a_stated_path_or_number_is_not_left_out(generator: ArgumentGenerator) -> None:
    """The 0.5B model closes the object before these (``docs/arguments.md``, stated entities)."""
    said = "commits touching src/auth/session.go in cobalt-systems/auth-gateway"
    done = generator.generate("list_commits", COMMITS, "List commits of a branch", said)
    assert done.arguments == {"owner": "cobalt-systems", "repo": "auth-gateway", "path": "src/auth/session.go"}
    done = generator.generate("projects_get", PROJECT, "Get a project, field or item", "Get details of project 3")
    assert done.arguments.get("project_number") == 3


def test_a_request_is_read_without_what_it_pastes_unless_it_asks_about_it(generator: ArgumentGenerator) -> None:
    """Shown a pasted trace, the 0.5B model wrote ``path: /app/server/main.py`` for "open the README.md"
    and ``sha: a81f3c`` (the trace's KeyError) for "commit a1b2c3d" (session 59). The request is read
    without its material; with it only for what the request leaves unsaid, and its own values win."""
    trace = (
        'Traceback (most recent call last):\n  File "/app/server/main.py", line 88, in handle_request\n'
        '    user = session.get_user(token)\n  File "/app/server/session.py", line 41, in get_user\n'
        "    return self.cache[token]\nKeyError: 'a81f3c'"
    )
    tools = {
        tool["name"]: tool
        for fixture in ("github_commit_tools.json", "pasted_material_tools.json")
        for tool in json.loads((TESTS / "fixtures" / fixture).read_text())
    }

    def generate(name: str, said: str) -> Generation:
        return generator.generate(name, tools[name]["inputSchema"], tools[name]["description"], said)

    seeing = "\n\nHere's what I'm seeing:\n"
    done = generate("get_commit", f"Someone referenced commit a1b2c3d of pallets/flask in a bug report{seeing}{trace}")
    assert done.arguments == {"owner": "pallets", "repo": "flask", "sha": "a1b2c3d"}
    done = generate("get_file_contents", f"opn the README.md in my dotfiles repo{seeing}{trace}")
    assert done.arguments == {"repo": "dotfiles", "path": "README.md"} and done.missing == ["owner"]
    response = '{"status": 500, "error": "Internal Server Error", "path": "/v2/orders", "requestId": "c0ffee42"}'
    done = generate("get_file_contents", f"In northwind/inventory-api, open src/config/database.ts{seeing}{response}")
    assert done.arguments == {"owner": "northwind", "repo": "inventory-api", "path": "src/config/database.ts"}
    # "this error" is no query: the material is what the search is for
    log = "#8 ERROR: No matching distribution found for torch==2.9.1\n#8 ERROR: process did not complete\n#8 DONE"
    done = generate("search_code", f"find this error in the acme/api code\n\n{log}")
    assert "torch" in done.arguments.get("query", "")
    # a search about the material searches its headline: the model left the query out (session 60)
    done = generate("search_issues", f"Has anyone reported this in acme/api?\n\n{trace}")
    assert done.arguments["query"] == "KeyError: 'a81f3c'" and done.arguments["repo"] == "api"


def test_a_number_keeps_its_sign_and_exponent(generator: ArgumentGenerator) -> None:
    """The walker once allowed only digits and a point: -4 came out 4, 1e-9 came out 1."""
    roots = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}},
        "required": ["a", "b", "c"],
    }
    done = generator.generate(
        "solve_quadratic", roots, "Roots of ax^2 + bx + c", "roots of the quadratic with coefficients 2, 3 and -4"
    )
    assert done.arguments == {"a": 2, "b": 3, "c": -4}
    charges = {
        "type": "object",
        "properties": {"charge1": {"type": "number"}, "charge2": {"type": "number"}},
        "required": ["charge1", "charge2"],
    }
    done = generator.generate("potential", charges, "Electrostatic potential", "charges of 1e-9 and 2e-9 coulombs")
    assert done.arguments == {"charge1": 1e-09, "charge2": 2e-09}
    flows = {
        "type": "object",
        "properties": {"cash_flows": {"type": "array", "items": {"type": "integer"}}},
        "required": ["cash_flows"],
    }
    done = generator.generate("npv", flows, "Net present value", "NPV of the cash flows [-50000, 10000, -2500]")
    assert done.arguments == {"cash_flows": [-50000, 10000, -2500]}


def test_a_new_name_goes_to_the_key_for_one_and_a_stated_value_keeps_its_spelling() -> None:
    """ "Rename the label 'bug' to 'type: bug'": the 0.5B model wrote ``description: "Type: bug"``."""
    labels = {
        "properties": {
            "name": {"type": "string"},
            "new_name": {"type": "string"},
            "description": {"type": "string"},
            "method": {"type": "string", "enum": ["create", "update", "delete"]},
        }
    }
    request = "Rename the label 'bug' to 'type: bug' in lumen-labs/lumen-ui."
    got = renamed_to({"name": "bug", "description": "type: bug"}, labels, request)
    assert got == {"name": "bug", "new_name": "type: bug"}
    assert renamed_to({"name": "old"}, labels, "rename branch old to new-name.") == {
        "name": "old",
        "new_name": "new-name",
    }
    assert renamed_to({"name": "x"}, {"properties": {"name": {"type": "string"}}}, "rename x to y") == {"name": "x"}
    assert renamed_to({"name": "bug"}, labels, "update the label bug") == {"name": "bug"}  # no renaming
    kept, _ = ground({"description": "Type: bug", "method": "update"}, labels, request)
    assert kept == {"description": "type: bug", "method": "update"}  # the request's spelling; an enum's own
    kept, _ = ground({"name": "Bug"}, labels, "Rename the label 'bug' or 'Bug'")
    assert kept == {"name": "Bug"}  # stated as it is


def test_the_kind_of_a_value_stated_beside_it_fills_the_key_for_its_kind() -> None:
    """ "Set up a new project called 'Q3 Roadmap' under the acme-corp org": GitHub's ``projects_write``
    needs ``owner_type`` to create a project, and the 0.5B model left it out."""
    projects = {
        "properties": {
            "owner": {"type": "string"},
            "owner_type": {"type": "string", "enum": ["user", "org"]},
            "item_type": {"type": "string", "enum": ["issue", "pull_request"]},
        }
    }
    request = "Set up a new project called 'Q3 Roadmap' under the acme-corp org."
    assert stated_kinds({"owner": "acme-corp"}, projects, request) == {"owner": "acme-corp", "owner_type": "org"}
    said = "what fields does project 5 of user dana-k have?"
    assert stated_kinds({"owner": "dana-k"}, projects, said)["owner_type"] == "user"
    said = "items of project 3 for the octo-org organization"  # an option that begins the word
    assert stated_kinds({"owner": "octo-org"}, projects, said)["owner_type"] == "org"
    # the kind not said beside the value, or no value for the key it is the kind of: nothing to place
    assert stated_kinds({"owner": "dana-k"}, projects, "show field 9 in project 5 of dana-k") == {"owner": "dana-k"}
    assert stated_kinds({}, projects, "the acme-corp org") == {}
    assert stated_kinds({"owner": "octo-org"}, projects, "add issue 4 of octo-org/app") == {"owner": "octo-org"}


def test_quoted_text_lands_in_a_free_text_argument(generator: ArgumentGenerator) -> None:
    said = "Post 'Thanks for the report! Tracking this for 2.5.' on issue 310 of lumen-labs/lumen-ui"
    done = generator.generate("update_issue", COMMENT, "Update an issue", said)
    assert done.arguments.get("body") == "Thanks for the report! Tracking this for 2.5."


def test_values_copied_from_the_request_are_guessed_and_checked_in_a_batch(generator: ArgumentGenerator) -> None:
    said = "Post 'Thanks for the report! Tracking this for the next release.' on issue 1650022311 of lumen-labs/app"
    guessing = generator.generate("update_issue", COMMENT, "Update an issue", said)
    plain = ArgumentGenerator(generator.engine, guess=False).generate("update_issue", COMMENT, "Update an issue", said)
    for done in (guessing, plain):
        assert done.arguments["owner"] == "lumen-labs" and done.arguments["repo"] == "app"
        assert done.arguments["issue_number"] == 1650022311
        assert done.arguments.get("body") == "Thanks for the report! Tracking this for the next release."
    guessed, kept = guessing.guessed_tokens
    assert kept >= 10 and kept <= guessed  # the id's digits, the body's words, "-labs"
    assert plain.guessed_tokens == (0, 0)
    # every kept guess is a decode the model did not need on its own
    assert guessing.chosen_tokens == plain.chosen_tokens
    assert guessing.decodes <= plain.decodes - kept // 2


def test_a_choice_that_leaves_one_option_is_fed_with_its_rest_in_one_batch(generator: ArgumentGenerator) -> None:
    said = "close issue 45 in octo-org/app"
    merged = generator.generate("update_issue", COMMENT, "Update an issue", said)
    apart = ArgumentGenerator(generator.engine, merge=False, guess=False).generate(
        "update_issue", COMMENT, "Update an issue", said
    )
    for done in (merged, apart):
        assert done.arguments == {"owner": "octo-org", "repo": "app", "issue_number": 45, "state": "closed"}
    assert merged.decodes < apart.decodes


def test_a_guess_stops_where_the_value_likely_ends() -> None:
    def guessed(written: str, rest: str, prose: bool = False) -> str:
        return rest[: _value_end(written.encode(), rest.encode(), prose)]

    assert guessed("oct", "o-org/app since March") == "o-org"  # the owner ends at the slash
    assert guessed("src/", "config/db.ts on the release") == "config/db.ts"  # a path goes on
    assert guessed("next", ".js PR 71234") == ".js"  # a dot inside a name is not a sentence's end
    assert guessed("This", " is intentional, see the notes. Thanks", prose=True) == " is intentional, see the notes"
    assert guessed("feat", ": batch stock import', pls update", prose=True) == ": batch stock import"
    assert guessed("the reviewer", "'s comment", prose=True) == "'s comment"
    assert guessed("app", '" and more') == ""  # a quote ends any guess
    assert guessed("app", "#204 has two approvals") == ""  # octo-org/app#204: the repository is "app"
    assert guessed("oct", "o-org:feature/dark-mode") == "o-org"  # owner:branch


def test_an_optional_key_the_request_names_is_written(generator: ArgumentGenerator) -> None:
    done = generator.generate("update_issue", LABELS, "Update an issue", "label issue 5 in acme/web as bug")
    assert done.arguments == {"owner": "acme", "repo": "web", "issue_number": 5, "labels": ["bug"]}


# GitHub MCP's update_issue_labels: a label is a name or a suggestion object
SUGGESTED_LABELS = {
    "type": "object",
    "properties": {
        "issue_number": {"type": "number"},
        "labels": {
            "type": "array",
            "items": {
                "oneOf": [
                    {"type": "string", "description": "Label name"},
                    {
                        "type": "object",
                        "properties": {
                            "confidence": {"type": "string", "enum": ["LOW", "MEDIUM", "HIGH"]},
                            "is_suggestion": {"type": "boolean"},
                            "name": {"type": "string"},
                            "rationale": {"type": "string"},
                        },
                    },
                ]
            },
        },
        "owner": {"type": "string"},
        "repo": {"type": "string"},
    },
    "required": ["owner", "repo", "issue_number", "labels"],
}


def test_an_array_is_never_empty(generator: ArgumentGenerator) -> None:
    window = SessionWindow()
    window.add(
        "open an issue in mkovacs/blog titled 'Dark mode toggle resets on reload'",
        "create_issue",
        {"owner": "mkovacs", "repo": "blog", "title": "Dark mode toggle resets on reload"},
        {"number": 73, "id": 3300112233, "title": "Dark mode toggle resets on reload"},
    )
    done = generator.generate(
        "update_issue_labels", SUGGESTED_LABELS, "Update the labels of an existing issue", "label it bug", window
    )
    assert done.arguments == {"owner": "mkovacs", "repo": "blog", "issue_number": 73, "labels": ["bug"]}


def test_the_enum_value_the_request_says_is_chosen(generator: ArgumentGenerator) -> None:
    methods = ["run_workflow", "rerun_workflow_run", "rerun_failed_jobs", "cancel_workflow_run"]
    trigger = {
        "type": "object",
        "properties": {
            "method": {"type": "string", "enum": methods},
            "owner": {"type": "string"},
            "repo": {"type": "string"},
            "run_id": {"type": "number"},
        },
        "required": ["method", "owner", "repo"],
    }
    intent = "rerun the failed jobs of run 9876543210 in acme-corp/billing-service"
    done = generator.generate("actions_run_trigger", trigger, "Trigger GitHub Actions workflow operations", intent)
    assert done.arguments["method"] == "rerun_failed_jobs"  # the 0.5B model alone picks cancel_workflow_run


def test_generation_fills_stated_arguments_and_leaves_out_the_rest(generator: ArgumentGenerator) -> None:
    done = generator.generate("issue_read", ISSUE, "Get an issue", "what's issue 412 in octo-org/app about?")
    assert done.arguments == {"owner": "octo-org", "repo": "app", "issue_number": 412}
    assert not done.missing and done.prompt_tokens > 0 and done.forced_tokens > 0
    asked = generator.generate("issue_read", ISSUE, "Get an issue", "please close issue 9")
    assert "owner" in asked.missing and "owner" not in asked.arguments


def test_the_focused_ir_shortens_the_prompt_and_keeps_the_stated_arguments(generator: ArgumentGenerator) -> None:
    focused = ArgumentGenerator(generator.engine, focused=True)  # nexus.schema: ir-focused
    request = "what's issue 412 in octo-org/app about?"
    full = generator.generate("issue_read", ISSUE, "Get an issue", request)
    short = focused.generate("issue_read", ISSUE, "Get an issue", request)
    assert short.arguments == full.arguments == {"owner": "octo-org", "repo": "app", "issue_number": 412}
    assert short.prompt_tokens < full.prompt_tokens  # `state` is not shown: the request names no state


def test_a_tool_with_a_long_ir_is_shown_focused(generator: ArgumentGenerator) -> None:
    """``issue_write``'s IR takes 68 tokens, over ``IR_TOKEN_BUDGET``: the prompt shows the parameters this
    request can fill, and the arguments are the ones it states."""
    tools = json.loads((TESTS / "fixtures" / "github_update_tools.json").read_text())
    tool = next(t for t in tools if t["name"] == "issue_write")
    assert len(generator.engine.tokenize(compressed_ir("issue_write", tool["inputSchema"]))) > IR_TOKEN_BUDGET
    request = "open an issue in acme/web titled 'Login broken' and label it bug"
    focused = generator.generate("issue_write", tool["inputSchema"], tool["description"], request)
    whole = ArgumentGenerator(generator.engine, ir_budget=0)  # every tool's IR in full
    shown_whole = whole.generate("issue_write", tool["inputSchema"], tool["description"], request)
    stated = {"owner": "acme", "repo": "web", "title": "Login broken", "labels": ["bug"], "method": "create"}
    assert focused.arguments == stated
    assert focused.prompt_tokens < shown_whole.prompt_tokens - 20


def test_a_misspelt_verb_is_read_as_the_router_reads_it(generator: ArgumentGenerator) -> None:
    """ "asign" is one edit from "assign", and no word of the embedder's vocabulary: read as written, the
    0.5B model gave ``issue_write`` no assignees; with the router's words it reads "assign" (session 64)."""
    tools = json.loads((TESTS / "fixtures" / "github_update_tools.json").read_text())
    tool = next(t for t in tools if t["name"] == "issue_write")
    request = "asign hexa-dev/cli-tools issue 45 to ravi-n and nora-t and put it in milestone 3"
    spelling = ArgumentGenerator(generator.engine, known_words=whole_words())
    read = spelling.generate("issue_write", tool["inputSchema"], tool["description"], request)
    as_written = generator.generate("issue_write", tool["inputSchema"], tool["description"], request)
    assert read.arguments["assignees"] == ["ravi-n", "nora-t"]
    assert "assignees" not in as_written.arguments
    assert {k: read.arguments[k] for k in ("owner", "repo", "issue_number", "milestone")} == {
        "owner": "hexa-dev",
        "repo": "cli-tools",
        "issue_number": 45,
        "milestone": 3,
    }


def test_session_window_resolves_a_reference_to_the_previous_turn(generator: ArgumentGenerator) -> None:
    window = SessionWindow()
    window.add(
        "what's issue 412 in octo-org/app about?",
        "issue_read",
        {"owner": "octo-org", "repo": "app", "issue_number": 412},
        {"number": 412, "title": "App freezes when uploading large images", "state": "open"},
    )
    done = generator.generate("issue_read", ISSUE, "Get an issue", "now close it", window)
    assert score_arguments(done.arguments, {"gold_arguments": {"owner": "octo-org", "repo": "app"}}, "x")[0] == 2


def _local_tool(name: str) -> dict[str, Any]:
    return next(t for t in REGISTRY if t["name"] == name)


def test_an_unrelated_earlier_turn_is_not_shown(generator: ArgumentGenerator) -> None:
    """A request that does not point back can take no value from earlier turns, and shown them the 0.5B
    model copied one: Asia/Tokyo became the source of "convert 9am London time to New York", which was
    then dropped and the call asked for it."""
    window = SessionWindow()
    window.add("what time is it in Tokyo", "get_current_time", {"timezone": "Asia/Tokyo"}, {"timezone": "Asia/Tokyo"})
    tool = _local_tool("convert_time")
    done = generator.generate("convert_time", tool["inputSchema"], tool["description"], CONVERSION, window)
    assert done.arguments == {
        "source_timezone": "Europe/London",
        "time": "09:00",
        "target_timezone": NEW_YORK,
    }
    # "it" points inside its own sentence here: read alone, the request says all that its call needs
    turn = {"owner": "octo", "repo": "site", "issue_number": 3}
    window.add("what's issue 3 in octo/site about?", "issue_read", turn, {})
    own = generator.generate("issue_read", ISSUE, "Get an issue", "show issue 12 of acme/web and summarise it", window)
    assert own.arguments == {"owner": "acme", "repo": "web", "issue_number": 12}


def test_an_elided_follow_up_goes_on_with_the_last_call(generator: ArgumentGenerator) -> None:
    """ "and in Berlin?" states what changes; the rest is the last call's. Shown that call, the model
    repeated it (Asia/Tokyo again) and the repeat was dropped: the follow-up is read alone, then completed.
    Alone, "what about 5pm?" gave the model nothing it could use (15:00, not grounded), and a repeat of the
    last call is never what a follow-up asks: then it is read with the earlier turns."""
    window = SessionWindow()
    window.add("what time is it in Tokyo", "get_current_time", {"timezone": "Asia/Tokyo"}, {"timezone": "Asia/Tokyo"})
    now = _local_tool("get_current_time")
    berlin = generator.generate("get_current_time", now["inputSchema"], now["description"], "and in Berlin?", window)
    assert berlin.arguments == {"timezone": "Europe/Berlin"} and not berlin.from_last_call
    converted = {"source_timezone": "Europe/London", "time": "09:00", "target_timezone": "America/New_York"}
    window.add(CONVERSION, "convert_time", converted, {"source": {}, "target": {}})
    tool = _local_tool("convert_time")
    later = generator.generate("convert_time", tool["inputSchema"], tool["description"], "what about 5pm?", window)
    assert later.arguments == {**converted, "time": "17:00"}, later.raw
    assert not later.missing and set(later.from_last_call) <= {"source_timezone", "target_timezone"}
    assert later.trace().get("from_last_call", []) == later.from_last_call
    # another tool than the last call's takes nothing from it
    assert not window.carried_call("what about 5pm?", "get_current_time")


CONVERSION = "convert 9am London time to New York"
NEW_YORK = "America/New_York"


TIME_CANDIDATES = [
    ("time__convert_time", "convert_time(source_timezone, time, target_timezone) — Convert time between timezones"),
    ("time__get_current_time", "get_current_time(timezone) — Get current time in a specific timezone"),
    ("memory__read_graph", "read_graph() — Read the entire knowledge graph"),
]


def test_choice_among_close_candidates_is_one_of_their_names(generator: ArgumentGenerator) -> None:
    choice = generator.choose_tool("what time is it right now in Tokyo?", TIME_CANDIDATES)
    assert choice.index == 1 and choice.ms > 0


def test_the_same_request_gets_the_same_choice_cold_or_warm() -> None:
    """A cold engine once chose convert_time for this request and, once warm, get_current_time: the
    request was decoded in another batch split each time. Now it always follows the prefix as one batch."""
    engine = LlamaEngine(EngineSettings(str(model_path(lookup(DEFAULT_MODEL))), n_threads=1, n_ctx=2048))
    try:
        cold = ArgumentGenerator(engine)  # not warmed
        choices = {cold.choose_tool("what time is it right now in Tokyo?", TIME_CANDIDATES).index for _ in range(3)}
        assert len(choices) == 1
    finally:
        engine.close()


def test_a_stopped_engine_cuts_the_batch_it_is_decoding_short() -> None:
    """A gateway stopping during its first start waited out the system prefix's prefill (5 s here, more
    on a loaded machine) before it could exit; a second Ctrl+C did not help. ``stop`` now aborts inside
    the batch: a 512-token prompt is one batch, so without the abort it would finish and return logits."""
    engine = LlamaEngine(EngineSettings(str(model_path(lookup(DEFAULT_MODEL))), n_threads=1, n_ctx=1024))
    try:
        prompt = engine.tokenize("word " * 600)[:512]
        outcome: list[BaseException | None] = []

        def prefill() -> None:
            try:
                engine.cursor(prompt)
                outcome.append(None)
            except EngineStopped as exc:
                outcome.append(exc)

        worker = threading.Thread(target=prefill)
        worker.start()
        time.sleep(0.3)  # well into the batch: it takes seconds on one thread
        engine.stop()
        worker.join(60)
        assert outcome and isinstance(outcome[0], EngineStopped), "the batch ran to its end"
        with pytest.raises(EngineStopped):  # and nothing new starts
            engine.cursor(engine.tokenize("hello"))
    finally:
        engine.close()
    # llama.cpp keeps one global pointer to each callback: one object per process, or an engine freed
    # takes the callback another engine's close still calls (session 57 lost the log callback's cache
    # and the module's last close crashed)
    assert _silence_llama_logs(llama_cpp) is _silence_llama_logs(llama_cpp)
    assert _abort_check(llama_cpp) is _abort_check(llama_cpp)


def test_a_key_the_gateway_fills_in_is_neither_forced_nor_missing(generator: ArgumentGenerator) -> None:
    """``given`` (a ``nexus.defaults`` key): the tool's text is unchanged, but the decoder no longer makes the
    model write the required key first, and it is not reported missing."""
    tool = next(t for t in REGISTRY if t["name"] == "git_log")
    args = ("git_log", tool["inputSchema"], tool["description"], "show the last 3 commits")
    forced = generator.generate(*args)
    assert "repo_path" in forced.missing  # written because required, then dropped: nobody said it
    relaxed = generator.generate(*args, given={"repo_path"})
    assert relaxed.missing == [] and relaxed.arguments.get("max_count") == 3, relaxed.trace()
    # the model may still write the key; only a value the request states beats the configured default
    git_log = ("git_log", tool["inputSchema"], tool["description"])
    vague = generator.generate(*git_log, "show the commits of Acme", given={"repo_path"})
    assert "repo_path" not in vague.arguments, vague.trace()
    other = generator.generate(*git_log, "show the commits of ~/src/acme/api", given={"repo_path"})
    assert other.arguments.get("repo_path") == "~/src/acme/api", other.trace()
    # a file the request names is no repository: the model's repo_path "a.txt" yields to the default
    diff = next(t for t in REGISTRY if t["name"] == "git_diff_unstaged")
    args = ("git_diff_unstaged", diff["inputSchema"], diff["description"], "what did I change in a.txt?")
    filed = generator.generate(*args, given={"repo_path"})
    assert filed.raw.get("repo_path") == "a.txt" and "repo_path" not in filed.arguments, filed.trace()


def test_a_glob_key_gets_a_glob_that_matches_what_the_request_says() -> None:
    """The filesystem server's ``search_files`` matches ``pattern`` with minimatch against paths under
    ``path``: ``.py`` matches nothing, ``*.py`` only the top folder, ``*`` everything, and an exclusion
    of ``*.md`` drops every match of "find every .md file"."""
    tool = next(t for t in REGISTRY if t["name"] == "search_files")
    schema, description = tool["inputSchema"], tool["description"]
    assert as_globs({"path": ".", "pattern": ".py"}, schema, description, "files ending in .py") == (
        {"path": ".", "pattern": "**/*.py"},
        [],
    )
    named = as_globs({"path": ".", "pattern": "app.py"}, schema, description, "find files named app.py")
    assert named == ({"path": ".", "pattern": "**/app.py"}, [])  # anywhere below, as the search recurses
    cut_short = {"path": ".", "pattern": "*"}
    assert as_globs(cut_short, schema, description, "find *.py files")[0]["pattern"] == "*.py"
    assert as_globs(cut_short, schema, description, "list everything, *")[0]["pattern"] == "*"  # said so
    said = {"path": "docs", "pattern": "*.md", "excludePatterns": ["*.tmp", "drafts/*"]}
    kept, dropped = as_globs(said, schema, description, "find *.md files in docs but not drafts/*")
    assert kept == {"path": "docs", "pattern": "*.md", "excludePatterns": ["drafts/*"]} and dropped == [
        "excludePatterns"
    ]
    kept, dropped = as_globs(said, schema, description, "find every .md file in docs")
    assert kept == {"path": "docs", "pattern": "**/*.md"} and dropped == ["excludePatterns"]
    # a key that takes no glob is left alone: a regular expression's ".py" means something else
    regex = {"properties": {"pattern": {"type": "string", "description": "a regular expression"}}}
    assert as_globs({"pattern": ".py"}, regex, "Search file contents", "lines matching .py") == ({"pattern": ".py"}, [])


def test_a_kind_of_file_the_request_names_becomes_the_glob_for_it() -> None:
    """ "find all python files" names no glob: the 0.5B model wrote ``.*\\.py`` (a regular expression, which
    grounding drops, so the call asked for its pattern), ``*.*md`` or ``path: "json"``."""
    tool = next(t for t in REGISTRY if t["name"] == "search_files")
    schema, description = tool["inputSchema"], tool["description"]

    def globbed(arguments: dict[str, Any], text: str) -> tuple[dict[str, Any], list[str]]:
        kinds, dropped = file_kind_globs(arguments, schema, description, text)
        return as_globs(kinds, schema, description, text)[0], dropped

    assert globbed({}, "find all python files") == ({"pattern": "**/*.py"}, [])
    assert globbed({"path": "docs", "pattern": "*.*md"}, "list the markdown files in docs")[0] == {
        "path": "docs",
        "pattern": "**/*.md",
    }
    assert globbed({"path": "json"}, "where are the json files") == ({"pattern": "**/*.json"}, ["path"])
    # a glob the request says is its own; two kinds, or none, leave the model's values alone
    said = {"path": "src", "pattern": "test_*.py"}
    assert globbed(said, "find python files named test_*.py in src")[0] == said
    assert file_kind_globs({"pattern": "*.md"}, schema, description, "python and markdown files")[0] == {
        "pattern": "*.md"
    }
    assert file_kind_globs({"path": "text"}, schema, description, "search for the word text") == ({"path": "text"}, [])
    assert file_kind_globs({"language": "python"}, {}, None, "count the python files")[0] == {"language": "python"}
    # a key that takes no glob keeps its regular expression
    regex = {"properties": {"pattern": {"type": "string", "description": "a regular expression"}}}
    assert file_kind_globs({"pattern": r"def \w+"}, regex, "Search file contents", "in python files") == (
        {"pattern": r"def \w+"},
        [],
    )


def test_values_a_description_lists_are_an_enum_for_the_decoder() -> None:
    """``mcp-server-git`` keeps ``branch_type``'s values in prose; the model wrote ``branch``, which the
    server refuses. Examples are no list of values, nor are other parameters' names."""
    branch = next(t for t in REGISTRY if t["name"] == "git_branch")["inputSchema"]
    assert described_options(branch["properties"]["branch_type"]) == ["local", "remote", "all"]
    listed = with_described_options(branch)
    assert listed["properties"]["branch_type"]["enum"] == ["local", "remote", "all"]
    assert "enum" not in branch["properties"]["branch_type"]  # the server's schema is left as it is
    for description in (
        "The branch to use, e.g. 'main' or 'develop'.",
        "The case type. Options include: 'civil', 'criminal', etc.",
        "Must be an integer, 'none', or 'any'.",
        "The format, 'json'.",
    ):
        assert described_options({"type": "string", "description": description}) is None, description
    method = {"type": "string", "description": "Options are: 'add', 'remove'; 'after_id' goes with 'add'."}
    assert described_options(method, ["method", "after_id"]) == ["add", "remove"]
    assert described_options({"type": "integer", "description": "Either '1' or '2'."}) is None


def test_a_key_that_leaves_things_out_takes_text_only_when_the_request_leaves_something_out() -> None:
    """The model put the name the user looks for into ``excludePatterns``, which hides the very file."""
    tree = {"path": "src", "excludePatterns": ["app"]}
    assert excluded_when_said(tree, "which files have 'app' in the name under src") == (
        {"path": "src"},
        ["excludePatterns"],
    )
    assert excluded_when_said(tree, "show the tree of src except app") == (tree, [])
    assert excluded_when_said(tree, "show src, leaving out app")[1] == []
    # a flag or a number is no list of things to leave out: it is grounded as any other value
    flags = {"excludeInactive": True, "skip": 20, "skip_users": ["dependabot"]}
    assert excluded_when_said(flags, "list the next page of users") == (
        {"excludeInactive": True, "skip": 20},
        ["skip_users"],
    )


def test_everyday_requests_to_the_local_servers_get_what_they_mean(generator: ArgumentGenerator) -> None:
    """Found by hand in front of the local servers. The model writes ``path: "."`` for "the current
    folder" (kept: that is what it means) and copies the pattern into ``excludePatterns`` (dropped: it
    would exclude every match); it writes ``tail: 5`` for "the first 5 lines" (``head`` is described as
    the first N lines); and "what time is it" takes the zone the time server's description names for
    when the user gives none, instead of asking for one."""

    def generate(name: str, request: str) -> Generation:
        tool = next(t for t in REGISTRY if t["name"] == name)
        return generator.generate(name, tool["inputSchema"], tool["description"], request)

    found = generate("search_files", "search for *.py files in the current folder")
    assert found.arguments == {"path": ".", "pattern": "*.py"}, found.trace()
    # "ending in .py" is no glob: the model's ".py" or "*.py" for it would miss every file below the top
    ending = generate("search_files", "search for files ending in .py in the current folder")
    assert ending.arguments == {"path": ".", "pattern": "**/*.py"}, ending.trace()
    kind = generate("search_files", "find every typescript file under src")  # the model wrote .*\.ts$
    assert kind.arguments == {"path": "src", "pattern": "**/*.ts"}, kind.trace()
    branch = generate("git_branch", "what branch am I on")
    assert branch.arguments.get("branch_type") == "local", branch.trace()  # a value its description lists
    named = generate("directory_tree", "which files have 'app' in the name under src")
    assert named.arguments == {"path": "src"}, named.trace()  # not excludePatterns: ["app"]
    first = generate("read_text_file", "show the first 5 lines of notes.txt")
    assert first.arguments == {"path": "notes.txt", "head": 5}, first.trace()
    one = generate("read_text_file", "show the first line of notes.txt")  # the model wrote tail: 1, head: 0
    assert one.arguments == {"path": "notes.txt", "head": 1}, one.trace()
    now = generate("get_current_time", "what time is it")
    assert now.arguments == {"timezone": "UTC"} and now.missing == [], now.trace()


def test_a_request_too_long_for_the_context_fails_at_once_and_keeps_the_prefix_warm(
    generator: ArgumentGenerator,
) -> None:
    """A pasted document used to be prefilled chunk by chunk until a position passed the context (a
    minute), evicting the warm prompts on its way; now it is refused before any decode."""
    tool = next(t for t in REGISTRY if t["name"] == "git_log")
    args = ("git_log", tool["inputSchema"], tool["description"])
    long = "show the last 3 commits. " + "This matters a great deal to the whole team today. " * 500
    with pytest.raises(ContextOverflow, match="context holds 4096"):
        generator.generate(*args, long, given={"repo_path"})
    with pytest.raises(ContextOverflow):
        generator.engine.cursor(generator.engine.tokenize(long * 2))
    after = generator.generate(*args, "show the last 3 commits", given={"repo_path"})
    assert after.arguments.get("max_count") == 3
    assert after.computed_tokens < len(generator.prefix_tokens)  # the system prefix is still warm


def test_output_is_always_schema_valid_on_random_registry_schemas(generator: ArgumentGenerator) -> None:
    rng = random.Random(7)
    tools = rng.sample([t for t in REGISTRY if (t["inputSchema"] or {}).get("properties")], 6)
    for tool in tools:
        intent = f"use {tool['name']} on /tmp/demo.txt with the value 42 and the name alpha"
        done = generator.generate(tool["name"], tool["inputSchema"], tool["description"], intent)
        assert schema_valid(done.raw, tool["inputSchema"]), (tool["name"], done.raw)
        assert schema_valid(done.arguments, tool["inputSchema"]), (tool["name"], done.arguments)


@pytest.fixture(scope="module")
async def gateway(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[ClientSession, Path]]:
    workdir = tmp_path_factory.mktemp("generated")
    files = workdir / "files"
    files.mkdir()
    (files / "shopping.txt").write_text("oat milk, lemons\n")
    servers = {
        "filesystem": {"command": node_server("mcp-server-filesystem"), "args": [str(files)]},
        "everything": {"command": node_server("mcp-server-everything"), "args": ["stdio"]},
    }
    config = write_config(workdir / "config.json", servers, routing={"calibration": None}, model_threads=1)
    async with stdio_gateway(config, workdir / "cache") as session:
        yield session, files


async def call_when_generating(session: ClientSession, intent: str) -> CallToolResult:
    """The model loads in the background and `call` waits for it, up to ``routed_call.MODEL_WAIT_S``; on a
    machine slower than that, it asks for arguments until the model is there."""
    with anyio.fail_after(240):
        while True:
            result = await session.call_tool("call", {"intent": intent})
            if result.is_error or "needs_arguments" not in result_text(result):
                return result
            if "generation" in result_json(result)["trace"]:
                return result
            await anyio.sleep(2)


@pytest.mark.anyio
async def test_call_intent_generates_arguments_and_forwards(gateway: tuple[ClientSession, Path]) -> None:
    session, files = gateway
    # the first call, sent as soon as the gateway is up: it waits for the model instead of asking the host
    result = await session.call_tool("call", {"intent": f"read the text file {files / 'shopping.txt'}"})
    assert not result.is_error, result_text(result)
    assert "oat milk, lemons" in result_text(result)
    trace = (result.meta or {}).get("io.nexus-gateway/trace")
    assert trace["tool"].startswith("filesystem__read") and trace["arguments"]["path"] == str(files / "shopping.txt")
    assert trace["generation"]["prompt_tokens"] > 0 and "first_token" in trace["generation"]["ms"]


@pytest.mark.anyio
async def test_a_later_turn_takes_a_value_from_the_session_window(gateway: tuple[ClientSession, Path]) -> None:
    session, files = gateway
    first = await call_when_generating(session, "add the numbers 19 and 23")
    assert not first.is_error and "42" in result_text(first)
    assert (first.meta or {})["io.nexus-gateway/trace"]["tool"] == "everything__get-sum"
    await call_when_generating(session, f"read the text file {files / 'shopping.txt'}")
    again = await call_when_generating(session, "read that text file again")
    assert not again.is_error and "oat milk, lemons" in result_text(again), result_text(again)
    assert (again.meta or {})["io.nexus-gateway/trace"]["arguments"]["path"] == str(files / "shopping.txt")


@pytest.mark.anyio
async def test_a_change_the_chosen_tool_does_not_make_is_reported_not_dropped(
    gateway: tuple[ClientSession, Path],
) -> None:
    """The filesystem server deletes nothing: the call makes the folder and tells the host that the
    deletion it was also asked for is undone, where it used to say nothing of it. (A file to delete
    brings ``write_file`` close enough that the call asks for confirmation first, with the same note.)"""
    session, files = gateway
    (files / "old").mkdir()
    result = await call_when_generating(session, f"create the folder {files / 'reports'} and delete {files / 'old'}")
    assert not result.is_error, result_text(result)
    trace = (result.meta or {})["io.nexus-gateway/trace"]
    assert trace["tool"] == "filesystem__create_directory" and (files / "reports").is_dir()
    assert trace["left_over"] == [f"delete {files / 'old'}"]
    undone = f'"delete {files / "old"}", which filesystem__create_directory does not do'
    assert undone in result_text(result)
    assert (files / "old").is_dir()


@pytest.mark.anyio
async def test_a_pasted_trace_is_saved_whole_where_the_request_says(gateway: tuple[ClientSession, Path]) -> None:
    """A trace pasted under the request: the router reads the request without it (its paths and line
    numbers are no file to read), and the trace is the file's content, which the model left out."""
    session, files = gateway
    target = files / "crash.txt"
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/app/server/main.py", line 88, in handle_request\n'
        "    user = session.get_user(token)\n"
        "KeyError: 'a81f3c'"
    )
    held = result_json(await call_when_generating(session, f"save this trace to {target}:\n{trace}"))
    assert held["status"] == "needs_confirmation" and held["tool"] == "filesystem__write_file", held
    assert held["arguments"] == {"path": str(target), "content": trace}, held
    assert held["trace"]["pasted_lines"] == 4, held["trace"]
    ran = await session.call_tool("call_tool", {"tool": held["tool"], "arguments": held["arguments"]})
    assert not ran.is_error and target.read_text() == trace


@pytest.mark.anyio
async def test_a_calibration_that_turns_the_judge_on_has_call_ask_it(tmp_path: Path) -> None:
    """``nexus.judge`` unset: the routing calibration decides (``calibrate --judge``). One that asks the
    judge below a margin every decision falls below has the model pick among the best candidates."""
    from nexus_gateway.cache import RegistryCache
    from nexus_gateway.routing import Calibration

    calibration = tmp_path / "calibration.json"
    RegistryCache(tmp_path / "cache").write_json(calibration, Calibration(floor=-9.0, judge_margin=10.0).to_json())
    servers = {"time": {"command": python_server("mcp-server-time"), "args": ["--local-timezone", "UTC"]}}
    config = write_config(tmp_path / "config.json", servers, routing={"calibration": str(calibration)}, model_threads=1)
    async with stdio_gateway(config, tmp_path / "cache") as session:
        result = await call_when_generating(session, "what time is it in Tokyo right now")
    trace = (result.meta or {})["io.nexus-gateway/trace"]
    assert "judge" in trace, trace
    assert set(trace["judge"]["candidates"]) == {"time__get_current_time", "time__convert_time"}, trace
    assert trace["judge"]["chosen"] == trace["tool"] == "time__get_current_time", trace
    assert not result.is_error and "Asia/Tokyo" in result_text(result), result_text(result)


@pytest.mark.anyio
async def test_the_judge_chooses_among_tools_of_the_requests_mood(tmp_path: Path) -> None:
    """The router weighs a tool that writes against a request that only asks; the judge must not undo it.
    "add 2 and 3" is a sum: the 0.5B judge, shown git's ``git_add`` beside ``get-sum``, chose git_add by
    the shared word, and the call came back asking to confirm a change to the repository."""
    from nexus_gateway.cache import RegistryCache
    from nexus_gateway.routing import Calibration

    calibration = tmp_path / "calibration.json"
    RegistryCache(tmp_path / "cache").write_json(calibration, Calibration(floor=-9.0, judge_margin=10.0).to_json())
    servers = {k: v for k, v in real_servers(tmp_path).items() if k in ("git", "everything")}
    config = write_config(tmp_path / "config.json", servers, routing={"calibration": str(calibration)}, model_threads=1)
    async with stdio_gateway(config, tmp_path / "cache") as session:
        result = await call_when_generating(session, "add 2 and 3")
    trace = (result.meta or {})["io.nexus-gateway/trace"]
    assert "git__git_add" not in trace["judge"]["candidates"], trace
    assert trace["tool"] == "everything__get-sum", trace
    assert not result.is_error and "5" in result_text(result), result_text(result)


@pytest.mark.anyio
async def test_a_confirmed_call_joins_the_session_window(tmp_path: Path) -> None:
    """write_file may overwrite data, so `call` shows the call instead of running it; the host runs it
    with call_tool, and the next request can still point back at it ("that file")."""
    files = tmp_path / "files"
    files.mkdir()
    servers = {"filesystem": {"command": node_server("mcp-server-filesystem"), "args": [str(files)]}}
    config = write_config(tmp_path / "config.json", servers, routing={"calibration": None}, model_threads=1)
    target = files / "groceries.txt"
    async with stdio_gateway(config, tmp_path / "cache") as session:
        held = result_json(await call_when_generating(session, f"write the word apples to the file {target}"))
        assert held["status"] == "needs_confirmation" and held["tool"] == "filesystem__write_file", held
        assert held["arguments"]["path"] == str(target) and not target.exists()
        ran = await session.call_tool("call_tool", {"tool": held["tool"], "arguments": held["arguments"]})
        assert not ran.is_error and target.exists()
        again = await call_when_generating(session, "read that file back to me")
    assert not again.is_error, result_text(again)
    assert (again.meta or {})["io.nexus-gateway/trace"]["arguments"]["path"] == str(target)


@pytest.mark.anyio
async def test_call_intent_missing_required_value_is_asked_not_invented(
    gateway: tuple[ClientSession, Path],
) -> None:
    session, _ = gateway
    answer = result_json(await call_when_generating(session, "write a new file saying hello"))
    assert answer["status"] == "needs_arguments" and "path" in answer["missing"]


@pytest.mark.anyio
async def test_a_request_too_long_for_the_model_leaves_the_arguments_to_the_host(
    gateway: tuple[ClientSession, Path],
) -> None:
    session, _ = gateway
    intent = "echo back this text: " + "the quick brown fox jumps over the lazy dog " * 600
    answer = result_json(await call_when_generating(session, intent))
    assert answer["status"] == "needs_arguments" and answer["tool"], answer.get("message")
    assert "cannot fill in the arguments" in answer["message"] and "context holds" in answer["message"]
    assert "error" in answer["trace"]["generation"]


@pytest.mark.anyio
async def test_a_configured_default_answers_what_the_request_leaves_out(tmp_path: Path) -> None:
    """mcp-server-git wants ``repo_path`` on every call, and nobody says it: a project's sidecar config
    names it once (``nexus.defaults``), so the generated call goes through instead of asking."""
    servers = {"git": real_servers(tmp_path)["git"]}
    repo = str(tmp_path / "repo")
    config = write_config(tmp_path / "config.json", servers, model_threads=1, defaults={"git": {"repo_path": repo}})
    async with stdio_gateway(config, tmp_path / "cache") as session:
        result = await call_when_generating(session, "what is the status of my working tree?")
    assert not result.is_error and "On branch" in result_text(result), result_text(result)
    trace = (result.meta or {})["io.nexus-gateway/trace"]
    assert trace["tool"] == "git__git_status" and trace["arguments"] == {"repo_path": repo}
    assert trace["generation"]["missing"] == []  # a defaulted key is not asked for, nor forced on the model


def test_a_corrupted_model_file_is_refused_before_llama_cpp_opens_it(tmp_path: Path) -> None:
    default = model_path(lookup(DEFAULT_MODEL))
    corrupt = tmp_path / default.name
    corrupt.write_bytes(default.read_bytes()[: 1 << 20])
    service = GenerationService(str(corrupt), threads=1)
    service.load()
    assert not service.ready and service.error and "models pull" in service.error


def test_an_identifier_of_the_last_call_goes_on_under_the_same_key() -> None:
    rerun = {
        "properties": {
            "method": {"type": "string"},
            "run_id": {"type": "integer"},
            "per_page": {"type": "integer"},
        }
    }
    last = {"owner": "a", "run_id": 98, "per_page": 50}
    assert carried_identifiers({"method": "rerun_failed_jobs"}, rerun, last) == {
        "method": "rerun_failed_jobs",
        "run_id": 98,
    }
    # a value the model wrote stays; a value of another type does not fit
    assert carried_identifiers({"run_id": 7}, rerun, last) == {"run_id": 7}
    assert carried_identifiers({}, rerun, {"run_id": "98"}) == {}
    assert carried_identifiers({}, rerun, None) == {}


def test_a_number_from_an_earlier_turn_stays_only_in_a_key_of_its_kind() -> None:
    window = SessionWindow()
    window.add("add 19 and 23", "get-sum", {"a": 19, "b": 23}, "42")
    window.add("list the runs of a/b", "list_runs", {"owner": "a", "repo": "b"}, {"workflow_runs": [{"id": 5101}]})
    read = {"properties": {"path": {"type": "string"}, "head": {"type": "integer"}}, "required": ["path"]}
    said = "read that text file again"
    assert window_numbers_of_their_kind({"path": "x", "head": 23}, read, said, window) == {"path": "x"}
    # the sum itself numbers nothing: it is no line count either (the 0.5B model wrote ``head: 42``)
    assert window_numbers_of_their_kind({"path": "x", "head": 42}, read, said, window) == {"path": "x"}
    assert window_numbers_of_their_kind({"head": 3}, read, "the first three lines of it", window) == {"head": 3}
    # nor are the digits of an earlier path (pytest's ``…/pytest-3/generated0/…``)
    window.add("read /tmp/pytest-3/generated0/a.txt", "read_file", {"path": "/tmp/pytest-3/generated0/a.txt"}, "x")
    assert window_numbers_of_their_kind({"path": "x", "head": 3, "tail": 0}, read, said, window) == {"path": "x"}
    # stated in the request, or a key of its kind: kept
    assert window_numbers_of_their_kind({"head": 23}, read, "the first 23 lines of it", window) == {"head": 23}
    sums = {"properties": {"a": {"type": "integer"}, "run_id": {"type": "integer"}}}
    assert window_numbers_of_their_kind({"a": 19, "run_id": 5101}, sums, "again, for it", window) == {
        "a": 19,
        "run_id": 5101,
    }


def test_a_request_pointing_back_sees_the_record_a_later_turn_went_on_with() -> None:
    threads = [
        {"id": "12345678901", "reason": "review_requested", "subject": {"title": "Add dark mode"}},
        {"id": "12345678902", "reason": "mention", "subject": {"title": "Stock count goes negative"}},
    ]
    window = SessionWindow()
    window.add("what's in my GitHub notifications?", "list_notifications", {}, threads)
    window.add("mark the one where I was mentioned as done", "dismiss_notification", {"threadID": "12345678902"}, {})
    rendered = window.render("and mute that thread too")
    assert "12345678902" in rendered and "12345678901" not in rendered
    assert "12345678901" in window.render("and mute the other one too")  # what was not used yet
    assert "12345678901" in window.render("show notifications for octo-org/app")  # points back to nothing
    # a later call that shares only a describing value (a state) with one record narrows nothing
    runs = [{"id": 1, "state": "open"}, {"id": 2, "state": "closed"}]
    window = SessionWindow()
    window.add("issues in a/b", "list_issues", {"owner": "a", "repo": "b"}, runs)
    window.add("same for c/d", "list_issues", {"owner": "c", "repo": "d", "state": "open"}, [])
    assert "id=1" in window.render("comment on that one") and "id=2" in window.render("comment on that one")


def test_an_optional_value_copied_from_an_earlier_result_goes_only_where_the_request_asks() -> None:
    window = SessionWindow()
    created = {"ref": "refs/heads/docs/api-guide", "object": {"sha": "c0ffee12d4e5"}}
    window.add("create a branch docs/api-guide in h/cli", "create_branch", {"owner": "h", "repo": "cli"}, created)
    write = {
        "properties": {k: {"type": "string"} for k in ("owner", "repo", "path", "content", "branch", "sha", "run_id")},
        "required": ["owner", "repo", "path", "content"],
    }
    made = {"owner": "h", "repo": "cli", "path": "docs/API.md", "content": "# API", "sha": "c0ffee12d4e5"}
    adding = "add a file docs/API.md on that branch containing '# API'"
    assert result_values_unasked(made, write, adding, window) == {k: v for k, v in made.items() if k != "sha"}
    # the request names the key, or states the value: kept
    assert "sha" in result_values_unasked(made, write, "update it, sha of the file as above", window)
    assert "sha" in result_values_unasked(made, write, "replace blob c0ffee12d4e5 on that branch", window)
    # what an earlier call sent carries; an id key takes a record's id; a required key keeps its value
    assert "branch" in result_values_unasked({**made, "branch": "cli"}, write, adding, window)
    assert "run_id" in result_values_unasked({**made, "run_id": "c0ffee12d4e5"}, write, adding, window)
    required = {**write, "required": ["sha"]}
    assert "sha" in result_values_unasked(made, required, adding, window)
    # the request points at the key's thing: "open that file" → path, whose description says "file"
    read = {"properties": {"path": {"type": "string", "description": "Path to file or directory"}}}
    window.add("find parsedebugvars", "search_code", {"query": "x"}, {"items": [{"path": "src/runtime1.go"}]})
    assert result_values_unasked({"path": "src/runtime1.go"}, read, "open that file", window) == {
        "path": "src/runtime1.go"
    }


def test_the_record_a_request_singles_out_numbers_the_key_it_names() -> None:
    window = SessionWindow()
    window.add("what's issue 412 in o/app about?", "issue_read", {"owner": "o", "repo": "app", "issue_number": 412}, {})
    matches = {"candidates": [{"number": 377, "state": "open"}, {"number": 120, "state": "closed"}]}
    window.add("check whether it's a duplicate", "find_duplicate", {"owner": "o", "repo": "app"}, matches)
    close = {
        "properties": {
            "issue_number": {"type": "integer"},
            "duplicate_of": {"type": "number"},
            "page": {"type": "integer"},
            "state": {"type": "string"},
        }
    }
    made = {"issue_number": 412, "state": "closed"}
    said = "yep, close it as a duplicate of the top match"
    assert singled_out_number(made, close, said, window) == {**made, "duplicate_of": 377}
    # no record singled out, or no key named: nothing added; a page is never a record's number
    assert singled_out_number(made, close, "close it as a duplicate", window) == made
    assert singled_out_number(made, close, "close the top match", window) == made
    assert singled_out_number({}, close, "show the second page of the top match", window) == {}
    # the verb at the head of a clause says what to do, not which record ("close" is no "closed")
    assert referent("close it as a duplicate", [["number=377", "state=open"], ["number=120", "state=closed"]]) is None
    assert referent("yep, close the closed one", [["number=377", "state=open"], ["number=120", "state=closed"]]) == 1


def test_eval_args_with_the_labelled_tool_counts_a_tool_the_registries_lack_as_a_miss(tmp_path: Path) -> None:
    """``--gold-tool`` looked the label up by ``gold_tool`` alone: a request labelled only with
    ``acceptable_tools``, or with a tool of no registry file, ended in a KeyError's traceback."""
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        json.dumps({"id": "here", "query": "what time is it in Tokyo?", "acceptable_tools": ["get_current_time"],
                    "gold_arguments": {"timezone": "Asia/Tokyo"}}) + "\n"
        + json.dumps({"id": "elsewhere", "query": "open issue 4 in o/r", "acceptable_tools": ["issue_read"],
                      "gold_arguments": {"owner": "o", "repo": "r", "issue_number": 4}}) + "\n"
    )  # fmt: skip
    cases = tmp_path / "cases.jsonl"
    done = run_cli(
        "eval", "args", "--registry", str(TESTS / "fixtures" / "local_registry.json"), "--queries", str(queries),
        "--gold-tool", "--no-oracle", "--threads", "1", "--cache-dir", str(tmp_path / "cache"), "--cases",
        str(cases), cache=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "1 of 2 requests name no tool of the registry files and count as wrong" in done.stderr
    here, elsewhere = [json.loads(line) for line in cases.read_text().splitlines()]
    assert here["chosen"] == "get_current_time" and here["total"] == 1
    assert elsewhere["chosen"] is None and (elsewhere["right"], elsewhere["total"]) == (0, 3)


def test_eval_args_writes_the_issues_shape_and_each_case_against_its_labels(tmp_path: Path) -> None:
    """``nexus-gateway eval args`` as a user runs it, routed, with the oracle: the JSON keeps the issue's
    shape, and ``--cases`` holds one line a request and a dialogue turn whose counts add up to it."""
    queries = tmp_path / "queries.jsonl"
    labelled = [
        ("what time is it in Tokyo right now?", "get_current_time", {"timezone": "Asia/Tokyo"}),
        ("read the file notes/todo.txt", "read_text_file", {"path": "notes/todo.txt"}),
        ("show the last 3 commits of the repository", "git_log", {"max_count": 3}),
    ]
    queries.write_text("".join(
        json.dumps({"id": f"q{i}", "query": q, "gold_tool": tool, "gold_arguments": gold}) + "\n"
        for i, (q, tool, gold) in enumerate(labelled)
    ))  # fmt: skip
    out, cases = tmp_path / "args.json", tmp_path / "cases.jsonl"
    done = run_cli(
        "eval", "args", "--registry", str(TESTS / "fixtures" / "local_registry.json"), "--queries", str(queries),
        "--dialogues", str(TESTS / "fixtures" / "local_dialogues.jsonl"), "--threads", "1", "--no-rerank",
        "--cache-dir", str(tmp_path / "cache"), "--json", str(out), "--cases", str(cases), cache=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    assert set(document) >= {"n", "routed_accuracy", "argument_accuracy_routed", "argument_accuracy_e2e",
                             "json_validity", "schema_validity", "placeholder_leaks", "coreference_accuracy",
                             "first_arg_ms", "prompt_tokens"}  # fmt: skip
    assert set(document["first_arg_ms"]) == {"ir", "ir_ci", "full_schema", "full_schema_ci", "ratio"}
    assert set(document["prompt_tokens"]) == {"ir", "full_schema", "saving"}
    assert document["n"] == 3 and document["json_validity"] == 1.0
    assert document["prompt_tokens"]["ir"] < document["prompt_tokens"]["full_schema"]  # the oracle ran too
    lines = [json.loads(line) for line in cases.read_text().splitlines()]
    requests, turns = [c for c in lines if "dialogue" not in c], [c for c in lines if "dialogue" in c]
    assert [c["id"] for c in requests] == ["q0", "q1", "q2"] and len(turns) == 2  # each dialogue's second turn
    routed = [c for c in requests if c["chosen"] in c["acceptable"]]
    assert document["routed_accuracy"] == len(routed) / 3
    assert all(c["arguments"] is None and c["right"] == 0 for c in requests if c not in routed)
    if routed:
        right, total = sum(c["right"] for c in routed), sum(c["total"] for c in routed)
        assert document["argument_accuracy_routed"] == pytest.approx(right / total)
    assert document["argument_accuracy_e2e"] == pytest.approx(
        sum(c["right"] for c in requests) / sum(c["total"] for c in requests)
    )
    assert document["coreference_accuracy"] == sum(c["right"] == c["total"] for c in turns) / 2
    assert all(isinstance(c["arguments"], dict) and c["labelled"] is not None for c in turns)
