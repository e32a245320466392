package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A home created with the database in the environment does not write a
// SQLite conn into weir.toml: without the variable the file says nothing
// about the database, with it the variable is the only source (issue 15,
// configuration correctness).
func TestInitHomeLeavesEnvironmentOptionsOut(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := []string{"WEIR__DATABASE__CONN=postgres://weir:hunter2@db:5432/weir", "WEIR__API__PORT=9111"}
	if err := InitHome(home, env, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(home, FileName))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, bad := range []string{"conn = \"sqlite", "hunter2", "port = 8080"} {
		if strings.Contains(text, bad) {
			t.Errorf("weir.toml created under %v contains %q:\n%s", env, bad, text)
		}
	}
	if !strings.Contains(text, "WEIR__DATABASE__CONN set it") {
		t.Errorf("weir.toml does not say where the database comes from:\n%s", text)
	}
	cfg, err := Load(home, env)
	if err != nil {
		t.Fatalf("load the home with its environment: %v", err)
	}
	if cfg.Database.Conn != "postgres://weir:hunter2@db:5432/weir" || cfg.API.Port != 9111 {
		t.Errorf("conn = %s, port = %d: the environment's values", cfg.Database.Conn, cfg.API.Port)
	}
	// Without the variable the home is refused, saying what to load: it
	// used to open (and `weir db migrate` to create) a new SQLite database.
	// (A command that opens no database, a worker, loads it as before.)
	cfg, err = Load(home, []string{"WEIR__API__PORT=9111"})
	if err != nil {
		t.Fatalf("loading the home without its database variable: %v", err)
	}
	if err := cfg.DatabaseForgottenError(); err == nil || !strings.Contains(err.Error(), "WEIR__DATABASE__CONN set it, and it is not set now") ||
		!strings.Contains(err.Error(), "weir.env") {
		t.Errorf("opening the database of the home without its variable: %v; want an error naming the variable", err)
	}
	if cfg, err := Load(home, env); err != nil || cfg.DatabaseForgottenError() != nil {
		t.Errorf("the home with its variable: %v, %v", err, cfg.DatabaseForgottenError())
	}
}

// A home whose weir.toml names one database and whose environment names
// another is refused, naming both (passwords hidden); equal values are fine.
func TestLoadRefusesTwoDatabases(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := InitHome(home, nil, nil); err != nil {
		t.Fatal(err)
	}
	sqliteConn := "sqlite:///" + filepath.Join(home, "weir.db")
	_, err := Load(home, []string{"WEIR__DATABASE__CONN=postgres://weir:hunter2@db/weir"})
	if err == nil {
		t.Fatal("a home whose file and environment name different databases loaded")
	}
	for _, want := range []string{FileName, sqliteConn, "WEIR__DATABASE__CONN", "postgres://weir:***@db/weir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error shows the password: %v", err)
	}
	if _, err := Load(home, []string{"WEIR__DATABASE__CONN=" + sqliteConn}); err != nil {
		t.Errorf("the same database in file and environment: %v", err)
	}
}

// Persist replaces an option's line in place, adds a missing one to its
// section (or the section itself), keeps comments, and refuses a bad value
// without touching the file.
func TestPersist(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	file := "# mine\n[core]\n# the folder\ndags_folder = \"/old\"\n\n[api]\nhost = \"0.0.0.0\"\n\n[workers]\nconcurrency = 3\n"
	path := filepath.Join(home, FileName)
	if err := os.WriteFile(path, []byte(file), 0o640); err != nil {
		t.Fatal(err)
	}
	err := Persist(home, []Setting{
		{"core", "dags_folder", "/new/dags"}, {"api", "port", "9090"}, {"logging", "level", "debug"},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := "# mine\n[core]\n# the folder\ndags_folder = \"/new/dags\"\n\n[api]\nhost = \"0.0.0.0\"\nport = 9090\n\n" +
		"[workers]\nconcurrency = 3\n\n[logging]\nlevel = \"debug\"\n"
	if string(b) != want {
		t.Errorf("weir.toml after Persist:\n%s\nwant:\n%s", b, want)
	}
	cfg, err := Load(home, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Core.DagsFolder != "/new/dags" || cfg.API.Port != 9090 || cfg.Workers.Concurrency != 3 {
		t.Errorf("loaded %s %d %d", cfg.Core.DagsFolder, cfg.API.Port, cfg.Workers.Concurrency)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's own 0640", fi.Mode().Perm())
	}

	err = Persist(home, []Setting{{"core", "dags_folder", "/x"}, {"api", "port", "eighty"}})
	if err == nil || !strings.Contains(err.Error(), "[api] port") {
		t.Fatalf("bad port: err = %v, want one naming [api] port", err)
	}
	if after, _ := os.ReadFile(path); string(after) != want {
		t.Errorf("a refused Persist changed the file:\n%s", after)
	}
}

// [workers] state_store_backend is Airflow's name of state_backend: either
// sets the backend, and the two set differently are refused.
func TestStateStoreBackendIsAirflowsName(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	cfg, err := Load(home, []string{"WEIR__WORKERS__STATE_STORE_BACKEND=file:///var/weir/state"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Workers.StateBackend != "file:///var/weir/state" {
		t.Errorf("state_backend = %q, want the state_store_backend value", cfg.Workers.StateBackend)
	}
	_, err = Load(home, []string{"WEIR__WORKERS__STATE_STORE_BACKEND=file:///a", "WEIR__WORKERS__STATE_BACKEND=file:///b"})
	if err == nil || !strings.Contains(err.Error(), "state_store_backend") || !strings.Contains(err.Error(), "file:///b") {
		t.Errorf("two different backends: err = %v, want one naming both", err)
	}
}
