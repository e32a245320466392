package cli_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/store/sqlite"
	"github.com/weirflow/weir/internal/testutil/syncbuf"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// homeBox returns the secrets box of a home's key file.
func homeBox(t *testing.T, home string) *secrets.Box {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "secrets", "connections_key"))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.ParseKeys(string(b))
	if err != nil {
		t.Fatal(err)
	}
	box, err := secrets.New(keys)
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// Connections and variables are stored encrypted under the home's key;
// rotate-key puts a new key first, re-encrypts every row under it, and the
// old key can then be deleted from the file with every connection and
// variable still readable.
func TestConnectionsRotateKey(t *testing.T) {
	home := t.TempDir()
	env := []string{"WEIR_HOME=" + home, "USER=tester"}
	run := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := cli.Run(t.Context(), args, cli.Options{Stdout: &out, Stderr: &errOut, Environ: env}); code != 0 {
			t.Fatalf("weir %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
		}
		return out.String()
	}
	run("db", "migrate")
	run("connections", "add", "wh", "postgres://etl:s3cret@db:5432/dw")
	run("variables", "set", "region", "eu-west-1")
	db := filepath.Join(home, "weir.db")
	rawURI := func() string {
		t.Helper()
		st, err := sqlite.Open(t.Context(), db, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var uri string
		if err := st.DB().QueryRowContext(t.Context(), `SELECT uri FROM connection WHERE conn_id = 'wh'`).Scan(&uri); err != nil {
			t.Fatal(err)
		}
		return uri
	}
	first := homeBox(t, home).PrimaryID()
	if got := rawURI(); strings.Contains(got, "s3cret") || secrets.SealedWith(got) != first {
		t.Fatalf("stored uri = %q, want it sealed under key %s", got, first)
	}

	out := run("connections", "rotate-key")
	box := homeBox(t, home)
	if box.PrimaryID() == first || !strings.Contains(out, "re-encrypted 1 connections and 1 variables under key "+box.PrimaryID()) {
		t.Fatalf("rotate-key: %q (primary %s, first %s)", out, box.PrimaryID(), first)
	}
	if got := rawURI(); secrets.SealedWith(got) != box.PrimaryID() {
		t.Fatalf("after rotation the row is sealed under %s, want %s", secrets.SealedWith(got), box.PrimaryID())
	}
	keyFile := filepath.Join(home, "secrets", "connections_key")
	b, _ := os.ReadFile(keyFile)
	lines := strings.Fields(string(b))
	if len(lines) != 2 {
		t.Fatalf("key file has %d keys, want the new and the old", len(lines))
	}
	if fi, _ := os.Stat(keyFile); fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	// Drop the old key: the connection and the variable still read.
	if err := os.WriteFile(keyFile, []byte(lines[0]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := run("connections", "list"); !strings.Contains(out, "postgres://etl:***@db:5432/dw") {
		t.Fatalf("list after dropping the old key:\n%s", out)
	}
	if out := run("variables", "get", "region"); strings.TrimSpace(out) != "eu-west-1" {
		t.Fatalf("variables get after dropping the old key: %q", out)
	}
}

// A connection or variable written by a node with another key file (its
// copy of the key missing) is listed as undecryptable beside the others,
// left out of an export, and can be replaced and deleted, where it made
// every listing, the admin page and its own deletion fail on the
// decryption.
func TestAConnectionUnderAStrayKeyIsListedAndMended(t *testing.T) {
	home := t.TempDir()
	env := []string{"WEIR_HOME=" + home, "USER=tester"}
	stray := append(slices.Clone(env), "WEIR__CORE__SECRETS_KEY_FILE="+filepath.Join(t.TempDir(), "stray_key"))
	weir := func(env []string, args ...string) (string, string, int) {
		t.Helper()
		var out, errOut bytes.Buffer
		code := cli.Run(t.Context(), args, cli.Options{Stdout: &out, Stderr: &errOut, Environ: env})
		return out.String(), errOut.String(), code
	}
	must := func(env []string, args ...string) string {
		t.Helper()
		out, errOut, code := weir(env, args...)
		if code != 0 {
			t.Fatalf("weir %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		return out
	}
	must(env, "db", "migrate")
	must(env, "connections", "add", "wh", "postgres://etl:s3cret@db:5432/dw")
	must(stray, "connections", "add", "other", "http://x:pw@y")

	out := must(env, "connections", "list")
	if !strings.Contains(out, "postgres://etl:***@db:5432/dw") || !strings.Contains(out, "other") ||
		!strings.Contains(out, "cannot decrypt here") || strings.Contains(out, "pw@y") {
		t.Fatalf("list with a row under a stray key:\n%s", out)
	}
	must(env, "connections", "add", "other", "http://x:fixed@y") // replaced under this node's key
	if out := must(env, "connections", "list"); strings.Contains(out, "cannot decrypt") || !strings.Contains(out, "http://x:***@y") {
		t.Fatalf("list after replacing the stray row:\n%s", out)
	}
	must(stray, "connections", "add", "gone", "http://x:pw@z")
	must(env, "connections", "delete", "gone")
	if out := must(env, "connections", "list"); strings.Contains(out, "gone") {
		t.Fatalf("list after deleting a stray row:\n%s", out)
	}

	must(env, "variables", "set", "region", "eu")
	must(stray, "variables", "set", "bucket", "lake")
	if out := must(env, "variables", "list"); !strings.Contains(out, "region") || !strings.Contains(out, "bucket") ||
		!strings.Contains(out, "cannot decrypt here") {
		t.Fatalf("variables list with a row under a stray key:\n%s", out)
	}
	out, errOut, code := weir(env, "variables", "export", "-")
	if code == 0 || !strings.Contains(out, `"region": "eu"`) || strings.Contains(out, "bucket") ||
		!strings.Contains(errOut, "1 variables left out: their values do not decrypt") {
		t.Fatalf("export with a row under a stray key: exit %d\n%s\n%s", code, out, errOut)
	}
	must(env, "variables", "set", "bucket", "fixed") // replaced under this node's key
	if out := must(env, "variables", "get", "bucket"); strings.TrimSpace(out) != "fixed" {
		t.Fatalf("variables get after replacing the stray row: %q", out)
	}
	must(stray, "variables", "set", "gone", "x")
	must(env, "variables", "delete", "gone")
	if out := must(env, "variables", "list"); strings.Contains(out, "gone") || strings.Contains(out, "cannot decrypt") {
		t.Fatalf("variables list after mending:\n%s", out)
	}
}

// `weir connections add ID --conn-uri URI` takes Airflow's spelling too.
func TestConnectionsAddTakesConnURI(t *testing.T) {
	home := t.TempDir()
	env := []string{"WEIR_HOME=" + home, "USER=tester"}
	run := func(args ...string) (string, int) {
		var out, errOut bytes.Buffer
		code := cli.Run(t.Context(), args, cli.Options{Stdout: &out, Stderr: &errOut, Environ: env})
		return out.String() + errOut.String(), code
	}
	if out, code := run("db", "migrate"); code != 0 {
		t.Fatal(out)
	}
	if out, code := run("connections", "add", "api", "--conn-uri", "https://u:pw@api.example.com"); code != 0 || !strings.Contains(out, "https://u:***@api.example.com") {
		t.Fatalf("add --conn-uri: exit %d, %q", code, out)
	}
	if out, code := run("connections", "add", "api", "--conn-uri", "https://a", "https://b"); code == 0 {
		t.Errorf("add with --conn-uri and a URI argument: exit 0, %q; want a usage error", out)
	}
	if out, _ := run("connections", "list"); !strings.Contains(out, "https://u:***@api.example.com") {
		t.Errorf("list after add --conn-uri:\n%s", out)
	}
}

// An api-server whose key file did not seal the stored connections and
// variables says so as it starts (a node given a key file of its own),
// naming how many and the key file; with the right file it says nothing.
func TestAnAPIServerWithAStrayKeyFileSaysSo(t *testing.T) {
	home := t.TempDir()
	env := []string{"WEIR_HOME=" + home, "USER=tester"}
	strayKey := filepath.Join(t.TempDir(), "stray_key")
	stray := append(slices.Clone(env), "WEIR__CORE__SECRETS_KEY_FILE="+strayKey)
	for _, args := range [][]string{{"db", "migrate"}, {"connections", "add", "wh", "postgres://etl:pw@db/dw"}, {"variables", "set", "region", "eu"}} {
		var out, errOut bytes.Buffer
		if code := cli.Run(t.Context(), args, cli.Options{Stdout: &out, Stderr: &errOut, Environ: env}); code != 0 {
			t.Fatalf("weir %v: exit %d: %s", args, code, errOut.String())
		}
	}
	start := func(env []string) string {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		var errOut syncbuf.Buffer
		done := make(chan int, 1)
		go func() {
			done <- cli.Run(ctx, []string{"api-server"}, cli.Options{Stdout: io.Discard, Stderr: &errOut, Environ: append(env, "WEIR__API__PORT=0")})
		}()
		wait.Until(t, 30*time.Second, "the api-server listening", func() bool { return strings.Contains(errOut.String(), "api-server listening") })
		cancel()
		<-done
		return errOut.String()
	}
	if log := start(stray); !strings.Contains(log, "do not decrypt with this node's key file") ||
		!strings.Contains(log, "connections=1 variables=1") || !strings.Contains(log, strayKey) {
		t.Errorf("api-server with a stray key file logged:\n%s", log)
	}
	if log := start(env); strings.Contains(log, "do not decrypt") {
		t.Errorf("api-server with the right key file warned:\n%s", log)
	}
}
