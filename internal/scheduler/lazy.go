package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// iterateBatch bounds the instances one step of a lazy expansion creates
// (and the envelopes it reads); the rest come in the next pass, at once.
const iterateBatch = 500

// streamHeads reads, for each task of g that iterates over a stream, the
// head of its producer's stream in run (docs/streaming.md#lazy-expansion);
// a task whose producer has not opened it yet is absent. A stream whose
// producer ended (tis says) without closing it is closed here: normally
// when the producer succeeded (a pushing task need not close its stream),
// with the reason when it failed, was skipped or removed, so that the
// expansion ends either way.
func (s *Scheduler) streamHeads(ctx context.Context, run *core.DagRun, g *graph, tis []core.TaskInstance) (map[string]StreamHead, error) {
	if len(g.iterating) == 0 {
		return nil, nil
	}
	heads := make(map[string]StreamHead, len(g.iterating))
	for _, t := range g.iterating {
		st, err := s.Store.StreamGet(ctx, core.TaskStreamID(run.ID, t.Iterate))
		if errors.Is(err, core.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the stream of task %q: %w", t.Iterate, err)
		}
		if !st.Closed {
			if st, err = s.closeAbandoned(ctx, st, t.Iterate, tis); err != nil {
				return nil, err
			}
		}
		heads[t.TaskID] = StreamHead{Next: st.NextIndex, Closed: st.Closed, Failed: st.Error != "", Max: int64(s.Config.MaxMapLength)}
	}
	return heads, nil
}

// closeAbandoned closes open stream st when its producer task's instance
// (in tis) is terminal, and returns the stream as it is then.
func (s *Scheduler) closeAbandoned(ctx context.Context, st *core.Stream, producer string, tis []core.TaskInstance) (*core.Stream, error) {
	i := slices.IndexFunc(tis, func(ti core.TaskInstance) bool { return ti.TaskID == producer && ti.MapIndex == core.NoMapIndex })
	if i < 0 || !tis[i].State.Terminal() {
		return st, nil
	}
	msg := ""
	if tis[i].State != core.TISuccess {
		msg = fmt.Sprintf("the producer task %q ended %s without closing its stream", producer, tis[i].State)
	}
	closed, err := s.Store.StreamClose(ctx, &store.StreamCloseParams{StreamID: st.ID, Error: msg, Now: s.Clock.Now()})
	if err != nil {
		return nil, fmt.Errorf("close the stream of task %q, which ended %s: %w", producer, tis[i].State, err)
	}
	return closed, nil
}

// iterate applies one step of a lazy expansion: the instances for the
// step's envelopes (up to iterateBatch of them), each with its envelope's
// payload as map argument "item", created in the transaction that
// consumes the envelopes, and the placeholder deleted once the stream is
// closed and every envelope has its instance. It reports whether the step
// landed whole (false when a batch left items for the next pass); a step
// another scheduler took first (or a placeholder marked meanwhile)
// changes nothing.
func (s *Scheduler) iterate(ctx context.Context, run *core.DagRun, g *graph, step *IterateStep, now time.Time, res *passResult) (bool, error) {
	ph := &step.Placeholder
	task := g.tasks[ph.TaskID]
	streamID := core.TaskStreamID(run.ID, task.Iterate)
	through := min(step.Through, step.From+iterateBatch-1)
	var instances []store.NewTaskInstance
	if step.From <= through {
		evs, err := s.Store.StreamEventList(ctx, &store.StreamEventListParams{StreamID: streamID, After: step.From - 1, Limit: int(through - step.From + 1)})
		if err != nil {
			return false, fmt.Errorf("expand %s over stream %s: %w", runs.Describe(ph), streamID, err)
		}
		instances = make([]store.NewTaskInstance, 0, len(evs))
		for i := range evs {
			e := &evs[i]
			if e.SequenceIndex != step.From+int64(i) || e.ConsumedAt != nil {
				return false, nil // taken meanwhile: the next pass decides afresh
			}
			args, err := json.Marshal(map[string]json.RawMessage{"item": e.Payload})
			if err != nil {
				return false, fmt.Errorf("expand %s: encode item %d: %w", runs.Describe(ph), e.SequenceIndex, err)
			}
			instances = append(instances, mappedInstance(ph, task, int(e.SequenceIndex), args))
		}
		if int64(len(instances)) != through-step.From+1 {
			return false, nil
		}
	}
	closing := step.Close && through == step.Through
	if len(instances) > 0 || closing {
		err := s.Store.TaskInstanceIterate(ctx, &store.TaskInstanceIterateParams{DagRunID: run.ID, TaskID: ph.TaskID,
			StreamID: streamID, Instances: instances, From: step.From, Through: through, Close: closing, Now: now})
		switch {
		case benign(err):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("expand %s over stream %s: %w", runs.Describe(ph), streamID, err)
		}
	}
	if step.Overflow && through == step.Through {
		return true, s.overflow(ctx, run, task, ph, streamID)
	}
	if len(instances) > 0 {
		// Room for the producer, waiting while max_pending events are
		// not yet expanded.
		if err := s.Store.Notify(ctx, store.ChannelStream); err != nil {
			s.Logger.Warn("notify stream producers", "err", err)
		}
	}
	if through < step.Through || closing {
		res.again = true // more to create now; or downstream tasks may go on
	}
	return through == step.Through, nil
}

// mappedInstance is the new instance of a mapped task's placeholder ph
// with map index i and map arguments args.
func mappedInstance(ph *core.TaskInstance, task *core.Task, i int, args json.RawMessage) store.NewTaskInstance {
	return store.NewTaskInstance{
		ID: uuid.NewString(), TaskID: ph.TaskID, MapIndex: i, MaxTries: ph.MaxTries,
		Queue: ph.Queue, Pool: ph.Pool, PoolSlots: ph.PoolSlots, PriorityWeight: ph.PriorityWeight,
		Operator: ph.Operator, MapArgs: args, State: firstState(task),
	}
}

// overflow ends the expansion of placeholder ph, whose producer's stream
// grew past [scheduler] max_map_length (its first items have their
// instances): the placeholder fails, so its downstream tasks are
// upstream_failed, and the producer is stopped with the reason
// (service.StopStream).
func (s *Scheduler) overflow(ctx context.Context, run *core.DagRun, task *core.Task, ph *core.TaskInstance, streamID string) error {
	msg := fmt.Sprintf("task %q iterates over more than %d items ([scheduler] max_map_length %d): its first %d run, the rest are refused and the producer %q is stopped",
		task.TaskID, s.Config.MaxMapLength, s.Config.MaxMapLength, s.Config.MaxMapLength, task.Iterate)
	s.Logger.Error("expansion over its cap; failing the task and stopping its producer", "dag_id", run.DagID, "run_id", run.RunID,
		"task_id", task.TaskID, "stream_id", streamID, "err", msg)
	if err := s.failNone(ctx, ph); err != nil {
		return err
	}
	return s.Service.StopStream(ctx, streamID, msg)
}
