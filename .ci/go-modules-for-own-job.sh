#!/usr/bin/env bash
# Fetches into the Go module cache what a module outside tide's needs to build against this
# checkout, the way the README's "Write your own job" builds one (go mod init, a replace to
# the checkout, tide's go.sum, go build -mod=mod). Its go.mod starts empty, so Go resolves
# tide's dependencies from scratch, and that reads go.mod files tide's own (pruned) build
# never needs, such as github.com/davecgh/go-spew@v1.1.1 through cockroachdb/errors.
# TestWriteYourOwnJob runs those commands offline (tests touch only loopback), so this runs
# before the tests, with the module proxy; .ci/test.sh calls it.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-go}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
export GOFLAGS=
"$GO" mod init example.com/own-job-modules >/dev/null 2>&1
"$GO" mod edit -require=github.com/tidestream/tide@v0.0.0 -replace=github.com/tidestream/tide="$src"
cp "$src/go.sum" . && cp "$src/examples/custom-job/main.go" "$src/examples/custom-job/fraud.go" .
# Resolving and listing every package the job's build loads fetches the same modules the
# build does, without compiling.
"$GO" list -mod=mod -deps . >/dev/null
