package ids

import (
	"strings"
	"testing"
	"time"
)

func TestNewIsPrefixedAndIncreasing(t *testing.T) {
	prev := New(APIKey)
	for range 1000 {
		id := New(APIKey)
		if !Valid(id, APIKey) {
			t.Fatalf("%q is not a valid API key ID", id)
		}
		if id <= prev {
			t.Fatalf("IDs not increasing: %q after %q", id, prev)
		}
		prev = id
	}
}

func TestTokens(t *testing.T) {
	id := New(APIKey)
	token := NewToken(id)
	body, secret, ok := SplitToken(token)
	if !ok || body != Body(id, APIKey) || len(secret) != SecretLen {
		t.Fatalf("SplitToken(%q) = %q, %q, %v", token, body, secret, ok)
	}
	if !TokenMatches(token, HashToken(token)) || TokenMatches(token+"x", HashToken(token)) {
		t.Fatal("TokenMatches is wrong")
	}
	if HashToken(token) == token || strings.Contains(HashToken(token), secret) {
		t.Fatal("the hash reveals the token")
	}
	for _, bad := range []string{"", "notarealtoken", id, body, body + "_", body + "_short", "x" + token[1:len(token)-1], body + "_" + strings.Repeat("!", SecretLen)} {
		if _, _, ok := SplitToken(bad); ok {
			t.Errorf("SplitToken(%q) accepted a malformed token", bad)
		}
	}
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		New(APIKey)
	}
}

func TestAtSortsByItsTime(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	before, at, later := At(IdempotencyKey, t0.Add(-time.Second)), At(IdempotencyKey, t0), At(IdempotencyKey, t0.Add(time.Second))
	cut := Before(IdempotencyKey, t0)
	if !(before < cut && cut <= at && at < later) {
		t.Fatalf("order: %q %q %q %q", before, cut, at, later)
	}
	if !Valid(at, IdempotencyKey) || !Valid(cut, IdempotencyKey) {
		t.Fatalf("not valid IDs: %q %q", at, cut)
	}
}
