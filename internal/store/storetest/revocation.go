package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
)

// testCredentialRevocation: a revocation is found by scope and subject, a
// second one of the same subject moves it forward, and other subjects and
// scopes are untouched.
func testCredentialRevocation(t *testing.T, f *fixture) {
	_, err := f.st.CredentialRevocationGet(f.ctx, "worker", "w1")
	wantErr(t, err, core.ErrNotFound, "revocation never recorded")

	first := &core.CredentialRevocation{Scope: "worker", Subject: "w1", RevokedBefore: f.at(time.Second), RevokedBy: "ada"}
	must(t, f.st.CredentialRevoke(f.ctx, first), "revoke w1")
	must(t, f.st.CredentialRevoke(f.ctx, &core.CredentialRevocation{Scope: "worker", Subject: "w2",
		RevokedBefore: f.at(2 * time.Second)}), "revoke w2")
	got, err := f.st.CredentialRevocationGet(f.ctx, "worker", "w1")
	must(t, err, "get w1")
	if diff := cmp.Diff(first, got); diff != "" {
		t.Errorf("revocation (-want +got):\n%s", diff)
	}

	again := &core.CredentialRevocation{Scope: "worker", Subject: "w1", RevokedBefore: f.at(time.Hour), RevokedBy: "bob"}
	must(t, f.st.CredentialRevoke(f.ctx, again), "revoke w1 again")
	got, err = f.st.CredentialRevocationGet(f.ctx, "worker", "w1")
	must(t, err, "get w1 again")
	if diff := cmp.Diff(again, got); diff != "" {
		t.Errorf("revocation moved forward (-want +got):\n%s", diff)
	}
	if w2, err := f.st.CredentialRevocationGet(f.ctx, "worker", "w2"); err != nil || !w2.RevokedBefore.Equal(f.at(2*time.Second)) {
		t.Errorf("w2 = %+v, %v; want its own revocation untouched", w2, err)
	}
	_, err = f.st.CredentialRevocationGet(f.ctx, "other", "w1")
	wantErr(t, err, core.ErrNotFound, "same subject, other scope")
}
