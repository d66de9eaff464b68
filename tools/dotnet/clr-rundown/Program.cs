// SPDX-License-Identifier: MIT
// jitprov-clr-rundown: CoreCLR's own view of a .NET process's JIT'd code, read by
// Microsoft's TraceEvent (it shares no code with jitprov's client):
//   rundown PID OUT.tsv   CoreCLR's rundown of a running process: an EventPipe session
//                         over the diagnostics socket, stopped with rundown requested;
//                         one line per JIT'd body it reports (MethodDCEndVerbose)
//   loads TRACE OUT.tsv [UNLOADS.tsv]
//                         every JIT'd body a .nettrace recorded (MethodLoadVerbose),
//                         with the optimization tier the rundown does not carry; and,
//                         when UNLOADS.tsv is given, what it recorded unloaded: lines
//                         "method START QPC" (MethodUnloadVerbose: dynamic methods,
//                         collectible code) and "module MODULE_ID QPC" (ModuleUnload:
//                         a collectible context's module, its code gone with it)
// Lines: start size clr_tier method_id native_version namespace name signature qpc
// module_id (tab-separated; start, size, method_id and module_id in hex; clr_tier -1
// when not reported; qpc:
// the event's time stamp, CLOCK_MONOTONIC ns on Linux).
// Prints the counts, the rundown's duration (DCEndInit to DCEndComplete) and the
// events lost; exits 1 when any was lost or the rundown did not complete.
// TimeStampQPC ("discouraged"): the raw CLOCK_MONOTONIC ns, comparable across sessions.
#pragma warning disable CS0618
using System.Diagnostics.Tracing;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

const string Usage =
    "usage: jitprov-clr-rundown rundown PID OUT.tsv | loads TRACE.nettrace OUT.tsv [UNLOADS.tsv]\n";
if (args.Length == 1 && (args[0] == "--help" || args[0] == "-h")) {
  Console.Write(Usage);
  return 0;
}
if (!(args.Length == 3 && args[0] == "rundown") && !((args.Length == 3 || args.Length == 4) && args[0] == "loads")) {
  Console.Error.Write(Usage);
  return 2;
}
try {
  return args[0] == "rundown" ? Rundown(args[1], args[2]) : Loads(args[1], args[2], args.Length == 4 ? args[3] : null);
} catch (Exception e) when (e is IOException || e is ServerNotAvailableException || e is UnauthorizedAccessException) {
  Console.Error.WriteLine("jitprov-clr-rundown: " + e.Message);
  return 1;
}

static void Line(StreamWriter o, MethodLoadUnloadVerboseTraceData e, int tier) {
  o.Write($"{e.MethodStartAddress:x}\t{e.MethodSize:x}\t{tier}\t{e.MethodID:x}\t{e.ReJITID}\t");
  o.Write($"{e.MethodNamespace}\t{e.MethodName}\t{e.MethodSignature}\t{e.TimeStampQPC}\t{e.ModuleID:x}\n");
}

static bool Jitted(MethodLoadUnloadVerboseTraceData e) => ((int)e.MethodFlags & 0x8) != 0;

static int Rundown(string pidText, string outPath) {
  if (!int.TryParse(pidText, out int pid)) {
    Console.Error.WriteLine($"jitprov-clr-rundown: '{pidText}' is not a process id");
    return 2;
  }
  var client = new DiagnosticsClient(pid);
  // Nothing but the rundown: the runtime adds its rundown provider (keywords 0x80020139:
  // loader, JIT, end enumeration) when requestRundown is set.
  var providers = new[] { new EventPipeProvider("Microsoft-Windows-DotNETRuntime", EventLevel.Critical, 0) };
  int bodies = 0, lost = 0;
  double init = -1, complete = -1;
  long initQpc = 0, completeQpc = 0;
  using (var output = new StreamWriter(outPath))
  using (var session = client.StartEventPipeSession(providers, requestRundown: true, circularBufferMB: 256)) {
    var reader = Task.Run(() => {
      using var source = new EventPipeEventSource(session.EventStream);
      var rundown = new ClrRundownTraceEventParser(source);
      rundown.MethodDCStopVerbose += e => {
        if (!Jitted(e)) return;  // precompiled (ReadyToRun) code is not the client's
        Line(output, e, -1);     // the rundown carries no optimization tier
        bodies++;
      };
      rundown.MethodDCStopInit += e => (init, initQpc) = (e.TimeStampRelativeMSec, e.TimeStampQPC);
      rundown.MethodDCStopComplete += e => (complete, completeQpc) = (e.TimeStampRelativeMSec, e.TimeStampQPC);
      source.Process();
      lost = source.EventsLost;
    });
    session.Stop();  // the runtime runs its rundown now, then ends the stream
    if (!reader.Wait(TimeSpan.FromMinutes(5))) {
      Console.Error.WriteLine("jitprov-clr-rundown: the rundown stream did not end in 5 minutes");
      return 1;
    }
  }
  Console.WriteLine($"clr-rundown: pid {pid}: {bodies} JIT'd bodies, rundown {complete - init:F1} ms, {lost} events lost" +
                    $" (qpc {initQpc} to {completeQpc})");
  if (init < 0 || complete < 0) {
    Console.Error.WriteLine("jitprov-clr-rundown: no complete rundown (DCEndInit/DCEndComplete missing)");
    return 1;
  }
  return lost == 0 ? 0 : 1;
}

static int Loads(string tracePath, string outPath, string? unloadsPath) {
  int loads = 0, unloads = 0, modules = 0, lost;
  using (var output = new StreamWriter(outPath))
  using (var unloaded = unloadsPath == null ? null : new StreamWriter(unloadsPath))
  using (var source = new EventPipeEventSource(tracePath)) {
    source.Clr.MethodLoadVerbose += e => {
      if (!Jitted(e)) return;
      Line(output, e, (int)e.OptimizationTier);
      loads++;
    };
    if (unloaded != null) {
      source.Clr.MethodUnloadVerbose += e => {
        if (!Jitted(e)) return;
        unloaded.Write($"method\t{e.MethodStartAddress:x}\t{e.TimeStampQPC}\n");
        unloads++;
      };
      source.Clr.LoaderModuleUnload += e => {
        unloaded.Write($"module\t{e.ModuleID:x}\t{e.TimeStampQPC}\n");
        modules++;
      };
    }
    source.Process();
    lost = source.EventsLost;
  }
  Console.WriteLine($"clr-loads: {tracePath}: {loads} JIT'd bodies loaded" +
                    (unloadsPath != null ? $", {unloads} unloaded, {modules} modules unloaded" : "") + $", {lost} events lost");
  return lost == 0 ? 0 : 1;
}
