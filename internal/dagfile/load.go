// Package dagfile loads DAGs from YAML files and validates DAGs, whether
// they come from a file or from the Go SDK.
//
// A file holds one DAG per YAML document (several documents separated by
// "---" give several DAGs). Every problem is reported with the file, line,
// column and field path at fault, and says what is allowed:
//
//	dags/etl.yaml:12:5: tasks[2].retries: must be a non-negative integer
//
// docs/dag-files.md is the reference of the format; schema.json (also
// published as docs/dag-file.schema.json) describes it for editors.
package dagfile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// Default values the loader (and ApplyDefaults) fill in.
const (
	DefaultRetryDelay     = 5 * time.Minute // Airflow's default_task_retry_delay (300 s)
	DefaultPoolSlots      = 1
	DefaultPriorityWeight = 1
	DefaultHTTPConnID     = "http_default"
	DefaultHTTPMethod     = "GET"
)

// LoadFile reads and loads the DAGs of one YAML file. Each DAG's FileLoc is
// path. An empty file (or one holding only comments) yields no DAGs.
func LoadFile(path string) ([]core.DAG, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Load(path, data)
}

// Load loads the DAGs in data, naming filename in errors and FileLoc. It
// returns an *Error listing every problem found.
func Load(filename string, data []byte) ([]core.DAG, error) {
	return LoadWith(filename, data, Options{})
}

// LoadWith is Load with options.
func LoadWith(filename string, data []byte, o Options) ([]core.DAG, error) {
	docs, syntax := parseYAML(data)
	if syntax != nil {
		syntax.File = filename
		return nil, newError([]Problem{*syntax})
	}
	var (
		dags  []core.DAG
		probs []Problem
		seen  = map[string]int{}
	)
	for _, doc := range docs {
		dag, ps := decodeDoc(filename, doc, o)
		probs = append(probs, ps...)
		if len(ps) > 0 {
			continue
		}
		if line, dup := seen[dag.DagID]; dup {
			n := doc.get("dag_id")
			probs = append(probs, Problem{File: filename, Line: n.pos.line, Col: n.pos.col, Path: "dag_id",
				Msg: fmt.Sprintf("duplicate dag_id %q (also defined at line %d)", dag.DagID, line)})
			continue
		}
		seen[dag.DagID] = doc.get("dag_id").pos.line
		dags = append(dags, dag)
	}
	if err := newError(probs); err != nil {
		return nil, err
	}
	return dags, nil
}

// decodeDoc decodes and validates one document.
func decodeDoc(filename string, doc *node, o Options) (core.DAG, []Problem) {
	d := &decoder{file: filename, locs: map[string]fieldLoc{}, budget: maxValueNodes}
	dag := d.dag(doc)
	dag.FileLoc = filename
	ApplyDefaults(&dag)
	var sensors []Problem
	for i := range dag.Tasks {
		if dag.Tasks[i].Operator == "sensor" {
			for _, p := range BuildSensor(&dag.Tasks[i]) {
				p.Path = fmt.Sprintf("tasks[%d].%s", i, p.Path)
				sensors = append(sensors, p)
			}
		}
	}
	probs := append(d.probs, d.locate(sensors, doc)...)
	if len(sensors) == 0 {
		probs = append(probs, d.locate(validate(&dag, o), doc)...)
	}
	if len(probs) == 0 {
		probs = schemaProblems(filename, doc)
	}
	return dag, probs
}

// locate gives validation problems the position of their field, or of the
// nearest enclosing field found in the file (the document itself for a
// missing top-level field). Problems on a field that already failed to
// decode are dropped: they are consequences of that failure.
func (d *decoder) locate(ps []Problem, doc *node) []Problem {
	var out []Problem
	for _, p := range ps {
		path, rest := p.Path, ""
		p.File, p.Line, p.Col = d.file, doc.pos.line, doc.pos.col
		for path != "" {
			if l, ok := d.locs[path]; ok {
				p.Line, p.Col, p.Path = l.pos.line, l.pos.col, l.disp+rest
				break
			}
			cut := max(strings.LastIndexAny(path, ".["), 0)
			path, rest = path[:cut], path[cut:]+rest
		}
		if !d.decodeFailed(p.Path) {
			out = append(out, p)
		}
	}
	return out
}

// decodeFailed reports whether a decode problem concerns the field shown
// as disp, a field within it, or a field enclosing it.
func (d *decoder) decodeFailed(disp string) bool {
	within := func(a, b string) bool { // a is b or inside b
		return a == b || b == "" || strings.HasPrefix(a, b+".") || strings.HasPrefix(a, b+"[")
	}
	for _, p := range d.probs {
		if within(disp, p.Path) || within(p.Path, disp) {
			return true
		}
	}
	return false
}

// ApplyDefaults fills in what an unset field means: the template syntax
// (detected: applyTemplateSyntax), queue "default", pool "default_pool",
// pool_slots 1, priority_weight 1, and for http tasks method GET and
// http_conn_id "http_default". The loader calls it; the Go SDK should too.
// retry_delay's default (DefaultRetryDelay) is set where a task is built
// (the decoder, the SDK), since its zero is a valid value: retry at once.
func ApplyDefaults(d *core.DAG) {
	applyAssetDefaults(d)
	applyTemplateSyntax(d)
	for i := range d.Tasks {
		t := &d.Tasks[i]
		if t.Queue == "" {
			t.Queue = core.DefaultQueue
		}
		if t.Pool == "" {
			t.Pool = core.DefaultPool
		}
		if t.PoolSlots == 0 {
			t.PoolSlots = DefaultPoolSlots
		}
		if t.PriorityWeight == 0 {
			t.PriorityWeight = DefaultPriorityWeight
		}
		if t.Operator == "http" {
			if t.Args == nil {
				t.Args = map[string]any{}
			}
			if _, ok := t.Args["method"]; !ok {
				t.Args["method"] = DefaultHTTPMethod
			}
			if _, ok := t.Args["http_conn_id"]; !ok {
				t.Args["http_conn_id"] = DefaultHTTPConnID
			}
		}
	}
}

// Hash returns the hex SHA-256 of the DAG's canonical JSON (struct fields
// in declaration order, map keys sorted, times in UTC): equal DAGs hash
// equal, and any change to the definition changes the hash.
func Hash(d *core.DAG) string {
	c := *d
	if c.StartDate != nil {
		t := c.StartDate.UTC()
		c.StartDate = &t
	}
	if c.EndDate != nil {
		t := c.EndDate.UTC()
		c.EndDate = &t
	}
	b, err := json.Marshal(&c)
	if err != nil {
		// Validate rejects values JSON cannot encode, so only an invalid
		// DAG gets here.
		b = []byte("unencodable DAG " + c.DagID + ": " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
