package session

import (
	"net/http"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
)

func TestCodecOpensOnlyForItsPurpose(t *testing.T) {
	ring, _ := sealing.NewKeyring(sealing.GenerateKey())
	keys, err := ring.Derive("edge sessions")
	if err != nil {
		t.Fatal(err)
	}
	c := NewCodec(keys)
	in := Session{RouteID: "rt_1", Identity: Identity{Provider: "oidc", Subject: "u1", Email: "a@example.com"}, Created: time.Unix(100, 0)}
	sealed, err := c.Seal("rt_1/session", in)
	if err != nil {
		t.Fatal(err)
	}
	var out Session
	if err := c.Open("rt_1/session", sealed, &out); err != nil || out.Identity.Email != in.Identity.Email || !out.Created.Equal(in.Created) {
		t.Fatalf("open: %v %+v", err, out)
	}
	if err := c.Open("rt_2/session", sealed, &out); err != ErrInvalid {
		t.Fatalf("another route's cookie opened: %v", err)
	}
	// Another replica with the same secret key derives the same keys; a rotation keeps them.
	again, _ := ring.Derive("edge sessions")
	if err := NewCodec(again).Open("rt_1/session", sealed, &out); err != nil {
		t.Fatalf("same secret key, other replica: %v", err)
	}
	other, _ := ring.Derive("something else")
	if err := NewCodec(other).Open("rt_1/session", sealed, &out); err != ErrInvalid {
		t.Fatalf("a key derived for another purpose opened it: %v", err)
	}
}

func TestSessionLive(t *testing.T) {
	now := time.Unix(10_000, 0)
	s := Session{Created: now.Add(-time.Hour), Seen: now.Add(-10 * time.Minute)}
	for _, tc := range []struct {
		l    Limits
		live bool
	}{
		{Limits{}, true},
		{Limits{Maximum: 2 * time.Hour}, true},
		{Limits{Maximum: time.Hour}, false},
		{Limits{Inactivity: 11 * time.Minute}, true},
		{Limits{Inactivity: 10 * time.Minute}, false},
	} {
		if got := s.Live(now, tc.l); got != tc.live {
			t.Errorf("%+v: live %v, want %v", tc.l, got, tc.live)
		}
	}
}

func TestStripHeadersAndCookies(t *testing.T) {
	r, _ := http.NewRequest("GET", "/", nil)
	r.Header.Set("warren-auth-user-email", "forged@example.com")
	r.Header.Set("Warren-Auth-Anything", "x")
	r.Header.Set("Cookie", "app=1; warren.warren_session=sealed; other=2")
	StripHeaders(r.Header)
	StripCookies(r, CookieName("warren."))
	if len(r.Header) != 1 || r.Header.Get("Cookie") != "app=1; other=2" {
		t.Fatalf("headers left: %v", r.Header)
	}
}
