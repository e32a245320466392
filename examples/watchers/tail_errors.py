#!/usr/bin/env python3
"""A Weir asset watcher written as a `command` trigger (docs/watchers.md#command).

It tails a log file and records an asset event for each new line that
matches PATTERN. Its cursor is where it has read to: {"offset": bytes,
"inode": the file's}. Weir hands it the committed cursor in
WEIR_WATCHER_CURSOR when it starts; it prints each match as an event line
and, after each read, a cursor line that commits those events together
with the new offset. Killed at any moment, it starts again from the last
committed offset: no line is skipped, and only the lines of an
uncommitted read come again.

    assets:
      - name: app_errors
        uri: "file:///var/log/app.log"
        watchers:
          - name: tail
            trigger:
              type: command
              argv: [python3, /opt/weir/examples/watchers/tail_errors.py]
              env: {LOG_FILE: /var/log/app.log, PATTERN: "ERROR|FATAL"}

A file replaced by another (log rotation: a new inode) or truncated is read
from its start; lines appended to the old file after the last read are
not seen.
"""

import json
import os
import re
import sys
import time


def emit(obj):
    """One JSON line on stdout; Weir reads it as it is flushed."""
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    path = os.environ["LOG_FILE"]
    pattern = re.compile(os.environ.get("PATTERN", "ERROR"))
    interval = float(os.environ.get("INTERVAL", "1"))
    cursor = json.loads(os.environ.get("WEIR_WATCHER_CURSOR") or "null")
    if not isinstance(cursor, dict):
        cursor = {"offset": 0, "inode": None}
    while True:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            time.sleep(interval)
            continue
        if st.st_ino != cursor.get("inode") or st.st_size < cursor["offset"]:
            cursor = {"offset": 0, "inode": st.st_ino}  # a new file, or truncated
        if st.st_size > cursor["offset"]:
            with open(path, "rb") as f:
                f.seek(cursor["offset"])
                data = f.read(st.st_size - cursor["offset"])
            end = data.rfind(b"\n") + 1  # whole lines only: a line being written waits
            offset = cursor["offset"]
            for line in data[:end].splitlines(keepends=True):
                text = line.decode("utf-8", "replace").rstrip("\r\n")
                if pattern.search(text):
                    emit({"event": {"file": path, "offset": offset, "line": text}})
                offset += len(line)
            if end:
                cursor = {"offset": cursor["offset"] + end, "inode": st.st_ino}
                emit({"cursor": cursor})  # commits the events above with it
        time.sleep(interval)


if __name__ == "__main__":
    main()
