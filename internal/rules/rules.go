// Package rules holds the spec's validation rules as plain functions over request values.
// The server calls them to reject a request; the provider calls the same functions to fail a
// plan early. Each rule lives here once, with the error code the API gives for it.
package rules

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"
)

// Violation is a broken rule: the API's error code, the request member at fault and a
// message for people.
type Violation struct {
	Code  string
	Field string
	Msg   string
}

func (v *Violation) Error() string { return v.Msg }

func violation(code, field, format string, args ...any) *Violation {
	return &Violation{Code: code, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Length limits of details.md §12.
const (
	MaxDescriptionBytes = 255
	MaxMetadataBytes    = 4096
	MaxNameBytes        = 255
)

// TextCodes are the error codes one family uses for a too-long description and metadata.
type TextCodes struct{ Description, Metadata string }

// Description and metadata codes per family (details.md §5.3). Families without codes of
// their own use the generic ones: ERR_215 (invalid value) and ERR_100 (metadata too long).
var (
	GenericText       = TextCodes{"ERR_215", "ERR_100"}
	CredentialText    = TextCodes{"ERR_604", "ERR_605"}
	SSHCAText         = TextCodes{"ERR_1937", "ERR_1938"}
	APIKeyText        = GenericText
	SSHCredentialText = GenericText
)

// DescriptionMetadata checks description and metadata: free text (no control characters but
// tab, newline and carriage return) within their byte limits; nil values are not given and
// always pass.
func DescriptionMetadata(codes TextCodes, description, metadata *string) error {
	if description != nil {
		if err := FreeText(codes.Description, "description", *description); err != nil {
			return err
		}
	}
	if metadata != nil {
		if err := FreeText(codes.Metadata, "metadata", *metadata); err != nil {
			return err
		}
	}
	if description != nil && len(*description) > MaxDescriptionBytes {
		return violation(codes.Description, "description", "The description is %d bytes long; the maximum is %d bytes.", len(*description), MaxDescriptionBytes)
	}
	if metadata != nil && len(*metadata) > MaxMetadataBytes {
		return violation(codes.Metadata, "metadata", "The metadata is %d bytes long; the maximum is %d bytes.", len(*metadata), MaxMetadataBytes)
	}
	return nil
}

// ACLRule checks one tunnel or SSH credential ACL rule (api.md, details.md §10.2): `*`, or
// `bind:` followed by a domain (optionally with a leading `*.`), a `host:port` address or a
// `key=value` label whose key and/or value may be `*`.
func ACLRule(rule string) error {
	bad := func(why string) error {
		return violation("ERR_600", "acl", "Invalid ACL rule %s: %s. A rule is '*' or starts with 'bind:' followed by a domain, an address (host:port) or a label (key=value).", Quote(rule), why)
	}
	if err := Identifier("ERR_600", "acl", rule); err != nil {
		return err
	}
	if rule == "*" {
		return nil
	}
	target, ok := strings.CutPrefix(rule, "bind:")
	if !ok {
		return bad("it must be '*' or start with 'bind:'")
	}
	if target == "" {
		return bad("nothing follows 'bind:'")
	}
	if key, value, isLabel := strings.Cut(target, "="); isLabel {
		if !labelPart(key) || !labelPart(value) {
			return bad("a label needs a non-empty key and value without spaces or '='")
		}
		return nil
	}
	if host, port, err := net.SplitHostPort(target); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return bad("the port must be a number from 1 to 65535")
		}
		if !hostname(host, false) && net.ParseIP(host) == nil {
			return bad("the address must have a valid host")
		}
		return nil
	}
	if !hostname(target, true) {
		return bad("the domain is not a valid hostname")
	}
	return nil
}

// ACL checks every rule of an ACL.
func ACL(acl []string) error {
	for _, rule := range acl {
		if err := ACLRule(rule); err != nil {
			return err
		}
	}
	return nil
}

func labelPart(s string) bool {
	return s != "" && !strings.ContainsAny(s, "= \t\r\n")
}

// hostname reports whether s is a DNS name of letters, digits and hyphens, optionally
// starting with a "*." wildcard label.
func hostname(s string, wildcard bool) bool {
	if wildcard {
		s = strings.TrimPrefix(s, "*.")
	}
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// SSH certificate authority key choices (details.md §6.4, §10.2).
var (
	SSHKeyTypes       = []string{"rsa", "ecdsa", "ed25519"}
	SSHRSAKeySizes    = []int64{2048, 4096}
	SSHEllipticCurves = []string{"p256", "p384", "p521"}
)

// Defaults the server applies to an SSH CA create request (our choice; unconfirmed upstream).
const (
	DefaultSSHKeyType = "ed25519"
	DefaultRSAKeySize = 4096
	DefaultCurve      = "p256"
)

// SSHCAKey checks the private_key_type, key_size and elliptic_curve of an SSH CA create
// request. Nil values are not given.
func SSHCAKey(keyType *string, keySize *int64, curve *string) error {
	kt := DefaultSSHKeyType
	if keyType != nil {
		kt = *keyType
	}
	if !slices.Contains(SSHKeyTypes, kt) {
		return violation("ERR_1936", "private_key_type", "Invalid private key type %s; valid types are %s.", Quote(kt), strings.Join(SSHKeyTypes, ", "))
	}
	if keySize != nil {
		if kt != "rsa" {
			return violation("ERR_1940", "key_size", "key_size may only be given with private_key_type 'rsa'.")
		}
		if !slices.Contains(SSHRSAKeySizes, *keySize) {
			return violation("ERR_1939", "key_size", "Invalid key size %d; valid sizes are 2048 and 4096.", *keySize)
		}
	}
	if curve != nil {
		if kt != "ecdsa" {
			return violation("ERR_1942", "elliptic_curve", "elliptic_curve may only be given with private_key_type 'ecdsa'.")
		}
		if !slices.Contains(SSHEllipticCurves, *curve) {
			return violation("ERR_1941", "elliptic_curve", "Invalid elliptic curve %s; valid curves are %s.", Quote(*curve), strings.Join(SSHEllipticCurves, ", "))
		}
	}
	return nil
}

// ServiceUserName checks a service user's name: non-empty, at most MaxNameBytes, no control
// characters (ERR_215: the catalogue has no code of its own).
func ServiceUserName(name string) error {
	if strings.TrimSpace(name) == "" {
		return violation("ERR_4109", "name", "The service user name must not be empty.")
	}
	if len(name) > MaxNameBytes || !utf8.ValidString(name) {
		return violation("ERR_4110", "name", "The service user name is longer than %d bytes.", MaxNameBytes)
	}
	return Identifier("ERR_215", "name", name)
}

// SSHPublicKey checks an SSH credential's public key (authorized_keys form, as the API's
// examples use) and returns its SHA-256 fingerprint.
func SSHPublicKey(publicKey string) (fingerprint string, err error) {
	if strings.TrimSpace(publicKey) == "" {
		return "", violation("ERR_611", "public_key", "The public_key is missing or empty.")
	}
	// Stored and echoed verbatim: the comment may not smuggle in control characters (a
	// trailing newline, as in a .pub file, is fine).
	if err := FreeText("ERR_612", "public_key", publicKey); err != nil {
		return "", err
	}
	key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(publicKey))
	if err != nil {
		return "", violation("ERR_612", "public_key", "The public_key is not a valid SSH public key in authorized_keys form: %s.", Clip(err.Error()))
	}
	return ssh.FingerprintSHA256(key), nil
}

// Enums are the closed value sets of the wire types' string members, by the name their
// enum struct tag gives (internal/api): the tables the checks above use, so that the
// OpenAPI document lists what the server accepts and answers.
var Enums = map[string][]string{
	"region":              Regions,
	"ip_rule_action":      IPRuleActions,
	"ip_restriction_type": IPRestrictionTypes,
	"match_type":          MatchTypes,
	"terminate_at":        TerminateAts,
	"tls_version":         TLSVersions,
	"saml_nameid_format":  SAMLNameIDFormats,
	"ssh_key_type":        SSHKeyTypes,
	"ssh_elliptic_curve":  SSHEllipticCurves,
	"operator_region":     OperatorRegions,
	"operator_feature":    OperatorFeatures,
	"event_type":          EventSourceTypes,
}
