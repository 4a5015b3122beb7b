#!/usr/bin/env bash
# Regenerates the Go code of tide's AM <-> TaskManager protocol (make generate).
# Needs protoc, protoc-gen-go and protoc-gen-go-grpc (go install
# google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc).
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:$(go env GOPATH)/bin"
for tool in protoc protoc-gen-go protoc-gen-go-grpc; do
  command -v "$tool" >/dev/null || { echo "generate.sh: $tool not found on PATH" >&2; exit 1; }
done
protoc --proto_path=. \
  --go_out=. --go_opt=paths=source_relative \
  --go-grpc_out=. --go-grpc_opt=paths=source_relative \
  tide.proto
