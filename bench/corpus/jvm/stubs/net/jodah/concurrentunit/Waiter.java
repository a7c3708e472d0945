package net.jodah.concurrentunit;

/** A compile-only stand-in for concurrentunit's Waiter (not in Debian): the listing runs no test. */
public class Waiter {
  public void assertEquals(Object expected, Object actual) {}
  public void assertFalse(boolean b) {}
  public void assertNull(Object o) {}
  public void assertNotNull(Object o) {}
  public void assertTrue(boolean b) {}
  public void fail() {}
  public void fail(String reason) {}
  public void fail(Throwable reason) {}
  public void resume() {}
  public void rethrow(Throwable t) {}
  public void await() {}
  public void await(long delay) {}
  public void await(long delay, int expectedResumes) {}
  public void await(long delay, java.util.concurrent.TimeUnit unit) {}
  public void await(long delay, java.util.concurrent.TimeUnit unit, int expectedResumes) {}
  public void await(java.time.Duration d) {}
  public void await(java.time.Duration d, int expectedResumes) {}
}
