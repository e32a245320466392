package builtin_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/builtin"
)

// TestReferenceDocumentsEveryType: docs/triggers.md has a section for
// every built-in type, and every YAML example in it holds kwargs its type
// accepts (the sensor's poke_interval is a trigger kwarg).
func TestReferenceDocumentsEveryType(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../../docs/triggers.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	reg := builtin.Registry()
	for _, tp := range reg.Types() {
		if !strings.Contains(doc, "\n### `"+tp.Name+"`\n") || !strings.Contains(doc, "| [`"+tp.Name+"`](#"+tp.Name+") |") {
			t.Errorf("docs/triggers.md lacks the section or the table row of trigger type %q", tp.Name)
		}
	}
	examples := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(doc, -1)
	if len(examples) < len(reg.Types()) {
		t.Fatalf("docs/triggers.md has %d YAML examples, want one per type (%d)", len(examples), len(reg.Types()))
	}
	for _, ex := range examples {
		var tasks []struct {
			Trigger      map[string]any `yaml:"trigger"`
			PokeInterval string         `yaml:"poke_interval"`
		}
		if err := yaml.Unmarshal([]byte(ex[1]), &tasks); err != nil || len(tasks) != 1 {
			t.Errorf("example does not parse as one task (%v):\n%s", err, ex[1])
			continue
		}
		kwargs := tasks[0].Trigger
		typ, _ := kwargs["type"].(string)
		delete(kwargs, "type")
		if tasks[0].PokeInterval != "" {
			kwargs["poke_interval"] = tasks[0].PokeInterval
		}
		b, _ := json.Marshal(kwargs)
		if err := reg.Check(trigger.Spec{Type: typ, Kwargs: b}); err != nil {
			t.Errorf("example of %q is refused: %v\n%s", typ, err, ex[1])
		}
	}
}

// TestEveryTypeRefusesUnknownKwargs: a misspelt kwarg is an error naming
// it, for every type.
func TestEveryTypeRefusesUnknownKwargs(t *testing.T) {
	t.Parallel()
	for _, tp := range builtin.Types() {
		if _, err := tp.New(json.RawMessage(`{"poke_intervall":"1s"}`)); err == nil || !strings.Contains(err.Error(), `unknown kwarg "poke_intervall"`) {
			t.Errorf("%s with a misspelt kwarg: %v, want it named", tp.Name, err)
		}
	}
}
