package ipc

import (
	"reflect"
	"testing"
)

func TestParseDigestChallenge(t *testing.T) {
	tests := []struct {
		in      string
		want    *digestChallenge
		wantErr bool
	}{
		{
			in:   `realm="default",nonce="abc+/=",qop="auth",charset=utf-8,algorithm=md5-sess`,
			want: &digestChallenge{Realm: "default", Nonce: "abc+/=", QOP: []string{"auth"}, Charset: "utf-8", Algorithm: "md5-sess"},
		},
		{
			in: `realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth,auth-int, auth-conf",cipher="3des,rc4",algorithm=md5-sess,charset=utf-8`,
			want: &digestChallenge{Realm: "elwood.innosoft.com", Nonce: "OA6MG9tEQGm2hh", QOP: []string{"auth", "auth-int", "auth-conf"},
				Charset: "utf-8", Algorithm: "md5-sess", Cipher: []string{"3des", "rc4"}},
		},
		{
			in:   ` nonce = "a\"b\\c" , algorithm = MD5-SESS , unknown=thing`,
			want: &digestChallenge{Nonce: `a"b\c`, QOP: []string{"auth"}, Algorithm: "MD5-SESS"},
		},
		{in: `realm="a",realm="b",nonce="n",algorithm=md5-sess`, want: &digestChallenge{Realm: "a", Nonce: "n", QOP: []string{"auth"}, Algorithm: "md5-sess"}},
		{in: `realm="default",qop="auth",algorithm=md5-sess`, wantErr: true}, // no nonce
		{in: `nonce="n"`, wantErr: true},                              // no algorithm
		{in: `nonce="n",algorithm=md5`, wantErr: true},                // wrong algorithm
		{in: `nonce="n,algorithm=md5-sess`, wantErr: true},            // unterminated quote
		{in: `nonce="n"x,algorithm=md5-sess`, wantErr: true},          // junk after quote
		{in: `nonce`, wantErr: true},                                  // no '='
		{in: `nonce="a",nonce="b",algorithm=md5-sess`, wantErr: true}, // duplicate
		{in: ``, wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseDigestChallenge(tt.in)
		if tt.wantErr {
			if err == nil {
				t.Errorf("parseDigestChallenge(%q) = %+v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseDigestChallenge(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseDigestChallenge(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func FuzzParseDigestChallenge(f *testing.F) {
	f.Add(`realm="default",nonce="abc",qop="auth",charset=utf-8,algorithm=md5-sess`)
	f.Add(`nonce="a\"b",algorithm=md5-sess,cipher="rc4"`)
	f.Add(`,,,=`)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseDigestChallenge(s)
		if err != nil {
			return
		}
		if c.Nonce == "" || len(c.QOP) == 0 {
			t.Fatalf("accepted %q without nonce or qop: %+v", s, c)
		}
	})
}
