package e2e

import (
	"testing"

	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// client calls the REST API of a running api-server; the e2e tests add
// their own calls to weirtest's.
type client struct{ *weirtest.Client }

func newClient(t *testing.T, base, token string) *client {
	return &client{weirtest.NewClient(t, base, token)}
}

// with returns a copy of c that reports to t (for subtests).
func (c *client) with(t *testing.T) *client { return &client{c.With(t)} }

// login returns a client holding the user's session cookie.
func login(t *testing.T, base, username, password string) *client {
	t.Helper()
	return &client{weirtest.Login(t, base, username, password)}
}

func runPath(dagID, runID string) string { return weirtest.RunPath(dagID, runID) }
