#!/usr/bin/env python3
"""Seeds for the stored-data fuzz targets, made from the fixtures by the built cyclelog: the rides replayed into a
database whose journal chunks, sample chunks and statistics become seed files, and the fixture journals and
captures themselves.
  make_seeds.py CYCLELOG OUT_FOLDER"""
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

cyclelog, out = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
fixtures = os.path.join(here, "..", "Fixtures")
folders = {name: os.path.join(out, name) for name in ("btsnoop", "journal", "compact-journal", "stored-blobs")}
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
print("fuzz: seeds for the stored-data targets in " + out)
