package operator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/taskproc"
)

// Variables a streaming operator's handle_command reads.
const (
	EnvStreamID   = "WEIR_STREAM_ID"   // the stream it handles
	EnvStreamFrom = "WEIR_STREAM_FROM" // the sequence index of its first stdin line
)

// commandHandler runs handle_command with bash for the whole try: each
// event is one line of JSON on its stdin, in order, and each line it
// writes to file descriptor 3 acknowledges the next event handled. The
// acknowledgements are recorded as they come (several at once when they
// come faster than a record), so a retry resumes after the last one. The
// command exiting 0 once its stdin ended acknowledges every event.
type commandHandler struct {
	src   StreamSource
	cmd   *exec.Cmd
	group *taskproc.Group
	stdin io.WriteCloser
	from  int64

	mu     sync.Mutex
	given  int64 // events written to stdin
	acked  int64 // events acknowledged
	saved  int64 // the first sequence index not recorded handled
	ackErr error

	acksDone chan struct{} // closed when fd 3 reached EOF
	waited   bool
	waitErr  error
}

// startCommandHandler starts command for the stream's events from
// sequence index from.
func (r *Runner) startCommandHandler(ctx context.Context, req *Request, src StreamSource, command, stream string, from int64) (*commandHandler, error) {
	argEnv, err := stringMapArg(req.Args, "env")
	if err != nil {
		return nil, err
	}
	cmd := bashCommand(ctx, command)
	env := r.bashEnv(req, argEnv, r.deferFile(req))
	cmd.Env = append(env, EnvStreamID+"="+stream, EnvStreamFrom+"="+strconv.FormatInt(from, 10))
	log := &syncWriter{w: req.Log}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.WaitDelay = r.killGrace()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	acks, ackW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{ackW}
	group, err := taskproc.Start(cmd, r.Groups)
	_ = ackW.Close() // the command holds its own copy
	if err != nil {
		_ = acks.Close()
		return nil, fmt.Errorf("start the stream handler: %w", err)
	}
	req.logf("started the stream handler, pid %d, process group %d, from sequence index %d", cmd.Process.Pid, group.PGID, from)
	h := &commandHandler{src: src, cmd: cmd, group: group, stdin: stdin, from: from, saved: from, acksDone: make(chan struct{})}
	go h.readAcks(ctx, acks)
	return h, nil
}

// readAcks counts the lines on fd 3 and records them handled, coalescing
// the lines already buffered into one record.
func (h *commandHandler) readAcks(ctx context.Context, acks *os.File) {
	defer close(h.acksDone)
	defer func() { _ = acks.Close() }()
	rd := bufio.NewReader(acks)
	for {
		n := 0
		for {
			if _, err := rd.ReadSlice('\n'); err != nil {
				if errors.Is(err, bufio.ErrBufferFull) {
					continue // a long line: read on to its end
				}
				h.ack(ctx, n)
				return
			}
			n++
			if !bytes.Contains(peek(rd), []byte{'\n'}) {
				break
			}
		}
		h.ack(ctx, n)
	}
}

// peek returns what rd holds buffered without reading.
func peek(rd *bufio.Reader) []byte {
	b, _ := rd.Peek(rd.Buffered())
	return b
}

// ack records n more events handled.
func (h *commandHandler) ack(ctx context.Context, n int) {
	if n == 0 {
		return
	}
	h.mu.Lock()
	h.acked += int64(n)
	through := h.from + h.acked - 1
	h.mu.Unlock()
	h.record(ctx, through)
}

// record records the events up to through handled, once.
func (h *commandHandler) record(ctx context.Context, through int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if through < h.saved || h.ackErr != nil {
		return
	}
	if _, err := h.src.StreamHandled(context.WithoutCancel(ctx), through); err != nil {
		h.ackErr = err
		return
	}
	h.saved = through + 1
}

func (h *commandHandler) give(_ context.Context, ev *core.StreamEvent) error {
	var line bytes.Buffer
	if err := json.Compact(&line, ev.Payload); err != nil {
		return fmt.Errorf("event %d is not JSON: %w", ev.SequenceIndex, err)
	}
	line.WriteByte('\n')
	if _, err := h.stdin.Write(line.Bytes()); err != nil {
		// It stopped reading: it exited, or closed its stdin.
		if werr := h.wait(); werr != nil {
			return werr
		}
		return fmt.Errorf("the handler stopped reading its stdin before the end of the stream (it exited 0)")
	}
	h.mu.Lock()
	h.given++
	err := h.ackErr
	h.mu.Unlock()
	return err
}

// wait waits for the command to exit and its acknowledgements to be read.
func (h *commandHandler) wait() error {
	if !h.waited {
		h.waited = true
		err := taskproc.Wait(h.cmd)
		h.group.Close()
		<-h.acksDone
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			err = fmt.Errorf("the handler exited with code %d", exitErr.ExitCode())
		}
		h.waitErr = err
	}
	return h.waitErr
}

func (h *commandHandler) finish(ctx context.Context) error {
	_ = h.stdin.Close()
	if err := h.wait(); err != nil {
		return err
	}
	// Exiting 0 after the end of its stdin acknowledges every event.
	h.mu.Lock()
	through := h.from + h.given - 1
	h.mu.Unlock()
	h.record(ctx, through)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ackErr != nil {
		return fmt.Errorf("record the events handled: %w", h.ackErr)
	}
	return nil
}

func (h *commandHandler) stop() int64 {
	_ = h.stdin.Close()
	if !h.waited {
		_ = h.group.Signal(syscall.SIGKILL) // the try ends here: nothing of it outlives it
	}
	_ = h.wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.saved
}
