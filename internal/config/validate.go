package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/secrets"
)

// maxMaxMapLength bounds [scheduler] max_map_length.
const maxMaxMapLength = 10_000_000

// Validate returns every problem at once, each naming the option at fault.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if _, _, err := c.Database.Parse(); err != nil {
		bad("[database] conn: %v", err)
	}
	if c.Database.PoolSize < MinPoolSize {
		bad("[database] pool_size: %d is below the minimum %d (a role runs several loops at once)", c.Database.PoolSize, MinPoolSize)
	}
	switch c.Database.GroupTryEnds {
	case GroupTryEndsAuto, GroupTryEndsAlways, GroupTryEndsNever:
	default:
		bad("[database] group_try_ends: %q is not one of %s, %s, %s", c.Database.GroupTryEnds, GroupTryEndsAuto, GroupTryEndsAlways, GroupTryEndsNever)
	}
	if c.API.Port < 0 || c.API.Port > 65535 {
		bad("[api] port: %d is not a TCP port (0-65535)", c.API.Port)
	}
	for _, k := range []struct {
		name, text string
		min        int
	}{{"[api_auth] jwt_secret", c.APIAuth.JWTSecret, MinJWTKeyLen}, {"[api_auth] secret_key", c.APIAuth.SecretKey, MinSessionKeyLen}} {
		if k.text == "" {
			continue
		}
		if _, err := SplitKeys(k.text, k.min); err != nil {
			bad("%s: %v", k.name, err)
		}
	}
	if _, err := auth.ParseTrustedProxies(c.API.TrustedProxies); err != nil {
		bad("[api] trusted_proxies: %v", err)
	}
	if (c.API.TLSCertFile == "") != (c.API.TLSKeyFile == "") {
		bad("[api] tls_cert_file and tls_key_file: set both (HTTPS) or neither (HTTP)")
	}
	if c.APIAuth.JWTExpirationTime.D() < time.Minute {
		bad("[api_auth] jwt_expiration_time: %s is shorter than the minimum 1m", c.APIAuth.JWTExpirationTime)
	}
	positive := map[string]Duration{
		"[scheduler] poll_interval":                   c.Scheduler.PollInterval,
		"[scheduler] dag_dir_list_interval":           c.Scheduler.DagDirListInterval,
		"[scheduler] task_instance_heartbeat_timeout": c.Scheduler.TaskInstanceHeartbeatTimeout,
		"[workers] heartbeat_interval":                c.Workers.HeartbeatInterval,
	}
	for name, d := range positive {
		if d <= 0 {
			bad("%s: must be a positive duration such as \"5s\", got %s", name, d)
		}
	}
	if r := c.Core.JobRetention.D(); r != 0 && r < job.MinRetention {
		bad("[core] job_retention: %s is shorter than the minimum %s (0s keeps rows forever)", c.Core.JobRetention, Duration(job.MinRetention))
	}
	if c.Workers.ShutdownGracePeriod < 0 {
		bad("[workers] shutdown_grace_period: must not be negative, got %s", c.Workers.ShutdownGracePeriod)
	}
	if c.Scheduler.TaskInstanceHeartbeatTimeout <= c.Workers.HeartbeatInterval {
		bad("[scheduler] task_instance_heartbeat_timeout (%s) must be longer than [workers] heartbeat_interval (%s)",
			c.Scheduler.TaskInstanceHeartbeatTimeout, c.Workers.HeartbeatInterval)
	}
	if c.Scheduler.MaxDagrunsToCreatePerLoop < 1 {
		bad("[scheduler] max_dagruns_to_create_per_loop: must be at least 1")
	}
	if c.Scheduler.MaxMapLength < 1 || c.Scheduler.MaxMapLength > maxMaxMapLength {
		bad("[scheduler] max_map_length: must be between 1 and %d, got %d", maxMaxMapLength, c.Scheduler.MaxMapLength)
	}
	if _, err := c.Scheduler.RunIDRegexp(); err != nil {
		errs = append(errs, err)
	}
	if c.Workers.Concurrency < 1 {
		bad("[workers] concurrency: must be at least 1, got %d", c.Workers.Concurrency)
	}
	if len(c.Workers.Queues) == 0 {
		bad("[workers] queues: name at least one queue")
	}
	if _, err := time.LoadLocation(c.Core.DefaultTimezone); err != nil {
		bad("[core] default_timezone: unknown timezone %q", c.Core.DefaultTimezone)
	}
	if c.Logging.LogRetention.D() < 0 {
		bad("[logging] log_retention: must not be negative, got %s", c.Logging.LogRetention)
	}
	if c.Logging.LogStore != LogStoreFolder && c.Logging.LogStore != LogStoreDatabase {
		bad("[logging] log_store: %q is not one of %s, %s", c.Logging.LogStore, LogStoreFolder, LogStoreDatabase)
	}
	if r := c.Logging.RemoteBaseLogFolder; r != "" {
		if _, err := objstore.Location(r); err != nil {
			bad("[logging] remote_base_log_folder: %v", err)
		} else if c.Logging.LogStore != LogStoreDatabase {
			bad("[logging] remote_base_log_folder needs log_store = %s (running tries' logs are kept there until they end), got %q",
				LogStoreDatabase, c.Logging.LogStore)
		}
	}
	switch c.Logging.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("[logging] level: %q is not one of debug, info, warn, error", c.Logging.Level)
	}
	errs = append(errs, c.validateStateStore()...)
	errs = append(errs, c.validateDagProcessor()...)
	errs = append(errs, c.validateTriggerer()...)
	errs = append(errs, c.validateCallbacks()...)
	for id, uri := range c.Connections {
		if _, err := url.Parse(uri); err != nil || !strings.Contains(uri, ":") {
			bad("[connections] %s: not a URI (want scheme://...)", id)
		}
	}
	return errors.Join(errs...)
}

// Parse splits the database setting into the engine ("sqlite" or
// "postgres") and what that engine's Open takes (a file path or a DSN).
func (d Database) Parse() (engine, target string, err error) {
	switch {
	case strings.HasPrefix(d.Conn, "sqlite:///"):
		return "sqlite", strings.TrimPrefix(d.Conn, "sqlite:///"), nil
	case strings.HasPrefix(d.Conn, "postgres://"), strings.HasPrefix(d.Conn, "postgresql://"):
		return "postgres", d.Conn, nil
	}
	return "", "", fmt.Errorf("%q: want sqlite:////absolute/path.db or postgres://user:pass@host:port/db", secrets.RedactURI(d.Conn))
}

// URL returns the api-server's base URL (explicit, or from host and port).
func (a API) URL() string {
	if a.BaseURL != "" {
		return strings.TrimRight(a.BaseURL, "/")
	}
	host := a.Host
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	scheme := "http"
	if a.TLSCertFile != "" {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s:%d", scheme, host, a.Port)
}
