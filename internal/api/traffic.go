package api

// Traffic is what an edge or an HTTPS edge route served over the last hour
// (GET <edge>/{id}/traffic, GET /edges/https/{edge_id}/routes/{id}/traffic): one bucket per
// minute, oldest first, the last one the minute under way. Every replica's traffic is in it.
type Traffic struct {
	EdgeID        string          `json:"edge_id"`
	RouteID       string          `json:"route_id,omitempty"`
	BucketSeconds int             `json:"bucket_seconds"`
	Buckets       []TrafficBucket `json:"buckets"`
}

// TrafficBucket is the traffic of one minute.
type TrafficBucket struct {
	Start string `json:"start"`
	// Requests are the HTTP requests answered; Status counts them by status class.
	Requests int64         `json:"requests"`
	Status   TrafficStatus `json:"status"`
	// LatencyMS are percentiles of the time to answer, in milliseconds, estimated from a
	// histogram; null when the minute had no request.
	LatencyMS *TrafficLatency `json:"latency_ms"`
	// Connections are the TCP and TLS connections of TCP and TLS edges.
	Connections int64 `json:"connections"`
	BytesIn     int64 `json:"bytes_in"`
	BytesOut    int64 `json:"bytes_out"`
}

// TrafficStatus counts requests by the class of their status.
type TrafficStatus struct {
	S1xx int64 `json:"1xx"`
	S2xx int64 `json:"2xx"`
	S3xx int64 `json:"3xx"`
	S4xx int64 `json:"4xx"`
	S5xx int64 `json:"5xx"`
}

// TrafficLatency are latency percentiles in milliseconds.
type TrafficLatency struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}
