package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// docs/requirements.md#cfg-1: [state_store] defaults, and every bad value rejected at start
// with the option named (TS-3: negative retention is refused).
func TestStateStoreConfig(t *testing.T) {
	t.Parallel()
	cfg, err := Load(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := StateStore{Backend: "metastore", DefaultRetentionDays: 30, MaxValueBytes: 65536, AssetStateOrphanRetentionDays: 30,
		ObjectGrace: Duration(time.Hour)}
	if cfg.StateStore != want || cfg.Workers.StateBackend != "" {
		t.Errorf("defaults = %+v, state_backend %q; want %+v and none", cfg.StateStore, cfg.Workers.StateBackend, want)
	}

	home := t.TempDir()
	file := "[state_store]\nclear_on_success = true\nstate_cleanup_batch_size = 500\ncleanup_interval = \"1h\"\n"
	if err := os.WriteFile(filepath.Join(home, FileName), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = Load(home, []string{"WEIR__STATE_STORE__DEFAULT_RETENTION_DAYS=0"})
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.StateStore; !s.ClearOnSuccess || s.StateCleanupBatchSize != 500 || s.CleanupInterval.String() != "1h0m0s" || s.DefaultRetentionDays != 0 {
		t.Errorf("loaded = %+v", s)
	}

	_, err = Load(t.TempDir(), []string{
		"WEIR__STATE_STORE__DEFAULT_RETENTION_DAYS=-1",
		"WEIR__STATE_STORE__STATE_CLEANUP_BATCH_SIZE=-5",
		"WEIR__STATE_STORE__ASSET_STATE_ORPHAN_RETENTION_DAYS=-2",
		"WEIR__STATE_STORE__MAX_VALUE_BYTES=0",
		"WEIR__STATE_STORE__CLEANUP_INTERVAL=-1m",
		"WEIR__STATE_STORE__BACKEND=redis://cache",
		"WEIR__WORKERS__STATE_BACKEND=ftp://host/state",
		"WEIR__STATE_STORE__OBJECT_GRACE=10s",
		"WEIR__WORKERS__STATE_SWEEP_INTERVAL=0s",
	})
	for _, w := range []string{
		"[state_store] default_retention_days: must not be negative, got -1",
		"[state_store] state_cleanup_batch_size: must not be negative, got -5",
		"[state_store] asset_state_orphan_retention_days: must not be negative, got -2",
		"[state_store] max_value_bytes: must be at least 1, got 0",
		"[state_store] cleanup_interval: must not be negative",
		`[state_store] backend: state backend name "redis://cache": want a letter`,
		`[workers] state_backend: invalid input: object store URL "ftp://host/state" has unsupported scheme "ftp"`,
		"[state_store] object_grace: must be at least 1m, got 10s",
		"[workers] state_sweep_interval: must be at least 1s, got 0s",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v does not say %q", err, w)
		}
	}
	if _, err := Load(t.TempDir(), []string{"WEIR__STATE_STORE__DEFAULT_RETENTION_DAYS=7d"}); err == nil ||
		!strings.Contains(err.Error(), "default_retention_days") {
		t.Errorf("a non-integer day count: %v", err)
	}
}

// docs/requirements.md#be-2, #cfg-1: [workers] state_backend takes an object-store URL,
// checked at start without creating the directory or contacting a server;
// a bad one is refused with the option named and the secret hidden.
func TestWorkersStateBackend(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	for _, url := range []string{"file://" + dir, "s3://bucket/prefix?endpoint=http://127.0.0.1:1&region=us-east-1"} {
		cfg, err := Load(t.TempDir(), []string{"WEIR__WORKERS__STATE_BACKEND=" + url})
		if err != nil || cfg.Workers.StateBackend != url {
			t.Errorf("state_backend %s: %v (got %q)", url, err, cfg.Workers.StateBackend)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("validating a file:// backend created %s (%v)", dir, err)
	}
	for url, want := range map[string]string{
		"file:relative":                   "needs an absolute path",
		"s3://KEY:hunter22@bucket?bad=1":  `unknown parameter "bad"`,
		"/var/lib/weir/state":             "has no scheme",
		"s3://Bad_Bucket/x?region=r":      "bucket name",
		"file://remote-host/var/lib/weir": "must be local",
	} {
		_, err := Load(t.TempDir(), []string{"WEIR__WORKERS__STATE_BACKEND=" + url})
		if err == nil || !strings.Contains(err.Error(), "[workers] state_backend") || !strings.Contains(err.Error(), want) ||
			strings.Contains(err.Error(), "hunter22") {
			t.Errorf("state_backend %s: error %v, want one naming the option and saying %q without the secret", url, err, want)
		}
	}
}

// docs/state-backends.md#custom-backends-in-go: [state_store] backend (or
// [workers] state_backend, or Airflow's state_store_backend) may name a
// custom backend; the workers take it from [workers] state_backend. A name
// of the wrong form, "metastore" as a worker backend, or two keys naming
// different backends are refused with the keys named.
func TestCustomStateBackendConfig(t *testing.T) {
	t.Parallel()
	for _, env := range [][]string{
		{"WEIR__STATE_STORE__BACKEND=journal"},
		{"WEIR__WORKERS__STATE_BACKEND=journal"},
		{"WEIR__WORKERS__STATE_STORE_BACKEND=journal"},
		{"WEIR__STATE_STORE__BACKEND=journal", "WEIR__WORKERS__STATE_STORE_BACKEND=journal"},
	} {
		cfg, err := Load(t.TempDir(), env)
		if err != nil || cfg.Workers.StateBackend != "journal" {
			t.Errorf("%v: %v, workers take %q; want journal", env, err, cfg.Workers.StateBackend)
		}
	}
	for want, env := range map[string][]string{
		`[state_store] backend "journal" and [workers] state_backend "file:///tmp/s" differ`: {
			"WEIR__STATE_STORE__BACKEND=journal", "WEIR__WORKERS__STATE_BACKEND=file:///tmp/s"},
		`[state_store] backend: state backend name "9lives": want a letter`: {"WEIR__STATE_STORE__BACKEND=9lives"},
		`[workers] state_backend: state backend name "metastore" is the built-in default`: {
			"WEIR__WORKERS__STATE_BACKEND=metastore"},
	} {
		if _, err := Load(t.TempDir(), env); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v, want %q", env, err, want)
		}
	}
}
