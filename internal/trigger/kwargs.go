package trigger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// DecodeKwargs decodes kwargs (a JSON object) into out strictly: an unknown
// kwarg — one named in another case too, which encoding/json would take —,
// a kwarg given twice, a value of the wrong type or trailing data is an
// error naming it, wrapping core.ErrInvalid. Types then check ranges
// themselves.
func DecodeKwargs(kwargs json.RawMessage, out any) error {
	if len(bytes.TrimSpace(kwargs)) == 0 {
		kwargs = json.RawMessage("{}")
	}
	if err := exactNames(kwargs, reflect.TypeOf(out), ""); err != nil {
		return fmt.Errorf("kwargs: %w: %w", err, core.ErrInvalid)
	}
	kwargs = scalarsFromStrings(kwargs, reflect.TypeOf(out))
	dec := json.NewDecoder(bytes.NewReader(kwargs))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		msg := describeDecodeError(err)
		if name := failingKwarg(kwargs, out); name != "" && !strings.Contains(msg, strconv.Quote(name)) {
			msg = fmt.Sprintf("kwarg %q: %s", name, msg)
		}
		return fmt.Errorf("kwargs: %s: %w", msg, core.ErrInvalid)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("kwargs: unexpected data after the JSON object: %w", core.ErrInvalid)
	}
	return nil
}

// scalarsFromStrings reads a string kwarg as the number or boolean its
// field wants when the string is one: a templated kwarg ("{{ params.n }}")
// renders to a string, which would otherwise fail every try. Fields that
// decode themselves (a duration's "30s") and other strings are left as
// they are.
func scalarsFromStrings(raw json.RawMessage, t reflect.Type) json.RawMessage {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var obj map[string]json.RawMessage
	if t == nil || t.Kind() != reflect.Struct || json.Unmarshal(raw, &obj) != nil {
		return raw
	}
	changed := false
	for name, field := range jsonFields(t) {
		var s string
		if v, ok := obj[name]; !ok || json.Unmarshal(v, &s) != nil || decodesItself(field) {
			continue
		}
		for field.Kind() == reflect.Pointer {
			field = field.Elem()
		}
		s = strings.TrimSpace(s)
		switch field.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			if _, err := strconv.ParseFloat(s, 64); err == nil && json.Valid([]byte(s)) {
				obj[name], changed = json.RawMessage(s), true
			}
		case reflect.Bool:
			if s == "true" || s == "false" {
				obj[name], changed = json.RawMessage(s), true
			}
		}
	}
	if !changed {
		return raw
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return raw
	}
	return b
}

// decodesItself reports whether t (or *t) has its own JSON decoding.
func decodesItself(t reflect.Type) bool {
	u := reflect.TypeFor[json.Unmarshaler]()
	return t.Implements(u) || reflect.PointerTo(t).Implements(u)
}

// exactNames checks that every key of raw's objects that t decodes as a
// struct is one of its fields' JSON names exactly, and appears once:
// encoding/json matches names regardless of case and keeps a repeated
// key's last value, so "CONN_ID" would reach the field conn_id past a check
// that reads the kwargs by their exact names (runs.CheckTaskDeferral).
// Values of other types (maps, scalars) are left to the decoder.
func exactNames(raw json.RawMessage, t reflect.Type, path string) error {
	for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		if t.Kind() != reflect.Pointer {
			var items []json.RawMessage
			if json.Unmarshal(raw, &items) != nil {
				return nil // the decoder says what is wrong
			}
			for _, item := range items {
				if err := exactNames(item, t.Elem(), path); err != nil {
					return err
				}
			}
			return nil
		}
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil // not an object: the decoder says so
	}
	fields := jsonFields(t)
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		name, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil
		}
		field, ok := fields[name]
		switch {
		case seen[name]:
			return fmt.Errorf("kwarg %q is given twice", path+name)
		case !ok:
			for known := range fields {
				if strings.EqualFold(known, name) {
					return fmt.Errorf("unknown kwarg %q (kwargs are case-sensitive: %q)", path+name, path+known)
				}
			}
			continue // unknown: the decoder names it
		}
		seen[name] = true
		if err := exactNames(value, field, path+name+"."); err != nil {
			return err
		}
	}
	return nil
}

// jsonFields maps the JSON names of struct t's fields, those of embedded
// structs without a name of their own included, to their types, as
// encoding/json decodes them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			for k, v := range jsonFields(ft) {
				if _, ok := out[k]; !ok {
					out[k] = v
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// Invalid returns an error naming kwarg name and what is wrong with it,
// wrapping core.ErrInvalid.
func Invalid(name, format string, args ...any) error {
	return fmt.Errorf("kwarg %q %s: %w", name, fmt.Sprintf(format, args...), core.ErrInvalid)
}

// failingKwarg returns the first kwarg (in name order) that does not
// decode on its own into a value of out's type, so that an error a
// field's own decoder gives (an invalid duration) names its kwarg; "" when
// none does alone.
func failingKwarg(kwargs json.RawMessage, out any) string {
	var obj map[string]json.RawMessage
	t := reflect.TypeOf(out)
	if json.Unmarshal(kwargs, &obj) != nil || t == nil || t.Kind() != reflect.Pointer {
		return ""
	}
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		one, err := json.Marshal(map[string]json.RawMessage{name: obj[name]})
		if err == nil && json.Unmarshal(one, reflect.New(t.Elem()).Interface()) != nil {
			return name
		}
	}
	return ""
}

func describeDecodeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("kwarg %q must be %s, got JSON %s", kwargPath(te.Field), jsonKind(te.Type.Kind().String()), te.Value)
		}
		return fmt.Sprintf("kwargs must be a JSON object, got JSON %s", te.Value)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown kwarg " + f
	}
	return strings.TrimPrefix(msg, "json: ")
}

// kwargPath is a decode error's field path without the names of embedded
// structs (Go names, capitalized, where kwargs are snake_case), so that a
// kwarg a type shares through an embedded struct is named as written.
func kwargPath(field string) string {
	for {
		head, rest, ok := strings.Cut(field, ".")
		if !ok || head == "" || head[0] < 'A' || head[0] > 'Z' {
			return field
		}
		field = rest
	}
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "a list"
	case "map", "struct":
		return "an object"
	case "int", "int64", "int32", "uint", "uint64", "float64", "float32":
		return "a number"
	}
	return "a " + k
}

// Interval parses the duration kwarg name (a string such as "30s" or
// "5m"); nil gives def. Zero or negative is refused, naming the kwarg.
func Interval(name string, v *string, def time.Duration) (time.Duration, error) {
	if v == nil {
		return def, nil
	}
	d, err := time.ParseDuration(*v)
	switch {
	case err != nil:
		return 0, Invalid(name, "must be a duration such as \"30s\" or \"5m\", got %q", *v)
	case d <= 0:
		return 0, Invalid(name, "must be positive, got %s", *v)
	}
	return d, nil
}
