package probe;
import org.testng.annotations.Test;
@Test(enabled = false)
public class DisabledClassTest {
  @Test public void annotated() {}
  public void plain() {}
}
