package security

import (
	"fmt"

	"github.com/tidestream/tide/internal/hadoop/hadooppb"
)

// Token kinds YARN hands to an ApplicationMaster.
const (
	KindAMRMToken      = "YARN_AM_RM_TOKEN"
	KindNMToken        = "NMToken"
	KindContainerToken = "ContainerToken"
)

// Token is a Hadoop token: an opaque identifier, its password (an HMAC the server can
// recompute from the identifier), a kind and the service it is for.
type Token struct {
	Identifier []byte
	Password   []byte
	Kind       string
	Service    string
}

// String names the token without revealing its password.
func (t Token) String() string {
	return fmt.Sprintf("token{kind=%q service=%q id=%d bytes}", t.Kind, t.Service, len(t.Identifier))
}

// TokenFromProto converts the wire form; a nil proto gives the zero Token.
func TokenFromProto(p *hadooppb.TokenProto) Token {
	if p == nil {
		return Token{}
	}
	return Token{Identifier: p.GetIdentifier(), Password: p.GetPassword(), Kind: p.GetKind(), Service: p.GetService()}
}

// Proto converts t to the wire form.
func (t Token) Proto() *hadooppb.TokenProto {
	id, pw := t.Identifier, t.Password
	if id == nil {
		id = []byte{}
	}
	if pw == nil {
		pw = []byte{}
	}
	return &hadooppb.TokenProto{Identifier: id, Password: pw, Kind: &t.Kind, Service: &t.Service}
}
