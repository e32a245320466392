package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// credentials is what `weir login` stores: the deployment's URL and a
// bearer API token. The file is the user's, not the home's: one login
// serves every $WEIR_HOME.
type credentials struct {
	APIURL    string     `json:"api_url"`
	Token     string     `json:"token"`
	Username  string     `json:"username,omitempty"`
	Role      string     `json:"role,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// CAFile is the PEM file of the CA that signed the api-server's
	// certificate (weir login --ca-file), absolute; "" = the system roots
	// (or [workers] tls_ca_file).
	CAFile string `json:"ca_file,omitempty"`
	// Issued is true for a token the login issued (username and
	// password), which weir logout revokes; a --token is left alone.
	Issued bool `json:"issued_by_login,omitempty"`
}

// credentialsPath is where `weir login` keeps its credentials:
// $XDG_CONFIG_HOME/weir/credentials.json, else the user's configuration
// folder (~/.config on Linux, ~/Library/Application Support on macOS,
// %AppData% on Windows) — read from the CLI's environment only, so a test
// never finds its user's login.
func (a *app) credentialsPath() (string, error) {
	dir := a.getenv("XDG_CONFIG_HOME")
	if dir == "" {
		switch runtime.GOOS {
		case "windows":
			dir = a.getenv("AppData")
		case "darwin":
			if h := a.getenv("HOME"); h != "" {
				dir = filepath.Join(h, "Library", "Application Support")
			}
		default:
			if h := a.getenv("HOME"); h != "" {
				dir = filepath.Join(h, ".config")
			}
		}
	}
	if dir == "" {
		return "", errors.New("find the user's configuration folder for the login: set HOME or XDG_CONFIG_HOME")
	}
	return filepath.Join(dir, "weir", "credentials.json"), nil
}

// loadCredentials reads the stored login; nil without one. A file others
// may read or write is refused, as ssh refuses a private key.
func loadCredentials(path string) (*credentials, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read login credentials: %w", err)
	}
	if err := privateMode(path, fi); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path) //nolint:gosec // the user's own credentials file
	if err != nil {
		return nil, fmt.Errorf("read login credentials: %w", err)
	}
	var c credentials
	if err := json.Unmarshal(b, &c); err != nil || c.APIURL == "" || c.Token == "" {
		return nil, fmt.Errorf("login credentials %s are damaged (want a JSON object with api_url and token): run `weir logout`, then `weir login` again", path)
	}
	return &c, nil
}

// privateMode refuses a credentials file whose mode lets anyone but its
// owner read or write it.
func privateMode(path string, fi fs.FileInfo) error {
	if runtime.GOOS == "windows" {
		return nil // no Unix modes; the profile folder's ACL protects it
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("login credentials %s are not a regular file", path)
	}
	if m := fi.Mode().Perm(); m&0o077 != 0 {
		return fmt.Errorf("login credentials %s have mode %04o, readable or writable by others: "+
			"refusing to use them; make them private with `chmod 600 %s` (or remove the file and `weir login` again)", path, m, path)
	}
	return nil
}

// saveCredentials writes c to path with mode 0600 (its folder 0700),
// replacing an earlier login atomically. An existing file with a wider
// mode is refused and left as it is.
func saveCredentials(path string, c *credentials) error {
	if fi, err := os.Stat(path); err == nil {
		if err := privateMode(path, fi); err != nil {
			return err
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the folder of the login credentials: %w", err)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".credentials-*.json") // mode 0600
	if err != nil {
		return fmt.Errorf("store login credentials: %w", err)
	}
	_, werr := f.Write(append(b, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("store login credentials: %w", err)
	}
	if err := os.Chmod(f.Name(), 0o600); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("store login credentials: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("store login credentials: %w", err)
	}
	return nil
}
