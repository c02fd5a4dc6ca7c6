package acme

import (
	"net/http"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
)

// TestReleasedDomainNotServed: once a domain is released, or its management policy
// deleted, the edge stops serving its managed certificate as soon as its routing snapshot
// has the change (at once on the replica that made it, within a poll elsewhere), although
// the Manager stops managing the domain only at its next Sync, a minute later in production.
func TestReleasedDomainNotServed(t *testing.T) {
	m := newManagedEnv(t)
	m.mgr.onlyChallenge = "http-01"
	released, unmanaged := "released.test", "unmanaged.test"
	ids := map[string]string{released: m.reserve(t, released), unmanaged: m.reserve(t, unmanaged)}
	if err := m.mgr.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	for domain, id := range ids {
		apiservertest.WaitUntil(t, domain+" is issued", func() bool {
			s := m.status(t, id)
			return s != nil && s.RenewsAt != nil
		})
		apiservertest.WaitUntil(t, "the edge serves "+domain, func() bool { return m.verify(domain) == nil })
	}

	for domain, path := range map[string]string{released: "", unmanaged: "/certificate_management_policy"} {
		req, _ := http.NewRequest("DELETE", m.srv.URL+"/reserved_domains/"+ids[domain]+path, nil)
		req.Header.Set("Authorization", "Bearer "+m.srv.APIKey)
		req.Header.Set("Service-Version", "2")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE %s: %v %v", req.URL.Path, resp, err)
		}
		resp.Body.Close()
		if err := m.verify(domain); err == nil {
			t.Fatalf("DELETE %s: the edge still serves the managed certificate of %s", req.URL.Path, domain)
		}
	}
}
