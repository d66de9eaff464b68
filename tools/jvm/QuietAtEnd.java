// SPDX-License-Identifier: MIT
package jitapps;

import com.sun.source.util.*;
import java.nio.file.*;

// A javac plugin (-Xplugin:"QuietAtEnd DIR", found through -processorpath and
// META-INF/services/com.sun.source.util.Plugin): when the compilation has finished (every
// class file written), javac's thread creates DIR/quiet and waits, idle, for DIR/stop;
// javac then exits as usual. It gives the jvm-apps test a quiet moment in javac's JVM for
// jcmd Compiler.codelist; javac's own work is untouched.
public class QuietAtEnd implements Plugin {
    public String getName() { return "QuietAtEnd"; }
    public void init(JavacTask task, String... args) {
        Path dir = Paths.get(args[0]);
        task.addTaskListener(new TaskListener() {
            public void finished(TaskEvent e) {
                if (e.getKind() != TaskEvent.Kind.COMPILATION) return;
                try {
                    Files.createFile(dir.resolve("quiet"));
                    while (!Files.exists(dir.resolve("stop"))) Thread.sleep(50);
                } catch (Exception x) { throw new RuntimeException(x); }
            }
        });
    }
}
