package worker

import (
	"slices"
	"sync"
)

// held is the set of tries the worker holds (claimed, from the answer to a
// claim, until their run ends). Each claim lists them, so that the server
// returns only the worker's claims whose answer was lost.
type held struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

// add records a try as held; false when it already was (a claim answer
// repeated a try being run: the caller must not run it twice).
func (h *held) add(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ids == nil {
		h.ids = map[string]struct{}{}
	}
	if _, ok := h.ids[id]; ok {
		return false
	}
	h.ids[id] = struct{}{}
	return true
}

// remove forgets a try whose run ended.
func (h *held) remove(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.ids, id)
}

// list returns the held tries' ids, sorted.
func (h *held) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.ids))
	for id := range h.ids {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
