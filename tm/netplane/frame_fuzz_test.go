package netplane

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzReadFrame feeds arbitrary bytes to the frame decoder and every payload
// decoder, as the reader goroutine does with a peer's stream. Nothing may
// panic, and every accepted frame must re-encode to the bytes it came from.
func FuzzReadFrame(f *testing.F) {
	id, _ := appendChannelID(nil, ChannelID{Attempt: 1, Edge: "a->b", Producer: 1, Consumer: 2})
	seed := func(t frameType, stream uint32, payload []byte) []byte {
		return append(appendHeader(nil, t, stream, len(payload)), payload...)
	}
	f.Add(seed(frameHello, 0, appendHello(nil, hello{version: protocolVersion, addr: "h:1"})))
	f.Add(seed(frameOpen, 1, id))
	f.Add(append(seed(frameData, 1, appendRecord(appendRecord(nil, []byte("rec")), nil)), seed(frameEnd, 1, nil)...))
	f.Add(seed(frameCredit, 9, appendCredit(nil, 2)))
	f.Add(seed(frameReset, 3, []byte("released")))
	f.Add([]byte{3, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReader(bytes.NewReader(data))
		consumed := 0
		for {
			fr, err := readFrame(br, func(n int) []byte {
				if n > len(data) {
					n = len(data) // the read will fail short; keeps the fuzzer's memory small
				}
				return make([]byte, n)
			})
			if err != nil {
				return
			}
			enc := append(appendHeader(nil, fr.typ, fr.stream, len(fr.payload)), fr.payload...)
			if !bytes.Equal(enc, data[consumed:consumed+len(enc)]) {
				t.Fatalf("frame %s did not re-encode to its input", fr.typ)
			}
			consumed += len(enc)
			switch fr.typ {
			case frameHello:
				_, _ = decodeHello(fr.payload)
			case frameOpen:
				if cid, err := decodeChannelID(fr.payload); err == nil {
					back, err := appendChannelID(nil, cid)
					if err != nil || !bytes.Equal(back, fr.payload) {
						t.Fatalf("channel id %+v did not round-trip: %v", cid, err)
					}
				}
			case frameCredit:
				if n, err := decodeCredit(fr.payload); err == nil && n <= 0 {
					t.Fatalf("accepted a credit of %d", n)
				}
			case frameData:
				for pos := 0; pos < len(fr.payload); {
					rec, next, err := nextRecord(fr.payload, pos)
					if err != nil {
						break
					}
					if next <= pos || len(rec) > len(fr.payload) {
						t.Fatalf("record decoder did not advance or overran: pos %d next %d", pos, next)
					}
					pos = next
				}
			}
		}
	})
}

// FuzzRecords checks that any sequence of records packed into a buffer is
// read back exactly.
func FuzzRecords(f *testing.F) {
	f.Add([]byte("abc"), uint8(3))
	f.Add([]byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		var recs [][]byte
		for rest := data; len(rest) > 0; {
			n := min(int(cut)%(len(rest)+1), len(rest))
			recs = append(recs, rest[:n])
			rest = rest[n:]
			if n == 0 {
				recs = append(recs, rest[:1])
				rest = rest[1:]
			}
		}
		var buf []byte
		for _, r := range recs {
			buf = appendRecord(buf, r)
		}
		pos := 0
		for k, want := range recs {
			got, next, err := nextRecord(buf, pos)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("record %d: got %q, %v, want %q", k, got, err, want)
			}
			pos = next
		}
		if pos != len(buf) {
			t.Fatalf("read %d of %d bytes", pos, len(buf))
		}
	})
}
