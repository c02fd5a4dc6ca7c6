package acme

import (
	"bytes"
	"context"
	"crypto/x509"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
)

// newReplicas starts two replicas on one PostgreSQL database, each with its Manager and
// edge: A (m's) and B. Pebble validates through A's edge.
func newReplicas(t *testing.T) (m *managedEnv, edgeB *apiservertest.Edge, mgrB *Manager) {
	dsn := pgcluster.Database(t)
	srv := apiservertest.StartOn(t, func(ctx context.Context, seal sqlstore.Option) (store.Store, error) {
		return postgres.Open(ctx, dsn, seal)
	}, apiservertest.NoRateLimit)
	m = newManagedEnvOn(t, srv, 0)
	keys := srv.Keys(t)
	st, err := postgres.Open(t.Context(), dsn, sqlstore.WithKeys(keys))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	edgeB, mgrB = m.replica(t, st)
	return m, edgeB, mgrB
}

// TestReplicasRaceForOneDomain: two replicas start managing a new domain at once: Pebble is sent one order, both
// edges serve the one certificate, and the status is that certificate's.
func TestReplicasRaceForOneDomain(t *testing.T) {
	m, edgeB, mgrB := newReplicas(t)

	domain := "race.test"
	id := m.reserve(t, domain)
	errs := make([]error, 2)
	apiservertest.AtOnce(2, func(i int) { errs[i] = []*Manager{m.mgr, mgrB}[i].Sync(t.Context()) })
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var certA, certB *x509.Certificate
	apiservertest.WaitUntil(t, "both replicas serve a certificate", func() bool {
		certA, _ = m.served(m.edge.HTTPS, domain)
		certB, _ = m.served(edgeB.HTTPS, domain)
		return certA != nil && certB != nil
	})
	if !bytes.Equal(certA.Raw, certB.Raw) {
		t.Fatalf("the replicas serve different certificates: serials %s and %s", certA.SerialNumber, certB.SerialNumber)
	}
	if n := m.pebble.orders.Load(); n != 1 {
		t.Fatalf("Pebble created %d orders, want 1", n)
	}
	if s := m.status(t, id); s.ProvisioningJob != nil || s.RenewsAt == nil || *s.RenewsAt != renewsAt(certA) {
		t.Fatalf("status %+v (renews_at %v), want renews_at %s", s, s.RenewsAt, renewsAt(certA))
	}
}

// TestReplicaAnswersAnotherReplicasValidation: the validation of replica B's order reaches
// replica A, whose Manager has not seen the domain yet (it reads the reserved domains once a
// minute): A answers it from the storage they share, and B gets the certificate at once.
func TestReplicaAnswersAnotherReplicasValidation(t *testing.T) {
	for _, challenge := range []string{"http-01", "tls-alpn-01"} {
		t.Run(challenge, func(t *testing.T) {
			m, edgeB, mgrB := newReplicas(t)
			mgrB.onlyChallenge = challenge
			domain := "b-" + challenge + ".test"
			id := m.reserve(t, domain)
			syncNow(t, mgrB)
			apiservertest.WaitUntil(t, "the order ends", func() bool {
				s := m.status(t, id)
				return s.RenewsAt != nil || s.ProvisioningJob.ErrorCode != nil
			})
			if s := m.status(t, id); s.RenewsAt == nil {
				t.Fatalf("replica B's order failed: %s", s.ProvisioningJob.Msg)
			}
			if _, err := m.served(edgeB.HTTPS, domain); err != nil {
				t.Fatalf("replica B serves no certificate: %v", err)
			}
			if n := m.pebble.orders.Load(); n != 1 {
				t.Fatalf("Pebble created %d orders, want 1", n)
			}
		})
	}
}
