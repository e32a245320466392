package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/weirflow/weir/internal/core"
)

// Attribute keys of a try's spans (the log attribute keys, CONVENTIONS §9).
const (
	KeyDagID     = "dag_id"
	KeyRunID     = "run_id"
	KeyTaskID    = "task_id"
	KeyMapIndex  = "map_index"
	KeyTryNumber = "try_number"
	KeyState     = "state"
)

// Span names: a try's span is named after its task; its phases are
// "queued" and "running".
const (
	PhaseQueued  = "queued"
	PhaseRunning = "running"
)

// TryFinished records the life of a try that ended in state at end, as
// the database recorded it (ti is the try as it was before the report):
// a span of the try (a child of its run's span), from its run's creation (runCreated, for a first
// try; zero = unknown) or its queueing until end, with the events
// created, queued, running, finished (and retry, with next_retry_at, for
// up_for_retry); and its phases as child spans, queued (queued until
// started) and running (started until end).
func (t *Tracer) TryFinished(ti *core.TaskInstance, runCreated time.Time, state core.TIState, end time.Time, nextRetry *time.Time) {
	if t == nil {
		return
	}
	t.tryEnded(ti, runCreated, state, end, nextRetry, nil)
}

// TryFailedOver records a running try the scheduler ended at end because
// its worker stopped heartbeating: as TryFinished, with the event
// failed_over (naming the worker) before finished.
func (t *Tracer) TryFailedOver(ti *core.TaskInstance, state core.TIState, nextRetry *time.Time, end time.Time) {
	if t == nil {
		return
	}
	t.tryEnded(ti, time.Time{}, state, end, nextRetry, func(s trace.Span) {
		s.AddEvent("failed_over", trace.WithTimestamp(end), trace.WithAttributes(attribute.String("worker_id", ti.WorkerID)))
	})
}

// tryEnded sends a try's span and phases (TryFinished); before, when set,
// adds to the try's span before its finished event.
func (t *Tracer) tryEnded(ti *core.TaskInstance, runCreated time.Time, state core.TIState, end time.Time, nextRetry *time.Time, before func(trace.Span)) {
	begin := end
	for _, at := range []*time.Time{ti.StartDate, ti.QueuedAt} {
		if at != nil && at.Before(begin) {
			begin = *at
		}
	}
	if ti.TryNumber <= 1 && !runCreated.IsZero() && runCreated.Before(begin) {
		begin = runCreated
	}
	attrs := append(tryAttrs(ti), attribute.String(KeyState, string(state)), attribute.String("queue", ti.Queue),
		attribute.String("pool", ti.Pool), attribute.String("operator", ti.Operator))
	if ti.Hostname != "" {
		attrs = append(attrs, attribute.String("hostname", ti.Hostname))
	}
	ctx, span := t.tr.Start(withIDs(runContext(ti.DagID, ti.RunID), trace.TraceID{}, TrySpanID(ti.ID)), ti.TaskID,
		trace.WithTimestamp(begin), trace.WithAttributes(attrs...), trace.WithSpanKind(trace.SpanKindInternal))
	if ti.TryNumber <= 1 && !runCreated.IsZero() {
		span.AddEvent("created", trace.WithTimestamp(runCreated))
	}
	if ti.QueuedAt != nil {
		span.AddEvent(PhaseQueued, trace.WithTimestamp(*ti.QueuedAt))
		if ti.StartDate != nil && !ti.StartDate.Before(*ti.QueuedAt) {
			t.phase(ctx, ti, PhaseQueued, *ti.QueuedAt, *ti.StartDate, nil)
		}
	}
	if ti.StartDate != nil {
		span.AddEvent(PhaseRunning, trace.WithTimestamp(*ti.StartDate))
		t.phase(ctx, ti, PhaseRunning, *ti.StartDate, end, nil)
	}
	if before != nil {
		before(span)
	}
	span.AddEvent("finished", trace.WithTimestamp(end), trace.WithAttributes(attribute.String(KeyState, string(state))))
	if state == core.TIUpForRetry && nextRetry != nil {
		span.AddEvent("retry", trace.WithTimestamp(end), trace.WithAttributes(attribute.String("next_retry_at", nextRetry.UTC().Format(time.RFC3339Nano))))
	}
	if state == core.TIFailed || state == core.TIUpForRetry {
		span.SetStatus(codes.Error, "the try ended "+string(state))
	}
	span.End(trace.WithTimestamp(end))
}

// TryDeferred records a run of a try that deferred at `at` on a trigger of
// type trigger: a running phase (from its start) ending with the event
// deferred. It is a child of the try's span, which TryFinished sends when
// the resumed try ends.
func (t *Tracer) TryDeferred(ti *core.TaskInstance, trigger string, at time.Time) {
	if t == nil || ti.StartDate == nil {
		return
	}
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: RunTraceID(ti.DagID, ti.RunID),
		SpanID: TrySpanID(ti.ID), TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	t.phase(ctx, ti, PhaseRunning, *ti.StartDate, at, func(s trace.Span) {
		s.AddEvent("deferred", trace.WithTimestamp(at), trace.WithAttributes(attribute.String("trigger", trigger)))
	})
}

// RunFinished records a DAG run that ended in state at end: its span, the
// root of the run's trace, from its creation (queued) to end, with the
// events queued, running (when it started) and finished.
func (t *Tracer) RunFinished(run *core.DagRun, state core.DagRunState, end time.Time) {
	if t == nil {
		return
	}
	ctx := withIDs(context.Background(), RunTraceID(run.DagID, run.RunID), RunSpanID(run.DagID, run.RunID))
	_, span := t.tr.Start(ctx, run.DagID, trace.WithTimestamp(run.QueuedAt), trace.WithAttributes(
		attribute.String(KeyDagID, run.DagID), attribute.String(KeyRunID, run.RunID),
		attribute.String("run_type", string(run.RunType)), attribute.String(KeyState, string(state))))
	span.AddEvent(PhaseQueued, trace.WithTimestamp(run.QueuedAt))
	if run.StartDate != nil {
		span.AddEvent(PhaseRunning, trace.WithTimestamp(*run.StartDate))
	}
	span.AddEvent("finished", trace.WithTimestamp(end), trace.WithAttributes(attribute.String(KeyState, string(state))))
	if state == core.RunFailed {
		span.SetStatus(codes.Error, "the run failed")
	}
	span.End(trace.WithTimestamp(end))
}

// runContext is a context whose span is the run's (remote: sent by the
// scheduler that ends the run), the parent of its tries' spans.
func runContext(dagID, runID string) context.Context {
	return trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: RunTraceID(dagID, runID), SpanID: RunSpanID(dagID, runID), TraceFlags: trace.FlagsSampled, Remote: true}))
}

// phase sends one phase of ti (a child of the span in parent) from begin
// to end; more, when set, adds to it before it ends.
func (t *Tracer) phase(parent context.Context, ti *core.TaskInstance, name string, begin, end time.Time, more func(trace.Span)) {
	_, s := t.tr.Start(withIDs(parent, trace.TraceID{}, phaseSpanID(ti.ID, name, begin.UnixNano())), name,
		trace.WithTimestamp(begin), trace.WithAttributes(tryAttrs(ti)...))
	if more != nil {
		more(s)
	}
	s.End(trace.WithTimestamp(end))
}

// tryAttrs are the attributes naming a try, on each of its spans.
func tryAttrs(ti *core.TaskInstance) []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String(KeyDagID, ti.DagID), attribute.String(KeyRunID, ti.RunID),
		attribute.String(KeyTaskID, ti.TaskID), attribute.Int(KeyMapIndex, ti.MapIndex), attribute.Int(KeyTryNumber, ti.TryNumber)}
}
