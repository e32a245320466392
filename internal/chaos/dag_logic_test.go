package chaos

import (
	"slices"
	"testing"
	"time"
)

func TestDoubleCompletions(t *testing.T) {
	t.Parallel()
	// Lines at 98.900 s and later; kills at 100.010 s and 103.000 s (the
	// window: a second on either side).
	kills := []time.Time{time.Unix(100, 10e6), time.Unix(103, 0)}
	cases := []struct {
		name, log        string
		anomalies, plain []string
		err              bool
	}{
		{name: "empty", log: ""},
		{name: "each once", log: "r1 a -1 1 100.0\nr1 b -1 3 100.1\nr1 m 0 1 100.2\nr1 m 1 2 100.3\nr2 a -1 1 100.4\n"},
		{name: "twice, no kill near the first", log: "r1 a -1 1 101.5\nr1 b -1 1 100.2\nr1 a -1 2 104.0\n",
			anomalies: []string{"r1 a[-1] by tries 1, 2 (the nearest kill to each earlier run's end: -1.49s)"}},
		{name: "twice, killed at once after the first", log: "r1 a -1 1 100.005\nr1 a -1 2 102.0\n",
			plain: []string{"r1 a[-1] by tries 1, 2 (the nearest kill to each earlier run's end: 5ms)"}},
		{name: "killed too late after the first", log: "r1 a -1 1 99.0\nr1 a -1 2 102.0\n",
			anomalies: []string{"r1 a[-1] by tries 1, 2 (the nearest kill to each earlier run's end: 1.01s)"}},
		{name: "killed just before the first (it outlived its worker)", log: "r1 a -1 1 100.02\nr1 a -1 2 102.0\n",
			plain: []string{"r1 a[-1] by tries 1, 2 (the nearest kill to each earlier run's end: -10ms)"}},
		{name: "killed long before the first", log: "r1 a -1 1 101.2\nr1 a -1 2 104.0\n",
			anomalies: []string{"r1 a[-1] by tries 1, 2 (the nearest kill to each earlier run's end: -1.19s)"}},
		{name: "no time", log: "r1 a -1 1\nr1 a -1 2\n", anomalies: []string{"r1 a[-1] by tries 1, 2 (the nearest kill to each earlier run's end: none)"}},
		{name: "map indexes apart, tries in order", log: "r1 m 0 4 104.0\nr1 m 1 1 100.0\nr1 m 0 1 102.99\n",
			plain: []string{"r1 m[0] by tries 1, 4 (the nearest kill to each earlier run's end: 10ms)"}},
		{name: "three runs, one unexplained", log: "r1 a -1 1 98.9\nr1 a -1 2 102.99\nr1 a -1 3 105\n",
			anomalies: []string{"r1 a[-1] by tries 1, 2, 3 (the nearest kill to each earlier run's end: 1.11s, 10ms)"}},
		{name: "sorted", log: "r2 a -1 1 1\nr2 a -1 2 2\nr1 z -1 1 1\nr1 z -1 2 2\n",
			anomalies: []string{"r1 z[-1] by tries 1, 2 (the nearest kill to each earlier run's end: 1m39.01s)",
				"r2 a[-1] by tries 1, 2 (the nearest kill to each earlier run's end: 1m39.01s)"}},
		{name: "torn line", log: "r1 a -1\n", err: true},
		{name: "try zero", log: "r1 a -1 0 1\n", err: true},
		{name: "not a number", log: "r1 a x 1 1\n", err: true},
		{name: "not a time", log: "r1 a -1 1 noon\n", err: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			done, err := parseEvidence(tc.log)
			if (err != nil) != tc.err {
				t.Fatalf("parseEvidence(%q) error = %v, want error %t", tc.log, err, tc.err)
			}
			anomalies, plain := doubleCompletions(done, kills)
			if !slices.Equal(anomalies, tc.anomalies) || !slices.Equal(plain, tc.plain) {
				t.Errorf("doubleCompletions(%q) = %q, %q; want anomalies %q, at-least-once %q", tc.log, anomalies, plain, tc.anomalies, tc.plain)
			}
		})
	}
}
