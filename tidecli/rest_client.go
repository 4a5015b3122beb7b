package tidecli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// restClient calls one AM's REST API.
type restClient struct {
	base  string // "http://host:port"
	addr  string // as the user gave it, for messages
	token string
	http  *http.Client
}

// newRESTClient accepts "host:port" or a URL ("http://host:port", "https://host:port").
func newRESTClient(addr, token string) (*restClient, error) {
	if addr == "" {
		return nil, usagef("-m/--jobmanager is empty: expected host:port")
	}
	base := addr
	if !strings.Contains(addr, "://") {
		base = "http://" + addr
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, usagef("-m/--jobmanager %q: expected host:port or http(s)://host:port", addr)
	}
	if u.Port() == "" {
		return nil, usagef("-m/--jobmanager %q: expected host:port (the AM's rest.port, default 8081)", addr)
	}
	return &restClient{base: strings.TrimRight(u.Scheme+"://"+u.Host+u.Path, "/"), addr: addr, token: token,
		http: &http.Client{Timeout: 30 * time.Second}}, nil
}

// unreachableError: nothing answered at the address; it exits 3.
type unreachableError struct {
	addr string
	err  error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("no AM at %s: is it running? pass -m host:port or set TIDE_JOBMANAGER (%v)", e.addr, e.err)
}

func (e *unreachableError) Unwrap() error { return e.err }

// apiError is an answer of the AM other than 2xx; it exits 1.
type apiError struct {
	method, path string
	status       int
	messages     []string
}

func (e *apiError) Error() string {
	msg := strings.Join(e.messages, "; ")
	if msg == "" {
		msg = http.StatusText(e.status)
	}
	hint := ""
	switch e.status {
	case http.StatusUnauthorized, http.StatusForbidden:
		hint = " (pass --token or set TIDE_REST_TOKEN to the AM's rest.auth.token)"
	case http.StatusNotFound:
		if strings.HasPrefix(msg, "Not found") || strings.Contains(msg, "Unable to handle") {
			hint = " (is this a tide AM of a matching version?)"
		}
	}
	return fmt.Sprintf("%s %s: the AM answered %d: %s%s", e.method, e.path, e.status, msg, hint)
}

// do sends body (JSON, unless nil) and decodes a JSON answer into out (unless nil).
func (c *restClient) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s: encode request: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", method, path, context.Cause(ctx))
		}
		return &unreachableError{addr: c.addr, err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return &unreachableError{addr: c.addr, err: fmt.Errorf("reading the answer to %s %s: %w", method, path, err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &apiError{method: method, path: path, status: resp.StatusCode, messages: errorMessages(data)}
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: the AM's answer is not the expected JSON (%w): %.200s", method, path, err, data)
	}
	return nil
}

// errorMessages reads Flink's error body {"errors": [...]}, or returns the text as is.
func errorMessages(data []byte) []string {
	var body struct {
		Errors []string `json:"errors"`
	}
	if err := json.Unmarshal(data, &body); err == nil && len(body.Errors) > 0 {
		return body.Errors
	}
	if s := strings.TrimSpace(string(data)); s != "" {
		return []string{s}
	}
	return nil
}
