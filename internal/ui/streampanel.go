package ui

import (
	"strconv"

	"github.com/weirflow/weir/internal/core"
)

// streamPanel is the task-instance page's view of streams
// (docs/streaming.md): the stream the try's trigger produces, and, for a
// task that iterates over a producer's stream (`iterate`), how far its
// lazy expansion has come. Nil when the instance has neither.
type streamPanel struct {
	// Own is the stream this try's trigger produces (a deferred producer).
	Own *streamView
	// Expansion is set for a task that iterates over a stream.
	Expansion *expansionView
}

// streamView is one stream's head as people read it.
type streamView struct {
	ID         string
	Items      int64 // envelopes ever appended: the count so far
	Pending    int   // appended, not yet consumed
	MaxPending int
	// Status is "open", "closed" or "failed", with an icon beside it, so
	// that no colour carries it alone.
	Status, Icon string
	Error        string // why the producer failed
}

// expansionView is a lazily mapped task's expansion in one run.
type expansionView struct {
	Producer  string      // the task whose stream it iterates
	Instances int         // mapped instances created so far
	Status    string      // what the expansion is doing, in words
	Open      bool        // more instances may come
	Item      int         // this instance's item (its map index); -1 for the placeholder
	Source    *streamView // the producer's stream while it is attached to its try
}

// streamInputs is what buildStreamPanel reads.
type streamInputs struct {
	TI  *core.TaskInstance
	Own *core.Stream // the stream the try's trigger produces
	// For an iterating task: the producer, the placeholder (map_index -1,
	// nil once the expansion completed), the count of mapped instances,
	// and the producer's stream when known.
	Producer    string
	Placeholder *core.TaskInstance
	Instances   int
	Source      *core.Stream
}

// buildStreamPanel decides what the page says about streams. An
// iterating task's expansion is read from its instances, following the
// scheduler's decision (scheduler.Decide): the placeholder waits while
// the stream is open, is deleted once every item of a closed stream has
// its instance, skipped when a closed stream had no item, and
// upstream_failed when the producer failed.
func buildStreamPanel(in streamInputs) *streamPanel {
	p := &streamPanel{Own: viewStream(in.Own)}
	if in.Producer != "" {
		x := &expansionView{Producer: in.Producer, Instances: in.Instances, Item: in.TI.MapIndex, Source: viewStream(in.Source)}
		switch {
		case in.Placeholder == nil:
			x.Status = "complete: the stream closed and each of its " + strconv.Itoa(in.Instances) + " items has its instance"
		case in.Placeholder.State == core.TISkipped:
			x.Status = "closed empty: the stream had no item"
		case in.Placeholder.State == core.TIUpstreamFailed:
			x.Status = "stopped: the producer failed"
		case in.Instances == 0 && in.Source == nil:
			x.Status, x.Open = "waiting for "+in.Producer+" to open its stream", true
		default:
			x.Status, x.Open = "expanding: an instance per item as items arrive", true
		}
		p.Expansion = x
	}
	if p.Own == nil && p.Expansion == nil {
		return nil
	}
	return p
}

// viewStream shows a stream's head; nil for none.
func viewStream(s *core.Stream) *streamView {
	if s == nil {
		return nil
	}
	v := &streamView{ID: s.ID, Items: s.NextIndex, Pending: s.Pending, MaxPending: s.MaxPending, Error: s.Error}
	switch {
	case s.Error != "":
		v.Status, v.Icon = "failed", "✗"
	case s.Closed:
		v.Status, v.Icon = "closed", "■"
	default:
		v.Status, v.Icon = "open", "▶"
	}
	return v
}
