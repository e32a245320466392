package dagfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The time zone database a parse reads is named, so that a host reading
// another one parses again instead of reusing a record (ADR 0030).
func TestZoneDataNamesTheDatabase(t *testing.T) {
	base := ZoneData()
	if base != ZoneData() {
		t.Fatal("ZoneData is not stable")
	}
	t.Setenv("ZONEINFO", filepath.Join(t.TempDir(), "zoneinfo.zip"))
	if got := ZoneData(); got == base || !strings.Contains(got, "zoneinfo.zip") {
		t.Errorf("ZoneData with $ZONEINFO set = %q, the same as without (%q)", got, base)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tzdata.zi"), []byte("# version 2099z\nR X 1 2 - 1 0 0 -\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := zoneVersion(dir, fi); got != "# version 2099z" {
		t.Errorf("zoneVersion = %q, want the version line", got)
	}
}
