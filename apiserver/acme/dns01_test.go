package acme

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/warrenhq/terraform-provider-warren/apiserver/acmedns"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// testResolver stands for the recursive resolver that Pebble and the Manager ask, on UDP and
// TCP at addr. It answers A queries for names ending in .test with 127.0.0.1, except those
// starting with "nowhere.", which do not exist; it answers the CNAME records that the
// domains' owners set; and it forwards the zone of the ACME challenge targets to Warren's DNS
// server, following a CNAME into it as a resolver does.
type testResolver struct {
	addr       string
	acmeZone   string // canonical
	acmeServer string // Warren's DNS server (TCP)

	mu     sync.Mutex
	cnames map[string]string // canonical name → target
	addrs  map[string]net.IP // canonical name → its A record, where not 127.0.0.1
}

// startDNS serves the ACME challenge zone of srv with Warren's DNS server, and starts the
// resolver in front of it.
func startDNS(t *testing.T, srv *apiservertest.Server) (*acmedns.Records, *testResolver) {
	records := acmedns.NewRecords(srv.Store, "acme-challenge.warren.localhost")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	warrenDNS := acmedns.NewServer(acmedns.Options{Records: records})
	warrenDNS.Serve(nil, l)
	t.Cleanup(warrenDNS.Shutdown)
	r := &testResolver{acmeZone: records.Zone(), acmeServer: l.Addr().String(), cnames: map[string]string{}, addrs: map[string]net.IP{}}
	r.addr = serveDNS(t, dns.HandlerFunc(r.serveDNS))
	return records, r
}

// serveDNS serves h on UDP and TCP on one port of 127.0.0.1, and returns its address.
func serveDNS(t *testing.T, h dns.Handler) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	for _, srv := range []*dns.Server{{Listener: l, Handler: h}, {PacketConn: pc, Handler: h}} {
		go func() { _ = srv.ActivateAndServe() }()
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	return l.Addr().String()
}

// setCNAME sets (target "" deletes) the CNAME record of name.
func (r *testResolver) setCNAME(name, target string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if target == "" {
		delete(r.cnames, dns.CanonicalName(name))
		return
	}
	r.cnames[dns.CanonicalName(name)] = dns.CanonicalName(target)
}

// setA gives name (and only it) the A record ip.
func (r *testResolver) setA(name string, ip net.IP) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addrs[dns.CanonicalName(name)] = ip
}

// pointAt sets the CNAME records the API told the owner of d to set.
func (r *testResolver) pointAt(d api.ReservedDomain) {
	if d.CNAMETarget != nil && !isWildcard(d.Domain) {
		r.setCNAME(d.Domain, *d.CNAMETarget)
	}
	if d.ACMEChallengeCNAMETarget != nil {
		r.setCNAME("_acme-challenge."+strings.TrimPrefix(d.Domain, "*."), *d.ACMEChallengeCNAMETarget)
	}
}

func (r *testResolver) serveDNS(w dns.ResponseWriter, q *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(q)
	m.RecursionAvailable = true
	name, qtype := dns.CanonicalName(q.Question[0].Name), q.Question[0].Qtype
	r.mu.Lock()
	target, cname := r.cnames[name]
	addr, hasAddr := r.addrs[name]
	r.mu.Unlock()
	switch {
	case hasAddr && !cname:
		if qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: addr})
		}
	case dns.IsSubDomain(r.acmeZone, name):
		r.forward(m, name, qtype)
	case cname && (qtype == dns.TypeCNAME || dns.IsSubDomain(r.acmeZone, target)):
		m.Answer = append(m.Answer, &dns.CNAME{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 60}, Target: target})
		if qtype != dns.TypeCNAME && dns.IsSubDomain(r.acmeZone, target) {
			r.forward(m, target, qtype)
		}
	case strings.HasPrefix(name, "nowhere.") || !strings.HasSuffix(name, ".test."):
		m.Rcode = dns.RcodeNameError
	case qtype == dns.TypeA:
		// The CNAME targets of brought domains name Warren's edge, here 127.0.0.1: the
		// answer skips the chain.
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.IPv4(127, 0, 0, 1)})
	}
	_ = w.WriteMsg(m)
}

// forward adds Warren's DNS server's answer for name to m.
func (r *testResolver) forward(m *dns.Msg, name string, qtype uint16) {
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	in, _, err := (&dns.Client{Net: "tcp"}).Exchange(q, r.acmeServer)
	if err != nil {
		m.Rcode = dns.RcodeServerFailure
		return
	}
	m.Rcode = in.Rcode
	m.Answer = append(m.Answer, in.Answer...)
	m.Ns = append(m.Ns, in.Ns...)
}

// A wildcard domain is validated by DNS-01 through its _acme-challenge CNAME and Warren's DNS
// server; the edge serves its certificate for any name under it, and the TXT record is gone
// once the certificate is issued.
func TestDNS01Wildcard(t *testing.T) {
	m := newManagedEnv(t)
	id := m.reserve(t, "*.wild.test")
	if err := m.mgr.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	apiservertest.WaitUntil(t, "the certificate is issued", func() bool {
		s := m.status(t, id)
		return s != nil && s.RenewsAt != nil
	})
	if s := m.status(t, id); s.ProvisioningJob != nil {
		t.Fatalf("an issued certificate's status has a provisioning job: %+v", s.ProvisioningJob)
	}
	apiservertest.WaitUntil(t, "the edge serves the certificate", func() bool { return m.verify("anything.wild.test") == nil })
	if err := m.verify("deeper.anything.wild.test"); err == nil {
		t.Fatal("the wildcard certificate verified for a name two labels down")
	}
	target, err := m.mgr.challengeTarget(t.Context(), "*.wild.test")
	if err != nil {
		t.Fatal(err)
	}
	apiservertest.WaitUntil(t, "the challenge's TXT record is deleted", func() bool {
		values, err := m.mgr.opts.ChallengeRecords.TXT(t.Context(), target)
		return err == nil && len(values) == 0
	})
}

// A domain whose CNAME is missing or wrong gets no order: its status names what was found and
// what is expected, and when it is checked again; once fixed, it is issued at that time.
func TestCNAMEChecks(t *testing.T) {
	m := newManagedEnv(t)
	now := time.Now()
	m.mgr.opts.Now = func() time.Time { return now }
	type check struct {
		domain, name string // the domain and the name whose CNAME is checked
		set          string // that name's CNAME record ("" none)
	}
	var checks []check
	ids := map[string]string{}
	for _, domain := range []string{"missing.test", "wrong.test", "*.wildmissing.test", "*.wildwrong.test"} {
		ids[domain] = m.reserve(t, domain)
		name := domain
		if isWildcard(domain) {
			name = "_acme-challenge." + strings.TrimPrefix(domain, "*.")
		}
		c := check{domain: domain, name: name}
		if strings.Contains(domain, "wrong") {
			c.set = "elsewhere.example.net"
		}
		m.resolver.setCNAME(name, c.set)
		checks = append(checks, c)
	}
	if err := m.mgr.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		d := m.domain(t, ids[c.domain])
		want := *d.CNAMETarget
		if isWildcard(c.domain) {
			want = *d.ACMEChallengeCNAMETarget
		}
		job := d.CertificateManagementStatus.ProvisioningJob
		found := "has no CNAME record"
		if c.set != "" {
			found = "is a CNAME to " + c.set
		}
		wantMsg := c.name + " " + found + ": it must be a CNAME to " + want + "."
		if c.set == "" && !isWildcard(c.domain) {
			wantMsg = c.name + " has no CNAME record: it must be a CNAME to " + want + ", or at a zone apex have its addresses (a flattened CNAME or ALIAS record)."
		}
		if job == nil || job.ErrorCode == nil || *job.ErrorCode != "DNS_ERROR" || job.Msg != wantMsg ||
			job.StartedAt != api.FormatTime(now) || job.RetriesAt == nil || *job.RetriesAt != api.FormatTime(now.Add(time.Minute)) {
			t.Errorf("%s: provisioning job %+v, want DNS_ERROR %q retrying in a minute", c.domain, job, wantMsg)
		}
		if _, managed := m.mgr.managed[c.domain]; managed {
			t.Errorf("%s was handed to certmagic with a bad CNAME", c.domain)
		}
	}

	// Fixed before its retry time, a domain waits for it; then it is issued.
	m.resolver.setCNAME("missing.test", *m.domain(t, ids["missing.test"]).CNAMETarget)
	if err := m.mgr.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if job := m.status(t, ids["missing.test"]).ProvisioningJob; job == nil || job.ErrorCode == nil {
		t.Fatalf("checked again before its retry time: %+v", job)
	}
	now = now.Add(time.Minute)
	if err := m.mgr.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	apiservertest.WaitUntil(t, "the fixed domain's certificate is issued", func() bool {
		s := m.status(t, ids["missing.test"])
		return s != nil && s.RenewsAt != nil
	})
	// The others failed again, and wait longer (certmagic's backoff).
	job := m.status(t, ids["wrong.test"]).ProvisioningJob
	if job.RetriesAt == nil || *job.RetriesAt != api.FormatTime(now.Add(2*time.Minute)) {
		t.Fatalf("second failure: %+v", job)
	}
}

// A zone apex cannot be a CNAME: a brought domain with its cname_target's addresses instead
// (a flattened CNAME, an ALIAS record) is issued.
func TestFlattenedCNAME(t *testing.T) {
	m := newManagedEnv(t)
	id := m.reserve(t, "apex.test")
	d := m.domain(t, id)
	m.resolver.setCNAME(d.Domain, "")
	m.resolver.setA(*d.CNAMETarget, net.IPv4(127, 0, 0, 1)) // apex.test answers 127.0.0.1 too
	if err := m.mgr.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	apiservertest.WaitUntil(t, "the apex's certificate is issued", func() bool {
		s := m.status(t, id)
		return s != nil && s.RenewsAt != nil
	})
}

// Without Warren's DNS server, a wildcard domain's status says so.
func TestDNS01ServerOff(t *testing.T) {
	m := newManagedEnv(t)
	m.mgr.opts.ChallengeRecords = nil
	id := m.reserve(t, "*.off.test")
	if err := m.mgr.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	job := m.status(t, id).ProvisioningJob
	if job == nil || job.ErrorCode == nil || *job.ErrorCode != "INTERNAL_ERROR" || !strings.Contains(job.Msg, "DNS server is off (--dns-listen)") {
		t.Fatalf("provisioning job: %+v", job)
	}
}
