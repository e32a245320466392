package postgres_test

import (
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/weirflow/weir/internal/store/postgres"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/syncbuf"
)

// A role whose pool cannot fit in what the server has left (its
// max_connections less the reserved ones and the connections other
// processes hold) is warned at start with the numbers and the settings
// to change; one that fits is not. The role starts either way.
func TestPoolRoomWarning(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn := pgtest.DSN(t)
	// Another process's connections: 20 held open while the role starts.
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	other := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = other.Close() })
	for range 20 {
		c, err := other.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
	}
	start := func(poolSize int) string {
		var logs syncbuf.Buffer
		st, err := postgres.Open(ctx, dsn, postgres.Options{MaxConns: poolSize, CheckRoom: true,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatalf("open with pool_size %d: %v (a pool that does not fit warns, it does not refuse)", poolSize, err)
		}
		_ = st.Close()
		return logs.String()
	}
	if out := start(4); strings.Contains(out, "does not fit") {
		t.Errorf("a pool of 4 warned: %s", out)
	}
	out := start(1000)
	for _, want := range []string{"does not fit", "pool_size 1000", "max_connections 200", "connections_in_use=", "docs/deployment.md#pool-sizing"} {
		if !strings.Contains(out, want) {
			t.Errorf("warning %q does not say %q", out, want)
		}
	}
	m := regexp.MustCompile(`connections_in_use=(\d+)`).FindStringSubmatch(out)
	if len(m) < 2 {
		t.Fatalf("warning %q has no connections_in_use", out)
	}
	if n, _ := strconv.Atoi(m[1]); n < 20 {
		t.Errorf("connections in use = %d, want at least the 20 another process holds", n)
	}
}

// Room's arithmetic: free = max_connections - reserved - in use.
func TestRoomFits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		room postgres.Room
		fits bool
	}{
		{postgres.Room{MaxConnections: 100, Reserved: 3, InUse: 80, Need: 17}, true},
		{postgres.Room{MaxConnections: 100, Reserved: 3, InUse: 81, Need: 17}, false},
		{postgres.Room{MaxConnections: 100, Reserved: 3, InUse: 120, Need: 5}, false},
	} {
		if c.room.Fits() != c.fits {
			t.Errorf("%+v: fits = %t, want %t", c.room, !c.fits, c.fits)
		}
	}
	if s := (postgres.Room{MaxConnections: 100, Reserved: 3, InUse: 120, Need: 5}).String(); !strings.Contains(s, "has 0 left") ||
		!strings.Contains(s, "pool_size 4") {
		t.Errorf("message %q", s)
	}
}
