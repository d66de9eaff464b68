// SPDX-License-Identifier: MIT
// CollectibleChurn: the smallest program that keeps CoreCLR unloading code: in a loop, a
// collectible assembly (Reflection.Emit, AssemblyBuilderAccess.RunAndCollect) with one type
// of METHODS static methods is made, each method called through a delegate (JIT'd), and
// the assembly dropped; a full collection every 8 assemblies lets CoreCLR unload them
// (their LoaderAllocators, code heaps and all) on its finalizer thread while the loop goes
// on. Nothing of jitprov's is in it: it is what tools/bench/dotnet-crash runs under
// CoreCLR's own EventPipe rundown, and tests/integration/dotnet_churn.sh under jitprov's.
using System.Diagnostics;
using System.Reflection;
using System.Reflection.Emit;
using System.Runtime.InteropServices;

const string Usage =
    "usage: CollectibleChurn [--seconds S] [--methods M] [--steady N] [--ready FILE]\n" +
    "  S seconds (default 10) of collectible assemblies made (M methods each, default 20),\n" +
    "  called and dropped, a full GC every 8; writes 'churn PID' to FILE once the loop runs;\n" +
    "  then collects until every assembly made is unloaded (at most 10 s) and prints\n" +
    "  'CollectibleChurn: A assemblies made, U unloaded, C calls in S s'; exit 1 if some\n" +
    "  were not unloaded. The first line says the pid and the runtime. --steady: first N\n" +
    "  methods (default 0) of an assembly that is never unloaded JIT'd, for a rundown to walk.\n";
double seconds = 10;
int methods = 20, steady = 0;
string? ready = null;
for (int i = 0; i < args.Length; i++) {
  string Next() => i + 1 < args.Length ? args[++i] : throw new ArgumentException(args[i] + " needs a value");
  try {
    switch (args[i]) {
      case "--seconds": seconds = double.Parse(Next()); break;
      case "--methods": methods = int.Parse(Next()); break;
      case "--steady": steady = int.Parse(Next()); break;
      case "--ready": ready = Next(); break;
      case "--help": Console.Write(Usage); return 0;
      default: Console.Error.Write("CollectibleChurn: unknown option " + args[i] + "\n" + Usage); return 2;
    }
  } catch (Exception e) when (e is FormatException || e is ArgumentException) {
    Console.Error.WriteLine("CollectibleChurn: " + e.Message);
    return 2;
  }
}

Console.WriteLine($"CollectibleChurn: pid {Environment.ProcessId} on {RuntimeInformation.FrameworkDescription}");
var made = new List<WeakReference>();
long calls = 0, sink = 0;
var kept = new List<Type>();
for (int k = 0; k * 1000 < steady; k++) sink += Make(-1 - k, Math.Min(1000, steady - k * 1000), AssemblyBuilderAccess.Run,
                                                      kept, ref calls);
var sw = Stopwatch.StartNew();
for (int n = 0; sw.Elapsed.TotalSeconds < seconds; n++) {
  sink += MakeCallDrop(n, methods, made, ref calls);
  if (n == 0 && ready != null) File.WriteAllText(ready, $"churn {Environment.ProcessId}\n");
  if (n % 8 == 7) {
    GC.Collect();
    GC.WaitForPendingFinalizers();
  }
}
double took = sw.Elapsed.TotalSeconds;
// Unloading takes several collections (the LoaderAllocator's scout finalizes, then the
// native side goes): collect until every assembly is gone.
for (int i = 0; i < 100 && made.Exists(w => w.IsAlive); i++) {
  GC.Collect();
  GC.WaitForPendingFinalizers();
  Thread.Sleep(100);
}
int unloaded = made.Count(w => !w.IsAlive);
Console.WriteLine($"CollectibleChurn: {made.Count} assemblies made, {unloaded} unloaded, {calls} calls in {took:F1} s" +
                  $" (sink {sink & 1})");
return unloaded == made.Count ? 0 : 1;

// One collectible assembly: a type of `methods` methods long M(long x) => x * K, each
// called once through a delegate (its JIT), then nothing of it is kept but a weak
// reference.
static long MakeCallDrop(int n, int methods, List<WeakReference> made, ref long calls) {
  var kept = new List<Type>();
  long s = Make(n, methods, AssemblyBuilderAccess.RunAndCollect, kept, ref calls);
  made.Add(new WeakReference(kept[0]));
  return s;
}

// An assembly of one type of `methods` methods, each called once; the type is added to
// `kept`.
static long Make(int n, int methods, AssemblyBuilderAccess access, List<Type> kept, ref long calls) {
  var ab = AssemblyBuilder.DefineDynamicAssembly(new AssemblyName("churn" + n), access);
  var tb = ab.DefineDynamicModule("churn" + n).DefineType("Churn" + n, TypeAttributes.Public | TypeAttributes.Abstract |
                                                                          TypeAttributes.Sealed);
  for (int m = 0; m < methods; m++) {
    var il = tb.DefineMethod("M" + m, MethodAttributes.Public | MethodAttributes.Static, typeof(long),
                             new[] { typeof(long) }).GetILGenerator();
    il.Emit(OpCodes.Ldarg_0);
    il.Emit(OpCodes.Ldc_I8, (long)n * 1000 + m);
    il.Emit(OpCodes.Mul);
    il.Emit(OpCodes.Ret);
  }
  var type = tb.CreateType();
  long s = 0;
  foreach (var mi in type.GetMethods(BindingFlags.Public | BindingFlags.Static | BindingFlags.DeclaredOnly)) {
    s += mi.CreateDelegate<Func<long, long>>()(3);
    calls++;
  }
  kept.Add(type);
  return s;
}
