// SPDX-License-Identifier: MIT
// jitprov-dynamic-methods N [EVERY]: makes N dynamic methods dyn0 .. dyn<N-1>, each
// JIT'd by its one call and dropped, with a full collection (finalizers run) after every
// EVERY of them (default 50): CoreCLR destroys the collected ones (MethodUnloadVerbose)
// and gives their MethodIDs to the next ones it makes. Prints "made N dynamic methods".
using System.Reflection.Emit;

if (args.Length < 1 || !int.TryParse(args[0], out int n) || n < 1 ||
    (args.Length > 1 && (!int.TryParse(args[1], out int _) || int.Parse(args[1]) < 1))) {
  Console.Error.WriteLine("usage: jitprov-dynamic-methods N [EVERY]");
  return 2;
}
int every = args.Length > 1 ? int.Parse(args[1]) : 50;
long sink = 0;
for (int i = 0; i < n; i++) {
  var dm = new DynamicMethod("dyn" + i, typeof(long), new[] { typeof(long) }, typeof(Console).Module);
  var il = dm.GetILGenerator();
  il.Emit(OpCodes.Ldarg_0);
  il.Emit(OpCodes.Ldc_I8, (long)i);
  il.Emit(OpCodes.Add);
  il.Emit(OpCodes.Ret);
  sink += ((Func<long, long>)dm.CreateDelegate(typeof(Func<long, long>)))(i);
  if (i % every == every - 1) {
    GC.Collect();
    GC.WaitForPendingFinalizers();
    GC.Collect();
  }
}
Console.WriteLine($"made {n} dynamic methods ({sink})");
return 0;
