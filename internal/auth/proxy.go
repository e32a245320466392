package auth

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// TrustedProxies are the reverse proxies ([api] trusted_proxies) whose
// X-Forwarded-Proto and X-Forwarded-For headers the api-server believes:
// a request from any other address is taken at face value, whatever
// headers it carries, since any client can send them. The zero value
// trusts no one.
type TrustedProxies []netip.Prefix

// ParseTrustedProxies reads [api] trusted_proxies: each entry an address
// ("10.0.0.7", "::1") or a CIDR block ("10.0.0.0/8"). The error names
// every entry that is neither.
func ParseTrustedProxies(list []string) (TrustedProxies, error) {
	var out TrustedProxies
	var bad []string
	for _, s := range list {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		bad = append(bad, fmt.Sprintf("%q", s))
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%s: want an IP address (10.0.0.7) or a CIDR block (10.0.0.0/8)", strings.Join(bad, ", "))
	}
	return out, nil
}

// trusts reports whether the request came straight from a trusted proxy.
func (t TrustedProxies) trusts(r *http.Request) bool {
	if len(t) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// HTTPS reports whether the browser reached Weir over HTTPS: the request
// arrived over TLS, or came from a trusted proxy whose X-Forwarded-Proto
// says "https". With several values (proxies that append) the last one
// counts: it was written by the trusted proxy that sent the request.
func (t TrustedProxies) HTTPS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if !t.trusts(r) {
		return false
	}
	return strings.EqualFold(lastValue(r.Header.Values("X-Forwarded-Proto")), "https")
}

// ClientAddr is the address of the client behind the request (the login
// throttle counts failures per address): the last X-Forwarded-For entry
// when the request came from a trusted proxy (the address that proxy
// saw), otherwise the peer's address.
func (t TrustedProxies) ClientAddr(r *http.Request) string {
	if t.trusts(r) {
		if a, err := netip.ParseAddr(lastValue(r.Header.Values("X-Forwarded-For"))); err == nil {
			return a.Unmap().String()
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// lastValue is the last comma-separated value of a header's lines,
// trimmed; "" for none.
func lastValue(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	last := lines[len(lines)-1]
	if i := strings.LastIndexByte(last, ','); i >= 0 {
		last = last[i+1:]
	}
	return strings.TrimSpace(last)
}
