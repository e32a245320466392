package objstore_test

import (
	"os"
	"testing"

	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/objstore/objstoretest"
	"github.com/weirflow/weir/internal/testutil/s3test"
)

func TestMain(m *testing.M) { os.Exit(s3test.Main(m)) }

// TestFSConformance runs the conformance suite on a real temp directory.
func TestFSConformance(t *testing.T) {
	t.Parallel()
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		s, err := objstore.Open("file://" + t.TempDir() + "/state")
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestS3Conformance runs the conformance suite on SeaweedFS (docs/requirements.md#be-2:
// the object-store backend against a real S3-compatible server), each test
// in a bucket of its own under a prefix.
func TestS3Conformance(t *testing.T) {
	t.Parallel()
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		s, err := objstore.Open(s3test.URL(t, "weir/state"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
