package rest

import "net/http"

// getVertex serves GET /jobs/:jobid/vertices/:vertexid: the vertex and each subtask with
// its metrics (Flink's JobVertexDetailsInfo, with tide's rates beside Flink's totals).
func (s *server) getVertex(w http.ResponseWriter, r *http.Request) {
	v, err := s.b.Vertex(r.Context(), r.PathValue("vertexid"))
	answer(w, v, err)
}

// getVertexBackPressure serves GET /jobs/:jobid/vertices/:vertexid/backpressure from the
// subtasks' back-pressured time per second (Flink's task-based back-pressure).
func (s *server) getVertexBackPressure(w http.ResponseWriter, r *http.Request) {
	b, err := s.b.VertexBackPressure(r.Context(), r.PathValue("vertexid"))
	answer(w, b, err)
}
