package tidecli

import (
	"context"
	"fmt"
	"net/http"

	"github.com/tidestream/tide/api"
)

// vertexMetrics reads each vertex's aggregated task metrics; a vertex the AM has no
// answer for (an AM without the endpoint) is left out.
func vertexMetrics(ctx context.Context, cc *clientCommand, d api.JobDetails) (map[string]api.VertexMetrics, error) {
	out := map[string]api.VertexMetrics{}
	for _, v := range d.Vertices {
		vd, err := cc.api.Vertex(ctx, d.JID, v.ID)
		if api.IsStatus(err, http.StatusNotFound, http.StatusMethodNotAllowed) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[v.ID] = vd.Aggregated
	}
	return out, nil
}

// metricsColumns are the IN/S, OUT/S, BUSY and BACKPRESSURE cells of a vertex: records
// per second summed over its subtasks, the busiest subtask's busy and back-pressured
// share of time with Flink's level (ok, low, high).
func metricsColumns(m api.VertexMetrics, ok bool) []string {
	if !ok || m.Subtasks == 0 {
		return []string{"-", "-", "-", "-"}
	}
	bp := m.MaxBackPressuredTimeMsPerSecond / 1000
	return []string{fmt.Sprintf("%.0f", m.ReadRecordsPerSecond), fmt.Sprintf("%.0f", m.WriteRecordsPerSecond),
		fmt.Sprintf("%.0f%%", m.MaxBusyTimeMsPerSecond/10), fmt.Sprintf("%.0f%% %s", bp*100, api.BackPressureLevel(bp))}
}
