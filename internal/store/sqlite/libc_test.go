package sqlite_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"testing"
)

// TestLibcMatchesSQLite guards the pin: modernc.org/sqlite only works with
// the exact modernc.org/libc version its go.mod requires, and an unrelated
// upgrade (e.g. of goose) can silently raise libc.
func TestLibcMatchesSQLite(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-m", "-json", "modernc.org/sqlite", "modernc.org/libc").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	mods := map[string]struct{ Version, GoMod string }{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var m struct{ Path, Version, GoMod string }
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		mods[m.Path] = struct{ Version, GoMod string }{m.Version, m.GoMod}
	}
	sqliteMod, err := os.ReadFile(mods["modernc.org/sqlite"].GoMod)
	if err != nil {
		t.Fatalf("read modernc.org/sqlite's go.mod: %v", err)
	}
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?modernc\.org/libc\s+(v\S+)`).FindSubmatch(sqliteMod)
	if m == nil {
		t.Fatalf("modernc.org/sqlite %s's go.mod names no modernc.org/libc", mods["modernc.org/sqlite"].Version)
	}
	if want, got := string(m[1]), mods["modernc.org/libc"].Version; got != want {
		t.Errorf("go.mod selects modernc.org/libc %s, but modernc.org/sqlite %s requires exactly %s; "+
			"run `go get modernc.org/libc@%s`", got, mods["modernc.org/sqlite"].Version, want, want)
	}
}
