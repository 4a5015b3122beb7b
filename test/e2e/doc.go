// Package e2e holds tide's end-to-end tests and benchmarks over real processes: the
// tide binary is built once per run (TestMain) and started as AM and TaskManagers on
// loopback with free ports; TaskManagers are added, stopped and SIGKILLed while a job
// runs, and the checkable job's output is compared with its exact answer.
//
// Run the tests with `go test ./test/e2e`, the benchmarks with ./bench.sh.
package e2e
