package acme

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
)

// syncNow runs a Manager's Sync, failing the test on an error.
func syncNow(t *testing.T, mgr *Manager) {
	t.Helper()
	if err := mgr.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// renewsAt is the renews_at of a certificate: a third of its lifetime before it expires.
func renewsAt(c *x509.Certificate) string {
	return formatTime(c.NotAfter.Add(-c.NotAfter.Sub(c.NotBefore) / 3))
}

// TestManagedCertificateRenewal: a certificate that Pebble issues for a few seconds is
// renewed before it expires: the edge serves a valid certificate all along, then another
// one, and renews_at moves on.
func TestManagedCertificateRenewal(t *testing.T) {
	const lifetime = 10 * time.Second
	m := newManagedEnvOn(t, apiservertest.Start(t, apiservertest.NoRateLimit), lifetime)
	domain := "renew.test"
	id := m.reserve(t, domain)
	syncNow(t, m.mgr)
	var first *x509.Certificate
	apiservertest.WaitUntil(t, "the edge serves a certificate", func() bool {
		first, _ = m.served(m.edge.HTTPS, domain)
		return first != nil
	})
	if got := first.NotAfter.Sub(first.NotBefore); got > lifetime {
		t.Fatalf("Pebble issued a certificate for %s, not a short-lived one", got)
	}

	var second *x509.Certificate
	apiservertest.WaitUntil(t, "the edge serves a renewed certificate", func() bool {
		c, err := m.served(m.edge.HTTPS, domain)
		if err != nil {
			t.Fatalf("while the certificate renews, the edge serves none that verifies: %v", err)
		}
		if c.SerialNumber.Cmp(first.SerialNumber) != 0 {
			second = c
		}
		return second != nil
	})
	if !second.NotBefore.Before(first.NotAfter) {
		t.Fatalf("the certificate was renewed at %s, once it had expired at %s", second.NotBefore, first.NotAfter)
	}
	apiservertest.WaitUntil(t, "renews_at moves on", func() bool {
		s := m.status(t, id)
		return s.RenewsAt != nil && *s.RenewsAt > renewsAt(first) && s.ProvisioningJob == nil
	})
}
