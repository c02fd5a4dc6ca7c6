package apiservertest

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Answer is an answer read whole: its status, body and Idempotent-Replayed header.
type Answer struct {
	Status         int
	Body, Replayed string
}

// KeyedPOST sends a JSON POST with an Idempotency-Key to the server at base. It may run in
// any goroutine (it never stops the test): a request that fails is an Answer of status 0
// whose Body is the error.
func KeyedPOST(base, token, path, body, key string) Answer {
	req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Service-Version", "2")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(api.IdempotencyKeyHeader, key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Answer{Body: err.Error()}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return Answer{resp.StatusCode, string(data), resp.Header.Get(api.IdempotentReplayedHeader)}
}

// CheckOneCreation fails t unless answers are one creation (201) and its replays, byte for
// byte the same, marked Idempotent-Replayed.
func CheckOneCreation(t testing.TB, answers []Answer) {
	t.Helper()
	created, replays := "", 0
	for _, a := range answers {
		if a.Status != http.StatusCreated || (created != "" && a.Body != created) {
			t.Fatalf("answer %d %s, want 201 %s", a.Status, a.Body, created)
		}
		created = a.Body
		if a.Replayed == "true" {
			replays++
		}
	}
	if replays != len(answers)-1 {
		t.Fatalf("%d replays of %d answers, want all but one", replays, len(answers))
	}
}
