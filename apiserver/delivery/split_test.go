package delivery

import (
	"slices"
	"testing"
)

func TestSplitBatches(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sizes    []int
		maxItems int
		maxBytes int
		want     [][2]int
	}{
		{"none", nil, 10, 100, nil},
		{"one batch", []int{10, 10, 10}, 10, 100, [][2]int{{0, 3}}},
		{"item count", []int{1, 1, 1, 1, 1}, 2, 100, [][2]int{{0, 2}, {2, 4}, {4, 5}}},
		// [ 40 , 40 ] is 83 bytes: a third item of 40 would make 124.
		{"bytes with brackets and commas", []int{40, 40, 40}, 10, 123, [][2]int{{0, 2}, {2, 3}}},
		{"exactly full", []int{40, 40, 40}, 10, 124, [][2]int{{0, 3}}},
		{"oversized item alone", []int{10, 500, 10}, 10, 100, [][2]int{{0, 1}, {1, 2}, {2, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := splitBatches(tc.sizes, batchLimits{maxItems: tc.maxItems, maxBytes: tc.maxBytes, jsonArray: true}); !slices.Equal(got, tc.want) {
				t.Errorf("splitBatches = %v, want %v", got, tc.want)
			}
		})
	}
}
