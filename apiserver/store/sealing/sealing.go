// Package sealing encrypts the store's server-only data (private keys, token hashes,
// destination secrets, replayed answers) at rest with AES-256-GCM.
//
// A sealed value is an envelope: a magic prefix that no JSON text (what the server keeps in
// the secret column) can start with, the ID of the key that sealed it, a random 96-bit nonce
// and the GCM ciphertext. The row's kind and ID are the additional data, so a sealed value
// copied into another row does not open. A Keyring holds the current key, which seals every
// new value, and previous keys, which still open values sealed before a rotation. A value
// without the prefix is plaintext from before sealing existed and is read as it is.
package sealing

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// KeySize is the length of a key: AES-256.
const KeySize = 32

// magic starts every sealed value: a NUL byte (never the start of JSON text) and a version.
var magic = []byte("\x00WS1")

const (
	idSize    = 4
	nonceSize = 12
	header    = 4 + idSize + nonceSize // len(magic) + key ID + nonce
)

// Keyring seals with its current key and opens with any of its keys.
type Keyring struct {
	current key
	all     map[[idSize]byte]key
}

type key struct {
	id   [idSize]byte
	aead cipher.AEAD
	raw  []byte // for Derive
}

// NewKeyring returns a keyring that seals with current and also opens values sealed with
// any of previous. Each key is KeySize random bytes.
func NewKeyring(current []byte, previous ...[]byte) (*Keyring, error) {
	k := &Keyring{all: make(map[[idSize]byte]key)}
	for i, raw := range append([][]byte{current}, previous...) {
		kk, err := newKey(raw)
		if err != nil {
			if i == 0 {
				return nil, fmt.Errorf("the secret key: %w", err)
			}
			return nil, fmt.Errorf("previous secret key %d: %w", i, err)
		}
		if i == 0 {
			k.current = kk
		}
		if _, dup := k.all[kk.id]; !dup {
			k.all[kk.id] = kk
		}
	}
	return k, nil
}

func newKey(raw []byte) (key, error) {
	if len(raw) != KeySize {
		return key{}, fmt.Errorf("is %d bytes; it must be %d", len(raw), KeySize)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return key{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return key{}, err
	}
	// The ID is a hash of the key under a label of its own: it names the key in the
	// envelope and in messages without saying anything about the key itself.
	sum := sha256.Sum256(append([]byte("warren secret key id\x00"), raw...))
	kk := key{aead: aead, raw: raw}
	copy(kk.id[:], sum[:])
	return kk, nil
}

// Derive returns the keyring of keys derived (HKDF-SHA256) from k's for one purpose, such as
// the edge's session cookies: a key is never used for two purposes, and every replica with
// the same secret keys derives the same ones (previous keys included, so a rotation does not
// end what the derived keys sealed).
func (k *Keyring) Derive(purpose string) (*Keyring, error) {
	current, err := hkdf.Key(sha256.New, k.current.raw, nil, "warren derived key\x00"+purpose, KeySize)
	if err != nil {
		return nil, err
	}
	var previous [][]byte
	for _, kk := range k.all {
		if kk.id != k.current.id {
			p, err := hkdf.Key(sha256.New, kk.raw, nil, "warren derived key\x00"+purpose, KeySize)
			if err != nil {
				return nil, err
			}
			previous = append(previous, p)
		}
	}
	return NewKeyring(current, previous...)
}

// Secrets returns k's keys, the current one first and the previous ones in the order of
// their IDs: for a derived keyring whose purpose needs key material rather than sealing
// (the cluster link's certificate keys). Every replica with the same secret keys gets the
// same.
func (k *Keyring) Secrets() [][]byte {
	out := [][]byte{bytes.Clone(k.current.raw)}
	var ids [][idSize]byte
	for id := range k.all {
		if id != k.current.id {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b [idSize]byte) int { return bytes.Compare(a[:], b[:]) })
	for _, id := range ids {
		out = append(out, bytes.Clone(k.all[id].raw))
	}
	return out
}

// GenerateKey returns a new random key.
func GenerateKey() []byte {
	b := make([]byte, KeySize)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return b
}

// EncodeKey is a key as --secret-key takes it: standard base64.
func EncodeKey(raw []byte) string { return base64.StdEncoding.EncodeToString(raw) }

// ParseKey reads a base64 key (standard or URL alphabet, padded or not, surrounding white
// space ignored). Its errors never quote the input.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if raw, err := enc.DecodeString(s); err == nil {
			if len(raw) != KeySize {
				return nil, fmt.Errorf("the key is %d bytes; it must be %d (base64 of 32 random bytes, e.g. from 'warren-apiserver secret-key')", len(raw), KeySize)
			}
			return raw, nil
		}
	}
	return nil, errors.New("the key is not base64 (it must be base64 of 32 random bytes, e.g. from 'warren-apiserver secret-key')")
}

// KeyID names the current key in logs and messages (never the key itself).
func (k *Keyring) KeyID() string { return hex.EncodeToString(k.current.id[:]) }

// additional is the GCM additional data: the value belongs to this row and no other.
func additional(kind, id string) []byte { return []byte(kind + "\x00" + id) }

// Seal encrypts plain for the row (kind, id) with the current key. Empty stays empty: a row
// without server-only data has nothing to hide.
func (k *Keyring) Seal(kind, id string, plain []byte) []byte {
	if len(plain) == 0 {
		return plain
	}
	out := make([]byte, header, header+len(plain)+k.current.aead.Overhead())
	copy(out, magic)
	copy(out[len(magic):], k.current.id[:])
	nonce := out[len(magic)+idSize : header]
	_, _ = rand.Read(nonce)
	return k.current.aead.Seal(out, nonce, plain, additional(kind, id))
}

// Sealed reports whether v is a sealed value (rather than plaintext from before sealing).
func Sealed(v []byte) bool { return bytes.HasPrefix(v, magic) }

// Current reports whether v is sealed with the current key: a rotation leaves it alone.
func (k *Keyring) Current(v []byte) bool {
	return Sealed(v) && len(v) >= header && bytes.Equal(v[len(magic):len(magic)+idSize], k.current.id[:])
}

// KeyError says why a sealed value does not open: it was sealed with a key this keyring
// does not hold, or it fails authentication (another key with a colliding ID, a damaged
// value, or a value moved from another row).
type KeyError struct {
	Kind, ID string
	KeyID    string // the ID of the key the value names
	Unknown  bool   // no key of the keyring has that ID
}

func (e *KeyError) Error() string {
	if e.Unknown {
		return fmt.Sprintf("sealing: the secret of %s %s was sealed with key %s, which is neither the secret key nor one of the previous secret keys", e.Kind, e.ID, e.KeyID)
	}
	return fmt.Sprintf("sealing: the secret of %s %s does not open with key %s: the value is damaged or belongs to another row", e.Kind, e.ID, e.KeyID)
}

// ErrNoKeyring: a sealed value met a store that has no keys.
var ErrNoKeyring = errors.New("sealing: the database holds sealed secrets but no secret key is configured")

// Open returns the plaintext of v, a value of the row (kind, id). Plaintext from before
// sealing comes back as it is. k may be nil: then only plaintext opens.
func (k *Keyring) Open(kind, id string, v []byte) ([]byte, error) {
	if !Sealed(v) {
		return v, nil
	}
	if k == nil {
		return nil, ErrNoKeyring
	}
	if len(v) < header {
		return nil, &KeyError{Kind: kind, ID: id, KeyID: "?"}
	}
	var kid [idSize]byte
	copy(kid[:], v[len(magic):])
	kk, ok := k.all[kid]
	if !ok {
		return nil, &KeyError{Kind: kind, ID: id, KeyID: hex.EncodeToString(kid[:]), Unknown: true}
	}
	plain, err := kk.aead.Open(nil, v[len(magic)+idSize:header], v[header:], additional(kind, id))
	if err != nil {
		return nil, &KeyError{Kind: kind, ID: id, KeyID: hex.EncodeToString(kid[:])}
	}
	return plain, nil
}
