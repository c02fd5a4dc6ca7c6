package agentplane

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// Session commands (POST /tunnel_sessions/{id}/restart|stop|update, details.md §6.12) are
// delivered to the connected agent and answered from its CommandResult. The replica that
// holds the agent's socket sends it directly; any other replica writes the command to the
// store, where the holder's poller picks it up, sends it and writes the agent's answer back.

// Command answers other than success.
var (
	errCommandTimeout = errors.New("the agent did not answer in time")
	errAgentGone      = errors.New("the agent's connection ended before it answered")
)

// commandFailureCodes are the catalogue codes of a command the agent reports failed without
// a code of its own (details.md §5.3).
var commandFailureCodes = map[string]string{
	agentproto.CommandStop:    "ERR_807",
	agentproto.CommandRestart: "ERR_808",
	agentproto.CommandUpdate:  "ERR_809",
}

// storedCommand is a command on its way between replicas (kind agent_command).
type storedCommand struct {
	SessionID string              `json:"session_id"`
	Command   string              `json:"command"`
	State     string              `json:"state"` // pending, sent, done
	Result    *agentproto.Message `json:"result,omitempty"`
	Failed    string              `json:"failed,omitempty"` // the holder's error, when the agent did not answer
}

// Command runs a session command (restart, stop, update) on the session's agent, wherever
// it is connected, and returns the API's error when it failed or could not be delivered.
func (h *Plane) Command(ctx context.Context, sess *store.Object, name string) error {
	ctx, cancel := context.WithTimeout(ctx, h.opts.CommandTimeout)
	defer cancel()
	var answer agentproto.Message
	var err error
	if a := h.get(sess.ID); a != nil {
		answer, err = a.command(ctx, name)
	} else {
		answer, err = h.remoteCommand(ctx, sess, name)
	}
	return h.commandError(name, answer, err)
}

// commandError turns the agent's answer into the API's: nil on success, 400 with the
// agent's code (or the command's failure code) when it failed, ERR_810 when it could not be
// reached: 504 after the timeout, 502 when its connection ended first.
func (h *Plane) commandError(name string, m agentproto.Message, err error) error {
	switch {
	case errors.Is(err, errCommandTimeout) || errors.Is(err, context.DeadlineExceeded):
		return apierr.New(http.StatusGatewayTimeout, "ERR_810", "The agent did not answer the %s command within %s.", name, h.opts.CommandTimeout)
	case errors.Is(err, errAgentGone):
		return apierr.New(http.StatusBadGateway, "ERR_810", "The agent's connection ended before it answered the %s command.", name)
	case err != nil:
		return err
	case m.ErrorCode != "" || m.Error != "":
		code, msg := m.ErrorCode, m.Error
		if code == "" {
			code = commandFailureCodes[name]
		}
		if msg == "" {
			msg = "The agent could not " + name + "."
		}
		return apierr.BadRequest(code, "%s", msg)
	}
	return nil
}

// command sends a command to this replica's agent and waits for its CommandResult.
func (a *agentConn) command(ctx context.Context, name string) (agentproto.Message, error) {
	id := ids.New(ids.AgentCommand)
	ch := make(chan agentproto.Message, 1)
	a.mu.Lock()
	a.pending[id] = pendingCommand{name: name, answer: ch}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.pending, id)
		a.mu.Unlock()
	}()
	if err := a.send(agentproto.Message{Type: agentproto.TypeCommand, ID: id, Command: name}); err != nil {
		select {
		case <-a.mux.Done():
			// A write may fail for the session's end and still have gone out: the agent
			// answers a stop, then closes, maybe before the write learns it was sent. Its
			// answer, if it came, is read before the read loop ends (done).
		default:
			return agentproto.Message{}, errAgentGone
		}
	}
	return awaitAnswer(ctx, ch, a.done)
}

// awaitAnswer waits for the answer on ch until the connection ends (done) or ctx does. An
// agent answers restart and stop, then closes: the answer may already be in ch when done
// is closed too, and select picks among ready cases at random, so ch is looked at again.
func awaitAnswer(ctx context.Context, ch <-chan agentproto.Message, done <-chan struct{}) (agentproto.Message, error) {
	select {
	case m := <-ch:
		return m, nil
	case <-done:
		select {
		case m := <-ch:
			return m, nil
		default:
			return agentproto.Message{}, errAgentGone
		}
	case <-ctx.Done():
		return agentproto.Message{}, errCommandTimeout
	}
}

// remoteCommand hands a command to the replica holding the session through the store and
// waits for the answer it writes back. The command row is deleted either way.
func (h *Plane) remoteCommand(ctx context.Context, sess *store.Object, name string) (agentproto.Message, error) {
	id := ids.New(ids.AgentCommand)
	doc, _ := json.Marshal(storedCommand{SessionID: sess.ID, Command: name, State: "pending"})
	err := h.store.Write(ctx, func(tx store.Tx) error {
		return tx.Insert(ctx, &store.Object{Kind: kinds.AgentCommand, ID: id, AccountID: sess.AccountID, Doc: doc, Refs: []string{h.replica}})
	})
	if err != nil {
		return agentproto.Message{}, err
	}
	defer func() {
		// The request may have ended: the row must go all the same.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.store.Write(ctx, func(tx store.Tx) error {
			if err := tx.Delete(ctx, kinds.AgentCommand, id); err != nil && !isNotFound(err) {
				return err
			}
			return nil
		})
	}()
	poll := time.NewTicker(h.opts.CommandPoll)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return agentproto.Message{}, errCommandTimeout
		case <-poll.C:
		}
		var cmd storedCommand
		var sessionGone bool
		var rowGone bool
		err := h.store.Read(ctx, func(tx store.Tx) error {
			o, err := tx.Get(ctx, kinds.AgentCommand, id)
			if isNotFound(err) {
				rowGone = true // the sweep of a dead replica took it
				return nil
			}
			if err != nil {
				return err
			}
			if _, err := tx.Get(ctx, kinds.TunnelSession, sess.ID); isNotFound(err) {
				sessionGone = true
			} else if err != nil {
				return err
			}
			return json.Unmarshal(o.Doc, &cmd)
		})
		switch {
		case ctx.Err() != nil:
			return agentproto.Message{}, errCommandTimeout
		case err != nil:
			return agentproto.Message{}, err
		case rowGone:
			return agentproto.Message{}, errAgentGone
		case cmd.State == "done" && cmd.Result != nil:
			return *cmd.Result, nil
		// A command sent may still be answered after the session ended (stop): its
		// holder writes it done either way.
		case cmd.State == "done" || sessionGone && cmd.State == "pending":
			return agentproto.Message{}, errAgentGone
		}
	}
}

// pollCommands runs on every replica every CommandPoll: it looks for commands that other replicas stored for
// the agents connected here, and delivers them.
func (h *Plane) pollCommands() {
	accounts := map[string]bool{}
	h.mu.Lock()
	for _, a := range h.conns {
		accounts[a.accountID] = true
	}
	h.mu.Unlock()
	for account := range accounts {
		if err := h.takeCommands(account); err != nil && h.ctx.Err() == nil {
			h.logStoreError(h.log, "agent commands", err, zap.String("account_id", account))
		}
	}
}

// takeCommands claims the pending commands of an account's sessions held here (state
// pending -> sent, in a write transaction, so one replica sends each) and sends them.
func (h *Plane) takeCommands(accountID string) error {
	ctx := h.ctx
	var pending []*store.Object
	err := h.store.Read(ctx, func(tx store.Tx) (err error) {
		pending, err = tx.List(ctx, store.ListQuery{Kind: kinds.AgentCommand, AccountID: accountID})
		return err
	})
	if err != nil {
		return err
	}
	for _, o := range pending {
		var cmd storedCommand
		if err := json.Unmarshal(o.Doc, &cmd); err != nil {
			return err
		}
		a := h.get(cmd.SessionID)
		if cmd.State != "pending" || a == nil {
			continue
		}
		claimed := false
		err := h.store.Write(ctx, func(tx store.Tx) error {
			claimed = false
			cur, err := tx.Get(ctx, kinds.AgentCommand, o.ID)
			if isNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			var c storedCommand
			if err := json.Unmarshal(cur.Doc, &c); err != nil || c.State != "pending" {
				return err
			}
			c.State = "sent"
			cur.Doc, _ = json.Marshal(c)
			claimed = true
			return tx.Update(ctx, cur)
		})
		if err != nil {
			return err
		}
		if claimed {
			h.wg.Add(1)
			go h.deliverStored(a, o.ID, cmd)
		}
	}
	return nil
}

// deliverStored sends a stored command to the agent and writes its answer back.
func (h *Plane) deliverStored(a *agentConn, id string, cmd storedCommand) {
	defer h.wg.Done()
	ctx, cancel := context.WithTimeout(h.ctx, h.opts.CommandTimeout)
	m, err := a.command(ctx, cmd.Command)
	cancel()
	cmd.State = "done"
	if err != nil {
		cmd.Failed = err.Error()
	} else {
		cmd.Result = &m
	}
	doc, _ := json.Marshal(cmd)
	err = h.store.Write(h.ctx, func(tx store.Tx) error {
		cur, err := tx.Get(h.ctx, kinds.AgentCommand, id)
		if isNotFound(err) {
			return nil // the sender gave up
		}
		if err != nil {
			return err
		}
		cur.Doc = doc
		return tx.Update(h.ctx, cur)
	})
	if err != nil && h.ctx.Err() == nil {
		h.log.Error("agent command answer", zap.String("session_id", cmd.SessionID), zap.Error(err))
	}
}
