package main

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// checkCluster refuses a cluster link that the other replicas could not reach.
func (cfg *config) checkCluster() error {
	if cfg.clusterListen == "" {
		if cfg.clusterAdvertise != "" {
			return errors.New("--cluster-advertise needs --cluster-listen")
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(cfg.clusterListen); err != nil {
		return fmt.Errorf("--cluster-listen: %w", err)
	}
	if cfg.clusterAdvertise == "" {
		host, _, _ := net.SplitHostPort(cfg.clusterListen)
		if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
			return fmt.Errorf("--cluster-listen %s names no host the other replicas can reach: give --cluster-advertise", cfg.clusterListen)
		}
		return nil
	}
	host, port, err := net.SplitHostPort(cfg.clusterAdvertise)
	if err != nil || host == "" || port == "" || port == "0" {
		return fmt.Errorf("--cluster-advertise %s is not host:port", cfg.clusterAdvertise)
	}
	return nil
}

// clusterLink is the address the other replicas reach the link at; "" without one.
func (cfg *config) clusterLink() string {
	if cfg.clusterAdvertise != "" {
		return cfg.clusterAdvertise
	}
	return cfg.clusterListen
}

// listenCluster opens the link's listener; nil without --cluster-listen. A listen address
// with port 0 is advertised with the port it got.
func (cfg *config) listenCluster() (net.Listener, error) {
	if cfg.clusterListen == "" {
		return nil, nil
	}
	l, err := net.Listen("tcp", cfg.clusterListen)
	if err != nil {
		return nil, fmt.Errorf("--cluster-listen: %w", err)
	}
	if cfg.clusterAdvertise == "" {
		host, _, _ := net.SplitHostPort(cfg.clusterListen)
		_, port, _ := net.SplitHostPort(l.Addr().String())
		cfg.clusterListen = net.JoinHostPort(host, port)
	}
	return l, nil
}
