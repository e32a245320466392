package command

import (
	"bytes"
	"strings"
	"sync"

	"github.com/weirflow/weir/internal/trigger"
)

// stderrLog writes each stderr line of the command to the trigger log and
// keeps the last stderrKept for a failure message.
type stderrLog struct {
	rt      *trigger.Runtime
	mu      sync.Mutex
	partial []byte
	last    []string
}

func (s *stderrLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.partial = append(s.partial, p...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		s.line(string(s.partial[:i]))
		s.partial = s.partial[i+1:]
	}
	if len(s.partial) > MaxLine { // a huge unterminated line: log it in pieces
		s.line(string(s.partial))
		s.partial = nil
	}
	return len(p), nil
}

// flush logs an unterminated last line.
func (s *stderrLog) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.partial) > 0 {
		s.line(string(s.partial))
		s.partial = nil
	}
}

func (s *stderrLog) line(l string) {
	l = strings.TrimRight(l, "\r")
	s.rt.Logf("stderr: %s", l)
	s.last = append(s.last, clip(l))
	if len(s.last) > stderrKept {
		s.last = s.last[1:]
	}
}

// tail quotes the last stderr lines for an error message ("" when none).
func (s *stderrLog) tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.last) == 0 {
		return " (no stderr)"
	}
	return "; last stderr lines:\n" + strings.Join(s.last, "\n")
}
