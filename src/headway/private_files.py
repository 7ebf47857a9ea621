"""Cache files whose content runs as code when it is loaded: the condition parser's tables
(a pickle Lark loads) and the kept code of dataclasses (code objects). Such a file is read
only when this user alone could have written it: the file and the directory holding it are
owned by the user and writable by no one else (not the group, not others). A cache under a
shared or group-writable `XDG_CACHE_HOME` is then not used, which costs speed, not safety.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["private", "private_path"]


def private(status: os.stat_result) -> bool:
    """Owned by this user (where users exist), and writable by no one else."""
    getuid = getattr(os, "getuid", None)
    owner = getuid is None or status.st_uid == getuid()
    return owner and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def private_path(path: str | Path) -> bool:
    """`path`'s directory exists and is `private`, and so is `path` where it exists."""
    try:
        if not private(os.stat(os.path.dirname(os.path.abspath(path)))):
            return False
    except OSError:
        return False  # no directory (or none to be looked at): nothing to trust
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return True  # the directory is private: only this user can create the file there
    except OSError:
        return False
    return private(status)
