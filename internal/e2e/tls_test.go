package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// TestTLS serves the api-server over HTTPS with a certificate from a
// private CA ([api] tls_cert_file/tls_key_file): its worker verifies it
// with [workers] tls_ca_file and runs a task whose own weir command reaches
// the api-server too; a client that does not trust the CA is refused, as
// is plain HTTP; a certificate without its key is refused at start.
func TestTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	caPEM, certPEM, keyPEM := testCertificates(t)
	for name, b := range map[string][]byte{"ca.pem": caPEM, "cert.pem": certPEM, "key.pem": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"WEIR__API__TLS_CERT_FILE=" + filepath.Join(dir, "cert.pem"), "WEIR__API__TLS_KEY_FILE=" + filepath.Join(dir, "key.pem"),
		"WEIR__WORKERS__TLS_CA_FILE=" + filepath.Join(dir, "ca.pem")}
	home, dags := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "secure.yaml"), "dag_id: secure\nschedule: null\ntasks:\n  - task_id: push\n    operator: bash\n"+
		"    bash_command: weir xcom push greeting '\"over tls\"'\n")

	p := startProc(t, "standalone", env, "standalone", "--home", home, "--dags", dags, "--port", "0")
	base := p.WaitOutput(t, regexp.MustCompile(`API:\s+(https://\S+)/api/v2`))[1]
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	trusting := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	newClient(t, base, "").WithTransport(trusting).WaitHealthy()
	password := strings.TrimSpace(readFile(t, filepath.Join(home, "secrets", "admin_password")))
	api := weirtest.NewClient(t, base, "").WithTransport(trusting)
	if status, body := api.Do(http.MethodPost, "/api/v2/auth/login", map[string]string{"username": "admin", "password": password}); status != http.StatusOK {
		t.Fatalf("login over https: %d %s", status, body)
	}
	api.WaitDAG("secure")
	api.Trigger("secure", "r1", nil)
	api.WaitRunSuccess("secure", "r1")
	var x struct {
		Value any `json:"value"`
	}
	api.Get(weirtest.RunPath("secure", "r1")+"/taskInstances/push/xcomEntries/greeting", &x)
	if x.Value != "over tls" {
		t.Errorf("XCom pushed by the in-task CLI over https = %v, want \"over tls\"", x.Value)
	}

	if _, _, err := newClient(t, base, "").Try(http.MethodGet, "/api/v2/health", nil); err == nil ||
		!strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("client without the CA: err = %v, want the certificate refused", err)
	}
	plain := "http://" + strings.TrimPrefix(base, "https://")
	if status, _, err := newClient(t, plain, "").Try(http.MethodGet, "/api/v2/health", nil); err == nil && status == http.StatusOK {
		t.Errorf("plain HTTP to the https api-server answered 200")
	}

	half := runWeir(t, []string{"WEIR__API__TLS_CERT_FILE=" + filepath.Join(dir, "cert.pem")}, "config", "list", "--home", t.TempDir())
	if half.Code == 0 || !strings.Contains(half.Stderr, "tls_cert_file and tls_key_file") {
		t.Errorf("certificate without key: exit %d, %s; want an error naming both options", half.Code, half.Stderr)
	}
}

// testCertificates returns a new CA's certificate and a server certificate
// for 127.0.0.1 and localhost signed by it, with the server's key (PEM).
func testCertificates(t *testing.T) (ca, cert, key []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "weir test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "weir api-server"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caTmpl, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}
