package stateref

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/objstore"
)

// Environment variables a worker gives a task subprocess so that the
// in-task CLI (`weir task-state`) uses the same backend. The URL carries
// no credentials; S3 credentials travel in their own variables, which win
// over the AWS_* variables a task may set for its own purposes.
const (
	EnvBackend         = "WEIR_STATE_BACKEND"
	EnvAccessKeyID     = "WEIR_STATE_BACKEND_ACCESS_KEY_ID"
	EnvSecretAccessKey = "WEIR_STATE_BACKEND_SECRET_ACCESS_KEY" //nolint:gosec // G101: a variable's name, not a secret
	EnvSessionToken    = "WEIR_STATE_BACKEND_SESSION_TOKEN"     //nolint:gosec // G101: a variable's name, not a secret
)

// Objects is what a backend does with the values: keep one under a
// reference (serialize), return it (deserialize), and remove it once its
// row is gone (cleanup, from the sweep). An objstore.Store is one; a custom
// backend a Go program registers (weir.WithStateBackend) is another.
type Objects interface {
	// Put keeps data under ref, replacing any previous value.
	Put(ctx context.Context, ref string, data []byte) error
	// Get returns the value under ref, or an error wrapping
	// core.ErrNotFound when there is none.
	Get(ctx context.Context, ref string) ([]byte, error)
	// Delete removes the value under ref; an absent one is not an error.
	Delete(ctx context.Context, ref string) error
}

// Registry holds the custom backends of a program by name
// (weir.WithStateBackend); nil holds none.
type Registry map[string]Objects

// Backend is an opened [workers] state_backend.
type Backend struct {
	// Store keeps the values.
	Store Objects
	// URL is the backend's URL without credentials, or a custom backend's
	// name.
	URL string
	s3  *objstore.S3Config // nil for file://
}

// Open opens the backend rawURL names (file:///path or
// s3://bucket/prefix?endpoint=..., as objstore.Open reads them; S3
// credentials come from the URL or this process's AWS_* variables). It
// does not contact an S3 server.
func Open(rawURL string) (*Backend, error) {
	return open(rawURL, nil)
}

// Resolve opens the backend spec names: nil for "" (values in the
// database), the object store of a URL (file://, s3://; see Open), or the
// custom backend reg holds under a name. An unknown name is an error that
// lists the names reg holds.
func Resolve(spec string, reg Registry) (*Backend, error) {
	switch {
	case spec == "":
		return nil, nil
	case strings.Contains(spec, "://"):
		return Open(spec)
	}
	if o, ok := reg[spec]; ok {
		return &Backend{Store: o, URL: spec}, nil
	}
	return nil, unknownName(spec, reg)
}

// Check reports, without opening anything, whether Resolve would refuse
// spec: a URL objstore.CheckURL refuses, or a name reg does not hold.
func Check(spec string, reg Registry) error {
	switch {
	case spec == "":
		return nil
	case strings.Contains(spec, "://"):
		return objstore.CheckURL(spec)
	case reg[spec] != nil:
		return nil
	}
	return unknownName(spec, reg)
}

// unknownName is the error for a backend name reg does not hold.
func unknownName(name string, reg Registry) error {
	have := "this program registers none"
	if len(reg) > 0 {
		names := make([]string, 0, len(reg))
		for n := range reg {
			names = append(names, n)
		}
		slices.Sort(names)
		have = "this program registers " + strings.Join(names, ", ")
	}
	return fmt.Errorf("%w: state backend %q is not registered (%s); name a backend the program registers with weir.WithStateBackend, or give a file:// or s3:// URL",
		core.ErrInvalid, name, have)
}

// FromEnv opens the backend a task's environment names (EnvBackend and the
// credential variables): a URL, or the name of a custom backend in reg
// (the worker's own program runs the in-task CLI, so it holds the same
// ones); nil, nil when EnvBackend is unset: task state then goes to the
// database as is.
func FromEnv(reg Registry) (*Backend, error) {
	raw := strings.TrimSpace(os.Getenv(EnvBackend))
	if raw == "" {
		return nil, nil
	}
	if !strings.Contains(raw, "://") {
		b, err := Resolve(raw, reg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvBackend, err)
		}
		return b, nil
	}
	b, err := open(raw, func(c *objstore.S3Config) {
		if key := os.Getenv(EnvAccessKeyID); key != "" {
			c.AccessKey, c.SecretKey, c.SessionToken = key, os.Getenv(EnvSecretAccessKey), os.Getenv(EnvSessionToken)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvBackend, err)
	}
	return b, nil
}

// open opens rawURL; creds, when set, may replace an S3 store's
// credentials.
func open(rawURL string, creds func(*objstore.S3Config)) (*Backend, error) {
	if !strings.HasPrefix(rawURL, "s3://") {
		st, err := objstore.Open(rawURL)
		if err != nil {
			return nil, fmt.Errorf("task state backend: %w", err)
		}
		return &Backend{Store: st, URL: rawURL}, nil
	}
	cfg, err := objstore.ParseS3URL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("task state backend: %w", err)
	}
	if creds != nil {
		creds(&cfg)
	}
	st, err := objstore.NewS3(cfg)
	if err != nil {
		return nil, fmt.Errorf("task state backend: %w", err)
	}
	u, err := url.Parse(rawURL) // ParseS3URL accepted it
	if err != nil {
		return nil, fmt.Errorf("task state backend: %w", err)
	}
	u.User = nil
	return &Backend{Store: st, URL: u.String(), s3: &cfg}, nil
}

// TaskEnv returns the variables (KEY=value) that give a task subprocess
// this backend: EnvBackend with the URL without credentials and, for an S3
// store with credentials, the credential variables.
func (b *Backend) TaskEnv() []string {
	env := []string{EnvBackend + "=" + b.URL}
	if b.s3 != nil && b.s3.AccessKey != "" {
		env = append(env, EnvAccessKeyID+"="+b.s3.AccessKey, EnvSecretAccessKey+"="+b.s3.SecretKey)
		if b.s3.SessionToken != "" {
			env = append(env, EnvSessionToken+"="+b.s3.SessionToken)
		}
	}
	return env
}

// Secrets returns the credentials TaskEnv hands out, for a task log to
// mask.
func (b *Backend) Secrets() []string {
	if b.s3 == nil {
		return nil
	}
	var out []string
	for _, s := range []string{b.s3.SecretKey, b.s3.SessionToken} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
