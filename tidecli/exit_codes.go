package tidecli

import (
	"errors"
	"fmt"

	"github.com/tidestream/tide/api"
)

// Exit codes of tide, stable for scripts.
const (
	exitOK          = 0 // the command did what was asked
	exitError       = 1 // the AM refused or failed the request, or the command failed
	exitUsage       = 2 // wrong flags or arguments; nothing was sent
	exitUnreachable = 3 // no AM answered at the address
)

const exitCodesHelp = `Exit codes: 0 success; 1 the AM refused or failed the request (or the command failed);
2 usage error (wrong flags or arguments, nothing sent); 3 no AM reachable at the address.`

// usageError is a mistake in the command line; it exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitCode maps a command's error to the process exit code.
func exitCode(err error) int {
	var ue *usageError
	var ur *api.UnreachableError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &ur):
		return exitUnreachable
	}
	return exitError
}
