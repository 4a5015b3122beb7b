package conf

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-multierror"
)

// fileEntries parses a flat file for tests.
func fileEntries(t *testing.T, text string) []Entry {
	t.Helper()
	entries, _, err := Parse(strings.NewReader(text), "flink-conf.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return entries
}

func dyn(t *testing.T, args ...string) []Entry {
	t.Helper()
	entries, err := ParseDynamic(args)
	if err != nil {
		t.Fatalf("ParseDynamic: %v", err)
	}
	return entries
}

func TestDefaults(t *testing.T) {
	c := Defaults()
	checks := []struct {
		got, want any
	}{
		{JobManagerRPCPort.Get(c), 6123},
		{RestPort.Get(c), 8081},
		{RestBindAddress.Get(c), "127.0.0.1"},
		{TaskManagerNumberOfTaskSlots.Get(c), 1},
		{TaskManagerDataPort.Get(c), 0},
		{ParallelismDefault.Get(c), 1},
		{PipelineMaxParallelism.Get(c), -1},
		{SubmissionResourceWaitTimeout.Get(c), 5 * time.Minute},
		{SubmissionResourceStabilizationTimeout.Get(c), 10 * time.Second},
		{ExecutingCooldownAfterRescaling.Get(c), 30 * time.Second},
		{ExecutingResourceStabilizationTimeout.Get(c), 60 * time.Second},
		{MinParallelismIncrease.Get(c), 1},
		{RescaleTriggerMaxCheckpointFailures.Get(c), 2},
		{PreferMinimalTaskManagers.Get(c), true},
		{SlotIdleTimeout.Get(c), 50 * time.Second},
		{SlotRequestMaxInterval.Get(c), 20 * time.Millisecond},
		{HeartbeatInterval.Get(c), 10 * time.Second},
		{HeartbeatTimeout.Get(c), 50 * time.Second},
		{CheckpointsNumRetained.Get(c), 1},
		{ExponentialDelayBackoffMultiplier.Get(c), 1.5},
		{ExponentialDelayAttemptsBeforeResetBackoff.Get(c), math.MaxInt32},
		{TaskManagerMemoryProcessSize.Get(c), 1728 * Mebibyte},
		{RescaleHistorySize.Get(c), 64},
		{Scheduler.Get(c), "Adaptive"},
		{MetricsReporters.Get(c), []string(nil)},
	}
	for i, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("check %d: got %v; want %v", i, ch.got, ch.want)
		}
	}
	if _, ok := CheckpointingInterval.Lookup(c); ok {
		t.Error("execution.checkpointing.interval has a value without being set")
	}
	if c.IsSet(RestPort.Key()) {
		t.Error("a default counts as set")
	}
	if got := RestPort.Get(nil); got != 8081 {
		t.Errorf("Get(nil) = %d", got)
	}
}

func TestEveryOptionIsWellFormed(t *testing.T) {
	for _, s := range Options() {
		if s.Description == "" || s.Expected() == "" {
			t.Errorf("%s: missing description or expectation", s.Key)
		}
		if s.Default != "" {
			v, problem := s.parse(s.Default)
			if problem != "" {
				t.Errorf("%s: default %q %s", s.Key, s.Default, problem)
				continue
			}
			// The canonical form of every default reads back to the same value.
			back, problem := s.parse(s.format(v))
			if problem != "" || !reflect.DeepEqual(back, v) {
				t.Errorf("%s: default %q does not round-trip through %q", s.Key, s.Default, s.format(v))
			}
		}
		for _, alias := range append(append([]string{}, s.Deprecated...), s.Fallback...) {
			if got, _ := Lookup(alias); got != s {
				t.Errorf("alias %s does not resolve to %s", alias, s.Key)
			}
		}
	}
}

func TestTypedValues(t *testing.T) {
	tests := []struct {
		key, value string
		get        func(*Config) any
		want       any
	}{
		{"rest.port", " 9000 ", func(c *Config) any { return RestPort.Get(c) }, 9000},
		{"blocklist.enabled", "FALSE", func(c *Config) any { return BlocklistEnabled.Get(c) }, false},
		{"heartbeat.timeout", "2 min", func(c *Config) any { return HeartbeatTimeout.Get(c) }, 2 * time.Minute},
		{"jobmanager.adaptive-scheduler.submission.resource-wait-timeout", "-1", func(c *Config) any { return SubmissionResourceWaitTimeout.Get(c) }, -time.Millisecond},
		{"taskmanager.memory.process.size", "2g", func(c *Config) any { return TaskManagerMemoryProcessSize.Get(c) }, 2 * Gibibyte},
		{"restart-strategy.type", "FixedDelay", func(c *Config) any { return RestartStrategyType.Get(c) }, "fixed-delay"},
		{"restart-strategy.type", "off", func(c *Config) any { return RestartStrategyType.Get(c) }, "none"},
		{"restart-strategy.type", "Exponential-Delay", func(c *Config) any { return RestartStrategyType.Get(c) }, "exponential-delay"},
		{"jobmanager.scheduler", "adaptive", func(c *Config) any { return Scheduler.Get(c) }, "Adaptive"},
		{"scheduler-mode", "REACTIVE", func(c *Config) any { return ExecutionMode.Get(c) }, "reactive"},
		{"metrics.reporters", "prom; jmx;", func(c *Config) any { return MetricsReporters.Get(c) }, []string{"prom", "jmx"}},
		{"restart-strategy.exponential-delay.jitter-factor", "0.25", func(c *Config) any { return ExponentialDelayJitterFactor.Get(c) }, 0.25},
		{"pipeline.max-parallelism", "32768", func(c *Config) any { return PipelineMaxParallelism.Get(c) }, 32768},
		{"yarn.containers.vcores", "4", func(c *Config) any { return YarnContainersVcores.Get(c) }, 4},
		{"state.checkpoints.dir", "file:///tmp/chk", func(c *Config) any { return CheckpointsDir.Get(c) }, "file:///tmp/chk"},
		{"state.checkpoints.dir", "/data/chk", func(c *Config) any { return CheckpointsDir.Get(c) }, "/data/chk"},
		{"execution.buffer-timeout", "0", func(c *Config) any { return ExecutionBufferTimeout.Get(c) }, time.Duration(0)},
		{"execution.buffer-timeout", "-1", func(c *Config) any { return ExecutionBufferTimeout.Get(c) }, -time.Millisecond},
		{"execution.buffer-timeout", "5 ms", func(c *Config) any { return ExecutionBufferTimeout.Get(c) }, 5 * time.Millisecond},
		{"taskmanager.network.memory.buffers-per-channel", "4", func(c *Config) any { return NetworkBuffersPerChannel.Get(c) }, 4},
		{"taskmanager.network.memory.floating-buffers-per-gate", "0", func(c *Config) any { return NetworkFloatingBuffersPerGate.Get(c) }, 0},
	}
	for _, tt := range tests {
		c, _, err := Build([]Entry{{Key: tt.key, Value: tt.value}})
		if err != nil {
			t.Errorf("%s=%q: %v", tt.key, tt.value, err)
			continue
		}
		if got := tt.get(c); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s=%q: got %#v; want %#v", tt.key, tt.value, got, tt.want)
		}
	}
}

func TestValueErrors(t *testing.T) {
	const as = "jobmanager.adaptive-scheduler."
	tests := []struct{ key, value, want string }{
		{as + "min-parallelism-increase", "zero", as + `min-parallelism-increase: "zero" is not an integer (expected an integer ≥ 1)`},
		{as + "min-parallelism-increase", "0", as + `min-parallelism-increase: "0" is out of range (expected an integer ≥ 1)`},
		{"rest.port", "70000", `rest.port: "70000" is out of range (expected an integer between 0 and 65535)`},
		{"rest.port", "99999999999999999999", `rest.port: "99999999999999999999" is out of range (expected an integer between 0 and 65535)`},
		{"blocklist.enabled", "yes", `blocklist.enabled: "yes" is not a boolean (expected true or false)`},
		{"heartbeat.interval", "10 sx", `heartbeat.interval: "10 sx" is not a duration (unknown unit "sx") (expected a duration of at least 1 ms (such as 10 s, 500 ms, 5 min, 1 h or 2 d; a plain number is milliseconds))`},
		{"slot.idle.timeout", "-5 s", `slot.idle.timeout: "-5 s" is negative (expected a non-negative duration (such as 10 s, 500 ms, 5 min, 1 h or 2 d; a plain number is milliseconds))`},
		{"execution.checkpointing.interval", "5 ms", `execution.checkpointing.interval: "5 ms" is too short (expected a duration of at least 10 ms (such as 10 s, 500 ms, 5 min, 1 h or 2 d; a plain number is milliseconds))`},
		{"taskmanager.memory.process.size", "lots", `taskmanager.memory.process.size: "lots" is not a memory size (it must start with a whole, non-negative number) (expected a memory size such as 512 mb, 1 gb, 1728m or 2g (a plain number is bytes))`},
		{"restart-strategy.type", "sometimes", `restart-strategy.type: "sometimes" is not a valid choice (expected one of none, fixed-delay, exponential-delay, failure-rate)`},
		{"restart-strategy.exponential-delay.jitter-factor", "2", `restart-strategy.exponential-delay.jitter-factor: "2" is out of range (expected a number between 0 and 1)`},
		{"restart-strategy.exponential-delay.backoff-multiplier", "NaN", `restart-strategy.exponential-delay.backoff-multiplier: "NaN" is not a number (expected a number ≥ 1)`},
		{"pipeline.max-parallelism", "0", `pipeline.max-parallelism: "0" is out of range (expected -1 (derived) or an integer between 1 and 32768)`},
		{"pipeline.max-parallelism", "40000", `pipeline.max-parallelism: "40000" is out of range (expected -1 (derived) or an integer between 1 and 32768)`},
		{"state.checkpoints.dir", "s3://bucket/x", `state.checkpoints.dir: "s3://bucket/x" has an unsupported scheme s3 (expected an hdfs:// or file:// URI or an absolute path)`},
		{"state.checkpoints.dir", "chk", `state.checkpoints.dir: "chk" is a relative path (expected an hdfs:// or file:// URI or an absolute path)`},
		{"execution.buffer-timeout", "-5 ms", `execution.buffer-timeout: "-5 ms" is negative other than -1 (expected 0, -1 or a positive duration (such as 10 s, 500 ms, 5 min, 1 h or 2 d; a plain number is milliseconds))`},
		{"execution.buffer-timeout", "-1 s", `execution.buffer-timeout: "-1 s" is negative other than -1 (expected 0, -1 or a positive duration (such as 10 s, 500 ms, 5 min, 1 h or 2 d; a plain number is milliseconds))`},
		{"execution.buffer-timeout", "soon", `execution.buffer-timeout: "soon" is not a duration (it must start with a whole number) (expected 0, -1 or a positive duration (such as 10 s, 500 ms, 5 min, 1 h or 2 d; a plain number is milliseconds))`},
		{"jobmanager.rpc.address", " ", `jobmanager.rpc.address: " " is empty (expected a host name or address)`},
		{"state.backend.upload.nice", "20", `state.backend.upload.nice: "20" is out of range (expected an integer between 0 and 19)`},
		{"state.backend.upload.nice", "-1", `state.backend.upload.nice: "-1" is out of range (expected an integer between 0 and 19)`},
		{"taskmanager.network.memory.buffers-per-channel", "0", `taskmanager.network.memory.buffers-per-channel: "0" is out of range (expected an integer between 1 and 65536)`},
		{"taskmanager.network.memory.floating-buffers-per-gate", "-1", `taskmanager.network.memory.floating-buffers-per-gate: "-1" is out of range (expected an integer between 0 and 65536)`},
		{"state.backend.upload.nice", "low", `state.backend.upload.nice: "low" is not an integer (expected an integer between 0 and 19)`},
	}
	for _, tt := range tests {
		_, _, err := Build([]Entry{{Key: tt.key, Value: tt.value}})
		var ve *ValueError
		if !errors.As(err, &ve) || err.Error() != tt.want {
			t.Errorf("%s=%q:\n got  %v\n want %s", tt.key, tt.value, err, tt.want)
		}
	}
}

func TestValueErrorNamesFileLineAndAlias(t *testing.T) {
	_, _, err := Build(fileEntries(t, "# x\njobmanager.adaptive-scheduler.resource-wait-timeout: soon\n"))
	want := `flink-conf.yaml:2: jobmanager.adaptive-scheduler.submission.resource-wait-timeout: "soon" is not a duration (it must start with a whole number) (expected a duration (such as 10 s, 500 ms, 5 min, 1 h or 2 d; a plain number is milliseconds; negative means no limit)) (set as jobmanager.adaptive-scheduler.resource-wait-timeout)`
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	_, _, err = Build(nil, dyn(t, "-Drest.port=x"))
	if err == nil || !strings.HasPrefix(err.Error(), `-D argument 1: rest.port: "x" is not an integer`) {
		t.Fatalf("dynamic error = %v", err)
	}
}

func TestAllValueErrorsReportedTogether(t *testing.T) {
	_, _, err := Build(fileEntries(t, "rest.port: x\nheartbeat.timeout: y\n"))
	var me *multierror.Error
	if !errors.As(err, &me) || len(me.Errors) != 2 {
		t.Fatalf("error = %v; want two errors", err)
	}
	for _, want := range []string{"flink-conf.yaml:1: rest.port", "flink-conf.yaml:2: heartbeat.timeout"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestConflicts(t *testing.T) {
	tests := []struct{ file, want string }{
		{"heartbeat.interval: 60 s\n", "heartbeat.timeout (50 s, default) must be at least heartbeat.interval (1 min, from flink-conf.yaml:1)"},
		{"restart-strategy.exponential-delay.initial-backoff: 5 min\n", "restart-strategy.exponential-delay.max-backoff (1 min, default) must be at least restart-strategy.exponential-delay.initial-backoff (5 min, from flink-conf.yaml:1)"},
		{"rest.auth.token: t\nrest.auth.token-file: /f\n", "rest.auth.token (flink-conf.yaml:1) and rest.auth.token-file (flink-conf.yaml:2) are both set; set only one"},
	}
	for _, tt := range tests {
		_, _, err := Build(fileEntries(t, tt.file))
		var ce *ConflictError
		if !errors.As(err, &ce) || err.Error() != tt.want {
			t.Errorf("%q:\n got  %v\n want %s", tt.file, err, tt.want)
		}
	}
}

func TestAliases(t *testing.T) {
	const old, cur = "jobmanager.adaptive-scheduler.resource-wait-timeout", "jobmanager.adaptive-scheduler.submission.resource-wait-timeout"
	tests := []struct {
		name      string
		file      string
		dynamic   []string
		want      time.Duration
		wantWarns []string
	}{
		{"old name accepted with a warning", old + ": 1 min\n", nil, time.Minute,
			[]string{"flink-conf.yaml:1: configuration key " + old + " is deprecated; use " + cur}},
		{"new name wins, old first", old + ": 1 min\n" + cur + ": 2 min\n", nil, 2 * time.Minute,
			[]string{"flink-conf.yaml:1: configuration key " + old + " is deprecated; use " + cur,
				"flink-conf.yaml:1: configuration key " + old + " is ignored because " + cur + " is also set"}},
		{"new name wins, new first", cur + ": 2 min\n" + old + ": 1 min\n", nil, 2 * time.Minute,
			[]string{"flink-conf.yaml:2: configuration key " + old + " is deprecated; use " + cur,
				"flink-conf.yaml:2: configuration key " + old + " is ignored because " + cur + " is also set"}},
		{"-D alias beats the file's new name", cur + ": 2 min\n", []string{"-D" + old + "=3 min"}, 3 * time.Minute,
			[]string{"-D argument 1: configuration key " + old + " is deprecated; use " + cur}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, warnings, err := Build(fileEntries(t, tt.file), dyn(t, tt.dynamic...))
			if err != nil {
				t.Fatal(err)
			}
			if got := SubmissionResourceWaitTimeout.Get(c); got != tt.want {
				t.Errorf("value = %v; want %v", got, tt.want)
			}
			var got []string
			for _, w := range warnings {
				got = append(got, w.String())
			}
			if !reflect.DeepEqual(got, tt.wantWarns) {
				t.Errorf("warnings = %q\nwant %q", got, tt.wantWarns)
			}
			if !c.IsSet(old) || !c.IsSet(cur) {
				t.Error("IsSet does not see the value through both names")
			}
		})
	}
}

func TestAllFlinkOneNamesMapToTwoNames(t *testing.T) {
	const as = "jobmanager.adaptive-scheduler."
	pairs := map[string]string{
		as + "resource-wait-timeout":             as + "submission.resource-wait-timeout",
		as + "resource-stabilization-timeout":    as + "submission.resource-stabilization-timeout",
		as + "scaling-interval.min":              as + "executing.cooldown-after-rescaling",
		as + "scale-on-failed-checkpoints-count": as + "rescale-trigger.max-checkpoint-failures",
		as + "max-delay-for-scale-trigger":       as + "rescale-trigger.max-delay",
		"cluster.resource-blocklist.enabled":     "blocklist.enabled",
		"scheduler-mode":                         "execution-mode",
	}
	for old, cur := range pairs {
		s, ok := Lookup(old)
		if !ok || s.Key != cur {
			t.Errorf("%s resolves to %v; want %s", old, s, cur)
		}
	}
}

func TestLogWarnings(t *testing.T) {
	_, warnings, err := Build(fileEntries(t, "jobmanager.adaptive-scheduler.resource-wait-timeout: 1 min\nrest.prot: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	LogWarnings(slog.New(slog.NewTextHandler(&buf, nil)), warnings)
	for _, want := range []string{
		`level=WARN msg="deprecated configuration key; use the new key" key=jobmanager.adaptive-scheduler.resource-wait-timeout source=flink-conf.yaml:1 new_key=jobmanager.adaptive-scheduler.submission.resource-wait-timeout`,
		`level=WARN msg="unknown configuration key" key=rest.prot source=flink-conf.yaml:2 suggestion=rest.port`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, buf.String())
		}
	}
}

func TestFallbackKeyDoesNotWarn(t *testing.T) {
	c, warnings, err := Build(fileEntries(t, "scheduler-mode: reactive\n"))
	if err != nil || len(warnings) != 0 || !IsReactive(c) {
		t.Fatalf("err %v warnings %v reactive %v", err, warnings, IsReactive(c))
	}
}

func TestDuplicateKeyLastWins(t *testing.T) {
	c, warnings, err := Build(fileEntries(t, "rest.port: 1\nrest.port: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if RestPort.Get(c) != 2 || len(warnings) != 1 || warnings[0].Kind != DuplicateKey || warnings[0].Source.Line != 2 {
		t.Fatalf("port %d warnings %v", RestPort.Get(c), warnings)
	}
}

func TestUnknownKeys(t *testing.T) {
	tests := []struct{ key, want string }{
		{"rest.prot", "flink-conf.yaml:1: unknown configuration key rest.prot; did you mean rest.port?"},
		{"taskmanager.numberoftaskslots", "flink-conf.yaml:1: unknown configuration key taskmanager.numberoftaskslots; did you mean taskmanager.numberOfTaskSlots?"},
		{"jobmanager.adaptive-scheduler.min-parallelism-increse", "flink-conf.yaml:1: unknown configuration key jobmanager.adaptive-scheduler.min-parallelism-increse; did you mean jobmanager.adaptive-scheduler.min-parallelism-increase?"},
		{"jobmanager.adaptive-scheduler.resource-wait-timout", "flink-conf.yaml:1: unknown configuration key jobmanager.adaptive-scheduler.resource-wait-timout; did you mean jobmanager.adaptive-scheduler.submission.resource-wait-timeout?"},
		{"my.job.setting", "flink-conf.yaml:1: unknown configuration key my.job.setting"},
	}
	for _, tt := range tests {
		c, warnings, err := Build(fileEntries(t, tt.key+": 1\n"))
		if err != nil {
			t.Fatalf("%s: %v", tt.key, err)
		}
		if len(warnings) != 1 || warnings[0].Kind != UnknownKey || warnings[0].String() != tt.want {
			t.Errorf("%s: warnings %v; want %s", tt.key, warnings, tt.want)
		}
		if v, ok := c.Value(tt.key); !ok || v != "1" {
			t.Errorf("%s: unknown key not kept (%q, %v)", tt.key, v, ok)
		}
	}
	// Named reporters' settings are free-form.
	if _, warnings, _ := Build(fileEntries(t, "metrics.reporter.prom.factory.class: x\n")); len(warnings) != 0 {
		t.Errorf("metrics.reporter.* warned: %v", warnings)
	}
}

func TestPrecedence(t *testing.T) {
	c, _, err := Build(
		fileEntries(t, "rest.port: 9000\nheartbeat.timeout: 60 s\n"),
		dyn(t, "-Drest.port=9100"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if RestPort.Get(c) != 9100 || HeartbeatTimeout.Get(c) != 60*time.Second || JobManagerRPCPort.Get(c) != 6123 {
		t.Fatalf("rest.port %d heartbeat.timeout %v rpc.port %d", RestPort.Get(c), HeartbeatTimeout.Get(c), JobManagerRPCPort.Get(c))
	}
	for key, want := range map[string]string{"rest.port": "-D argument 1", "heartbeat.timeout": "flink-conf.yaml:2", "jobmanager.rpc.port": "default"} {
		if got := c.Source(key).String(); got != want {
			t.Errorf("Source(%s) = %q; want %q", key, got, want)
		}
	}
}

func TestWith(t *testing.T) {
	base, _, err := Build(fileEntries(t, "rest.port: 9000\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := base.With("jobmanager.adaptive-scheduler.scaling-interval.min", "1 min")
	if err != nil {
		t.Fatal(err)
	}
	if ExecutingCooldownAfterRescaling.Get(c) != time.Minute || RestPort.Get(c) != 9000 {
		t.Fatalf("With lost or misplaced a value")
	}
	if ExecutingCooldownAfterRescaling.Get(base) != 30*time.Second {
		t.Fatal("With changed the original")
	}
	if c.Source(ExecutingCooldownAfterRescaling.Key()).Kind != FromProgram {
		t.Fatal("With value has the wrong source")
	}
	if _, err := base.With("rest.port", "http"); err == nil || !strings.Contains(err.Error(), `override: rest.port: "http" is not an integer`) {
		t.Fatalf("With invalid value: %v", err)
	}
}

func TestMapRedactsSecrets(t *testing.T) {
	c, _, err := Build(fileEntries(t, "rest.auth.token: s3cret\nmy.own: x\nrest.port: 9000\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := c.Map()
	if m["rest.auth.token"] != "******" || m["my.own"] != "x" || m["rest.port"] != "9000" || m["heartbeat.timeout"] != "50 s" {
		t.Fatalf("Map = %v", m)
	}
	if _, ok := m["execution.checkpointing.interval"]; ok {
		t.Fatal("unset option without default shown")
	}
}

func TestDerivedValues(t *testing.T) {
	tests := []struct {
		name            string
		file            string
		wait, stab      time.Duration
		maxDelay        time.Duration
		restartStrategy string
	}{
		{"defaults", "", 5 * time.Minute, 10 * time.Second, 0, "none"},
		{"reactive", "execution-mode: reactive\n", -time.Millisecond, time.Second, 0, "exponential-delay"},
		{"reactive with user values", "execution-mode: reactive\njobmanager.adaptive-scheduler.resource-wait-timeout: 1 min\njobmanager.adaptive-scheduler.submission.resource-stabilization-timeout: 5 s\nrestart-strategy.type: none\n",
			time.Minute, 5 * time.Second, 0, "none"},
		{"checkpointing", "execution.checkpointing.interval: 10 s\n", 5 * time.Minute, 10 * time.Second, 30 * time.Second, "exponential-delay"},
		{"explicit", "execution.checkpointing.interval: 10 s\njobmanager.adaptive-scheduler.rescale-trigger.max-delay: 1 s\nrestart-strategy.type: fixeddelay\n",
			5 * time.Minute, 10 * time.Second, time.Second, "fixed-delay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := Build(fileEntries(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := EffectiveResourceWaitTimeout(c); got != tt.wait {
				t.Errorf("wait = %v; want %v", got, tt.wait)
			}
			if got := EffectiveSubmissionStabilizationTimeout(c); got != tt.stab {
				t.Errorf("stabilization = %v; want %v", got, tt.stab)
			}
			if got := EffectiveMaxTriggerDelay(c); got != tt.maxDelay {
				t.Errorf("max delay = %v; want %v", got, tt.maxDelay)
			}
			if got := EffectiveRestartStrategy(c); got != tt.restartStrategy {
				t.Errorf("restart strategy = %v; want %v", got, tt.restartStrategy)
			}
		})
	}
}

func TestEffectiveExecutingStabilizationTimeout(t *testing.T) {
	tests := []struct {
		name, file string
		want       time.Duration
	}{
		{"default", "", time.Minute},
		{"reactive", "execution-mode: reactive\n", 0},
		{"reactive, user value", "execution-mode: reactive\njobmanager.adaptive-scheduler.executing.resource-stabilization-timeout: 5 s\n", 5 * time.Second},
	}
	for _, tt := range tests {
		c, _, err := Build(fileEntries(t, tt.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := EffectiveExecutingStabilizationTimeout(c); got != tt.want {
			t.Errorf("%s: executing stabilization = %v; want %v", tt.name, got, tt.want)
		}
	}
}
