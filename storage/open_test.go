package storage

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestOpenSchemes(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		uri     string
		wantErr error
		wantURI string
	}{
		{uri: "file://" + dir + "/a/", wantURI: "file://" + dir + "/a"},
		{uri: "file:" + dir + "/b", wantURI: "file://" + dir + "/b"},
		{uri: "FILE://" + dir + "/c", wantURI: "file://" + dir + "/c"},
		{uri: "file://localhost" + dir + "/d", wantURI: "file://" + dir + "/d"},
		{uri: "s3://bucket/x", wantErr: ErrUnsupportedScheme},
		{uri: "/no/scheme", wantErr: ErrUnsupportedScheme},
		{uri: "", wantErr: ErrUnsupportedScheme},
		{uri: "file://otherhost/x", wantErr: ErrUnsupportedScheme},
		{uri: "file:relative", wantErr: ErrUnsupportedScheme},
		{uri: "file:///x?y=1", wantErr: ErrUnsupportedScheme},
		{uri: "hdfs://127.0.0.1:1/ckpt", wantURI: "hdfs://127.0.0.1:1/ckpt"},
		{uri: "hdfs://no-such-namenode.invalid/ckpt", wantErr: ErrNoSuchNamenode},
	}
	for _, tc := range tests {
		s, err := Open(context.Background(), tc.uri, Options{})
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("Open(%q) error = %v, want %v", tc.uri, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Open(%q): %v", tc.uri, err)
			continue
		}
		if s.URI() != tc.wantURI {
			t.Errorf("Open(%q).URI() = %q, want %q", tc.uri, s.URI(), tc.wantURI)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

func TestOpenUnknownSchemeMessage(t *testing.T) {
	_, err := Open(context.Background(), "gs://b/x", Options{})
	if err == nil || !strings.Contains(err.Error(), `"gs"`) || !strings.Contains(err.Error(), "file:// or hdfs://") {
		t.Fatalf("Open(gs://...) error = %v; want it to name the scheme and the supported ones", err)
	}
}

func FuzzParseURI(f *testing.F) {
	for _, s := range []string{"file:///tmp/x", "hdfs://nn:8020/a", "hdfs:///a", "file:x", "://", "hdfs://[::1]:9/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		u, err := parseURI(in)
		if err != nil {
			return
		}
		if u.Scheme == "" || u.Opaque != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			t.Fatalf("parseURI(%q) accepted %#v", in, u)
		}
	})
}
