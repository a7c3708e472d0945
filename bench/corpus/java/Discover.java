// Discover: what the JUnit Platform itself finds in compiled test classes, without running
// them (Launcher.discover, the Jupiter and Vintage engines of junit-platform-console-standalone).
// A cross-check of Truth.java where a repository's test sources compile offline:
//
//   java -cp CLASSES:CLASSPATH Discover.java CLASSES
//
// Prints one line per method-level test identifier the engines found, "top.level.Class#method"
// of the class declaring the method (an inherited test is printed once per class running it,
// a JUnit 4 Parameterized test once per parameter set); identifiers of classes that are not
// in CLASSES (guava-testlib's testers, run by a suite() of the repository) are only counted.
// A @ParameterizedTest, @RepeatedTest or @TestFactory is one identifier (a container whose
// invocations are only known when run). The counts go to standard error.
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClasspathRoots;

public class Discover {
  public static void main(String[] args) {
    var request =
        LauncherDiscoveryRequestBuilder.request()
            .selectors(selectClasspathRoots(Set.of(Path.of(args[0]))))
            .build();
    TestPlan plan = LauncherFactory.create().discover(request);
    for (TestIdentifier root : plan.getRoots()) print(plan, root, Path.of(args[0]));
    System.err.println(listed + " method identifiers, " + foreign + " of them in classes outside " + args[0]);
  }

  static int listed, foreign;

  static void print(TestPlan plan, TestIdentifier id, Path classes) {
    if (id.getSource().orElse(null) instanceof MethodSource m) {
      listed++;
      String top = m.getClassName().replaceAll("\\$.*", "");
      if (Files.exists(classes.resolve(top.replace('.', '/') + ".class"))) {
        System.out.println(top + "#" + m.getMethodName());
      } else foreign++;
      return; // dynamic children are unknown before a run
    }
    for (TestIdentifier child : plan.getChildren(id)) print(plan, child, classes);
  }
}
