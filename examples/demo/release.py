"""Start the example app as the release named by the image tag (HEADWAY_IMAGE_TAG).

Each release's behaviour (ERROR_RATE, LATENCY_MS) is in RELEASES_FILE, the way a build bakes
its code into an image: the manifest only names the tag. Standard library only.
"""

from __future__ import annotations

import json
import os
import sys

releases_file = os.environ["RELEASES_FILE"]
server_file = os.environ["SERVER_FILE"]
tag = os.environ.get("HEADWAY_IMAGE_TAG", "latest")
with open(releases_file, encoding="utf-8") as handle:
    releases = json.load(handle)
if tag not in releases:
    sys.exit(f"release.py: no release {tag!r} in {releases_file}")
os.environ.update({str(k): str(v) for k, v in releases[tag].items()})
os.environ.setdefault("VERSION", tag)
os.execv(sys.executable, [sys.executable, server_file])
