#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Generates the .NET workload jitprov's .NET client is tested and measured on: a C#
console project of CLASSES x METHODS small methods and LOOPS loop methods (class
Loops: one call of each runs long enough for OSR) that, while it runs, keep crossing
the tier-up threshold (call counting), go through OSR (long loops), create and drop
dynamic methods (DynamicMethod), and load copies of itself into collectible
AssemblyLoadContexts that are unloaded again. Its phases and options: Program.cs's
usage text (`dotnet JitWork.dll --help`).
    gen_workload.py OUT_DIR [CLASSES] [METHODS] [LOOPS]"""
import os
import sys

out = sys.argv[1]
classes = int(sys.argv[2]) if len(sys.argv) > 2 else 20
methods = int(sys.argv[3]) if len(sys.argv) > 3 else 100
loops = int(sys.argv[4]) if len(sys.argv) > 4 else 100
os.makedirs(out, exist_ok=True)

with open(os.path.join(out, "JitWork.csproj"), "w") as f:
    f.write("""<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>net10.0</TargetFramework>
    <Nullable>disable</Nullable>
    <Optimize>true</Optimize>
    <InvariantGlobalization>true</InvariantGlobalization>
    <UseAppHost>false</UseAppHost>
    <EnableDefaultCompileItems>false</EnableDefaultCompileItems>
  </PropertyGroup>
  <ItemGroup>
    <Compile Include="*.cs" />
  </ItemGroup>
</Project>
""")

# Methods: different bodies so that code sizes differ; each calls the next in its class
# now and then, so that call counting sees calls from compiled code too.
for c in range(classes):
    with open(os.path.join(out, "C%d.cs" % c), "w") as f:
        f.write("namespace JitWork;\nusing System.Runtime.CompilerServices;\n")
        f.write("public static class C%d {\n" % c)
        for m in range(methods):
            k = (c * 31 + m * 7) % 5
            body = [
                "return x * %d + %d;" % (m + 3, c),
                "long s = x; for (int i = 0; i < %d; i++) s = s * 31 + i; return s;" % (m % 7 + 2),
                "return (x ^ %d) + (x >> %d) - %d;" % (m * 13, m % 11 + 1, c),
                "if (x > %d) return x - %d; return x + %d;" % (m * 100, m, c + m),
                "long a = x, b = %d; for (int i = 0; i < 3; i++) { a += b; b ^= a; } return a - b;" % (m + c),
            ][k]
            f.write("  [MethodImpl(MethodImplOptions.NoInlining)] public static long M%d(long x) { %s }\n" % (m, body))
        # The class's own delegates: C# caches them in static fields of the containing
        # type, of which CoreCLR allows at most 65535 per type.
        f.write("  public static System.Func<long, long>[] Table() => new System.Func<long, long>[] {\n")
        f.write("    " + ", ".join("M%d" % m for m in range(methods)) + ",\n  };\n")
        f.write("}\n")

# Loop methods: each is JIT'd at tier 0 with patchpoints in its loop (QuickJitForLoops);
# one call with a long enough loop hits the patchpoint limit and transitions to an OSR
# body compiled on the calling thread (JitPatchpointWorker). One method per OSR wanted.
with open(os.path.join(out, "Loops.cs"), "w") as f:
    f.write("namespace JitWork;\nusing System.Runtime.CompilerServices;\npublic static class Loops {\n")
    for k in range(loops):
        f.write("  [MethodImpl(MethodImplOptions.NoInlining)] public static long L%d(long n) "
                "{ long s = %d; for (long i = 0; i < n; i++) s += i ^ (s >> %d) + %d; return s; }\n"
                % (k, k, k % 7 + 1, k % 13))
    f.write("  public static System.Func<long, long>[] Table() => new System.Func<long, long>[] {\n")
    f.write("    " + ", ".join("L%d" % k for k in range(loops)) + ",\n  };\n}\n")

with open(os.path.join(out, "Table.cs"), "w") as f:
    f.write("namespace JitWork;\nusing System;\npublic static class Table {\n")
    f.write("  public const int Classes = %d, Methods = %d;\n" % (classes, methods))
    f.write("  public static Func<long, long>[] All() {\n")
    f.write("    var all = new Func<long, long>[Classes * Methods];\n")
    for c in range(classes):
        f.write("    C%d.Table().CopyTo(all, %d);\n" % (c, c * methods))
    f.write("    return all;\n  }\n}\n")

with open(os.path.join(out, "Program.cs"), "w") as f:
    f.write(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "Program.cs.in")).read())
