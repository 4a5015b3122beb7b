package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// RequestTimeout bounds one REST request.
const RequestTimeout = 5 * time.Second

// Getter reads JSON from one AM's REST API: path is relative to its base URL.
type Getter func(path string, v any) error

// GetJSON reads url and decodes its JSON body into v; any status but 200 OK is an error
// naming the URL, the status and the body.
func GetJSON(ctx context.Context, url string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("GET %s: reading the body: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: decoding %s: %w", url, body, err)
	}
	return nil
}

// RESTGetter is a Getter for the REST API at base ("http://host:port").
func RESTGetter(base string) Getter {
	return func(path string, v any) error {
		return GetJSON(context.Background(), base+path, v)
	}
}

// Send makes one request with body ("": none) and header (name, value pairs) and returns
// the status, the response headers and the body; only ctx bounds it.
func Send(ctx context.Context, method, url, body string, header ...string) (int, http.Header, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, resp.Header, nil, fmt.Errorf("%s %s: reading the body: %w", method, url, err)
	}
	return resp.StatusCode, resp.Header, data, nil
}
