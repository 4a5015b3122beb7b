package ipc

import (
	"encoding/hex"
	"strings"
	"testing"
)

func TestDigestResponseVectors(t *testing.T) {
	// Hadoop vector: the AMRMToken of the reference's 69-byte container_tokens sample, with
	// fixed nonces; expected values computed independently with Python's hashlib.
	hadoopID, _ := hex.DecodeString("0a0d0a09080d109f81d5b2f32d100110fca7e6b103")
	hadoopPW, _ := hex.DecodeString("b1aabc2cb0a9dfb89a17ea5a01bfe921988051a1")
	d := digestMD5{username: b64(hadoopID), password: b64(hadoopPW)}
	if d.username != "Cg0KCQgNEJ+B1bLzLRABEPyn5rED" || d.password != "saq8LLCp37iaF+paAb/pIZiAUaE=" {
		t.Fatalf("base64 user/password = %q/%q", d.username, d.password)
	}
	tests := []struct {
		name                               string
		user, realm, pw, nonce, cnonce, a2 string
		want                               string
	}{
		{"rfc2831 response", "chris", "elwood.innosoft.com", "secret", "OA6MG9tEQGm2hh", "OA6MHXh6VqTrRk",
			"AUTHENTICATE:imap/elwood.innosoft.com", "d388dad90d4bbd760a152321f2143af7"},
		{"rfc2831 rspauth", "chris", "elwood.innosoft.com", "secret", "OA6MG9tEQGm2hh", "OA6MHXh6VqTrRk",
			":imap/elwood.innosoft.com", "ea40f60335c427b5527b84dbabcdfffd"},
		{"hadoop token response", d.username, "default", d.password, "dGlkZS10ZXN0LW5vbmNl", "Y2xpZW50LW5vbmNlLTE=",
			"AUTHENTICATE:/default", "c1fa4f5faedd6dd7abd4ef69114c4bb8"},
		{"hadoop token rspauth", d.username, "default", d.password, "dGlkZS10ZXN0LW5vbmNl", "Y2xpZW50LW5vbmNlLTE=",
			":/default", "9bb527ec251ff8c0cf408a1f790c9e4d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := digestResponse(tt.user, tt.realm, tt.pw, tt.nonce, tt.cnonce, "00000001", "auth", tt.a2)
			if got != tt.want {
				t.Errorf("digestResponse = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDigestMD5RespondAndVerify(t *testing.T) {
	id, _ := hex.DecodeString("0a0d0a09080d109f81d5b2f32d100110fca7e6b103")
	pw, _ := hex.DecodeString("b1aabc2cb0a9dfb89a17ea5a01bfe921988051a1")
	d, err := newDigestMD5(id, pw, "", "default")
	if err != nil {
		t.Fatal(err)
	}
	d.cnonce = "Y2xpZW50LW5vbmNlLTE="
	got, err := d.respond([]byte(`realm="default",nonce="dGlkZS10ZXN0LW5vbmNl",qop="auth",charset=utf-8,algorithm=md5-sess`))
	if err != nil {
		t.Fatal(err)
	}
	want := `charset=utf-8,username="Cg0KCQgNEJ+B1bLzLRABEPyn5rED",realm="default",nonce="dGlkZS10ZXN0LW5vbmNl",` +
		`nc=00000001,cnonce="Y2xpZW50LW5vbmNlLTE=",digest-uri="/default",maxbuf=65536,` +
		`response=c1fa4f5faedd6dd7abd4ef69114c4bb8,qop=auth`
	if string(got) != want {
		t.Errorf("respond =\n%s\nwant\n%s", got, want)
	}
	if err := d.verify([]byte("rspauth=9bb527ec251ff8c0cf408a1f790c9e4d")); err != nil {
		t.Errorf("verify(correct rspauth) = %v", err)
	}
	for _, bad := range []string{"rspauth=9bb527ec251ff8c0cf408a1f790c9e4e", "rspauth=", "9bb527ec251ff8c0cf408a1f790c9e4d"} {
		if err := d.verify([]byte(bad)); err == nil {
			t.Errorf("verify(%q) succeeded", bad)
		}
	}
}

func TestDigestMD5RefusesNonAuthQOP(t *testing.T) {
	d, err := newDigestMD5([]byte("id"), []byte("pw"), "", "default")
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.respond([]byte(`realm="default",nonce="n",qop="auth-conf",algorithm=md5-sess`))
	if err == nil || !strings.Contains(err.Error(), "qop=auth") {
		t.Fatalf("respond with qop auth-conf = %v, want the qop error", err)
	}
	if err := d.verify([]byte("rspauth=00")); err == nil {
		t.Fatal("verify before any challenge succeeded")
	}
}
