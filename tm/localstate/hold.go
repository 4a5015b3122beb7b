package localstate

// Hold keeps entry k through Confirm until as many Release calls: a warm-up or standby
// copy holds the entry it last completed while it fetches the next checkpoint, which
// links the files the two share from it. Without the hold, the confirmation of the newer
// checkpoint (which arrives with the request to follow it) would delete the older copy
// first and the copy would download the whole range again at every checkpoint. DropJob
// deletes held entries too.
func (s *Store) Hold(k Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		s.held = map[Key]int{}
	}
	s.held[k]++
}

// Release ends one Hold of k; the next Confirm past k's checkpoint deletes it.
func (s *Store) Release(k Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[k] <= 1 {
		delete(s.held, k)
		return
	}
	s.held[k]--
}
