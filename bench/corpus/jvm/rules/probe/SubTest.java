package probe;
public class SubTest extends BaseTest {
  public void inSub() {}
}
