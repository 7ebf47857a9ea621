"""HW324: an Application that renders no object. aws-samples/eks-blueprints-add-ons' README
has its app-of-apps enable add-ons under `cluster-autoscaler:` and `metrics-server:`, keys the
chart does not read (it reads `clusterAutoscaler`, `metricsServer`): the chart rendered no
Application and `headway check` said nothing but HW301 and HW303, as if all were well."""

from __future__ import annotations

import shutil
from pathlib import Path

from check.conftest import FIXTURES, CheckDir

FOUND = FIXTURES / "HW324-empty-render" / "found"


def test_an_application_rendering_nothing_is_named_at_its_spec(check_dir: CheckDir) -> None:
    [finding] = [f for f in check_dir(FOUND) if f.rule == "HW324"]
    assert (finding.file, finding.line, finding.app) == ("apps/addons.yaml", 9, "addons")
    assert finding.message.startswith("Application/addons renders no object: a sync deploys")


def test_a_source_that_could_not_render_is_hw002_alone(tmp_path: Path, check_dir: CheckDir) -> None:
    shutil.copytree(FOUND, tmp_path, dirs_exist_ok=True)
    app = tmp_path / "apps/addons.yaml"
    app.write_text(app.read_text().replace("path: charts/addons", "path: charts/missing"))
    rules = {f.rule for f in check_dir(tmp_path)}
    assert "HW002" in rules and "HW324" not in rules


def test_a_path_whose_files_do_not_load_is_hw003_alone(tmp_path: Path, check_dir: CheckDir) -> None:
    """argo-cd's test/e2e/testdata/declarative-apps holds only Go templates (`name:
    {{.Name}}`), no YAML: HW003 says so at each file; an empty-render warning on top named a
    cause (no manifest, values) that was not the one."""
    shutil.copytree(FOUND, tmp_path, dirs_exist_ok=True)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken/app.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{.Name}}\n"
    )
    app = tmp_path / "apps/addons.yaml"
    text = app.read_text().replace("path: charts/addons", "path: ./broken")
    app.write_text(text.split("    helm:")[0] + "  destination:" + text.split("  destination:")[1])
    rules = [f.rule for f in check_dir(tmp_path) if f.rule in ("HW003", "HW324")]
    assert rules == ["HW003"]
