package s3test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// readyTimeout bounds the wait for a fresh server to take writes. S3
// answers within about 2 s, but the first write blocks until the master
// hands out volumes, about 10 s after start.
const readyTimeout = 2 * time.Minute

// dirPrefix names server directories; ownerFile in each holds the pid of
// the test binary that started it and pidFile the server's pid.
const (
	dirPrefix = "weir-s3test-"
	ownerFile = "owner.pid"
	pidFile   = "weed.pid"
)

// weedServer is a running `weed server -s3`.
type weedServer struct {
	dir      string
	cmd      *exec.Cmd
	exited   chan struct{} // closed when the process has been reaped
	ports    []int
	endpoint string // http://127.0.0.1:PORT
	client   *minio.Client
}

// findWeed returns the weed binary to run, or why there is none (a skip),
// or an error when one was asked for and cannot be had.
func findWeed() (bin, skip string, err error) {
	if p := os.Getenv(EnvWeedBin); p != "" {
		//nolint:gosec // G703: the developer's own setting names the binary to run
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", "", fmt.Errorf("%s=%s is not an executable file", EnvWeedBin, p)
		}
		return p, "", nil
	}
	script, err := findBuildScript()
	if err != nil {
		return "", fmt.Sprintf("%v; set %s", err, EnvWeedBin), nil
	}
	out, err := exec.Command("bash", script, "--path").Output()
	if err != nil {
		return "", "", fmt.Errorf("%s --path: %w", script, err)
	}
	bin = strings.TrimSpace(string(out))
	if st, err := os.Stat(bin); err == nil && st.Mode()&0o111 != 0 {
		return bin, "", nil
	}
	if os.Getenv(EnvRequire) != "1" && os.Getenv(EnvBuild) != "1" {
		return "", fmt.Sprintf("no weed binary at %s: run %s (about 4 minutes the first time), "+
			"or set %s=1 to build it from the tests, or %s to use another", bin, script, EnvBuild, EnvWeedBin), nil
	}
	fmt.Fprintf(os.Stderr, "s3test: building weed with %s\n", script)
	cmd := exec.Command("bash", script)
	cmd.Stderr = os.Stderr
	out, err = cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("build weed with %s: %w", script, err)
	}
	return strings.TrimSpace(string(out)), "", nil
}

// findBuildScript looks for tools/seaweedfs/build.sh in the working
// directory (a package directory under `go test`) and its parents.
func findBuildScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		p := filepath.Join(dir, "tools", "seaweedfs", "build.sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("tools/seaweedfs/build.sh not found above the working directory")
		}
		dir = parent
	}
}

// startAttempts is how many times startWeed starts a server that exits
// during start-up: the ports freePorts found free may be taken before weed
// binds them (other test packages start servers at the same time), and
// weed then exits.
const startAttempts = 3

// startWeed starts a server in a new temp dir on free loopback ports and
// waits until it stores objects; a server that exits during start-up is
// started again on other ports, up to startAttempts times.
func startWeed(bin string) (*weedServer, error) {
	reapOrphans()
	var errs []error
	for range startAttempts {
		s, err := startWeedOnce(bin)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
		if !errors.Is(err, errExited) {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// errExited is the error of a server that exited during start-up.
var errExited = errors.New("weed exited during start-up")

// startWeedOnce starts one server and waits until it stores objects.
func startWeedOnce(bin string) (*weedServer, error) {
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("make server dir: %w", err)
	}
	s := &weedServer{dir: dir, exited: make(chan struct{})}
	if err := s.launch(bin); err != nil {
		return nil, errors.Join(err, s.stop())
	}
	began := time.Now()
	if err := s.waitReady(); err != nil {
		return nil, errors.Join(err, s.stop())
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "s3test: weed ready at %s in %s\n", s.endpoint, time.Since(began).Round(time.Millisecond))
	}
	return s, nil
}

// launch writes the config and starts the process.
func (s *weedServer) launch(bin string) error {
	if err := os.WriteFile(filepath.Join(s.dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return fmt.Errorf("record server owner: %w", err)
	}
	config := fmt.Sprintf(`{"identities":[{"name":"weir-test","credentials":[{"accessKey":%q,"secretKey":%q}],`+
		`"actions":["Admin","Read","Write","List","Tagging"]}]}`, AccessKey, SecretKey)
	if err := os.WriteFile(filepath.Join(s.dir, "s3.json"), []byte(config), 0o600); err != nil {
		return fmt.Errorf("write S3 identities: %w", err)
	}
	data := filepath.Join(s.dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return fmt.Errorf("make data dir: %w", err)
	}
	ports, err := freePorts(8)
	if err != nil {
		return err
	}
	s.ports = ports
	args := []string{"server",
		"-dir=" + data,
		"-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-master.port=" + strconv.Itoa(ports[0]), "-master.port.grpc=" + strconv.Itoa(ports[1]),
		"-volume.port=" + strconv.Itoa(ports[2]), "-volume.port.grpc=" + strconv.Itoa(ports[3]),
		"-filer.port=" + strconv.Itoa(ports[4]), "-filer.port.grpc=" + strconv.Itoa(ports[5]),
		"-filer.localSocket=" + filepath.Join(s.dir, "filer.sock"),
		"-s3", "-s3.port=" + strconv.Itoa(ports[6]), "-s3.port.grpc=" + strconv.Itoa(ports[7]),
		"-s3.localSocket=" + filepath.Join(s.dir, "s3.sock"),
		"-s3.config=" + filepath.Join(s.dir, "s3.json"),
		"-s3.port.iceberg=0", "-s3.port.lance=0", // on by default, on fixed ports
		// Each bucket is a collection with volumes of its own: small
		// volumes and no fixed cap keep many test buckets from exhausting
		// the volume server.
		"-master.volumeSizeLimitMB=64", "-volume.max=0",
	}
	logFile, err := os.Create(filepath.Join(s.dir, "weed.log"))
	if err != nil {
		return fmt.Errorf("create server log: %w", err)
	}
	defer logFile.Close() // the child has its own descriptor
	s.cmd = exec.Command(bin, args...)
	s.cmd.Dir = s.dir
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		s.cmd = nil
		return fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		_ = s.cmd.Wait() // the exit status of a killed test server says nothing
		close(s.exited)
	}()
	if err := os.WriteFile(filepath.Join(s.dir, pidFile), []byte(strconv.Itoa(s.cmd.Process.Pid)), 0o600); err != nil {
		return fmt.Errorf("record server pid: %w", err)
	}
	hostPort := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[6]))
	s.endpoint = "http://" + hostPort
	s.client, err = newClient(hostPort)
	return err
}

// waitReady polls until a bucket can be made and an object written and
// read back: S3 answering is not enough, the volume server must have
// joined the master.
func (s *weedServer) waitReady() error {
	deadline := time.Now().Add(readyTimeout)
	var last error
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("%w:\n%s", errExited, s.logTail())
		default:
		}
		if last = s.probe(); last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("weed not ready after %s: %w\n%s", readyTimeout, last, s.logTail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// probe writes and reads one object in a bucket of its own.
func (s *weedServer) probe() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	const bucket = "weir-s3test-ready"
	if err := s.client.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: Region}); err != nil {
		if code := minio.ToErrorResponse(err).Code; code != "BucketAlreadyOwnedByYou" && code != "BucketAlreadyExists" {
			return fmt.Errorf("make bucket: %w", err)
		}
	}
	if _, err := s.client.PutObject(ctx, bucket, "probe", strings.NewReader("ok"), 2, minio.PutObjectOptions{}); err != nil {
		return fmt.Errorf("put object: %w", err)
	}
	obj, err := s.client.GetObject(ctx, bucket, "probe", minio.GetObjectOptions{})
	if err != nil {
		return fmt.Errorf("get object: %w", err)
	}
	defer func() { _ = obj.Close() }() // nothing to flush after a read
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(obj); err != nil {
		return fmt.Errorf("read object: %w", err)
	}
	if buf.String() != "ok" {
		return fmt.Errorf("read back %q, want %q", buf.String(), "ok")
	}
	return nil
}

// stop kills the server (its data is throwaway, so there is no point in
// its ~20 s graceful shutdown) and removes its files, including the gRPC
// sockets weed always puts in /tmp.
func (s *weedServer) stop() error {
	var err error
	if s.cmd != nil {
		if kerr := s.cmd.Process.Kill(); kerr != nil && !errors.Is(kerr, os.ErrProcessDone) {
			err = fmt.Errorf("kill weed: %w", kerr)
		}
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			err = errors.Join(err, errors.New("weed did not exit 30 s after SIGKILL"))
		}
	}
	removeSockets(s.ports)
	return errors.Join(err, os.RemoveAll(s.dir))
}

// logTail returns the end of the server's log, for start-up errors.
func (s *weedServer) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "weed.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// removeSockets removes the Unix sockets weed names after its ports.
func removeSockets(ports []int) {
	for _, p := range ports {
		matches, _ := filepath.Glob(filepath.Join(os.TempDir(), "seaweedfs-*-"+strconv.Itoa(p)+".sock"))
		for _, m := range matches {
			os.Remove(m)
		}
	}
}

// reapOrphans kills servers whose test binary died without stopping them
// (a panic or a kill skips Main's cleanup) and removes their files.
func reapOrphans() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		owner, ok := readPID(filepath.Join(dir, ownerFile))
		if !ok || processAlive(owner) {
			continue // not ours, still being set up, or in use
		}
		if pid, ok := readPID(filepath.Join(dir, pidFile)); ok && isWeed(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL) // best effort: it may just have exited
		}
		os.RemoveAll(dir)
	}
}

func readPID(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, err == nil
}

// processAlive reports whether a process with pid exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// isWeed reports whether pid runs a weed server, so a reused pid is never
// killed.
func isWeed(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := bytes.Split(b, []byte{0})
	return len(args) > 1 && strings.HasPrefix(filepath.Base(string(args[0])), "weed") && string(args[1]) == "server"
}

// freePorts asks the kernel for n distinct unused loopback ports.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close() // held until all n are chosen, so none repeats
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
