package checkpoint

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func sampleMetadata() Metadata {
	done := Completed{ID: 12, Attempt: 3, Trigger: time.UnixMilli(1_000), Duration: 2 * time.Second, Size: 60, Handles: []SubtaskState{
		{Subtask{"map", 0}, []StateHandle{{"map-0-keyed", 10}}},
		{Subtask{"map", 1}, []StateHandle{{"map-1-keyed", 20}}},
		{Subtask{"source", 0}, []StateHandle{{"source-0", 30}}},
	}}
	return NewMetadata("job-a", done, map[string]int{"map": 128, "source": 128}, []StateHandle{{"coordinator-source", 4}})
}

func TestMetadataRoundTrip(t *testing.T) {
	m := sampleMetadata()
	if m.Size() != 64 || m.Completion() != time.UnixMilli(3_000) {
		t.Fatalf("Size = %d, Completion = %v", m.Size(), m.Completion())
	}
	if len(m.Vertices) != 2 || m.Vertices[0] != (VertexMeta{"map", 2, 128}) || m.Vertices[1] != (VertexMeta{"source", 1, 128}) {
		t.Fatalf("Vertices = %+v", m.Vertices)
	}
	b, err := EncodeMetadata(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeMetadata(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := EncodeMetadata(got)
	if string(b) != string(b2) {
		t.Fatalf("round trip changed the encoding:\n%s\n%s", b, b2)
	}
}

func TestDecodeMetadataErrors(t *testing.T) {
	good, _ := EncodeMetadata(sampleMetadata())
	replace := func(old, new string) string { return strings.Replace(string(good), old, new, 1) }
	tests := []struct {
		name string
		data string
		want string
	}{
		{"not json", "chk", "not a JSON object"},
		{"no version", `{"jobId":"j"}`, `"version" missing`},
		{"future version", replace(`"version": 1`, `"version": 2`), "version 2: this build reads version 1"},
		{"unknown field", replace(`"jobId"`, `"extra": 1, "jobId"`), `unknown field "extra"`},
		{"trailing data", string(good) + "{}", "trailing data"},
		{"empty job", replace(`"jobId": "job-a"`, `"jobId": ""`), "jobId is empty"},
		{"zero id", replace(`"checkpointId": 12`, `"checkpointId": 0`), "checkpointId 0"},
		{"time reversed", replace(`"completionTimestamp": 3000`, `"completionTimestamp": 10`), "before triggerTimestamp"},
		{"index out of range", replace(`"index": 1`, `"index": 5`), "map#5: index outside [0, 2)"},
		{"unknown vertex", replace(`"vertex": "source"`, `"vertex": "sink"`), `vertex "sink" not listed`},
		{"escaping file", replace(`"name": "map-0-keyed"`, `"name": "../other/x"`), `".." element`},
		{"duplicate file", replace(`"name": "map-1-keyed"`, `"name": "map-0-keyed"`), "also listed by"},
		{"reserved file", replace(`"name": "source-0"`, `"name": "_metadata"`), "reserved"},
		{"negative size", replace(`"size": 30`, `"size": -30`), "size -30"},
		{"parallelism mismatch", replace(`"parallelism": 2`, `"parallelism": 3`), "parallelism 3 but 2 subtasks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeMetadata([]byte(tt.data))
			if !errors.Is(err, ErrBadMetadata) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("DecodeMetadata = %v, want ErrBadMetadata mentioning %q", err, tt.want)
			}
		})
	}
}

func FuzzDecodeMetadata(f *testing.F) {
	good, _ := EncodeMetadata(sampleMetadata())
	f.Add(good)
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":1,"jobId":"j","checkpointId":1,"vertices":[{"id":"v","parallelism":1}],"subtasks":[{"subtask":{"vertex":"v","index":0},"handles":null}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeMetadata(data)
		if err != nil {
			if !errors.Is(err, ErrBadMetadata) {
				t.Fatalf("error %v does not wrap ErrBadMetadata", err)
			}
			return
		}
		b, err := EncodeMetadata(m)
		if err != nil {
			t.Fatalf("decoded metadata does not encode: %v", err)
		}
		m2, err := DecodeMetadata(b)
		if err != nil {
			t.Fatalf("re-decoding failed: %v", err)
		}
		if m2.CheckpointID != m.CheckpointID || m2.JobID != m.JobID || m2.Size() != m.Size() {
			t.Fatalf("round trip changed %+v into %+v", m, m2)
		}
	})
}
