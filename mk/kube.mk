# Kubernetes control-plane targets for tide's kube driver tests. Included from the top-level
# Makefile:  include mk/kube.mk
#
#   make k8s-build   build etcd, kube-apiserver, kube-scheduler, kube-controller-manager from the
#                    nested module test/kube/tools into $HOME/.cache/tide/ (once; 10+ min cold)
#   make k8s-up      start them on free loopback ports with the process kubelet and its nodes
#                    (kube-node-1..3), print the env file
#   make k8s-down    stop everything (pods first), remove etcd's data
#   make k8s-test    the tests against the running control plane (never skipped)
#
# Go tests find the control plane through $(KUBE_ENV) (exported as TIDE_KUBE_ENV).

KUBE_ENV ?= .cache/kube/env
KUBE_SCRIPTS := test/kube

export KUBE_ENV
export TIDE_KUBE_ENV = $(abspath $(KUBE_ENV))

.PHONY: k8s-up k8s-down k8s-build k8s-test

k8s-build:
	$(KUBE_SCRIPTS)/build-bins.sh

k8s-up:
	$(KUBE_SCRIPTS)/up.sh

k8s-down:
	$(KUBE_SCRIPTS)/down.sh

k8s-test: k8s-up
	TIDE_REQUIRE_KUBE=1 go test -count=1 ./test/kube/... ./kube/...
