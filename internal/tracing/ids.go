package tracing

import (
	"context"
	"crypto/sha256"
	"strconv"

	"go.opentelemetry.io/otel/trace"
)

// RunTraceID is the trace id of a DAG run: every span of its tries,
// made by whichever process, carries it.
func RunTraceID(dagID, runID string) trace.TraceID {
	var id trace.TraceID
	copy(id[:], digest("run", dagID, runID))
	return id
}

// RunSpanID is the span id of a DAG run's own span, the root of its trace
// and the parent of its tries' spans.
func RunSpanID(dagID, runID string) trace.SpanID {
	return spanID("run", dagID, runID)
}

// TrySpanID is the span id of one try (tiID names the try: a retry is a
// new task instance row id), the parent of its phases.
func TrySpanID(tiID string) trace.SpanID {
	return spanID("try", tiID)
}

// phaseSpanID is the span id of a phase of a try that began at startNanos
// (a try runs again after a deferral: each run is a phase of its own).
func phaseSpanID(tiID, phase string, startNanos int64) trace.SpanID {
	return spanID("phase", tiID, phase, strconv.FormatInt(startNanos, 10))
}

func spanID(parts ...string) trace.SpanID {
	var id trace.SpanID
	copy(id[:], digest(parts...))
	return id
}

// digest hashes parts, each length-prefixed so that no two lists of
// parts collide by concatenation.
func digest(parts ...string) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{':'})
		h.Write([]byte(p))
	}
	return h.Sum(nil)
}

// wantedIDs are the ids the next span started with the context gets.
type wantedIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

type wantedKey struct{}

// withIDs returns ctx whose next span gets the given ids (the trace id
// only matters for a span without a parent).
func withIDs(ctx context.Context, tid trace.TraceID, sid trace.SpanID) context.Context {
	return context.WithValue(ctx, wantedKey{}, wantedIDs{trace: tid, span: sid})
}

// derivedIDs is the SDK's id generator: it hands out the ids withIDs put
// in the context, so that every process derives the same ones.
type derivedIDs struct{}

func (derivedIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	w, _ := ctx.Value(wantedKey{}).(wantedIDs)
	return w.trace, w.span
}

func (derivedIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	w, _ := ctx.Value(wantedKey{}).(wantedIDs)
	return w.span
}
