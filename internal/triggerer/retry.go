package triggerer

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// Pauses between two tries of a commit the database could not take.
const (
	firstCommitRetry = 100 * time.Millisecond
	maxCommitRetry   = 2 * time.Second
)

// untilCommitted runs commit until it returns anything but
// core.ErrUnavailable, pausing between tries, or until ctx ends. A trigger's
// Emit returns once its event is committed: an outage of the database (a
// PostgreSQL restart) delays the event, it does not fail the trigger and
// its waiting tries. A commit whose outcome was lost with the connection is
// tried again; the store's fence answers the repeat (a conflict once the
// waiters resumed, or the same stream indexes again).
func untilCommitted(ctx context.Context, log *slog.Logger, what string, commit func() error) error {
	wait := firstCommitRetry
	for {
		err := commit()
		if !errors.Is(err, core.ErrUnavailable) {
			return err
		}
		log.Warn(what+": the database is unavailable; trying again", "in", wait, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, maxCommitRetry)
	}
}
