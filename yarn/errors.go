package yarn

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tidestream/tide/internal/hadoop/ipc"
)

var (
	// ErrRMUnreachable: no TCP connection to the ResourceManager could be made.
	ErrRMUnreachable = errors.New("YARN ResourceManager unreachable")
	// ErrQueueNotFound: the queue named in a submission does not exist.
	ErrQueueNotFound = errors.New("YARN queue not found")
	// ErrResourceTooLarge: a container was asked larger than the cluster's maximum allocation.
	ErrResourceTooLarge = errors.New("requested container larger than the YARN maximum allocation")
	// ErrApplicationNotFound: the RM does not know the application id.
	ErrApplicationNotFound = errors.New("YARN application not found")
	// ErrNotRegistered: allocate or finish before registerApplicationMaster (or after an RM
	// restart); the AM must register again and resend its asks and blacklist.
	ErrNotRegistered = errors.New("ApplicationMaster not registered with the ResourceManager")
)

// wrapRM gives a client→RM error its address and, where tide has one, its sentinel.
func wrapRM(addr, what string, err error) error {
	switch {
	case errors.Is(err, ipc.ErrUnreachable):
		return fmt.Errorf("%s: %w at %s: %w", what, ErrRMUnreachable, addr, err)
	case ipc.IsRemoteClass(err, classApplicationNotFound):
		return fmt.Errorf("%s: %w: %w", what, ErrApplicationNotFound, err)
	case ipc.IsRemoteClass(err, classInvalidResourceRequest) && strings.Contains(remoteMessage(err), "maximum"):
		return fmt.Errorf("%s: %w: %w", what, ErrResourceTooLarge, err)
	case ipc.IsRemoteClass(err, classAMNotRegistered):
		return fmt.Errorf("%s: %w: %w", what, ErrNotRegistered, err)
	}
	return fmt.Errorf("%s (ResourceManager %s): %w", what, addr, err)
}

func remoteMessage(err error) string {
	var re *ipc.RemoteError
	if errors.As(err, &re) {
		return re.Message
	}
	return ""
}

// ContainerError is a per-container failure the NodeManager reported in failed_requests.
type ContainerError struct {
	ContainerID string
	Node        string
	Class       string // Java exception class
	Message     string
}

func (e *ContainerError) Error() string {
	return fmt.Sprintf("container %s on %s: %s: %s", e.ContainerID, e.Node, e.Class, e.Message)
}

// errBadBlacklistEntry: an empty or "*" blacklist entry.
var errBadBlacklistEntry = errors.New("not a node or rack name")
