import java.util.ArrayList;
import java.util.List;
import org.testng.IMethodInstance;
import org.testng.IMethodInterceptor;
import org.testng.ITestContext;
import org.testng.ITestNGMethod;

/** Lists the test methods TestNG would run, then runs none of them. */
public class Lister implements IMethodInterceptor {
  public List<IMethodInstance> intercept(List<IMethodInstance> methods, ITestContext context) {
    for (IMethodInstance instance : methods) {
      ITestNGMethod method = instance.getMethod();
      System.out.println("LISTED " + method.getRealClass().getName() + "#" + method.getMethodName());
    }
    return new ArrayList<>();
  }
}
