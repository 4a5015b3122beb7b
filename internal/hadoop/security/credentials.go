package security

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/internal/hadoop/hadooppb"
)

// TokenFileEnv names the environment variable pointing at a container's credentials file.
const TokenFileEnv = "HADOOP_TOKEN_FILE_LOCATION"

// Credentials file format bytes after the "HDTS" magic.
const (
	FormatWritable byte = 0
	FormatProtobuf byte = 1
)

const (
	credentialsMagic = "HDTS"
	// maxCredentialsFile bounds what ReadCredentials accepts; real files are a few hundred bytes.
	maxCredentialsFile = 16 << 20
)

// ErrNoToken is returned when a credentials file lacks the token asked for.
var ErrNoToken = errors.New("no such token in the credentials")

// Credentials is the content of a Hadoop credentials (token storage) file.
type Credentials struct {
	Tokens  []AliasedToken
	Secrets map[string][]byte
}

// AliasedToken is a token with the alias it is stored under.
type AliasedToken struct {
	Alias string
	Token
}

// ByKind returns the first token of the given kind.
func (c *Credentials) ByKind(kind string) (Token, error) {
	for _, t := range c.Tokens {
		if t.Kind == kind {
			return t.Token, nil
		}
	}
	kinds := make([]string, 0, len(c.Tokens))
	for _, t := range c.Tokens {
		kinds = append(kinds, t.Kind)
	}
	return Token{}, fmt.Errorf("token of kind %q: %w (kinds present: %q)", kind, ErrNoToken, kinds)
}

// AMRMToken returns the ApplicationMaster → ResourceManager token (kind YARN_AM_RM_TOKEN).
func (c *Credentials) AMRMToken() (Token, error) { return c.ByKind(KindAMRMToken) }

// LoadCredentialsFile reads the credentials file at path.
func LoadCredentialsFile(path string) (*Credentials, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening credentials file: %w", err)
	}
	defer f.Close()
	c, err := ReadCredentials(f)
	if err != nil {
		return nil, fmt.Errorf("credentials file %s: %w", path, err)
	}
	return c, nil
}

// LoadCredentialsFromEnv reads the file named by $HADOOP_TOKEN_FILE_LOCATION.
func LoadCredentialsFromEnv() (*Credentials, error) {
	p := os.Getenv(TokenFileEnv)
	if p == "" {
		return nil, fmt.Errorf("%s is not set: not running in a YARN container?", TokenFileEnv)
	}
	return LoadCredentialsFile(p)
}

// ReadCredentials decodes a credentials stream in either format Hadoop writes.
func ReadCredentials(r io.Reader) (*Credentials, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxCredentialsFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading credentials: %w", err)
	}
	if len(data) > maxCredentialsFile {
		return nil, fmt.Errorf("credentials larger than %d bytes", maxCredentialsFile)
	}
	return ParseCredentials(data)
}

// ParseCredentials decodes a credentials file held in memory.
func ParseCredentials(data []byte) (*Credentials, error) {
	if len(data) < len(credentialsMagic)+1 {
		return nil, fmt.Errorf("credentials: %d bytes, too short for the %q header and format byte", len(data), credentialsMagic)
	}
	if string(data[:4]) != credentialsMagic {
		return nil, fmt.Errorf("credentials: magic %q, want %q", data[:4], credentialsMagic)
	}
	switch format := data[4]; format {
	case FormatWritable:
		return parseWritable(bytes.NewReader(data[5:]))
	case FormatProtobuf:
		return parseProtobuf(data[5:])
	default:
		return nil, fmt.Errorf("credentials: unknown format %d (want %d writable or %d protobuf)", format, FormatWritable, FormatProtobuf)
	}
}

func parseWritable(r *bytes.Reader) (*Credentials, error) {
	c := &Credentials{Secrets: map[string][]byte{}}
	n, err := readCount(r, "token count")
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		var t AliasedToken
		fields := []struct {
			name string
			dst  *[]byte
			str  *string
		}{
			{"alias", nil, &t.Alias},
			{"identifier", &t.Identifier, nil},
			{"password", &t.Password, nil},
			{"kind", nil, &t.Kind},
			{"service", nil, &t.Service},
		}
		for _, f := range fields {
			b, err := readBytes(r)
			if err != nil {
				return nil, fmt.Errorf("credentials: token %d %s: %w", i, f.name, err)
			}
			if f.dst != nil {
				*f.dst = b
			} else {
				*f.str = string(b)
			}
		}
		c.Tokens = append(c.Tokens, t)
	}
	n, err = readCount(r, "secret count")
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		alias, err := readBytes(r)
		if err != nil {
			return nil, fmt.Errorf("credentials: secret %d alias: %w", i, err)
		}
		val, err := readBytes(r)
		if err != nil {
			return nil, fmt.Errorf("credentials: secret %d (%q) value: %w", i, alias, err)
		}
		c.Secrets[string(alias)] = val
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("credentials: %d trailing bytes after %d tokens and %d secrets", r.Len(), len(c.Tokens), len(c.Secrets))
	}
	return c, nil
}

func readCount(r *bytes.Reader, what string) (int, error) {
	n, err := readVInt(r)
	if err != nil {
		return 0, fmt.Errorf("credentials: %s: %w", what, eofUnexpected(err))
	}
	// Each entry takes at least 2 bytes, which bounds any honest count.
	if n < 0 || int(n) > r.Len() {
		return 0, fmt.Errorf("credentials: %s %d is impossible with %d bytes left", what, n, r.Len())
	}
	return int(n), nil
}

// readBytes reads a vint length and that many bytes (Hadoop Text and byte arrays alike).
func readBytes(r *bytes.Reader) ([]byte, error) {
	n, err := readVInt(r)
	if err != nil {
		return nil, eofUnexpected(err)
	}
	if n < 0 || int(n) > r.Len() {
		return nil, fmt.Errorf("length %d with %d bytes left", n, r.Len())
	}
	b := make([]byte, n)
	_, _ = io.ReadFull(r, b)
	return b, nil
}

func eofUnexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func parseProtobuf(data []byte) (*Credentials, error) {
	n, k := protowire.ConsumeVarint(data)
	if k < 0 {
		return nil, fmt.Errorf("credentials: protobuf length prefix: %w", protowire.ParseError(k))
	}
	data = data[k:]
	if n != uint64(len(data)) {
		return nil, fmt.Errorf("credentials: protobuf body claims %d bytes, file has %d", n, len(data))
	}
	var p hadooppb.CredentialsProto
	if err := proto.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("credentials: decoding protobuf body: %w", err)
	}
	c := &Credentials{Secrets: map[string][]byte{}}
	for _, kv := range p.GetTokens() {
		c.Tokens = append(c.Tokens, AliasedToken{Alias: kv.GetAlias(), Token: TokenFromProto(kv.GetToken())})
	}
	for _, kv := range p.GetSecrets() {
		c.Secrets[kv.GetAlias()] = kv.GetSecret()
	}
	return c, nil
}

// AppendWritable encodes c in the Writable format (format byte 0), the one NodeManagers
// write. Secrets come out in map order; Hadoop's readers do not depend on the order.
func (c *Credentials) AppendWritable(dst []byte) []byte {
	dst = append(dst, credentialsMagic...)
	dst = append(dst, FormatWritable)
	dst = appendVLong(dst, int64(len(c.Tokens)))
	for _, t := range c.Tokens {
		for _, b := range [][]byte{[]byte(t.Alias), t.Identifier, t.Password, []byte(t.Kind), []byte(t.Service)} {
			dst = appendVLong(dst, int64(len(b)))
			dst = append(dst, b...)
		}
	}
	dst = appendVLong(dst, int64(len(c.Secrets)))
	for alias, v := range c.Secrets {
		dst = appendVLong(dst, int64(len(alias)))
		dst = append(dst, alias...)
		dst = appendVLong(dst, int64(len(v)))
		dst = append(dst, v...)
	}
	return dst
}
