package am

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAMRefusesOpenAPIOffLoopback(t *testing.T) {
	_, err := newRESTAM(t, restAMOptions{bind: "0.0.0.0"})
	if err == nil || !strings.Contains(err.Error(), "rest.auth.token") {
		t.Fatalf("New bound to 0.0.0.0 without a token = %v, want an error naming rest.auth.token", err)
	}
}

func TestRESTMutatingCallsNeedTokenOffLoopback(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("letmein\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startRESTAM(t, restAMOptions{bind: "0.0.0.0", tokenFile: file})
	block := `{"action":"MARK_BLOCKED","cause":"test"}`
	refused := []struct {
		name   string
		header []string
	}{
		{"no header", nil},
		{"wrong token", []string{"Authorization", "Bearer letmeout"}},
		{"wrong scheme", []string{"Authorization", "Basic letmein"}},
		{"empty bearer", []string{"Authorization", "Bearer "}},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			for _, m := range []struct{ method, path, body string }{
				{"PUT", "/blocklist/nodes/n1", block},
				{"DELETE", "/blocklist/node/n1", ""},
				{"PATCH", jobPath + "?mode=cancel", ""},
				{"POST", jobPath + "/checkpoints", ""},
				{"PUT", jobPath + "/resource-requirements", "{}"},
			} {
				code, h, body := r.call(t, m.method, m.path, m.body, c.header...)
				if code != http.StatusUnauthorized {
					t.Fatalf("%s %s = %d %s, want 401", m.method, m.path, code, body)
				}
				if !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("WWW-Authenticate = %q", h.Get("WWW-Authenticate"))
				}
				if msg := strings.Join(errorsOf(t, body), " "); !strings.Contains(msg, "Authorization: Bearer") || !strings.Contains(msg, "rest.auth.token-file") {
					t.Errorf("401 %q does not say how to authenticate", msg)
				}
			}
		})
	}
	if code, _, body := r.call(t, "GET", "/blocklist", ""); code != http.StatusOK {
		t.Fatalf("GET without a token = %d %s, want 200 (reads stay open)", code, body)
	}
	if code, _, body := r.call(t, "PUT", "/blocklist/nodes/n1", block, "Authorization", "Bearer letmein"); code != http.StatusCreated {
		t.Fatalf("PUT with the token = %d %s, want 201", code, body)
	}
	if code, _, body := r.call(t, "DELETE", "/blocklist/node/n1", "", "authorization", "bearer letmein"); code != http.StatusOK {
		t.Fatalf("DELETE with the token = %d %s, want 200", code, body)
	}
}
