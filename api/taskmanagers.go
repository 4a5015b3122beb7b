package api

import (
	"context"
	"net/http"
	"net/url"
)

// TaskManager is one entry of GET /taskmanagers and the answer of GET /taskmanagers/:id.
type TaskManager struct {
	ID          string `json:"id"`
	Path        string `json:"path"`
	Node        string `json:"node"`
	DataAddress string `json:"dataAddress"`
	DataPort    int    `json:"dataPort"`
	// TimeSinceLastHeartbeat is in milliseconds, -1 before the first heartbeat.
	TimeSinceLastHeartbeat int64 `json:"timeSinceLastHeartbeat"`
	SlotsNumber            int   `json:"slotsNumber"`
	FreeSlots              int   `json:"freeSlots"`
	Blocked                bool  `json:"blocked"`
	Registered             int64 `json:"registered"`
}

// TaskManagers is GET /taskmanagers.
type TaskManagers struct {
	TaskManagers []TaskManager `json:"taskmanagers"`
	// PendingWorkers are requested TaskManagers that have not registered (pods waiting for
	// the scheduler, for instance), with the reason their cluster gives.
	PendingWorkers []PendingWorker `json:"pendingWorkers"`
}

// TaskManagers returns the TaskManagers registered with the AM (GET /taskmanagers).
func (c *Client) TaskManagers(ctx context.Context) ([]TaskManager, error) {
	var body TaskManagers
	if err := c.do(ctx, http.MethodGet, "/taskmanagers", nil, &body); err != nil {
		return nil, err
	}
	return body.TaskManagers, nil
}

// TaskManagersAndPending returns GET /taskmanagers whole: the registered TaskManagers and
// the requested ones that have not registered yet.
func (c *Client) TaskManagersAndPending(ctx context.Context) (TaskManagers, error) {
	var body TaskManagers
	err := c.do(ctx, http.MethodGet, "/taskmanagers", nil, &body)
	return body, err
}

// TaskManager returns one TaskManager (GET /taskmanagers/:id).
func (c *Client) TaskManager(ctx context.Context, id string) (TaskManager, error) {
	var tm TaskManager
	err := c.do(ctx, http.MethodGet, "/taskmanagers/"+url.PathEscape(id), nil, &tm)
	return tm, err
}
