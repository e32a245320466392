package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
)

// cluster is a PostgreSQL cluster started from the installed binaries.
type cluster struct {
	dir    string // temp dir holding data/ and the socket
	bindir string
	asUser bool // run the binaries as the postgres user (we are root)
	dsn    string
}

// startCluster runs initdb and pg_ctl start on a free loopback port. A
// durable cluster keeps synchronous_commit on, so a commit survives a
// server crash (fsync stays off: the test machine itself does not crash).
func startCluster(durable bool) (*cluster, error) { return startClusterOn(durable, freePort) }

// startClusterOn is startCluster taking its ports from nextPort.
func startClusterOn(durable bool, nextPort func() (int, error)) (*cluster, error) {
	bindir, err := findBinDir()
	if err != nil {
		return nil, err
	}
	reapOrphans(bindir)
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("make cluster dir: %w", err)
	}
	c := &cluster{dir: dir, bindir: bindir, asUser: os.Geteuid() == 0}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return nil, errors.Join(fmt.Errorf("record cluster owner: %w", err), os.RemoveAll(dir))
	}
	if c.asUser {
		if err := chownToPostgres(dir); err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := c.run("initdb", "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8",
		"--no-sync", "--no-instructions"); err != nil {
		return nil, errors.Join(fmt.Errorf("initdb: %w: %s", err, out), os.RemoveAll(dir))
	}
	port, err := c.startOnFreePort(durable, nextPort)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	c.dsn = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return c, nil
}

// startOnFreePort starts the initialised cluster on a port from nextPort.
// The port is free when asked for but not reserved: another test binary
// can bind it before the server does, so a start refused for an address in
// use is tried again on a new port.
func (c *cluster) startOnFreePort(durable bool, nextPort func() (int, error)) (int, error) {
	logFile := filepath.Join(c.dir, "log")
	for attempt := 1; ; attempt++ {
		port, err := nextPort()
		if err != nil {
			return 0, err
		}
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off "+
			"-c max_connections=200", port, c.dir)
		if !durable {
			opts += " -c synchronous_commit=off"
		}
		out, err := c.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-o", opts, "-l", logFile, "-w", "start")
		if err == nil {
			return port, nil
		}
		log, _ := os.ReadFile(logFile)
		if attempt == portAttempts || !bytes.Contains(log, []byte("Address already in use")) {
			return 0, fmt.Errorf("pg_ctl start: %w: %s\n%s", err, out, log)
		}
		_ = os.Remove(logFile) // the next attempt's log alone
	}
}

// portAttempts bounds the starts tried on ports taken before the server
// could bind them.
const portAttempts = 5

// dirPrefix names cluster directories; ownerFile in each holds the pid of
// the test binary that started it.
const (
	dirPrefix = "weir-pgtest-"
	ownerFile = "owner.pid"
)

// reapOrphans stops and removes clusters whose test binary died without
// stopping them (a panic or a kill skips pgtest.Main's cleanup).
func reapOrphans(bindir string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // not ours, or still being set up
		}
		pid, err := strconv.Atoi(string(b))
		if err != nil || processAlive(pid) {
			continue
		}
		c := &cluster{dir: dir, bindir: bindir, asUser: os.Geteuid() == 0}
		if err := c.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: reap orphaned cluster %s: %v\n", dir, err)
		}
	}
}

// processAlive reports whether a process with pid exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// stop shuts the cluster down and removes its files.
func (c *cluster) stop() error {
	out, err := c.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "stop")
	if err != nil {
		err = fmt.Errorf("pg_ctl stop: %w: %s", err, out)
	}
	return errors.Join(err, os.RemoveAll(c.dir))
}

// run runs a PostgreSQL binary, as the postgres user when we are root.
func (c *cluster) run(name string, args ...string) ([]byte, error) {
	bin := filepath.Join(c.bindir, name)
	var cmd *exec.Cmd
	if c.asUser {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", bin}, args...)...)
	} else {
		cmd = exec.Command(bin, args...)
	}
	cmd.Dir = c.dir
	return cmd.CombinedOutput()
}

// findBinDir locates initdb and pg_ctl: on PATH, else the newest
// /usr/lib/postgresql/*/bin.
func findBinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if resolved, err := filepath.EvalSymlinks(p); err == nil {
			p = resolved
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "pg_ctl")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("initdb/pg_ctl not found on PATH or in /usr/lib/postgresql/*/bin " +
		"(apt-get install postgresql, or set " + EnvDSN + ")")
}

func versionOf(bindir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(bindir)))
	return v
}

func chownToPostgres(dir string) error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root needs a postgres user to run PostgreSQL as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return fmt.Errorf("chown %s to postgres: %w", dir, err)
	}
	return nil
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
