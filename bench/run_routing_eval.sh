#!/usr/bin/env bash
# The routing figures of docs/benchmarks.md, end to end: calibrate on the even lines of the GitHub dev
# queries, report on the odd lines (and on all, for comparison), then BFCL and the irrelevant set.
set -euo pipefail
S=${SHARED:-../shared/data}
R=bench/results
GH="--registry $S/registries/github-mcp.json --registry $S/registries/mcp-pool.json"
nexus-gateway calibrate $GH --queries $S/queries/github-dev.jsonl --part even --size 250,all > $R/calibration-github.json
nexus-gateway eval routing $GH --queries $S/queries/github-dev.jsonl --part odd --sizes 10,50,100,250,all \
  --dialogues $S/queries/github-dialogues-dev.jsonl --json $R/routing-github-odd.json --plot docs/img/routing-github.png
nexus-gateway eval routing $GH --queries $S/queries/github-dev.jsonl --sizes 250,all --json $R/routing-github-all.json
nexus-gateway calibrate --registry $S/registries/github-mcp.json --queries $S/queries/github-dev.jsonl \
  --part even > $R/calibration-github-only.json
nexus-gateway eval routing --registry $S/registries/github-mcp.json --queries $S/queries/github-dev.jsonl \
  --part odd --irrelevant $S/queries/irrelevant-dev.jsonl --sizes all --json $R/routing-irrelevant.json
BFCL="--registry $S/registries/bfcl-functions.json --queries $S/queries/bfcl-dev.jsonl"
nexus-gateway calibrate $BFCL --part even > $R/calibration-bfcl.json
nexus-gateway eval routing $BFCL --part odd --sizes all --json $R/routing-bfcl.json
# Everyday local servers, uncalibrated (what a gateway in front of them does before anyone calibrates).
nexus-gateway eval routing --registry tests/fixtures/local_registry.json --queries bench/data/local-dev.jsonl \
  --sizes all --no-rerank --json $R/routing-local.json
