package execapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
