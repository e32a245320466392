package logstore

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// Uploader defaults.
const (
	// UploadEvery is how often an Uploader looks for ended tries' logs.
	UploadEvery = 2 * time.Second
	// uploadLease is how long an uploader holds a log it uploads before
	// another may take it over (a scheduler that died mid-upload).
	uploadLease = 2 * time.Minute
	// uploadBatch is how many logs one pass lists.
	uploadBatch = 50
	// maxBackoff bounds the wait before retrying a failed upload.
	maxBackoff = 5 * time.Minute
)

// Uploader is the service that stores each ended try's log whole in the
// remote store (one object), records it and deletes its chunks from the
// database. A failed upload is recorded and retried, backing off from
// UploadEvery to maxBackoff; the log reads from its chunks meanwhile.
// Several schedulers may run one: a lease gives each log to one of them.
// With a Retention it also deletes uploaded logs older than that.
type Uploader struct {
	Remote    *Remote
	Retention time.Duration // 0 = uploaded logs are kept forever
	Clock     core.Clock
	Logger    *slog.Logger
	Every     time.Duration // 0 = UploadEvery
}

// Start uploads until ctx is done; it returns nil then.
func (u *Uploader) Start(ctx context.Context) error {
	every := u.Every
	if every <= 0 {
		every = UploadEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	lastPrune := time.Time{}
	for {
		if _, err := u.UploadOnce(ctx); err != nil && ctx.Err() == nil {
			u.log().WarnContext(ctx, "upload task logs", "err", err)
		}
		if now := u.clock().Now(); u.Retention > 0 && now.Sub(lastPrune) >= time.Minute {
			lastPrune = now
			if n, err := u.Prune(ctx, now.Add(-u.Retention)); err != nil && ctx.Err() == nil {
				u.log().WarnContext(ctx, "prune uploaded task logs", "err", err)
			} else if n > 0 {
				u.log().InfoContext(ctx, "pruned uploaded task logs", "count", n, "retention", u.Retention.String())
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// UploadOnce uploads the logs of ended tries that are due and returns how
// many it stored; a log that failed is recorded for a later retry and
// does not stop the others.
func (u *Uploader) UploadOnce(ctx context.Context) (int, error) {
	st := u.Remote.Store
	now := u.clock().Now()
	due, err := st.TaskLogsToUpload(ctx, now, uploadBatch)
	if err != nil {
		return 0, err
	}
	stored := 0
	for i := range due {
		ok, err := st.TaskLogLease(ctx, due[i].Key, now, now.Add(uploadLease))
		if err != nil {
			return stored, err
		}
		if !ok {
			continue // another uploader has it
		}
		if err := u.upload(ctx, &due[i]); err != nil {
			wait := min(UploadEvery<<min(due[i].Attempts, 10), maxBackoff)
			u.log().WarnContext(ctx, "upload task log; will retry", "log", due[i].Key, "attempt", due[i].Attempts+1,
				"retry_in", wait.String(), "err", err)
			if ferr := st.TaskLogUploadFailed(ctx, due[i].Key, err.Error(), u.clock().Now().Add(wait)); ferr != nil {
				return stored, ferr
			}
			continue
		}
		stored++
	}
	return stored, nil
}

// upload stores rec's whole log as one object, then marks it uploaded
// (which deletes its chunks).
func (u *Uploader) upload(ctx context.Context, rec *store.TaskLog) error {
	var data []byte
	for {
		chunk, next, err := u.Remote.Store.TaskLogRead(ctx, rec.Key, int64(len(data)), tasklog.MaxReadChunk)
		if err != nil {
			return fmt.Errorf("read its chunks: %w", err)
		}
		if len(chunk) == 0 {
			break
		}
		data = append(data, chunk...)
		if next != int64(len(data)) {
			return fmt.Errorf("its chunks end at byte %d after %d bytes", next, len(data))
		}
	}
	if err := u.Remote.Objects.Put(ctx, rec.Key, data); err != nil {
		return fmt.Errorf("put %s: %w", u.Remote.ObjectURL(rec.Key), err)
	}
	return u.Remote.Store.TaskLogStored(ctx, rec.Key, u.Remote.ObjectURL(rec.Key), int64(len(data)), u.clock().Now())
}

// Prune deletes the uploaded logs stored before before (the object; the
// record says it was pruned), a page at a time, and returns how many it
// deleted.
func (u *Uploader) Prune(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	for {
		old, err := u.Remote.Store.TaskLogsStoredBefore(ctx, before, uploadBatch)
		if err != nil {
			return n, err
		}
		for _, rec := range old {
			if err := u.Remote.Objects.Delete(ctx, rec.Key); err != nil {
				return n, fmt.Errorf("delete %s: %w", rec.Location, err)
			}
			if err := u.Remote.Store.TaskLogPruned(ctx, rec.Key, u.clock().Now()); err != nil {
				return n, err
			}
			n++
		}
		if len(old) < uploadBatch {
			return n, nil
		}
	}
}

func (u *Uploader) clock() core.Clock {
	if u.Clock == nil {
		return core.SystemClock{}
	}
	return u.Clock
}

func (u *Uploader) log() *slog.Logger {
	if u.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return u.Logger
}
