package pgtest

import (
	"net"
	"net/url"
	"os"
	"strconv"
	"testing"
)

// A port found free but bound by someone else before the server starts
// (another test binary did, in CI) costs a retry, not the package's tests.
func TestStartRetriesAPortTakenMeanwhile(t *testing.T) {
	if os.Getenv(EnvDSN) != "" {
		t.Skip("using " + EnvDSN)
	}
	if _, err := findBinDir(); err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	asked := 0
	c, err := startClusterOn(false, func() (int, error) {
		asked++
		if asked == 1 {
			return takenPort, nil
		}
		return freePort()
	})
	if err != nil {
		t.Fatalf("start after a taken port: %v", err)
	}
	defer func() {
		if err := c.stop(); err != nil {
			t.Error(err)
		}
	}()
	u, err := url.Parse(c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	if port, _ := strconv.Atoi(u.Port()); asked != 2 || port == takenPort {
		t.Errorf("asked for %d ports, serving on %d (taken: %d); want a second port", asked, port, takenPort)
	}
}
