package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/weirflow/weir/internal/secrets"
)

// HomeMode is the permission of $WEIR_HOME: it holds the database, the
// secrets folder and task logs, so only its owner may enter it.
const HomeMode fs.FileMode = 0o700

// InitHome creates $WEIR_HOME (HomeMode) with a commented weir.toml of
// defaults, the dags and logs folders and the secrets folder, leaving
// existing files alone. An option that environ sets (WEIR__SECTION__KEY) is
// not written, only named in a comment, so the file never contradicts the
// environment that created it (a PostgreSQL conn in the environment does not
// become a SQLite conn in the file). An existing home or secrets folder that
// others may enter is tightened, and log (nil = discard) says so.
func InitHome(home string, environ []string, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := ownerOnlyDir(home, log); err != nil {
		return err
	}
	cfg := Defaults(home)
	for _, dir := range []string{cfg.Core.DagsFolder, cfg.Logging.BaseLogFolder} {
		if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // inside the 0700 home; DAG folders elsewhere are shareable like a project folder
			return fmt.Errorf("create %s: %w", dir, err)
		}
	}
	if err := ownerOnlyDir(filepath.Join(home, "secrets"), log); err != nil {
		return err
	}
	path := filepath.Join(home, FileName)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	return writeFileExcl(path, []byte(cfg.TOML(envOptions(environ))), 0o644)
}

// ownerOnlyDir creates dir with HomeMode, or tightens an existing one that
// group or others may read or enter.
func ownerOnlyDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, HomeMode); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return secrets.Tighten(dir, HomeMode, log)
}

// notWrittenLine is the comment TOML writes for an option the environment
// set (the option's key, the variable); notWrittenBy reads it back.
const notWrittenLine = "# %s is not written here: %s set it when this file was created"

// notWrittenBy returns the variable that set option key of section when
// the weir.toml b was written (its notWrittenLine), or "".
func notWrittenBy(b []byte, section, key string) string {
	in := ""
	prefix := fmt.Sprintf("# %s is not written here: ", key)
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			in = strings.Trim(line, "[] ")
		}
		if rest, ok := strings.CutPrefix(line, prefix); ok && in == section {
			name, _, _ := strings.Cut(rest, " ")
			return name
		}
	}
	return ""
}

// TOML renders the configuration as a commented weir.toml. An option in
// fromEnv (section.key → the variable that sets it) is named in a comment
// instead of written.
func (c *Config) TOML(fromEnv map[string]string) string {
	var b strings.Builder
	b.WriteString("# Weir configuration. Every option can be overridden by WEIR__SECTION__KEY.\n")
	section := ""
	for _, o := range c.List() {
		if o.Section == "connections" {
			continue
		}
		if o.Section != section {
			section = o.Section
			fmt.Fprintf(&b, "\n[%s]\n", section)
		}
		if o.Help != "" {
			fmt.Fprintf(&b, "# %s\n", o.Help)
		}
		if name, ok := fromEnv[o.Section+"."+o.Key]; ok {
			fmt.Fprintf(&b, notWrittenLine+"\n", o.Key, name)
			continue
		}
		f, _ := c.field(o.Section, o.Key)
		fmt.Fprintf(&b, "%s = %s\n", o.Key, tomlValue(f.Interface()))
	}
	b.WriteString("\n[connections]\n# my_db = \"postgres://user:pass@localhost:5432/db\"\n")
	return b.String()
}

func tomlValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case Duration:
		return fmt.Sprintf("%q", x.String())
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = fmt.Sprintf("%q", s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// Secret returns the content of a secret file, creating it with n random
// bytes (hex) and 0600 permissions when it does not exist.
func Secret(path string, n int) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			return s, nil
		}
		return "", fmt.Errorf("secret file %s is empty", path)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read secret %s: %w", path, err)
	}
	raw := make([]byte, n)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate secret: %w", err)
	}
	s := hex.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := writeFileExcl(path, []byte(s+"\n"), 0o600); err != nil {
		if errors.Is(err, fs.ErrExist) { // created concurrently: read the winner's
			return Secret(path, n)
		}
		return "", err
	}
	return s, nil
}

// ReplaceSecret replaces the content of a secret file atomically (0600):
// a crash leaves either the old or the new content, never half of one.
func ReplaceSecret(path, content string) error {
	return replaceFile(path, []byte(content), 0o600)
}

// replaceFile replaces path with data (perm) atomically: a crash leaves
// either the old or the new content.
func replaceFile(path string, data []byte, perm os.FileMode) error {
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeFileExcl creates path with data, failing if it exists; the data is
// written to a temporary file first so a crash never leaves half a file.
func writeFileExcl(path string, data []byte, perm os.FileMode) error {
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeTemp writes data with perm to a new temporary file beside path and
// returns its name.
func writeTemp(path string, data []byte, perm os.FileMode) (string, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp.Name()) // the write error is the one to report
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return tmp.Name(), nil
}

// TightenSecrets tightens what holds this configuration's secrets where
// group or others may read it — the home and its secrets folder (HomeMode),
// the key files of [core] secrets_key_file and [api_auth] (0600) — and
// logs each change; what is missing is left alone. Every role calls it at
// start, whatever its database. A mode it cannot change (a read-only
// secret volume) is logged, not fatal: the files are read all the same.
func (c *Config) TightenSecrets(log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tighten := func(path string, mode fs.FileMode) {
		if path == "" {
			return
		}
		if err := secrets.Tighten(path, mode, log); err != nil {
			log.Warn("others may read a secret Weir could not make private", "path", path, "err", err)
		}
	}
	if c.Home != "" {
		tighten(c.Home, HomeMode)
		tighten(filepath.Join(c.Home, "secrets"), HomeMode)
	}
	for _, f := range []string{c.Core.SecretsKeyFile, c.APIAuth.JWTSecretFile, c.APIAuth.SecretKeyFile} {
		tighten(f, 0o600)
	}
}
