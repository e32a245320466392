package dagfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// schemaRules is Schema, compiled once.
var schemaRules = sync.OnceValues(func() (*rule, error) { return compileRules(Schema) })

// schemaProblems validates a document against the published JSON Schema.
// The loader's own checks run first and give the precise messages; this
// pass makes the schema binding, so a file an editor flags is never loaded.
func schemaProblems(file string, doc *node) []Problem {
	s, err := schemaRules()
	if err != nil {
		return []Problem{{File: file, Msg: fmt.Sprintf("the DAG file schema does not compile: %v", err)}}
	}
	d := &decoder{locs: map[string]fieldLoc{}, budget: maxValueNodes}
	v, ok := d.toAny(doc, field{})
	if !ok {
		return nil // too large: the decoder has reported it
	}
	inst, err := jsonValue(v)
	if err != nil {
		return []Problem{{File: file, Line: doc.pos.line, Col: doc.pos.col, Msg: err.Error()}}
	}
	var out []Problem
	if s.matches(inst) {
		return nil
	}
	for _, bad := range (checker{}).check(s, inst, nil) {
		n, path := locateInstance(doc, bad.at)
		out = append(out, Problem{File: file, Line: n.pos.line, Col: n.pos.col, Path: path,
			Msg: "does not match the DAG file schema: " + bad.msg()})
	}
	return out
}

// jsonValue returns v as JSON gives it back (numbers as json.Number), the
// form the schema is checked on.
func jsonValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	return out, dec.Decode(&out)
}

// locateInstance follows a JSON pointer's tokens through the YAML tree and
// returns the deepest node found with its field path ("tasks[2].retries").
func locateInstance(doc *node, tokens []string) (*node, string) {
	n, path := doc, ""
	for _, tok := range tokens {
		var next *node
		switch n.kind {
		case kMap:
			next = n.get(tok)
			if next != nil {
				path = strings.TrimPrefix(path+"."+tok, ".")
			}
		case kSeq:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.items) {
				next = n.items[i]
				path += "[" + tok + "]"
			}
		default:
		}
		if next == nil {
			break
		}
		n = next
	}
	return n, path
}
