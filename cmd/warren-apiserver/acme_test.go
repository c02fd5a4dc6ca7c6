package main

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestDNSListen: a server started with --dns-listen on port 0 answers for the zone of its
// ACME challenge targets on UDP and TCP, on one port, with the name servers it was given.
func TestDNSListen(t *testing.T) {
	env := databases[0].env(t) // sqlite
	env["WARREN_LISTEN"] = "127.0.0.1:0"
	env["WARREN_DOMAIN_BASE"] = "warren.example"
	env["WARREN_DNS_LISTEN"] = "127.0.0.1:0"
	env["WARREN_DNS_NAMESERVERS"] = "ns1.warren.example, ns2.warren.example"
	_, stderr, stop := serveInBackground(t, nil, env)
	defer stop()
	var addr string
	for _, line := range logLines(t, stderr.String()) {
		if line["msg"] == "DNS server listening" {
			addr = line["address"].(string)
			if line["zone"] != "acme-challenge.warren.example" {
				t.Fatalf("zone %v", line["zone"])
			}
		}
	}
	if addr == "" {
		t.Fatalf("no DNS server: %s", stderr.String())
	}
	for _, network := range []string{"udp", "tcp"} {
		q := new(dns.Msg)
		q.SetQuestion("acme-challenge.warren.example.", dns.TypeNS)
		in, _, err := (&dns.Client{Net: network}).Exchange(q, addr)
		if err != nil {
			t.Fatalf("%s: %v", network, err)
		}
		if !in.Authoritative || len(in.Answer) != 2 || in.Answer[0].(*dns.NS).Ns != "ns1.warren.example." {
			t.Fatalf("%s: %v", network, in)
		}
		q.SetQuestion("example.com.", dns.TypeA)
		if in, _, err = (&dns.Client{Net: network}).Exchange(q, addr); err != nil || in.Rcode != dns.RcodeRefused {
			t.Fatalf("%s: a name outside the zone: %v %v", network, in, err)
		}
	}
}

func TestDNSFlags(t *testing.T) {
	for _, c := range []struct{ env, value, err string }{
		{"WARREN_DNS_LISTEN", "53", "--dns-listen"},
		{"WARREN_DNS_RESOLVER", ":53", "--dns-resolver"},
	} {
		_, err := parseFlags(nil, envOf(map[string]string{c.env: c.value}), nil)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s=%s: %v", c.env, c.value, err)
		}
	}
	cfg, err := parseFlags(nil, envOf(map[string]string{"WARREN_DNS_RESOLVER": "10.0.0.53"}), nil)
	if err != nil || cfg.edge.acme.dnsResolver != "10.0.0.53:53" {
		t.Fatalf("a resolver without a port: %v %+v", err, cfg)
	}
}
