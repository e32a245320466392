package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/s3test"
)

var (
	// weirBin is the weir binary built once for the whole test run.
	weirBin string
	// repoRoot is the module root (examples/ lives there).
	repoRoot string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	repoRoot = root
	dir, err := os.MkdirTemp("", "weir-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	weirBin = filepath.Join(dir, "weir")
	build := exec.Command("go", "build", "-o", weirBin, "./cmd/weir")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/weir: %v\n%s", err, out)
		return 1
	}
	return pgtest.Main(s3test.Wrap(m))
}
