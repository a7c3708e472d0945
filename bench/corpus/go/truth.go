// Command truth lists a Go repository's test definitions under ADR 0005, with Go's own
// parser (go/parser, go/ast), for the accuracy corpus (bench/corpus/README.md).
//
//	go run truth.go -name NAME -repository R -commit C -committed D -license L \
//	    [-runner-count N -runner-tool TEXT] DIR > truth/NAME.json
//	go run truth.go -list DIR   (one "package-dir TestName" line per test function)
//
// A test function is what `go test` runs (cmd/go's rules, restated here): a top-level
// func in a *_test.go file, not in testdata/ or a directory starting with _ or ., named
// Test or Test + a rune that is not lower case, with no receiver, no type parameters,
// no results, and exactly one parameter of type *testing.T, where "testing" is the name
// the file imports the package "testing" under (T alone for a dot import).
// A Run(name, fn) call whose receiver is the test's own *testing.T parameter (or inside
// a subtest literal, that literal's own parameter) is a subtest: its test becomes a
// suite, and the call site is a test, or a suite again when fn is a literal with Run
// calls on its own parameter. Only leaves are listed, as the truth format asks.
// A t.Skip/Skipf/SkipNow statement directly in a body marks it (and all it holds) skipped.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

type test struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

type truth struct {
	Name        string   `json:"name"`
	Repository  string   `json:"repository"`
	Commit      string   `json:"commit"`
	Committed   string   `json:"committed"`
	License     string   `json:"license"`
	Frameworks  []string `json:"frameworks"`
	Tool        string   `json:"tool"`
	RunnerCount int      `json:"runner_count"`
	Notes       []string `json:"notes"`
	Tests       []test   `json:"tests"`
}

// counters for the notes: where the policy and `go test -list` differ.
var (
	testFuncs, suites, subtests int
	methods                     int
	listed                      []string // "dir name" of every test function
	rejected                    []string // Test-named funcs with another signature
)

func main() {
	var out truth
	flag.StringVar(&out.Name, "name", "", "corpus name")
	flag.StringVar(&out.Repository, "repository", "", "github.com/OWNER/NAME")
	flag.StringVar(&out.Commit, "commit", "", "commit id")
	flag.StringVar(&out.Committed, "committed", "", "commit date")
	flag.StringVar(&out.License, "license", "", "SPDX license")
	runnerTool := flag.String("runner-tool", "", "how -runner-count was obtained")
	flag.IntVar(&out.RunnerCount, "runner-count", -1, "go test -list's count (-1: use the test functions)")
	listOnly := flag.Bool("list", false, "print DIR NAME for each test function instead (to compare with go test -list)")
	flag.Parse()
	root := flag.Arg(0)

	var files []string
	err := filepath.WalkDir(root, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := d.Name()
		if d.IsDir() {
			// cmd/go ignores testdata and directories starting with _ or . (not the root).
			if file != root && (base == "testdata" || strings.HasPrefix(base, "_") || strings.HasPrefix(base, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(base, "_test.go") &&
			!strings.HasPrefix(base, "_") && !strings.HasPrefix(base, ".") {
			files = append(files, file)
		}
		return nil
	})
	check(err)
	sort.Strings(files)

	fset := token.NewFileSet()
	out.Tests = []test{}
	for _, file := range files {
		src, err := os.ReadFile(file)
		check(err)
		// ParseComments is not needed: build tags are not applied (ADR 0004 counts
		// every *_test.go file, whatever its GOOS/GOARCH or tags).
		f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
		check(err)
		rel, _ := filepath.Rel(root, file)
		v := &visitor{fset: fset, src: src, file: filepath.ToSlash(rel), testing: testingName(f)}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok {
				v.funcDecl(fn)
			}
		}
		out.Tests = append(out.Tests, v.tests...)
	}

	if *listOnly {
		sort.Strings(listed)
		fmt.Println(strings.Join(listed, "\n"))
		return
	}
	out.Frameworks = []string{"go-testing"}
	out.Tool = fmt.Sprintf("bench/corpus/go/truth.go (go/parser, %s)", runtime.Version())
	if out.RunnerCount < 0 {
		out.RunnerCount = testFuncs
		*runnerTool = "the test functions go test would list (go test -list . ./... cannot build here)"
	}
	out.Tool += "; runner_count: " + *runnerTool
	out.Notes = append(out.Notes,
		fmt.Sprintf("%d test functions, %d of them suites (they call t.Run); %d t.Run call sites, %d of them suites again; the %d tests listed are the leaves",
			testFuncs, suites, subtests, countSuiteSites, len(out.Tests)),
		"runner_count counts top-level test functions only (go test -list); subtests are call sites here, not cases run",
		"every *_test.go file is read, whatever its build constraints (a go test run on one GOOS skips some)")
	if methods > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("not tests: %d Test* methods (suite methods; go test runs functions only)", methods))
	}
	for _, r := range rejected {
		out.Notes = append(out.Notes, "not a test: "+r)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	check(enc.Encode(out))
}

var countSuiteSites int

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "truth:", err)
		os.Exit(1)
	}
}

// testingName is the name under which f imports "testing": "testing", a rename,
// "." for a dot import, or "" when it does not import it.
func testingName(f *ast.File) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "testing" {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "testing"
		}
	}
	return ""
}

type visitor struct {
	fset    *token.FileSet
	src     []byte
	file    string
	testing string
	tests   []test
}

func (v *visitor) line(n ast.Node) int { return v.fset.Position(n.Pos()).Line }

func (v *visitor) text(n ast.Node) string {
	return string(v.src[v.fset.Position(n.Pos()).Offset:v.fset.Position(n.End()).Offset])
}

// isTestName is cmd/go's isTest(name, "Test").
func isTestName(name string) bool {
	if !strings.HasPrefix(name, "Test") {
		return false
	}
	if len(name) == 4 {
		return true
	}
	r, _ := utf8.DecodeRuneInString(name[4:])
	return !unicode.IsLower(r)
}

// tParam is the name of ft's one *testing.T parameter ("_" or "" when unnamed), and
// whether ft has exactly that signature: one parameter, no results, no type parameters.
func (v *visitor) tParam(ft *ast.FuncType) (string, bool) {
	if ft.TypeParams != nil && len(ft.TypeParams.List) > 0 {
		return "", false
	}
	if ft.Results != nil && len(ft.Results.List) > 0 {
		return "", false
	}
	if ft.Params == nil || len(ft.Params.List) != 1 || len(ft.Params.List[0].Names) > 1 {
		return "", false
	}
	field := ft.Params.List[0]
	star, ok := field.Type.(*ast.StarExpr)
	if !ok || !v.isTestingT(star.X) {
		return "", false
	}
	if len(field.Names) == 0 {
		return "", true
	}
	return field.Names[0].Name, true
}

func (v *visitor) isTestingT(x ast.Expr) bool {
	switch e := x.(type) {
	case *ast.Ident:
		return v.testing == "." && e.Name == "T"
	case *ast.SelectorExpr:
		pkg, ok := e.X.(*ast.Ident)
		return ok && v.testing != "" && v.testing != "." && pkg.Name == v.testing && e.Sel.Name == "T"
	}
	return false
}

func (v *visitor) funcDecl(fn *ast.FuncDecl) {
	name := fn.Name.Name
	if !isTestName(name) || name == "TestMain" && v.mainSignature(fn.Type) {
		return
	}
	param, ok := v.tParam(fn.Type)
	switch {
	case fn.Recv != nil:
		methods++ // testify suite methods: suite.Run calls them, go test does not
		return
	case !ok:
		rejected = append(rejected, fmt.Sprintf("%s:%d %s%s", v.file, v.line(fn), name, v.text(fn.Type)[len("func"):]))
		return
	case fn.Body == nil:
		return
	}
	testFuncs++
	listed = append(listed, path.Dir(v.file)+" "+name)
	if v.body(name, v.line(fn), param, fn.Body, false) {
		suites++
	}
}

// mainSignature: TestMain(m *testing.M) is go test's hook, not a test.
func (v *visitor) mainSignature(ft *ast.FuncType) bool {
	if ft.Params == nil || len(ft.Params.List) != 1 {
		return false
	}
	star, ok := ft.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	switch x := star.X.(type) {
	case *ast.SelectorExpr:
		return x.Sel.Name == "M"
	case *ast.Ident:
		return x.Name == "M"
	}
	return false
}

// body records a test or subtest whose *testing.T is param: a test if no Run call on
// param is found in it, else a suite whose Run call sites are recorded instead. It
// reports whether it was a suite. skipped is the enclosing suites' status.
func (v *visitor) body(name string, line int, param string, body *ast.BlockStmt, skipped bool) bool {
	skipped = skipped || v.skips(param, body)
	var sites []*ast.CallExpr
	if param != "" && param != "_" {
		ast.Inspect(body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				// A literal redeclaring param shadows it: calls inside are not on our T.
				if declares(n.Type.Params, param) {
					// Its Run calls belong to it when it is itself a subtest (handled
					// by recursion from the call site below).
					return false
				}
			case *ast.CallExpr:
				if v.isRun(n, param) {
					sites = append(sites, n)
					// The subtest's arguments are visited by the recursion below,
					// except a literal that does not shadow param: Run calls on our T
					// inside a subtest literal's body still belong to us.
					if lit, ok := n.Args[1].(*ast.FuncLit); ok && !declares(lit.Type.Params, param) {
						ast.Inspect(lit.Body, func(m ast.Node) bool {
							if c, ok := m.(*ast.CallExpr); ok && v.isRun(c, param) {
								sites = append(sites, c)
							}
							return true
						})
					}
					return false
				}
			}
			return true
		})
	}
	if len(sites) == 0 {
		v.record(name, line, skipped)
		return false
	}
	sort.Slice(sites, func(i, j int) bool { return sites[i].Pos() < sites[j].Pos() })
	for _, c := range sites {
		subtests++
		sub := v.subName(c.Args[0])
		if lit, ok := c.Args[1].(*ast.FuncLit); ok {
			if p, ok := v.tParam(lit.Type); ok {
				if v.body(sub, v.line(c), p, lit.Body, skipped) {
					countSuiteSites++
				}
				continue
			}
		}
		v.record(sub, v.line(c), skipped)
	}
	return true
}

// isRun: param.Run(name, fn), two arguments.
func (v *visitor) isRun(c *ast.CallExpr, param string) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Run" || len(c.Args) != 2 || c.Ellipsis.IsValid() {
		return false
	}
	recv, ok := sel.X.(*ast.Ident)
	return ok && recv.Name == param
}

func declares(params *ast.FieldList, name string) bool {
	if params == nil {
		return false
	}
	for _, f := range params.List {
		for _, n := range f.Names {
			if n.Name == name {
				return true
			}
		}
	}
	return false
}

// skips: a param.Skip/Skipf/SkipNow call as a statement directly in body.
func (v *visitor) skips(param string, body *ast.BlockStmt) bool {
	if param == "" || param == "_" {
		return false
	}
	for _, stmt := range body.List {
		es, ok := stmt.(*ast.ExprStmt)
		if !ok {
			continue
		}
		c, ok := es.X.(*ast.CallExpr)
		if !ok {
			continue
		}
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok {
			continue
		}
		recv, ok := sel.X.(*ast.Ident)
		if ok && recv.Name == param && (sel.Sel.Name == "Skip" || sel.Sel.Name == "Skipf" || sel.Sel.Name == "SkipNow") {
			return true
		}
	}
	return false
}

// subName: a string literal's value, else the expression as written.
func (v *visitor) subName(x ast.Expr) string {
	if lit, ok := x.(*ast.BasicLit); ok && lit.Kind == token.STRING {
		if s, err := strconv.Unquote(lit.Value); err == nil {
			return s
		}
	}
	return v.text(x)
}

func (v *visitor) record(name string, line int, skipped bool) {
	status := "active"
	if skipped {
		status = "skipped"
	}
	v.tests = append(v.tests, test{File: v.file, Line: line, Name: name, Status: status})
}
