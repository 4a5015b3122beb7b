package netplane

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// frameType is the first byte of every frame.
type frameType uint8

// Frame types. A connection is dialed by the producing plane: OPEN, DATA, END
// and RESET flow from producer to consumer; CREDIT and RESET flow back. HELLO
// is exchanged once in each direction when the connection starts.
const (
	frameHello  frameType = 1 // payload: magic, version, sender's listen address
	frameOpen   frameType = 2 // payload: ChannelID; binds the stream id to a channel
	frameData   frameType = 3 // payload: one buffer of length-prefixed records; costs one credit
	frameEnd    frameType = 4 // no payload: end of stream
	frameCredit frameType = 5 // payload: uint32 credits granted
	frameReset  frameType = 6 // payload: reason; aborts the channel
	frameAuth   frameType = 7 // payload: HMAC proof of the internal secret (handshake only)
)

func (t frameType) String() string {
	switch t {
	case frameHello:
		return "HELLO"
	case frameOpen:
		return "OPEN"
	case frameData:
		return "DATA"
	case frameEnd:
		return "END"
	case frameCredit:
		return "CREDIT"
	case frameReset:
		return "RESET"
	case frameAuth:
		return "AUTH"
	default:
		return fmt.Sprintf("frameType(%d)", uint8(t))
	}
}

const (
	// headerLen is type(1) stream(4) length(4), big endian.
	headerLen = 9
	// maxFramePayload bounds DATA frames: one maximal record plus its prefix.
	maxFramePayload = MaxRecordBytes + binary.MaxVarintLen32
	// maxControlPayload bounds every frame other than DATA.
	maxControlPayload = 64 << 10
	helloMagic        = "TIDENP"
	protocolVersion   = 2 // 2: HELLO carries flags and a nonce; AUTH frames
	maxResetReason    = 1024
)

// frame is a decoded frame; payload aliases the buffer it was read into.
type frame struct {
	typ     frameType
	stream  uint32
	payload []byte
}

// appendHeader encodes a frame header.
func appendHeader(b []byte, t frameType, stream uint32, n int) []byte {
	b = append(b, byte(t))
	b = binary.BigEndian.AppendUint32(b, stream)
	return binary.BigEndian.AppendUint32(b, uint32(n))
}

// writeFrame writes one frame to w.
func writeFrame(w *bufio.Writer, t frameType, stream uint32, payload []byte) error {
	var hdr [headerLen]byte
	if _, err := w.Write(appendHeader(hdr[:0], t, stream, len(payload))); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// readFrame reads one frame. alloc supplies the payload buffer for DATA frames
// (so they can come from a pool); other payloads are read into scratch-owned
// memory that is valid until the next call. A frame of an unknown type or with
// a payload over its limit is a protocol error.
func readFrame(r *bufio.Reader, alloc func(n int) []byte) (frame, error) {
	var hdr [headerLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return frame{}, err
	}
	f := frame{typ: frameType(hdr[0]), stream: binary.BigEndian.Uint32(hdr[1:])}
	n := binary.BigEndian.Uint32(hdr[5:])
	limit := uint32(maxControlPayload)
	switch f.typ {
	case frameData:
		limit = maxFramePayload
	case frameHello, frameOpen, frameEnd, frameCredit, frameReset, frameAuth:
	default:
		return frame{}, fmt.Errorf("%w: unknown frame type %d on stream %d", ErrProtocol, hdr[0], f.stream)
	}
	if n > limit {
		return frame{}, fmt.Errorf("%w: %s frame on stream %d has %d payload bytes, expected at most %d", ErrProtocol, f.typ, f.stream, n, limit)
	}
	if f.typ == frameData {
		f.payload = alloc(int(n))
	} else {
		f.payload = make([]byte, n)
	}
	if _, err := io.ReadFull(r, f.payload); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return frame{}, fmt.Errorf("reading %d-byte %s payload on stream %d: %w", n, f.typ, f.stream, err)
	}
	return f, nil
}

// hello is the handshake payload: magic, version, flags, a nonce when the sender
// authenticates, and the sender's listen address.
type hello struct {
	version uint16
	nonce   []byte // helloNonceBytes when the sender holds the internal secret, else nil
	addr    string // the sender's listen address
}

const (
	helloFlagAuth   = 1
	helloNonceBytes = 16
)

func appendHello(b []byte, h hello) []byte {
	b = append(b, helloMagic...)
	b = binary.BigEndian.AppendUint16(b, h.version)
	if len(h.nonce) > 0 {
		b = append(b, helloFlagAuth)
		b = append(b, h.nonce...)
	} else {
		b = append(b, 0)
	}
	return append(b, h.addr...)
}

func decodeHello(b []byte) (hello, error) {
	if len(b) < len(helloMagic)+2 || string(b[:len(helloMagic)]) != helloMagic {
		return hello{}, fmt.Errorf("%w: HELLO payload does not start with %q", ErrProtocol, helloMagic)
	}
	h := hello{version: binary.BigEndian.Uint16(b[len(helloMagic):])}
	rest := b[len(helloMagic)+2:]
	if h.version != protocolVersion {
		return h, fmt.Errorf("%w: peer speaks protocol version %d, expected %d (a different tide build?)", ErrProtocol, h.version, protocolVersion)
	}
	if len(rest) < 1 {
		return h, fmt.Errorf("%w: HELLO payload has no flags byte", ErrProtocol)
	}
	flags := rest[0]
	rest = rest[1:]
	if flags&^helloFlagAuth != 0 {
		return h, fmt.Errorf("%w: HELLO flags %#x: unknown bits", ErrProtocol, flags)
	}
	if flags&helloFlagAuth != 0 {
		if len(rest) < helloNonceBytes {
			return h, fmt.Errorf("%w: HELLO announces authentication without a %d-byte nonce", ErrProtocol, helloNonceBytes)
		}
		h.nonce = append([]byte(nil), rest[:helloNonceBytes]...)
		rest = rest[helloNonceBytes:]
	}
	h.addr = string(rest)
	return h, nil
}

func appendCredit(b []byte, n int) []byte {
	return binary.BigEndian.AppendUint32(b, uint32(n))
}

func decodeCredit(b []byte) (int, error) {
	if len(b) != 4 {
		return 0, fmt.Errorf("%w: CREDIT payload is %d bytes, expected 4", ErrProtocol, len(b))
	}
	n := binary.BigEndian.Uint32(b)
	if n == 0 || n > math.MaxInt32 {
		return 0, fmt.Errorf("%w: CREDIT of %d, expected between 1 and %d", ErrProtocol, n, math.MaxInt32)
	}
	return int(n), nil
}

// resetReason truncates a reason to the size carried in a RESET frame.
func resetReason(reason string) []byte {
	if len(reason) > maxResetReason {
		reason = reason[:maxResetReason]
	}
	return []byte(reason)
}

// recordLen is the encoded size of a record of n bytes.
func recordLen(n int) int { return uvarintLen(uint64(n)) + n }

// uvarintLen is the length of v's uvarint encoding.
func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// appendRecord appends a uvarint length prefix and the record to buf.
func appendRecord(buf, record []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(record)))
	return append(buf, record...)
}

// nextRecord decodes the record at buf[pos:], returning it and the position
// after it.
func nextRecord(buf []byte, pos int) ([]byte, int, error) {
	n, k := binary.Uvarint(buf[pos:])
	if k <= 0 {
		return nil, pos, fmt.Errorf("%w: bad record length prefix at offset %d of a %d-byte buffer", ErrProtocol, pos, len(buf))
	}
	start := pos + k
	if n > uint64(len(buf)-start) {
		return nil, pos, fmt.Errorf("%w: record of %d bytes at offset %d overruns a %d-byte buffer", ErrProtocol, n, pos, len(buf))
	}
	end := start + int(n)
	return buf[start:end:end], end, nil
}
