// Package testkit holds the plumbing that tide's in-process tests (am) and end-to-end
// tests (test/e2e) share: polling until a condition holds, reading the AM's REST API,
// waiting for a job to run at a parallelism, free ports, running a command, and comparing
// the checkable job's committed output with its exact answer, and finding a service a
// harness started outside the tests through its env file (EnvFile: test/hadoop,
// test/kafka). Only tests import it.
package testkit
