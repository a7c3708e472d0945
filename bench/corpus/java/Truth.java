// Truth: a Java repository's JUnit test definitions under ADR 0005, read with javac's own
// parser (JavacTask.parse, no compilation), for the accuracy corpus (bench/corpus/README.md).
//
//   java Truth.java DIR NAME REPOSITORY COMMIT COMMITTED LICENSE RUNNER_COUNT RUNNER_TOOL [NOTE...]
//   java Truth.java --list DIR    (one "top.level.Class#method file" line per test, for crosscheck.sh)
//
// Files: every *.java under a test source root: each src/test/java directory, and what a
// pom.xml declares (<testSourceDirectory>, build-helper's add-test-source <source>s).
// Tests: methods of a class, interface, enum or record declared in such a file (member
// classes included: nested suites; local and anonymous classes are not read) whose
// annotations resolve, through the file's imports, its package and the test sources' own
// types, to JUnit 5's org.junit.jupiter.api.{Test,RepeatedTest,TestFactory,TestTemplate}
// or org.junit.jupiter.params.ParameterizedTest, to an annotation type of the test sources
// meta-annotated with one of them (a JUnit 5 composed annotation), or to JUnit 4's
// org.junit.Test; and in a class extending junit.framework.TestCase, public void
// no-argument test* methods (JUnit 3). Skipped: org.junit.jupiter.api.Disabled or
// org.junit.Ignore (or a composed annotation of them) on the method or an enclosing class.
// Line: the method declaration's first line, annotations included. Name: the method's.
import com.sun.source.tree.*;
import com.sun.source.util.*;
import java.io.IOException;
import java.nio.file.*;
import java.util.*;
import java.util.stream.*;
import javax.lang.model.element.Modifier;
import javax.tools.*;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.*;

public class Truth {
  static final Set<String> JUNIT5_TESTS =
      Set.of(
          "org.junit.jupiter.api.Test",
          "org.junit.jupiter.api.RepeatedTest",
          "org.junit.jupiter.api.TestFactory",
          "org.junit.jupiter.api.TestTemplate",
          "org.junit.jupiter.params.ParameterizedTest");
  static final String JUNIT4_TEST = "org.junit.Test";
  static final Set<String> TESTS = new HashSet<>(JUNIT5_TESTS);
  static final Set<String> SKIPS = new HashSet<>(Set.of("org.junit.jupiter.api.Disabled", "org.junit.Ignore"));
  // Composed annotation -> the JUnit annotation it carries, for the notes.
  static final Map<String, String> composed = new TreeMap<>();
  // Every type the test sources declare, by qualified name (nested: Outer.Inner).
  static final Map<String, ClassTree> declared = new HashMap<>();

  static {
    TESTS.add(JUNIT4_TEST);
  }

  record Test(String file, long line, String name, String status, String top) {}

  static final List<Test> tests = new ArrayList<>();
  static final Map<String, Integer> kinds = new TreeMap<>(); // annotation -> count, for notes
  static final List<String> notes = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    boolean list = args[0].equals("--list");
    if (list) args = Arrays.copyOfRange(args, 1, args.length);
    Path root = Path.of(args[0]).toAbsolutePath().normalize();
    List<Path> files = new ArrayList<>();
    for (Path dir : testRoots(root)) {
      try (Stream<Path> walk = Files.walk(dir)) {
        walk.filter(p -> p.toString().endsWith(".java") && Files.isRegularFile(p)).forEach(files::add);
      }
    }
    files = files.stream().distinct().sorted().toList();
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    StandardJavaFileManager fm = javac.getStandardFileManager(null, null, null);
    DiagnosticCollector<JavaFileObject> diags = new DiagnosticCollector<>();
    JavacTask task =
        (JavacTask)
            javac.getTask(
                null, fm, diags, List.of("-proc:none"), null, fm.getJavaFileObjectsFromPaths(files));
    List<CompilationUnitTree> units = new ArrayList<>();
    task.parse().forEach(units::add);
    for (Diagnostic<?> d : diags.getDiagnostics()) {
      if (d.getKind() == Diagnostic.Kind.ERROR) throw new IllegalStateException(d.toString());
    }
    SourcePositions positions = Trees.instance(task).getSourcePositions();
    Map<CompilationUnitTree, Names> names = new HashMap<>();
    for (CompilationUnitTree unit : units) {
      String pkg = unit.getPackageName() == null ? "" : unit.getPackageName() + ".";
      for (Tree type : unit.getTypeDecls()) {
        if (type instanceof ClassTree cls) declare(pkg, cls);
      }
    }
    for (CompilationUnitTree unit : units) names.put(unit, new Names(unit));
    composeAnnotations(units, names);
    for (CompilationUnitTree unit : units) {
      String file = root.relativize(Path.of(unit.getSourceFile().toUri())).toString().replace('\\', '/');
      for (Tree type : unit.getTypeDecls()) {
        if (type instanceof ClassTree cls) {
          String pkg = unit.getPackageName() == null ? "" : unit.getPackageName() + ".";
          visitClass(unit, file, names.get(unit), positions, cls, false, pkg + cls.getSimpleName());
        }
      }
    }
    if (list) tests.forEach(t -> System.out.println(t.top + "#" + t.name + " " + t.file));
    else print(args, files.size());
  }

  /** Test source roots: src/test/java directories, and those pom.xml files declare. */
  static Set<Path> testRoots(Path root) throws Exception {
    Set<Path> roots = new TreeSet<>();
    List<Path> poms;
    try (Stream<Path> walk = Files.walk(root)) {
      walk.filter(p -> Files.isDirectory(p) && p.endsWith(Path.of("src", "test", "java"))).forEach(roots::add);
    }
    try (Stream<Path> walk = Files.walk(root)) {
      poms = walk.filter(p -> p.getFileName().toString().equals("pom.xml")).toList();
    }
    for (Path pom : poms) {
      Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
      List<String> dirs = new ArrayList<>();
      NodeList own = doc.getElementsByTagName("testSourceDirectory");
      for (int i = 0; i < own.getLength(); i++) dirs.add(own.item(i).getTextContent());
      NodeList goals = doc.getElementsByTagName("goal");
      for (int i = 0; i < goals.getLength(); i++) {
        if (!goals.item(i).getTextContent().trim().equals("add-test-source")) continue;
        Element execution = (Element) goals.item(i).getParentNode().getParentNode();
        NodeList sources = execution.getElementsByTagName("source");
        for (int j = 0; j < sources.getLength(); j++) dirs.add(sources.item(j).getTextContent());
      }
      for (String dir : dirs) {
        String d = dir.trim().replace("${project.basedir}/", "").replace("${basedir}/", "");
        if (d.contains("${")) throw new IllegalStateException(pom + ": cannot resolve " + dir);
        Path p = pom.getParent().resolve(d).normalize();
        if (Files.isDirectory(p)) {
          roots.add(p);
          if (!p.endsWith(Path.of("src", "test", "java"))) notes.add("test sources also in " + root.relativize(p) + " (" + root.relativize(pom) + ")");
        }
      }
    }
    return roots;
  }

  static void declare(String prefix, ClassTree cls) {
    String fqn = prefix + cls.getSimpleName();
    declared.put(fqn, cls);
    for (Tree member : cls.getMembers()) {
      if (member instanceof ClassTree inner) declare(fqn + ".", inner);
    }
  }

  /** Annotation types of the test sources that carry a test or skip annotation (JUnit 5
   * meta-annotations), added to TESTS/SKIPS until nothing changes (composed of composed). */
  static void composeAnnotations(List<CompilationUnitTree> units, Map<CompilationUnitTree, Names> names) {
    for (boolean changed = true; changed; ) {
      changed = false;
      for (CompilationUnitTree unit : units) {
        for (Map.Entry<String, ClassTree> e : declared.entrySet()) {
          ClassTree cls = e.getValue();
          if (cls.getKind() != Tree.Kind.ANNOTATION_TYPE || !names.get(unit).declares(cls)) continue;
          for (Set<String> set : List.of(TESTS, SKIPS)) {
            String carried = annotated(cls.getModifiers(), names.get(unit), set);
            if (carried != null && set.add(e.getKey())) {
              composed.put(e.getKey(), composed.getOrDefault(carried, carried));
              changed = true;
            }
          }
        }
      }
    }
  }

  /** How a file's names resolve: single-type and on-demand imports, its package, its own
   * types; only to names this tool knows (JUnit's, and the test sources' types). */
  static final class Names {
    final Map<String, String> single = new HashMap<>();
    final List<String> scopes = new ArrayList<>(); // packages and types whose members are visible
    final Set<ClassTree> own = new HashSet<>();

    Names(CompilationUnitTree unit) {
      String pkg = unit.getPackageName() == null ? "" : unit.getPackageName().toString();
      for (Tree type : unit.getTypeDecls()) {
        if (type instanceof ClassTree cls) collect(pkg.isEmpty() ? "" : pkg + ".", cls);
      }
      for (ImportTree imp : unit.getImports()) {
        if (imp.isStatic()) continue;
        String name = imp.getQualifiedIdentifier().toString();
        if (!name.endsWith(".*")) single.putIfAbsent(name.substring(name.lastIndexOf('.') + 1), name);
      }
      if (!pkg.isEmpty()) scopes.add(pkg);
      for (ImportTree imp : unit.getImports()) {
        String name = imp.getQualifiedIdentifier().toString();
        if (!imp.isStatic() && name.endsWith(".*")) scopes.add(name.substring(0, name.length() - 2));
      }
    }

    // A file's own types (nested ones too) are visible by simple name within it and come
    // before imports; this ignores scoping between nesting levels (a nested type is only
    // visible inside its class), which the corpus does not exercise.
    void collect(String prefix, ClassTree cls) {
      own.add(cls);
      String fqn = prefix + cls.getSimpleName();
      single.putIfAbsent(cls.getSimpleName().toString(), fqn);
      for (Tree member : cls.getMembers()) {
        if (member instanceof ClassTree inner) collect(fqn + ".", inner);
      }
    }

    boolean declares(ClassTree cls) {
      return own.contains(cls);
    }

    static boolean known(String fqn) {
      return TESTS.contains(fqn) || SKIPS.contains(fqn) || declared.containsKey(fqn)
          || fqn.equals("junit.framework.TestCase");
    }

    /** The qualified name of a type name as written (Test, Outer.Inner, org.junit.Test). */
    String resolve(Tree type) {
      String written = type.toString();
      int dot = written.indexOf('.');
      String first = dot < 0 ? written : written.substring(0, dot);
      String rest = dot < 0 ? "" : written.substring(dot);
      if (single.containsKey(first)) return single.get(first) + rest;
      List<String> found =
          scopes.stream().map(s -> s + "." + first).filter(Names::known).distinct().toList();
      if (found.size() > 1) throw new IllegalStateException("ambiguous " + written + ": " + found);
      return found.isEmpty() ? written : found.get(0) + rest;
    }
  }

  static void visitClass(
      CompilationUnitTree unit, String file, Names names, SourcePositions positions, ClassTree cls,
      boolean skipped, String top) {
    skipped = skipped || annotated(cls.getModifiers(), names, SKIPS) != null;
    boolean junit3 =
        cls.getExtendsClause() != null
            && names.resolve(cls.getExtendsClause()).equals("junit.framework.TestCase");
    for (Tree member : cls.getMembers()) {
      if (member instanceof ClassTree inner) {
        visitClass(unit, file, names, positions, inner, skipped, top);
      } else if (member instanceof MethodTree method) {
        String kind = annotated(method.getModifiers(), names, TESTS);
        if (kind == null && junit3 && isJunit3(method)) kind = "JUnit 3 test* method";
        long line = unit.getLineMap().getLineNumber(positions.getStartPosition(unit, method));
        if (kind == null) {
          unresolved(file, line, method, names);
          continue;
        }
        kinds.merge(kind, 1, Integer::sum);
        boolean own = annotated(method.getModifiers(), names, SKIPS) != null;
        tests.add(new Test(file, line, method.getName().toString(), skipped || own ? "skipped" : "active", top));
      }
    }
  }

  /** A note for a method annotated with a test annotation's simple name that does not
   * resolve to JUnit's (another framework's @Test, or a same-package annotation). */
  static void unresolved(String file, long line, MethodTree method, Names names) {
    Set<String> simple = TESTS.stream().map(n -> n.substring(n.lastIndexOf('.') + 1)).collect(Collectors.toSet());
    for (AnnotationTree a : method.getModifiers().getAnnotations()) {
      String written = a.getAnnotationType().toString();
      if (simple.contains(written.substring(written.lastIndexOf('.') + 1))) {
        notes.add("not a JUnit test: " + file + ":" + line + " " + method.getName() + " (@" + written
            + " resolves to " + names.resolve(a.getAnnotationType()) + ")");
      }
    }
  }

  /** JUnit 3's rule (TestSuite.isPublicTestMethod): public, void, no parameters, test*. */
  static boolean isJunit3(MethodTree m) {
    return m.getName().toString().startsWith("test")
        && m.getParameters().isEmpty()
        && m.getModifiers().getFlags().contains(Modifier.PUBLIC)
        && m.getReturnType() != null
        && m.getReturnType().toString().equals("void");
  }

  /** The first of the annotations resolving to a name in wanted, or null. */
  static String annotated(ModifiersTree mods, Names names, Set<String> wanted) {
    for (AnnotationTree a : mods.getAnnotations()) {
      String name = names.resolve(a.getAnnotationType());
      if (wanted.contains(name)) return name;
    }
    return null;
  }

  static void print(String[] args, int files) {
    StringBuilder out = new StringBuilder("{\n");
    field(out, "name", args[1]);
    field(out, "repository", args[2]);
    field(out, "commit", args[3]);
    field(out, "committed", args[4]);
    field(out, "license", args[5]);
    List<String> frameworks = new ArrayList<>();
    if (kinds.keySet().stream().anyMatch(k -> !k.equals(JUNIT4_TEST) && !k.startsWith("JUnit 3"))) frameworks.add("junit5");
    if (kinds.containsKey(JUNIT4_TEST) || kinds.containsKey("JUnit 3 test* method")) frameworks.add("junit4");
    out.append("  \"frameworks\": [")
        .append(frameworks.stream().map(Truth::quote).collect(Collectors.joining(", ")))
        .append("],\n");
    field(out, "tool", "bench/corpus/java/Truth.java (javac's parser, JDK " + System.getProperty("java.version") + "); runner_count: " + args[7]);
    out.append("  \"runner_count\": ").append(args[6]).append(",\n");
    List<String> all = new ArrayList<>();
    all.add(files + " test source files read; tests by annotation: " + kinds);
    composed.forEach((k, v) -> all.add("composed annotation @" + k + " is @" + v + " (JUnit 5 meta-annotation): its methods count as tests"));
    all.addAll(notes);
    for (int i = 8; i < args.length; i++) all.add(args[i]); // notes given by truth.sh
    out.append("  \"notes\": [")
        .append(all.stream().map(n -> "\n    " + quote(n)).collect(Collectors.joining(",")))
        .append("\n  ],\n  \"tests\": [");
    out.append(
        tests.stream()
            .map(t -> String.format(
                "\n    {\"file\": %s, \"line\": %d, \"name\": %s, \"status\": %s}",
                quote(t.file), t.line, quote(t.name), quote(t.status)))
            .collect(Collectors.joining(",")));
    out.append("\n  ]\n}");
    System.out.println(out);
  }

  static void field(StringBuilder out, String key, String value) {
    out.append("  ").append(quote(key)).append(": ").append(quote(value)).append(",\n");
  }

  static String quote(String s) {
    StringBuilder q = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') q.append('\\').append(c);
      else if (c < 0x20) q.append(String.format("\\u%04x", (int) c));
      else q.append(c);
    }
    return q.append('"').toString();
  }
}
