package scheduler

import "github.com/weirflow/weir/internal/core"

// StreamHead is what Decide needs to know of the stream an iterating
// task's placeholder expands over (docs/streaming.md#lazy-expansion): how
// many items it holds so far, whether its producer closed it, and whether
// the producer failed.
type StreamHead struct {
	// Next is the number of items appended so far (the next sequence
	// index).
	Next   int64
	Closed bool
	Failed bool
	// Max caps the task's instances ([scheduler] max_map_length; 0 = no
	// cap): a stream holding more items gets instances for its first Max,
	// then the task fails and its producer is stopped.
	Max int64
}

// IterateStep is what one pass does to an iterating task's placeholder
// (map_index -1, state none, its upstreams' trigger rule saying run).
type IterateStep struct {
	Placeholder core.TaskInstance
	// From and Through are the sequence indexes (= map indexes) of the new
	// instances to create, inclusive; From > Through when there are none.
	From, Through int64
	// Close is set once the stream is closed and every item has (or by
	// this step gets) an instance: the placeholder is deleted, so that
	// downstream tasks count only the mapped instances. (A stream closed
	// without any item skips the placeholder instead, through Plan.Skip,
	// as an expansion over an empty list does.)
	Close bool
	// Overflow is set when the stream holds more items than the cap
	// (StreamHead.Max): Through stops at the cap's last item, and once the
	// step landed the placeholder fails and the producer's stream is
	// closed with the reason, which stops the producer.
	Overflow bool
}

// tiGone marks, within one decide pass, a placeholder its plan deletes: it
// no longer counts for its downstream tasks, nor for the run's state.
const tiGone core.TIState = "\x00gone"

// decideIterate decides the placeholder ti of task, which iterates over a
// stream, once its upstreams' trigger rule says run. have is how many
// mapped instances of the task exist (the highest map index + 1); head is
// the stream (nil while the producer has not opened it); producer is the
// producer instance's state as this plan leaves it.
func decideIterate(plan *Plan, ti *core.TaskInstance, have int64, head *StreamHead, producer core.TIState, state []core.TIState, i int) {
	if head == nil {
		switch producer {
		case core.TIFailed, core.TIUpstreamFailed:
			plan.UpstreamFailed = append(plan.UpstreamFailed, ti.ID)
			state[i] = core.TIUpstreamFailed
		case core.TISkipped, core.TISuccess, core.TIRemoved:
			// Finished without ever producing: nothing to iterate.
			plan.Skip = append(plan.Skip, ti.ID)
			state[i] = core.TISkipped
		default: // not started yet, or started without a stream so far
		}
		return
	}
	step := IterateStep{Placeholder: *ti, From: have, Through: head.Next - 1}
	switch {
	case head.Max > 0 && head.Next > head.Max:
		// Over the cap: the items within it run, the task fails (so its
		// downstream is upstream_failed) and its producer is stopped.
		step.Through, step.Overflow = head.Max-1, true
		plan.Iterate = append(plan.Iterate, step)
		state[i] = core.TIFailed
		return
	case head.Failed:
		// The items so far run; the placeholder stands for the rest.
		if step.From <= step.Through {
			plan.Iterate = append(plan.Iterate, step)
		}
		plan.UpstreamFailed = append(plan.UpstreamFailed, ti.ID)
		state[i] = core.TIUpstreamFailed
		return
	case head.Closed && head.Next == 0 && have == 0:
		plan.Skip = append(plan.Skip, ti.ID)
		state[i] = core.TISkipped
		return
	case head.Closed:
		step.Close = true
		if step.From > step.Through {
			// Every instance is in this pass's view: its downstream may
			// go on now. (New instances are not, so with them it waits
			// for the next pass.)
			state[i] = tiGone
		}
	case step.From > step.Through:
		return // nothing new
	}
	plan.Iterate = append(plan.Iterate, step)
}

// mappedCount is how many mapped instances (map_index ≥ 0) of one task
// exist: the highest map index + 1.
func mappedCount(tis []core.TaskInstance, idx []int) int64 {
	var n int64
	for _, i := range idx {
		if m := int64(tis[i].MapIndex) + 1; m > n {
			n = m
		}
	}
	return n
}
