package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// compileNames are package regexp's functions that compile an expression.
var compileNames = map[string]bool{"MustCompile": true, "Compile": true, "MustCompilePOSIX": true, "CompilePOSIX": true}

// TestNoRegexpCompiledAtStart: product code compiles no regular expression
// in a package-level variable's initialiser, which every command — `--help`
// included — would pay for before main runs (issue 25's start-up; each
// costs 50–900 allocations). One is built where first used, e.g.
// sync.OnceValue(func() *regexp.Regexp { … }). Test support is exempt.
func TestNoRegexpCompiledAtStart(t *testing.T) {
	fset := token.NewFileSet()
	for pkg, files := range productFiles(t) {
		if _, ok := testSupport[pkg]; ok {
			continue
		}
		for _, file := range files {
			f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, pos := range compiledAtStart(f, fset) {
				t.Errorf("%s: a regular expression is compiled in a package-level variable; build it on first use (sync.OnceValue)", pos)
			}
		}
	}
}

// compiledAtStart returns where f's package-level variable initialisers
// call package regexp's compile functions directly (not inside a function
// literal, which runs when called).
func compiledAtStart(f *ast.File, fset *token.FileSet) []token.Position {
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "regexp" {
			local = "regexp"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" || local == "_" {
		return nil
	}
	var found []token.Position
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				ast.Inspect(v, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.FuncLit:
						return false // runs when called, not at start
					case *ast.SelectorExpr:
						if id, ok := n.X.(*ast.Ident); ok && id.Name == local && compileNames[n.Sel.Name] {
							found = append(found, fset.Position(n.Pos()))
						}
					}
					return true
				})
			}
		}
	}
	return found
}

// TestTheInitRuleFires: the rule above finds a package-level compile and
// lets one inside a function literal pass.
func TestTheInitRuleFires(t *testing.T) {
	src := `package p
import re "regexp"
var bad = re.MustCompile("a+")
var table = map[string]*re.Regexp{"x": re.MustCompile("x")}
var lazy = func() *re.Regexp { return re.MustCompile("b+") }
func f() { _ = re.MustCompile("c+") }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if got := compiledAtStart(f, fset); len(got) != 2 || got[0].Line != 3 || got[1].Line != 4 {
		t.Errorf("found %v, want lines 3 and 4", got)
	}
}
