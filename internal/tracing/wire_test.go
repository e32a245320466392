package tracing

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/google/go-cmp/cmp"
)

// The hand-written request decodes, with opentelemetry-proto's generated
// code, into exactly the message the generated code would build: every
// attribute type, events, links, status, kinds, flags, dropped counts,
// resources and scopes.
func TestWireMatchesOpenTelemetryProto(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	res := resource.NewWithAttributes("https://schema/r", attribute.String("service.name", "weir"))
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(rec),
		sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{AttributeCountLimit: 14, EventCountLimit: 1, LinkCountLimit: 1,
			AttributeValueLengthLimit: -1, AttributePerEventCountLimit: 1, AttributePerLinkCountLimit: 1}))
	t0 := time.Date(2026, 5, 1, 8, 0, 0, 123, time.UTC)
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ts, _ := trace.ParseTraceState("k=v")
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{9, 9, 9, 9, 9, 9, 9, 9},
		TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)
	tr := tp.Tracer("scope-a", trace.WithInstrumentationVersion("1.2"), trace.WithInstrumentationAttributes(attribute.Bool("x", true)),
		trace.WithSchemaURL("https://schema/s"))
	_, s := tr.Start(ctx, "first", trace.WithTimestamp(t0), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithLinks(trace.Link{SpanContext: remote}, // over the limit: the SDK keeps the last
			trace.Link{SpanContext: remote, Attributes: []attribute.KeyValue{attribute.Int("a", 1), attribute.Int("b", 2)}}),
		trace.WithAttributes(
			attribute.String("s", "text"), attribute.String("empty", ""), attribute.Bool("f", false), attribute.Int64("neg", -5),
			attribute.Int64("zero", 0), attribute.Float64("pi", 3.25), attribute.BoolSlice("bs", []bool{true, false}),
			attribute.Int64Slice("is", []int64{1, -1}), attribute.Float64Slice("fs", []float64{0.5}),
			attribute.StringSlice("ss", []string{"a", ""}), attribute.ByteSlice("raw", []byte{0, 1}),
			attribute.Map("m", attribute.Int("n", 7), attribute.String("bad", "x\xffy")),
			attribute.Slice("mixed", attribute.BoolValue(true), attribute.StringValue("s")), attribute.KeyValue{Key: "empty_value"},
			attribute.String("over", "the limit")))
	s.AddEvent("ev", trace.WithTimestamp(t0.Add(time.Second)), trace.WithAttributes(attribute.String("k", "v"), attribute.String("k2", "v2")))
	s.AddEvent("dropped")
	s.SetStatus(codes.Error, "broke")
	s.End(trace.WithTimestamp(t0.Add(2 * time.Second)))
	_, s2 := tp.Tracer("scope-b").Start(context.Background(), "second", trace.WithTimestamp(t0))
	s2.SetStatus(codes.Ok, "")
	s2.End(trace.WithTimestamp(t0.Add(time.Millisecond)))

	spans := rec.Ended()
	var got coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(encodeRequest(spans), &got); err != nil {
		t.Fatalf("the generated code cannot read the request: %v", err)
	}
	kv := func(k string, v *commonpb.AnyValue) *commonpb.KeyValue { return &commonpb.KeyValue{Key: k, Value: v} }
	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	i64 := func(i int64) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
	}
	boo := func(b bool) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
	}
	dbl := func(f float64) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
	}
	arr := func(vs ...*commonpb.AnyValue) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
	}
	first, second := spans[0].SpanContext(), spans[1].SpanContext()
	id := func(sc trace.SpanContext) ([]byte, []byte) {
		tid, sid := sc.TraceID(), sc.SpanID()
		return tid[:], sid[:]
	}
	firstTID, firstSID := id(first)
	secondTID, secondSID := id(second)
	remoteSID := remote.SpanID()
	want := &coltrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource:  &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", str("weir"))}},
		SchemaUrl: "https://schema/r",
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope:     &commonpb.InstrumentationScope{Name: "scope-a", Version: "1.2", Attributes: []*commonpb.KeyValue{kv("x", boo(true))}},
			SchemaUrl: "https://schema/s",
			Spans: []*tracepb.Span{{
				TraceId: firstTID, SpanId: firstSID, TraceState: "k=v", ParentSpanId: remoteSID[:], Name: "first",
				Kind: tracepb.Span_SPAN_KIND_SERVER, StartTimeUnixNano: uint64(t0.UnixNano()), EndTimeUnixNano: uint64(t0.Add(2 * time.Second).UnixNano()),
				Attributes: []*commonpb.KeyValue{
					kv("s", str("text")), kv("empty", str("")), kv("f", boo(false)), kv("neg", i64(-5)), kv("zero", i64(0)),
					kv("pi", dbl(3.25)), kv("bs", arr(boo(true), boo(false))), kv("is", arr(i64(1), i64(-1))), kv("fs", arr(dbl(0.5))),
					kv("ss", arr(str("a"), str(""))), kv("raw", &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0, 1}}}),
					kv("m", &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{
						Values: []*commonpb.KeyValue{kv("bad", str("x\uFFFDy")), kv("n", i64(7))}}}}), // sorted by the SDK
					kv("mixed", arr(boo(true), str("s"))), kv("empty_value", &commonpb.AnyValue{}),
				},
				DroppedAttributesCount: 1,
				Events:                 []*tracepb.Span_Event{{TimeUnixNano: uint64(t0.Add(time.Second).UnixNano()), Name: "dropped" /* the limit keeps the last */, Attributes: nil}},
				DroppedEventsCount:     1,
				Links: []*tracepb.Span_Link{{TraceId: tid[:], SpanId: remoteSID[:], TraceState: "k=v",
					Attributes: []*commonpb.KeyValue{kv("a", i64(1))}, DroppedAttributesCount: 1, Flags: 0x301}},
				DroppedLinksCount: 1,
				Status:            &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "broke"},
				Flags:             0x301,
			}},
		}, {
			Scope: &commonpb.InstrumentationScope{Name: "scope-b"},
			Spans: []*tracepb.Span{{TraceId: secondTID, SpanId: secondSID, Name: "second", Kind: tracepb.Span_SPAN_KIND_INTERNAL,
				StartTimeUnixNano: uint64(t0.UnixNano()), EndTimeUnixNano: uint64(t0.Add(time.Millisecond).UnixNano()),
				Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}, Flags: 0x101}},
		}},
	}}}
	// The event kept is whichever the SDK kept; take its time from the span.
	ev := spans[0].Events()
	if len(ev) != 1 {
		t.Fatalf("the SDK kept %d events, the test expects 1", len(ev))
	}
	want.ResourceSpans[0].ScopeSpans[0].Spans[0].Events[0].Name = ev[0].Name
	want.ResourceSpans[0].ScopeSpans[0].Spans[0].Events[0].TimeUnixNano = uint64(ev[0].Time.UnixNano())
	for _, a := range ev[0].Attributes {
		want.ResourceSpans[0].ScopeSpans[0].Spans[0].Events[0].Attributes = append(want.ResourceSpans[0].ScopeSpans[0].Spans[0].Events[0].Attributes,
			kv(string(a.Key), str(a.Value.AsString())))
	}
	want.ResourceSpans[0].ScopeSpans[0].Spans[0].Events[0].DroppedAttributesCount = uint32(ev[0].DroppedAttributeCount)
	if diff := cmp.Diff(want, &got, protocmp.Transform()); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}
