import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Optional;

/**
 * Runs a main class (kafka.Kafka, kafka.tools.StorageTool) and makes the JVM die with its parent.
 *
 * Usage: java -cp ... ParentWatchdog <main-class> [args...]
 *
 * src/Broker.ts keeps a pipe on this JVM's stdin and never writes to it. When the Node process
 * goes away, however it goes (exit, crash, SIGKILL), the kernel closes that pipe and this JVM
 * reads end-of-file: it then exits (Kafka's shutdown hook runs), and halts outright if the
 * shutdown takes longer than -Docs.watchdog.haltAfterMs (default 10000). The parent's pid is
 * polled too, as a second line of defence. Compiled by src/Broker.ts into .cache/ with javac.
 */
public final class ParentWatchdog {
  private ParentWatchdog() {}

  public static void main(String[] args) throws Throwable {
    if (args.length < 1) {
      System.err.println("usage: ParentWatchdog <main-class> [args...]");
      System.exit(2);
    }
    long haltAfterMs = Long.getLong("ocs.watchdog.haltAfterMs", 10_000L);
    Optional<ProcessHandle> parent = ProcessHandle.current().parent();

    Thread stdin = new Thread(() -> {
      try {
        InputStream in = System.in;
        byte[] buffer = new byte[256];
        while (in.read(buffer) >= 0) {
          // nothing is ever written; keep reading until the pipe closes
        }
      } catch (Throwable ignored) {
        // a broken pipe means the same as end-of-file
      }
      orphaned("parent closed stdin", haltAfterMs);
    }, "ocs-parent-watchdog-stdin");
    stdin.setDaemon(true);
    stdin.start();

    if (parent.isPresent()) {
      ProcessHandle p = parent.get();
      Thread poll = new Thread(() -> {
        while (true) {
          try {
            Thread.sleep(2_000L);
          } catch (InterruptedException e) {
            return;
          }
          if (!p.isAlive()) {
            orphaned("parent process " + p.pid() + " is gone", haltAfterMs);
            return;
          }
        }
      }, "ocs-parent-watchdog-poll");
      poll.setDaemon(true);
      poll.start();
    }

    Class<?> mainClass = Class.forName(args[0]);
    Method main = mainClass.getMethod("main", String[].class);
    try {
      main.invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  private static synchronized void orphaned(String why, long haltAfterMs) {
    System.err.println("[ocs-watchdog] " + why + "; shutting the JVM down");
    Thread halt = new Thread(() -> {
      try {
        Thread.sleep(haltAfterMs);
      } catch (InterruptedException ignored) {
        // halt now
      }
      Runtime.getRuntime().halt(137);
    }, "ocs-parent-watchdog-halt");
    halt.setDaemon(true);
    halt.start();
    System.exit(143);
  }
}
