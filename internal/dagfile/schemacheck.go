package dagfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// compiledSchema is Schema, compiled once.
var compiledSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("dag-file.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("dag-file.schema.json")
})

// schemaProblems validates a document against the published JSON Schema.
// The loader's own checks run first and give the precise messages; this
// pass makes the schema binding, so a file an editor flags is never loaded.
func schemaProblems(file string, doc *node) []Problem {
	s, err := compiledSchema()
	if err != nil {
		return []Problem{{File: file, Msg: fmt.Sprintf("the DAG file schema does not compile: %v", err)}}
	}
	d := &decoder{locs: map[string]fieldLoc{}, budget: maxValueNodes}
	v, ok := d.toAny(doc, field{})
	if !ok {
		return nil // too large: the decoder has reported it
	}
	b, err := json.Marshal(v)
	if err != nil {
		return []Problem{{File: file, Line: doc.pos.line, Col: doc.pos.col, Msg: err.Error()}}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return []Problem{{File: file, Line: doc.pos.line, Col: doc.pos.col, Msg: err.Error()}}
	}
	var ve *jsonschema.ValidationError
	if !errors.As(s.Validate(inst), &ve) {
		return nil
	}
	printer := message.NewPrinter(language.English)
	var out []Problem
	for _, leaf := range leaves(ve) {
		n, path := locateInstance(doc, leaf.InstanceLocation)
		out = append(out, Problem{File: file, Line: n.pos.line, Col: n.pos.col, Path: path,
			Msg: "does not match the DAG file schema: " + leaf.ErrorKind.LocalizedString(printer)})
	}
	return out
}

// leaves returns the innermost causes of a validation error.
func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
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
