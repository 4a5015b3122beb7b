package yarn

import (
	"strings"
	"testing"
)

func TestLogContents(t *testing.T) {
	hadoop3 := "Container: c on n\nLogAggregationType: LOCAL\n====\nLogType:jobmanager.log\nLogLength:12\nLogContents:\nline 1\nline 2\nEnd of LogType:jobmanager.log.\n*****\n\n"
	for _, tc := range []struct{ name, body, file, want string }{
		{"hadoop 3 wrapper", hadoop3, "jobmanager.log", "line 1\nline 2\n"},
		{"raw (older NodeManagers)", "line 1\n", "jobmanager.log", "line 1\n"},
		{"no footer", "LogContents:\npartial", "x.log", "partial"},
		{"empty", "", "x.log", ""},
	} {
		if got := logContents(tc.body, tc.file); got != tc.want {
			t.Errorf("%s: logContents = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLastError(t *testing.T) {
	for _, tc := range []struct{ log, want string }{
		{"level=INFO msg=a\nlevel=ERROR msg=b\nlevel=INFO msg=c\n", "level=ERROR msg=b"},
		{"level=ERROR msg=b\ntide: cannot bind\n", "tide: cannot bind"},
		{"panic: boom\ngoroutine 1 [running]:\n", "panic: boom"},
		{"level=INFO msg=fine\n", ""},
	} {
		if got := LastError(tc.log); got != tc.want {
			t.Errorf("LastError(%q) = %q, want %q", tc.log, got, tc.want)
		}
	}
}

// FuzzLogContents: any NodeManager answer gives a part of itself, and LastError a line of it.
func FuzzLogContents(f *testing.F) {
	f.Add("LogContents:\nx\nEnd of LogType:a.log.\n", "a.log")
	f.Add("plain", "b")
	f.Fuzz(func(t *testing.T, body, file string) {
		got := logContents(body, file)
		if !strings.Contains(body, got) {
			t.Fatalf("logContents(%q, %q) = %q: not part of the body", body, file, got)
		}
		if e := LastError(got); e != "" && !strings.Contains(got, e) {
			t.Fatalf("LastError = %q: not in the log", e)
		}
	})
}
