package stateref_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/stateref"
	"github.com/weirflow/weir/internal/testutil/s3test"
)

// docs/requirements.md#be-2: the worker hands a task subprocess the backend as
// WEIR_STATE_BACKEND without the URL's credentials (they travel in their
// own variables and are masked in logs), and the in-task side opens the
// same store from them: SeaweedFS refuses unsigned requests, so the
// round trip proves the credentials arrived. Not parallel: it sets the
// process environment as a task's would be.
func TestTaskEnvAndFromEnv(t *testing.T) {
	ctx := context.Background()
	raw := s3test.URL(t, "weir/")
	b, err := stateref.Open(raw)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range b.TaskEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if u := env[stateref.EnvBackend]; !strings.HasPrefix(u, "s3://t-") || strings.Contains(u, s3test.SecretKey) || strings.Contains(u, "@") {
		t.Errorf("%s = %q, want the URL without credentials", stateref.EnvBackend, u)
	}
	if env[stateref.EnvAccessKeyID] != s3test.AccessKey || env[stateref.EnvSecretAccessKey] != s3test.SecretKey {
		t.Errorf("credential variables = %v", env)
	}
	if s := b.Secrets(); len(s) != 1 || s[0] != s3test.SecretKey {
		t.Errorf("secrets to mask = %v", s)
	}

	// The task's own AWS_* variables (here: wrong ones) do not matter.
	t.Setenv(objstore.EnvAccessKeyID, "task-own-key")
	t.Setenv(objstore.EnvSecretAccessKey, "task-own-secret")
	for k, v := range env {
		t.Setenv(k, v)
	}
	in, err := stateref.FromEnv(nil)
	if err != nil || in == nil {
		t.Fatalf("FromEnv: %v, %v", in, err)
	}
	if err := in.Store.Put(ctx, "task/d/r/t/-1/k", []byte(`"v"`)); err != nil {
		t.Fatalf("put through the task's backend: %v", err)
	}
	if got, err := b.Store.Get(ctx, "task/d/r/t/-1/k"); err != nil || !bytes.Equal(got, []byte(`"v"`)) {
		t.Errorf("the worker's store reads %s, %v", got, err)
	}

	if err := os.Unsetenv(stateref.EnvBackend); err != nil {
		t.Fatal(err)
	}
	if in, err := stateref.FromEnv(nil); in != nil || err != nil {
		t.Errorf("FromEnv without %s = %v, %v; want none", stateref.EnvBackend, in, err)
	}
	t.Setenv(stateref.EnvBackend, "ftp://x")
	if _, err := stateref.FromEnv(nil); err == nil || !strings.Contains(err.Error(), stateref.EnvBackend) {
		t.Errorf("FromEnv with a bad URL: %v, want an error naming %s", err, stateref.EnvBackend)
	}
}

// named is a custom backend in tests; only its identity matters.
type named struct{ stateref.Objects }

// docs/state-backends.md#custom-backends-in-go: a name resolves to the
// program's custom backend (for the worker, and for the in-task CLI from
// WEIR_STATE_BACKEND, which then carries the name); an unknown name is an
// error listing the registered ones, before anything is opened. Not
// parallel: it sets the process environment as a task's would be.
func TestResolveCustomBackend(t *testing.T) {
	custom := &named{}
	reg := stateref.Registry{"journal": custom, "archive": &named{}}
	b, err := stateref.Resolve("journal", reg)
	if err != nil || b.Store != custom {
		t.Fatalf("Resolve(journal) = %v, %v; want the registered backend", b, err)
	}
	if env := b.TaskEnv(); len(env) != 1 || env[0] != stateref.EnvBackend+"=journal" || len(b.Secrets()) != 0 {
		t.Errorf("task env = %v, secrets %v; want only %s=journal", env, b.Secrets(), stateref.EnvBackend)
	}
	t.Setenv(stateref.EnvBackend, "journal")
	if in, err := stateref.FromEnv(reg); err != nil || in.Store != custom {
		t.Errorf("FromEnv with the name = %v, %v; want the registered backend", in, err)
	}
	if _, err := stateref.FromEnv(nil); err == nil || !strings.Contains(err.Error(), stateref.EnvBackend) {
		t.Errorf("FromEnv with a name the program lacks: %v, want an error naming %s", err, stateref.EnvBackend)
	}
	for want, r := range map[string]stateref.Registry{
		`state backend "nosuch" is not registered (this program registers archive, journal)`: reg,
		`state backend "nosuch" is not registered (this program registers none)`:             nil,
	} {
		_, rerr := stateref.Resolve("nosuch", r)
		for _, err := range []error{rerr, stateref.Check("nosuch", r)} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("an unknown name: %v, want %q", err, want)
			}
		}
	}
	if err := stateref.Check("file:///var/lib/weir/state", nil); err != nil {
		t.Errorf("Check of a file URL: %v", err)
	}
}
