package weir_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinksResolve keeps the docs' relative links honest: every link of
// README.md and docs/ to a file of the repository names one that exists,
// and every #anchor names a heading (as GitHub spells its anchor) or an
// <a id> of the page it points to.
func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	adrs, err := filepath.Glob(filepath.Join("docs", "adr", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(append(pages, adrs...), "README.md")
	anchorsOf := map[string]map[string]bool{}
	anchors := func(path string) map[string]bool {
		if a, ok := anchorsOf[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		anchorsOf[path] = pageAnchors(string(b))
		return anchorsOf[path]
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range proseLines(string(b)) {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				path := page
				if file != "" {
					path = filepath.Join(filepath.Dir(page), file)
				}
				checked++
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d links %s: no such file", page, i+1, target)
					continue
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !anchors(path)[anchor] {
					t.Errorf("%s:%d links %s: %s has no heading or <a id> with that anchor", page, i+1, target, path)
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("checked %d links; the pages or this test's pattern changed", checked)
	}
}

// proseLines returns the lines of a markdown page, a fenced code block's
// and inline code's text blanked (a link there is an example), keeping
// the line numbers.
func proseLines(page string) []string {
	lines := strings.Split(page, "\n")
	code := regexp.MustCompile("`[^`]*`")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
			continue
		}
		lines[i] = code.ReplaceAllString(l, "``")
	}
	return lines
}

// pageAnchors returns the anchors a page defines: its headings' as GitHub
// makes them (a repeated one gets -1, -2, ...) and its <a id="...">.
func pageAnchors(page string) map[string]bool {
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([^"]+)">`).FindAllStringSubmatch(page, -1) {
		out[m[1]] = true
	}
	seen := map[string]int{}
	fenced := false
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(l, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(l, "#"))
		slug := headingSlug(text)
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// headingSlug is GitHub's anchor of a heading: its text (links and code
// marks taken off), lower case, with what is not a letter, digit, space,
// '-' or '_' dropped and spaces made '-'.
func headingSlug(text string) string {
	text = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
