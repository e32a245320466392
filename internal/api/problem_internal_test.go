package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/syncbuf"
)

// A database out of reach (a request's authentication included) is
// answered 503 in general terms: the driver's message names the
// database's user, host and port, which anyone with a made-up token would
// read; it goes to the log.
func TestAnUnavailableDatabaseIsNotDescribedToTheCaller(t *testing.T) {
	t.Parallel()
	var logged syncbuf.Buffer
	s := &server{log: slog.New(slog.NewTextHandler(&logged, nil))}
	err := fmt.Errorf("look up API token: database unavailable: failed to connect to 'user=weir database=weir': 127.0.0.1:55499: %w", core.ErrUnavailable)
	status, detail := s.publicDetail(context.Background(), err)
	if status != http.StatusServiceUnavailable || strings.Contains(detail, "55499") || !strings.Contains(detail, "the database is unavailable") {
		t.Errorf("answer %d %q, want 503 without the database's details", status, detail)
	}
	if !strings.Contains(logged.String(), "55499") {
		t.Errorf("the log lacks the details:\n%s", logged.String())
	}
	if status, detail := s.publicDetail(context.Background(), fmt.Errorf("dag %q: %w", "etl", core.ErrNotFound)); status != http.StatusNotFound || detail != `dag "etl": not found` {
		t.Errorf("a 404 = %d %q, want its own message", status, detail)
	}
}
