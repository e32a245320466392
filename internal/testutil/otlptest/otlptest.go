// Package otlptest is an in-process OTLP/HTTP trace receiver for tests: a
// loopback http.Server that decodes each ExportTraceServiceRequest
// (protobuf, as an OpenTelemetry collector receives it on /v1/traces)
// and keeps its spans.
package otlptest

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Span is a received span, flattened for assertions.
type Span struct {
	TraceID, SpanID, ParentID string // hex; ParentID "" for none
	Name                      string
	Start, End                time.Time
	Attrs                     map[string]string // values as text
	Events                    []Event
	StatusError               bool
	Resource                  map[string]string
}

// Event is a span event.
type Event struct {
	Name  string
	At    time.Time
	Attrs map[string]string
}

// Receiver collects the spans exported to it.
type Receiver struct {
	srv *httptest.Server

	mu    sync.Mutex
	spans []Span
	errs  []string
}

// Start runs a receiver on loopback until the test ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", r.export)
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	return r
}

// URL is the traces endpoint ([traces] otlp_endpoint).
func (r *Receiver) URL() string { return r.srv.URL + "/v1/traces" }

// BaseURL is the base URL (OTEL_EXPORTER_OTLP_ENDPOINT).
func (r *Receiver) BaseURL() string { return r.srv.URL }

func (r *Receiver) export(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	var msg coltrace.ExportTraceServiceRequest
	if err == nil {
		if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
			err = fmt.Errorf("content type %q, want application/x-protobuf", ct)
		} else {
			err = proto.Unmarshal(body, &msg)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs = append(r.errs, err.Error())
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, rs := range msg.GetResourceSpans() {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()), Name: s.GetName(),
					Start: time.Unix(0, int64(s.GetStartTimeUnixNano())).UTC(), //nolint:gosec // nanoseconds since 1970 fit
					End:   time.Unix(0, int64(s.GetEndTimeUnixNano())).UTC(),   //nolint:gosec // idem
					Attrs: attrs(s.GetAttributes()), StatusError: s.GetStatus().GetCode() == 2, Resource: res}
				for _, e := range s.GetEvents() {
					sp.Events = append(sp.Events, Event{Name: e.GetName(), At: time.Unix(0, int64(e.GetTimeUnixNano())).UTC(), //nolint:gosec // idem
						Attrs: attrs(e.GetAttributes())})
				}
				r.spans = append(r.spans, sp)
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	_, _ = w.Write(b)
}

// attrs flattens OTLP attributes to text.
func attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.GetKey()] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.GetKey()] = fmt.Sprint(x.IntValue)
		case *commonpb.AnyValue_BoolValue:
			out[kv.GetKey()] = fmt.Sprint(x.BoolValue)
		case *commonpb.AnyValue_DoubleValue:
			out[kv.GetKey()] = fmt.Sprint(x.DoubleValue)
		default:
			out[kv.GetKey()] = v.String()
		}
	}
	return out
}

// Spans returns the spans received so far, by start time.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]Span(nil), r.spans...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// Errors returns the requests the receiver could not decode.
func (r *Receiver) Errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// Where returns the received spans whose attributes include every pair of
// want.
func (r *Receiver) Where(want map[string]string) []Span {
	var out []Span
	for _, s := range r.Spans() {
		ok := true
		for k, v := range want {
			if s.Attrs[k] != v {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// Describe lists spans one a line, for failure messages.
func Describe(spans []Span) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "%s span %s parent %s %q %s..%s attrs %v events", s.TraceID, s.SpanID, s.ParentID, s.Name,
			s.Start.Format(time.RFC3339Nano), s.End.Format(time.RFC3339Nano), s.Attrs)
		for _, e := range s.Events {
			fmt.Fprintf(&b, " %s", e.Name)
		}
		b.WriteString("\n")
	}
	return b.String()
}
