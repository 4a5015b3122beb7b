package netplane

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	id := ChannelID{Attempt: -3, Edge: "map->sink", Producer: 7, Consumer: 1 << 20}
	open, err := appendChannelID(nil, id)
	if err != nil {
		t.Fatal(err)
	}
	frames := []frame{
		{frameHello, 0, appendHello(nil, hello{version: protocolVersion, addr: "10.0.0.1:6121"})},
		{frameOpen, 1, open},
		{frameData, 1, appendRecord(appendRecord(nil, []byte("a")), nil)},
		{frameEnd, 1, nil},
		{frameCredit, 1<<32 - 1, appendCredit(nil, 3)},
		{frameReset, 2, resetReason("released")},
	}
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	for _, f := range frames {
		if err := writeFrame(bw, f.typ, f.stream, f.payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(&buf)
	for _, want := range frames {
		got, err := readFrame(br, func(n int) []byte { return make([]byte, n) })
		if err != nil {
			t.Fatalf("readFrame %s: %v", want.typ, err)
		}
		if got.typ != want.typ || got.stream != want.stream || !bytes.Equal(got.payload, want.payload) {
			t.Fatalf("got %s/%d/%q, want %s/%d/%q", got.typ, got.stream, got.payload, want.typ, want.stream, want.payload)
		}
	}
	if _, err := readFrame(br, nil); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last frame: got %v, want io.EOF", err)
	}
	back, err := decodeChannelID(open)
	if err != nil || back != id {
		t.Fatalf("decodeChannelID: got %+v, %v, want %+v", back, err, id)
	}
}

func TestReadFrameErrors(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  error
	}{
		{"empty", nil, io.EOF},
		{"short header", []byte{byte(frameData), 0, 0}, io.ErrUnexpectedEOF},
		{"unknown type", appendHeader(nil, 42, 1, 0), ErrProtocol},
		{"oversized control", appendHeader(nil, frameCredit, 1, maxControlPayload+1), ErrProtocol},
		{"oversized data", appendHeader(nil, frameData, 1, maxFramePayload+1), ErrProtocol},
		{"truncated payload", append(appendHeader(nil, frameData, 1, 10), 1, 2, 3), io.ErrUnexpectedEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readFrame(bufio.NewReader(bytes.NewReader(tc.input)), func(n int) []byte { return make([]byte, n) })
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestPayloadDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"credit of zero", func() error { _, err := decodeCredit(appendCredit(nil, 0)); return err }()},
		{"credit too short", func() error { _, err := decodeCredit([]byte{1}); return err }()},
		{"channel id truncated", func() error { _, err := decodeChannelID(make([]byte, 10)); return err }()},
		{"channel id trailing bytes", func() error {
			b, _ := appendChannelID(nil, ChannelID{Edge: "a->b"})
			_, err := decodeChannelID(append(b, 0))
			return err
		}()},
		{"hello without magic", func() error { _, err := decodeHello([]byte("HELLO!!!")); return err }()},
		{"record overruns buffer", func() error { _, _, err := nextRecord([]byte{5, 'a'}, 0); return err }()},
		{"record bad prefix", func() error {
			_, _, err := nextRecord([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 0)
			return err
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !errors.Is(tc.err, ErrProtocol) {
				t.Fatalf("got %v, want ErrProtocol", tc.err)
			}
		})
	}
	if _, err := appendChannelID(nil, ChannelID{Edge: strings.Repeat("x", maxEdgeLen+1)}); err == nil {
		t.Fatalf("appendChannelID accepted an edge name over %d bytes", maxEdgeLen)
	}
	if _, err := appendChannelID(nil, ChannelID{Producer: -1}); err == nil {
		t.Fatalf("appendChannelID accepted a negative subtask index")
	}
}
