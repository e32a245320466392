package operator

import (
	"bytes"
	"io"
	"sort"
	"sync"
)

// Redacted replaces a secret in task logs.
const Redacted = "***"

// Redactor is a task log writer that replaces every registered secret with
// "***". It buffers up to a line (or 64 KiB) so that a secret split across
// writes is still caught; Flush writes what is buffered. It is safe for
// concurrent use.
type Redactor struct {
	mu      sync.Mutex
	w       io.Writer
	secrets [][]byte // longest first
	buf     []byte
	open    bool // the last byte written to w was not a newline
}

// NewRedactor returns a Redactor writing to w, masking secrets.
func NewRedactor(w io.Writer, secrets ...string) *Redactor {
	r := &Redactor{w: w}
	for _, s := range secrets {
		r.Add(s)
	}
	return r
}

// Add registers a secret; empty strings are ignored.
func (r *Redactor) Add(secret string) {
	if secret == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.secrets {
		if string(s) == secret {
			return
		}
	}
	r.secrets = append(r.secrets, []byte(secret))
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
}

// Redact returns s with every secret masked.
func (r *Redactor) Redact(s string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.redact([]byte(s)))
}

func (r *Redactor) redact(b []byte) []byte {
	for _, s := range r.secrets {
		b = bytes.ReplaceAll(b, s, []byte(Redacted))
	}
	return b
}

const redactHold = 64 << 10

// Write buffers p and writes every complete line, masked.
func (r *Redactor) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, p...)
	cut := bytes.LastIndexByte(r.buf, '\n') + 1
	if cut == 0 && len(r.buf) > redactHold {
		cut = len(r.buf)
	}
	if cut > 0 {
		out := r.redact(r.buf[:cut:cut])
		r.buf = append(r.buf[:0:0], r.buf[cut:]...)
		if err := r.write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// write writes out to w, noting whether it ends a line; r.mu is held.
func (r *Redactor) write(out []byte) error {
	if len(out) == 0 {
		return nil
	}
	r.open = out[len(out)-1] != '\n'
	_, err := r.w.Write(out)
	return err
}

// Flush writes the buffered partial line, masked.
func (r *Redactor) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.buf) == 0 {
		return nil
	}
	out := r.redact(r.buf)
	r.buf = nil
	return r.write(out)
}

// EndLine ends a partial line (output without its final newline, held or
// already written when longer than the hold) with one, masked, so that
// what is written next starts a line of its own.
func (r *Redactor) EndLine() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append(r.redact(r.buf), '\n')
	r.buf = nil
	if len(out) == 1 && !r.open { // nothing held, and the last line ended
		return nil
	}
	return r.write(out)
}
