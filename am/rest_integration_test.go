package am_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

// send makes one request and decodes a JSON answer into v (when not nil).
func (c *cluster) send(t *testing.T, method, path, body string, v any) int {
	t.Helper()
	code, _, data, err := testkit.Send(context.Background(), method, "http://"+c.am.RESTAddr()+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil && code < 300 {
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("%s %s: %s: %v", method, path, data, err)
		}
	}
	if code >= 300 {
		t.Logf("%s %s = %d %s", method, path, code, data)
	}
	return code
}

type operationStatus struct {
	Status struct {
		ID string `json:"id"`
	} `json:"status"`
	Operation map[string]any `json:"operation"`
}

// waitOperation polls a trigger until it is no longer IN_PROGRESS.
func (c *cluster) waitOperation(t *testing.T, path string) operationStatus {
	t.Helper()
	var st operationStatus
	testkit.WaitFor(t, "operation "+path, func() (bool, error) {
		st = operationStatus{}
		if code := c.send(t, "GET", path, "", &st); code != http.StatusOK {
			return false, fmt.Errorf("GET %s = %d", path, code)
		}
		return st.Status.ID != "IN_PROGRESS", nil
	})
	return st
}

// TestRESTOperateRunningJob drives a running, non-reactive job through the REST API: PUT
// resource-requirements rescales it, the rescale shows in the history, the plan and the
// metrics; a checkpoint and a savepoint are triggered and polled; stop ends the job.
func TestRESTOperateRunningJob(t *testing.T) {
	spDir := t.TempDir()
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName, adaptive: true, retained: 3,
		args:    []string{"--records", "100000000", "--rate", "500", "--parallelism", "1", "--output", t.TempDir()},
		ckptDir: t.TempDir(), interval: 200 * time.Millisecond, dynamic: []string{"state.savepoints.allowed-dirs=" + spDir}})
	c.addTM("tm-a", 2)
	c.addTM("tm-b", 2)
	c.waitRunningAt(t, 1)
	// Both registered before the PUT: a TaskManager registering after it would make the
	// rescale NEW_RESOURCE_AVAILABLE (seen under load).
	testkit.WaitFor(t, "both TaskManagers registered", func() (bool, error) {
		var tms api.TaskManagers
		if err := c.getJSON("/taskmanagers", &tms); err != nil {
			return false, err
		}
		return len(tms.TaskManagers) == 2, fmt.Errorf("%d TaskManagers registered", len(tms.TaskManagers))
	})

	var req api.ResourceRequirements
	if code := c.send(t, "GET", "/jobs/"+jobID+"/resource-requirements", "", &req); code != http.StatusOK {
		t.Fatalf("GET resource-requirements = %d", code)
	}
	for v := range req {
		req[v] = api.VertexRequirements{Parallelism: api.Bounds{LowerBound: 1, UpperBound: 3}}
	}
	body, _ := json.Marshal(req)
	if code := c.send(t, "PUT", "/jobs/"+jobID+"/resource-requirements", string(body), nil); code != http.StatusOK {
		t.Fatalf("PUT resource-requirements = %d", code)
	}
	c.waitRunningAt(t, 3)

	var rescales struct {
		Rescales []struct {
			Trigger        string `json:"trigger"`
			Outcome        string `json:"outcome"`
			KeyGroupsMoved int    `json:"keyGroupsMoved"`
			Vertices       []struct {
				Before int `json:"before"`
				After  int `json:"after"`
			} `json:"vertices"`
		} `json:"rescales"`
	}
	testkit.WaitFor(t, "the UPDATE_REQUIREMENT rescale in the history", func() (bool, error) {
		if code := c.send(t, "GET", "/jobs/"+jobID+"/rescales", "", &rescales); code != http.StatusOK {
			return false, fmt.Errorf("GET rescales = %d", code)
		}
		for _, r := range rescales.Rescales {
			if r.Trigger == string(core.TriggerUpdateRequirement) && r.Outcome == string(core.RescaleCompleted) &&
				len(r.Vertices) > 0 && r.Vertices[0].Before == 1 && r.Vertices[0].After == 3 {
				// Three subtasks need both TaskManagers (two slots each), so some key
				// groups of the one subtask's TaskManager had to move to the other.
				if r.KeyGroupsMoved <= 0 {
					return false, fmt.Errorf("rescale 1->3 onto a second TaskManager reports keyGroupsMoved %d, want > 0", r.KeyGroupsMoved)
				}
				return true, nil
			}
		}
		return false, fmt.Errorf("rescales %+v", rescales.Rescales)
	})

	var plan struct {
		Plan struct {
			Nodes []struct {
				Parallelism int `json:"parallelism"`
			} `json:"nodes"`
		} `json:"plan"`
	}
	if code := c.send(t, "GET", "/jobs/"+jobID+"/plan", "", &plan); code != http.StatusOK || len(plan.Plan.Nodes) == 0 {
		t.Fatalf("GET plan = %d %+v", code, plan)
	}
	for _, n := range plan.Plan.Nodes {
		if n.Parallelism != 3 {
			t.Errorf("plan node at %d after the rescale, want 3", n.Parallelism)
		}
	}

	var tms struct {
		TaskManagers []struct {
			ID                     string `json:"id"`
			FreeSlots              int    `json:"freeSlots"`
			SlotsNumber            int    `json:"slotsNumber"`
			TimeSinceLastHeartbeat int64  `json:"timeSinceLastHeartbeat"`
			DataPort               int    `json:"dataPort"`
		} `json:"taskmanagers"`
	}
	if code := c.send(t, "GET", "/taskmanagers", "", &tms); code != http.StatusOK || len(tms.TaskManagers) != 2 {
		t.Fatalf("GET taskmanagers = %d %+v", code, tms)
	}
	free := 0
	for _, tm := range tms.TaskManagers {
		free += tm.FreeSlots
		if tm.SlotsNumber != 2 || tm.DataPort <= 0 {
			t.Errorf("TaskManager %+v: want 2 slots and a data port", tm)
		}
	}
	if free != 1 {
		t.Errorf("free slots %d at parallelism 3 of 4 slots, want 1", free)
	}
	if code := c.send(t, "GET", "/taskmanagers/tm-a", "", nil); code != http.StatusOK {
		t.Errorf("GET taskmanagers/tm-a = %d", code)
	}

	testkit.WaitFor(t, "parallelism 3 and 2 TaskManagers in /metrics", func() (bool, error) {
		resp, err := http.Get("http://" + c.am.RESTAddr() + "/metrics")
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		text, err := io.ReadAll(resp.Body)
		if err != nil {
			return false, err
		}
		s := string(text)
		return strings.Contains(s, "tide_jobmanager_numRegisteredTaskManagers 2") &&
			strings.Contains(s, `tide_jobmanager_job_parallelism{job_id="`+jobID+`",job_name="CheckableCount",vertex=`) &&
			!strings.Contains(s, "tide_jobmanager_job_numberOfCompletedCheckpoints{job_id=\""+jobID+"\",job_name=\"CheckableCount\"} 0"), nil
	})

	var trig map[string]string
	if code := c.send(t, "POST", "/jobs/"+jobID+"/checkpoints", `{"checkpointType":"FULL"}`, &trig); code != http.StatusAccepted || trig["request-id"] == "" {
		t.Fatalf("POST checkpoints = %d %v", code, trig)
	}
	st := c.waitOperation(t, "/jobs/"+jobID+"/checkpoints/"+trig["request-id"])
	if st.Status.ID != "COMPLETED" || st.Operation["checkpointId"] == nil {
		t.Fatalf("checkpoint operation %+v, want COMPLETED with its checkpointId", st)
	}
	var details struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	detailsPath := fmt.Sprintf("/jobs/%s/checkpoints/details/%.0f", jobID, st.Operation["checkpointId"])
	if code := c.send(t, "GET", detailsPath, "", &details); code != http.StatusOK || details.Status != "COMPLETED" {
		t.Errorf("GET %s = %d %+v", detailsPath, code, details)
	}

	if code := c.send(t, "POST", "/jobs/"+jobID+"/savepoints", `{"target-directory":"`+spDir+`"}`, &trig); code != http.StatusAccepted {
		t.Fatalf("POST savepoints = %d", code)
	}
	st = c.waitOperation(t, "/jobs/"+jobID+"/savepoints/"+trig["request-id"])
	loc, _ := st.Operation["location"].(string)
	if st.Status.ID != "COMPLETED" || !strings.HasPrefix(loc, "file://"+spDir+"/savepoint-012345-") {
		t.Fatalf("savepoint operation %+v, want COMPLETED under %s", st, spDir)
	}
	if _, err := os.Stat(filepath.Join(strings.TrimPrefix(loc, "file://"), "_metadata")); err != nil {
		t.Fatalf("savepoint at %s: %v", loc, err)
	}

	if code := c.send(t, "POST", "/jobs/"+jobID+"/stop", `{"targetDirectory":"`+spDir+`"}`, &trig); code != http.StatusAccepted {
		t.Fatalf("POST stop = %d", code)
	}
	c.waitEnded(t, time.Minute, core.StatusCanceled)
	entries, err := os.ReadDir(spDir)
	if err != nil || len(entries) != 2 {
		t.Fatalf("savepoint directory holds %v (%v), want the savepoint and the stop's", entries, err)
	}
}
