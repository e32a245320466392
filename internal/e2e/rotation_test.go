package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// TestKeyRotationAcrossRestarts follows docs/security.md's rotation with
// the keys in the environment: a worker credential signed with the old key
// is accepted by the api-server restarted with the new key first and the
// old one after it, and refused, naming the old key's id, once the old key
// is removed; a credential of the new key is accepted throughout.
func TestKeyRotationAcrossRestarts(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	oldKey, newKey := strings.Repeat("old-key-", 5), strings.Repeat("new-key-", 5)
	port := strconv.Itoa(weirtest.FreePort(t))
	base := "http://127.0.0.1:" + port
	env := func(keys string) []string {
		return []string{"WEIR__API__PORT=" + port, "WEIR__API_AUTH__JWT_SECRET=" + keys}
	}
	mustWeir(t, env(oldKey), "db", "migrate", "--home", home)
	oldCred := strings.TrimSpace(mustWeir(t, env(oldKey), "tokens", "create", "--worker", "w1", "--home", home))
	newCred := strings.TrimSpace(mustWeir(t, env(newKey+","+oldKey), "tokens", "create", "--worker", "w2", "--home", home))
	claim := func(cred string) (int, string) {
		status, body, err := newClient(t, base, cred).Try(http.MethodPost, "/execution/workloads/claim",
			execclient.ClaimRequest{Queues: []string{"nothing-queued-here"}, Limit: 1})
		if err != nil {
			t.Fatalf("claim: %v", err)
		}
		return status, string(body)
	}
	serve := func(keys string) *proc {
		p := startProc(t, "api-server ("+keys[:7]+"...)", env(keys), "api-server", "--home", home)
		newClient(t, base, "").WaitHealthy()
		return p
	}
	stop := func(p *proc) {
		p.Signal(t, syscall.SIGTERM)
		p.WaitExit(t)
	}

	p := serve(oldKey)
	if status, body := claim(oldCred); status != http.StatusOK {
		t.Fatalf("old credential before the rotation: %d %s", status, body)
	}
	stop(p)

	p = serve(newKey + "," + oldKey) // promoted: the new key signs, the old verifies
	for name, cred := range map[string]string{"old": oldCred, "new": newCred} {
		if status, body := claim(cred); status != http.StatusOK {
			t.Errorf("%s credential during the rotation: %d %s", name, status, body)
		}
	}
	stop(p)

	serve(newKey) // the old key removed
	status, body := claim(oldCred)
	if status != http.StatusUnauthorized || !strings.Contains(body, "not one of this api-server's") {
		t.Errorf("old credential after the old key's removal: %d %s, want 401 naming its key id", status, body)
	}
	if status, body := claim(newCred); status != http.StatusOK {
		t.Errorf("new credential after the old key's removal: %d %s", status, body)
	}
}
