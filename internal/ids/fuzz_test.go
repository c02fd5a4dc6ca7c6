package ids

import (
	"strings"
	"testing"
)

func FuzzSplitToken(f *testing.F) {
	// Fixed seeds, so every run checks the same inputs: a KSUID body and a base62 secret.
	const body, secret = "0ujsswThIGTUYm2K8FjOOfXtY1K", "Ab3dE6gH9jK2mN5pQ8sT1"
	valid := body + "_" + secret
	for _, s := range []string{
		valid, "ak_" + valid, body, body + "_", "_" + secret, body + "_" + secret + "_", body + "_" + secret[1:],
		body + "_" + secret + "x", body[1:] + "_" + secret, strings.ToLower(body) + "_" + secret,
		body + "_" + strings.Replace(secret, secret[:1], "-", 1), body + "_" + secret[:20] + "é",
		strings.Repeat("z", BodyLen) + "_" + secret, strings.Repeat("0", BodyLen) + "_" + secret, "", "_",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		body, secret, ok := SplitToken(token)
		hash := HashToken(token)
		if len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "" || !TokenMatches(token, hash) {
			t.Fatalf("HashToken(%q) = %q: not 64 hex digits matching its token", token, hash)
		}
		if TokenMatches(token+"x", hash) {
			t.Fatalf("a longer token matches the hash of %q", token)
		}
		if !ok {
			if body != "" || secret != "" {
				t.Fatalf("SplitToken(%q) refused but returned %q, %q", token, body, secret)
			}
			return
		}
		// An accepted token is exactly its two parts, and its first part names an ID.
		if body+"_"+secret != token || len(secret) != SecretLen || !Valid(APIKey+body, APIKey) {
			t.Fatalf("SplitToken(%q) = %q, %q", token, body, secret)
		}
		if Body(APIKey+body, APIKey) != body {
			t.Fatalf("Body does not give back %q", body)
		}
	})
}

func FuzzValid(f *testing.F) {
	for _, s := range []string{"ak_0ujsswThIGTUYm2K8FjOOfXtY1K", "cr_0ujsswThIGTUYm2K8FjOOfXtY1K", "ak_", "ak_" + strings.Repeat("z", BodyLen), "AK_x", "", "ak_0ujsswThIGTUYm2K8FjOOfXtY1"} {
		f.Add(s, APIKey)
	}
	f.Add("service_0ujsswThIGTUYm2K8FjOOfXtY1K", ServiceUser)
	f.Add("bot_0ujsswThIGTUYm2K8FjOOfXtY1K", ServiceUser)
	f.Fuzz(func(t *testing.T, id, prefix string) {
		if !Valid(id, prefix) {
			return
		}
		body := Body(id, prefix)
		if prefix+body != id || len(body) != BodyLen {
			t.Fatalf("Valid(%q, %q) but its body is %q", id, prefix, body)
		}
	})
}
