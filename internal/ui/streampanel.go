package ui

import (
	"strconv"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
)

// streamPanel is the task-instance page's view of streams
// (docs/streaming.md): the stream a producer task fills in its run, and,
// for a task that iterates over a producer's stream (`iterate`), how far
// its lazy expansion has come. Nil when the instance has neither.
type streamPanel struct {
	// Own is the stream this task produces in its run.
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
	Producer  string // the task whose stream it iterates
	Instances int    // mapped instances created so far
	Status    string // what the expansion is doing, in words
	Open      bool   // more instances may come
	Item      int    // this instance's item (its map index); -1 for the placeholder
	// Source is the producer's stream, nil until the producer opened it.
	Source *streamView
}

// streamInputs is what buildStreamPanel reads.
type streamInputs struct {
	TI  *core.TaskInstance
	Own *core.Stream // the stream the task produces in its run, if any
	// Expansion is the task's lazy expansion (service.Expansion) and
	// Source its producer's stream head, for an iterating task.
	Expansion *service.Expansion
	Source    *core.Stream
}

// buildStreamPanel decides what the page says about streams, from the
// expansion as the REST API and `weir tasks expansion` report it
// (service.Expansion) and the streams' heads.
func buildStreamPanel(in streamInputs) *streamPanel {
	p := &streamPanel{Own: viewStream(in.Own)}
	if e := in.Expansion; e != nil {
		x := &expansionView{Producer: e.Iterate, Instances: e.Instances, Item: in.TI.MapIndex, Source: viewStream(in.Source), Open: e.Open}
		switch {
		case e.Error != "":
			x.Status = "stopped: " + e.Iterate + "'s stream failed (" + e.Error + ")"
		case !e.Open && in.Source == nil:
			x.Status = "complete: " + e.Iterate + " ended without opening its stream (no items)"
		case !e.Open:
			x.Status = "complete: the stream closed after " + strconv.FormatInt(e.Items, 10) + " items, each with its instance"
		case in.Source == nil:
			x.Status = "waiting for " + e.Iterate + " to open its stream"
		default:
			x.Status = "expanding: an instance per item as items arrive"
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
