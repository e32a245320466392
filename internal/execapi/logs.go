package execapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// appendLog serves POST /execution/task-instances/{id}/logs?offset=N: the
// raw body is the try's log from byte N on, stored in the api-server's log
// folder so that logs work when workers run on other machines. Only bytes
// the log does not hold yet are appended (tasklog.AppendAt), so a client
// may send a chunk again after a lost answer; a chunk that starts past the
// end is refused with 409 log_gap and the expected offset. Only a running
// try may append (the try gate); the worker ships its last chunk before it
// reports the try's end.
func (s *server) appendLog(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	return s.appendChunk(w, r, "the try's", func() (tasklog.Key, error) {
		ti, err := s.tokenTI(r, c)
		if err != nil {
			return tasklog.Key{}, err
		}
		return tasklog.KeyOf(ti), nil
	})
}

// appendChunk appends the request's body at its ?offset= to the log under
// the key keyOf finds (the caller's check of who may write it, after the
// offset is checked) and answers the next offset. whose names the log in
// errors: "the try's".
func (s *server) appendChunk(w http.ResponseWriter, r *http.Request, whose string, keyOf func() (tasklog.Key, error)) error {
	if s.logs == nil {
		return fmt.Errorf("the api-server has no log folder configured: %w", core.ErrConflict)
	}
	raw := r.URL.Query().Get("offset")
	offset, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || offset < 0 {
		return fmt.Errorf("query parameter offset must be the chunk's byte offset in %s log (an integer >= 0), got %q: %w",
			whose, raw, core.ErrInvalid)
	}
	key, err := keyOf()
	if err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxLogChunk))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fmt.Errorf("log chunk exceeds %d bytes: %w", s.cfg.MaxLogChunk, core.ErrTooLarge)
	}
	if err != nil {
		return fmt.Errorf("read log chunk: %w", err)
	}
	next, err := s.logs.AppendAt(r.Context(), key, offset, body)
	var gap *tasklog.GapError
	if errors.As(err, &gap) {
		return withStatus(http.StatusConflict, execclient.ReasonLogGap, err)
	}
	if err != nil {
		return fmt.Errorf("append to %s log: %w", whose, err)
	}
	writeJSON(w, http.StatusOK, execclient.LogAppendResponse{NextOffset: next})
	return nil
}

// tailInTx stores the end of a try's log that its final state report
// carries in the transaction that ends the try (Before, setting *next),
// where the log store keeps live logs in the database; elsewhere (a
// folder) it stores it now and returns a nil Before.
func (s *server) tailInTx(ctx context.Context, ti *core.TaskInstance, tail *execclient.LogTail,
	next **int64) (func(tx store.Store) error, error) {
	txl, ok := s.logs.(transactionalLogs)
	if !ok || !txl.Transactional() {
		var err error
		*next, err = s.appendTail(ctx, ti, tail)
		return nil, err
	}
	if err := s.checkTail(tail); err != nil {
		return nil, err
	}
	return func(tx store.Store) error {
		var err error
		*next, err = s.storeTail(ctx, txl.InTx(tx), ti, tail)
		return err
	}, nil
}

// transactionalLogs is a log store whose appends can join a transaction
// (logstore.Recorded).
type transactionalLogs interface {
	Transactional() bool
	InTx(tx store.Store) tasklog.Logs
}

// isGap reports whether err is a tail's log gap (409 log_gap).
func isGap(err error) bool { return errors.As(err, new(*tasklog.GapError)) }

// appendTail stores the end of a try's log that its final state report
// carries (execclient.StateRequest.Log) and returns the log's length after
// it. A tail that starts past the end of the stored log (a folder not
// shared between api-servers, a removed file) is refused with 409 log_gap
// and the expected offset, the try left running: the worker then ships the
// tail with POST .../logs, whose gap handling is safe to repeat, and
// reports again without it.
func (s *server) appendTail(ctx context.Context, ti *core.TaskInstance, tail *execclient.LogTail) (*int64, error) {
	if s.logs == nil {
		s.log.Warn("a state report carried the end of a try's log, but this api-server has no log store: it is lost",
			"ti_id", ti.ID, "bytes", len(tail.Data))
		return nil, nil
	}
	if err := s.checkTail(tail); err != nil {
		return nil, err
	}
	return s.storeTail(ctx, s.logs, ti, tail)
}

// checkTail refuses a malformed tail.
func (s *server) checkTail(tail *execclient.LogTail) error {
	if tail.Offset < 0 {
		return fmt.Errorf("log.offset must be the tail's byte offset in the try's log (an integer >= 0), got %d: %w",
			tail.Offset, core.ErrInvalid)
	}
	if int64(len(tail.Data)) > s.cfg.MaxLogChunk {
		return fmt.Errorf("log tail exceeds %d bytes: %w", s.cfg.MaxLogChunk, core.ErrTooLarge)
	}
	return nil
}

// storeTail appends a checked tail to logs and returns the log's length.
func (s *server) storeTail(ctx context.Context, logs tasklog.Logs, ti *core.TaskInstance, tail *execclient.LogTail) (*int64, error) {
	next, err := logs.AppendAt(ctx, tasklog.KeyOf(ti), tail.Offset, tail.Data)
	if isGap(err) {
		return nil, withStatus(http.StatusConflict, execclient.ReasonLogGap, err)
	}
	if err != nil {
		return nil, fmt.Errorf("append to the try's log: %w", err)
	}
	return &next, nil
}
