#!/usr/bin/env bash
# The argument-generation figures of docs/benchmarks.md: GitHub (routed among the 117 GitHub tools, with
# the full-schema oracle side by side, and the dialogues; the 1.5B model without the oracle), the same with
# the labelled tool given, and BFCL (first 100 of the odd half), for the default 0.5B model and the 1.5B
# quality model.
set -euo pipefail
S=${SHARED:-../shared/data}
R=bench/results
GH="--registry $S/registries/github-mcp.json --queries $S/queries/github-dev.jsonl --part odd --no-rerank --threads 2"
nexus-gateway calibrate --registry $S/registries/github-mcp.json --queries $S/queries/github-dev.jsonl --part even > /dev/null
nexus-gateway eval args $GH --dialogues $S/queries/github-dialogues-dev.jsonl --json $R/args-github-0.5b.json
nexus-gateway eval args $GH --no-oracle --dialogues $S/queries/github-dialogues-dev.jsonl \
  --model qwen2.5-coder-1.5b --json $R/args-github-1.5b.json
nexus-gateway eval args $GH --gold-tool --no-oracle --json $R/args-github-gold-0.5b.json
nexus-gateway eval args $GH --gold-tool --no-oracle --dialogues $S/queries/github-dialogues-dev.jsonl \
  --model qwen2.5-coder-1.5b --json $R/args-github-gold-1.5b.json
BFCL="--registry $S/registries/bfcl-functions.json --queries $S/queries/bfcl-dev.jsonl --part odd --limit 100 --no-rerank --no-oracle --threads 2"
nexus-gateway eval args $BFCL --json $R/args-bfcl-0.5b.json
nexus-gateway eval args $BFCL --model qwen2.5-coder-1.5b --json $R/args-bfcl-1.5b.json
