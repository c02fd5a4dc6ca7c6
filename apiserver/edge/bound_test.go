package edge_test

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
)

// The bound within which a change made through one replica is in force on the others: one
// poll of the routing revision at the production interval (DESIGN.md, "Snapshot"), plus
// slack for the rebuild's reads of the store and the request, which take hundreds of
// milliseconds each on a loaded test machine. It is there to catch a replica that does not
// follow the snapshot (one that waits for another loop, a minute say), not to time the poll.
const (
	productionPoll = 500 * time.Millisecond
	boundSlack     = time.Second
)

// TestChangesReachEveryReplicaWithinAPoll: replicas B and C (edges on stores of their own,
// polling at the production interval) of replica A, which makes every change through its
// API: a route deleted, an edge deleted and a certificate replaced are in force on B and C
// within the bound, and never undone after it.
func TestChangesReachEveryReplicaWithinAPoll(t *testing.T) {
	srv, replicaStore := onPostgres(t)
	a := newEnvOn(t, srv)
	atProductionPoll := func(o *edge.Options) { o.PollInterval = productionPoll }
	b := newEnvOnStore(t, srv, replicaStore(), noAgents{}, atProductionPoll)
	c := newEnvOnStore(t, srv, replicaStore(), noAgents{}, atProductionPoll)
	b.ca, c.ca = a.ca, a.ca
	others := map[string]*env{"B": b, "C": c}

	kept, doomed := a.fixed("kept"), a.fixed("doomed")
	siteEdge, _ := a.httpsEdge("bound.example.test", kept, nil)
	doomedRoute := a.create("/edges/https/"+siteEdge+"/routes", map[string]any{"match_type": "path_prefix", "match": "/doomed", "backend": map[string]any{"backend_id": doomed}})
	goneEdge, _ := a.httpsEdge("gone.example.test", kept, nil)
	body := func(e *env, url string) func() string {
		return func() string {
			resp, err := e.client().Get(url)
			if err != nil {
				return err.Error()
			}
			defer resp.Body.Close()
			if code := resp.Header.Get("Warren-Error-Code"); code != "" {
				return fmt.Sprint(resp.StatusCode, " ", code)
			}
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				return err.Error()
			}
			return string(b)
		}
	}
	for name, e := range others {
		waitFor(t, name+" serves both edges", func() bool {
			return body(e, "https://bound.example.test/doomed")() == "doomed" && body(e, "https://gone.example.test/")() == "kept"
		})
	}

	inForce(t, "the route deleted", func() {
		a.api("DELETE", "/edges/https/"+siteEdge+"/routes/"+doomedRoute, nil)
	}, others, func(e *env) func() string { return body(e, "https://bound.example.test/doomed") }, "doomed", "kept")

	inForce(t, "the edge deleted", func() {
		a.api("DELETE", "/edges/https/"+goneEdge, nil)
	}, others, func(e *env) func() string { return body(e, "https://gone.example.test/") }, "kept", "404 ERR_8001")

	oldSerial := a.serial("bound.example.test")
	certPEM, keyPEM := a.ca.leaf(t, "bound.example.test", false)
	block, _ := pem.Decode([]byte(certPEM))
	replacement, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	newCert := a.create("/tls_certificates", map[string]any{"certificate_pem": certPEM, "private_key_pem": keyPEM})
	domainID := ""
	for _, d := range a.api("GET", "/reserved_domains", nil)["reserved_domains"].([]any) {
		if d := d.(map[string]any); d["domain"] == "bound.example.test" {
			domainID = d["id"].(string)
		}
	}
	inForce(t, "the certificate replaced", func() {
		a.api("PATCH", "/reserved_domains/"+domainID, map[string]any{"certificate_id": newCert})
	}, others, func(e *env) func() string { return func() string { return e.serial("bound.example.test") } }, oldSerial, replacement.SerialNumber.String())
}

// inForce makes a change through replica A, then watches each other replica (observe) for
// a poll past the bound: each observation is before (the old configuration) or after (the
// new one); none is before once one was after, or when it starts past the bound.
func inForce(t *testing.T, what string, change func(), others map[string]*env, observe func(*env) func() string, before, after string) {
	t.Helper()
	change()
	changed := time.Now()
	bound := changed.Add(productionPoll + boundSlack)
	var wg sync.WaitGroup
	for name, e := range others {
		look := observe(e)
		wg.Go(func() {
			var first time.Time // of the first observation after the change
			for start := time.Now(); start.Before(bound.Add(productionPoll)); start = time.Now() {
				switch got := look(); {
				case got == after:
					if first.IsZero() {
						first = start
					}
				case got == before && first.IsZero() && start.Before(bound):
				case got == before && !first.IsZero():
					t.Errorf("%s: replica %s served the old configuration again, %s after the new one", what, name, start.Sub(first).Round(time.Millisecond))
					return
				case got == before:
					t.Errorf("%s: replica %s served the old configuration %s after the change", what, name, start.Sub(changed).Round(time.Millisecond))
					return
				default:
					t.Errorf("%s: replica %s answered %q, want %q or %q", what, name, got, before, after)
					return
				}
			}
			if first.IsZero() {
				t.Errorf("%s: replica %s never served the new configuration", what, name)
			}
		})
	}
	wg.Wait()
}

// serial is the serial number of the certificate the HTTPS listener serves for name.
func (e *env) serial(name string) string {
	c, err := e.tlsDial(name, e.ca.pool())
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
}
