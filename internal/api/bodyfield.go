package api

import (
	"encoding/json"
	"reflect"

	"github.com/danielgtaylor/huma/v2"
)

// field is a body field that may be left out, given as null, or given:
// Set says it was in the body (null included), Value holds what it gave
// (optional is a query parameter's counterpart).
type field[T any] struct {
	Set   bool
	Value *T
}

// UnmarshalJSON records that the field was given; null leaves Value nil.
func (o *field[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	o.Value = &v
	return nil
}

// or is the value given, or def when none was (left out or null).
func (o field[T]) or(def T) T {
	if o.Value == nil {
		return def
	}
	return *o.Value
}

// Schema documents the field as T's schema, null allowed.
func (field[T]) Schema(r huma.Registry) *huma.Schema {
	s := *huma.SchemaFromType(r, reflect.TypeFor[T]())
	s.Nullable = true
	return &s
}
