// Package openapiclient is the Go client that oapi-codegen (pinned in tools/oapi-codegen)
// generates from the committed OpenAPI document, for tests only: it shows that a third-party
// generator reads the document as the server means it (client_test.go).
package openapiclient

//go:generate go tool -modfile=../../../tools/oapi-codegen/go.mod oapi-codegen -config oapi-codegen.yaml -o client.gen.go ../../testdata/openapi.json
