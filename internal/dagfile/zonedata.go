package dagfile

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
)

// zoneSources are where Go's time.LoadLocation looks for the time zone
// database after $ZONEINFO, in its order (Unix), then $GOROOT's copy.
var zoneSources = []string{"/usr/share/zoneinfo/", "/usr/share/lib/zoneinfo/", "/usr/lib/locale/TZ/", "/etc/zoneinfo/"}

// ZoneData names the time zone database this process's time.LoadLocation
// reads, which a parse depends on (a DAG's timezone must exist; a
// start_date becomes an instant by its rules): $ZONEINFO, the first system
// folder that exists with its tzdata.zi version line (or its modification
// time), and $GOROOT's zoneinfo.zip. Two hosts whose answers differ may
// parse the same file differently (ADR 0030).
func ZoneData() string {
	id := "ZONEINFO=" + os.Getenv("ZONEINFO")
	for _, dir := range zoneSources {
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		id += " " + dir + " " + zoneVersion(dir, fi)
		break
	}
	//nolint:staticcheck // time.LoadLocation's last source is this very path
	if fi, err := os.Stat(filepath.Join(runtime.GOROOT(), "lib", "time", "zoneinfo.zip")); err == nil {
		id += " goroot " + strconv.FormatInt(fi.Size(), 10)
	}
	return id
}

// zoneVersion is the first line of dir's tzdata.zi ("# version 2025b"), or
// dir's modification time when it has none.
func zoneVersion(dir string, fi os.FileInfo) string {
	f, err := os.Open(filepath.Join(dir, "tzdata.zi")) //nolint:gosec // a fixed system path
	if err != nil {
		return fi.ModTime().UTC().String()
	}
	defer func() { _ = f.Close() }()
	line, _, _ := bufio.NewReader(f).ReadLine()
	return string(line)
}
