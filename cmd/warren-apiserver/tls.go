package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// certificate is the server's TLS key pair, read from --tls-cert and --tls-key. Every
// handshake takes the current pair (GetCertificate), so a reload reaches new connections at
// once and leaves open ones alone.
type certificate struct {
	certFile, keyFile string
	current           atomic.Pointer[tls.Certificate]
}

// loadCertificate reads both files, or says why it cannot: the files are unreadable, not PEM,
// or the key does not belong to the certificate. The error never quotes the key.
func loadCertificate(certFile, keyFile string) (*certificate, error) {
	c := &certificate{certFile: certFile, keyFile: keyFile}
	pair, err := c.read()
	if err != nil {
		return nil, err
	}
	c.current.Store(pair)
	return c, nil
}

func (c *certificate) read() (*tls.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return nil, fmt.Errorf("cannot load the TLS key pair %s, %s: %w", c.certFile, c.keyFile, err)
	}
	// Leaf is set by LoadX509KeyPair since Go 1.23; the log lines below read it.
	if pair.Leaf == nil {
		return nil, fmt.Errorf("cannot load the TLS key pair %s, %s: no certificate", c.certFile, c.keyFile)
	}
	return &pair, nil
}

// reload replaces the pair with the files' current content; when they do not load, the old
// pair stays.
func (c *certificate) reload() (*tls.Certificate, error) {
	pair, err := c.read()
	if err != nil {
		return nil, err
	}
	c.current.Store(pair)
	return pair, nil
}

// logCertificate logs msg with what the pair names and when it ends, never the key, and
// warns when it has already ended, since clients refuse it.
func logCertificate(log *zap.Logger, msg string, pair *tls.Certificate, now time.Time) {
	fields := []zap.Field{
		zap.String("subject", pair.Leaf.Subject.String()),
		zap.Strings("dns_names", pair.Leaf.DNSNames),
		zap.Time("not_after", pair.Leaf.NotAfter),
	}
	log.Info(msg, fields...)
	if now.After(pair.Leaf.NotAfter) {
		log.Warn("the TLS certificate has expired; clients will refuse it", fields...)
	}
}

// tlsConfig serves the current pair over TLS 1.2 or later.
func (c *certificate) tlsConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return c.current.Load(), nil
		},
	}
}

// checkTLS loads the pair named by --tls-cert and --tls-key, which go together.
func (cfg *config) checkTLS() error {
	switch {
	case cfg.tlsCert == "" && cfg.tlsKey == "":
		return nil
	case cfg.tlsCert == "":
		return errors.New("--tls-key is set without --tls-cert; give both or neither")
	case cfg.tlsKey == "":
		return errors.New("--tls-cert is set without --tls-key; give both or neither")
	}
	var err error
	cfg.cert, err = loadCertificate(cfg.tlsCert, cfg.tlsKey)
	return err
}

// reloadOnSIGHUP reloads the pair on every SIGHUP until stop is called. The handler is
// installed only while serving with TLS, so without TLS SIGHUP keeps its default meaning.
func (c *certificate) reloadOnSIGHUP(log *zap.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-done:
				return
			case <-hup:
				if pair, err := c.reload(); err != nil {
					log.Error("TLS certificate reload failed; serving the previous one", zap.Error(err))
				} else {
					logCertificate(log, "TLS certificate reloaded", pair, time.Now())
				}
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
		<-ended // no reload logs after the logger is synced
	}
}
