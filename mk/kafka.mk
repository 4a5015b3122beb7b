# Kafka broker targets for tide's Kafka connector tests. Included from the top-level Makefile:
#   include mk/kafka.mk
#
#   make kafka-up     resolve the broker's jars from Maven Central (once, into .cache/m2), start
#                     one KRaft broker on free loopback ports, print its env file
#   make kafka-down   SIGTERM the broker, wait, remove its data
#   make kafka-test   the Kafka tests against the running broker (never skipped)
#
# Go tests find the broker through $(KAFKA_ENV) (exported as TIDE_KAFKA_ENV).

KAFKA_ENV ?= .cache/kafka/env
KAFKA_SCRIPTS := test/kafka

export KAFKA_ENV
export TIDE_KAFKA_ENV = $(abspath $(KAFKA_ENV))

.PHONY: kafka-up kafka-down kafka-build kafka-test

kafka-build:
	$(KAFKA_SCRIPTS)/build.sh

kafka-up:
	$(KAFKA_SCRIPTS)/up.sh

kafka-down:
	$(KAFKA_SCRIPTS)/down.sh

kafka-test: kafka-up
	TIDE_REQUIRE_KAFKA=1 go test -count=1 ./test/kafka/...
