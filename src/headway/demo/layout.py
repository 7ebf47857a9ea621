"""Where the demo keeps everything, and how its directory is filled from `examples/demo/`.

    <dir>/headway-runtime.yaml   the image map (headway-demo/web -> bin/release.py)
    <dir>/bin/                   release.py, releases.json and the example app's server.py
    <dir>/.headway/              the runtime's state (store, logs), serve.pid and serve.log
    <dir>/gitops/                the Git repository the Application syncs from (branch main)
    <dir>/application.yaml       the Application, pointing at gitops/ through a file:// URL

With that layout, `cd <dir>` is all the CLI needs: `.headway` and `headway-runtime.yaml` are
its defaults.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DemoLayout", "DemoSetupError", "examples_dir"]

METRICS_PLACEHOLDER = "__METRICS_ADDRESS__"
REPO_URL_PLACEHOLDER = "__REPO_URL__"


class DemoSetupError(Exception):
    """The demo cannot be set up (missing example files, a directory in use)."""


def examples_dir() -> Path:
    """`examples/` of the source checkout this package runs from."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "examples" / "demo"
        if (candidate / "repo").is_dir() and (parent / "examples" / "app" / "server.py").is_file():
            return parent / "examples"
    raise DemoSetupError(
        "the demo's files (examples/demo, examples/app) were not found next to this package; "
        "run `headway demo` from a source checkout (scripts/demo)"
    )


@dataclass(frozen=True)
class DemoLayout:
    root: Path

    @property
    def state(self) -> Path:
        return self.root / ".headway"

    @property
    def config(self) -> Path:
        return self.root / "headway-runtime.yaml"

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def repo(self) -> Path:
        return self.root / "gitops"

    @property
    def application(self) -> Path:
        return self.root / "application.yaml"

    @property
    def serve_pid(self) -> Path:
        return self.state / "serve.pid"

    @property
    def serve_log(self) -> Path:
        return self.state / "serve.log"

    def check_unused(self) -> None:
        if self.root.exists() and any(self.root.iterdir()):
            raise DemoSetupError(
                f"{self.root} is not empty; give an empty or new directory to --dir "
                f"(or stop a kept demo there with `headway demo --stop --dir {self.root}`)"
            )

    def install_files(self, examples: Path) -> None:
        """The image map and the release launcher, next to a copy of the example app."""
        demo = examples / "demo"
        self.bin.mkdir(parents=True, exist_ok=True)
        self.state.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(demo / "headway-runtime.yaml", self.config)
        shutil.copyfile(demo / "release.py", self.bin / "release.py")
        shutil.copyfile(demo / "releases.json", self.bin / "releases.json")
        shutil.copyfile(examples / "app" / "server.py", self.bin / "server.py")

    def repo_files(self, examples: Path, metrics_address: str) -> dict[str, bytes]:
        """The app's manifests for the repository, with the mesh's metrics address filled in."""
        template = examples / "demo" / "repo"
        files: dict[str, bytes] = {}
        for path in sorted(p for p in template.rglob("*") if p.is_file()):
            text = path.read_text(encoding="utf-8").replace(METRICS_PLACEHOLDER, metrics_address)
            files[path.relative_to(template).as_posix()] = text.encode()
        return files

    def application_text(self, examples: Path) -> str:
        text = (examples / "demo" / "application.yaml").read_text(encoding="utf-8")
        return text.replace(REPO_URL_PLACEHOLDER, self.repo.resolve().as_uri())
