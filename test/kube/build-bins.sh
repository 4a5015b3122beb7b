#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-scheduler and kube-controller-manager from the nested module test/kube/tools into a
# cache directory outside the repository, and prints that directory on stdout (the last line).
#
#   KUBE_BIN_DIR  where the binaries go; default $HOME/.cache/tide/kube-v1.37.2-<hash of tools/go.sum>,
#                 so a change of versions builds into a new directory.
#
# Idempotent: when the three binaries are already there it builds nothing. A cold build takes
# 10+ minutes on 2 busy cores (the Go build cache makes later builds of the same versions fast).
# Binaries appear under their final names only when complete (built to a temporary name, renamed).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tools="$here/tools"
K8S_VERSION=v1.37.2

sum_hash() {
	sha256sum "$tools/go.sum" | cut -c1-12
}

BIN=${KUBE_BIN_DIR:-$HOME/.cache/tide/kube-$K8S_VERSION-$(sum_hash)}
mkdir -p "$BIN"

all_there() {
	[[ -x "$BIN/etcd" && -x "$BIN/kube-apiserver" && -x "$BIN/kube-scheduler" && -x "$BIN/kube-controller-manager" ]]
}

if all_there; then
	echo "build-bins: etcd, kube-apiserver, kube-scheduler, kube-controller-manager already in $BIN" >&2
	echo "$BIN"
	exit 0
fi

# One builder at a time per directory: CI and a developer may both start it.
exec 9>"$BIN/.build.lock"
flock 9
if all_there; then
	echo "$BIN"
	exit 0
fi

V=k8s.io/component-base/version
minor=${K8S_VERSION#v1.}
minor=${minor%%.*}
LDF="-s -w -X $V.gitVersion=$K8S_VERSION -X $V.gitMajor=1 -X $V.gitMinor=$minor"

build() { # build <name> <package> <ldflags>
	local name=$1 pkg=$2 ldf=$3
	if [[ -x "$BIN/$name" ]]; then
		echo "build-bins: $name already built" >&2
		return
	fi
	local start=$SECONDS
	echo "build-bins: building $name ($pkg) into $BIN ..." >&2
	(cd "$tools" && CGO_ENABLED=0 go build -buildvcs=false -trimpath -ldflags "$ldf" -o "$BIN/.$name.tmp" "$pkg")
	mv "$BIN/.$name.tmp" "$BIN/$name"
	echo "build-bins: $name built in $((SECONDS - start))s" >&2
}

build etcd go.etcd.io/etcd/server/v3 "-s -w"
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$LDF"
build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$LDF"
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$LDF"
echo "$BIN"
