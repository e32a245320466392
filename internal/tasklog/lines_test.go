package tasklog

import (
	"slices"
	"testing"
)

// A piece of a log is answered as its lines; while the log may grow, a
// line not ended yet is left for a later piece unless it is all the piece
// holds.
func TestLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		data     string
		writing  bool
		want     []string
		wantRest int
	}{
		{"", true, []string{}, 0},
		{"", false, []string{}, 0},
		{"a\n", true, []string{"a"}, 0},
		{"a\nb\n", false, []string{"a", "b"}, 0},
		{"a\n\nb\n", true, []string{"a", "", "b"}, 0},
		{"a\nbc", true, []string{"a"}, 2},
		{"a\nbc", false, []string{"a", "bc"}, 0},
		{"abc", true, []string{"abc"}, 0}, // no line break at all: the piece moves on
		{"\n", true, []string{""}, 0},
		{"a\r\nb\n", true, []string{"a\r", "b"}, 0},
	} {
		got, rest := Lines([]byte(tc.data), tc.writing)
		if !slices.Equal(got, tc.want) || got == nil || rest != tc.wantRest {
			t.Errorf("Lines(%q, %t) = %q, %d; want %q, %d", tc.data, tc.writing, got, rest, tc.want, tc.wantRest)
		}
	}
}
