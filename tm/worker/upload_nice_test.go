package worker

import (
	"log/slog"
	"strings"
	"testing"
)

// TestUploadNice reads state.backend.upload.nice from the AM's configuration: the default
// when unset, the value when it is one of 0..19, else an error naming the key, the value
// and the range, which stateBackendConfig passes on.
func TestUploadNice(t *testing.T) {
	for _, tt := range []struct {
		raw  string // "-": unset
		want int
		err  string
	}{
		{raw: "-", want: 5},
		{raw: "0", want: 0},
		{raw: " 7 ", want: 7},
		{raw: "19", want: 19},
		{raw: "20", err: `state.backend.upload.nice: "20" is out of range (expected an integer between 0 and 19)`},
		{raw: "-3", err: `state.backend.upload.nice: "-3" is out of range (expected an integer between 0 and 19)`},
		{raw: "", err: `state.backend.upload.nice: "" is not an integer (expected an integer between 0 and 19)`},
		{raw: "5.5", err: `state.backend.upload.nice: "5.5" is not an integer`},
		{raw: "low", err: `state.backend.upload.nice: "low" is not an integer`},
	} {
		conf := map[string]string{"state.backend.type": "hashmap"}
		if tt.raw != "-" {
			conf["state.backend.upload.nice"] = tt.raw
		}
		got, err := uploadNice(conf)
		cfg, cerr := stateBackendConfig(conf, slog.New(slog.DiscardHandler))
		switch {
		case tt.err == "":
			if err != nil || got != tt.want || cerr != nil || cfg.UploadNice != tt.want {
				t.Errorf("%q: got %d, %v; stateBackendConfig %d, %v; want %d", tt.raw, got, err, cfg.UploadNice, cerr, tt.want)
			}
		case err == nil || !strings.Contains(err.Error(), tt.err) || cerr == nil || !strings.Contains(cerr.Error(), tt.err):
			t.Errorf("%q: got %d, %v; stateBackendConfig: %v; want an error with %s", tt.raw, got, err, cerr, tt.err)
		}
	}
}

// FuzzUploadNice checks that any value either is refused with an error naming the key or
// gives a nice increment within 0..19.
func FuzzUploadNice(f *testing.F) {
	for _, s := range []string{"5", "0", "19", "20", "-1", "", " 3", "1e1", "0x5", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		n, err := uploadNice(map[string]string{"state.backend.upload.nice": raw})
		if err != nil {
			if !strings.Contains(err.Error(), "state.backend.upload.nice") {
				t.Fatalf("%q: the error does not name the key: %v", raw, err)
			}
			return
		}
		if n < 0 || n > 19 {
			t.Fatalf("%q: accepted as %d", raw, n)
		}
	})
}
