package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/tasklog"
)

// goneLogs holds a log's first bytes, then cannot read the rest: with
// remote_base_log_folder, a deployment's scheduler uploaded it to a store
// this machine does not reach.
type goneLogs struct{ tasklog.Folder }

func (goneLogs) Read(_ context.Context, key tasklog.Key, offset int64) ([]byte, int64, error) {
	if offset == 0 {
		return []byte("first\n"), 6, nil
	}
	return nil, offset, &tasklog.MissingError{Key: key, Reason: "was uploaded whole to s3://elsewhere"}
}

// A log the test cannot read is said once and no longer followed; the test
// goes on (a failed read used to end it, failing its run).
func TestLogStreamSaysALogItCannotRead(t *testing.T) {
	var out bytes.Buffer
	l := newLogStream(goneLogs{}, &out)
	key := tasklog.Key{DagID: "d", RunID: "r", TaskID: "t", MapIndex: -1, TryNumber: 1}
	l.labels[key] = "t"
	unreadable, err := l.readTry(t.Context(), key)
	if err != nil || !unreadable {
		t.Fatalf("readTry = %v, %v; want unreadable and no error", unreadable, err)
	}
	got := out.String()
	if !strings.HasPrefix(got, "t | first\n") || !strings.Contains(got, "t | (the rest of this log cannot be read here: ") ||
		!strings.Contains(got, "s3://elsewhere") {
		t.Errorf("printed:\n%s\nwant the first line, then why the rest is not printed", got)
	}
}
