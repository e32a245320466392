package weir_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRequirementCitationsResolve keeps requirement ids honest: every
// docs/requirements.md#<id> cited in code or docs names an anchor that page
// defines, and nothing cites a requirements document outside the
// repository ("SPEC X-n").
func TestRequirementCitationsResolve(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(filepath.Join("docs", "requirements.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([a-z0-9-]+)"></a>`).FindAllStringSubmatch(string(page), -1) {
		anchors[m[1]] = true
	}
	if len(anchors) < 40 {
		t.Fatalf("docs/requirements.md defines %d anchors; the page or this test's pattern changed", len(anchors))
	}
	cite := regexp.MustCompile(`requirements\.md#([a-z0-9-]+)((?:, #[a-z0-9-]+)*)`)
	more := regexp.MustCompile(`#([a-z0-9-]+)`)
	outside := regexp.MustCompile(`\bSPEC [A-Z]+-\d+`)
	cited := 0
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "testdata" || d.Name() == "tools") {
			return filepath.SkipDir
		}
		if d.IsDir() || (!strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".md")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(b)
		if path != "requirements_test.go" {
			if m := outside.FindString(text); m != "" {
				t.Errorf("%s cites %q, a document outside the repository; cite docs/requirements.md#<id>", path, m)
			}
		}
		for _, m := range cite.FindAllStringSubmatch(text, -1) {
			ids := []string{m[1]}
			for _, x := range more.FindAllStringSubmatch(m[2], -1) {
				ids = append(ids, x[1])
			}
			for _, id := range ids {
				cited++
				if !anchors[id] {
					t.Errorf("%s cites docs/requirements.md#%s, which the page does not define", path, id)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Error("no citation of docs/requirements.md found; the pattern is broken")
	}
}
