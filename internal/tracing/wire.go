package tracing

import (
	"encoding/binary"
	"math"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The OTLP trace request (opentelemetry/proto/collector/trace/v1
// ExportTraceServiceRequest) written in protobuf's wire format by hand:
// the generated packages would link gRPC and protobuf's registry into every
// weir process, ~5 ms of each start (docs/adr/0038-no-protobuf-runtime.md).
// Field numbers are those of opentelemetry-proto's trace.proto,
// common.proto and resource.proto; fields at their zero value are left
// out, as proto3 does, except the one set field of an AnyValue.

// Wire types.
const (
	wireVarint = 0
	wireI64    = 1
	wireLen    = 2
	wireI32    = 5
)

// Span flags: the low 8 bits are the W3C trace flags; these say whether
// the parent (or a link's span) is remote.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// encodeRequest returns the ExportTraceServiceRequest carrying spans, one
// ResourceSpans per resource and one ScopeSpans per scope within it, in
// the order they first appear.
func encodeRequest(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeSpans struct {
		scope instrumentation.Scope
		spans []byte
	}
	type resourceSpans struct {
		res    sdktrace.ReadOnlySpan // the first span of the resource
		scopes []*scopeSpans
	}
	var order []*resourceSpans
	byRes := map[attribute.Distinct]*resourceSpans{}
	for _, s := range spans {
		key := s.Resource().Equivalent()
		rs := byRes[key]
		if rs == nil {
			rs = &resourceSpans{res: s}
			byRes[key] = rs
			order = append(order, rs)
		}
		var ss *scopeSpans
		for _, c := range rs.scopes {
			if c.scope == s.InstrumentationScope() {
				ss = c
				break
			}
		}
		if ss == nil {
			ss = &scopeSpans{scope: s.InstrumentationScope()}
			rs.scopes = append(rs.scopes, ss)
		}
		ss.spans = appendMessage(ss.spans, 2, appendSpan(nil, s))
	}
	var req []byte
	for _, rs := range order {
		var b []byte
		r := rs.res.Resource()
		b = appendMessage(b, 1, appendKeyValues(nil, 1, r.Attributes()))
		for _, ss := range rs.scopes {
			var sb []byte
			var scope []byte
			scope = appendString(scope, 1, ss.scope.Name)
			scope = appendString(scope, 2, ss.scope.Version)
			scope = appendKeyValues(scope, 3, ss.scope.Attributes.ToSlice())
			sb = appendMessage(sb, 1, scope)
			sb = append(sb, ss.spans...)
			sb = appendString(sb, 3, ss.scope.SchemaURL)
			b = appendMessage(b, 2, sb)
		}
		b = appendString(b, 3, r.SchemaURL())
		req = appendMessage(req, 1, b)
	}
	return req
}

// appendSpan appends the fields of one Span message.
func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc, parent := s.SpanContext(), s.Parent()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	b = appendString(b, 3, sc.TraceState().String())
	if psid := parent.SpanID(); psid.IsValid() {
		b = appendBytes(b, 4, psid[:])
	}
	b = appendString(b, 5, s.Name())
	if k := s.SpanKind(); k >= trace.SpanKindInternal && k <= trace.SpanKindConsumer {
		b = appendVarint(b, 6, uint64(k)) // OTLP numbers the kinds as trace.SpanKind does
	}
	b = appendFixed64(b, 7, unixNano(s.StartTime().UnixNano()))
	b = appendFixed64(b, 8, unixNano(s.EndTime().UnixNano()))
	b = appendKeyValues(b, 9, s.Attributes())
	b = appendVarint(b, 10, count(s.DroppedAttributes()))
	for _, e := range s.Events() {
		var eb []byte
		eb = appendFixed64(eb, 1, unixNano(e.Time.UnixNano()))
		eb = appendString(eb, 2, e.Name)
		eb = appendKeyValues(eb, 3, e.Attributes)
		eb = appendVarint(eb, 4, count(e.DroppedAttributeCount))
		b = appendMessage(b, 11, eb)
	}
	b = appendVarint(b, 12, count(s.DroppedEvents()))
	for _, l := range s.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		var lb []byte
		lb = appendBytes(lb, 1, ltid[:])
		lb = appendBytes(lb, 2, lsid[:])
		lb = appendString(lb, 3, l.SpanContext.TraceState().String())
		lb = appendKeyValues(lb, 4, l.Attributes)
		lb = appendVarint(lb, 5, count(l.DroppedAttributeCount))
		lb = appendFixed32(lb, 6, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
		b = appendMessage(b, 13, lb)
	}
	b = appendVarint(b, 14, count(s.DroppedLinks()))
	var st []byte
	st = appendString(st, 2, s.Status().Description)
	switch s.Status().Code { // OTLP: 1 is OK and 2 ERROR (codes: the reverse)
	case codes.Ok:
		st = appendVarint(st, 3, 1)
	case codes.Error:
		st = appendVarint(st, 3, 2)
	case codes.Unset:
	}
	b = appendMessage(b, 15, st)
	return appendFixed32(b, 16, spanFlags(sc.TraceFlags(), parent))
}

// spanFlags are a span's (or link's) trace flags, saying whether other is
// remote.
func spanFlags(tf trace.TraceFlags, other trace.SpanContext) uint32 {
	flags := uint32(tf) | flagHasIsRemote
	if other.IsRemote() {
		flags |= flagIsRemote
	}
	return flags
}

// appendKeyValues appends each attribute as a KeyValue in field f.
func appendKeyValues(b []byte, f int, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		var kb []byte
		kb = appendString(kb, 1, string(kv.Key))
		kb = appendMessage(kb, 2, appendAnyValue(nil, kv.Value))
		b = appendMessage(b, f, kb)
	}
	return b
}

// appendAnyValue appends the fields of an AnyValue holding v: string 1,
// bool 2, int 3, double 4, array 5, key-value list 6, bytes 7. Its one set
// field is written even at its zero value (a oneof has presence); an
// empty attribute is an AnyValue with none set.
func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.STRING:
		return appendLen(b, 1, []byte(strings.ToValidUTF8(v.AsString(), "\uFFFD")))
	case attribute.BOOL:
		var x uint64
		if v.AsBool() {
			x = 1
		}
		return binary.AppendUvarint(appendTag(b, 2, wireVarint), x)
	case attribute.INT64:
		return binary.AppendUvarint(appendTag(b, 3, wireVarint), uint64(v.AsInt64())) //nolint:gosec // two's complement, as protobuf's int64
	case attribute.FLOAT64:
		return binary.LittleEndian.AppendUint64(appendTag(b, 4, wireI64), math.Float64bits(v.AsFloat64()))
	case attribute.BYTESLICE:
		return appendLen(b, 7, v.AsByteSlice())
	case attribute.MAP:
		var list []byte
		list = appendKeyValues(list, 1, v.AsMap())
		return appendLen(b, 6, list)
	case attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE, attribute.STRINGSLICE, attribute.SLICE:
		var arr []byte
		for _, e := range sliceValues(v) {
			arr = appendLen(arr, 1, appendAnyValue(nil, e))
		}
		return appendLen(b, 5, arr)
	case attribute.EMPTY:
	}
	return b
}

// sliceValues returns the elements of a slice attribute as values.
func sliceValues(v attribute.Value) []attribute.Value {
	switch v.Type() {
	case attribute.BOOLSLICE:
		return each(v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return each(v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return each(v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return each(v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		return v.AsSlice()
	default:
		return nil
	}
}

// each returns f of every element of xs.
func each[T any](xs []T, f func(T) attribute.Value) []attribute.Value {
	out := make([]attribute.Value, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func appendTag(b []byte, f, wire int) []byte {
	return binary.AppendUvarint(b, uint64(f)<<3|uint64(wire)) //nolint:gosec // field numbers are small constants
}

// appendLen appends a length-delimited field, even when empty.
func appendLen(b []byte, f int, v []byte) []byte {
	b = binary.AppendUvarint(appendTag(b, f, wireLen), uint64(len(v)))
	return append(b, v...)
}

// appendMessage appends an embedded message (or repeated element) in f.
func appendMessage(b []byte, f int, msg []byte) []byte { return appendLen(b, f, msg) }

func appendBytes(b []byte, f int, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	return appendLen(b, f, v)
}

// appendString appends a string field; protobuf strings are UTF-8, so
// invalid bytes (which a collector would refuse the whole request for)
// become U+FFFD.
func appendString(b []byte, f int, s string) []byte {
	if s == "" {
		return b
	}
	return appendLen(b, f, []byte(strings.ToValidUTF8(s, "\uFFFD")))
}

func appendVarint(b []byte, f int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(appendTag(b, f, wireVarint), v)
}

func appendFixed64(b []byte, f int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint64(appendTag(b, f, wireI64), v)
}

func appendFixed32(b []byte, f int, v uint32) []byte {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint32(appendTag(b, f, wireI32), v)
}

// unixNano is a time as OTLP's unsigned nanoseconds; before 1970 is 0.
func unixNano(ns int64) uint64 { return uint64(max(ns, 0)) }

// count is a dropped-items count as OTLP's uint32.
func count(n int) uint64 { return uint64(min(max(n, 0), math.MaxUint32)) }
