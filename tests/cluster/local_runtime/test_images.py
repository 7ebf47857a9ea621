"""Image -> command mapping and the runtime config's errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from headway.cluster.local.kubelet.images import (
    ImageNotMapped,
    RuntimeConfigError,
    load_runtime_config,
    parse_image,
    resolve_launch,
)


@pytest.mark.parametrize(
    ("image", "repository", "tag"),
    [
        ("headway-demo/checkout:v2", "headway-demo/checkout", "v2"),
        ("headway-demo/checkout", "headway-demo/checkout", "latest"),
        ("registry:5000/team/app:1.2.3", "registry:5000/team/app", "1.2.3"),
        ("registry:5000/team/app", "registry:5000/team/app", "latest"),
        ("app:v1@sha256:abcd", "app", "v1"),
    ],
)
def test_parse_image(image: str, repository: str, tag: str) -> None:
    ref = parse_image(image)
    assert (ref.repository, ref.tag) == (repository, tag)


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "headway-runtime.yaml"
    path.write_text(text)
    return path


def test_map_gives_command_tag_and_version(tmp_path: Path) -> None:
    config = load_runtime_config(
        _config(
            tmp_path,
            (
                "images:\n"
                "  headway-demo/checkout:\n"
                "    command: ['{python}', app.py]\n"
                "    args: [--tag, '{tag}']\n"
                "    workingDir: srv\n"
                "    env: {GREETING: 'hi {repository}'}\n"
                "    versionFromTag: true\n"
            ),
        )
    )
    launch = resolve_launch(config, {"image": "headway-demo/checkout:v7"})
    assert launch.argv == (sys.executable, "app.py", "--tag", "v7")
    assert launch.working_dir == str(tmp_path / "srv")
    env = dict(launch.env)
    assert env == {
        "HEADWAY_IMAGE_TAG": "v7",
        "VERSION": "v7",
        "GREETING": "hi headway-demo/checkout",
    }


def test_container_command_and_args_override_as_on_kubernetes(tmp_path: Path) -> None:
    config = load_runtime_config(
        _config(tmp_path, "images:\n  app:\n    command: [run]\n    args: [a]\n")
    )
    assert resolve_launch(config, {"image": "app:1", "args": ["b"]}).argv == ("run", "b")
    assert resolve_launch(config, {"image": "app:1", "command": ["other"]}).argv == ("other",)
    assert resolve_launch(config, {"image": "app:1", "command": ["x"], "args": ["y"]}).argv == (
        "x",
        "y",
    )
    # a container with its own command needs no map entry
    assert resolve_launch(config, {"image": "unknown:1", "command": ["true"]}).argv == ("true",)


def test_unknown_image_names_the_image_and_the_config(tmp_path: Path) -> None:
    path = _config(tmp_path, "images: {}\n")
    with pytest.raises(
        ImageNotMapped,
        match=r'image "nope/app:v1" is not in the runtime image map .*headway-runtime.yaml',
    ):
        resolve_launch(load_runtime_config(path), {"image": "nope/app:v1"})


def test_patterns_match_after_exact_names(tmp_path: Path) -> None:
    config = load_runtime_config(
        _config(
            tmp_path,
            (
                "images:\n  'team/*':\n    command: [generic]\n"
                "  team/special:\n    command: [special]\n"
            ),
        )
    )
    assert resolve_launch(config, {"image": "team/special:1"}).argv == ("special",)
    assert resolve_launch(config, {"image": "team/other:1"}).argv == ("generic",)


def test_config_errors_name_file_line_and_field(tmp_path: Path) -> None:
    path = _config(
        tmp_path,
        (
            "images:\n  app:\n    args: [x]\n    colour: blue\n    workdir: srv\n"
            "backoff:\n  initialSeconds: -1\n"
        ),
    )
    with pytest.raises(RuntimeConfigError) as caught:
        load_runtime_config(path)
    text = str(caught.value)
    assert f"{path}:4: images.app.colour: unknown field" in text
    assert f"{path}:2: images.app.command: is required" in text
    assert f"{path}:5: images.app.workdir: unknown field (did you mean workingDir?)" in text
    assert f"{path}:7: backoff.initialSeconds: must be a positive number of seconds" in text


def test_missing_config_is_an_empty_map(tmp_path: Path) -> None:
    config = load_runtime_config(tmp_path / "absent.yaml")
    assert config.images == ()
    assert config.backoff.initial_seconds == 10
    assert config.backoff.max_seconds == 300


def test_unknown_image_without_a_config_file_names_the_path_looked_at(tmp_path: Path) -> None:
    absent = tmp_path / "headway-runtime.yaml"
    with pytest.raises(ImageNotMapped) as caught:
        resolve_launch(load_runtime_config(absent), {"image": "team/app:v1"})
    message = str(caught.value)
    assert f"there is no runtime config at {absent}" in message
    assert 'create it with an entry for "team/app"' in message


def test_a_config_that_is_not_text_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "headway-runtime.yaml"
    path.write_bytes(b"\xe5\xff\x00")
    with pytest.raises(RuntimeConfigError, match=r"headway-runtime.yaml:1: not UTF-8 text"):
        load_runtime_config(path)
