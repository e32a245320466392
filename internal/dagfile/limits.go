package dagfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// Defaults of the limits a Loader applies ([dag_processor] max_file_bytes
// and dag_file_processor_timeout).
const (
	DefaultMaxFileBytes = 1 << 20
	DefaultParseTimeout = 50 * time.Second // Airflow's dag_file_processor_timeout
)

// Loader reads and loads DAG files within limits, so that no file can
// exhaust the memory or the time of the process that loads it: a file
// larger than MaxFileBytes is refused before it is read in full, nesting
// deeper than MaxDepth is refused before the YAML parser runs, and a
// parse that takes longer than Timeout is abandoned. Each is an error
// naming the file and the limit. A panic while loading becomes an error
// too. Create one with NewLoader; its methods may be called from any
// goroutine.
//
// One parse runs at a time. An abandoned parse goes on in the background
// until it ends (its input is bounded by MaxFileBytes) and the next parse
// waits for it, so hostile files never pile up parses.
type Loader struct {
	maxBytes int64
	timeout  time.Duration
	slot     chan struct{}                                          // held by the running parse
	parse    func(filename string, data []byte) ([]core.DAG, error) // Load; tests replace it
	opts     Options
}

// NewLoader returns a Loader with these limits; a value of 0 or less means
// the default.
func NewLoader(maxFileBytes int64, timeout time.Duration) *Loader {
	if maxFileBytes <= 0 {
		maxFileBytes = DefaultMaxFileBytes
	}
	if timeout <= 0 {
		timeout = DefaultParseTimeout
	}
	return &Loader{maxBytes: maxFileBytes, timeout: timeout, slot: make(chan struct{}, 1), parse: Load}
}

// WithOptions makes the loader load with o (its trigger checker).
func (l *Loader) WithOptions(o Options) *Loader {
	l.opts = o
	l.parse = func(filename string, data []byte) ([]core.DAG, error) { return LoadWith(filename, data, o) }
	return l
}

// Options returns the options the loader loads with.
func (l *Loader) Options() Options { return l.opts }

// ReadFile reads path, refusing a file larger than the size limit without
// reading more of it than the limit.
func (l *Loader) ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path) // #nosec G304 -- a file of the DAG folder, which the operator configures
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	var size int64
	if fi, err := f.Stat(); err == nil {
		if fi.Size() > l.maxBytes {
			return nil, l.tooLarge(path, fi.Size())
		}
		size = fi.Size() + 1 // one more byte: the end is read without growing
	}
	// One buffer of the file's size, as os.ReadFile reads (io.ReadAll's
	// doublings cost a folder of many files a copy and fresh pages each);
	// a file whose size its stat does not tell (a pipe) grows it. No read
	// goes past the limit's first byte, however the file grows meanwhile.
	data := make([]byte, 0, max(size, 512))
	for {
		n, err := f.Read(data[len(data):min(cap(data), int(l.maxBytes)+1)])
		data = data[:len(data)+n]
		if int64(len(data)) > l.maxBytes {
			return nil, l.tooLarge(path, -1)
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

func (l *Loader) tooLarge(path string, size int64) error {
	what := "over"
	if size >= 0 {
		what = fmt.Sprintf("%d bytes, over", size)
	}
	return newError([]Problem{{File: path, Msg: fmt.Sprintf(
		"the file is %s the limit of %d bytes ([dag_processor] max_file_bytes); split it or raise the limit",
		what, l.maxBytes)}})
}

// Load loads the DAGs in data like the package's Load, within the size
// and time limits. It returns ctx's error if ctx ends first.
func (l *Loader) Load(ctx context.Context, filename string, data []byte) ([]core.DAG, error) {
	if int64(len(data)) > l.maxBytes {
		return nil, l.tooLarge(filename, int64(len(data)))
	}
	select {
	case l.slot <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	type result struct {
		dags []core.DAG
		err  error
	}
	done := make(chan result, 1)
	go func() {
		defer func() { <-l.slot }()
		defer func() {
			if v := recover(); v != nil {
				done <- result{err: transientError(Problem{File: filename,
					Msg: fmt.Sprintf("the DAG file loader failed (a bug in Weir; please report it with this file): %v", v)})}
			}
		}()
		dags, err := l.parse(filename, data)
		done <- result{dags, err}
	}()
	timer := time.NewTimer(l.timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.dags, r.err
	case <-timer.C:
		return nil, transientError(Problem{File: filename, Msg: fmt.Sprintf(
			"parsing took longer than %s, the limit ([dag_processor] dag_file_processor_timeout); simplify the file or raise the limit",
			l.timeout)})
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Transient reports whether err, from Load, may not be what loading the
// same bytes gives again: a parse abandoned at the time limit or stopped by
// a panic. Any other result depends only on the bytes, the file's name, the
// program and the loader's options.
func Transient(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.transient
}

func transientError(p Problem) error { return &Error{Problems: []Problem{p}, transient: true} }
