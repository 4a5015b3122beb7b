package rest

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
)

// Auth guards the mutating endpoints. On a loopback address the API is open (only
// local users reach it); on any other address every PUT, POST, PATCH and DELETE must carry
// "Authorization: Bearer <token>". GETs stay open.
type Auth struct {
	addr     string // where the API listens, for the 401 message
	required bool
	token    []byte
}

// NewAuth decides whether the listener needs a token and loads it. Bound off loopback
// without a token is a configuration error: an open API would let anyone cancel the job.
func NewAuth(ln net.Listener, token, tokenFile string) (*Auth, error) {
	a := &Auth{}
	if ln == nil {
		return a, nil
	}
	a.addr = ln.Addr().String()
	token = strings.TrimSpace(token)
	if token != "" && tokenFile != "" {
		return nil, errors.New("rest.auth.token and rest.auth.token-file are both set: set only one of the two")
	}
	if tokenFile != "" {
		data, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("rest.auth.token-file %s: %w", tokenFile, err)
		}
		first, _, _ := strings.Cut(string(data), "\n")
		if token = strings.TrimSpace(first); token == "" {
			return nil, fmt.Errorf("rest.auth.token-file %s: the first line is empty: expected the bearer token", tokenFile)
		}
	}
	a.token = []byte(token)
	a.required = token != "" || !isLoopback(ln.Addr())
	if a.required && token == "" {
		return nil, fmt.Errorf("rest.bind-address: the REST API listens on %s, which is not a loopback address, "+
			"and no token is configured: set rest.auth.token-file (or rest.auth.token) so that only holders of the "+
			"token can change the job, or bind to 127.0.0.1", a.addr)
	}
	return a, nil
}

// isLoopback reports whether addr accepts connections from this machine only.
func isLoopback(addr net.Addr) bool {
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

// require wraps a mutating handler with the token check.
func (a *Auth) require(h http.HandlerFunc) http.HandlerFunc {
	if !a.required {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if a.allowed(r.Header.Get("Authorization")) {
			h(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="tide"`)
		writeError(w, http.StatusUnauthorized, fmt.Sprintf("%s %s needs authentication: the REST API listens on %s, "+
			"so changes need the header 'Authorization: Bearer <token>' with the token from rest.auth.token-file "+
			"(or rest.auth.token) of the AM",
			r.Method, r.URL.Path, a.addr))
	}
}

// allowed compares the presented bearer token in constant time.
func (a *Auth) allowed(header string) bool {
	scheme, presented, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(presented)), a.token) == 1
}
