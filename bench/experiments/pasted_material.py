"""Experiment: the GitHub dev requests with a stack trace, a log, code or data pasted beside them.

People paste what they are looking at and agents pass it on in the intent ("I keep getting this:
<trace>", "<log>\\n\\nfile that as an issue"). This pastes one block beside every GitHub dev request, in
six forms (after or before the request, bare or introduced by a line of its own: one line each, or eight
lines in turn written in session 59 as a held-out check of the caption rule), and routes them with
the stored calibration (``bench/results/calibration-github.json``) at N = 250, as ``decisions_ab.py``
does: with this tree, and with the tree at ``--baseline REV`` side by side (a git worktree on
PYTHONPATH, so its numpy scan, which ranks as the C scan does). The requests as written are the ceiling.

Five sets of blocks, each cycled over the 166 requests: ``design`` (looked at while writing
``nexus_gateway/pasted.py``), ``held-out 1`` (first routed after the design; its failures then changed
the rules: a fence must start the line, log lines that open alike, an indented run's header) and
``held-out 2`` (written before those changes and first routed after them). Session 60 read the blocks of
held-out 1 and 2 the split left in the request and wrote rules for what only a program writes (a
diagnostic led by its file and line, Python's traceback header, Rust's panic, PHP's errors, "note:");
``held-out 3`` was written then, before those rules were run on it, and read after (a line led by a date
and time, "Fatal error:", a table's aligned columns came of it); ``held-out 4`` was written after that,
and read after its first split (a loud log level, a slashed date, a location in parentheses came of it).
Each was held out for one look only; the column "read as written" counts the requests the split leaves
exactly as they were before the block was pasted.

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
HELD_OUT_3 = {
    "gcc": """src/parser.c: In function 'parse_header':
src/parser.c:142:17: error: 'len' undeclared (first use in this function)
  142 |     if (offset >= len) {
      |                   ^~~
src/parser.c:142:17: note: each undeclared identifier is reported only once for each function it appears in""",
    "cargo": """error[E0382]: borrow of moved value: `config`
  --> src/main.rs:27:20
   |
24 |     let server = Server::new(config);
   |                              ------ value moved here
27 |     println!("{}", config.port);
   |                    ^^^^^^^^^^^ value borrowed here after move""",
    "mypy": """app/services/billing.py:58: error: Argument 1 to "charge" has incompatible type "str | None"; \
expected "str"  [arg-type]
app/services/billing.py:91: error: Item "None" of "Customer | None" has no attribute "email"  [union-attr]
Found 2 errors in 1 file (checked 48 source files)""",
    "docker ps": """CONTAINER ID   IMAGE                COMMAND                  STATUS                      NAMES
3f2a9c1d7e4b   acme/api:1.14.2      "gunicorn app:app"       Restarting (1) 8 seconds ago   api
9b8c7d6e5f4a   postgres:16          "docker-entrypoint.s…"   Up 2 hours                  db""",
    "swift": """Fatal error: Unexpectedly found nil while unwrapping an Optional value: file \
Shop/CartViewController.swift, line 88
2025-02-11 09:14:03.412 Shop[4121:118822] Fatal error: Unexpectedly found nil while unwrapping an Optional value""",
    "elixir": """** (FunctionClauseError) no function clause matching in Acme.Billing.Invoice.total/1

    The following arguments were given to Acme.Billing.Invoice.total/1:

        # 1
        nil

    (acme 0.9.1) lib/acme/billing/invoice.ex:42: Acme.Billing.Invoice.total/1""",
    "terraform": """Error: creating S3 Bucket (acme-prod-assets): BucketAlreadyExists: The requested bucket name is \
not available.
\tstatus code: 409, request id: 8Z2K1J4Q, host id: abc123=

  with aws_s3_bucket.assets,
  on main.tf line 12, in resource "aws_s3_bucket" "assets":
  12: resource "aws_s3_bucket" "assets" {""",
    "logcat": """E/AndroidRuntime( 8123): FATAL EXCEPTION: main
E/AndroidRuntime( 8123): Process: com.acme.shop, PID: 8123
E/AndroidRuntime( 8123): java.lang.IllegalStateException: Fragment CartFragment not attached to a context.
E/AndroidRuntime( 8123): \tat androidx.fragment.app.Fragment.requireContext(Fragment.java:967)""",
}
HELD_OUT_4 = {
    "jest": """ FAIL  src/cart/total.test.ts
  ● cart total › applies the discount once

    expect(received).toBe(expected) // Object.is equality

    Expected: 81
    Received: 90

      12 |   const cart = makeCart([item(100)]);
      13 |   applyDiscount(cart, 0.1);
    > 14 |   expect(total(cart)).toBe(81);
         |                       ^""",
    "nginx": """2025/04/09 22:41:07 [error] 2211#2211: *8841 upstream timed out (110: Connection timed out) while \
reading response header from upstream, client: 10.0.3.7, server: api.acme.io, request: "POST /v1/checkout \
HTTP/1.1", upstream: "http://127.0.0.1:8000/v1/checkout", host: "api.acme.io"
2025/04/09 22:41:09 [error] 2211#2211: *8846 upstream timed out (110: Connection timed out) while reading response \
header from upstream, client: 10.0.3.9, server: api.acme.io""",
    "maven": """[INFO] BUILD FAILURE
[INFO] ------------------------------------------------------------------------
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test (default-test) on project \
billing: There are test failures.
[ERROR]
[ERROR] Please refer to /work/billing/target/surefire-reports for the individual test results.""",
    "go test": """--- FAIL: TestParseDuration (0.00s)
    duration_test.go:31: ParseDuration("90m") = 1h0m0s, want 1h30m0s
FAIL
FAIL\tgithub.com/acme/timeutil\t0.014s""",
    "mysql": """mysql> INSERT INTO users (id, email) VALUES (42, 'ana@acme.io');
ERROR 1062 (23000): Duplicate entry '42' for key 'users.PRIMARY'""",
    "webpack": """ERROR in ./src/pages/Checkout.tsx 7:0-41
Module not found: Error: Can't resolve '../components/PayButton' in '/app/src/pages'
webpack 5.91.0 compiled with 1 error in 2841 ms""",
    "dotnet build": """Program.cs(12,17): error CS0103: The name 'taxRate' does not exist in the current context \
[/src/Shop/Shop.csproj]
Build FAILED.
    0 Warning(s)
    1 Error(s)""",
    "pip": """ERROR: Cannot install fastapi==0.110.0 and starlette==0.38.2 because these package versions have \
conflicting dependencies.

The conflict is caused by:
    The user requested starlette==0.38.2
    fastapi 0.110.0 depends on starlette<0.37.0 and >=0.36.3""",
}
SETS = {
    "design": DESIGN,
    "held-out 1": HELD_OUT_1,
    "held-out 2": HELD_OUT_2,
    "held-out 3": HELD_OUT_3,
    "held-out 4": HELD_OUT_4,
}
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


# The request each query of a file is read as, by the package on PYTHONPATH
_READ_AS = """import json, sys
from nexus_gateway.pasted import split_pasted
print(json.dumps([split_pasted(json.loads(line)["query"]).request.strip() for line in open(sys.argv[1])]))"""


def read_as_written(queries: Path, written: list[dict[str, Any]], source: Path | None) -> int:
    """Requests that ``pasted.split_pasted`` of the package at ``source`` (None: this tree) reads as they
    were written before a block was pasted beside them: the block and its introducing line all set aside."""
    environment = {**os.environ, "PYTHONPATH": str(source or ROOT)}
    read = subprocess.run(
        [sys.executable, "-c", _READ_AS, str(queries)],
        cwd=queries.parent,  # not ROOT: "-c" puts the working directory first on sys.path
        env=environment,
        check=True,
        capture_output=True,
        text=True,
    )
    return sum(got == request["query"].strip() for got, request in zip(json.loads(read.stdout), written, strict=True))


def labelled_tool_args(queries: Path, threads: int) -> list[str]:
    """``eval args`` over the GitHub tools with each request's labelled tool given, no oracle beside it."""
    command = ["nexus-gateway", "eval", "args", "--registry", str(S / "registries" / "github-mcp.json")]
    return [*command, "--queries", str(queries), "--no-rerank", "--threads", str(threads), "--gold-tool", "--no-oracle"]


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
    command = labelled_tool_args(queries, threads=1)
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
    command = labelled_tool_args(queries, threads=2)
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
    command = labelled_tool_args(queries, threads=2)
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
            base_name = args.baseline or "baseline"
            print(f"| blocks | form | routed right, {base_name} | this tree | read as written, {base_name} | this |")
            print("|---|---|---|---|---|---|")
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
                    rows[form]["read_as_written"] = {"this": read_as_written(queries, requests, None)}
                    if source:
                        rows[form]["baseline"] = cell(right_count(queries, folder, source), n)
                        rows[form]["read_as_written"]["baseline"] = read_as_written(queries, requests, source)
                    base = rows[form].get("baseline", {}).get("right", "–")
                    read = rows[form]["read_as_written"]
                    print(
                        f"| {set_name} | {form} | {base} | {rows[form]['this']['right']} | "
                        f"{read.get('baseline', '–')} | {read['this']} |",
                        flush=True,
                    )
            beside = folder / f"{BESIDE[0].replace(' ', '-')}-{BESIDE[1].replace(', ', '-')}.jsonl"
            report["beside"] = {"set": BESIDE[0], "form": BESIDE[1], "written": beside_counts(written, folder, None)}
            report["beside"]["this"] = beside_counts(beside, folder, None)
            if source:
                report["beside"]["baseline"] = beside_counts(beside, folder, source)
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
