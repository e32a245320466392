// Package syncbuf is a bytes.Buffer that goroutines may write while a test
// reads it: a log sink, a command's output followed as it runs.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is safe to write and read at once; its zero value is empty.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
