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
	in, err := stateref.FromEnv()
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
	if in, err := stateref.FromEnv(); in != nil || err != nil {
		t.Errorf("FromEnv without %s = %v, %v; want none", stateref.EnvBackend, in, err)
	}
	t.Setenv(stateref.EnvBackend, "ftp://x")
	if _, err := stateref.FromEnv(); err == nil || !strings.Contains(err.Error(), stateref.EnvBackend) {
		t.Errorf("FromEnv with a bad URL: %v, want an error naming %s", err, stateref.EnvBackend)
	}
}
