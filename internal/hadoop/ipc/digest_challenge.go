package ipc

import (
	"fmt"
	"strings"
)

// digestChallenge is a parsed DIGEST-MD5 server challenge (RFC 2831 §2.1.1).
type digestChallenge struct {
	Realm     string
	Nonce     string
	QOP       []string // offered qop values; RFC default "auth"
	Charset   string
	Algorithm string
	Cipher    []string
}

// parseDigestChallenge parses `key=value` / `key="quoted"` pairs separated by commas. Quoted
// values may contain commas and backslash escapes. nonce and algorithm=md5-sess are required,
// as RFC 2831 demands; an unknown directive is ignored.
func parseDigestChallenge(s string) (*digestChallenge, error) {
	c := &digestChallenge{}
	seen := map[string]bool{}
	rest := s
	for {
		rest = strings.TrimLeft(rest, " \t,")
		if rest == "" {
			break
		}
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			return nil, fmt.Errorf("digest challenge %q: directive without '=' at %q", s, rest)
		}
		key := strings.ToLower(strings.TrimSpace(rest[:eq]))
		rest = strings.TrimLeft(rest[eq+1:], " \t")
		var val string
		if strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			i := 1
			closed := false
			for ; i < len(rest); i++ {
				ch := rest[i]
				if ch == '\\' && i+1 < len(rest) {
					i++
					b.WriteByte(rest[i])
					continue
				}
				if ch == '"' {
					closed = true
					break
				}
				b.WriteByte(ch)
			}
			if !closed {
				return nil, fmt.Errorf("digest challenge %q: unterminated quoted value of %q", s, key)
			}
			val = b.String()
			rest = rest[i+1:]
		} else {
			end := strings.IndexByte(rest, ',')
			if end < 0 {
				end = len(rest)
			}
			val = strings.TrimSpace(rest[:end])
			rest = rest[end:]
		}
		rest = strings.TrimLeft(rest, " \t")
		if rest != "" && rest[0] != ',' {
			return nil, fmt.Errorf("digest challenge %q: expected ',' after %q, found %q", s, key, rest)
		}
		switch key {
		case "realm", "nonce", "charset", "algorithm", "qop", "cipher":
			// RFC 2831 allows several realms; every other directive at most once.
			if seen[key] && key != "realm" {
				return nil, fmt.Errorf("digest challenge %q: %s given twice", s, key)
			}
			seen[key] = true
		}
		switch key {
		case "realm":
			if c.Realm == "" {
				c.Realm = val
			}
		case "nonce":
			c.Nonce = val
		case "charset":
			c.Charset = val
		case "algorithm":
			c.Algorithm = val
		case "qop":
			c.QOP = splitList(val)
		case "cipher":
			c.Cipher = splitList(val)
		}
	}
	if c.Nonce == "" {
		return nil, fmt.Errorf("digest challenge %q: no nonce", s)
	}
	if !strings.EqualFold(c.Algorithm, "md5-sess") {
		return nil, fmt.Errorf("digest challenge %q: algorithm %q, want md5-sess", s, c.Algorithm)
	}
	if len(c.QOP) == 0 {
		c.QOP = []string{"auth"}
	}
	return c, nil
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
