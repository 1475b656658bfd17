#!/usr/bin/env python3
"""Seeds for the stored-data fuzz targets, made from the fixtures by the built cyclelog: the rides replayed into a
database whose journal chunks, sample chunks and statistics become seed files, and the fixture journals and
captures themselves.
  make_seeds.py CYCLELOG OUT_FOLDER"""
import hashlib
import os
import sqlite3
import subprocess
import sys
import tempfile

cyclelog, out = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
fixtures = os.path.join(here, "..", "Fixtures")
folders = {name: os.path.join(out, name) for name in ("btsnoop", "journal", "compact-journal", "stored-blobs", "zwo",
                                                       "erg", "fit-workout", "workout-text")}
for folder in folders.values():
    os.makedirs(folder, exist_ok=True)


def seed(kind, data):
    with open(os.path.join(folders[kind], hashlib.sha1(data).hexdigest()), "wb") as file:
        file.write(data)


journals = []
for root, _, files in os.walk(fixtures):
    for name in files:
        path = os.path.join(root, name)
        if name.endswith(".journal"):
            journals.append(path)
            with open(path, "rb") as file:
                seed("journal", file.read()[:4096])
        elif name.endswith(".btsnoop"):
            with open(path, "rb") as file:
                seed("btsnoop", file.read()[:4096])
with tempfile.TemporaryDirectory() as folder:
    database = os.path.join(folder, "seeds.sqlite")
    for journal in sorted(journals)[:6]:
        subprocess.run([cyclelog, "replay", "--db", database, journal], capture_output=True)
    connection = sqlite3.connect(database)
    for (blob,) in connection.execute("SELECT events FROM journalChunk LIMIT 20"):
        seed("compact-journal", blob)
    for (blob,) in connection.execute("SELECT samples FROM sampleChunk LIMIT 20"):
        seed("stored-blobs", blob)
    for (blob,) in connection.execute("SELECT statistics FROM workout WHERE statistics IS NOT NULL"):
        seed("stored-blobs", blob)
    connection.close()
    # The built-in workouts as the files cyclelog writes, and as their canonical text; an .erg and an .mrc.
    for workout_id in ("sweet-spot-2x20", "vo2max-5x5", "ftp-test-20", "endurance-1h"):
        for kind, extension in (("zwo", "zwo"), ("fit-workout", "fit")):
            path = os.path.join(folder, workout_id + "." + extension)
            subprocess.run([cyclelog, "workouts", "export", workout_id, "-o", path, "--db", database],
                           capture_output=True)
            if os.path.exists(path):
                with open(path, "rb") as file:
                    seed(kind, file.read()[:4096])
        text = subprocess.run([cyclelog, "workouts", "show", workout_id, "--text", "--db", database],
                              capture_output=True).stdout
        if text:
            seed("workout-text", text[:4096])
seed("erg", b"[COURSE HEADER]\nFTP = 260\nMINUTES WATTS\n[END COURSE HEADER]\n[COURSE DATA]\n0\t100\n2\t100\n2\t200\n"
     b"4.5\t250\n4.5\tLAP\n5\t100\n[END COURSE DATA]\n[COURSE TEXT]\n30\tGo\t5\n[END COURSE TEXT]\n")
seed("erg", b"[COURSE HEADER]\r\nMINUTES PERCENT\r\n[END COURSE HEADER]\r\n[COURSE DATA]\r\n0 50\r\n6.6 50\r\n6.6 100\r\n"
     b"7.98 140\r\n[END COURSE DATA]\r\n")
print("fuzz: seeds for the stored-data targets in " + out)
