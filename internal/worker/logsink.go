package worker

import (
	"bytes"
	"context"
	"log/slog"
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

// logSink buffers a try's log and ships it in chunks (every second, when
// large, and at Close), to the local log folder or the api-server.
type logSink struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	ship func([]byte) error
	end  func() error // after the last chunk
	log  *slog.Logger
	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

func newLogSink(w *Worker, tc *execclient.Client, ti *core.TaskInstance, log *slog.Logger) *logSink {
	s := &logSink{log: log, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.end = func() error { return nil }
	if w.LogFolder != "" {
		s.ship, s.end = localLog(w.LogFolder, tasklog.KeyOf(ti))
	} else {
		s.ship = func(b []byte) error {
			ctx, cancel := context.WithTimeout(context.Background(), reportTimeout)
			defer cancel()
			return tc.AppendLog(ctx, ti.ID, b)
		}
	}
	go s.loop()
	return s
}

// Write buffers p.
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.buf.Write(p)
	big := s.buf.Len() >= logFlushSize
	s.mu.Unlock()
	if big {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

func (s *logSink) loop() {
	defer close(s.done)
	t := time.NewTicker(logFlushEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.kick:
		case <-s.stop:
			s.flush()
			return
		}
		s.flush()
	}
}

func (s *logSink) flush() {
	s.mu.Lock()
	if s.buf.Len() == 0 {
		s.mu.Unlock()
		return
	}
	chunk := bytes.Clone(s.buf.Bytes())
	s.buf.Reset()
	s.mu.Unlock()
	if err := s.ship(chunk); err != nil {
		s.log.Warn("ship task log chunk; it is lost", "bytes", len(chunk), "err", err)
	}
}

// Close ships what is left and stops the sink.
func (s *logSink) Close() {
	close(s.stop)
	<-s.done
	if err := s.end(); err != nil {
		s.log.Warn("close task log", "err", err)
	}
}

// localLog ships chunks to key's log file under base, opened at the first
// chunk (a try that logs nothing creates no file) and kept open until end.
func localLog(base string, key tasklog.Key) (ship func([]byte) error, end func() error) {
	var f *os.File
	ship = func(b []byte) error {
		if f == nil {
			var err error
			if f, err = tasklog.Open(base, key); err != nil {
				return err
			}
		}
		_, err := f.Write(b)
		return err
	}
	end = func() error {
		if f == nil {
			return nil
		}
		return f.Close()
	}
	return ship, end
}
