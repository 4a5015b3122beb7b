package rest

import "net/http"

// getBlocklist serves GET /blocklist (FLIP-224): every blocked node with its TaskManagers.
func (s *server) getBlocklist(w http.ResponseWriter, r *http.Request) {
	b, err := s.b.Blocklist(r.Context())
	answer(w, b, err)
}

// putBlockedNode serves PUT /blocklist/nodes/:id (also POST, and /blocklist/:id): block a
// node, or merge into its blocking with allowMerge. 201 created, 202 merged, 409 already
// blocked without allowMerge, 400 listing every problem of the body.
func (s *server) putBlockedNode(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	status, node, err := s.b.BlockNode(r.Context(), r.PathValue("nodeid"), body, r.RemoteAddr)
	if err != nil {
		writeFailure(w, err)
		return
	}
	writeJSON(w, status, node)
}

// deleteBlockedNode serves DELETE /blocklist/node/:id (and /blocklist/nodes/:id,
// /blocklist/:id): 200 with an empty body, 404 when the node is not blocked.
func (s *server) deleteBlockedNode(w http.ResponseWriter, r *http.Request) {
	if _, ok := readBody(w, r); !ok {
		return
	}
	if err := s.b.UnblockNode(r.Context(), r.PathValue("nodeid"), r.RemoteAddr); err != nil {
		writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}
