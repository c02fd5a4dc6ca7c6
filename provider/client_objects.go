package provider

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// A resource or data source of a family finds its calls on the client by the family's API
// type: the one collection of the client (client.Collection, View) whose Get answers a *T.
// So a declaration names no accessor of its own; those that read elsewhere (routes, under
// their edge) still give theirs.

type (
	objectGetter[T any] interface {
		Get(context.Context, string) (*T, error)
	}
	objectLister[T any] interface {
		List(context.Context, client.ListOptions) ([]T, error)
	}
	objectDeleter interface {
		Delete(context.Context, string) error
	}
)

// collectionFields caches, per API type, the index of its collection among the client's fields.
var collectionFields sync.Map // reflect.Type -> int

// collectionOf is the client's collection of T objects; it panics when the client has none
// (a declaration the tests of every family would catch).
func collectionOf[T any](c *client.Client) any {
	typ := reflect.TypeFor[T]()
	v := reflect.ValueOf(c).Elem()
	if i, ok := collectionFields.Load(typ); ok {
		return v.Field(i.(int)).Interface()
	}
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if _, ok := v.Field(i).Interface().(objectGetter[T]); ok {
			collectionFields.Store(typ, i)
			return v.Field(i).Interface()
		}
	}
	panic(fmt.Sprintf("the client has no collection of %s", typ))
}

// getOf, listOf and deleteOf are the Get, List and Delete of the client's collection of T.
func getOf[T any](c *client.Client) getFunc[T] { return collectionOf[T](c).(objectGetter[T]).Get }
func listOf[T any](c *client.Client) listFunc[T] {
	return collectionOf[T](c).(objectLister[T]).List
}
func deleteOf[T any](c *client.Client) func(context.Context, string) error {
	return collectionOf[T](c).(objectDeleter).Delete
}
