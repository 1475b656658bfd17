#!/usr/bin/env python3
"""Writes a manual page per program (cyclelog(1), cyclelog-mirror(1), cyclelog-sync(1), cyclelog-desktop(1)) from the programs' own
--help, so the page never says other than the program does.

    scripts/make-man.py --bin .build/debug --out .build/man     (make man)
    scripts/make-man.py --bin .build/debug --check              (make test: every page renders without a warning
                                                                 and names every command)

A page: NAME and SYNOPSIS from the overview and usage, DESCRIPTION from the discussion, OPTIONS, then COMMANDS with
each subcommand's help (and its subcommands'), shell completion, exit status, files and the other programs.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

PROGRAMS = {
    "cyclelog": "collect and decode Bluetooth LE cycling sensors, build and store workouts",
    "cyclelog-mirror": "the ride being recorded on a paired second screen, and the ride history",
    "cyclelog-sync": "keep a rider's rides consistent with a shared PostgreSQL, upload them to intervals.icu and "
                     "Strava, fetch the coach's plan",
    "cyclelog-desktop": "the ride being recorded in the desktop's status area and notifications",
}
EXIT_STATUS = {
    "cyclelog": "0 success; 1 the input or the ride failed (a damaged file, a refused control); 2 the database or "
                "Bluetooth cannot be used; 64 a usage mistake.",
    "cyclelog-mirror": "0 success (a SIGTERM ends it cleanly); 1 it cannot serve (the address is taken, a "
                       "certificate cannot be read) or a pairing command cannot reach the mirror.",
    "cyclelog-sync": "0 success; 1 something was refused (a ride, a key, an authorization); 2 bad input, the local "
                     "database or an account file others can read; 75 (EX_TEMPFAIL) the server or a service could "
                     "not be reached or asked to wait, and a later attempt may succeed.",
    "cyclelog-desktop": "0 success (the desktop session ended; a SIGTERM ends it at once, with nothing to save); 1 "
                        "the session bus cannot be reached, or the autostart file cannot be written; 64 a usage "
                        "mistake.",
}
FILES = {
    "cyclelog": "$CYCLELOG_DB, else $XDG_DATA_HOME/cyclelog/cyclelog.sqlite: the ride database.",
    "cyclelog-mirror": "$STATE_DIRECTORY, else $XDG_STATE_HOME/cyclelog, else ~/.local/state/cyclelog: "
                       "mirror-devices.json, the paired devices (hashes of their tokens).",
    "cyclelog-sync": "The ride database (as cyclelog's); the server's password from --password-file or libpq's "
                     "PGPASSFILE, never from the command line; accounts/ beside the database: intervals.json and "
                     "strava.json, the services' keys and tokens (0600, refused when others can read them).",
    "cyclelog-desktop": "$XDG_CONFIG_HOME/autostart/org.cyclelog.Desktop.desktop (else ~/.config/autostart/): the "
                        "autostart file `cyclelog-desktop autostart` writes; the ride database (as cyclelog's), "
                        "read-only, for a saved ride's summary.",
}


def help_text(binary, words):
    environment = dict(os.environ, COLUMNS="78")
    result = subprocess.run([binary] + words + ["--help"], capture_output=True, text=True, env=environment)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join([binary] + words)} --help failed: {result.stderr}")
    return result.stdout


def sections(text):
    """The help's parts: the overview (and discussion), USAGE, OPTIONS, SUBCOMMANDS, by heading."""
    parts, current = {"OVERVIEW": []}, "OVERVIEW"
    for line in text.splitlines():
        heading = re.match(r"^([A-Z][A-Z ]+):(.*)$", line)
        if heading and heading.group(1) in ("OVERVIEW", "USAGE", "OPTIONS", "SUBCOMMANDS", "ARGUMENTS"):
            current = heading.group(1)
            parts.setdefault(current, [])
            if heading.group(2).strip():
                parts[current].append(heading.group(2).strip())
            continue
        parts.setdefault(current, []).append(line)
    return {key: "\n".join(lines).strip("\n") for key, lines in parts.items()}


def subcommands(text):
    names = []
    for line in sections(text).get("SUBCOMMANDS", "").splitlines():
        match = re.match(r"^  ([a-z][a-z0-9-]*)(?:\s|$)", line)
        if match:
            names.append(match.group(1))
    return names


def escaped(text):
    """Text for troff: backslashes doubled as \\e, a leading dot or quote made literal."""
    lines = []
    for line in text.replace("\\", "\\e").splitlines():
        lines.append("\\&" + line if line.startswith((".", "'")) else line)
    return "\n".join(lines)


def preformatted(text):
    return ".nf\n" + escaped(text) + "\n.fi"


def commands(binary, words, depth, out):
    for name in subcommands(help_text(binary, words)):
        path = words + [name]
        text = help_text(binary, path)
        out.append(f".SS {escaped(' '.join(path))}")
        out.append(preformatted(text.strip("\n")))
        commands(binary, path, depth + 1, out)


def page(binary, program, date):
    text = help_text(binary, [])
    parts = sections(text)
    overview = parts.get("OVERVIEW", "").strip()
    out = [
        f'.TH {program.upper()} 1 "{date}" "cyclelog" "User Commands"',
        ".SH NAME",
        f"{escaped(program)} \\- {escaped(PROGRAMS[program])}",
        ".SH SYNOPSIS",
        preformatted(parts.get("USAGE", program)),
        ".SH DESCRIPTION",
        "\n.PP\n".join(escaped(" ".join(line.strip() for line in paragraph.splitlines()))
                          for paragraph in re.split(r"\n\s*\n", overview) if paragraph.strip()),
    ]
    if parts.get("OPTIONS"):
        out += [".SH OPTIONS", preformatted(parts["OPTIONS"])]
    out.append(".SH COMMANDS")
    commands(binary, [], 0, out)
    out += [
        ".SH SHELL COMPLETION",
        f"{escaped(program)} \\-\\-generate\\-completion\\-script bash|zsh|fish prints a completion script, e.g.",
        preformatted(f"{program} --generate-completion-script bash > ~/.local/share/bash-completion/completions/{program}"),
        ".SH EXIT STATUS",
        escaped(EXIT_STATUS[program]),
        ".SH FILES",
        escaped(FILES[program]),
        ".SH SEE ALSO",
        ", ".join(f"\\fB{other}\\fR(1)" for other in PROGRAMS if other != program)
        + "; the README of the cyclelog repository.",
    ]
    return "\n".join(out) + "\n", [" ".join(words) for words in all_commands(binary, [])]


def all_commands(binary, words):
    found = []
    for name in subcommands(help_text(binary, words)):
        found.append(words + [name])
        found += all_commands(binary, words + [name])
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="the folder with the three programs")
    parser.add_argument("--out", help="where the pages go (NAME.1)")
    parser.add_argument("--check", action="store_true", help="render each page and check it, writing nothing")
    parser.add_argument("--date", default=os.environ.get("SOURCE_DATE", "2026-11-27"))
    args = parser.parse_args()
    failures = []
    folder = args.out or tempfile.mkdtemp(prefix="cyclelog-man-")
    os.makedirs(folder, exist_ok=True)
    for program in PROGRAMS:
        binary = os.path.join(args.bin, program)
        if not os.access(binary, os.X_OK) and not args.check:
            print(f"make-man: no {binary}: no page for it")
            continue
        text, names = page(binary, program, args.date)
        path = os.path.join(folder, program + ".1")
        with open(path, "w") as file:
            file.write(text)
        if not args.check:
            print(f"make-man: {path}")
            continue
        rendered = subprocess.run(
            ["man", "--warnings", "-E", "UTF-8", "-l", path], capture_output=True, text=True,
            env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="0"))
        if rendered.returncode != 0 or rendered.stderr.strip():
            failures.append(f"{program}.1 does not render cleanly: {rendered.stderr.strip()[:2000]}")
        plain = re.sub(r".\x08", "", rendered.stdout)
        for name in names:
            if f"{program} {name} " not in plain and f"{program} {name}\n" not in plain:
                failures.append(f"{program}.1 lacks its command '{name}'")
        for heading in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "SHELL COMPLETION", "EXIT STATUS"]:
            if f"\n{heading}\n" not in plain:
                failures.append(f"{program}.1 lacks its section {heading}")
        print(f"make-man: {program}.1 renders, {len(names)} commands")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
