package tasklog

import (
	"slices"
	"testing"
)

// A piece of a log is answered as its lines; a line not ended yet is left
// for a later piece, but at the end of a log that grows no more, and when
// it is a part of a line longer than a piece.
func TestLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		data          string
		final, beyond bool
		want          []string
		wantRest      int
	}{
		{"", false, false, []string{}, 0},
		{"", true, false, []string{}, 0},
		{"a\n", false, false, []string{"a"}, 0},
		{"a\nb\n", true, false, []string{"a", "b"}, 0},
		{"a\n\nb\n", false, false, []string{"a", "", "b"}, 0},
		{"a\nbc", false, false, []string{"a"}, 2},      // bc is being written
		{"a\nbc", true, false, []string{"a", "bc"}, 0}, // the end of a finished log
		{"a\nbc", true, true, []string{"a"}, 2},        // a read cut bc
		{"abc", false, false, []string{}, 3},           // a line being written: left whole for later
		{"abc", false, true, []string{"abc"}, 0},       // part of a line longer than a piece
		{"abc", true, false, []string{"abc"}, 0},       // the end
		{"\n", false, false, []string{""}, 0},
		{"a\r\nb\n", false, false, []string{"a\r", "b"}, 0},
	} {
		got, rest := Lines([]byte(tc.data), tc.final, tc.beyond)
		if !slices.Equal(got, tc.want) || got == nil || rest != tc.wantRest {
			t.Errorf("Lines(%q, final %t, beyond %t) = %q, %d; want %q, %d", tc.data, tc.final, tc.beyond, got, rest, tc.want, tc.wantRest)
		}
	}
}
