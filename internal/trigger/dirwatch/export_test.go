package dirwatch

import (
	"context"
	"time"

	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/listwatch"
)

// Poll is one poll of a directory watcher built by Type.New (for benchmarks).
func Poll(ctx context.Context, tr trigger.Trigger, watched []trigger.Watched) (trigger.Batch, error) {
	w := tr.(*dirWatcher)
	return listwatch.Poll(ctx, watched, w.opt, time.Now(), w.list)
}
