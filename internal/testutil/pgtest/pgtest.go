// Package pgtest gives tests a throwaway PostgreSQL. When
// WEIR_TEST_POSTGRES_DSN is set, that server is used; otherwise one cluster
// per test binary is created from the installed PostgreSQL binaries (initdb,
// pg_ctl on PATH or under /usr/lib/postgresql/*/bin), run as the postgres
// user via runuser when the test runs as root, on a free loopback port with
// fsync off. Every test gets a fresh database.
//
// A package using it wraps its tests:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// and calls DSN(t). Without PostgreSQL, DSN skips the test, unless
// WEIR_REQUIRE_POSTGRES=1 (set in CI), when it fails it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables read by this package.
const (
	EnvDSN     = "WEIR_TEST_POSTGRES_DSN" // use this server instead of starting one
	EnvRequire = "WEIR_REQUIRE_POSTGRES"  // "1": fail instead of skip without PostgreSQL
)

var (
	mainCalled bool
	once       sync.Once
	server     *cluster // nil when using EnvDSN
	baseDSN    string
	startErr   error
)

// Main runs the package's tests and stops the cluster, if one was started,
// afterwards. It returns the exit code for os.Exit.
func Main(m interface{ Run() int }) int {
	mainCalled = true
	code := m.Run()
	if server != nil {
		if err := server.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		}
	}
	return code
}

// Server returns the DSN of the test server's maintenance database,
// starting the server on first use; it skips or fails t when PostgreSQL is
// unavailable. Most tests want DSN instead.
func Server(t testing.TB) string {
	t.Helper()
	if !mainCalled {
		t.Fatal("pgtest: the package's TestMain must call pgtest.Main(m) so the cluster is stopped")
	}
	once.Do(func() {
		if dsn := os.Getenv(EnvDSN); dsn != "" {
			baseDSN = dsn
			return
		}
		server, startErr = startCluster(false)
		if startErr == nil {
			baseDSN = server.dsn
		}
	})
	if startErr != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("pgtest: PostgreSQL required (%s=1) but unavailable: %v", EnvRequire, startErr)
		}
		t.Skipf("pgtest: PostgreSQL unavailable: %v", startErr)
	}
	return baseDSN
}

// DSN creates a fresh, empty database for t (dropped when t ends) and
// returns a postgres:// URL for it. The URL can be handed to subprocesses,
// e.g. for multi-process tests.
func DSN(t testing.TB) string {
	t.Helper()
	base := Server(t)
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" {
		t.Fatalf("pgtest: %s must be a postgres:// URL: %q", EnvDSN, base)
	}
	name := "test_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := adminExec(ctx, base, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := adminExec(ctx, base, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// adminExec runs one statement on the maintenance database.
func adminExec(ctx context.Context, dsn, stmt string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, stmt)
	return errors.Join(err, conn.Close(ctx))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
