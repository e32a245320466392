package command

import (
	"bufio"
	"io"
	"strings"

	"github.com/weirflow/weir/internal/trigger"
)

// stderrTail writes each stderr line of the command to the trigger log and
// keeps the last stderrKept for a failure message.
type stderrTail struct {
	last []string
}

// read logs r's lines until end of file; tail may be called once it
// returns.
func (s *stderrTail) read(rt *trigger.Runtime, r io.Reader) {
	br := bufio.NewReader(r)
	for {
		line, tooLong, err := readLine(br)
		text := strings.TrimRight(string(line), "\r\n")
		if tooLong {
			text = "(a line longer than the limit was skipped)"
		}
		if text != "" {
			rt.Logf("stderr: %s", text)
			s.last = append(s.last, clip(text))
			if len(s.last) > stderrKept {
				s.last = s.last[1:]
			}
		}
		if err != nil {
			return
		}
	}
}

// tail quotes the last stderr lines for an error message.
func (s *stderrTail) tail() string {
	if len(s.last) == 0 {
		return " (no stderr)"
	}
	return "; last stderr lines:\n" + strings.Join(s.last, "\n")
}
