#!/usr/bin/env bash
# Regenerates the Go code of tide's Hadoop IPC protobuf definitions
# (internal/hadoop/proto -> internal/hadoop/hadooppb), which storage/ and yarn/ share.
# Needs protoc and protoc-gen-go (go install google.golang.org/protobuf/cmd/protoc-gen-go).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:$(go env GOPATH)/bin"
for tool in protoc protoc-gen-go; do
  command -v "$tool" >/dev/null || { echo "internal/hadoop/generate.sh: $tool not found on PATH" >&2; exit 1; }
done
rm -f internal/hadoop/hadooppb/*.pb.go
protoc --proto_path=. \
  --go_out=. --go_opt=module=github.com/tidestream/tide \
  internal/hadoop/proto/hadoop_rpc.proto
