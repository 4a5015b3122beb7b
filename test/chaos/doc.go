// Package chaos plans and records the fault schedules of tide's chaos suite (`make chaos`,
// test/e2e/chaos*_test.go): which TaskManager is killed, started, frozen or evacuated, and
// when, derived from one seed so that a failing run replays with `make chaos SEED=<seed>`.
//
// A plan is computed up front from the seed alone: it models only what the suite itself
// does to the cluster (which TaskManagers it started, killed or blocked), never how tide
// reacts, so the same seed always names the same actions and targets. The Journal prints
// the seed and every action with its time as it happens.
package chaos
