#!/usr/bin/env bash
# make test's lint of the committed OpenAPI document with Redocly's CLI, pinned in
# tools/openapi/package-lock.json: any error fails. Skipped, saying so, only where there is
# no Node.js to run it.
set -euo pipefail
cd "$(dirname "$0")/../tools/openapi"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "SKIP: openapi-lint: Node.js (node and npm) is missing, so apiserver/testdata/openapi.json was not linted with redocly" >&2
  exit 0
fi
# No telemetry and no update check: the lint reaches nothing but the npm registry (npm ci).
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
npm ci --no-audit --no-fund --loglevel=error
npx --no-install redocly lint --config redocly.yaml --format=stylish ../../apiserver/testdata/openapi.json
