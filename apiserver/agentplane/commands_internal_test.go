package agentplane

import (
	"context"
	"errors"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// An answer that arrived with the connection's end is the answer, every time: select
// alone would pick between the two at random.
func TestAwaitAnswerPrefersTheAnswer(t *testing.T) {
	done := make(chan struct{})
	close(done)
	for range 100 {
		ch := make(chan agentproto.Message, 1)
		ch <- agentproto.Message{Type: agentproto.TypeCommandResult, ID: "c1"}
		if m, err := awaitAnswer(context.Background(), ch, done); err != nil || m.ID != "c1" {
			t.Fatalf("awaitAnswer = %+v, %v", m, err)
		}
	}
	if _, err := awaitAnswer(context.Background(), make(chan agentproto.Message), done); !errors.Is(err, errAgentGone) {
		t.Fatalf("awaitAnswer without an answer on a closed connection = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := awaitAnswer(ctx, make(chan agentproto.Message), make(chan struct{})); !errors.Is(err, errCommandTimeout) {
		t.Fatalf("awaitAnswer after the deadline = %v", err)
	}
}
