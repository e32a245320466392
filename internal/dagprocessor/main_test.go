package dagprocessor

import (
	"os"
	"testing"

	"github.com/weirflow/weir/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
