package main

import (
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/internal/cliflags"
)

// acmeConfig is the ACME client's part of the command line: where each authority's
// directory is and which roots reach it, the DNS server that answers DNS-01 validations,
// and the resolver that checks domains' CNAMEs.
type acmeConfig struct {
	directories    acmeDirectories
	rootsFile      string
	dnsListen      string
	dnsNameservers string
	dnsResolver    string

	roots *x509.CertPool // derived by check; nil for the system's
}

func defineACMEFlags(fs *cliflags.Set, a *acmeConfig) {
	a.directories = acmeDirectories{}
	fs.Value(a.directories, "acme-directory", "WARREN_ACME_DIRECTORY", "AUTHORITY=URL: the ACME directory of a certificate management policy's authority (repeatable; comma-separated in the variable); letsencrypt is Let's Encrypt's production directory unless given")
	fs.String(&a.rootsFile, "acme-roots", "WARREN_ACME_ROOTS", "", "PEM file of the CA certificates trusted, beside the system's, to reach the ACME directories (an internal ACME CA)")
	fs.String(&a.dnsListen, "dns-listen", "WARREN_DNS_LISTEN", "", "address (UDP and TCP) of the authoritative DNS server of acme-challenge.<domain base>, which answers the DNS-01 validations of wildcard reserved domains; delegate that zone to it with NS records (off when empty: wildcard domains get no managed certificate)")
	fs.String(&a.dnsNameservers, "dns-nameservers", "WARREN_DNS_NAMESERVERS", "", "comma-separated host names of the DNS servers that the parent zone's NS records delegate acme-challenge.<domain base> to, which the zone's NS and SOA answers name (default ns.acme-challenge.<domain base>)")
	fs.String(&a.dnsResolver, "dns-resolver", "WARREN_DNS_RESOLVER", "", "address (host or host:port) of the DNS resolver that checks domains' CNAMEs before ordering their certificates, and the propagation of DNS-01 records (default: the system's)")
}

func (a *acmeConfig) check() error {
	if _, _, err := net.SplitHostPort(a.dnsListen); a.dnsListen != "" && err != nil {
		return fmt.Errorf("--dns-listen %q is not a host:port address: %v", a.dnsListen, err)
	}
	if a.dnsResolver != "" {
		if _, _, err := net.SplitHostPort(a.dnsResolver); err != nil {
			a.dnsResolver = net.JoinHostPort(a.dnsResolver, "53")
		}
		if host, port, _ := net.SplitHostPort(a.dnsResolver); host == "" || port == "" || port == "0" {
			return fmt.Errorf("--dns-resolver %q is not host or host:port", a.dnsResolver)
		}
	}
	a.roots = nil
	if a.rootsFile == "" {
		return nil
	}
	pem, err := os.ReadFile(a.rootsFile)
	if err != nil {
		return fmt.Errorf("--acme-roots: %w", err)
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(pem) {
		return fmt.Errorf("--acme-roots %s holds no PEM certificate", a.rootsFile)
	}
	a.roots = roots
	return nil
}

// nameservers are the --dns-nameservers.
func (a *acmeConfig) nameservers() []string {
	var out []string
	for _, n := range strings.Split(a.dnsNameservers, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// dnsListeners are the DNS server's sockets, opened before the store like the API's.
type dnsListeners struct {
	udp net.PacketConn
	tcp net.Listener
}

// listenDNS opens --dns-listen on UDP and TCP (with port 0, on the port that TCP got); nil
// without the flag.
func (a *acmeConfig) listenDNS() (*dnsListeners, error) {
	if a.dnsListen == "" {
		return nil, nil
	}
	tcp, err := net.Listen("tcp", a.dnsListen)
	if err != nil {
		return nil, fmt.Errorf("--dns-listen: %w", err)
	}
	host, _, _ := net.SplitHostPort(a.dnsListen)
	_, port, _ := net.SplitHostPort(tcp.Addr().String())
	udp, err := net.ListenPacket("udp", net.JoinHostPort(host, port))
	if err != nil {
		tcp.Close()
		return nil, fmt.Errorf("--dns-listen: %w", err)
	}
	return &dnsListeners{udp: udp, tcp: tcp}, nil
}

func (l *dnsListeners) close() {
	if l != nil {
		l.udp.Close()
		l.tcp.Close()
	}
}

// acmeDirectories are the --acme-directory flags: directory URL by authority.
type acmeDirectories map[string]string

func (d acmeDirectories) String() string {
	var out []string
	for k, v := range d {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

func (d acmeDirectories) Set(s string) error {
	for _, one := range strings.Split(s, ",") {
		authority, dir, ok := strings.Cut(strings.TrimSpace(one), "=")
		if !ok || authority == "" {
			return fmt.Errorf("%q is not AUTHORITY=URL", one)
		}
		if u, err := url.Parse(dir); err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("the directory of %s, %q, is not an absolute https URL", authority, dir)
		}
		d[authority] = dir
	}
	return nil
}
