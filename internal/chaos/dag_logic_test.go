package chaos

import (
	"slices"
	"testing"
)

func TestDoubleCompletions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, log string
		want      []string
		err       bool
	}{
		{name: "empty", log: ""},
		{name: "each once", log: "r1 a -1 1\nr1 b -1 3\nr1 m 0 1\nr1 m 1 2\nr2 a -1 1\n"},
		{name: "twice by two tries", log: "r1 a -1 1\nr1 b -1 1\nr1 a -1 2\n", want: []string{"r1 a[-1] by tries 1, 2"}},
		{name: "map indexes apart", log: "r1 m 0 1\nr1 m 1 1\nr1 m 0 4\n", want: []string{"r1 m[0] by tries 1, 4"}},
		{name: "same try twice", log: "r2 a -1 1\nr2 a -1 1\n", want: []string{"r2 a[-1] by tries 1, 1"}},
		{name: "sorted", log: "r2 a -1 1\nr2 a -1 2\nr1 z -1 1\nr1 z -1 2\n", want: []string{"r1 z[-1] by tries 1, 2", "r2 a[-1] by tries 1, 2"}},
		{name: "torn line", log: "r1 a -1\n", err: true},
		{name: "try zero", log: "r1 a -1 0\n", err: true},
		{name: "not a number", log: "r1 a x 1\n", err: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			done, err := parseEvidence(tc.log)
			if (err != nil) != tc.err {
				t.Fatalf("parseEvidence(%q) error = %v, want error %t", tc.log, err, tc.err)
			}
			if got := doubleCompletions(done); !slices.Equal(got, tc.want) {
				t.Errorf("doubleCompletions(%q) = %q, want %q", tc.log, got, tc.want)
			}
		})
	}
}
