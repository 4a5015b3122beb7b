package yarn

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/yarn/yarnpb"
)

func TestShellQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{"plain", "", "a b", "it's", `"$HOME"`, "x;rm -rf /", "--output=/tmp/o"} {
		out, err := exec.Command("bash", "-c", "printf %s "+shellQuote(s)).Output()
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != s {
			t.Errorf("bash saw %q for %q (quoted %s)", out, s, shellQuote(s))
		}
	}
}

func TestTaskManagerLaunchContext(t *testing.T) {
	l := TaskManagerLaunch{AMHost: "am-host", AMPort: 4242, Dynamic: []string{"a.b=c d"}, Env: map[string]string{"Z": "1", "A": "2"}}
	c := l.Context("tm-2-1", "nm:8041")
	cmd := c.GetCommand()[0]
	for _, want := range []string{"exec ./tide taskmanager", "--resource-id tm-2-1", `--host "$NM_HOST"`,
		"-Djobmanager.rpc.address=am-host", "-Djobmanager.rpc.port=4242", "-Dtaskmanager.node-id=nm:8041", "'-Da.b=c d'",
		"1><LOG_DIR>/taskmanager.out 2><LOG_DIR>/taskmanager.log"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("command %q lacks %q", cmd, want)
		}
	}
	if env := c.GetEnvironment(); len(env) != 2 || env[0].GetKey() != "A" {
		t.Errorf("environment %v, want sorted A, Z", env)
	}
}

func TestResourcesRoundTrip(t *testing.T) {
	lr, err := localResource("hdfs://nn:8020/user/u/.tide/app/tide", 123, time.UnixMilli(1700000000123))
	if err != nil {
		t.Fatal(err)
	}
	u := lr.GetResource()
	if u.GetScheme() != "hdfs" || u.GetHost() != "nn" || u.GetPort() != 8020 || u.GetFile() != "/user/u/.tide/app/tide" || lr.GetTimestamp() != 1700000000123 {
		t.Fatalf("resource %v", lr)
	}
	in := []*yarnpb.StringLocalResourceMapProto{{Key: proto.String("tide"), Value: lr}}
	s, err := EncodeResources(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeResources(s)
	if err != nil || len(out) != 1 || !proto.Equal(out[0], in[0]) {
		t.Fatalf("decoded %v, %v", out, err)
	}
	for _, bad := range []string{"!!", "AAAA", "CgA="} {
		if _, err := DecodeResources(bad); err == nil {
			t.Errorf("DecodeResources(%q) accepted", bad)
		}
	}
	if _, err := localResource("hdfs://nn:x/p", 1, time.Now()); err == nil {
		t.Error("bad port accepted")
	}
}

func FuzzDecodeResources(f *testing.F) {
	s, _ := EncodeResources([]*yarnpb.StringLocalResourceMapProto{{Key: proto.String("tide"), Value: &yarnpb.LocalResourceProto{Resource: &yarnpb.URLProto{File: proto.String("/x")}}}})
	f.Add(s)
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		res, err := DecodeResources(s)
		if err != nil {
			return
		}
		for _, r := range res {
			if r.GetKey() == "" || r.GetValue().GetResource() == nil {
				t.Fatalf("accepted an incomplete resource %v", r)
			}
		}
	})
}

// TestJobState: tide run follows the job's state and newest failure through the AM's REST
// API; an AM without the exception history still reports the state.
func TestJobState(t *testing.T) {
	for _, tt := range []struct {
		body, exceptions, want, failure string
		ok                              bool
	}{
		{`{"jobs":[{"jid":"x","state":"RUNNING"}]}`, "", "RUNNING", "", true},
		{`{"jobs":[{"jid":"x","state":"RESTARTING"}]}`,
			`{"exceptionHistory":{"entries":[{"stacktrace":"listing hdfs://nn/x: refused","attempt":2,"timestamp":5}],"truncated":true}}`,
			"RESTARTING", "listing hdfs://nn/x: refused", true},
		{`{"jobs":[]}`, "", "", "", false},
		{`nope`, "", "", "", false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path == "/jobs/overview":
				io.WriteString(w, tt.body)
			case r.URL.Path == "/jobs/x/exceptions" && tt.exceptions != "":
				io.WriteString(w, tt.exceptions)
			default:
				http.NotFound(w, r)
			}
		}))
		got, failure, err := jobState(t.Context(), srv.Client(), srv.URL)
		srv.Close()
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("jobState of %s = %q, %v", tt.body, got, err)
		}
		if gotFailure := ""; failure != nil || tt.failure != "" {
			if failure != nil {
				gotFailure = failure.Stacktrace
			}
			if gotFailure != tt.failure {
				t.Errorf("jobState of %s: failure %q, want %q", tt.body, gotFailure, tt.failure)
			}
		}
	}
}
