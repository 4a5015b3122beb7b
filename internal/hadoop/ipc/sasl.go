package ipc

import (
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/internal/hadoop/hadooppb"
	"github.com/tidestream/tide/internal/hadoop/security"
)

const (
	saslMethodToken   = "TOKEN"
	saslMechanismMD5  = "DIGEST-MD5"
	maxSASLRoundTrips = 8
)

// saslExchange runs Hadoop's SASL negotiation for the TOKEN method over rw, after the preamble
// with auth byte 0xDF has been written. It returns once the server says SUCCESS.
func saslExchange(rw io.ReadWriter, tok security.Token) error {
	if err := writeSASL(rw, &hadooppb.RpcSaslProto{State: hadooppb.RpcSaslProto_NEGOTIATE.Enum()}); err != nil {
		return err
	}
	var mech *digestMD5
	for round := 0; round < maxSASLRoundTrips; round++ {
		msg, err := readSASL(rw)
		if err != nil {
			return err
		}
		switch msg.GetState() {
		case hadooppb.RpcSaslProto_NEGOTIATE:
			if mech != nil {
				return fmt.Errorf("sasl: server sent NEGOTIATE twice")
			}
			auth, err := pickTokenAuth(msg.GetAuths())
			if err != nil {
				return err
			}
			mech, err = newDigestMD5(tok.Identifier, tok.Password, auth.GetProtocol(), auth.GetServerId())
			if err != nil {
				return fmt.Errorf("sasl: %w", err)
			}
			var token []byte
			if ch := auth.GetChallenge(); len(ch) > 0 {
				if token, err = mech.respond(ch); err != nil {
					return fmt.Errorf("sasl: answering the negotiated challenge: %w", err)
				}
			}
			// The server checks that the chosen auth equals one it advertised, field presence
			// included, in its copy without the challenge.
			chosen := &hadooppb.RpcSaslProto_SaslAuth{
				Method:    auth.Method,
				Mechanism: auth.Mechanism,
				Protocol:  auth.Protocol,
				ServerId:  auth.ServerId,
			}
			if err := writeSASL(rw, &hadooppb.RpcSaslProto{
				State: hadooppb.RpcSaslProto_INITIATE.Enum(),
				Token: token,
				Auths: []*hadooppb.RpcSaslProto_SaslAuth{chosen},
			}); err != nil {
				return err
			}
		case hadooppb.RpcSaslProto_CHALLENGE:
			if mech == nil {
				return fmt.Errorf("sasl: CHALLENGE before NEGOTIATE")
			}
			resp, err := mech.respond(msg.GetToken())
			if err != nil {
				return fmt.Errorf("sasl: %w", err)
			}
			if err := writeSASL(rw, &hadooppb.RpcSaslProto{State: hadooppb.RpcSaslProto_RESPONSE.Enum(), Token: resp}); err != nil {
				return err
			}
		case hadooppb.RpcSaslProto_SUCCESS:
			if mech == nil {
				// A SIMPLE-only server accepts anyone; nothing to prove.
				return nil
			}
			if len(msg.GetToken()) > 0 {
				if err := mech.verify(msg.GetToken()); err != nil {
					return fmt.Errorf("sasl: %w", err)
				}
			}
			return nil
		default:
			return fmt.Errorf("sasl: unexpected server state %v", msg.GetState())
		}
	}
	return fmt.Errorf("sasl: no SUCCESS after %d round trips", maxSASLRoundTrips)
}

// pickTokenAuth selects the TOKEN/DIGEST-MD5 entry the server offers.
func pickTokenAuth(auths []*hadooppb.RpcSaslProto_SaslAuth) (*hadooppb.RpcSaslProto_SaslAuth, error) {
	offered := make([]string, 0, len(auths))
	for _, a := range auths {
		if a.GetMethod() == saslMethodToken && a.GetMechanism() == saslMechanismMD5 {
			return a, nil
		}
		offered = append(offered, a.GetMethod()+"/"+a.GetMechanism())
	}
	return nil, fmt.Errorf("sasl: server offers %q, not %s/%s", offered, saslMethodToken, saslMechanismMD5)
}

func writeSASL(w io.Writer, m *hadooppb.RpcSaslProto) error {
	h := requestHeader(callIDSASL, []byte{}, -1)
	frame, err := encodeFrame(h, m)
	if err != nil {
		return fmt.Errorf("sasl: %w", err)
	}
	if _, err := w.Write(frame); err != nil {
		return fmt.Errorf("sasl: sending %v: %w", m.GetState(), err)
	}
	return nil
}

func readSASL(r io.Reader) (*hadooppb.RpcSaslProto, error) {
	body, err := readFrame(r)
	if err != nil {
		return nil, fmt.Errorf("sasl: reading the server's reply: %w", err)
	}
	h, payload, err := decodeResponse(body)
	if err != nil {
		return nil, fmt.Errorf("sasl: %w", err)
	}
	if h.GetStatus() != hadooppb.RpcResponseHeaderProto_SUCCESS {
		return nil, fmt.Errorf("sasl: %w", remoteErrorFrom(h, ""))
	}
	if id := int32(h.GetCallId()); id != callIDSASL {
		return nil, fmt.Errorf("sasl: reply has call id %d, want %d", id, callIDSASL)
	}
	m := &hadooppb.RpcSaslProto{}
	if err := proto.Unmarshal(payload, m); err != nil {
		return nil, fmt.Errorf("sasl: decoding the server's RpcSaslProto: %w", err)
	}
	return m, nil
}
