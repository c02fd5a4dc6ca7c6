// Package cluster is the internal link between replicas: a replica that receives traffic
// for a tunnel whose agent is connected to another replica opens the stream there. One TCP
// connection carries one visitor stream: the server's challenge, the client's answer and
// the server's (each proves knowledge of the link key, derived from the shared secret key),
// the agent protocol's stream header, the dial result as the agent protocol has it, then
// the visitor's bytes both ways. The server opens streams to its own tunnels only, so a
// forwarded stream is never forwarded again.
package cluster

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
)

// Purpose is what the link key is derived for (sealing.Keyring.Derive).
const Purpose = "cluster link"

// KeysFor returns the link's keys, derived from the store's secret keys: every replica with
// the same secret key derives the same.
func KeysFor(secret *sealing.Keyring) (*sealing.Keyring, error) {
	if secret == nil {
		return nil, errors.New("cluster: the link needs the secret key")
	}
	return secret.Derive(Purpose)
}

// StreamOffline is the dial result of a stream to a tunnel that the replica does not hold
// (any more): beside the agent protocol's StreamConnected, StreamUnreachable and
// StreamRefused.
const StreamOffline = 3

// magic opens the server's challenge: the protocol and its version.
var magic = []byte("WCL1")

const (
	nonceSize = 32
	maxSealed = 256 // a sealed answer is about 100 bytes
	sealKind  = "cluster link"
)

// ErrUnauthenticated: the peer did not prove it holds the link key.
var ErrUnauthenticated = errors.New("cluster: the peer did not authenticate")

// serverHandshake challenges the client on rw, checks its answer and answers its challenge.
func serverHandshake(rw io.ReadWriter, keys *sealing.Keyring) error {
	ns := nonce()
	if _, err := rw.Write(append(bytes.Clone(magic), ns...)); err != nil {
		return err
	}
	got, err := readSealed(rw, keys, "client")
	if err != nil {
		return err
	}
	if len(got) != 2*nonceSize || !bytes.Equal(got[:nonceSize], ns) {
		return ErrUnauthenticated
	}
	nc := got[nonceSize:]
	return writeSealed(rw, keys, "server", append(bytes.Clone(nc), ns...))
}

// clientHandshake answers the server's challenge on rw and checks the server's answer to
// its own.
func clientHandshake(rw io.ReadWriter, keys *sealing.Keyring) error {
	pre := make([]byte, len(magic)+nonceSize)
	if _, err := io.ReadFull(rw, pre); err != nil {
		return fmt.Errorf("cluster: reading the challenge: %w", err)
	}
	if !bytes.Equal(pre[:len(magic)], magic) {
		return errors.New("cluster: the peer does not speak the cluster link protocol")
	}
	ns, nc := pre[len(magic):], nonce()
	if err := writeSealed(rw, keys, "client", append(bytes.Clone(ns), nc...)); err != nil {
		return err
	}
	got, err := readSealed(rw, keys, "server")
	if err != nil {
		return err
	}
	if !bytes.Equal(got, append(bytes.Clone(nc), ns...)) {
		return ErrUnauthenticated
	}
	return nil
}

func nonce() []byte {
	b := make([]byte, nonceSize)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return b
}

// writeSealed writes plain sealed for role, after its length (uint16, big-endian).
func writeSealed(w io.Writer, keys *sealing.Keyring, role string, plain []byte) error {
	v := keys.Seal(sealKind, role, plain)
	b := binary.BigEndian.AppendUint16(nil, uint16(len(v)))
	_, err := w.Write(append(b, v...))
	return err
}

// readSealed reads a value that writeSealed wrote for role and opens it; one that is not
// sealed, or not with the link key for that role, is ErrUnauthenticated.
func readSealed(r io.Reader, keys *sealing.Keyring, role string) ([]byte, error) {
	var n [2]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, fmt.Errorf("cluster: reading the handshake: %w", err)
	}
	size := binary.BigEndian.Uint16(n[:])
	if size > maxSealed {
		return nil, ErrUnauthenticated
	}
	v := make([]byte, size)
	if _, err := io.ReadFull(r, v); err != nil {
		return nil, fmt.Errorf("cluster: reading the handshake: %w", err)
	}
	if !sealing.Sealed(v) { // Open passes plaintext through
		return nil, ErrUnauthenticated
	}
	plain, err := keys.Open(sealKind, role, v)
	if err != nil {
		return nil, ErrUnauthenticated
	}
	return plain, nil
}
