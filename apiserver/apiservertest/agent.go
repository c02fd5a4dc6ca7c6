package apiservertest

import (
	"context"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
)

// Agent is a real agent (internal/agentclient, what warren-agent runs) connected to a test
// server.
type Agent struct {
	*agentclient.Client
	done chan struct{}
	err  error
}

// StartAgent runs an agent with cfg against the server until the test ends (ServerURL
// defaults to the server's) and waits until the server has accepted all its binds.
func (s *Server) StartAgent(t testing.TB, cfg agentclient.Config) *Agent {
	t.Helper()
	if cfg.ServerURL == "" {
		cfg.ServerURL = s.URL
	}
	client, err := agentclient.New(cfg)
	if err != nil {
		t.Fatalf("agent config: %v", err)
	}
	a := &Agent{Client: client, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(a.done)
		a.err = client.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-a.done })
	if st := a.WaitFor(t, "the agent is ready", func(s agentclient.State) bool { return s.Ready }); len(st.Refused) > 0 {
		t.Fatalf("the server refused binds: %+v", st.Refused)
	}
	return a
}

// WaitFor waits until the agent's state satisfies cond; it fails the test if the agent
// exits first, and a minute bounds a hung test.
func (a *Agent) WaitFor(t testing.TB, what string, cond func(agentclient.State) bool) agentclient.State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		select {
		case <-a.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	st, err := a.Wait(ctx, cond)
	if err != nil {
		select {
		case <-a.done:
			t.Fatalf("waiting until %s: the agent exited: %v", what, a.err)
		default:
		}
		t.Fatalf("waiting until %s: %v", what, err)
	}
	return st
}

// Exited waits until the agent's Run returns (after a stop command, say) and returns its
// result; a minute bounds a hung test.
func (a *Agent) Exited(t testing.TB) error {
	t.Helper()
	select {
	case <-a.done:
		return a.err
	case <-time.After(time.Minute):
		t.Fatal("the agent did not exit")
		return nil
	}
}

// WaitUntil polls cond until it holds, for what the server does just after an agent's side
// of a change (a session ends when the server sees the connection close); a minute bounds a
// hung test.
func WaitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// WaitState waits until agent's state satisfies cond, for agents a test runs itself; a
// minute bounds a hung test.
func WaitState(t testing.TB, agent *agentclient.Client, what string, cond func(agentclient.State) bool) agentclient.State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := agent.Wait(ctx, cond)
	if err != nil {
		t.Fatalf("waiting until %s: %v", what, err)
	}
	return st
}
