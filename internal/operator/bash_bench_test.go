package operator

import (
	"context"
	"testing"
)

// BenchmarkBashTrue measures one bash try of `true`: the process group and
// the worker's guard, the subprocess, the wait and the cleanup.
func BenchmarkBashTrue(b *testing.B) {
	r := &Runner{}
	ctx := context.Background()
	for b.Loop() {
		req, _ := bashReq("true", nil)
		if _, err := r.Run(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
