package pgtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Cluster is a PostgreSQL server of one test's own, for tests that stop or
// restart the database (the shared server of Server and DSN must stay up for
// every other test).
type Cluster struct {
	c *cluster
}

// Private starts a cluster for t alone (durable commits: a restart loses
// nothing committed) and stops it when t ends. It skips or
// fails t, as Server does, when PostgreSQL is unavailable or an external
// server was given (a test cannot restart that one).
func Private(t testing.TB) *Cluster {
	t.Helper()
	if os.Getenv(EnvDSN) != "" {
		t.Skipf("pgtest: %s is set; a private cluster needs the installed binaries", EnvDSN)
	}
	c, err := startCluster(true)
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("pgtest: PostgreSQL required (%s=1) but unavailable: %v", EnvRequire, err)
		}
		t.Skipf("pgtest: PostgreSQL unavailable: %v", err)
	}
	t.Cleanup(func() {
		if err := c.stop(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return &Cluster{c: c}
}

// DSN is the cluster's maintenance database (postgres), which a test may use
// as its database.
func (p *Cluster) DSN() string { return p.c.dsn }

// Restart stops the server at once (connections are cut, as in a crash of
// the database host; committed data survives) and starts it again on the
// same port, waiting until it accepts connections.
func (p *Cluster) Restart(t testing.TB) {
	t.Helper()
	data := filepath.Join(p.c.dir, "data")
	// -l: the new server must log to the file, not inherit pg_ctl's output
	// (the pipe would keep run waiting forever).
	if out, err := p.c.run("pg_ctl", "-D", data, "-l", filepath.Join(p.c.dir, "log"), "-m", "immediate", "-w", "restart"); err != nil {
		log, _ := os.ReadFile(filepath.Join(p.c.dir, "log"))
		t.Fatalf("pgtest: pg_ctl restart: %v: %s\n%s", err, out, log)
	}
}

// Stop stops the server at once (as Restart does) and leaves it stopped
// until Start.
func (p *Cluster) Stop(t testing.TB) { t.Helper(); p.ctl(t, "-m", "immediate", "stop") }

// Start starts a stopped server on its port, waiting until it accepts
// connections (pg_ctl restart: it starts a stopped server with the options
// of its last start, its port among them).
func (p *Cluster) Start(t testing.TB) {
	t.Helper()
	p.ctl(t, "-l", filepath.Join(p.c.dir, "log"), "restart")
}

// ctl runs pg_ctl on the cluster's data folder, waiting for it (-w).
func (p *Cluster) ctl(t testing.TB, args ...string) {
	t.Helper()
	if out, err := p.c.run("pg_ctl", append([]string{"-D", filepath.Join(p.c.dir, "data"), "-w"}, args...)...); err != nil {
		log, _ := os.ReadFile(filepath.Join(p.c.dir, "log"))
		t.Fatalf("pgtest: pg_ctl %v: %v: %s\n%s", args, err, out, log)
	}
}
