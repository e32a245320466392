package auth

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
)

// X-Forwarded-Proto and X-Forwarded-For count only from a trusted proxy;
// from anyone else, and with no proxies configured, they are ignored.
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	proxies, err := ParseTrustedProxies([]string{"10.0.0.0/8", "192.168.1.5", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		proxies    TrustedProxies
		remote     string
		tls        bool
		proto, xff []string
		wantHTTPS  bool
		wantClient string
	}{
		{name: "trusted proxy says https", proxies: proxies, remote: "10.1.2.3:5000", proto: []string{"https"}, xff: []string{"203.0.113.9"},
			wantHTTPS: true, wantClient: "203.0.113.9"},
		{name: "single trusted address", proxies: proxies, remote: "192.168.1.5:80", proto: []string{"HTTPS"}, wantHTTPS: true, wantClient: "192.168.1.5"},
		{name: "IPv6 loopback proxy", proxies: proxies, remote: "[::1]:80", proto: []string{"https"}, wantHTTPS: true, wantClient: "::1"},
		{name: "trusted proxy says http", proxies: proxies, remote: "10.1.2.3:5000", proto: []string{"http"}, wantClient: "10.1.2.3"},
		{name: "appended: the proxy's own value counts", proxies: proxies, remote: "10.1.2.3:5000", proto: []string{"https, http"},
			xff: []string{"198.51.100.1, 203.0.113.9"}, wantClient: "203.0.113.9"},
		{name: "two header lines: the last", proxies: proxies, remote: "10.1.2.3:5000", proto: []string{"http", "https"}, wantHTTPS: true, wantClient: "10.1.2.3"},
		{name: "untrusted client forging headers", proxies: proxies, remote: "203.0.113.9:4000", proto: []string{"https"}, xff: []string{"10.9.9.9"},
			wantClient: "203.0.113.9"},
		{name: "no proxies configured", remote: "10.1.2.3:5000", proto: []string{"https"}, xff: []string{"203.0.113.9"}, wantClient: "10.1.2.3"},
		{name: "TLS itself", remote: "203.0.113.9:4000", tls: true, wantHTTPS: true, wantClient: "203.0.113.9"},
		{name: "bad forwarded address", proxies: proxies, remote: "10.1.2.3:5000", xff: []string{"not-an-ip"}, wantClient: "10.1.2.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, _ := http.NewRequest(http.MethodGet, "http://weir/", nil)
			r.RemoteAddr = tt.remote
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			for _, v := range tt.proto {
				r.Header.Add("X-Forwarded-Proto", v)
			}
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := tt.proxies.HTTPS(r); got != tt.wantHTTPS {
				t.Errorf("HTTPS = %v, want %v", got, tt.wantHTTPS)
			}
			if got := tt.proxies.ClientAddr(r); got != tt.wantClient {
				t.Errorf("ClientAddr = %q, want %q", got, tt.wantClient)
			}
		})
	}
}

// A bad entry is refused naming it.
func TestParseTrustedProxiesBad(t *testing.T) {
	t.Parallel()
	_, err := ParseTrustedProxies([]string{"10.0.0.0/8", "proxy.local", "10.0.0.0/99"})
	if err == nil || !strings.Contains(err.Error(), `"proxy.local", "10.0.0.0/99"`) || !strings.Contains(err.Error(), "CIDR") {
		t.Fatalf("err = %v, want both bad entries named", err)
	}
}
