#!/usr/bin/env python3
"""Checks cyclelog's service files the way the system will read them.

- udev/*.rules: a syntax check of our own (keys, operators, quoting, a comment saying why before every rule),
  and `udevadm verify` where udev has it (systemd 253 and later).
- systemd/cyclelog.service and cyclelog-mirror.service: `systemd-analyze verify`, the exposure score from
  `systemd-analyze security`, and the ExecStart command line parsed by the real binary.
- systemd/cyclelog.sysusers: `systemd-sysusers --dry-run` into an empty root.
- dbus/org.cyclelog.Recorder.conf and org.cyclelog.Mirror.conf: a real dbus-daemon with the system bus's
  default-deny policy loads them, and then refuses a stranger's Pause and device list while letting root's
  through and anyone read the recorder's properties.
- `make install` / `make uninstall` with DESTDIR: every file where the system looks for it, then gone.
Prints one line per check; exits 1 if any failed. A check that cannot run says why.
"""
import argparse
import os
import re
import shutil
import subprocess
import signal
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MATCH_KEYS = {"ACTION", "DEVPATH", "KERNEL", "NAME", "SYMLINK", "SUBSYSTEM", "DRIVER", "ATTR", "SYSCTL", "KERNELS",
              "SUBSYSTEMS", "DRIVERS", "ATTRS", "TAGS", "ENV", "CONST", "TAG", "TEST", "PROGRAM", "RESULT"}
ASSIGN_KEYS = {"NAME", "SYMLINK", "OWNER", "GROUP", "MODE", "SECLABEL", "ATTR", "SYSCTL", "ENV", "TAG", "RUN",
               "LABEL", "GOTO", "IMPORT", "OPTIONS"}
# Keys that take {name}, and whether they must.
NEEDS_NAME = {"ATTR", "ATTRS", "ENV", "SYSCTL", "CONST", "SECLABEL", "IMPORT"}
MAY_NAME = NEEDS_NAME | {"TEST", "RUN"}
TOKEN = re.compile(r'\s*([A-Z]+)(\{([^}]*)\})?\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')

failures = []


def report(ok, what, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail else ""), flush=True)
    if not ok:
        failures.append(what)


def run(arguments, **options):
    return subprocess.run(arguments, capture_output=True, text=True, **options)


def udev_rule_problems(path):
    """Syntax problems of one rules file, as 'line N: why'."""
    problems = []
    lines = open(path).read().split("\n")
    commented = False
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped:
            commented = False
            continue
        if stripped.startswith("#"):
            commented = True
            continue
        if line.endswith("\\"):
            problems.append(f"line {number}: continued lines are not used here")
            continue
        if not commented:
            problems.append(f"line {number}: no comment before the rule says why it exists")
        position, matches, assignments = 0, 0, 0
        while position < len(line):
            token = TOKEN.match(line, position)
            if not token:
                problems.append(f"line {number}: cannot read a key=\"value\" at column {position + 1}")
                break
            key, name, operator = token.group(1), token.group(3), token.group(4)
            is_match = operator in ("==", "!=")
            if is_match and key not in MATCH_KEYS:
                problems.append(f"line {number}: {key} cannot be matched")
            if not is_match and key not in ASSIGN_KEYS:
                problems.append(f"line {number}: {key} cannot be assigned")
            if key in NEEDS_NAME and name is None:
                problems.append(f"line {number}: {key} needs {{name}}")
            if name is not None and key not in MAY_NAME:
                problems.append(f"line {number}: {key} takes no {{name}}")
            matches += is_match
            assignments += not is_match
            position = token.end()
            if token.group(6) == "":
                break
        if matches == 0 or assignments == 0:
            problems.append(f"line {number}: a rule needs at least one match and one assignment")
    return problems


def check_udev_checker(folder):
    """The syntax check finds what udev would reject: it can fail."""
    bad = os.path.join(folder, "bad.rules")
    with open(bad, "w") as file:
        file.write('SUBSYSTEM=="usb", ATTR="on"\n# why\nSUBSYSTEM="usb", RUN+="/bin/true"\n'
                   '# why\nACTION=="add", FOO=="x", ENV{A}="1"\n# why\nACTION=="add", ENV{A}="unterminated\n')
    found = udev_rule_problems(bad)
    expected = ["line 1: no comment", "line 1: ATTR needs {name}", "line 3: SUBSYSTEM cannot be assigned",
                "line 5: FOO cannot be matched", "line 7: cannot read"]
    missed = [problem for problem in expected if not any(f.startswith(problem) for f in found)]
    report(not missed, "the udev syntax check catches broken rules", f"missed {missed}; found {found}" if missed else "")


def check_udev():
    rules = sorted(os.path.join(ROOT, "udev", name) for name in os.listdir(os.path.join(ROOT, "udev")))
    for path in rules:
        problems = udev_rule_problems(path)
        report(not problems, f"udev syntax {os.path.basename(path)}", "; ".join(problems))
    # The service a rule asks systemd to start exists.
    for path in rules:
        for unit in re.findall(r'SYSTEMD_WANTS\}\+?="([^"]+)"', open(path).read()):
            report(os.path.exists(os.path.join(ROOT, "systemd", unit)), f"udev {os.path.basename(path)} wants {unit}")
    has_verify = run(["udevadm", "verify", "--help"]).returncode == 0 if shutil.which("udevadm") else False
    if has_verify:
        result = run(["udevadm", "verify", "--resolve-names=never"] + rules)
        report(result.returncode == 0, "udevadm verify", (result.stdout + result.stderr).strip())
    else:
        version = run(["udevadm", "--version"]).stdout.strip() if shutil.which("udevadm") else "none"
        print(f"skip udevadm verify: it arrived in systemd 253 and this machine's udev is {version}; "
              "the syntax check above stands in", flush=True)


def check_unit(name, binary, folder, needed, exit_status, says, environment=None):
    """One unit: `systemd-analyze verify` and `security`, the lines it must have, and its ExecStart command
    line parsed by the real binary (which, with no bus there, stops with `exit_status` saying `says`, where a
    wrong argument would be a usage error, 64; with `exit_status` None it keeps running, says `says`, and stops
    cleanly on SIGTERM, as the mirror does: it serves the history without a bus)."""
    unit = open(os.path.join(ROOT, "systemd", name)).read()
    installed = "/usr/local/bin/" + os.path.basename(binary)
    # verify checks that ExecStart's binary exists: point it at the one just built.
    testable = os.path.join(folder, name)
    with open(testable, "w") as file:
        file.write(unit.replace(installed, binary))
    result = run(["systemd-analyze", "verify", testable])
    output = (result.stdout + result.stderr).strip()
    report(result.returncode == 0 and not output, f"systemd-analyze verify {name}", output)
    result = run(["systemd-analyze", "security", "--offline=true", testable])
    level = re.search(rf"Overall exposure level for {re.escape(name)}: ([0-9.]+)", result.stdout)
    exposure = float(level.group(1)) if level else None
    report(exposure is not None and exposure <= 1.5, f"systemd-analyze security exposure of {name} at most 1.5 (of 10)",
           f"{exposure}" if exposure is not None else (result.stdout + result.stderr)[-400:])
    for line in needed:
        report(line in unit, f"{name} has {line}")
    exec_start = re.search(r"^ExecStart=(.*)$", unit, re.M).group(1).split()
    # A word $NAME is the variable split at white space, as systemd expands it: nothing when it is not set.
    expanded = []
    for word in exec_start[1:]:
        if word.startswith("$") and not word.startswith("${"):
            expanded += (environment or {}).get(word[1:], "").split()
        else:
            expanded.append(word)
    arguments = [binary] + expanded
    nowhere = "unix:path=" + os.path.join(folder, "no-bus-here")
    arguments = [nowhere if previous in ("--bus", "--control-bus") else word
                 for previous, word in zip([""] + arguments, arguments)]
    arguments = [os.path.join(folder, "service.sqlite") if previous == "--db" else word
                 for previous, word in zip([""] + arguments, arguments)]
    # Any free port on loopback, not the unit's own (this machine may serve one already).
    arguments = ["127.0.0.1:0" if previous == "--listen" else word
                 for previous, word in zip([""] + arguments, arguments)]
    variables = dict(os.environ, STATE_DIRECTORY=folder, **(environment or {}))
    if exit_status is not None:
        result = run(arguments, timeout=60, env=variables)
        report(result.returncode == exit_status and says in result.stdout + result.stderr,
               f"{name}'s ExecStart parses", f"status {result.returncode}: {(result.stdout + result.stderr).strip()[-300:]}")
        return
    log_path = os.path.join(folder, name + ".log")
    with open(log_path, "w") as log:
        process = subprocess.Popen(arguments, stdout=log, stderr=subprocess.STDOUT, env=variables)
    deadline = time.time() + 30
    while says not in open(log_path).read() and time.time() < deadline and process.poll() is None:
        time.sleep(0.1)
    running = process.poll() is None
    process.send_signal(signal.SIGTERM)
    try:
        status = process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
        status = None
    output = open(log_path).read()
    report(running and says in output and status == 0, f"{name}'s ExecStart parses and runs without its bus",
           f"status {status}: {output.strip()[-300:]}")


def check_units(cyclelog, mirror, folder):
    check_unit("cyclelog.service", cyclelog, folder,
               ["Type=notify", "WatchdogSec=", "User=cyclelog", "SupplementaryGroups=bluetooth",
                "StateDirectory=cyclelog", "ProtectSystem=strict", "NoNewPrivileges=yes", "PrivateNetwork=yes",
                "RestrictAddressFamilies=AF_UNIX\n", "IPAddressDeny=any"], 2, "cannot reach")
    # The mirror: its own user, in the recorder's group; IP only to loopback and private ranges.
    check_unit("cyclelog-mirror.service", mirror, folder,
               ["User=cyclelog-mirror", "SupplementaryGroups=cyclelog", "StateDirectory=cyclelog-mirror",
                "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n", "IPAddressDeny=any",
                "IPAddressAllow=localhost link-local 10.0.0.0/8 172.16.0.0/12 192.168.0.0/16",
                "ProtectSystem=strict", "NoNewPrivileges=yes"], None, "the ride history is served meanwhile")
    # The sync: the recorder's user and database, the network opened, the password as a credential. With no
    # server where PGHOST points it says so and exits 75 (try again later).
    sync = os.path.join(os.path.dirname(mirror), "cyclelog-sync")
    check_unit("cyclelog-sync.service", sync, folder,
               ["User=cyclelog", "StateDirectory=cyclelog", "LoadCredential=postgres-password:",
                "SetCredential=postgres-password:\\n\n", "LoadCredential=intervals-api-key:",
                "SetCredential=intervals-api-key:\\n\n", "LoadCredential=strava-client-secret:",
                "SetCredential=strava-client-secret:\\n\n",
                "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n", "ProtectSystem=strict", "NoNewPrivileges=yes",
                "SuccessExitStatus=75"], 75, "cannot reach the shared store",
               environment={"PGHOST": os.path.join(folder, "no-server-here")})
    for name in ["cyclelog-sync.timer", "cyclelog-sync.path"]:
        result = run(["systemd-analyze", "verify", os.path.join(ROOT, "systemd", name)])
        output = (result.stdout + result.stderr).strip()
        report(result.returncode == 0 and not output, f"systemd-analyze verify {name}", output)
    # The capture and hub drop-ins replace ExecStart: each must be the unit's own, with its option added.
    unit_line = re.search(r"^ExecStart=(.+)$", open(os.path.join(ROOT, "systemd", "cyclelog.service")).read(), re.M)
    for name, added in [("capture", " --capture /var/lib/cyclelog/capture.btsnoop"), ("hub", " --bridge")]:
        drop_in = open(os.path.join(ROOT, "systemd", f"cyclelog-{name}.conf")).read()
        drop_in_line = re.search(r"^ExecStart=(.+)$", drop_in, re.M)
        report(unit_line and drop_in_line and drop_in_line.group(1) == unit_line.group(1) + added,
               f"the {name} drop-in runs the unit's command line with{added.split(' /')[0]} added",
               drop_in_line and drop_in_line.group(1))
    # The trigger: the file the recorder rewrites after each saved ride is the one the path unit watches, in the
    # recorder's state folder (the only place it may write).
    recorder = open(os.path.join(ROOT, "systemd", "cyclelog.service")).read()
    written = re.search(r"^ExecStart=.* --sync-trigger (\S+)", recorder, re.M)
    watched = re.search(r"^PathChanged=(\S+)$", open(os.path.join(ROOT, "systemd", "cyclelog-sync.path")).read(), re.M)
    report(written and watched and written.group(1) == watched.group(1)
           and written.group(1).startswith("/var/lib/cyclelog/"),
           "cyclelog-sync.path watches the file cyclelog.service writes after each ride, in its state folder",
           f"{written and written.group(1)} / {watched and watched.group(1)}")


def check_sysusers(folder):
    root = os.path.join(folder, "sysroot")
    os.makedirs(os.path.join(root, "etc"), exist_ok=True)
    result = run(["systemd-sysusers", "--dry-run", f"--root={root}", os.path.join(ROOT, "systemd", "cyclelog.sysusers")])
    output = result.stdout + result.stderr
    report(result.returncode == 0 and "cyclelog" in output and "bluetooth" in output and "cyclelog-mirror" in output,
           "systemd-sysusers --dry-run cyclelog.sysusers", output.strip()[-300:])


SYSTEM_LIKE_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <!-- The system bus's own defaults, from dbus's system.conf on this machine. -->
  {defaults}
  <include ignore_missing="no">{policy}</include>
  <include ignore_missing="no">{mirror_policy}</include>
  <!-- Only for this test: the cyclelog users do not exist here, so root stands in as the owners. -->
  <policy user="root"><allow own="org.cyclelog.Recorder"/><allow own="org.cyclelog.Mirror"/></policy>
</busconfig>
"""


def system_bus_defaults():
    """The default-context policy of the real system bus (method calls and name ownership denied)."""
    text = open("/usr/share/dbus-1/system.conf").read()
    return re.search(r'<policy context="default">.*?</policy>', text, re.S).group(0)


def check_dbus_policy(folder):
    if os.getuid() != 0:
        print("skip D-Bus policy behaviour: calling as another user needs root (runuser); run as root to check it",
              flush=True)
        return
    socket = os.path.join(folder, "system_bus_socket")
    config = os.path.join(folder, "system-like.conf")
    with open(config, "w") as file:
        file.write(SYSTEM_LIKE_CONFIG.format(
            socket=socket, defaults=system_bus_defaults(),
            policy=os.path.join(ROOT, "dbus", "org.cyclelog.Recorder.conf"),
            mirror_policy=os.path.join(ROOT, "dbus", "org.cyclelog.Mirror.conf")))
    os.chmod(folder, 0o755)
    daemon = subprocess.Popen(["dbus-daemon", "--config-file=" + config, "--nofork", "--nopidfile", "--print-address"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    address = daemon.stdout.readline().strip()
    if not address:
        report(False, "dbus-daemon loads org.cyclelog.Recorder.conf", daemon.stderr.read())
        return
    report(True, "dbus-daemon loads org.cyclelog.Recorder.conf and org.cyclelog.Mirror.conf")
    os.chmod(socket, 0o777)
    # Two owners, as on a real system: dbus-daemon matches a rule's destination against every name the
    # receiving connection owns, so one process owning both names would mix the two policies.
    owners = [subprocess.Popen([sys.executable, "-c", OWNER, address, name], stdout=subprocess.PIPE, text=True)
              for name in ("Recorder", "Mirror")]
    try:
        ready = [owner.stdout.readline().strip() for owner in owners]  # empty if it cannot take the name
        report(ready == ["owned", "owned"],
               "root may own org.cyclelog.Recorder and org.cyclelog.Mirror under the policies", str(ready))

        def call(user, interface, member, *arguments, name="Recorder"):
            prefix = [] if user == "root" else ["runuser", "-u", user, "--"]
            return run(prefix + ["dbus-send", f"--bus={address}", "--print-reply", f"--dest=org.cyclelog.{name}",
                                 f"/org/cyclelog/{name}", f"{interface}.{member}", *arguments], timeout=20)

        stranger = call("nobody", "org.cyclelog.Mirror1", "Devices", name="Mirror")
        report("AccessDenied" in stranger.stderr, "a stranger cannot list or pair the mirror's devices",
               stranger.stderr.strip())
        root = call("root", "org.cyclelog.Mirror1", "Devices", name="Mirror")
        report(root.returncode == 0 and "AccessDenied" not in root.stderr, "root may list the mirror's devices",
               root.stderr.strip())

        stranger = call("nobody", "org.cyclelog.Recorder1", "Pause")
        report("AccessDenied" in stranger.stderr, "a stranger's Pause is refused by the bus",
               stranger.stderr.strip())
        root = call("root", "org.cyclelog.Recorder1", "Pause")
        report(root.returncode == 0 and "AccessDenied" not in root.stderr, "root's Pause reaches the recorder",
               root.stderr.strip())
        reading = call("nobody", "org.freedesktop.DBus.Properties", "GetAll", "string:org.cyclelog.Recorder1")
        report(reading.returncode == 0, "anyone may read the recorder's properties", reading.stderr.strip())
    finally:
        for owner in owners:
            owner.kill()
        daemon.kill()


# A minimal owner of the name with the recorder's interface, to see which calls the bus lets through.
OWNER = """
import asyncio, sys
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface, method, dbus_property
from dbus_fast import PropertyAccess
class Recorder(ServiceInterface):
    def __init__(self): super().__init__("org.cyclelog.Recorder1")
    @method()
    def Pause(self): pass
    @dbus_property(access=PropertyAccess.READ)
    def State(self) -> "s": return "running"
class Mirror(ServiceInterface):
    def __init__(self): super().__init__("org.cyclelog.Mirror1")
    @method()
    def Devices(self) -> "a(ssssxx)": return []
async def main():
    bus = await MessageBus(bus_address=sys.argv[1]).connect()
    name = sys.argv[2]
    bus.export(f"/org/cyclelog/{name}", Recorder() if name == "Recorder" else Mirror())
    await bus.request_name(f"org.cyclelog.{name}")
    print("owned", flush=True)
    await asyncio.sleep(60)
asyncio.run(main())
"""


def check_install(cyclelog, mirror, folder):
    stage = os.path.join(folder, "stage")
    environment = dict(os.environ, DESTDIR=stage, BINARY=cyclelog, MIRROR_BINARY=mirror, PREFIX="/usr/local",
                       SYNC_BINARY=os.path.join(os.path.dirname(mirror), "cyclelog-sync"),
                       DESKTOP_BINARY=os.path.join(os.path.dirname(mirror), "cyclelog-desktop"))
    result = run([os.path.join(ROOT, "scripts", "install-service.sh"), "install"], cwd=ROOT, env=environment)
    report(result.returncode == 0, "install-service.sh install (DESTDIR)", result.stderr.strip())
    expected = ["usr/local/bin/cyclelog", "usr/local/lib/systemd/system/cyclelog.service",
                "usr/local/bin/cyclelog-mirror", "usr/local/lib/systemd/system/cyclelog-mirror.service",
                "usr/local/bin/cyclelog-sync", "usr/local/lib/systemd/system/cyclelog-sync.service",
                "usr/local/lib/systemd/system/cyclelog-sync.timer", "usr/local/lib/systemd/system/cyclelog-sync.path",
                "etc/dbus-1/system.d/org.cyclelog.Mirror.conf",
                "usr/local/lib/sysusers.d/cyclelog.conf", "etc/udev/rules.d/60-cyclelog-bluetooth-power.rules",
                "etc/udev/rules.d/70-cyclelog-autostart.rules", "etc/dbus-1/system.d/org.cyclelog.Recorder.conf",
                "usr/local/share/doc/cyclelog/README.md", "usr/local/share/doc/cyclelog/cyclelog-capture.conf",
                "usr/local/share/doc/cyclelog/cyclelog-hub.conf",
                "usr/local/share/doc/cyclelog/guide/recording.md", "usr/local/share/doc/cyclelog/reference/dbus.md",
                "usr/local/share/applications/org.cyclelog.Recorder.desktop",
                "usr/local/share/dbus-1/services/org.cyclelog.Recorder.service",
                "usr/local/share/man/man1/cyclelog.1", "usr/local/share/man/man1/cyclelog-mirror.1",
                "usr/local/share/man/man1/cyclelog-sync.1", "usr/local/bin/cyclelog-desktop",
                "usr/local/share/man/man1/cyclelog-desktop.1"]
    missing = [path for path in expected if not os.path.exists(os.path.join(stage, path))]
    report(not missing, "every service file installed where the system looks", ", ".join(missing))
    unit = os.path.join(stage, "usr/local/lib/systemd/system/cyclelog.service")
    if os.path.exists(unit):
        report("ExecStart=/usr/local/bin/cyclelog record --auto" in open(unit).read(),
               "the installed unit runs the installed binary")
    service = os.path.join(stage, "usr/local/share/dbus-1/services/org.cyclelog.Recorder.service")
    if os.path.exists(service):
        report("Exec=/usr/local/bin/cyclelog record --wait" in open(service).read(),
               "the session bus starts the installed binary, waiting for a start")
    result = run([os.path.join(ROOT, "scripts", "install-service.sh"), "uninstall"], cwd=ROOT, env=environment)
    left = [os.path.relpath(os.path.join(top, name), stage) for top, _, names in os.walk(stage) for name in names]
    report(result.returncode == 0 and not left, "install-service.sh uninstall removes them all", ", ".join(left))


def check_autostart(mirror, folder):
    """`cyclelog-desktop autostart` writes a valid autostart file starting this binary with the options given, and
    `--remove` takes it away."""
    desktop = os.path.join(os.path.dirname(mirror), "cyclelog-desktop")
    environment = dict(os.environ, XDG_CONFIG_HOME=os.path.join(folder, "config"))
    result = run([desktop, "autostart", "--types", "control,hr"], env=environment)
    path = os.path.join(folder, "config", "autostart", "org.cyclelog.Desktop.desktop")
    report(result.returncode == 0 and os.path.exists(path), "cyclelog-desktop autostart writes its file",
           result.stderr.strip())
    if not os.path.exists(path):
        return
    text = open(path).read()
    valid = run(["desktop-file-validate", path])
    report(valid.returncode == 0 and not valid.stdout.strip(), "the autostart file is valid (desktop-file-validate)",
           valid.stdout.strip())
    report(f"Exec={os.path.realpath(desktop)} --types control,hr\n" in text,
           "the autostart file starts this binary with the types given", text)
    result = run([desktop, "autostart", "--remove"], env=environment)
    report(result.returncode == 0 and not os.path.exists(path), "cyclelog-desktop autostart --remove removes it")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cyclelog", required=True, help="the built binary")
    parser.add_argument("--mirror", help="the built cyclelog-mirror (default: next to cyclelog)")
    arguments = parser.parse_args()
    cyclelog = os.path.abspath(arguments.cyclelog)
    mirror = os.path.abspath(arguments.mirror or os.path.join(os.path.dirname(cyclelog), "cyclelog-mirror"))
    with tempfile.TemporaryDirectory(prefix="cyclelog-service-") as folder:
        check_udev_checker(folder)
        check_udev()
        check_units(cyclelog, mirror, folder)
        check_sysusers(folder)
        check_dbus_policy(folder)
        check_install(cyclelog, mirror, folder)
        check_autostart(mirror, folder)
    if failures:
        print(f"{len(failures)} service-file checks failed: {', '.join(failures)}", flush=True)
        sys.exit(1)
    print("service files: all checks passed", flush=True)


if __name__ == "__main__":
    main()
