package dagfile

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to Load: it must never panic, and a DAG
// it returns must pass Validate and hash.
func FuzzLoad(f *testing.F) {
	var files []string
	for _, pattern := range []string{"testdata/bad/*.yaml", "testdata/good/*.yaml", "../../examples/dags/*.yaml"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("a: &a [*a]"))
	f.Add([]byte("dag_id: x\ntasks: {a: {operator: noop, <<: [{retries: 1}]}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dags, err := Load("fuzz.yaml", data)
		if err != nil {
			if _, ok := err.(*Error); !ok { //nolint:errorlint // Load returns *Error itself, never wrapped
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		for i := range dags {
			if verr := Validate(&dags[i]); verr != nil {
				t.Fatalf("loaded DAG does not validate: %v\ninput:\n%s", verr, data)
			}
			if len(Hash(&dags[i])) != 64 {
				t.Fatal("bad hash")
			}
		}
	})
}
