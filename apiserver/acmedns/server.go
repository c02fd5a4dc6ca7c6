package acmedns

import (
	"context"
	"net"
	"time"

	"github.com/miekg/dns"
	"go.uber.org/zap"
)

// Bounds of the server: how long a client may take, how big an answer over UDP may be
// (the usual EDNS size that avoids fragmentation), how long a record lookup may take, and how
// many lookups run at once (beyond that the server answers SERVFAIL at once: a flood of
// queries cannot queue up work on the database).
const (
	ioTimeout     = 2 * time.Second
	tcpIdle       = 5 * time.Second
	maxUDPSize    = 1232
	lookupTimeout = 2 * time.Second
	maxLookups    = 32
	// recordTTL is the TTL of the answers and, in the SOA, of negative answers: short, so
	// that a resolver which asked for a name before its TXT record was written asks again
	// soon.
	recordTTL = 10
)

// Options configure a Server.
type Options struct {
	Records *Records
	// Nameservers are the zone's name servers, in its NS answer and its SOA, as the parent
	// zone delegates it; ns.<zone> when empty.
	Nameservers []string
	Log         *zap.Logger
}

// Server answers for the zone alone, with authority and without recursion: SOA and NS at
// its apex, TXT at the names the Records hold, NXDOMAIN for other names of the zone,
// REFUSED for names outside it.
type Server struct {
	records     *Records
	nameservers []string
	log         *zap.Logger
	lookups     chan struct{}

	udp, tcp *dns.Server
}

// NewServer returns a Server; Serve starts it.
func NewServer(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	ns := make([]string, 0, len(opts.Nameservers))
	for _, n := range opts.Nameservers {
		ns = append(ns, canonical(n))
	}
	if len(ns) == 0 {
		ns = []string{"ns." + opts.Records.Zone()}
	}
	return &Server{records: opts.Records, nameservers: ns, log: opts.Log, lookups: make(chan struct{}, maxLookups)}
}

// Serve answers on pc (UDP) and l (TCP) until Shutdown; either may be nil.
func (s *Server) Serve(pc net.PacketConn, l net.Listener) {
	if pc != nil {
		s.udp = &dns.Server{PacketConn: pc, Handler: s, UDPSize: maxUDPSize, ReadTimeout: ioTimeout, WriteTimeout: ioTimeout}
		go s.serve(s.udp)
	}
	if l != nil {
		s.tcp = &dns.Server{Listener: l, Handler: s, ReadTimeout: ioTimeout, WriteTimeout: ioTimeout,
			IdleTimeout: func() time.Duration { return tcpIdle }, MaxTCPQueries: 16}
		go s.serve(s.tcp)
	}
}

func (s *Server) serve(srv *dns.Server) {
	if err := srv.ActivateAndServe(); err != nil {
		s.log.Warn("acme dns: serving stopped", zap.Error(err))
	}
}

// Shutdown stops serving and closes the listeners.
func (s *Server) Shutdown() {
	for _, srv := range []*dns.Server{s.udp, s.tcp} {
		if srv != nil {
			_ = srv.Shutdown()
		}
	}
}

// ServeDNS answers one query (dns.Handler).
func (s *Server) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	m := s.answer(r)
	if opt := r.IsEdns0(); opt != nil {
		m.SetEdns0(maxUDPSize, false)
	}
	if _, udp := w.RemoteAddr().(*net.UDPAddr); udp {
		size := dns.MinMsgSize
		if opt := r.IsEdns0(); opt != nil {
			size = min(max(int(opt.UDPSize()), dns.MinMsgSize), maxUDPSize)
		}
		m.Truncate(size) // the client asks again over TCP
	}
	_ = w.WriteMsg(m)
}

// answer is the reply to r.
func (s *Server) answer(r *dns.Msg) *dns.Msg {
	m := new(dns.Msg)
	if r.Opcode != dns.OpcodeQuery {
		return m.SetRcode(r, dns.RcodeNotImplemented)
	}
	if len(r.Question) != 1 {
		return m.SetRcode(r, dns.RcodeFormatError)
	}
	m.SetReply(r)
	q := r.Question[0]
	name := canonical(q.Name)
	zone := s.records.Zone()
	if q.Qclass != dns.ClassINET || !dns.IsSubDomain(zone, name) {
		return m.SetRcode(r, dns.RcodeRefused)
	}
	m.Authoritative = true
	if name == zone {
		switch q.Qtype {
		case dns.TypeSOA:
			m.Answer = append(m.Answer, s.soa())
		case dns.TypeNS:
			for _, ns := range s.nameservers {
				m.Answer = append(m.Answer, &dns.NS{Hdr: s.header(zone, dns.TypeNS), Ns: ns})
			}
		default:
			m.Ns = append(m.Ns, s.soa())
		}
		return m
	}
	values, ok := s.lookup(name)
	switch {
	case !ok:
		m.Authoritative = false
		return m.SetRcode(r, dns.RcodeServerFailure)
	case len(values) == 0:
		m.Rcode = dns.RcodeNameError
		m.Ns = append(m.Ns, s.soa())
	case q.Qtype == dns.TypeTXT:
		for _, v := range values {
			// The answer's owner is the question's name as asked (resolvers vary its case).
			m.Answer = append(m.Answer, &dns.TXT{Hdr: s.header(q.Name, dns.TypeTXT), Txt: []string{v}})
		}
	default:
		m.Ns = append(m.Ns, s.soa())
	}
	return m
}

// lookup reads the TXT values of name; ok is false when the store did not answer in time or
// too many lookups are under way.
func (s *Server) lookup(name string) (values []string, ok bool) {
	select {
	case s.lookups <- struct{}{}:
		defer func() { <-s.lookups }()
	default:
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	values, err := s.records.TXT(ctx, name)
	if err != nil {
		s.log.Warn("acme dns: reading a record failed", zap.String("name", name), zap.Error(err))
		return nil, false
	}
	return values, true
}

func (s *Server) header(name string, rrtype uint16) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: rrtype, Class: dns.ClassINET, Ttl: recordTTL}
}

// soa is the zone's SOA record. Its serial stays 1: the zone has no secondaries to notify,
// every replica answers from the same store.
func (s *Server) soa() *dns.SOA {
	zone := s.records.Zone()
	return &dns.SOA{Hdr: s.header(zone, dns.TypeSOA), Ns: s.nameservers[0], Mbox: "hostmaster." + zone,
		Serial: 1, Refresh: 3600, Retry: 600, Expire: 86400, Minttl: recordTTL}
}
