"""Experiment: the GitHub dev requests with a stack trace, a log, code or data pasted beside them.

People paste what they are looking at and agents pass it on in the intent ("I keep getting this:
<trace>", "<log>\\n\\nfile that as an issue"). This pastes one block beside every GitHub dev request, in
six forms (after or before the request, bare or introduced by a line of its own: one line each, or eight
lines in turn written in session 59 as a held-out check of the caption rule), and routes them with
the stored calibration (``bench/results/calibration-github.json``) at N = 250, as ``decisions_ab.py``
does: with this tree, and with the tree at ``--baseline REV`` side by side (a git worktree on
PYTHONPATH, so its numpy scan, which ranks as the C scan does). The requests as written are the ceiling.

Three sets of blocks, each cycled over the 166 requests: ``design`` (looked at while writing
``nexus_gateway/pasted.py``), ``held-out 1`` (first routed after the design; its failures then changed
the rules: a fence must start the line, log lines that open alike, an indented run's header) and
``held-out 2`` (written before those changes and first routed after them).

Then the arguments: ``bench/data/pasted-args-dev.jsonl`` (16 requests written in session 58 before the
placement rule was run on them: an issue, a comment, a gist, a file … with a block of the three sets
pasted as its body or content) through ``eval args --gold-tool`` with the default model, both trees;
and the GitHub dev requests with a held-out-2 block after "Here's what I'm seeing:" (``BESIDE``), as
written and with the block, both trees: a block beside a request must not change its arguments but for
the long text (session 59: the 0.5B model copied paths, shas and page numbers out of pasted blocks).
Last, ``bench/data/pasted-search-dev.jsonl`` (``search_counts``): searches beside a pasted block, routed
and through ``eval args``, both trees.

    python bench/experiments/pasted_material.py [--baseline REV] [--json OUT]

The pairing is mechanical: a trace beside "star this repo" is odd, but the router should read the
request the same either way.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from decisions_ab import ROOT, S, calibration, routing_command

from nexus_gateway.evaluation import wilson

DESIGN = {
    "python trace": """Traceback (most recent call last):
  File "/app/server/main.py", line 88, in handle_request
    user = session.get_user(token)
  File "/app/server/session.py", line 41, in get_user
    return self.cache[token]
KeyError: 'a81f3c'""",
    "js stack": """TypeError: Cannot read properties of undefined (reading 'map')
    at renderList (webpack-internal:///./src/components/List.tsx:42:23)
    at renderWithHooks (node_modules/react-dom/cjs/react-dom.development.js:16305:18)
    at mountIndeterminateComponent (node_modules/react-dom/cjs/react-dom.development.js:20074:13)""",
    "go panic": """panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x6b2f1a]

goroutine 34 [running]:
github.com/acme/worker/internal/queue.(*Consumer).Ack(0x0, {0xc0001a2000, 0x24})
\t/build/internal/queue/consumer.go:117 +0x3a""",
    "npm log": """npm ERR! code ERESOLVE
npm ERR! ERESOLVE unable to resolve dependency tree
npm ERR! Found: react@18.2.0
npm ERR! Could not resolve dependency:
npm ERR! peer react@"^17.0.0" from react-beautiful-dnd@13.1.1""",
    "fenced code": """```ts
export async function fetchUser(id: string) {
  const res = await fetch(`/api/users/${id}`);
  if (!res.ok) throw new Error(`status ${res.status}`);
  return res.json();
}
```""",
    "json": """{"status": 500, "error": "Internal Server Error", "path": "/v2/orders", "timestamp": \
"2024-05-02T10:14:07Z", "requestId": "c0ffee42"}""",
}
HELD_OUT_1 = {
    "java trace": """Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.length()" \
because "name" is null
\tat com.acme.billing.InvoiceService.format(InvoiceService.java:57)
\tat com.acme.billing.InvoiceService.render(InvoiceService.java:31)
\tat com.acme.billing.Main.main(Main.java:12)""",
    "rust panic": """thread 'main' panicked at src/parser.rs:214:18:
called `Option::unwrap()` on a `None` value
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace""",
    "docker log": """#8 [build 4/6] RUN pip install -r requirements.txt
#8 2.314 ERROR: Could not find a version that satisfies the requirement torch==2.9.1
#8 2.315 ERROR: No matching distribution found for torch==2.9.1
#8 ERROR: process "/bin/sh -c pip install -r requirements.txt" did not complete successfully: exit code: 1""",
    "tsc error": """src/routes/orders.ts:88:15 - error TS2345: Argument of type 'string | undefined' is not \
assignable to parameter of type 'string'.

88   return getOrder(req.params.id);
                 ~~~~~~~~~~~~~
Found 1 error in src/routes/orders.ts:88""",
    "timestamped log": """2024-06-11 14:02:17,331 INFO  worker.scheduler  picked job 8812 from queue "reports"
2024-06-11 14:02:19,902 WARN  worker.db  slow query (2411 ms): SELECT * FROM invoices WHERE customer_id = $1
2024-06-11 14:02:21,004 ERROR worker.db  connection reset by peer""",
    "fenced yaml": """```yaml
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: npm test
```""",
    "diff": """diff --git a/src/cache.py b/src/cache.py
@@ -41,7 +41,7 @@ class Cache:
-        return self.store[key]
+        return self.store.get(key)""",
    "sql error": """psql:migrations/0042_add_index.sql:3: ERROR:  relation "orders" does not exist
LINE 1: CREATE INDEX idx_orders_customer ON orders (customer_id);
                                            ^""",
}
HELD_OUT_2 = {
    "c# trace": """System.InvalidOperationException: Sequence contains no elements
   at System.Linq.ThrowHelper.ThrowNoElementsException()
   at Acme.Orders.OrderService.GetLatest(Int32 customerId) in C:\\src\\Orders\\OrderService.cs:line 64
   at Acme.Orders.Api.OrdersController.Latest(Int32 id) in C:\\src\\Orders\\Api\\OrdersController.cs:line 22""",
    "php error": """PHP Fatal error:  Uncaught Error: Call to undefined method App\\Models\\User::teams() in \
/var/www/app/Http/Controllers/TeamController.php:31
Stack trace:
#0 /var/www/vendor/laravel/framework/src/Illuminate/Routing/Controller.php(54): \
App\\Http\\Controllers\\TeamController->index()
#1 {main}""",
    "kubectl table": """NAME                         READY   STATUS             RESTARTS   AGE
api-7d9c8b6f5-x2kqp          0/1     CrashLoopBackOff   14         52m
worker-5f6d7c8b9-lm3nz       1/1     Running            0          3d""",
    "pytest summary": """FAILED tests/test_cart.py::test_discount_applies_once - AssertionError: assert 90.0 == 81.0
FAILED tests/test_cart.py::test_empty_cart_total - TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'
========================= 2 failed, 118 passed in 4.21s =========================""",
    "curl -v": """> GET /v1/invoices?limit=20 HTTP/2
> Host: api.acme.io
> authorization: Bearer ***
< HTTP/2 502
< content-type: text/html
< x-request-id: 7f1e2d3c""",
    "html": """<div class="card">
  <img src="{{ user.avatar }}" alt="">
  <span class="name">{{ user.name }}</span>
</div>""",
    "csv": """date,region,orders,revenue
2024-05-01,EU,1320,48210.50
2024-05-01,US,2211,90388.10
2024-05-02,EU,1288,47001.75""",
    "gradle": """FAILURE: Build failed with an exception.

* What went wrong:
Execution failed for task ':app:compileDebugKotlin'.
> Compilation error. See log for more details

* Try:
> Run with --stacktrace option to get the stack trace.""",
}
SETS = {"design": DESIGN, "held-out 1": HELD_OUT_1, "held-out 2": HELD_OUT_2}
# Lines that introduce a block, written in session 59 after the caption rule (``pasted._captions``) was
# built on the two in ``FORMS`` and before it was run on these: the held-out check of that rule.
OTHER_INTROS = [
    "Seeing this in prod since this morning:",
    "We hit this during the deploy:",
    "Got this from CI:",
    "This is what the build prints:",
    "My test run ends with:",
    "It crashes like this:",
    "Here is the output:",
    "Running the job gives me:",
]
FORMS = {
    "after": lambda request, block, _: f"{request}\n\n{block}",
    "before": lambda request, block, _: f"{block}\n\n{request}",
    "after, introduced": lambda request, block, _: f"{request}\n\nHere's what I'm seeing:\n{block}",
    "before, introduced": lambda request, block, _: f"I keep getting this:\n{block}\n\n{request}",
    "after, other intros": lambda request, block, i: f"{request}\n\n{OTHER_INTROS[i % len(OTHER_INTROS)]}\n{block}",
    "before, other intros": lambda request, block, i: f"{OTHER_INTROS[i % len(OTHER_INTROS)]}\n{block}\n\n{request}",
}
# The requests whose arguments are compared with a block beside them (``beside_counts``)
BESIDE = ("held-out 2", "after, introduced")
LONG_TEXT = ("body", "content", "text", "comment", "description")


def cases_of(command: list[str], cases: Path, source: Path | None) -> list[dict[str, Any]]:
    """The per-request cases ``command`` writes with ``--cases``, run with the package at ``source`` on
    PYTHONPATH (None: this tree)."""
    environment = {**os.environ, "PYTHONPATH": str(source)} if source else None
    subprocess.run([*command, "--cases", str(cases)], cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env=environment)
    return [json.loads(line) for line in cases.read_text().splitlines()]


def right_count(queries: Path, folder: Path, source: Path | None) -> int:
    """Requests routed right at N = 250 by the package at ``source`` (None: this tree)."""
    cases = folder / f"{queries.stem}-{'base' if source else 'this'}.jsonl"
    command = routing_command(
        calibration("calibration-github.json", None), ["github-mcp.json", "mcp-pool.json"], queries, "250"
    )
    return sum(case["right"] for case in cases_of(command, cases, source))


def argument_counts(folder: Path, source: Path | None) -> dict[str, Any]:
    """The pasted-argument requests through ``eval args`` with the labelled tool: how many got the pasted
    block as their long text, how many got every labelled key right, and keys right of all written."""
    queries = ROOT / "bench" / "data" / "pasted-args-dev.jsonl"
    cases = folder / f"arguments-{'base' if source else 'this'}.jsonl"
    command = ["nexus-gateway", "eval", "args", "--registry", str(S / "registries" / "github-mcp.json")]
    command += ["--queries", str(queries), "--no-rerank", "--threads", "1", "--gold-tool", "--no-oracle"]
    results = cases_of(command, cases, source)
    labels = {r["id"]: r["gold_arguments"] for r in map(json.loads, queries.read_text().splitlines())}
    long_text = sum(
        any(
            case["arguments"].get(key) == value
            for key, value in labels[case["id"]].items()
            if key in ("body", "content")
        )
        for case in results
    )
    labelled = sum(all(case["arguments"].get(k) == v for k, v in labels[case["id"]].items()) for case in results)
    return {
        "n": len(results),
        "long_text": cell(long_text, len(results)),
        "labelled_keys_all_right": cell(labelled, len(results)),
        "keys_right": sum(case["right"] for case in results),
        "keys_total": sum(case["total"] for case in results),
    }


def beside_counts(queries: Path, folder: Path, source: Path | None) -> dict[str, Any]:
    """The GitHub dev requests with a block beside them through ``eval args`` with the labelled tool:
    labelled keys right (as ``eval_args.score_arguments`` counts them), values the labels do not hold
    outside a long-text key (where the block may go), and requests with every labelled key right and no
    such value."""
    cases = folder / f"{queries.stem}-args-{'base' if source else 'this'}.jsonl"
    command = ["nexus-gateway", "eval", "args", "--registry", str(S / "registries" / "github-mcp.json")]
    command += ["--queries", str(queries), "--no-rerank", "--threads", "2", "--gold-tool", "--no-oracle"]
    labels = {r["id"]: r["gold_arguments"] for r in map(json.loads, queries.read_text().splitlines())}
    right = total = unlabelled = whole = 0
    for case in cases_of(command, cases, source):
        want, got = labels[case["id"]], case["arguments"]
        extra = sum(key not in want and not key.lower().endswith(LONG_TEXT) for key in got)
        right, total, unlabelled = right + case["right"], total + len(want), unlabelled + extra
        whole += case["right"] == len(want) and not extra
    n = len(labels)
    return {"n": n, "keys_right": right, "keys_total": total, "unlabelled_values": unlabelled, "whole": cell(whole, n)}


def search_counts(folder: Path, source: Path | None) -> dict[str, Any]:
    """``bench/data/pasted-search-dev.jsonl`` (20 searches beside a pasted block, written in session 60
    after the headline rule and before it was run on them): 14 ask about the block ("has anyone reported
    this in acme/api?"), whose query is its headline; 6 say what to search for, whose query is theirs.
    Routed at N = 250, and through ``eval args`` with the labelled tool: requests with every labelled key
    right and nothing else sent, per kind."""
    queries = ROOT / "bench" / "data" / "pasted-search-dev.jsonl"
    kinds = {r["id"]: r["style"] for r in map(json.loads, queries.read_text().splitlines())}
    cases = folder / f"search-args-{'base' if source else 'this'}.jsonl"
    command = ["nexus-gateway", "eval", "args", "--registry", str(S / "registries" / "github-mcp.json")]
    command += ["--queries", str(queries), "--no-rerank", "--threads", "2", "--gold-tool", "--no-oracle"]
    results = cases_of(command, cases, source)
    report: dict[str, Any] = {"routed": cell(right_count(queries, folder, source), len(kinds))}
    for kind in dict.fromkeys(kinds.values()):
        mine = [case for case in results if kinds[case["id"]] == kind]
        report[kind] = cell(sum(case["right"] == case["total"] for case in mine), len(mine))
    return report


def cell(right: int, n: int) -> dict[str, Any]:
    return {"right": right, "top1": right / n, "top1_ci": wilson(right, n)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", help="a revision to route the same requests with, side by side")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    requests = [json.loads(line) for line in (S / "queries" / "github-dev.jsonl").read_text().splitlines()]
    n = len(requests)
    report: dict[str, Any] = {"n": n, "size": 250, "baseline": args.baseline, "sets": {}}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        source = None
        if args.baseline:
            source = folder / "baseline"
            subprocess.run(
                ["git", "worktree", "add", "-q", "--detach", str(source), args.baseline], cwd=ROOT, check=True
            )
        try:
            written = folder / "written.jsonl"
            written.write_text("".join(json.dumps(r) + "\n" for r in requests))
            report["written"] = cell(right_count(written, folder, None), n)
            print(f"{n} GitHub dev requests at N = 250; as written: {report['written']['right']}")
            print(f"| blocks | form | {args.baseline or 'baseline'} | this tree |\n|---|---|---|---|")
            for set_name, blocks in SETS.items():
                kinds = list(blocks.values())
                rows = report["sets"][set_name] = {}
                for form, paste in FORMS.items():
                    pasted = [
                        {**r, "query": paste(r["query"], kinds[i % len(kinds)], i)} for i, r in enumerate(requests)
                    ]
                    queries = folder / f"{set_name.replace(' ', '-')}-{form.replace(', ', '-')}.jsonl"
                    queries.write_text("".join(json.dumps(r) + "\n" for r in pasted))
                    rows[form] = {"this": cell(right_count(queries, folder, None), n)}
                    if source:
                        rows[form]["baseline"] = cell(right_count(queries, folder, source), n)
                    base = rows[form].get("baseline", {}).get("right", "–")
                    print(f"| {set_name} | {form} | {base} | {rows[form]['this']['right']} |", flush=True)
            beside = folder / f"{BESIDE[0].replace(' ', '-')}-{BESIDE[1].replace(', ', '-')}.jsonl"
            report["beside"] = {"set": BESIDE[0], "form": BESIDE[1], "written": beside_counts(written, folder, None)}
            report["beside"]["this"] = beside_counts(beside, folder, None)
            if source:
                report["beside"]["baseline"] = beside_counts(beside, folder, source)
            base_name = args.baseline or "baseline"
            print(f"\n| arguments, labelled tool, {', '.join(BESIDE)} | as written | {base_name} | this |")
            print("|---|---|---|---|")
            for label, pick in (
                ("labelled keys right", lambda c: f"{c['keys_right']}/{c['keys_total']}"),
                ("values outside the long text that no label holds", lambda c: c["unlabelled_values"]),
                ("every labelled key right and no such value", lambda c: c["whole"]["right"]),
            ):
                sides = ("written", "baseline", "this")
                cells = [pick(report["beside"][side]) if side in report["beside"] else "–" for side in sides]
                print(f"| {label} | {' | '.join(map(str, cells))} |", flush=True)
            report["search"] = {"this": search_counts(folder, None)}
            if source:
                report["search"]["baseline"] = search_counts(folder, source)
            print(f"\n| searches beside a block | {base_name} | this tree |\n|---|---|---|")
            for label in report["search"]["this"]:
                base = report["search"].get("baseline", {}).get(label, {}).get("right", "–")
                print(f"| {label} | {base} | {report['search']['this'][label]['right']} |", flush=True)
            report["arguments"] = {"this": argument_counts(folder, None)}
            if source:
                report["arguments"]["baseline"] = argument_counts(folder, source)
            print("\n| arguments (labelled tool) | " + (args.baseline or "baseline") + " | this tree |\n|---|---|---|")
            for label, key in (
                ("pasted block as the long text", "long_text"),
                ("every labelled key", "labelled_keys_all_right"),
            ):
                cells = [
                    report["arguments"][side][key]["right"] if side in report["arguments"] else "–"
                    for side in ("baseline", "this")
                ]
                print(f"| {label} | {cells[0]} | {cells[1]} |")
        finally:
            if source:
                subprocess.run(["git", "worktree", "remove", "--force", str(source)], cwd=ROOT, check=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
