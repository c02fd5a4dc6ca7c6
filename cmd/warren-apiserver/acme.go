package main

import (
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/internal/cliflags"
)

// acmeConfig is the ACME client's part of the command line: where each authority's
// directory is and which roots reach it.
type acmeConfig struct {
	directories acmeDirectories
	rootsFile   string

	roots *x509.CertPool // derived by check; nil for the system's
}

func defineACMEFlags(fs *cliflags.Set, a *acmeConfig) {
	a.directories = acmeDirectories{}
	fs.Value(a.directories, "acme-directory", "WARREN_ACME_DIRECTORY", "AUTHORITY=URL: the ACME directory of a certificate management policy's authority (repeatable; comma-separated in the variable); letsencrypt is Let's Encrypt's production directory unless given")
	fs.String(&a.rootsFile, "acme-roots", "WARREN_ACME_ROOTS", "", "PEM file of the CA certificates trusted, beside the system's, to reach the ACME directories (an internal ACME CA)")
}

func (a *acmeConfig) check() error {
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
