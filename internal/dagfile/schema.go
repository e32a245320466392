package dagfile

import _ "embed"

// Schema is the JSON Schema (draft 2020-12) of a DAG file document, for
// editors and linters; docs/dag-file.schema.json is the published copy.
//
//go:embed schema.json
var Schema []byte
