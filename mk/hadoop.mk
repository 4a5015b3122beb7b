# Hadoop mini-cluster targets (HDFS, optionally YARN) for tide's integration tests.
# Included from the top-level Makefile:  include mk/hadoop.mk
#
#   make hadoop-up                 build the launcher if needed, start HDFS, wait, print addresses
#   make hadoop-up HADOOP_YARN=1   also start a MiniYARNCluster with 2 NodeManagers
#   make hadoop-down               SIGTERM the launcher, wait, clean its work dir
#   make hadoop-bench              Go-HDFS vs Java-HDFS vs local-disk throughput (starts HDFS)
#   make hadoop-test               storage tests against the running cluster (never skipped)
#
# Go tests find the cluster through $(HADOOP_ENV) (exported as TIDE_HADOOP_ENV).

HADOOP_ENV ?= .cache/hadoop/env
HADOOP_YARN ?= 0
HADOOP_SCRIPTS := test/hadoop

export HADOOP_ENV
export TIDE_HADOOP_ENV = $(abspath $(HADOOP_ENV))

.PHONY: hadoop-up hadoop-down hadoop-build hadoop-bench hadoop-test

hadoop-build:
	$(HADOOP_SCRIPTS)/build.sh

hadoop-up:
	HADOOP_WITH_YARN=$(HADOOP_YARN) $(HADOOP_SCRIPTS)/up.sh

hadoop-down:
	$(HADOOP_SCRIPTS)/down.sh

hadoop-bench: hadoop-up
	$(HADOOP_SCRIPTS)/bench.sh

hadoop-test: hadoop-up
	TIDE_REQUIRE_HADOOP=1 go test ./storage/... ./test/hadoop/...
