package yarn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// KeyRMWebAddress is Hadoop's yarn.resourcemanager.webapp.address: the ResourceManager's
// web UI, REST API (/ws/v1/cluster) and web proxy (/proxy/<application id>/).
const KeyRMWebAddress = "yarn.resourcemanager.webapp.address"

// defaultRMWebPort is Hadoop's default port of the RM's web app.
const defaultRMWebPort = "8088"

// RMWebAddress is the RM's web address from yarn-site.xml: yarn.resourcemanager.webapp.address,
// else yarn.resourcemanager.hostname with the default port 8088.
func (s SiteConfig) RMWebAddress() string {
	if v := s[KeyRMWebAddress]; v != "" {
		return v
	}
	if h := s["yarn.resourcemanager.hostname"]; h != "" {
		return h + ":" + defaultRMWebPort
	}
	return "0.0.0.0:" + defaultRMWebPort
}

// RMWeb reads the ResourceManager's REST API (/ws/v1/cluster).
type RMWeb struct {
	// Base is http://host:port of the RM's web app.
	Base string
	HTTP *http.Client
}

// NewRMWeb is a client of the RM's web app at addr (host:port or a URL).
func NewRMWeb(addr string) *RMWeb {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	return &RMWeb{Base: strings.TrimRight(addr, "/"), HTTP: &http.Client{Timeout: 10 * time.Second}}
}

// AppInfo is an application as the RM's REST API describes it.
type AppInfo struct {
	ID              string `json:"id"`
	User            string `json:"user"`
	Name            string `json:"name"`
	Queue           string `json:"queue"`
	State           string `json:"state"`
	FinalStatus     string `json:"finalStatus"`
	TrackingURL     string `json:"trackingUrl"`
	Diagnostics     string `json:"diagnostics"`
	ApplicationType string `json:"applicationType"`
	StartedTime     int64  `json:"startedTime"`
	FinishedTime    int64  `json:"finishedTime"`
	AMContainerLogs string `json:"amContainerLogs"`
	AMHostHTTP      string `json:"amHostHttpAddress"`
}

// Ended says whether the application has ended.
func (a AppInfo) Ended() bool {
	switch a.State {
	case "FINISHED", "FAILED", "KILLED":
		return true
	}
	return false
}

// AttemptInfo is one AM attempt.
type AttemptInfo struct {
	ID           int    `json:"id"`
	AttemptID    string `json:"appAttemptId"`
	ContainerID  string `json:"containerId"`
	NodeHTTP     string `json:"nodeHttpAddress"`
	NodeID       string `json:"nodeId"`
	LogsLink     string `json:"logsLink"`
	State        string `json:"appAttemptState"`
	StartTime    int64  `json:"startTime"`
	FinishedTime int64  `json:"finishedTime"`
}

// ContainerInfo is a running container of an attempt.
type ContainerInfo struct {
	ID       string `json:"containerId"`
	NodeHTTP string `json:"nodeHttpAddress"`
	NodeID   string `json:"nodeId"`
	LogURL   string `json:"logUrl"`
	State    string `json:"containerState"`
}

// NodeInfo is a NodeManager.
type NodeInfo struct {
	ID       string `json:"id"`
	NodeHTTP string `json:"nodeHTTPAddress"`
	State    string `json:"state"`
}

// ErrNoSuchApplication: the RM does not know the application.
var ErrNoSuchApplication = errors.New("no such YARN application")

// ProxyURL is the RM web proxy's address of app's AM: stable across AM attempts.
func (w *RMWeb) ProxyURL(app string) string { return w.Base + "/proxy/" + app }

// App describes one application.
func (w *RMWeb) App(ctx context.Context, app string) (AppInfo, error) {
	var r struct {
		App AppInfo `json:"app"`
	}
	if err := w.get(ctx, "/ws/v1/cluster/apps/"+url.PathEscape(app), &r); err != nil {
		return AppInfo{}, fmt.Errorf("application %s: %w", app, err)
	}
	return r.App, nil
}

// Apps lists the applications of type appType ("" for all).
func (w *RMWeb) Apps(ctx context.Context, appType string) ([]AppInfo, error) {
	path := "/ws/v1/cluster/apps"
	if appType != "" {
		path += "?applicationTypes=" + url.QueryEscape(appType)
	}
	var r struct {
		Apps *struct {
			App []AppInfo `json:"app"`
		} `json:"apps"`
	}
	if err := w.get(ctx, path, &r); err != nil {
		return nil, fmt.Errorf("listing applications: %w", err)
	}
	if r.Apps == nil {
		return nil, nil
	}
	return r.Apps.App, nil
}

// Attempts lists app's AM attempts, oldest first.
func (w *RMWeb) Attempts(ctx context.Context, app string) ([]AttemptInfo, error) {
	var r struct {
		AppAttempts *struct {
			AppAttempt []AttemptInfo `json:"appAttempt"`
		} `json:"appAttempts"`
	}
	if err := w.get(ctx, "/ws/v1/cluster/apps/"+url.PathEscape(app)+"/appattempts", &r); err != nil {
		return nil, fmt.Errorf("attempts of %s: %w", app, err)
	}
	if r.AppAttempts == nil {
		return nil, nil
	}
	return r.AppAttempts.AppAttempt, nil
}

// Containers lists the running containers of an attempt (the RM forgets ended ones).
func (w *RMWeb) Containers(ctx context.Context, app, attempt string) ([]ContainerInfo, error) {
	var r struct {
		Container []ContainerInfo `json:"container"`
	}
	if err := w.get(ctx, "/ws/v1/cluster/apps/"+url.PathEscape(app)+"/appattempts/"+url.PathEscape(attempt)+"/containers", &r); err != nil {
		return nil, fmt.Errorf("containers of %s: %w", attempt, err)
	}
	return r.Container, nil
}

// Nodes lists the NodeManagers.
func (w *RMWeb) Nodes(ctx context.Context) ([]NodeInfo, error) {
	var r struct {
		Nodes *struct {
			Node []NodeInfo `json:"node"`
		} `json:"nodes"`
	}
	if err := w.get(ctx, "/ws/v1/cluster/nodes", &r); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	if r.Nodes == nil {
		return nil, nil
	}
	return r.Nodes.Node, nil
}

func (w *RMWeb) get(ctx context.Context, path string, v any) error {
	body, err := httpGet(ctx, w.HTTP, w.Base+path, "application/json")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s%s: not the RM's JSON: %w", w.Base, path, err)
	}
	return nil
}

// maxWebBody bounds what is read from one RM or NodeManager response.
const maxWebBody = 64 << 20

func httpGet(ctx context.Context, c *http.Client, u, accept string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxWebBody))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("GET %s: %w: %.200s", u, ErrNoSuchApplication, strings.TrimSpace(string(body)))
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: %s: %.300s", u, resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}
