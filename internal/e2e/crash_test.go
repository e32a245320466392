package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// slowFirstTryDAG is a DAG whose task sleeps for minutes on try 1, after
// writing its pid to pidFile, and finishes at once on later tries.
func slowFirstTryDAG(dagID, pidFile string) string {
	return fmt.Sprintf(`dag_id: %s
schedule: null
default_args:
  retries: 1
  retry_delay: 1s
tasks:
  - task_id: slow
    operator: bash
    bash_command: |
      if [ "$WEIR_TRY_NUMBER" = 1 ]; then
        echo "try 1 sleeping"
        echo $$ > %q
        exec sleep 300
      fi
      echo "try $WEIR_TRY_NUMBER finishes at once"
  - task_id: after
    operator: bash
    depends_on: slow
    bash_command: echo "after slow"
`, dagID, pidFile)
}

// waitPIDFile waits for the task to write its pid and returns it. The pid is
// SIGKILLed when the test ends, in case the product left it running.
func waitPIDFile(t *testing.T, path string) int {
	t.Helper()
	var pid int
	waitFor(t, "the task to write its pid to "+path, func() (bool, string) {
		b, err := os.ReadFile(path)
		if err != nil {
			return false, err.Error()
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil, fmt.Sprintf("content %q", b)
	})
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// processGone reports whether pid has exited (a zombie counts as exited:
// nobody may be left to reap it in a container).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// failedTry reports whether an earlier try is recorded as failed, as the
// history records every try that started but did not succeed.
func failedTry(ti core.TaskInstance) bool {
	return ti.TryNumber >= 1 && ti.State == core.TIFailed
}
