package api

import (
	"context"
	"net/http"
)

// ClusterOverview is GET /overview.
type ClusterOverview struct {
	TaskManagers        int    `json:"taskmanagers"`
	TaskManagersBlocked int    `json:"taskmanagers-blocked"`
	SlotsTotal          int    `json:"slots-total"`
	SlotsAvailable      int    `json:"slots-available"`
	SlotsFreeAndBlocked int    `json:"slots-free-and-blocked"`
	JobsRunning         int    `json:"jobs-running"`
	JobsFinished        int    `json:"jobs-finished"`
	JobsCancelled       int    `json:"jobs-cancelled"`
	JobsFailed          int    `json:"jobs-failed"`
	Version             string `json:"flink-version"`
	Commit              string `json:"flink-commit"`
}

// ConfigEntry is one key of GET /jobmanager/config.
type ConfigEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Overview returns the AM's TaskManager, slot and job counts (GET /overview).
func (c *Client) Overview(ctx context.Context) (ClusterOverview, error) {
	var o ClusterOverview
	err := c.do(ctx, http.MethodGet, "/overview", nil, &o)
	return o, err
}

// JobManagerConfig returns the configuration in force, reloads included
// (GET /jobmanager/config).
func (c *Client) JobManagerConfig(ctx context.Context) ([]ConfigEntry, error) {
	var out []ConfigEntry
	err := c.do(ctx, http.MethodGet, "/jobmanager/config", nil, &out)
	return out, err
}

// DashboardFeatures says what the web page may offer.
type DashboardFeatures struct {
	WebSubmit  bool `json:"web-submit"`
	WebCancel  bool `json:"web-cancel"`
	WebRescale bool `json:"web-rescale"`
}

// DashboardConfig is GET /config.
type DashboardConfig struct {
	RefreshInterval int64             `json:"refresh-interval"`
	Version         string            `json:"flink-version"`
	Revision        string            `json:"flink-revision"`
	Features        DashboardFeatures `json:"features"`
}
