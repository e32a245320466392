package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadLayers(t *testing.T) {
	home := t.TempDir()
	if err := InitHome(home, nil, nil); err != nil {
		t.Fatal(err)
	}
	// The generated file loads back to the defaults.
	cfg, err := Load(home, nil)
	if err != nil {
		t.Fatalf("load generated weir.toml: %v", err)
	}
	if got, want := cfg.Workers.HeartbeatInterval.D(), 5*time.Second; got != want {
		t.Errorf("heartbeat_interval = %v, want %v", got, want)
	}
	if !cfg.Workers.SpareShells {
		t.Error("spare_shells = false by default, want true")
	}
	// File over defaults, env over file.
	file := "[workers]\nconcurrency = 4\nqueues = [\"a\", \"b\"]\n[api]\nport = 9000\n"
	if err := os.WriteFile(filepath.Join(home, FileName), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err = Load(home, []string{"WEIR__API__PORT=9100", "WEIR_CONN_MY_DB=postgres://u:s3cr3tpw@h/db", "HOME=/x",
		"WEIR__DATABASE__CONN=postgres://weir:s3cr3tpw@db/weir", "WEIR__WORKERS__SPARE_SHELLS=false"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Workers.SpareShells {
		t.Error("WEIR__WORKERS__SPARE_SHELLS=false left spare_shells on")
	}
	if cfg.Workers.Concurrency != 4 || cfg.API.Port != 9100 || strings.Join(cfg.Workers.Queues, ",") != "a,b" {
		t.Errorf("layers not applied: concurrency=%d port=%d queues=%v", cfg.Workers.Concurrency, cfg.API.Port, cfg.Workers.Queues)
	}
	if cfg.Connections["my_db"] != "postgres://u:s3cr3tpw@h/db" {
		t.Errorf("connection from env = %q", cfg.Connections["my_db"])
	}
	for _, o := range cfg.List() {
		if strings.Contains(o.Value, "s3cr3tpw") {
			t.Errorf("config list leaks a password: %s.%s = %s", o.Section, o.Key, o.Value)
		}
	}
}

func TestLoadRejectsBadInput(t *testing.T) {
	cases := map[string]struct {
		file string
		env  []string
		want []string
	}{
		"unknown option": {file: "[workers]\nconcurency = 3\n", want: []string{`line 2: unknown option workers.concurency (did you mean "concurrency"?)`}},
		"number for a duration": {file: "[scheduler]\npoll_interval = 5\n",
			want: []string{"line 2", "scheduler.poll_interval", "5 is not a duration"}},
		"duration without a unit": {file: "[workers]\nshutdown_grace_period = \"30\"\n",
			want: []string{"workers.shutdown_grace_period", `"30" is not a duration`}},
		"string for a number": {file: "[api]\nport = \"http\"\n", want: []string{"line 2", "api.port: want an integer, not a TOML string"}},
		"every problem of the file and the environment at once": {
			file: "[logging]\nlog_retention = \"30d\"\nlog_retension = \"1h\"\n[api]\nport = \"8080x\"\n[scheduler]\nparallelism = 32\n",
			env:  []string{"WEIR__WORKERS__CONCURRENCY=x"},
			want: []string{`line 2, column 17, logging.log_retention: "30d" is not a duration`, "line 5, column 8, api.port: want an integer",
				`line 3: unknown option logging.log_retension (did you mean "log_retention"?)`, "line 7: unknown option scheduler.parallelism",
				"WEIR__WORKERS__CONCURRENCY"}},
		"an unknown section among bad values": {file: "[metric]\nport = 9\n[api]\nport = \"x\"\n",
			want: []string{`line 1: unknown section [metric] (did you mean [metrics]?)`, "line 4, column 8, api.port: want an integer"}},
		"an option before any section": {file: "port = 8080\n[api]\nhost = \"0.0.0.0\"\n",
			want: []string{"line 1: option port is outside any section (it is [api]'s: write it under that header)"}},
		"a value over lines":      {file: "[api]\nport = \"x\"\ntrusted_proxies = [\n  \"10.0.0.0/8\",\n]\n", want: []string{"api.port: want an integer"}},
		"a table header in error": {file: "[api]\nport = 1\n[[workers]]\nconcurrency = 2\n", want: []string{"line 3", "workers"}},
		"one underscore after WEIR": {env: []string{"WEIR_DATABASE__CONN=postgres://h/db", "WEIR_PARAM___X=1"},
			want: []string{"environment variable WEIR_DATABASE__CONN: an option is WEIR__SECTION__KEY, with two underscores after WEIR (WEIR__DATABASE__CONN)"}},
		"syntax error":     {file: "[api]\nport = \n", want: []string{"line 2"}},
		"bare number":      {env: []string{"WEIR__WORKERS__HEARTBEAT_INTERVAL=5"}, want: []string{"heartbeat_interval", `"5" is not a duration`}},
		"bad int":          {env: []string{"WEIR__API__PORT=http"}, want: []string{"[api] port", "not an integer"}},
		"unknown section":  {env: []string{"WEIR__NOPE__X=1"}, want: []string{"unknown section [nope]"}},
		"bad database":     {env: []string{"WEIR__DATABASE__CONN=mysql://x"}, want: []string{"[database] conn"}},
		"several problems": {env: []string{"WEIR__WORKERS__CONCURRENCY=0", "WEIR__LOGGING__LEVEL=loud"}, want: []string{"concurrency", "[logging] level"}},
		"negative grace":   {env: []string{"WEIR__WORKERS__SHUTDOWN_GRACE_PERIOD=-1s"}, want: []string{"shutdown_grace_period"}},
		"no max_map_length": {env: []string{"WEIR__SCHEDULER__MAX_MAP_LENGTH=0"},
			want: []string{"[scheduler] max_map_length: must be between 1 and 10000000, got 0"}},
		"bad log store": {env: []string{"WEIR__LOGGING__LOG_STORE=s3"},
			want: []string{"[logging] log_store", `"s3" is not one of folder, database`}},
		"relative remote log folder": {env: []string{"WEIR__LOGGING__LOG_STORE=database", "WEIR__LOGGING__REMOTE_BASE_LOG_FOLDER=logs/shared"},
			want: []string{"[logging] remote_base_log_folder", `"logs/shared" is neither an s3://bucket/prefix URL nor an absolute path`}},
		"remote logs without the database": {env: []string{"WEIR__LOGGING__REMOTE_BASE_LOG_FOLDER=s3://weir-logs/prod", "WEIR__LOGGING__LOG_STORE=folder"},
			want: []string{"[logging] remote_base_log_folder needs log_store = database", `got "folder"`}},
		"short job retention": {env: []string{"WEIR__CORE__JOB_RETENTION=1m"},
			want: []string{"[core] job_retention", "1m", "shorter than the minimum 10m"}},
		"bad end grouping": {env: []string{"WEIR__DATABASE__GROUP_TRY_ENDS=yes"},
			want: []string{"[database] group_try_ends", `"yes" is not one of auto, always, never`}},
		"small pool": {env: []string{"WEIR__DATABASE__POOL_SIZE=2"},
			want: []string{"[database] pool_size", "2 is below the minimum 4"}},
		"bad trusted proxy": {file: "[api]\ntrusted_proxies = [\"10.0.0.0/8\", \"proxy.local\"]\n",
			want: []string{"[api] trusted_proxies", `"proxy.local"`, "CIDR"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			if tc.file != "" {
				if err := os.WriteFile(filepath.Join(home, FileName), []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(home, tc.env)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// A weir.toml saved with a byte-order mark (as some editors write it) reads
// as without.
func TestLoadReadsAFileWithAByteOrderMark(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, FileName), []byte("\ufeff[api]\nport = 9001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(home, nil)
	if err != nil || cfg.API.Port != 9001 {
		t.Fatalf("Load: port %v (%v), want 9001", cfg, err)
	}
}

func TestSecretCreatedOnceWithPrivatePermissions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets", "jwt")
	a, err := Secret(path, 32)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Secret(path, 32)
	if err != nil || a != b || len(a) != 64 {
		t.Fatalf("second read = %q, %v; want the same 64-hex secret %q", b, err, a)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("secret permissions = %o, want 600", perm)
	}
}

func TestDatabaseParse(t *testing.T) {
	engine, target, err := Database{Conn: "sqlite:////tmp/w.db"}.Parse()
	if err != nil || engine != "sqlite" || target != "/tmp/w.db" {
		t.Errorf("sqlite parse = %q %q %v", engine, target, err)
	}
	engine, _, err = Database{Conn: "postgres://u@h/db"}.Parse()
	if err != nil || engine != "postgres" {
		t.Errorf("postgres parse = %q %v", engine, err)
	}
}
