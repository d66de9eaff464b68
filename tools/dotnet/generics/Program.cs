// SPDX-License-Identifier: MIT
// jitprov-collectible-generics N READY [keep]: loads a copy of itself into N collectible
// AssemblyLoadContexts in turn; in each, List<PluginStruct> (an exact instantiation over a
// type of that context: CoreCLR allocates it, and JITs its code, in the context's loader
// allocator, while its events name System.Private.CoreLib's module) is used until its
// methods tier up, then the context is unloaded and collected. Meanwhile the default
// context keeps its own List<KeptStruct> in use. When every context is gone it writes
// READY and waits for a line on stdin (a rundown is taken then), then prints
// "collectible-generics: N contexts made, 0 alive". With `keep`, one more context is
// made then and left loaded, its code in use until the process exits (the exit rundown
// must hold it).
using System.Runtime.CompilerServices;
using System.Runtime.Loader;

public struct PluginStruct {
  public int X;
  public long Y;
}

public struct KeptStruct {
  public int X;
}

public static class Plugin {
  public static long Run(int rounds) {
    long sum = 0;
    for (int r = 0; r < rounds; r++) {
      var l = new List<PluginStruct>();
      for (int i = 0; i < 64; i++) l.Add(new PluginStruct { X = i, Y = r });
      foreach (var p in l) sum += p.X + p.Y;
    }
    return sum;
  }
}

public static class Program {
  static readonly List<KeptStruct> Kept = new();
  static AssemblyLoadContext? Loaded;  // `keep`: alive to the end

  [MethodImpl(MethodImplOptions.NoInlining)]
  static WeakReference Once(int n) {
    var alc = new AssemblyLoadContext("generics-" + n, isCollectible: true);
    var run = alc.LoadFromAssemblyPath(typeof(Program).Assembly.Location).GetType("Plugin")!.GetMethod("Run")!;
    long sum = 0;
    for (int k = 0; k < 40; k++) {  // calls spread over time: tier-0, then tier-1 code
      sum += (long)run.Invoke(null, new object[] { 200 })!;
      Kept.Add(new KeptStruct { X = (int)(sum & 0xff) });
      Thread.Sleep(2);
    }
    alc.Unload();
    return new WeakReference(alc);
  }

  public static int Main(string[] args) {
    if (args.Length < 2 || !int.TryParse(args[0], out int n) || n < 1) {
      Console.Error.WriteLine("usage: jitprov-collectible-generics N READY");
      return 2;
    }
    var contexts = new List<WeakReference>();
    for (int i = 0; i < n; i++) contexts.Add(Once(i));
    for (int i = 0; i < 50 && contexts.Exists(w => w.IsAlive); i++) {
      GC.Collect();
      GC.WaitForPendingFinalizers();
    }
    int alive = contexts.FindAll(w => w.IsAlive).Count;
    if (args.Length > 2 && args[2] == "keep") {
      Loaded = new AssemblyLoadContext("generics-kept", isCollectible: true);
      var run = Loaded.LoadFromAssemblyPath(typeof(Program).Assembly.Location).GetType("Plugin")!.GetMethod("Run")!;
      for (int k = 0; k < 40; k++) {
        run.Invoke(null, new object[] { 200 });
        Thread.Sleep(2);
      }
    }
    File.WriteAllText(args[1], "ready\n");
    Console.In.ReadLine();
    Console.WriteLine($"collectible-generics: {n} contexts made, {alive} alive, {Kept.Count} kept");
    return alive == 0 ? 0 : 1;
  }
}
