package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/tasklog"
)

// logFlushEvery is how often buffered log output is shipped.
const logFlushEvery = time.Second

// logFlushSize ships at once when this much is buffered.
const logFlushSize = 256 << 10

// logChunkMax is the most one request ships; the api-server takes chunks of
// up to 1 MiB by default.
const logChunkMax = 512 << 10

// logPendingMax bounds what a sink keeps while the api-server cannot be
// reached; the oldest bytes beyond it are dropped, and a line in the log
// says how many.
const logPendingMax = 8 << 20

// logSink buffers a try's (or a callback attempt's) log and ships it in
// chunks (every second, when large, and at Close), to the local log folder
// or the api-server. Each
// chunk carries its byte offset in the try's log, so the api-server stores
// a chunk sent twice (a retry after a lost answer) once; a chunk that could
// not be shipped is kept and sent again with the next one. At Close the
// tail is sent until an api-server acknowledges it, as the try's final
// state is (Worker.report): an outage loses no line.
//
// A timer, not a goroutine of its own, ships while the try runs, and Close
// ships the tail in the caller: a short try's log costs no goroutine
// wake-ups, only the write of its tail.
type logSink struct {
	mu   sync.Mutex
	buf  bytes.Buffer // written, not yet taken by flush
	ship func(offset int64, b []byte) (int64, error)
	end  func() error // after the last chunk
	log  *slog.Logger
	// ctx bounds the retries of the tail at Close (the worker's task
	// context; nil for a local log folder: one try); retryWait is the
	// pause between two.
	ctx       context.Context //nolint:containedctx // the sink outlives the call that starts it
	retryWait time.Duration
	// held, if set, is called once when the tail could not be stored at
	// Close, with its offset and bytes, before the sink waits to send it
	// again (the worker records it for its next life).
	held  func(offset int64, tail []byte)
	timer *time.Timer // the next periodic (or early, when large) flush

	// Guarded by shipping: one flush at a time.
	shipping sync.Mutex
	closed   bool
	pending  []byte // taken from buf, not yet stored by the destination
	offset   int64  // bytes of the log the destination holds: where pending starts
}

// newLogSink ships ti's log from byte offset on (non-zero when a resumed
// try continues its log); ctx bounds the retries of its tail as it bounds
// the try's state report.
func newLogSink(ctx context.Context, w *Worker, tc *execclient.Client, ti *core.TaskInstance, offset int64, log *slog.Logger) *logSink {
	return startLogSink(ctx, w, tasklog.KeyOf(ti), offset, log, func(ctx context.Context, offset int64, b []byte) (int64, error) {
		return tc.AppendLog(ctx, ti.ID, offset, b)
	})
}

// newCallbackLogSink ships the log of cb's current attempt as a try's is
// shipped: while it runs, to the local log folder or over the Execution
// API with the attempt's token (cc).
func newCallbackLogSink(ctx context.Context, w *Worker, cc *execclient.Client, cb *core.Callback, log *slog.Logger) *logSink {
	return startLogSink(ctx, w, tasklog.CallbackKey(cb, cb.Attempts), 0, log, func(ctx context.Context, offset int64, b []byte) (int64, error) {
		return cc.CallbackAppendLog(ctx, cb.ID, offset, b)
	})
}

// startLogSink ships key's log from offset on: to the worker's log folder
// when it shares the api-server's, else with remote.
func startLogSink(ctx context.Context, w *Worker, key tasklog.Key, offset int64, log *slog.Logger,
	remote func(ctx context.Context, offset int64, b []byte) (int64, error)) *logSink {
	s := &logSink{log: log, offset: offset, ctx: ctx, retryWait: w.reportRetryWait()}
	s.end = func() error { return nil }
	if w.LogFolder != "" {
		s.ship, s.end = localLog(w.logSpares, key)
		s.ctx = nil // a local disk is not waited for
	} else {
		s.ship = func(offset int64, b []byte) (int64, error) {
			ctx, cancel := context.WithTimeout(context.Background(), reportTimeout)
			defer cancel()
			return remote(ctx, offset, b)
		}
	}
	s.timer = time.AfterFunc(logFlushEvery, s.tick)
	return s
}

// Write buffers p.
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.buf.Write(p)
	big := s.buf.Len() >= logFlushSize
	s.mu.Unlock()
	if big {
		s.timer.Reset(0)
	}
	return len(p), nil
}

// tick is the periodic flush; it stops once the sink is closed.
func (s *logSink) tick() {
	s.shipping.Lock()
	defer s.shipping.Unlock()
	if s.closed {
		return
	}
	s.flush()
	s.timer.Reset(logFlushEvery)
}

// flushTail ships what is left until it is stored or refused, or the
// sink's context ends (untilAnswered: the worker stopped and the report
// timeout passed).
func (s *logSink) flushTail() {
	if s.flush() || s.ctx == nil {
		return
	}
	ctx, cancel := untilAnswered(s.ctx)
	defer cancel()
	s.log.Warn("the end of the task log is kept and sent again until an api-server stores it", "bytes", len(s.pending))
	if s.held != nil {
		s.held(s.offset, s.pending)
	}
	for pause(ctx, s.retryWait) {
		if s.flush() {
			return
		}
	}
}

// flush ships what was written since the last flush after what is still
// pending, in chunks of at most logChunkMax, and reports whether nothing
// is left to send again. A chunk that could not be delivered stays pending
// for the next flush; one the api-server refuses is dropped with the rest.
func (s *logSink) flush() bool {
	s.mu.Lock()
	s.pending = append(s.pending, s.buf.Bytes()...)
	s.buf.Reset()
	s.mu.Unlock()
	for len(s.pending) > 0 {
		n := min(len(s.pending), logChunkMax)
		next, err := s.ship(s.offset, s.pending[:n])
		if stored, ok := execclient.LogGap(err); ok && stored < s.offset {
			// The api-server holds less than it acknowledged (a log folder
			// not shared between api-servers, or a removed file): go on
			// from its end rather than refuse the rest of the log.
			s.log.Warn("the api-server's copy of the task log is shorter than what it acknowledged; continuing from its end",
				"acknowledged", s.offset, "stored", stored)
			s.offset = stored
			continue
		}
		var refused *execclient.Error
		if errors.As(err, &refused) && refused.Status < http.StatusInternalServerError {
			// Refused (the try is no longer current, ...): sending it again
			// would not help.
			s.log.Warn("ship task log chunk: refused; it is lost", "bytes", len(s.pending), "err", err)
			s.pending = nil
			return true
		}
		if err != nil {
			s.trimPending()
			s.log.Warn("ship task log chunk; it is kept and sent again with the next one", "bytes", len(s.pending), "err", err)
			return false
		}
		s.offset, s.pending = next, s.pending[n:]
	}
	s.pending = nil
	return true
}

// trimPending drops the oldest pending bytes beyond logPendingMax and puts
// a line saying so in their place.
func (s *logSink) trimPending() {
	drop := len(s.pending) - logPendingMax
	if drop <= 0 {
		return
	}
	note := fmt.Sprintf("[weir: %d bytes of this log were dropped: the api-server could not be reached]\n", drop)
	s.pending = append([]byte(note), s.pending[drop:]...)
}

// Close ships what is left and stops the sink.
func (s *logSink) Close() { s.close(false) }

// closeForReport stops the sink as Close does, but hands what is not shipped
// yet to the caller, for the try's final state report to carry
// (execclient.StateRequest.Log): one request instead of two at a try's
// end. It ships the tail itself, and returns nil, when the log goes to a
// local folder, when nothing is left, or when the tail is longer than a
// report carries (execclient.MaxReportedLogTail).
func (s *logSink) closeForReport() *execclient.LogTail { return s.close(true) }

func (s *logSink) close(forReport bool) *execclient.LogTail {
	s.timer.Stop()
	s.shipping.Lock()
	defer s.shipping.Unlock()
	s.closed = true
	if forReport && s.ctx != nil { // the api-server's (s.ctx is nil for a local folder)
		s.mu.Lock()
		s.pending = append(s.pending, s.buf.Bytes()...)
		s.buf.Reset()
		s.mu.Unlock()
		if n := len(s.pending); n > 0 && n <= execclient.MaxReportedLogTail {
			tail := &execclient.LogTail{Offset: s.offset, Data: s.pending}
			s.offset += int64(n)
			s.pending = nil
			return tail
		}
	}
	s.flushTail()
	if len(s.pending) > 0 {
		s.log.Warn("the end of the task log could not be shipped; it is lost", "bytes", len(s.pending))
	}
	if err := s.end(); err != nil {
		s.log.Warn("close task log", "err", err)
	}
	return nil
}

// localLog ships chunks to key's log file in the folder of logs, opened
// at the first chunk (a try that logs nothing creates no file) and kept
// open until end.
func localLog(logs *tasklog.Spares, key tasklog.Key) (ship func(int64, []byte) (int64, error), end func() error) {
	var f *os.File
	ship = func(offset int64, b []byte) (int64, error) {
		if f == nil {
			var err error
			if f, err = logs.Open(key); err != nil {
				return offset, err
			}
		}
		n, err := f.Write(b)
		return offset + int64(n), err
	}
	end = func() error {
		if f == nil {
			return nil
		}
		return f.Close()
	}
	return ship, end
}
