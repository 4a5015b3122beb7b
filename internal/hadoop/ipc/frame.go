package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/internal/hadoop/hadooppb"
)

// MaxFrameSize bounds a response frame; Hadoop's own default (ipc.maximum.response.length) is
// 128 MiB.
const MaxFrameSize = 128 << 20

// Reserved call ids (Hadoop RpcConstants).
const (
	callIDAuthorizationFailed int32 = -1
	callIDConnectionContext   int32 = -3
	callIDPing                int32 = -4
	callIDSASL                int32 = -33
)

// preamble is the 7 bytes that open every connection: "hrpc", version 9, service class 0, and
// the auth protocol (0 SIMPLE, 0xDF SASL).
func preamble(sasl bool) []byte {
	auth := byte(0x00)
	if sasl {
		auth = 0xDF
	}
	return []byte{'h', 'r', 'p', 'c', 9, 0, auth}
}

// encodeFrame marshals msgs as one frame: a 4-byte big-endian length, then each message
// preceded by its uvarint length.
func encodeFrame(msgs ...proto.Message) ([]byte, error) {
	body := make([]byte, 4, 256)
	for i, m := range msgs {
		b, err := proto.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("marshalling part %d (%T) of a frame: %w", i, m, err)
		}
		body = protowire.AppendVarint(body, uint64(len(b)))
		body = append(body, b...)
	}
	binary.BigEndian.PutUint32(body, uint32(len(body)-4))
	return body, nil
}

// readFrame reads one length-prefixed frame and returns its body.
func readFrame(r io.Reader) ([]byte, error) {
	var lenBuf [4]byte
	if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(lenBuf[:])
	if n > MaxFrameSize {
		return nil, fmt.Errorf("hadoop ipc: response frame of %d bytes exceeds the %d byte limit", n, MaxFrameSize)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("hadoop ipc: reading a %d byte frame: %w", n, err)
	}
	return body, nil
}

// splitDelimited splits a frame body into its uvarint-length-delimited parts.
func splitDelimited(body []byte) ([][]byte, error) {
	var parts [][]byte
	for len(body) > 0 {
		n, k := protowire.ConsumeVarint(body)
		if k < 0 {
			return nil, fmt.Errorf("hadoop ipc: bad length prefix of frame part %d: %w", len(parts), protowire.ParseError(k))
		}
		body = body[k:]
		if n > uint64(len(body)) {
			return nil, fmt.Errorf("hadoop ipc: frame part %d claims %d bytes, %d left", len(parts), n, len(body))
		}
		parts = append(parts, body[:n])
		body = body[n:]
	}
	return parts, nil
}

// decodeResponse parses a response frame body into its header and, when present, the raw
// payload (the response message or RpcSaslProto).
func decodeResponse(body []byte) (*hadooppb.RpcResponseHeaderProto, []byte, error) {
	parts, err := splitDelimited(body)
	if err != nil {
		return nil, nil, err
	}
	if len(parts) == 0 || len(parts) > 2 {
		return nil, nil, fmt.Errorf("hadoop ipc: response frame has %d parts, want a header and at most one payload", len(parts))
	}
	h := &hadooppb.RpcResponseHeaderProto{}
	if err := proto.Unmarshal(parts[0], h); err != nil {
		return nil, nil, fmt.Errorf("hadoop ipc: decoding the response header: %w", err)
	}
	var payload []byte
	if len(parts) == 2 {
		payload = parts[1]
	}
	return h, payload, nil
}

// requestHeader is the RpcRequestHeaderProto of a call.
func requestHeader(callID int32, clientID []byte, retry int32) *hadooppb.RpcRequestHeaderProto {
	return &hadooppb.RpcRequestHeaderProto{
		RpcKind:    hadooppb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
		RpcOp:      hadooppb.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
		CallId:     proto.Int32(callID),
		ClientId:   clientID,
		RetryCount: proto.Int32(retry),
	}
}
