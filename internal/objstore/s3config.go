package objstore

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/weirflow/weir/internal/core"
)

// Addressing says how requests name the bucket.
type Addressing string

// Addressing styles.
const (
	// AddressingAuto chooses: virtual-host style for AWS (when the bucket
	// name allows it), path style elsewhere.
	AddressingAuto Addressing = ""
	// AddressingPath puts the bucket in the path: http://host/bucket/key.
	AddressingPath Addressing = "path"
	// AddressingVirtualHost puts the bucket in the host name:
	// http://bucket.host/key.
	AddressingVirtualHost Addressing = "virtual-host"
)

// DefaultS3Endpoint is the endpoint used when a URL names none.
const DefaultS3Endpoint = "s3.amazonaws.com"

// Environment variables read for S3 credentials when the URL has none.
const (
	EnvAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvSecretAccessKey = "AWS_SECRET_ACCESS_KEY" //nolint:gosec // G101: a variable's name, not a secret
	EnvSessionToken    = "AWS_SESSION_TOKEN"     //nolint:gosec // G101: a variable's name, not a secret
)

// S3Config locates an S3 store. The zero values of the optional fields
// mean: anonymous requests, the region the server reports, automatic
// addressing.
type S3Config struct {
	Endpoint     string     // host[:port], no scheme
	Secure       bool       // use TLS
	Bucket       string     // bucket name (3-63 of a-z, 0-9, '.', '-')
	Prefix       string     // prepended to every key; empty or ending in "/"
	Region       string     // e.g. us-east-1
	Addressing   Addressing // path or virtual-host style
	AccessKey    string
	SecretKey    string
	SessionToken string
}

// bucketName is S3's rule for new buckets.
var bucketName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`) })

// Validate returns every problem in c at once; the error wraps
// core.ErrInvalid.
func (c S3Config) Validate() error {
	var errs []error
	if c.Endpoint == "" || strings.ContainsAny(c.Endpoint, "/?#@ ") {
		errs = append(errs, fmt.Errorf("endpoint %q must be host[:port]", c.Endpoint))
	}
	if !bucketName().MatchString(c.Bucket) || strings.Contains(c.Bucket, "..") {
		errs = append(errs, fmt.Errorf("bucket name %q must be 3 to 63 lowercase letters, digits, '.' or '-', "+
			"starting and ending with a letter or digit", c.Bucket))
	}
	if c.Prefix != "" {
		if !strings.HasSuffix(c.Prefix, "/") {
			errs = append(errs, fmt.Errorf("prefix %q must end with \"/\"", c.Prefix))
		} else if err := ValidateKey(strings.TrimSuffix(c.Prefix, "/")); err != nil {
			errs = append(errs, fmt.Errorf("prefix: %w", err))
		}
	}
	switch c.Addressing {
	case AddressingAuto, AddressingPath, AddressingVirtualHost:
	default:
		errs = append(errs, fmt.Errorf("addressing %q must be %q, %q or empty", c.Addressing, AddressingPath, AddressingVirtualHost))
	}
	if (c.AccessKey == "") != (c.SecretKey == "") {
		errs = append(errs, errors.New("access key and secret key must be given together"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: S3 object store: %w", core.ErrInvalid, err)
	}
	return nil
}

// String renders c as an s3:// URL without credentials.
func (c S3Config) String() string {
	scheme := "http"
	if c.Secure {
		scheme = "https"
	}
	return "s3://" + c.Bucket + "/" + c.Prefix + "?endpoint=" + scheme + "://" + c.Endpoint
}

// ParseS3URL reads an s3:// URL:
//
//	s3://[KEY:SECRET@]bucket[/prefix][?endpoint=http(s)://host[:port]&region=R&path_style=true|false]
//
// The endpoint defaults to https://s3.amazonaws.com; its scheme decides
// TLS. Credentials in the user info must be URL-escaped ("/" as %2F);
// without them the environment's AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
// and AWS_SESSION_TOKEN are used, and without those requests are
// anonymous. A prefix gets a trailing "/" if it lacks one. Errors wrap
// core.ErrInvalid and never repeat the secret.
func ParseS3URL(raw string) (S3Config, error) { return parseS3URL(raw, os.Getenv) }

func parseS3URL(raw string, getenv func(string) string) (S3Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		if uerr, ok := errors.AsType[*url.Error](err); ok {
			err = uerr.Err // the *url.Error repeats the input, secret included
		}
		return S3Config{}, fmt.Errorf("%w: S3 URL: %w", core.ErrInvalid, err)
	}
	shown := u.Redacted()
	if u.Scheme != "s3" {
		return S3Config{}, fmt.Errorf("%w: S3 URL %q must start with s3://", core.ErrInvalid, shown)
	}
	if u.Host == "" {
		return S3Config{}, fmt.Errorf("%w: S3 URL %q names no bucket (s3://bucket/prefix)", core.ErrInvalid, shown)
	}
	cfg := S3Config{Bucket: u.Host, Endpoint: DefaultS3Endpoint, Secure: true}
	if p := strings.TrimPrefix(u.Path, "/"); p != "" {
		cfg.Prefix = strings.TrimSuffix(p, "/") + "/"
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return S3Config{}, fmt.Errorf("%w: S3 URL %q: query: %w", core.ErrInvalid, shown, err)
	}
	for name, vals := range q {
		v := vals[len(vals)-1]
		switch name {
		case "endpoint":
			if err := cfg.setEndpoint(v); err != nil {
				return S3Config{}, fmt.Errorf("%w: S3 URL %q: %w", core.ErrInvalid, shown, err)
			}
		case "region":
			cfg.Region = v
		case "path_style":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return S3Config{}, fmt.Errorf("%w: S3 URL %q: path_style=%q must be true or false", core.ErrInvalid, shown, v)
			}
			cfg.Addressing = AddressingVirtualHost
			if b {
				cfg.Addressing = AddressingPath
			}
		default:
			return S3Config{}, fmt.Errorf("%w: S3 URL %q: unknown parameter %q (allowed: endpoint, region, path_style)",
				core.ErrInvalid, shown, name)
		}
	}
	if u.User != nil {
		secret, ok := u.User.Password()
		if !ok || u.User.Username() == "" {
			return S3Config{}, fmt.Errorf("%w: S3 URL %q: credentials must be given as KEY:SECRET@", core.ErrInvalid, shown)
		}
		cfg.AccessKey, cfg.SecretKey = u.User.Username(), secret
	} else {
		cfg.AccessKey, cfg.SecretKey = getenv(EnvAccessKeyID), getenv(EnvSecretAccessKey)
		cfg.SessionToken = getenv(EnvSessionToken)
	}
	if err := cfg.Validate(); err != nil {
		return S3Config{}, fmt.Errorf("S3 URL %q: %w", shown, err)
	}
	return cfg, nil
}

// setEndpoint reads an http:// or https:// endpoint URL.
func (c *S3Config) setEndpoint(v string) error {
	if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
		return fmt.Errorf("endpoint %q must start with http:// or https://", v)
	}
	e, err := url.Parse(v)
	if err != nil {
		return fmt.Errorf("endpoint %q: %w", v, err)
	}
	switch {
	case e.Host == "":
		return fmt.Errorf("endpoint %q names no host", v)
	case (e.Path != "" && e.Path != "/") || e.RawQuery != "" || e.User != nil:
		return fmt.Errorf("endpoint %q must be only scheme://host[:port]", v)
	}
	c.Endpoint, c.Secure = e.Host, e.Scheme == "https"
	return nil
}
