// Package config loads Weir's configuration: defaults, then weir.toml, then
// WEIR__SECTION__KEY environment variables, then flags. Sections are named as
// Airflow's ([core], [database], [api], [scheduler], [workers], [logging]),
// so an Airflow user finds options where they expect them.
package config

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/suggest"
)

// FileName is the configuration file inside $WEIR_HOME.
const FileName = "weir.toml"

// Config is every option Weir reads. Packages receive the plain sections.
type Config struct {
	Core        Core              `toml:"core"`
	Database    Database          `toml:"database"`
	API         API               `toml:"api"`
	APIAuth     APIAuth           `toml:"api_auth"`
	Scheduler   Scheduler         `toml:"scheduler"`
	Workers     Workers           `toml:"workers"`
	Logging     Logging           `toml:"logging"`
	StateStore  StateStore        `toml:"state_store"`
	Connections map[string]string `toml:"connections"`

	// DagProcessor bounds the parsing of DAG files.
	DagProcessor DagProcessor `toml:"dag_processor"`
	// Triggerer configures the triggerer role.
	Triggerer Triggerer `toml:"triggerer"`
	// Callbacks configures how workers run callbacks.
	Callbacks Callbacks `toml:"callbacks"`
	// Metrics configures the Prometheus endpoint of roles without an
	// api-server.
	Metrics Metrics `toml:"metrics"`
	// Traces configures OpenTelemetry traces of task tries.
	Traces Traces `toml:"traces"`

	// Home is $WEIR_HOME; not read from the file.
	Home string `toml:"-"`
	// DatabaseForgotten, when set, names the variable that set [database]
	// conn when this home's weir.toml was written and that is not set now:
	// a command that opens the database refuses to (DatabaseForgottenError)
	// rather than open a new SQLite database beside the deployment's; one
	// that does not (a worker) is not concerned.
	DatabaseForgotten string `toml:"-"`
}

// Core holds general options.
type Core struct {
	DagsFolder              string `toml:"dags_folder" comment:"folder scanned for YAML DAG files"`
	DagsArePausedAtCreation bool   `toml:"dags_are_paused_at_creation" comment:"new DAGs start paused (as in Airflow); a DAG file's is_paused_upon_creation overrides it per DAG; dags test runs its DAG either way"`
	DefaultTimezone         string `toml:"default_timezone" comment:"IANA timezone for DAGs that name none (their cron schedules are evaluated in it)"`
	SecretsKeyFile          string `toml:"secrets_key_file" comment:"file of the AES-256 keys that encrypt connection URIs and variable values in the database, one hex key per line: the first encrypts, every one decrypts (created 0600 if missing; every node that opens the database needs the same file; weir connections rotate-key replaces the key)"`
	AllowAnyConnection      bool   `toml:"allow_any_connection" comment:"let a running task read any connection through the Execution API, as in Airflow; false: only the connections it declares (conn_id, http_conn_id or its connections list; docs/adr/0011-task-connection-access.md)"`
	// JobRetention is how long the job row of a silent process is kept.
	JobRetention Duration `toml:"job_retention" comment:"how long the job row (health listing entry) of a process that stopped heartbeating is kept before the scheduler deletes it (at least 10m; 0s = kept forever)"`
}

// MinPoolSize is the smallest [database] pool_size: a role runs several
// loops that each hold a connection at times.
const MinPoolSize = 4

// Database says where the metadata database lives.
type Database struct {
	Conn string `toml:"conn" comment:"sqlite:////absolute/path/weir.db (sqlite:/// then the path) or postgres://user:pass@host:5432/db"`
	// PoolSize bounds each process's PostgreSQL connection pool.
	PoolSize int `toml:"pool_size" comment:"PostgreSQL only: most connections one process (api-server, scheduler, triggerer, a CLI command) holds open to the database, besides one LISTEN connection; every process that opens the database must fit in the server's max_connections (at least 4; docs/deployment.md#pool-sizing)"`
	// GroupTryEnds says whether an api-server records the try ends that
	// arrive together in one transaction.
	GroupTryEnds string `toml:"group_try_ends" comment:"whether an api-server records the try ends that arrive together in one transaction (a group commit): auto (on SQLite always; on PostgreSQL when the database answers a ping within 100 µs at start-up, i.e. runs on the same machine), always or never (docs/adr/0037-try-ends-share-a-commit-on-a-near-postgresql.md)"`
}

// The settings of [database] group_try_ends.
const (
	GroupTryEndsAuto   = "auto"
	GroupTryEndsAlways = "always"
	GroupTryEndsNever  = "never"
)

// API configures the api-server.
type API struct {
	Host    string `toml:"host" comment:"address the api-server listens on: 127.0.0.1 (the default) serves this machine only; 0.0.0.0 (every interface) lets workers and users on other machines in, so set it only with TLS (tls_cert_file) or behind a TLS proxy and a firewall"`
	Port    int    `toml:"port" comment:"TCP port the api-server listens on (0 = any free port)"`
	BaseURL string `toml:"base_url" comment:"URL workers and the CLI use to reach the api-server (empty = http://host:port, https:// with tls_cert_file)"`
	// TLSCertFile and TLSKeyFile make the api-server serve HTTPS.
	TLSCertFile string `toml:"tls_cert_file" comment:"PEM certificate (chain) the api-server serves HTTPS with; set with tls_key_file, or leave both empty for plain HTTP (behind a TLS-terminating proxy, or on one machine)"`
	TLSKeyFile  string `toml:"tls_key_file" comment:"PEM private key of tls_cert_file"`
	// SecureCookie marks the session cookies Secure (sent over HTTPS only).
	SecureCookie bool `toml:"secure_cookie" comment:"mark the login session cookies Secure, sent over HTTPS only: set it when users reach the api-server through HTTPS (a TLS proxy); the UI also sets Secure by itself on a request that arrived over TLS"`
	// TrustedProxies are the reverse proxies whose X-Forwarded-Proto and
	// X-Forwarded-For headers are believed (auth.TrustedProxies).
	TrustedProxies []string `toml:"trusted_proxies" comment:"addresses or CIDR blocks of the reverse proxies in front of the api-server (e.g. [\"10.0.0.0/8\"]): from them only, X-Forwarded-Proto = https makes the login cookies Secure and X-Forwarded-For names the client the login throttle counts; empty = headers from anyone are ignored"`
}

// APIAuth configures tokens. The keys are shared secrets: every api-server
// must hold the same ones (docs/security.md#shared-keys-and-rotation).
type APIAuth struct {
	// JWTSecret is the inline form of JWTSecretFile's content; set, the file
	// is not read.
	JWTSecret     string `toml:"jwt_secret" secret:"true" comment:"keys that sign task and worker tokens, given inline (usually as WEIR__API_AUTH__JWT_SECRET): one or more keys of at least 32 characters separated by commas or new lines; the first signs, every one verifies. Must be the same on every api-server. Empty = read jwt_secret_file"`
	JWTSecretFile string `toml:"jwt_secret_file" comment:"file of the keys that sign task and worker tokens, one per line: the first signs, every one verifies (created 0600 with one key if missing; must hold the same keys on every api-server; weir keys rotates them)"`
	// SecretKey is the inline form of SecretKeyFile's content.
	SecretKey         string   `toml:"secret_key" secret:"true" comment:"keys that sign login sessions, given inline (usually as WEIR__API_AUTH__SECRET_KEY): one or more keys of at least 16 characters separated by commas or new lines; the first signs, every one verifies. Must be the same on every api-server. Empty = read secret_key_file"`
	SecretKeyFile     string   `toml:"secret_key_file" comment:"file of the keys that sign login sessions, one per line: the first signs, every one verifies (created 0600 with one key if missing; must hold the same keys on every api-server)"`
	JWTExpirationTime Duration `toml:"jwt_expiration_time" comment:"lifetime of a task try's token (refreshed while it runs)"`
}

// Scheduler configures the scheduler.
type Scheduler struct {
	PollInterval                 Duration `toml:"poll_interval" comment:"fallback poll when no notification arrives: the scheduler's, and on SQLite a waiting claim's (another process's changes notify only that process)"`
	DagDirListInterval           Duration `toml:"dag_dir_list_interval" comment:"how often the DAG folder is re-scanned"`
	TaskInstanceHeartbeatTimeout Duration `toml:"task_instance_heartbeat_timeout" comment:"a running task without a heartbeat this long is failed (and retried)"`
	MaxDagrunsToCreatePerLoop    int      `toml:"max_dagruns_to_create_per_loop" comment:"most scheduled DAG runs one scheduler pass creates, across all DAGs"`
	AllowedRunIDPattern          string   `toml:"allowed_run_id_pattern" comment:"regular expression every run id chosen by a trigger (REST, CLI) must match; generated ids such as manual__2026-01-02T03:04:05Z are always allowed"`
	CreateCronDataIntervals      bool     `toml:"create_cron_data_intervals" comment:"a cron schedule of a DAG that names no timetable gets CronDataIntervalTimetable (true: a run covers the interval between fire times and starts once it has ended, its logical date the interval's start) or CronTriggerTimetable (false, Airflow 3's default: a run starts at each fire time, its logical date); docs/dag-files.md#schedules"`
	MaxMapLength                 int      `toml:"max_map_length" comment:"most instances one mapped task gets (Airflow's [core] max_map_length): an expand over more fails the task; an iterate expansion whose stream grows past it runs its first max_map_length items, then fails the task and stops its producer (docs/streaming.md#the-cap-on-an-expansion)"`
}

// RunIDRegexp compiles AllowedRunIDPattern.
func (s *Scheduler) RunIDRegexp() (*regexp.Regexp, error) {
	re, err := regexp.Compile(s.AllowedRunIDPattern)
	if err != nil {
		return nil, fmt.Errorf("[scheduler] allowed_run_id_pattern: %w", err)
	}
	return re, nil
}

// Workers configures workers.
type Workers struct {
	Concurrency         int      `toml:"concurrency" comment:"task instances one worker runs at once"`
	Queues              []string `toml:"queues" comment:"queues a worker claims task instances from"`
	HeartbeatInterval   Duration `toml:"heartbeat_interval" comment:"how often a worker heartbeats, as a worker and for each running task instance; a worker silent for two intervals has its tries failed over (api-servers beat every half interval)"`
	ShutdownGracePeriod Duration `toml:"shutdown_grace_period" comment:"on shutdown, running tasks get this long before they are stopped and retried (at once, without spending one of their retries)"`
	SpareShells         bool     `toml:"spare_shells" comment:"keep up to two bash shells started ahead of the next bash tries, so that a try does not wait for bash to start (docs/adr/0036-bash-tries-run-in-shells-started-ahead.md); false = each try starts its own"`
	TLSCAFile           string   `toml:"tls_ca_file" comment:"PEM file of the CA certificate(s) that signed the api-servers' certificates, trusted besides the system roots when workers (and their tasks' weir commands) reach an https api-server; empty = the system roots only"`
	StateBackend        string   `toml:"state_backend" comment:"worker-side backend for task and asset state (docs/state-backends.md): empty = values in the database; file:///path or s3://bucket/prefix?endpoint=URL = values in that store, only a reference in the database (S3 credentials from the URL or AWS_* variables); or the name of a backend the program registers with weir.WithStateBackend"`
	StateSweepInterval  Duration `toml:"state_sweep_interval" comment:"with state_backend: how often a worker deletes the objects of state that was removed, overwritten or never stored (docs/state-backends.md#sweeping)"`
	// StateStoreBackend is Airflow 3.3's name of StateBackend; Validate
	// makes the two equal (setting both to different values is an error).
	StateStoreBackend string `toml:"state_store_backend" comment:"Airflow's name of state_backend (either may be set; both to different values is an error)"`
}

// StateStore configures task state (the task store of AIP-103; docs/task-state.md).
type StateStore struct {
	Backend                       string   `toml:"backend" comment:"where task and asset state values are kept: metastore (Weir's database), or the name of a backend the program registers with weir.WithStateBackend (the workers run it; the same as [workers] state_backend = name)"`
	DefaultRetentionDays          int      `toml:"default_retention_days" comment:"a key written without a retention expires this many days after the write (0 = no expiry); changing it leaves written keys alone"`
	ClearOnSuccess                bool     `toml:"clear_on_success" comment:"delete a task instance's task state when it succeeds"`
	StateCleanupBatchSize         int      `toml:"state_cleanup_batch_size" comment:"rows one cleanup statement deletes, with a commit per batch (0 = all in one statement)"`
	MaxValueBytes                 int      `toml:"max_value_bytes" comment:"largest task state value, in bytes of compact JSON; larger writes are refused (HTTP 413)"`
	AssetStateOrphanRetentionDays int      `toml:"asset_state_orphan_retention_days" comment:"days the state of an asset no DAG defines any more (inactive) is kept before cleanup removes it (0 = never removed)"`
	AllowUndeclaredAssetReads     bool     `toml:"allow_undeclared_asset_reads" comment:"let any running task read the state of any asset, not only the assets it declares as inlets or outlets (trusted deployments; writes always need the declaration)"`
	CleanupInterval               Duration `toml:"cleanup_interval" comment:"how often the scheduler runs task state cleanup (0s = never; run weir state-store cleanup-task-store instead)"`
	ObjectGrace                   Duration `toml:"object_grace" comment:"with [workers] state_backend: how long a worker has to store the reference of an object it wrote before the sweep removes the object"`
}

// Metrics configures where a process serves its Prometheus metrics.
type Metrics struct {
	Listen string `toml:"listen" comment:"address (host:port) where a scheduler, triggerer or worker serves GET /metrics (Prometheus); empty = not served. The api-server always serves /metrics on its own port (and, in one process such as standalone, every role's series)"`
}

// Traces configures where a process exports OpenTelemetry traces.
type Traces struct {
	OTLPEndpoint string `toml:"otlp_endpoint" comment:"OTLP/HTTP (protobuf) traces URL of an OpenTelemetry collector, e.g. http://collector:4318/v1/traces: api-servers then export each task try's life (queued, running, deferred, finished, retried) and schedulers each run's as spans, one trace per DAG run (docs/tracing.md). Empty = OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces; none of them = no traces. Headers, timeout, compression and certificates come from the standard OTEL_EXPORTER_OTLP_* variables (docs/tracing.md)"`
}

// Logging configures task logs.
type Logging struct {
	BaseLogFolder string `toml:"base_log_folder" comment:"with log_store = folder: the folder of task logs (one file per try), kept and served by the api-server; with database, the logs stored there before are still read"`
	// LogStore says where api-servers keep the task logs workers ship.
	// LogRetention is how long task logs kept in the database are kept.
	LogRetention Duration `toml:"log_retention" comment:"with log_store = database: how long after its last line a try's log is kept before the scheduler deletes it (never while the try runs); with remote_base_log_folder: how long after its upload (0s = kept forever)"`
	LogStore     string   `toml:"log_store" comment:"where api-servers keep the task logs workers ship: database (chunks in the metadata database: every api-server and the CLI read every try's log, live and after; no file made per try) or folder (a file per try under base_log_folder; several api-servers must share it) (docs/deployment.md#task-logs)"`
	// RemoteBaseLogFolder is where ended tries' logs are stored whole.
	RemoteBaseLogFolder string `toml:"remote_base_log_folder" comment:"where each try's whole log is stored once the try has ended: an s3://bucket/prefix URL (?endpoint=, credentials as [workers] state_backend takes them) or the absolute path of a folder every api-server and scheduler shares; needs log_store = database, which holds the log while the try runs. Empty = none (docs/deployment.md#task-logs)"`
	Level               string `toml:"level" comment:"level of Weir's own process logs: debug, info, warn or error"`
}

// The places [logging] log_store names.
const (
	LogStoreFolder   = "folder"
	LogStoreDatabase = "database"
)

// Defaults returns the configuration for a home directory before any file
// or environment is read.
func Defaults(home string) *Config {
	return &Config{
		Home: home,
		Core: Core{DagsFolder: filepath.Join(home, "dags"), DagsArePausedAtCreation: true, DefaultTimezone: "UTC", SecretsKeyFile: filepath.Join(home, "secrets", "connections_key"),
			JobRetention: Duration(time.Hour)},
		Database: Database{Conn: "sqlite:///" + filepath.Join(home, "weir.db"), PoolSize: 16, GroupTryEnds: GroupTryEndsAuto},
		API:      API{Host: "127.0.0.1", Port: 8080},
		APIAuth: APIAuth{
			JWTSecretFile:     filepath.Join(home, "secrets", "jwt_secret"),
			SecretKeyFile:     filepath.Join(home, "secrets", "secret_key"),
			JWTExpirationTime: Duration(10 * time.Minute),
		},
		Scheduler: Scheduler{
			PollInterval:                 Duration(2 * time.Second),
			DagDirListInterval:           Duration(5 * time.Second),
			TaskInstanceHeartbeatTimeout: Duration(5 * time.Minute),
			MaxDagrunsToCreatePerLoop:    10,
			MaxMapLength:                 1024,
			CreateCronDataIntervals:      true,
			AllowedRunIDPattern:          core.DefaultRunIDPattern,
		},
		Workers: Workers{
			Concurrency:         16,
			Queues:              []string{"default"},
			HeartbeatInterval:   Duration(5 * time.Second),
			ShutdownGracePeriod: Duration(30 * time.Second),
			SpareShells:         true,
			StateSweepInterval:  Duration(30 * time.Second),
		},
		Logging: Logging{BaseLogFolder: filepath.Join(home, "logs"), Level: "info", LogStore: LogStoreDatabase,
			LogRetention: Duration(30 * 24 * time.Hour)},
		StateStore:  defaultStateStore(),
		Connections: map[string]string{},

		DagProcessor: defaultDagProcessor(),
		Triggerer:    defaultTriggerer(),
		Callbacks:    defaultCallbacks(),
	}
}

// Load reads $home/weir.toml (if present) over the defaults, then applies
// the environment (WEIR__SECTION__KEY, and WEIR_CONN_<ID> connections), and
// validates the result.
func Load(home string, environ []string) (*Config, error) {
	cfg := Defaults(home)
	path := filepath.Join(home, FileName)
	var fileConn string // [database] conn as the file says it, "" = not set there
	var connVar string  // the variable that set [database] conn when the file was written, "" = none
	var fileErr error   // reported with the environment's problems: every problem at once
	if b, err := os.ReadFile(path); err == nil {
		if fileConn, err = decodeFile(b, cfg); err != nil {
			fileErr = fmt.Errorf("read %s: %w", path, err)
		}
		connVar = notWrittenBy(b, "database", "conn")
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := errors.Join(fileErr, cfg.applyEnv(environ)); err != nil {
		return nil, err
	}
	if err := databaseAgrees(path, fileConn, environ); err != nil {
		return nil, err
	}
	if _, set := envOptions(environ)["database.conn"]; connVar != "" && fileConn == "" && !set {
		cfg.DatabaseForgotten = connVar
	}
	cfg.Home = home
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// DatabaseForgottenError is why a command may not open this home's
// database, or nil (DatabaseForgotten).
func (c *Config) DatabaseForgottenError() error {
	if c.DatabaseForgotten == "" {
		return nil
	}
	return fmt.Errorf("[database] conn is not set: %s was written while %s set it, and it is not set now; "+
		"load the environment that sets it (weir.env: docs/deployment.md), or write conn in the file",
		filepath.Join(c.Home, FileName), c.DatabaseForgotten)
}

// decodeFile decodes a weir.toml over cfg and returns its [database] conn
// ("" = not set there). Every problem is reported at once, each naming its
// option and line: a value of the wrong type (its line is left out and the
// rest decoded again), then the options the configuration does not have.
// A syntax error stops the reading where it is.
func decodeFile(b []byte, cfg *Config) (conn string, err error) {
	b = bytes.TrimPrefix(b, []byte("\ufeff")) // a byte-order mark, as some editors write
	var problems []error
	for doc := b; ; {
		err := decodeStrict(doc, cfg)
		var strict *toml.StrictMissingError
		var de *toml.DecodeError
		switch {
		case err == nil:
		case errors.As(err, &strict):
			for i := range strict.Errors {
				problems = append(problems, unknownOption(&strict.Errors[i], doc))
			}
		case errors.As(err, &de) && len(de.Key()) > 0:
			row, col := de.Position()
			problems = append(problems, fmt.Errorf("line %d, column %d, %s: %s", row, col, strings.Join(de.Key(), "."), plainTOMLError(de)))
			if next, ok := withoutLine(doc, row); ok {
				doc = next
				continue
			}
		case errors.As(err, &de):
			row, col := de.Position()
			problems = append(problems, fmt.Errorf("line %d, column %d: %w", row, col, err))
		default:
			problems = append(problems, err)
		}
		break
	}
	if len(problems) > 0 {
		return "", errors.Join(problems...)
	}
	var set struct {
		Database struct {
			Conn *string `toml:"conn"`
		} `toml:"database"`
	}
	if err := toml.Unmarshal(b, &set); err != nil || set.Database.Conn == nil {
		return "", err
	}
	return *set.Database.Conn, nil
}

// decodeStrict decodes doc over cfg, refusing options cfg does not have.
func decodeStrict(doc []byte, cfg *Config) error {
	dec := toml.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	dec.EnableUnmarshalerInterface() // Duration's: a number is no duration
	return dec.Decode(cfg)
}

// withoutLine returns doc with line row (1-based) made a comment, so that
// the other lines keep their numbers; false when there is no such line or
// it is not a whole key and value (a table's header, a value spread over
// lines, which a comment would cut in two).
func withoutLine(doc []byte, row int) ([]byte, bool) {
	lines := bytes.SplitAfter(doc, []byte("\n"))
	if row < 1 || row > len(lines) || bytes.HasPrefix(bytes.TrimSpace(lines[row-1]), []byte("[")) ||
		toml.Unmarshal(lines[row-1], new(map[string]any)) != nil {
		return nil, false // a table's header: its keys would move to the table before
	}
	out := make([]byte, 0, len(doc)+1)
	for i, l := range lines {
		if i == row-1 {
			out = append(out, '#')
		}
		out = append(out, l...)
	}
	return out, true
}

// tomlTypeError is go-toml's message for a value of the wrong type, which
// names Go's types.
var tomlTypeError = sync.OnceValue(func() *regexp.Regexp { // compiled on a bad file only, not at every start
	return regexp.MustCompile(`cannot decode TOML (\w+) into struct field \S+ of type (\S+)`)
})

// plainTOMLError says what a decode error says in the words of weir.toml.
func plainTOMLError(de *toml.DecodeError) string {
	msg := strings.TrimPrefix(de.Error(), "toml: ")
	m := tomlTypeError().FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	want := map[string]string{"int": "an integer", "int64": "an integer", "bool": "true or false", "string": "a string",
		"[]string": "a list of strings", "float64": "a number"}[m[2]]
	if want == "" {
		return msg
	}
	return fmt.Sprintf("want %s, not a TOML %s", want, m[1])
}

// applyEnv overlays WEIR__SECTION__KEY variables and WEIR_CONN_<ID> URIs.
func (c *Config) applyEnv(environ []string) error {
	var errs []error
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if id, ok := strings.CutPrefix(name, "WEIR_CONN_"); ok && id != "" {
			c.Connections[strings.ToLower(id)] = value
			continue
		}
		rest, ok := strings.CutPrefix(name, "WEIR__")
		if !ok {
			if single, typo := strings.CutPrefix(name, "WEIR_"); typo {
				if sec, _, two := strings.Cut(single, "__"); two && sectionIndex(strings.ToLower(sec)) >= 0 {
					errs = append(errs, fmt.Errorf("environment variable %s: an option is WEIR__SECTION__KEY, with two underscores after WEIR (WEIR__%s)", name, single))
				}
			}
			continue
		}
		section, key, ok := strings.Cut(strings.ToLower(rest), "__")
		if !ok {
			errs = append(errs, fmt.Errorf("environment variable %s: want WEIR__SECTION__KEY", name))
			continue
		}
		if err := c.Set(section, key, value); err != nil {
			errs = append(errs, fmt.Errorf("environment variable %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// unknownOption names an option (or a section) of doc the configuration
// does not have, with its line and the known name it most likely meant.
func unknownOption(de *toml.DecodeError, doc []byte) error {
	key := de.Key()
	row, _ := de.Position()
	name := strings.Join(key, ".")
	switch {
	case len(key) == 1 && isTableHeader(doc, row):
		msg := fmt.Sprintf("line %d: unknown section [%s]", row, name)
		if best, ok := suggest.Closest(name, sectionKeys("")); ok {
			msg += fmt.Sprintf(" (did you mean [%s]?)", best)
		}
		return errors.New(msg)
	case len(key) == 1: // an option before any section's header
		msg := fmt.Sprintf("line %d: option %s is outside any section", row, name)
		if sec := sectionOf(name); sec != "" {
			msg += fmt.Sprintf(" (it is [%s]'s: write it under that header)", sec)
		}
		return errors.New(msg)
	}
	msg := fmt.Sprintf("line %d: unknown option %s", row, name)
	if sectionIndex(key[0]) < 0 {
		msg = fmt.Sprintf("line %d: unknown section [%s] (of option %s)", row, key[0], name)
	} else if best, ok := suggest.Closest(key[len(key)-1], sectionKeys(key[0])); ok && len(key) == 2 {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	}
	return errors.New(msg)
}

// isTableHeader reports whether line row (1-based) of doc is a [table]
// header.
func isTableHeader(doc []byte, row int) bool {
	lines := bytes.Split(doc, []byte("\n"))
	return row >= 1 && row <= len(lines) && bytes.HasPrefix(bytes.TrimSpace(lines[row-1]), []byte("["))
}

// sectionOf names the section that has option key ("" when none does).
func sectionOf(key string) string {
	for _, sec := range sectionKeys("") {
		if slices.Contains(sectionKeys(sec), key) {
			return sec
		}
	}
	return ""
}

// sectionKeys lists the options of section name, or with "" the sections.
func sectionKeys(name string) []string {
	t := reflect.TypeFor[Config]()
	if name != "" {
		t = t.Field(sectionIndex(name)).Type
	}
	var out []string
	for i := range t.NumField() {
		if k := t.Field(i).Tag.Get("toml"); k != "" && k != "-" && (name != "" || t.Field(i).Type.Kind() == reflect.Struct) {
			out = append(out, k)
		}
	}
	return out
}

// sectionIndex returns the index in Config of section name ([core],
// [database], ...), or -1 when there is none so named.
func sectionIndex(name string) int {
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("toml") == name && t.Field(i).Type.Kind() == reflect.Struct {
			return i
		}
	}
	return -1
}

// field finds the struct field for section.key.
func (c *Config) field(section, key string) (reflect.Value, error) {
	i := sectionIndex(section)
	if i < 0 {
		return reflect.Value{}, fmt.Errorf("unknown section [%s]", section)
	}
	sv := reflect.ValueOf(c).Elem().Field(i)
	st := sv.Type()
	for j := range st.NumField() {
		if st.Field(j).Tag.Get("toml") == key {
			return sv.Field(j), nil
		}
	}
	return reflect.Value{}, fmt.Errorf("unknown option %q in section [%s]", key, section)
}

// Set assigns one option from its text form (as in the environment).
func (c *Config) Set(section, key, value string) error {
	f, err := c.field(section, key)
	if err != nil {
		return err
	}
	if u, ok := f.Addr().Interface().(encoding.TextUnmarshaler); ok {
		if err := u.UnmarshalText([]byte(value)); err != nil {
			return fmt.Errorf("[%s] %s: %w", section, key, err)
		}
		return nil
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(value)
	case reflect.Int:
		n, err := strconv.Atoi(value)
		if err != nil {
			return fmt.Errorf("[%s] %s: %q is not an integer", section, key, value)
		}
		f.SetInt(int64(n))
	case reflect.Bool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("[%s] %s: %q is not true or false", section, key, value)
		}
		f.SetBool(b)
	case reflect.Slice:
		var parts []string
		for _, p := range strings.Split(value, ",") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		f.Set(reflect.ValueOf(parts))
	default:
		return fmt.Errorf("[%s] %s: cannot be set from text", section, key)
	}
	return nil
}

// Get returns one option's value in its text form.
func (c *Config) Get(section, key string) (string, error) {
	f, err := c.field(section, key)
	if err != nil {
		return "", err
	}
	return format(f), nil
}

func format(f reflect.Value) string {
	if m, ok := f.Interface().(encoding.TextMarshaler); ok {
		b, _ := m.MarshalText()
		return string(b)
	}
	if f.Kind() == reflect.Slice {
		parts := make([]string, f.Len())
		for i := range parts {
			parts[i] = fmt.Sprint(f.Index(i).Interface())
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(f.Interface())
}

// Option is one configuration entry, for `weir config list`.
type Option struct {
	Section, Key, Value, Help string
}

// List returns every option with its current value, sorted by section;
// a URI's password (a connection's, [database] conn's) is shown as ***.
func (c *Config) List() []Option {
	var out []Option
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		section := t.Field(i).Tag.Get("toml")
		if t.Field(i).Type.Kind() != reflect.Struct || section == "-" {
			continue
		}
		st := t.Field(i).Type
		for j := 0; j < st.NumField(); j++ {
			value := secrets.RedactURI(format(v.Field(i).Field(j)))
			if st.Field(j).Tag.Get("secret") == "true" && value != "" {
				value = "***"
			}
			out = append(out, Option{Section: section, Key: st.Field(j).Tag.Get("toml"),
				Value: value, Help: st.Field(j).Tag.Get("comment")})
		}
	}
	ids := make([]string, 0, len(c.Connections))
	for id := range c.Connections {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		out = append(out, Option{Section: "connections", Key: id, Value: secrets.RedactURI(c.Connections[id])})
	}
	return out
}
