#!/usr/bin/env python3
"""Writes bash completion for symdex and the man pages symdex(1) and symdexd(8) from the
programs' own --help: the command table (`symdex --help`) and each command's options (`symdex
COMMAND --help`, the QCommandLineParser that parses them). Run at build time (CMake), so the
completion and the pages cannot drift from the options the programs accept. Each page is also
written gzip-compressed (PAGE.gz, no name or time in the header, so the bytes depend only on the
text), as installed: Debian's policy compresses man pages.

Usage: gen-cli-docs.py BIN_DIR OUT_DIR   (BIN_DIR holds symdex and symdexd)
"""
import gzip
import os
import re
import subprocess
import sys


def run(*argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True,
                          env={**os.environ, "LC_ALL": "C.UTF-8"}).stdout


def commands(symdex):
    """[(name, summary)] from the command table `symdex --help` prints."""
    out, table = [], False
    for line in run(symdex, "--help").splitlines():
        if line.startswith("commands:"):
            table = True
            continue
        if table:
            m = re.match(r"^  (\S+)\s+(.*)$", line)
            if not m:
                if out:
                    break
                continue
            out.append((m.group(1), m.group(2)))
    return out


def parse_help(text):
    """(usage, description, [(names, value, description)], [(argument, description)])."""
    usage, description, options, arguments = "", [], [], []
    section = "head"
    for line in text.splitlines():
        if line.startswith("Usage: "):
            usage = line[len("Usage: "):]
            continue
        if line in ("Options:", "Arguments:"):
            section = line[:-1].lower()
            continue
        if section == "head":
            if line.strip():
                description.append(line.strip())
            continue
        m = re.match(r"^  (\S.*?)(?:\s{2,}(.*))?$", line)
        if m:
            spec, rest = m.group(1), m.group(2) or ""
            if section == "options":
                value = re.search(r"<([^>]+)>", spec)
                names = re.findall(r"--?[A-Za-z0-9][A-Za-z0-9-]*", spec)
                options.append([names, value.group(1) if value else "", rest])
            else:
                arguments.append([spec, rest])
        elif line.strip():
            target = options if section == "options" else arguments
            if target:
                target[-1][-1] += " " + line.strip()
    return usage, " ".join(description), options, arguments


def troff(text):
    return text.replace("\\", "\\e").replace("-", "\\-").replace("'", "\\(aq")


def option_lines(options):
    lines = []
    for names, value, desc in options:
        head = ", ".join(f"\\fB{troff(n)}\\fR" for n in names)
        if value:
            head += f" \\fI{troff(value)}\\fR"
        lines += [".TP", head, troff(desc)]
    return lines


def man_symdex(version, table, helps):
    lines = [
        f'.TH SYMDEX 1 "" "symdex {version}" "User Commands"',
        ".SH NAME",
        "symdex \\- index C/C++ source trees with libclang and query the symbol store",
        ".SH SYNOPSIS",
        ".B symdex",
        ".I COMMAND",
        "[\\fIoptions\\fR] [\\fIarguments\\fR]",
        ".SH DESCRIPTION",
        troff("symdex reads a compile_commands.json, parses every translation unit with libclang "
              "on a oneTBB arena, and writes declarations, definitions, references and their "
              "relations into a persistent symbol store on LMDB (.symdex/ at the project root), "
              "which the commands below query. Indexing is incremental. symdexd(8) keeps the "
              "store up to date and answers editors; symdex lsp is their entry."),
        ".SH COMMANDS",
    ]
    for name, summary in table:
        usage, description, options, arguments = helps[name]
        lines += [f'.SS "{troff(usage or "symdex " + name)}"', troff(description or summary)]
        for arg, desc in arguments:
            lines += [".TP", f"\\fI{troff(arg)}\\fR", troff(desc)]
        lines += option_lines(options)
    lines += [
        ".SH EXIT STATUS",
        troff("0 success, 1 nothing found, 2 usage or input error, 3 part of the work failed (a "
              "benchmark run), 4 internal error."),
        ".SH FILES",
        ".TP", "\\fI.symdex/\\fR",
        troff("The store: the nearest .symdex above the current directory, unless --store DIR."),
        ".SH SEE ALSO",
        "\\fBsymdexd\\fR(8), \\fBclangd\\fR(1)",
    ]
    return "\n".join(lines) + "\n"


def man_symdexd(version, help_text):
    usage, description, options, arguments = parse_help(help_text)
    lines = [
        f'.TH SYMDEXD 8 "" "symdex {version}" "System Administration"',
        ".SH NAME",
        "symdexd \\- symdex's indexing daemon: keeps a symbol store current and answers LSP",
        ".SH SYNOPSIS",
        ".B symdexd",
        "[\\fIoptions\\fR]",
        ".SH DESCRIPTION",
        troff(description),
        troff("Clients (editors through symdex lsp, the symdex query commands) connect to its "
              "Unix socket; requests and answers are JSON-RPC 2.0 with LSP framing. One daemon "
              "serves a store (STORE/daemon.lock). SIGTERM commits what is pending and exits."),
        ".SH OPTIONS",
    ]
    lines += option_lines(options)
    lines += [
        ".SH FILES",
        ".TP", "\\fISTORE/daemon.lock\\fR",
        troff("The daemon's pid and socket path; held while it runs."),
        ".TP", "\\fI$XDG_RUNTIME_DIR/symdex/\\fR",
        troff("The sockets (0600, in a 0700 directory)."),
        ".SH SEE ALSO",
        "\\fBsymdex\\fR(1)",
    ]
    return "\n".join(lines) + "\n"


def bash_completion(table, helps):
    names = " ".join(name for name, _ in table)
    cases, values = [], []
    for name, _ in table:
        _, _, options, _ = helps[name]
        flags = " ".join(n for names_, _, _ in options for n in names_)
        cases.append(f"    {name}) opts='{flags}' ;;")
        for names_, value, _ in options:
            for n in names_:
                values.append((name, n, value))
    value_cases = []
    for name, flag, value in values:
        if not value:
            continue
        kind = ("dirs" if value in ("DIR", "BUILD") else
                "files" if value in ("FILE", "PATH", "CSV", "OUT") else "none")
        value_cases.append(f"    {name}:{flag}) kind={kind} ;;")
    return f"""# bash completion for symdex. Generated by scripts/gen-cli-docs.py from the programs' --help:
# do not edit.
_symdex() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "{names} --help --version" -- "$cur"))
    return
  fi
  local command=${{COMP_WORDS[1]}} opts='' kind=''
  case "$command:$prev" in
{chr(10).join(value_cases)}
  esac
  case "$kind" in
    dirs) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    files) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    none) return ;;
  esac
  case "$command" in
{chr(10).join(cases)}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}}
complete -o filenames -F _symdex symdex
"""


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    bin_dir, out_dir = sys.argv[1], sys.argv[2]
    symdex = os.path.join(bin_dir, "symdex")
    symdexd = os.path.join(bin_dir, "symdexd")
    version = run(symdex, "--version").split()[1]
    table = commands(symdex)
    if not table:
        sys.exit("gen-cli-docs.py: no command table in symdex --help")
    helps = {name: parse_help(run(symdex, name, "--help")) for name, _ in table}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "symdex.bash"), "w") as f:
        f.write(bash_completion(table, helps))
    pages = {"symdex.1": man_symdex(version, table, helps),
             "symdexd.8": man_symdexd(version, run(symdexd, "--help"))}
    for name, text in pages.items():
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(text)
        with open(os.path.join(out_dir, name + ".gz"), "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw,
                               mtime=0) as f:
                f.write(text.encode())


if __name__ == "__main__":
    main()
