package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/s3test"
	"github.com/weirflow/weir/internal/testutil/weirtest"
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
	bin, cleanup, err := weirtest.Build(repoRoot)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer cleanup()
	weirBin = bin
	return pgtest.Main(s3test.Wrap(m))
}
