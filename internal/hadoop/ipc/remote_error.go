package ipc

import (
	"errors"
	"fmt"

	"github.com/tidestream/tide/internal/hadoop/hadooppb"
)

// ErrConnectionLost is wrapped by call errors when the connection broke while the call was in
// flight; whether the server carried the call out is unknown. The next call reconnects.
var ErrConnectionLost = errors.New("hadoop ipc: connection lost")

// RemoteError is an exception the server returned for a call: the Java exception class and
// message as the server sent them.
type RemoteError struct {
	Method  string // the called method, empty for connection-level failures
	Class   string // Java exception class, e.g. org.apache.hadoop.yarn.exceptions.YarnException
	Message string
	// Detail is the server's error code, e.g. FATAL_UNAUTHORIZED.
	Detail hadooppb.RpcResponseHeaderProto_RpcErrorCodeProto
	// Fatal is true when the server closed the connection after the error.
	Fatal bool
}

func (e *RemoteError) Error() string {
	kind := "error"
	if e.Fatal {
		kind = "fatal error"
	}
	where := ""
	if e.Method != "" {
		where = " in " + e.Method
	}
	msg := e.Message
	if msg == "" {
		msg = "(no message)"
	}
	return fmt.Sprintf("hadoop ipc: remote %s%s: %s: %s", kind, where, e.Class, msg)
}

// IsRemoteClass reports whether err wraps a *RemoteError whose Java class is class.
func IsRemoteClass(err error, class string) bool {
	var re *RemoteError
	return errors.As(err, &re) && re.Class == class
}

// remoteErrorFrom builds the error for a non-SUCCESS response header.
func remoteErrorFrom(h *hadooppb.RpcResponseHeaderProto, method string) *RemoteError {
	return &RemoteError{
		Method:  method,
		Class:   h.GetExceptionClassName(),
		Message: h.GetErrorMsg(),
		Detail:  h.GetErrorDetail(),
		Fatal:   h.GetStatus() == hadooppb.RpcResponseHeaderProto_FATAL,
	}
}
