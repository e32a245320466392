package objstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/weirflow/weir/internal/objstore"
)

// A listing beside deletes (a worker's state sweep removing objects while
// another caller lists the store) sees each object or not, and never fails
// because a folder vanished under the walk.
func TestFSListBesideDeletes(t *testing.T) {
	ctx := context.Background()
	s, err := objstore.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const n = 150
	for i := range n {
		if err := s.Put(ctx, fmt.Sprintf("task/run-%d/key/%d", i, i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	done := make(chan struct{})
	go func() {
		defer wg.Done()
		defer close(done)
		for i := range n {
			if err := s.Delete(ctx, fmt.Sprintf("task/run-%d/key/%d", i, i)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for listing := true; listing; {
		select {
		case <-done:
			listing = false
		default:
		}
		if _, err := s.List(ctx, "task/"); err != nil {
			t.Fatalf("list beside deletes: %v", err)
		}
	}
	wg.Wait()
	if keys, err := s.List(ctx, ""); err != nil || len(keys) != 0 {
		t.Fatalf("after every delete: %v, %v; want nothing", keys, err)
	}
}
