package ipc

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// digestMD5 is the client side of SASL DIGEST-MD5 (RFC 2831) as Hadoop's TOKEN method uses
// it: the user name and password are the base64 of the token's identifier and password,
// digest-uri is protocol "/" serverId, and only qop=auth is supported (no wrapping).
type digestMD5 struct {
	username, password string
	protocol, serverID string
	cnonce             string

	// set by respond, checked by verify
	challenge *digestChallenge
}

// errDigestNoAuthQOP: the server insists on integrity or privacy (hadoop.rpc.protection
// other than authentication), which needs SASL wrapping tide does not implement.
var errDigestNoAuthQOP = errors.New("server does not offer qop=auth (hadoop.rpc.protection must be authentication)")

func newDigestMD5(identifier, password []byte, protocol, serverID string) (*digestMD5, error) {
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, fmt.Errorf("generating a cnonce: %w", err)
	}
	return &digestMD5{
		username: base64.StdEncoding.EncodeToString(identifier),
		password: base64.StdEncoding.EncodeToString(password),
		protocol: protocol,
		serverID: serverID,
		cnonce:   base64.StdEncoding.EncodeToString(nonce[:]),
	}, nil
}

func (d *digestMD5) digestURI() string { return d.protocol + "/" + d.serverID }

// respond answers the server's challenge.
func (d *digestMD5) respond(challenge []byte) ([]byte, error) {
	c, err := parseDigestChallenge(string(challenge))
	if err != nil {
		return nil, err
	}
	hasAuth := false
	for _, q := range c.QOP {
		if q == "auth" {
			hasAuth = true
		}
	}
	if !hasAuth {
		return nil, fmt.Errorf("DIGEST-MD5 qop %q: %w", c.QOP, errDigestNoAuthQOP)
	}
	d.challenge = c
	resp := digestResponse(d.username, c.Realm, d.password, c.Nonce, d.cnonce, "00000001", "auth", "AUTHENTICATE:"+d.digestURI())
	var b strings.Builder
	if c.Charset != "" {
		b.WriteString("charset=" + c.Charset + ",")
	}
	fmt.Fprintf(&b, `username="%s",realm="%s",nonce="%s",nc=00000001,cnonce="%s",digest-uri="%s",maxbuf=65536,response=%s,qop=auth`,
		quoteEscape(d.username), quoteEscape(c.Realm), quoteEscape(c.Nonce), quoteEscape(d.cnonce), quoteEscape(d.digestURI()), resp)
	return []byte(b.String()), nil
}

// verify checks the server's final "rspauth=<hex>", proving it knew the password too.
func (d *digestMD5) verify(final []byte) error {
	if d.challenge == nil {
		return errors.New("DIGEST-MD5: server finished before any challenge was answered")
	}
	got, ok := strings.CutPrefix(string(final), "rspauth=")
	if !ok {
		return fmt.Errorf("DIGEST-MD5: final server message %q is not rspauth=…", final)
	}
	c := d.challenge
	want := digestResponse(d.username, c.Realm, d.password, c.Nonce, d.cnonce, "00000001", "auth", ":"+d.digestURI())
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return fmt.Errorf("DIGEST-MD5: server rspauth %q does not match (server does not know the token's password)", got)
	}
	return nil
}

// digestResponse is RFC 2831's response-value for algorithm md5-sess:
// HEX(KD(HEX(H(A1)), nonce ":" nc ":" cnonce ":" qop ":" HEX(H(A2)))), where
// A1 = H(user ":" realm ":" password) ":" nonce ":" cnonce and a2 is the whole A2 string.
func digestResponse(user, realm, password, nonce, cnonce, nc, qop, a2 string) string {
	h := md5.Sum([]byte(user + ":" + realm + ":" + password))
	a1 := append(h[:], []byte(":"+nonce+":"+cnonce)...)
	ha1 := md5.Sum(a1)
	ha2 := md5.Sum([]byte(a2))
	kd := md5.Sum([]byte(hex.EncodeToString(ha1[:]) + ":" + nonce + ":" + nc + ":" + cnonce + ":" + qop + ":" + hex.EncodeToString(ha2[:])))
	return hex.EncodeToString(kd[:])
}

func quoteEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}
