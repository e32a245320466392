package weir

import (
	"os"
	"path/filepath"
	"testing"
)

// goWatermarkLoad runs examples/sdk's go_watermark_load twice with rows
// added to the source between the runs (docs/requirements.md#as-1, #as-3: the watermark in
// the asset's state outlives the run): the second run processes only the
// rows newer than the first run's watermark.
func goWatermarkLoad(t *testing.T, bin string) {
	home := t.TempDir()
	source := filepath.Join(t.TempDir(), "events.csv")
	conf := `{"source": "` + source + `", "new_rows": 2}`
	assertRows(t, dagsTest(t, bin, home, "go_watermark_load", "--conf", conf),
		map[string]string{"append_source": "success 1", "load": "success 1"})
	if v := returnValue(t, openStore(t, home), "go_watermark_load", "load", -1); v != "[1,2]" {
		t.Errorf("run 1 processed %s, want [1,2]", v)
	}
	f, err := os.OpenFile(source, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("3,30\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	assertRows(t, dagsTest(t, bin, home, "go_watermark_load", "--conf", conf),
		map[string]string{"load": "success 1"})
	if v := returnValue(t, openStore(t, home), "go_watermark_load", "load", -1); v != "[3,4,5]" {
		t.Errorf("run 2 processed %s, want only the new rows [3,4,5]", v)
	}
}
