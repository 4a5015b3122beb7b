package clusterauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
)

// Configuration keys and sources of the secret, named in every message.
const (
	KeySecret     = "security.internal.secret"
	KeySecretFile = "security.internal.secret-file"
	// EnvSecret is read when neither key is set (standalone scripts, containers).
	EnvSecret = "TIDE_INTERNAL_SECRET"
	// CredentialsAlias is the secret's alias in a YARN container's credentials file.
	CredentialsAlias = "tide.internal.secret"
	// MinSecretBytes is the shortest secret accepted.
	MinSecretBytes = 16
)

// Secret is the shared secret; empty means none is configured.
type Secret []byte

// Set reports whether a secret is configured.
func (s Secret) Set() bool { return len(s) > 0 }

// Source says where a secret came from, for logs (never the secret itself).
type Source string

// Load returns the secret from the first source that has one: the file named by
// security.internal.secret-file, security.internal.secret, then $TIDE_INTERNAL_SECRET.
// Setting both keys is an error, as is a file that is empty, shorter than MinSecretBytes, or
// readable by group or others.
func Load(value, file string) (Secret, Source, error) {
	value = strings.TrimSpace(value)
	if value != "" && file != "" {
		return nil, "", fmt.Errorf("%s and %s are both set: set only one of the two", KeySecret, KeySecretFile)
	}
	var src Source
	switch {
	case file != "":
		st, err := os.Stat(file)
		if err != nil {
			return nil, "", fmt.Errorf("%s %s: %w", KeySecretFile, file, err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			return nil, "", fmt.Errorf("%s %s: the file is readable by group or others (mode %04o): chmod 600 it", KeySecretFile, file, st.Mode().Perm())
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, "", fmt.Errorf("%s %s: %w", KeySecretFile, file, err)
		}
		first, _, _ := strings.Cut(string(data), "\n")
		value, src = strings.TrimSpace(first), Source(KeySecretFile+" "+file)
		if value == "" {
			return nil, "", fmt.Errorf("%s %s: the first line is empty: expected the secret", KeySecretFile, file)
		}
	case value != "":
		src = KeySecret
	default:
		value, src = strings.TrimSpace(os.Getenv(EnvSecret)), "$"+EnvSecret
	}
	if value == "" {
		return nil, "", nil
	}
	if len(value) < MinSecretBytes {
		return nil, "", fmt.Errorf("the internal secret from %s is %d bytes: at least %d are needed", src, len(value), MinSecretBytes)
	}
	return Secret(value), src, nil
}

// Generate returns a new random secret (tide run on YARN makes one per application).
func Generate() (Secret, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("generate the internal secret: %w", err)
	}
	return Secret(fmt.Sprintf("%x", b)), nil
}

// ErrSecretRequired is wrapped by Require's error.
var ErrSecretRequired = errors.New("an internal secret is required")

// Require refuses to serve on addr without a secret unless addr is a loopback address;
// what names the server and the key that sets its address.
func Require(addr net.Addr, s Secret, what string) error {
	if s.Set() || IsLoopback(addr) {
		return nil
	}
	return fmt.Errorf("%s listens on %s, which is not a loopback address: %w, so that only holders of it can join the job: "+
		"set %s (a file readable only by its owner) or %s, or bind to 127.0.0.1", what, addr, ErrSecretRequired, KeySecretFile, KeySecret)
}

// IsLoopback reports whether addr accepts connections from this machine only.
func IsLoopback(addr net.Addr) bool {
	switch ad := addr.(type) {
	case *net.TCPAddr:
		return ad.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Proof is HMAC-SHA256(secret, label | parts...), each part length-prefixed so that no two
// different inputs give the same message.
func (s Secret) Proof(label string, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, s)
	write := func(b []byte) {
		var n [4]byte
		n[0], n[1], n[2], n[3] = byte(len(b)>>24), byte(len(b)>>16), byte(len(b)>>8), byte(len(b))
		m.Write(n[:])
		m.Write(b)
	}
	write([]byte(label))
	for _, p := range parts {
		write(p)
	}
	return m.Sum(nil)
}

// Verify reports whether proof is s.Proof(label, parts...), in constant time.
func (s Secret) Verify(proof []byte, label string, parts ...[]byte) bool {
	return s.Set() && hmac.Equal(proof, s.Proof(label, parts...))
}

// Nonce returns n random bytes.
func Nonce(n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("random nonce: %w", err)
	}
	return b, nil
}
