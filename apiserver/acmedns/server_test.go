package acmedns

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
)

func TestMain(m *testing.M) { os.Exit(pgcluster.RunTests(m)) }

const zone = "acme-challenge.warren.test."

// startServer serves the zone's records from a fresh store on UDP and TCP, and returns the
// records and the two addresses.
func startServer(t *testing.T) (records *Records, udpAddr, tcpAddr string) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return serveOn(t, s)
}

// serveOn serves the zone's records in s.
func serveOn(t *testing.T, s store.Store) (records *Records, udpAddr, tcpAddr string) {
	records = NewRecords(s, "ACME-Challenge.warren.test")
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Options{Records: records, Nameservers: []string{"ns1.warren.test", "ns2.warren.test."}})
	srv.Serve(pc, l)
	t.Cleanup(srv.Shutdown)
	return records, pc.LocalAddr().String(), l.Addr().String()
}

func query(t *testing.T, network, addr, name string, qtype uint16) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = true
	in, _, err := (&dns.Client{Net: network}).Exchange(m, addr)
	if err != nil {
		t.Fatalf("%s %s %s: %v", network, name, dns.TypeToString[qtype], err)
	}
	if in.RecursionAvailable {
		t.Fatalf("%s: the server offers recursion", name)
	}
	return in
}

func txt(name, value string) libdns.Record { return libdns.TXT{Name: name, Text: value} }

func answers(m *dns.Msg) []string {
	var out []string
	for _, rr := range m.Answer {
		switch rr := rr.(type) {
		case *dns.TXT:
			out = append(out, rr.Hdr.Name+" "+strings.Join(rr.Txt, ""))
		case *dns.NS:
			out = append(out, rr.Ns)
		case *dns.SOA:
			out = append(out, rr.Ns+" "+rr.Mbox)
		}
	}
	slices.Sort(out)
	return out
}

func TestZoneAnswers(t *testing.T) {
	records, udp, tcp := startServer(t)
	if _, err := records.AppendRecords(t.Context(), zone, []libdns.Record{txt("abc", "one"), txt("abc", "two"), txt("abc", "one")}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ network, addr string }{{"udp", udp}, {"tcp", tcp}} {
		t.Run(c.network, func(t *testing.T) {
			for _, q := range []struct {
				name  string
				qtype uint16
				rcode int
				want  []string
				soa   bool // a negative answer names the zone's SOA
			}{
				{zone, dns.TypeSOA, dns.RcodeSuccess, []string{"ns1.warren.test. hostmaster.acme-challenge.warren.test."}, false},
				{zone, dns.TypeNS, dns.RcodeSuccess, []string{"ns1.warren.test.", "ns2.warren.test."}, false},
				{zone, dns.TypeA, dns.RcodeSuccess, nil, true},
				// Resolvers vary the case of a name: the answer keeps the question's.
				{"aBc." + zone, dns.TypeTXT, dns.RcodeSuccess, []string{"aBc." + zone + " one", "aBc." + zone + " two"}, false},
				{"abc." + zone, dns.TypeA, dns.RcodeSuccess, nil, true},
				{"other." + zone, dns.TypeTXT, dns.RcodeNameError, nil, true},
				{"x.abc." + zone, dns.TypeTXT, dns.RcodeNameError, nil, true},
				// Names outside the zone: refused, not resolved.
				{"warren.test.", dns.TypeSOA, dns.RcodeRefused, nil, false},
				{"example.com.", dns.TypeA, dns.RcodeRefused, nil, false},
				{"acme-challenge.warren.test.evil.", dns.TypeTXT, dns.RcodeRefused, nil, false},
			} {
				in := query(t, c.network, c.addr, q.name, q.qtype)
				got := answers(in)
				if in.Rcode != q.rcode || !slices.Equal(got, q.want) {
					t.Errorf("%s %s: %s %q, want %s %q", q.name, dns.TypeToString[q.qtype], dns.RcodeToString[in.Rcode], got, dns.RcodeToString[q.rcode], q.want)
				}
				if in.Authoritative != (q.rcode != dns.RcodeRefused) {
					t.Errorf("%s %s: authoritative %v", q.name, dns.TypeToString[q.qtype], in.Authoritative)
				}
				if hasSOA := len(in.Ns) == 1 && in.Ns[0].Header().Rrtype == dns.TypeSOA; hasSOA != q.soa {
					t.Errorf("%s %s: authority section %v", q.name, dns.TypeToString[q.qtype], in.Ns)
				}
			}
		})
	}

	// A deleted value is no longer answered; the last one gone, the name is gone.
	if _, err := records.DeleteRecords(t.Context(), zone, []libdns.Record{txt("abc", "one")}); err != nil {
		t.Fatal(err)
	}
	if got := answers(query(t, "udp", udp, "abc."+zone, dns.TypeTXT)); !slices.Equal(got, []string{"abc." + zone + " two"}) {
		t.Fatalf("after deleting one value: %q", got)
	}
	if _, err := records.DeleteRecords(t.Context(), zone, []libdns.Record{txt("abc", "two"), txt("abc", "never")}); err != nil {
		t.Fatal(err)
	}
	if in := query(t, "udp", udp, "abc."+zone, dns.TypeTXT); in.Rcode != dns.RcodeNameError {
		t.Fatalf("after deleting every value: %s", dns.RcodeToString[in.Rcode])
	}
}

// An answer too big for UDP is truncated there, and whole over TCP.
func TestTruncatedOverUDP(t *testing.T) {
	records, udp, tcp := startServer(t)
	var recs []libdns.Record
	for i := range maxNameItems {
		recs = append(recs, txt("big", strings.Repeat(string(rune('a'+i)), maxValueLen)))
	}
	if _, err := records.AppendRecords(t.Context(), zone, recs); err != nil {
		t.Fatal(err)
	}
	if in := query(t, "udp", udp, "big."+zone, dns.TypeTXT); !in.Truncated || len(in.Answer) >= maxNameItems {
		t.Fatalf("over UDP: truncated %v with %d answers", in.Truncated, len(in.Answer))
	}
	if in := query(t, "tcp", tcp, "big."+zone, dns.TypeTXT); in.Truncated || len(in.Answer) != maxNameItems {
		t.Fatalf("over TCP: truncated %v with %d answers", in.Truncated, len(in.Answer))
	}
	if _, err := records.AppendRecords(t.Context(), zone, []libdns.Record{txt("big", "one more")}); err == nil {
		t.Fatal("a name took more values than its bound")
	}
}

// The records hold TXT records of their zone only.
func TestRecordsRefused(t *testing.T) {
	records, _, _ := startServer(t)
	for _, rec := range []libdns.Record{
		libdns.RR{Type: "A", Name: "abc", Data: "127.0.0.1"},
		txt("abc", ""),
		txt("abc", strings.Repeat("x", maxValueLen+1)),
	} {
		if _, err := records.AppendRecords(t.Context(), zone, []libdns.Record{rec}); err == nil {
			t.Errorf("%+v was taken", rec.RR())
		}
	}
	if _, err := records.AppendRecords(t.Context(), "warren.test.", []libdns.Record{txt("abc", "v")}); err == nil {
		t.Error("a record outside the zone was taken")
	}
	if v, err := records.TXT(t.Context(), "abc."+zone); err != nil || len(v) != 0 {
		t.Fatalf("refused records were stored: %q %v", v, err)
	}
}

// A record one replica writes is answered by another's server: they share the database.
func TestReplicasShareRecords(t *testing.T) {
	dsn := pgcluster.Database(t)
	open := func() store.Store {
		s, err := postgres.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	writer, _, _ := serveOn(t, open())
	_, udp, _ := serveOn(t, open())
	if _, err := writer.AppendRecords(t.Context(), zone, []libdns.Record{txt("abc", "from A")}); err != nil {
		t.Fatal(err)
	}
	if got := answers(query(t, "udp", udp, "abc."+zone, dns.TypeTXT)); !slices.Equal(got, []string{"abc." + zone + " from A"}) {
		t.Fatalf("replica B answers %q", got)
	}
	if _, err := writer.DeleteRecords(t.Context(), zone, []libdns.Record{txt("abc", "from A")}); err != nil {
		t.Fatal(err)
	}
	if in := query(t, "udp", udp, "abc."+zone, dns.TypeTXT); in.Rcode != dns.RcodeNameError {
		t.Fatalf("replica B still answers a deleted record: %s", dns.RcodeToString[in.Rcode])
	}
}
