#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the Java sources of jitprov's JVM workload: CLASSES classes of METHODS small
static methods each (tens of thousands of methods in all), plus the driver
(JitWorkload.java, copied). Usage: gen_workload.py OUT_DIR [CLASSES] [METHODS]"""
import os
import shutil
import sys

out = sys.argv[1]
classes = int(sys.argv[2]) if len(sys.argv) > 2 else 50
methods = int(sys.argv[3]) if len(sys.argv) > 3 else 400
os.makedirs(out, exist_ok=True)
for k in range(classes):
    lines = ["package jitwork;", "public final class Gen%d {" % k]
    for i in range(methods):
        # Small, distinct bodies; every 8th calls the next method (inlining, deeper stacks).
        call = " + m%d(x >>> 1)" % (i + 1) if i % 8 == 0 and i + 1 < methods else ""
        lines.append("  static int m%d(int x) { return (x * %d) ^ (x >>> %d) + %d%s; }"
                     % (i, 31 + i, 1 + i % 7, k * methods + i, call))
    lines.append("  public static long run(int n) {")
    lines.append("    long s = 0;")
    lines.append("    for (int j = 0; j < n; j++) {")
    for i in range(methods):
        lines.append("      s += m%d(j + %d);" % (i, i))
    lines.append("    }")
    lines.append("    return s;")
    lines.append("  }")
    lines.append("}")
    with open(os.path.join(out, "Gen%d.java" % k), "w") as f:
        f.write("\n".join(lines) + "\n")
shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "JitWorkload.java"), out)
