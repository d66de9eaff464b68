# SPDX-License-Identifier: MIT
# The .NET builds shared by the benchmarks (tools/bench/dotnet, tools/bench/dotnet-crash)
# and the integration tests (tests/integration/lib.sh): a C# project built from a copy
# (no obj/ or bin/ in the source tree), for the SDK's runtime or self-contained for another
# runtime patch (its runtime pack from NuGet). Every function prints the end of the build's
# log to stderr and returns non-zero when it fails; the caller decides.
# shellcheck shell=bash

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

# dotnet_build_copy SRC_DIR WORK_DIR LOG: copies the project in SRC_DIR to WORK_DIR and
# builds it (Release) into WORK_DIR/out, for the SDK's runtime.
dotnet_build_copy() {
  local src=$1 work=$2 log=$3
  rm -rf "$work" && mkdir -p "$work" && cp -r "$src"/. "$work"/ || return 1
  dotnet build -c Release -o "$work/out" "$work" >"$log" 2>&1 || { tail -20 "$log" >&2; return 1; }
}

# dotnet_publish_runtime SRC_DIR VERSION OUT_DIR LOG: the project in SRC_DIR (its *.cs and
# *.csproj files) published self-contained for runtime VERSION (e.g. 9.0.23: retargeted to
# net9.0) into OUT_DIR, built in the copy OUT_DIR.src; the app host runs it on that runtime.
dotnet_publish_runtime() {
  local src=$1 v=$2 out=$3 log=$4
  rm -rf "$out" "$out.src" && mkdir -p "$out.src" && cp "$src"/*.cs "$src"/*.csproj "$out.src"/ &&
    sed -i "s|<TargetFramework>net[0-9.]*</TargetFramework>|<TargetFramework>net${v%%.*}.0</TargetFramework>|" \
      "$out.src"/*.csproj || return 1
  nice dotnet publish -c Release -r linux-x64 --self-contained -p:RuntimeFrameworkVersion="$v" \
    -p:UseAppHost=true -o "$out" "$out.src" >"$log" 2>&1 || { tail -20 "$log" >&2; return 1; }
}
