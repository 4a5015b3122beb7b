package e2e

import "strconv"

// stampedCountArgs are CheckableCount's arguments for a run of records over 7 keys at
// 4000 records/s, writing its output to out and each number's --timestamps to stamps (so
// testkit.CheckExactOutput checks the output number by number).
func stampedCountArgs(records int, out, stamps string) []string {
	return []string{"--records", strconv.Itoa(records), "--keys", "7", "--rate", "4000", "--output", out, "--timestamps", stamps}
}

// adoptingReactive are the reactive settings (checkpoints every 300 ms into ckpt) of a
// standalone job whose next AM adopts the running subtasks, waiting up to 60 s for the
// TaskManagers to report them.
func adoptingReactive(ckpt string) []string {
	return append(reactive(ckpt, "300 ms"), "jobmanager.failover.task-adoption.timeout=60 s")
}
