package probe;
import org.testng.annotations.Test;
@Test
public class BaseTest {
  public void inBase() {}
  public static void staticOne() {}
  public int returns() { return 1; }
  protected void prot() {}
  public static class Nested { public void nestedPlain() {} @Test public void nestedAnnotated() {} }
}
