// SPDX-License-Identifier: MIT
package jitwork;

import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * jitprov's JVM workload: the generated classes Gen0..GenN-1 (tens of thousands of small
 * methods) loaded again and again through fresh class loaders, run until they tier up,
 * and dropped so that their classes unload (CompiledMethodUnload). Phases:
 *   churn  CHURN_S seconds: new loader per round, every class run, old loaders dropped, GC;
 *          then writes READY_DIR/quiet
 *   quiet  until READY_DIR/go-hot exists (at most QUIET_S seconds): nothing runs
 *   hot    HOT_S seconds, or until READY_DIR/stop exists: the last generation's code run
 *          in a loop (for profilers)
 * Usage: java -cp CLASSES jitwork.JitWorkload CLASSES CHURN_S HOT_S QUIET_S READY_DIR
 */
public final class JitWorkload {
  static Object sink;

  static Class<?>[] load(URL[] urls, int classes, Deque<URLClassLoader> live) throws Exception {
    // Parent: the platform loader, so that the Gen classes are defined by this loader.
    URLClassLoader l = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader());
    live.addLast(l);
    Class<?>[] cs = new Class<?>[classes];
    for (int k = 0; k < classes; k++) cs[k] = Class.forName("jitwork.Gen" + k, true, l);
    return cs;
  }

  static long runAll(Class<?>[] cs, int n) throws Exception {
    long s = 0;
    for (Class<?> c : cs) {
      Method run = c.getMethod("run", int.class);
      s += (Long) run.invoke(null, n);
    }
    return s;
  }

  public static void main(String[] a) throws Exception {
    File dir = new File(a[0]);
    double churn = Double.parseDouble(a[1]), hot = Double.parseDouble(a[2]), quiet = Double.parseDouble(a[3]);
    Path ready = Path.of(a[4]);
    int classes = 0;
    while (new File(dir, "jitwork/Gen" + classes + ".class").exists()) classes++;
    URL[] urls = {dir.toURI().toURL()};
    Deque<URLClassLoader> live = new ArrayDeque<>();
    long s = 0, rounds = 0;
    long end = System.nanoTime() + (long) (churn * 1e9);
    Class<?>[] cs = null;
    while (System.nanoTime() < end) {
      cs = load(urls, classes, live);
      s += runAll(cs, 40);
      while (live.size() > 2) live.removeFirst().close();  // unloadable once collected
      System.gc();
      rounds++;
    }
    if (cs == null) cs = load(urls, classes, live);
    System.out.println("churn: " + rounds + " rounds of " + classes + " classes");
    Files.writeString(ready.resolve("quiet"), "quiet\n");
    end = System.nanoTime() + (long) (quiet * 1e9);
    while (System.nanoTime() < end && !Files.exists(ready.resolve("go-hot"))) Thread.sleep(20);
    System.out.println("quiet: done");
    end = System.nanoTime() + (long) (hot * 1e9);
    Path stop = ready.resolve("stop");
    while (System.nanoTime() < end && !Files.exists(stop)) s += runAll(cs, 200);
    sink = s;
    System.out.println("hot: done " + (s & 1));
  }
}
