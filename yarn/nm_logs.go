package yarn

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// LogFile is one log file of a container, as its NodeManager lists it.
type LogFile struct {
	Name string `json:"fileName"`
	Size string `json:"fileSize"`
}

// ContainerLogFiles lists a container's log files through its NodeManager's web endpoint
// (nodeHTTP is host:port of the NodeManager's web app).
func ContainerLogFiles(ctx context.Context, c *http.Client, nodeHTTP, container string) ([]LogFile, error) {
	u := "http://" + nodeHTTP + "/ws/v1/node/containers/" + url.PathEscape(container) + "/logs"
	body, err := httpGet(ctx, c, u, "application/json")
	if err != nil {
		return nil, fmt.Errorf("log files of %s: %w", container, err)
	}
	// Hadoop 3 wraps the list in containerLogsInfo; a list of those when logs are
	// aggregated and local at once.
	var one struct {
		Info *struct {
			Files []LogFile `json:"containerLogInfo"`
		} `json:"containerLogsInfo"`
	}
	if err := json.Unmarshal(body, &one); err == nil && one.Info != nil {
		return one.Info.Files, nil
	}
	var many []struct {
		Files []LogFile `json:"containerLogInfo"`
	}
	if err := json.Unmarshal(body, &many); err != nil {
		return nil, fmt.Errorf("log files of %s from %s: not the NodeManager's JSON: %w", container, u, err)
	}
	var out []LogFile
	for _, m := range many {
		out = append(out, m.Files...)
	}
	return out, nil
}

// ContainerLog reads one log file of a container through its NodeManager: the last tail
// bytes when tail > 0, else all of it. It returns the contents without the NodeManager's
// header and footer.
func ContainerLog(ctx context.Context, c *http.Client, nodeHTTP, container, file string, tail int64) (string, error) {
	u := "http://" + nodeHTTP + "/ws/v1/node/containerlogs/" + url.PathEscape(container) + "/" + url.PathEscape(file)
	if tail > 0 {
		u += "?size=-" + strconv.FormatInt(tail, 10)
	}
	body, err := httpGet(ctx, c, u, "text/plain")
	if err != nil {
		return "", fmt.Errorf("%s of %s: %w", file, container, err)
	}
	return logContents(string(body), file), nil
}

// logContents strips the header (…LogContents:\n) and footer (End of LogType:<file>.) a
// Hadoop 3 NodeManager wraps a log file in; anything else is returned as it is.
func logContents(body, file string) string {
	_, rest, ok := strings.Cut(body, "LogContents:\n")
	if !ok {
		return body
	}
	if i := strings.LastIndex(rest, "End of LogType:"+file); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// LastError is the last line of log that records an error (level=ERROR, or a Go panic),
// "" when there is none.
func LastError(log string) string {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if strings.Contains(l, "level=ERROR") || strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") ||
			strings.HasPrefix(l, "Error:") || strings.HasPrefix(l, "tide: ") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}
