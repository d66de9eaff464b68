#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The man pages cannot drift from the tools: each built page renders without a warning
# (man --warnings, at 80 columns), whatis can read its NAME (lexgrog), and the options
# its tool's --help prints are exactly the options the page documents (as the tagged
# entries of its OPTIONS section; for jitprov, of each verb's "jitprov VERB" subsection,
# and every verb `jitprov --help` lists has one).
#   man_check.py NAME PAGE PROGRAM [NAME PAGE PROGRAM ...]
import os
import re
import shutil
import subprocess
import sys

# Verbs a page documents ahead of the build (issue 38): not an error while --help does
# not list them, checked as any other verb once it does.
PENDING_VERBS = set()
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    return p.returncode, p.stdout, p.stderr


def render(page, width):
    env = dict(os.environ, MANWIDTH=str(width), LC_ALL="C.UTF-8", MANROFFOPT="-rHY=0", MAN_KEEP_FORMATTING="")
    env.pop("MANPAGER", None)
    env.pop("PAGER", None)
    return run(["man", "--warnings", "-E", "UTF-8" if width == 80 else "ascii", "-l", page], env)


def help_options(program, *verb):
    """The options of PROGRAM [VERB] --help (CLI11's "Options:" section), and its verbs."""
    rc, out, err = run([program, *verb, "--help"])
    if rc != 0:
        fail("%s --help: exit %d: %s" % (" ".join([program, *verb]), rc, err.strip()))
    opts, verbs, section = set(), [], None
    for line in out.splitlines():
        if re.match(r"^\S.*:$", line):
            section = line[:-1]
            continue
        m = re.match(r"^  (\S+)", line)
        if not m:
            continue
        if section == "Options":
            opts |= {w for w in m.group(1).split(",") if w.startswith("-")}
        elif section == "Subcommands":
            verbs.append(m.group(1))
    return opts - {"-h", "--help"}, verbs


def sections(text, indent):
    """{heading: its lines} of the rendered page, for the headings at INDENT spaces."""
    out, name = {}, None
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        depth = len(line) - len(stripped)
        if stripped and depth <= indent and not line.startswith(" " * (indent + 1)):
            name = stripped if depth == indent else None
            if name is not None:
                out[name] = []
            continue
        if name is not None:
            out[name].append(line)
    return out


def documented(lines):
    """The options of the tagged entries: a line 7 spaces in that begins with '-',
    its description on the next line, 11 spaces in."""
    opts = set()
    for i, line in enumerate(lines):
        if re.match(r"^ {7}-", line) and i + 1 < len(lines) and re.match(r"^ {11}\S", lines[i + 1]):
            opts |= set(OPTION.findall(line))
    return opts - {"-h", "--help"}


def compare(what, helped, doc):
    missing, extra = sorted(helped - doc), sorted(doc - helped)
    if missing:
        fail("%s: --help prints %s, the page does not document it" % (what, ", ".join(missing)))
    if extra:
        fail("%s: the page documents %s, --help does not print it" % (what, ", ".join(extra)))
    if not missing and not extra:
        print("ok: %s: the %d options of --help, and only they, documented" % (what, len(helped)))


def main(args):
    if len(args) % 3 != 0 or not args:
        sys.exit("usage: man_check.py NAME PAGE PROGRAM [NAME PAGE PROGRAM ...]")
    for tool in ("man", "lexgrog"):
        if shutil.which(tool) is None:
            print("SKIP: no %s (package man-db)" % tool)
            sys.exit(77)
    for name, page, program in zip(args[0::3], args[1::3], args[2::3]):
        rc, out, err = render(page, 80)
        if rc != 0 or err.strip():
            fail("%s: man --warnings: exit %d: %s" % (page, rc, err.strip()))
        else:
            print("ok: %s renders at 80 columns without a warning" % name)
        rc, out, err = run(["lexgrog", page])
        if rc != 0 or ('"%s - ' % name) not in out:
            fail("%s: lexgrog cannot read its NAME: %s%s" % (page, out.strip(), err.strip()))
        rc, text, err = render(page, 250)
        text = re.sub(r".\x08", "", text)
        if "--help" not in text:
            fail("%s: --help is not in the page" % name)
        top = sections(text, 0)
        opts, verbs = help_options(program)
        if not verbs:
            compare(name, opts, documented(top.get("OPTIONS", [])))
            continue
        # jitprov: a subsection per verb under COMMANDS.
        subs = sections("\n".join(top.get("COMMANDS", [])), 3)
        for verb in verbs:
            heading = "%s %s" % (name, verb)
            if heading not in subs:
                fail("%s: no subsection '%s' under COMMANDS for the verb --help lists" % (name, heading))
                continue
            compare(heading, help_options(program, verb)[0], documented(subs[heading]))
        for heading in sorted(subs):
            verb = heading.split(" ", 1)[-1]
            if verb not in verbs:
                if verb in PENDING_VERBS:
                    print("note: %s: documented ahead of this build (not in --help yet)" % heading)
                else:
                    fail("%s: documented, but --help lists no verb %s" % (heading, verb))
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)


main(sys.argv[1:])
