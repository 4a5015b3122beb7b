package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultAddress is where an AM's REST API listens unless rest.port says otherwise.
const DefaultAddress = "localhost:8081"

// maxAnswer bounds one answer of the AM.
const maxAnswer = 64 << 20

// Config says which AM a Client talks to and how.
type Config struct {
	// Address is "host:port" or a URL "http(s)://host:port[/prefix]".
	Address string
	// Token is sent as "Authorization: Bearer <token>" (the AM's rest.auth.token); an AM
	// bound off loopback requires it on every call that changes something.
	Token string
	// HTTPClient is used for every request; nil means one with a 30 s timeout.
	HTTPClient *http.Client
}

// Client calls one AM's REST API. It is safe for concurrent use.
type Client struct {
	base  string // "http://host:port"
	addr  string // as the user gave it, for messages
	token string
	http  *http.Client
}

// NewClient checks the address and returns a client; it sends nothing.
func NewClient(cfg Config) (*Client, error) {
	addr := cfg.Address
	if addr == "" {
		return nil, errors.New("the AM address is empty: expected host:port")
	}
	base := addr
	if !strings.Contains(addr, "://") {
		base = "http://" + addr
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("the AM address %q: expected host:port or http(s)://host:port", addr)
	}
	if u.Port() == "" {
		return nil, fmt.Errorf("the AM address %q: expected host:port (the AM's rest.port, default 8081)", addr)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{base: strings.TrimRight(u.Scheme+"://"+u.Host+u.Path, "/"), addr: addr, token: cfg.Token, http: hc}, nil
}

// Address is the AM's address as the Config gave it.
func (c *Client) Address() string { return c.addr }

// Raw sends body (JSON, unless nil) to path and returns the AM's answer as it is, for
// callers that print it or read fields this package does not know yet.
func (c *Client) Raw(ctx context.Context, method, path string, body any) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := c.do(ctx, method, path, body, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// do sends body (JSON, unless nil) and decodes a JSON answer into out (unless nil).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
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
		return &UnreachableError{Address: c.addr, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return &UnreachableError{Address: c.addr, Err: fmt.Errorf("reading the answer to %s %s: %w", method, path, err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &StatusError{Method: method, Path: path, Code: resp.StatusCode, Messages: errorMessages(data)}
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = append((*raw)[:0], data...)
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: the AM's answer is not the expected JSON (%w): %.200s", method, path, err, data)
	}
	return nil
}

// jobPath is /jobs/<id><rest>, the id escaped.
func jobPath(jobID, rest string) string {
	return "/jobs/" + url.PathEscape(jobID) + rest
}
