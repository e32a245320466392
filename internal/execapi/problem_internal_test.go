package execapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/syncbuf"
)

// A request cancelled with its client (a claim's long poll as the server
// stops) is no error to log; one that failed while its client waited is.
func TestCancelledRequestsAreNotErrors(t *testing.T) {
	t.Parallel()
	var logged syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := httptest.NewRequest(http.MethodPost, "/execution/task-instances/claim", nil).WithContext(ctx)
	writeError(httptest.NewRecorder(), r, log, fmt.Errorf("claim task instances for worker w: %w", context.Canceled))
	if strings.Contains(logged.String(), "level=ERROR") {
		t.Errorf("a cancelled request was logged as an error:\n%s", logged.String())
	}
	live := httptest.NewRequest(http.MethodPost, "/execution/task-instances/claim", nil)
	writeError(httptest.NewRecorder(), live, log, fmt.Errorf("claim task instances for worker w: %w", context.Canceled))
	if !strings.Contains(logged.String(), "level=ERROR") {
		t.Errorf("a failed request whose client waits was not logged:\n%s", logged.String())
	}
}

// A database out of reach is answered 503 in general terms: the driver's
// message, which names the database's user, host and port, goes to the
// log only.
func TestAnUnavailableDatabaseIsNotDescribedToTheClient(t *testing.T) {
	t.Parallel()
	var logged syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	w := httptest.NewRecorder()
	err := fmt.Errorf("get task instance: database unavailable: failed to connect to 'user=weir database=weir': 127.0.0.1:55499: %w", core.ErrUnavailable)
	writeError(w, httptest.NewRequest(http.MethodGet, "/execution/task-instances/x", nil), log, err)
	if body := w.Body.String(); w.Code != http.StatusServiceUnavailable || strings.Contains(body, "user=weir") || strings.Contains(body, "55499") ||
		!strings.Contains(body, "the database is unavailable; retry shortly") {
		t.Errorf("answer %d %s, want 503 without the database's details", w.Code, body)
	}
	if !strings.Contains(logged.String(), "55499") {
		t.Errorf("the log lacks the details:\n%s", logged.String())
	}
}
