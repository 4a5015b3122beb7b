package ipc

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/internal/hadoop/hadooppb"
	"github.com/tidestream/tide/yarn/yarnpb"
)

func TestPreamble(t *testing.T) {
	if got := hex.EncodeToString(preamble(false)); got != "68727063090000" {
		t.Errorf("SIMPLE preamble = %s", got)
	}
	if got := hex.EncodeToString(preamble(true)); got != "687270630900df" {
		t.Errorf("SASL preamble = %s", got)
	}
}

func TestRequestHeaderBytes(t *testing.T) {
	clientID := bytes.Repeat([]byte{0xAB}, 16)
	tests := []struct {
		name   string
		callID int32
		retry  int32
		client []byte
		want   string
	}{
		// rpcKind=2, rpcOp=0, callId sint32 zigzag(5)=10, clientId 16 bytes, retryCount 0.
		{"call 5", 5, 0, clientID, "0802" + "1000" + "180a" + "2210" + strings.Repeat("ab", 16) + "2800"},
		// connection context: zigzag(-3)=5; retryCount -1 = zigzag 1.
		{"context", -3, -1, clientID, "0802" + "1000" + "1805" + "2210" + strings.Repeat("ab", 16) + "2801"},
		// SASL: zigzag(-33)=65=0x41, empty clientId still present.
		{"sasl", -33, -1, []byte{}, "0802" + "1000" + "1841" + "2200" + "2801"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := proto.Marshal(requestHeader(tt.callID, tt.client, tt.retry))
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(b); got != tt.want {
				t.Errorf("header bytes = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestEncodeFrameLayout(t *testing.T) {
	h := &hadooppb.RequestHeaderProto{
		MethodName:                 proto.String("getNewApplication"),
		DeclaringClassProtocolName: proto.String("p"),
		ClientProtocolVersion:      proto.Uint64(1),
	}
	frame, err := encodeFrame(requestHeader(0, []byte{}, 0), h, &yarnpb.GetNewApplicationRequestProto{})
	if err != nil {
		t.Fatal(err)
	}
	// 4-byte length, then three delimited parts; the empty request is a lone 0x00.
	// RpcRequestHeader (10 bytes), RequestHeader (24 bytes), empty request (0 bytes).
	wantBody := "0a" + "0802100018002200" + "2800" +
		"18" + "0a11" + hex.EncodeToString([]byte("getNewApplication")) + "120170" + "1801" +
		"00"
	got := hex.EncodeToString(frame)
	wantLen := len(wantBody) / 2
	if got[:8] != hex.EncodeToString([]byte{0, 0, 0, byte(wantLen)}) || got[8:] != wantBody {
		t.Errorf("frame = %s\nwant len %d body %s", got, wantLen, wantBody)
	}
	parts, err := splitDelimited(frame[4:])
	if err != nil || len(parts) != 3 || len(parts[2]) != 0 {
		t.Fatalf("splitDelimited = %d parts, %v", len(parts), err)
	}
}

func TestDecodeResponse(t *testing.T) {
	// callId uint32 0xFFFFFFDF (= -33 as int32), status SUCCESS, then a payload.
	header := "08dfffffff0f" + "1000" + "1809"
	payload := "0801"                                           // RpcSaslProto{version=1}
	body, _ := hex.DecodeString("0a" + header + "02" + payload) // the header is 10 bytes
	h, p, err := decodeResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	if int32(h.GetCallId()) != -33 || h.GetStatus() != hadooppb.RpcResponseHeaderProto_SUCCESS || h.GetServerIpcVersionNum() != 9 {
		t.Errorf("header = %v", h)
	}
	if hex.EncodeToString(p) != payload {
		t.Errorf("payload = %x", p)
	}
	// An error header alone, no payload.
	eh, _ := proto.Marshal(&hadooppb.RpcResponseHeaderProto{
		CallId: proto.Uint32(7), Status: hadooppb.RpcResponseHeaderProto_ERROR.Enum(),
		ExceptionClassName: proto.String("java.io.IOException"), ErrorMsg: proto.String("boom"),
		ErrorDetail: hadooppb.RpcResponseHeaderProto_ERROR_APPLICATION.Enum(),
	})
	h, p, err = decodeResponse(append([]byte{byte(len(eh))}, eh...))
	if err != nil || p != nil {
		t.Fatalf("error response: payload %x, err %v", p, err)
	}
	re := remoteErrorFrom(h, "m")
	if re.Class != "java.io.IOException" || re.Message != "boom" || re.Fatal || re.Error() != "hadoop ipc: remote error in m: java.io.IOException: boom" {
		t.Errorf("remote error = %#v (%v)", re, re)
	}
}

func TestDecodeResponseRejects(t *testing.T) {
	for name, hx := range map[string]string{
		"empty":               "",
		"length past end":     "05aabb",
		"bad varint":          "ffffffffffffffffffff01",
		"three parts":         "00" + "00" + "00",
		"header not protobuf": "02ffff",
	} {
		body, _ := hex.DecodeString(hx)
		if _, _, err := decodeResponse(body); err == nil {
			t.Errorf("%s: decodeResponse(%s) succeeded", name, hx)
		}
	}
}

func TestReadFrame(t *testing.T) {
	body, err := readFrame(bytes.NewReader([]byte{0, 0, 0, 2, 0xAA, 0xBB, 0xCC}))
	if err != nil || hex.EncodeToString(body) != "aabb" {
		t.Fatalf("readFrame = %x, %v", body, err)
	}
	if _, err := readFrame(bytes.NewReader(nil)); !errors.Is(err, io.EOF) {
		t.Errorf("empty stream: %v, want io.EOF", err)
	}
	if _, err := readFrame(bytes.NewReader([]byte{0, 0, 0, 5, 1})); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short body: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := readFrame(bytes.NewReader([]byte{0x7f, 0xff, 0xff, 0xff})); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("huge frame: %v, want the size limit error", err)
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, 0xAA, 0xBB})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := readFrame(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(body)+4 > len(data) || !bytes.Equal(body, data[4:4+len(body)]) {
			t.Fatalf("body %x does not match the input %x", body, data)
		}
	})
}

func FuzzDecodeResponse(f *testing.F) {
	f.Add([]byte{0x0a, 0x08, 0xdf, 0xff, 0xff, 0xff, 0x0f, 0x10, 0x00, 0x18, 0x09, 0x02, 0x08, 0x01})
	f.Add([]byte{0x04, 0x08, 0x07, 0x10, 0x01})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		h, payload, err := decodeResponse(data)
		if err != nil {
			return
		}
		// Whatever decodes must survive re-encoding and turn into an error value if not SUCCESS.
		if _, err := proto.Marshal(h); err != nil && h.CallId != nil && h.Status != nil {
			t.Fatalf("decoded header does not re-encode: %v", err)
		}
		if h.GetStatus() != hadooppb.RpcResponseHeaderProto_SUCCESS {
			_ = remoteErrorFrom(h, "fuzz").Error()
		}
		if len(payload) > len(data) {
			t.Fatalf("payload longer than the input")
		}
	})
}
