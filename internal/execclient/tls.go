package execclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"time"
)

// EnvCAFile names the CA certificate file (PEM) a task's in-task CLI trusts
// besides the system roots; the worker sets it when it has one.
const EnvCAFile = "WEIR_TLS_CA_FILE"

// LoadCA returns the system's root certificates plus those of the PEM
// file at path, for verifying api-servers whose certificate a private CA
// signed. An unreadable file, or one without a certificate, is an error
// naming it.
func LoadCA(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path) //nolint:gosec // a path the operator configured
	if err != nil {
		return nil, fmt.Errorf("read CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s holds no PEM certificate", path)
	}
	return pool, nil
}

// newHTTPClient is the client's default transport: sane timeouts, and the
// server verified against roots (nil = the system's).
func newHTTPClient(roots *x509.CertPool) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: 0,
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
	},
		// The Execution API never redirects, and a redirect would carry
		// WorkerAuthorizationHeader (not stripped as Authorization is) to
		// its target: the 3xx is answered as it is, an error.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// TLSEnv returns the variables that give a task's in-task CLI the CA this
// client trusts (EnvCAFile), or nothing when it trusts the system roots.
func (c *Client) TLSEnv() []string {
	if c.opts.CAFile == "" {
		return nil
	}
	return []string{EnvCAFile + "=" + c.opts.CAFile}
}
