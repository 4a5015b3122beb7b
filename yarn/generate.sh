#!/usr/bin/env bash
# Regenerates the Go code of tide's Hadoop/YARN protobuf definitions (yarn/proto -> yarn/yarnpb).
# Needs protoc and protoc-gen-go (go install google.golang.org/protobuf/cmd/protoc-gen-go).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:$(go env GOPATH)/bin"
for tool in protoc protoc-gen-go; do
  command -v "$tool" >/dev/null || { echo "yarn/generate.sh: $tool not found on PATH" >&2; exit 1; }
done
rm -f yarn/yarnpb/*.pb.go
protoc --proto_path=. \
  --go_out=. --go_opt=module=github.com/tidestream/tide \
  yarn/proto/yarn_protos.proto yarn/proto/yarn_service_protos.proto
