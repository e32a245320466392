package config

import (
	"fmt"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Duration is a time.Duration written as "30s", "5m" or "1h" in weir.toml.
type Duration time.Duration

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats the duration as Go does ("1m30s").
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalText parses a duration; a bare number is rejected because its
// unit would be a guess.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration (use a unit: \"30s\", \"5m\", \"1h\")", string(b))
	}
	*d = Duration(v)
	return nil
}

// UnmarshalTOML reads a duration from weir.toml (the decoder's
// EnableUnmarshalerInterface): a string with a unit, as UnmarshalText; a
// TOML number's unit would be a guess as much as a bare number's.
func (d *Duration) UnmarshalTOML(raw []byte) error {
	var v struct {
		S string `toml:"s"`
	}
	err := toml.Unmarshal(append([]byte("s = "), raw...), &v)
	if err == nil {
		err = d.UnmarshalText([]byte(v.S))
	}
	if err != nil {
		// raw is the document's own bytes: the decoder places the error
		// (line, column, the option).
		return &unstable.ParserError{Highlight: raw, Message: fmt.Sprintf("%s is not a duration (use a unit: \"30s\", \"5m\", \"1h\")", raw)}
	}
	return nil
}

// MarshalText formats the duration.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }
