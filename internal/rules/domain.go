package rules

import (
	"slices"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Reserved domains and addresses (details.md §6.5, §6.16, §10.2, §12).

// Length limits of domain names.
const (
	MaxDomainLength = 253 // a whole name (ERR_514)
	MaxLabelLength  = 63  // one label (ERR_513)
	// MaxServiceNameLength caps the part of a name that a caller picks under the service's
	// own base domain, e.g. "app" in "app.<base>" (ERR_423, our value).
	MaxServiceNameLength = 63
)

// Description and metadata codes of the two families.
var (
	ReservedDomainText = TextCodes{"ERR_420", "ERR_421"}
	// Reserved addresses have no metadata code in the catalogue: the generic ERR_100.
	ReservedAddrText = TextCodes{"ERR_504", "ERR_100"}
)

// Value sets (details.md §10.2).
var (
	Regions                = []string{"au", "eu", "ap", "us", "jp", "in", "sa"}
	ResolvesToValues       = []string{"global", "ap", "au", "eu", "in", "jp", "sa", "us", "us-cal-1"}
	CertificateAuthorities = []string{"letsencrypt"}
	CertificateKeyTypes    = []string{"ecdsa", "rsa"}
)

// Defaults of a reserved domain's certificate management policy and an address's region.
const (
	DefaultCertificateAuthority = "letsencrypt"
	DefaultCertificateKeyType   = "ecdsa"
	DefaultAddrRegion           = "us"
)

// NormalizeDomain is what the API does to a domain before it validates and stores it:
// surrounding whitespace and one trailing dot removed, letters lowercased. A control
// character inside the name is refused by ReservedDomain (ERR_406).
func NormalizeDomain(domain string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(domain)), ".")
}

// ReservedDomain checks a normalised domain name for reservation. base is the service's own
// base domain; with "" (the provider at plan time, which does not know it) the checks that
// need it are skipped.
func ReservedDomain(name, base string) error {
	bad := func(code, format string, args ...any) error {
		return violation(code, "domain", format+" Failed to reserve %s.", append(args, Quote(name))...)
	}
	if name == "" {
		return bad("ERR_448", "The domain is required: a fully qualified domain name such as app.example.com.")
	}
	if len(name) > MaxDomainLength {
		return bad("ERR_514", "The domain is not a valid DNS name: domains may not be longer than %d characters.", MaxDomainLength)
	}
	if strings.Contains(name, "_") {
		return bad("ERR_438", "Domains may not contain underscores.")
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return !domainChar(r) }); i >= 0 {
		return bad("ERR_406", "The domain contains the invalid character %q; valid characters are a-z, A-Z, 0-9, '.', '*' and '-'.", []rune(name[i:])[0])
	}
	if strings.Contains(name, "..") {
		return bad("ERR_409", "The domain contains '..': a label may not be empty.")
	}
	labels := strings.Split(name, ".")
	for i, label := range labels {
		switch {
		case label == "" && i == 0:
			return bad("ERR_407", "The domain starts with an empty label; labels must begin with a-z, A-Z, 0-9 or '*'.")
		case label == "":
			return bad("ERR_408", "The domain ends with an empty label; labels must end with a-z, A-Z or 0-9.")
		case strings.Contains(label, "*") && i > 0:
			return bad("ERR_402", "Only the first label of a reserved domain may be a '*' wildcard.")
		case strings.Contains(label, "*") && label != "*":
			return bad("ERR_403", "The first label of a wildcard domain must be a single '*' character.")
		case label == "*":
			continue
		case len(label) > MaxLabelLength:
			return bad("ERR_513", "The domain is not a valid DNS name: no label may be longer than %d characters.", MaxLabelLength)
		case !alnum(label[0]):
			return bad("ERR_407", "The label %s has an invalid first character; labels must begin with a-z, A-Z, 0-9 or '*'.", Quote(label))
		case !alnum(label[len(label)-1]):
			return bad("ERR_408", "The label %s has an invalid last character; labels must end with a-z, A-Z or 0-9.", Quote(label))
		case strings.HasPrefix(label, "xn--"):
			if _, err := idna.Punycode.ToUnicode(label); err != nil {
				return bad("ERR_429", "The label %s is not valid punycode.", Quote(label))
			}
		case len(label) >= 4 && label[2:4] == "--":
			return bad("ERR_410", "The label %s has '--' in the third and fourth positions, which only 'xn--' (punycode) labels may have.", Quote(label))
		}
	}
	if len(labels) < 2 {
		return bad("ERR_448", "The domain is not fully qualified: it needs at least two labels, as in example.com.")
	}
	if labels[0] == "*" {
		if rest := strings.Join(labels[1:], "."); publicSuffix(rest) {
			return bad("ERR_416", "You may not reserve a wildcard for all %s domains.", rest)
		}
	}
	if base == "" {
		return nil
	}
	if name == base || name == "*."+base {
		return bad("ERR_404", "You may not reserve the service's own domain %s; reserve a name under it, such as app.%s.", base, base)
	}
	if picked, ok := strings.CutSuffix(name, "."+base); ok && len(picked) > MaxServiceNameLength {
		return bad("ERR_423", "The name reserved under %s is limited to %d characters; %s has %d.", base, MaxServiceNameLength, Quote(picked), len(picked))
	}
	return nil
}

// ServiceSubdomain reports whether name lies under the service's own base domain: the
// service owns its DNS, so it needs no CNAME and takes no certificate of the caller's.
func ServiceSubdomain(name, base string) bool {
	return base != "" && strings.HasSuffix(name, "."+base)
}

func domainChar(r rune) bool {
	return r < 128 && (alnum(byte(r)) || r == '.' || r == '*' || r == '-')
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// publicSuffix reports whether name is a whole public suffix (com, co.uk, github.io …). Names
// under an unlisted top-level domain follow the list's default rule: the TLD is the suffix.
func publicSuffix(name string) bool {
	suffix, _ := publicsuffix.PublicSuffix(name)
	return suffix == name
}

// DomainRegion checks the deprecated region of a reserved domain (ERR_400).
func DomainRegion(region string) error { return regionIn("ERR_400", region) }

// AddrRegion checks the region of a reserved address (ERR_500).
func AddrRegion(region string) error { return regionIn("ERR_500", region) }

func regionIn(code, region string) error {
	if !slices.Contains(Regions, region) {
		return violation(code, "region", "The region %s is invalid; valid regions are %s.", Quote(region), strings.Join(Regions, ", "))
	}
	return nil
}

// ResolvesTo checks the resolves_to values of a reserved domain: each one known (ERR_215)
// and none twice (ERR_456).
func ResolvesTo(values []string) error {
	for i, v := range values {
		if !slices.Contains(ResolvesToValues, v) {
			return violation("ERR_215", "resolves_to", "Invalid resolves_to value %s; valid values are %s.", Quote(v), strings.Join(ResolvesToValues, ", "))
		}
		if slices.Contains(values[:i], v) {
			return violation("ERR_456", "resolves_to", "The resolves_to value %s is given more than once.", Quote(v))
		}
	}
	return nil
}

// CertificateChoice checks that a request does not give both an uploaded certificate and a
// management policy (ERR_434). An empty certificateID is no certificate: clients send ""
// beside a policy.
func CertificateChoice(certificateID *string, policyGiven bool) error {
	if certificateID != nil && *certificateID != "" && policyGiven {
		return violation("ERR_434", "certificate_id", "Give either certificate_id or certificate_management_policy, not both.")
	}
	return nil
}

// CertificateManagementPolicy checks a policy's values; "" takes the default.
func CertificateManagementPolicy(authority, privateKeyType string) error {
	if authority != "" && !slices.Contains(CertificateAuthorities, authority) {
		return violation("ERR_435", "certificate_management_policy.authority", "Invalid certificate authority %s; valid authorities are %s.", Quote(authority), strings.Join(CertificateAuthorities, ", "))
	}
	if privateKeyType != "" && !slices.Contains(CertificateKeyTypes, privateKeyType) {
		return violation("ERR_1909", "certificate_management_policy.private_key_type", "Invalid private key type %s; valid types are %s.", Quote(privateKeyType), strings.Join(CertificateKeyTypes, ", "))
	}
	return nil
}
