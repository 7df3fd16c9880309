#!/usr/bin/env bash
# The other fold of the 117 GitHub tools' calibration: fit on the odd half, report on the even half
# (bench/run_routing_eval.sh fits on the even half and reports on the odd one). A fit on 83 requests moves
# by a request's rank whenever the scores shift a little; both folds say how much a change is worth
# beyond that (docs/routing.md, session 46). A scratch cache keeps the odd-half fit out of the registry
# cache the gateway and the other benchmarks read.
#
#     SHARED=../shared/data bash bench/experiments/calibration_folds.sh
set -euo pipefail
S=${SHARED:-../shared/data}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
ONLY="--registry $S/registries/github-mcp.json --queries $S/queries/github-dev.jsonl --cache-dir $scratch"
nexus-gateway calibrate $ONLY --part odd
nexus-gateway eval routing $ONLY --part even --irrelevant $S/queries/irrelevant-dev.jsonl --sizes all --no-rerank
