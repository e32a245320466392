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

// testSessionEnd: an ended login session is known as ended until its
// expiry, when the next end deletes its record; ending one twice is fine,
// and the others go on.
func testSessionEnd(t *testing.T, f *fixture) {
	must(t, f.st.SessionEnd(f.ctx, "s1", f.at(time.Hour), f.now), "end s1")
	must(t, f.st.SessionEnd(f.ctx, "s1", f.at(time.Hour), f.now), "end s1 again")
	for id, want := range map[string]bool{"s1": true, "s2": false} {
		ended, err := f.st.SessionEnded(f.ctx, id)
		must(t, err, "session ended")
		if ended != want {
			t.Errorf("%s ended = %t, want %t", id, ended, want)
		}
	}
	must(t, f.st.SessionEnd(f.ctx, "s2", f.at(3*time.Hour), f.at(2*time.Hour)), "end s2 after s1 expired")
	if ended, err := f.st.SessionEnded(f.ctx, "s1"); err != nil || ended {
		t.Errorf("s1, expired, ended = %t, %v; want its record deleted", ended, err)
	}
}
