// Package testkit holds the plumbing that tide's in-process tests (am) and end-to-end
// tests (test/e2e) share: polling until a condition holds, reading the AM's REST API,
// waiting for a job to run at a parallelism, free ports, running a command, and comparing
// the checkable job's committed output with its exact answer, and WordCount's benchmark
// input. Only tests import it, and cmd/wordcount-input, which writes that input for make pgo.
// Its subpackage envfile finds the services the test harnesses start (test/hadoop,
// test/kafka).
package testkit
