// Command smd-oracle runs a sequence of server-side apply and update operations through
// Kubernetes' structured-merge-diff library and prints what the library decides after each
// one: the object, every manager's owned fields and, for a refused apply, the conflicts.
//
// Headway's tests compare its local store's server-side apply with these answers
// (tests/cluster/ssa_oracle/). Input on stdin, one JSON document:
//
//	{"operations": [{"manager": "a", "operation": "Apply", "object": {...}, "force": false}]}
//
// `operation` is "Apply" or "Update" (a full replacement, as a PUT). Output on stdout:
//
//	{"steps": [{"object": ..., "managed": [{"manager", "operation", "fields": [[elem...]]}],
//	            "conflicts": [{"manager", "operation", "field": [elem...]}], "error": ""}]}
//
// Fields are lists of path elements serialized as in managedFields' fieldsV1 (`f:spec`,
// `k:{"name":"web"}`, `v:"x"`). A refused operation leaves the state as it was, as the API
// server does. Managers are kept apart per operation, as the API server keys them, and
// metadata.name and .namespace are never owned (the API server strips them from the
// writer's fields after every write), so objects should carry them as a real one does.
package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v4/merge"
	"sigs.k8s.io/structured-merge-diff/v4/typed"
)

//go:embed schema.yaml
var schemaYAML string

const version = fieldpath.APIVersion("v1")

type operation struct {
	Manager   string                 `json:"manager"`
	Operation string                 `json:"operation"`
	Object    map[string]interface{} `json:"object"`
	Force     bool                   `json:"force"`
}

type input struct {
	Operations []operation `json:"operations"`
}

type managerKey struct {
	Manager   string `json:"manager"`
	Operation string `json:"operation"`
}

type ownedFields struct {
	Manager   string     `json:"manager"`
	Operation string     `json:"operation"`
	Fields    [][]string `json:"fields"`
}

type conflict struct {
	Manager   string   `json:"manager"`
	Operation string   `json:"operation"`
	Field     []string `json:"field"`
}

type step struct {
	Object    interface{}   `json:"object"`
	Managed   []ownedFields `json:"managed"`
	Conflicts []conflict    `json:"conflicts"`
	Error     string        `json:"error"`
}

type sameVersion struct{}

func (sameVersion) Convert(v *typed.TypedValue, _ fieldpath.APIVersion) (*typed.TypedValue, error) {
	return v, nil
}

func (sameVersion) IsMissingVersionError(error) bool { return false }

type state struct {
	objectType typed.ParseableType
	updater    *merge.Updater
	live       *typed.TypedValue
	managers   fieldpath.ManagedFields
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "smd-oracle: %v\n", err)
		os.Exit(2)
	}
}

func run() error {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		return fmt.Errorf("reading operations from stdin: %w", err)
	}
	parser, err := typed.NewParser(typed.YAMLObject(schemaYAML))
	if err != nil {
		return fmt.Errorf("schema.yaml: %w", err)
	}
	objectType := parser.Type("object")
	empty, err := objectType.FromUnstructured(map[string]interface{}{})
	if err != nil {
		return err
	}
	s := &state{objectType, &merge.Updater{Converter: sameVersion{}}, empty, fieldpath.ManagedFields{}}
	steps := make([]step, 0, len(in.Operations))
	for i, op := range in.Operations {
		result, err := s.do(op)
		if err != nil {
			return fmt.Errorf("operation %d: %w", i, err)
		}
		steps = append(steps, result)
	}
	return json.NewEncoder(os.Stdout).Encode(map[string][]step{"steps": steps})
}

// do runs one operation; the error is for what the caller got wrong, not for a refusal.
func (s *state) do(op operation) (step, error) {
	key, err := json.Marshal(managerKey{op.Manager, op.Operation})
	if err != nil {
		return step{}, err
	}
	object, err := s.objectType.FromUnstructured(op.Object)
	if err != nil {
		return s.current(err.Error(), nil)
	}
	managers := s.managers.Copy()
	var live *typed.TypedValue
	switch op.Operation {
	case "Apply":
		live, managers, err = s.updater.Apply(s.live, object, version, managers, string(key), op.Force)
	case "Update":
		live, managers, err = s.updater.Update(s.live, object, version, managers, string(key))
	default:
		return step{}, fmt.Errorf("operation must be Apply or Update, not %q", op.Operation)
	}
	if _, ok := err.(merge.Conflicts); ok {
		conflicts, err := s.conflicts(object, string(key))
		if err != nil {
			return step{}, err
		}
		return s.current("conflict", conflicts)
	}
	if err != nil {
		return s.current(err.Error(), nil)
	}
	if live != nil { // nil: the apply changed nothing in the object
		cleaned := withoutNulls(live.AsValue().Unstructured(), s.live.AsValue().Unstructured())
		if s.live, err = s.objectType.FromUnstructured(cleaned); err != nil {
			return step{}, err
		}
	}
	s.managers = stripped(managers, string(key))
	return s.current("", nil)
}

// conflicts recomputes a refused apply's conflicts as the library decides them (each other
// manager's fields that the apply adds or modifies). The library's own list cannot be
// used: ConflictsFromManagers keeps the paths Set.Iterate hands it, and Iterate reuses
// one buffer, so paths of the same manager overwrite each other (v4.1.2).
func (s *state) conflicts(object *typed.TypedValue, key string) (merge.Conflicts, error) {
	forced, _, err := s.updater.Apply(s.live, object, version, s.managers.Copy(), key, true)
	if err != nil {
		return nil, err
	}
	if forced == nil {
		return nil, fmt.Errorf("an apply refused for conflicts changes nothing when forced")
	}
	compare, err := s.live.Compare(forced)
	if err != nil {
		return nil, err
	}
	changed := compare.Modified.Union(compare.Added)
	out := merge.Conflicts{}
	for manager, owned := range s.managers {
		if manager == key {
			continue
		}
		owned.Set().Intersection(changed).Iterate(func(p fieldpath.Path) {
			out = append(out, merge.Conflict{Manager: manager, Path: p.Copy()})
		})
	}
	return out, nil
}

func (s *state) current(message string, conflicts merge.Conflicts) (step, error) {
	out := step{Object: s.live.AsValue().Unstructured(), Error: message}
	out.Managed = []ownedFields{}
	out.Conflicts = []conflict{}
	names := make([]string, 0, len(s.managers))
	for name := range s.managers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var key managerKey
		if err := json.Unmarshal([]byte(name), &key); err != nil {
			return step{}, err
		}
		fields, err := serializedPaths(s.managers[name].Set())
		if err != nil {
			return step{}, err
		}
		out.Managed = append(out.Managed, ownedFields{key.Manager, key.Operation, fields})
	}
	for _, c := range conflicts {
		var key managerKey
		if err := json.Unmarshal([]byte(c.Manager), &key); err != nil {
			return step{}, err
		}
		field, err := serializedPath(c.Path)
		if err != nil {
			return step{}, err
		}
		out.Conflicts = append(out.Conflicts, conflict{key.Manager, key.Operation, field})
	}
	return out, nil
}

// withoutNulls turns the nulls the library leaves where pruning emptied a map or a list
// into an empty one of the same kind (as it was in `before`): the local store keeps the
// emptied value, and a null would make the next comparison see a change that is not one.
func withoutNulls(v, before interface{}) interface{} {
	switch v := v.(type) {
	case nil:
		if _, ok := before.([]interface{}); ok {
			return []interface{}{}
		}
		return map[string]interface{}{}
	case map[string]interface{}:
		old, _ := before.(map[string]interface{})
		for key, child := range v {
			v[key] = withoutNulls(child, old[key])
		}
	case []interface{}:
		for i, child := range v {
			v[i] = withoutNulls(child, nil) // items are never emptied to null
		}
	}
	return v
}

// neverOwned are the fields the API server's field manager strips from the writer's set
// after every write (of those this schema has): identity is not owned by anyone.
var neverOwned = fieldpath.NewSet(
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
)

func stripped(managers fieldpath.ManagedFields, key string) fieldpath.ManagedFields {
	owned, ok := managers[key]
	if !ok {
		return managers
	}
	rest := owned.Set().Difference(neverOwned)
	if rest.Empty() {
		delete(managers, key)
	} else {
		managers[key] = fieldpath.NewVersionedSet(rest, owned.APIVersion(), owned.Applied())
	}
	return managers
}

func serializedPaths(set *fieldpath.Set) ([][]string, error) {
	out := [][]string{}
	var failed error
	set.Iterate(func(p fieldpath.Path) {
		field, err := serializedPath(p)
		if err != nil {
			failed = err
		}
		out = append(out, field)
	})
	return out, failed
}

func serializedPath(p fieldpath.Path) ([]string, error) {
	out := make([]string, 0, len(p))
	for _, pe := range p {
		element, err := fieldpath.SerializePathElement(pe)
		if err != nil {
			return nil, err
		}
		out = append(out, element)
	}
	return out, nil
}
