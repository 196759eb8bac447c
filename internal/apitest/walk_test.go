package apitest_test

import (
	"fmt"
	"go/types"
	"slices"
	"strings"
)

// An entry is one exported identifier of the public API: its line in the
// golden file, and the internal types its signature names.
type entry struct {
	line     string
	internal []string
}

// walker walks one public package.
type walker struct {
	pkg     *types.Package
	modPath string
	entries []entry
}

// walk returns the entries of pkg, a package of module modPath, in
// sorted order.
func walk(pkg *types.Package, modPath string) []entry {
	w := &walker{pkg: pkg, modPath: modPath}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		if obj := scope.Lookup(name); obj.Exported() {
			w.object(obj)
		}
	}
	slices.SortFunc(w.entries, func(a, b entry) int { return strings.Compare(a.line, b.line) })
	return slices.CompactFunc(w.entries, func(a, b entry) bool { return a.line == b.line })
}

func (w *walker) object(obj types.Object) {
	switch obj := obj.(type) {
	case *types.Func:
		w.add(obj.Type(), "func %s%s", obj.Name(), w.signature(obj.Type().(*types.Signature)))
	case *types.Var:
		w.add(obj.Type(), "var %s %s", obj.Name(), w.str(obj.Type()))
	case *types.Const:
		w.add(obj.Type(), "const %s %s = %s", obj.Name(), w.str(obj.Type()), obj.Val().ExactString())
	case *types.TypeName:
		w.typeName(obj)
	}
}

func (w *walker) typeName(tn *types.TypeName) {
	if a, ok := tn.Type().(*types.Alias); ok {
		w.add(a.Rhs(), "type %s = %s", tn.Name(), w.str(a.Rhs()))
		w.methods(tn.Name(), a)
		return
	}
	under := tn.Type().Underlying()
	switch u := under.(type) {
	case *types.Struct:
		w.add(nil, "type %s%s struct", tn.Name(), w.typeParams(tn.Type()))
		w.fields(tn.Name(), u)
	case *types.Interface:
		// The interface's methods are its method set below.
		w.add(nil, "type %s%s interface", tn.Name(), w.typeParams(tn.Type()))
	default:
		w.add(under, "type %s%s %s", tn.Name(), w.typeParams(tn.Type()), w.str(under))
	}
	w.methods(tn.Name(), tn.Type())
}

// fields adds the exported fields of struct s, the underlying type of the
// type named name.
func (w *walker) fields(name string, s *types.Struct) {
	for f := range s.Fields() {
		switch {
		case !f.Exported():
		case f.Embedded():
			w.add(f.Type(), "type %s struct, embedded %s", name, w.str(f.Type()))
		default:
			w.add(f.Type(), "type %s struct, %s %s", name, f.Name(), w.str(f.Type()))
		}
	}
}

// methods adds the exported methods of t and *t, declared or promoted,
// under the receiver name; an interface's are its own.
func (w *walker) methods(name string, t types.Type) {
	if types.IsInterface(t) {
		ms := types.NewMethodSet(t)
		for sel := range ms.Methods() {
			if m := sel.Obj(); m.Exported() {
				w.add(m.Type(), "type %s interface, %s%s", name, m.Name(), w.signature(m.Type().(*types.Signature)))
			}
		}
		return
	}
	value := types.NewMethodSet(t)
	ms := types.NewMethodSet(types.NewPointer(t))
	for sel := range ms.Methods() {
		m := sel.Obj()
		if !m.Exported() {
			continue
		}
		recv := "*" + name
		if value.Lookup(m.Pkg(), m.Name()) != nil {
			recv = name
		}
		w.add(m.Type(), "method (%s) %s%s", recv, m.Name(), w.signature(m.Type().(*types.Signature)))
	}
}

// add adds an entry, with the internal types t names.
func (w *walker) add(t types.Type, format string, args ...any) {
	e := entry{line: fmt.Sprintf("pkg %s, ", w.rel(w.pkg.Path())) + fmt.Sprintf(format, args...)}
	if t != nil {
		w.internalIn(t, &e.internal)
		slices.Sort(e.internal)
		e.internal = slices.Compact(e.internal)
	}
	w.entries = append(w.entries, e)
}

// internalIn appends to out the names of the internal named types t
// mentions. It does not descend into a named type's
// underlying type: an exported named type is walked on its own, and an
// unexported one cannot be named by a user.
func (w *walker) internalIn(t types.Type, out *[]string) {
	switch t := t.(type) {
	case *types.Alias:
		w.internalIn(types.Unalias(t), out)
	case *types.Named:
		if obj := t.Obj(); obj.Pkg() != nil && isInternal(obj.Pkg().Path()) {
			*out = append(*out, w.str(t))
		}
		for a := range t.TypeArgs().Types() {
			w.internalIn(a, out)
		}
	case *types.Pointer:
		w.internalIn(t.Elem(), out)
	case *types.Slice:
		w.internalIn(t.Elem(), out)
	case *types.Array:
		w.internalIn(t.Elem(), out)
	case *types.Chan:
		w.internalIn(t.Elem(), out)
	case *types.Map:
		w.internalIn(t.Key(), out)
		w.internalIn(t.Elem(), out)
	case *types.Signature:
		w.internalIn(t.Params(), out)
		w.internalIn(t.Results(), out)
	case *types.Tuple:
		for v := range t.Variables() {
			w.internalIn(v.Type(), out)
		}
	case *types.Struct:
		for f := range t.Fields() {
			if f.Exported() {
				w.internalIn(f.Type(), out)
			}
		}
	case *types.Interface:
		for m := range t.Methods() {
			w.internalIn(m.Type(), out)
		}
		for e := range t.EmbeddedTypes() {
			w.internalIn(e, out)
		}
	case *types.Union:
		for term := range t.Terms() {
			w.internalIn(term.Type(), out)
		}
	case *types.TypeParam:
		w.internalIn(t.Constraint(), out)
	}
}

func isInternal(path string) bool {
	return strings.Contains(path, "/internal/") || strings.HasPrefix(path, "internal/")
}

// str prints t as the golden file does: the walked package's own types
// unqualified, the module's by their path in the module (engine.Conn,
// internal/loop.Loop), others by package name (tls.Config).
func (w *walker) str(t types.Type) string {
	return types.TypeString(unnamedParams(t), w.qualify)
}

// unnamedParams returns t with the parameter names of its function types
// removed: they are no part of the API. It leaves named types and
// anonymous structs and interfaces as they are.
func unnamedParams(t types.Type) types.Type {
	switch t := t.(type) {
	case *types.Signature:
		return types.NewSignatureType(nil, nil, nil, unnamed(t.Params()), unnamed(t.Results()), t.Variadic())
	case *types.Pointer:
		return types.NewPointer(unnamedParams(t.Elem()))
	case *types.Slice:
		return types.NewSlice(unnamedParams(t.Elem()))
	case *types.Array:
		return types.NewArray(unnamedParams(t.Elem()), t.Len())
	case *types.Chan:
		return types.NewChan(t.Dir(), unnamedParams(t.Elem()))
	case *types.Map:
		return types.NewMap(unnamedParams(t.Key()), unnamedParams(t.Elem()))
	}
	return t
}

func (w *walker) qualify(p *types.Package) string {
	switch {
	case p == w.pkg:
		return ""
	case strings.HasPrefix(p.Path(), w.modPath+"/"):
		return w.rel(p.Path())
	}
	return p.Name()
}

func (w *walker) rel(path string) string {
	return strings.TrimPrefix(path, w.modPath+"/")
}

// signature prints sig without its func keyword, receiver and parameter
// names, which are no part of the API.
func (w *walker) signature(sig *types.Signature) string {
	return strings.TrimPrefix(w.str(sig), "func")
}

func unnamed(t *types.Tuple) *types.Tuple {
	var vs []*types.Var
	for v := range t.Variables() {
		vs = append(vs, types.NewParam(v.Pos(), v.Pkg(), "", unnamedParams(v.Type())))
	}
	return types.NewTuple(vs...)
}

func (w *walker) typeParams(t types.Type) string {
	n, ok := t.(*types.Named)
	if !ok || n.TypeParams().Len() == 0 {
		return ""
	}
	var b strings.Builder
	for tp := range n.TypeParams().TypeParams() {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", tp.Obj().Name(), w.str(tp.Constraint()))
	}
	return "[" + b.String() + "]"
}
