package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/weirflow/weir/internal/secrets"
)

// Setting is one option to write into weir.toml, in its text form (as in
// the environment).
type Setting struct {
	Section, Key, Value string
}

// Persist writes settings into $home/weir.toml, so that every later command
// reading the home sees what a role was started with (`weir standalone
// --dags D --port P`). Each option's line is replaced in place, or added to
// its section; comments and every other line are kept. The file is replaced
// atomically. A setting that is not a valid option changes nothing.
func Persist(home string, settings []Setting) error {
	if len(settings) == 0 {
		return nil
	}
	path := filepath.Join(home, FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	check := Defaults(home)
	for _, s := range settings {
		if err := check.Set(s.Section, s.Key, s.Value); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		f, _ := check.field(s.Section, s.Key)
		lines = setLine(lines, s.Section, s.Key, fmt.Sprintf("%s = %s", s.Key, tomlValue(f.Interface())))
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return replaceFile(path, []byte(strings.Join(lines, "\n")+"\n"), fi.Mode().Perm())
}

var sectionLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[([^\[\]]+)\]\s*(#.*)?$`) })

// setLine replaces the line of section.key with line, or adds it at the end
// of the section (after its last option), or adds the section at the end.
func setLine(lines []string, section, key, line string) []string {
	keyLine := regexp.MustCompile(`^\s*"?` + regexp.QuoteMeta(key) + `"?\s*=`)
	current, insertAt := "", -1
	for i, l := range lines {
		if m := sectionLine().FindStringSubmatch(l); m != nil {
			current = strings.TrimSpace(m[1])
			if current == section {
				insertAt = i + 1
			}
			continue
		}
		if current != section {
			continue
		}
		if keyLine.MatchString(l) {
			lines[i] = line
			return lines
		}
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			insertAt = i + 1
		}
	}
	if insertAt < 0 {
		return append(lines, "", "["+section+"]", line)
	}
	return append(lines[:insertAt], append([]string{line}, lines[insertAt:]...)...)
}

// envOptions returns the options environ sets, section.key → the
// variable's name.
func envOptions(environ []string) map[string]string {
	out := map[string]string{}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		rest, ok := strings.CutPrefix(name, "WEIR__")
		if !ok {
			continue
		}
		if section, key, ok := strings.Cut(strings.ToLower(rest), "__"); ok {
			out[section+"."+key] = name
		}
	}
	return out
}

// databaseAgrees refuses a home whose weir.toml (path) names one database
// and whose environment names another: a command would then open a
// different database from the deployment's (issue 15, configuration
// correctness). fileConn is "" when the file does not set [database] conn.
func databaseAgrees(path, fileConn string, environ []string) error {
	if fileConn == "" {
		return nil
	}
	name, ok := envOptions(environ)["database.conn"]
	if !ok {
		return nil
	}
	var envConn string
	for _, kv := range environ {
		if n, v, _ := strings.Cut(kv, "="); n == name {
			envConn = v
		}
	}
	if envConn == fileConn {
		return nil
	}
	return fmt.Errorf("the database is ambiguous: %s says [database] conn = %s but %s = %s; "+
		"remove one of them (or make them equal) so that every command opens the same database",
		path, secrets.RedactURI(fileConn), name, secrets.RedactURI(envConn))
}
