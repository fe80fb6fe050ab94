"""How a DaemonSet reaches the node config: flag forms, mounts, and the patch (pure)."""

from __future__ import annotations

from typing import Any

from apps.inventory.nodeconfig.wiring import read_wiring, wiring_patch


def _ds(
    container: dict[str, Any], volumes: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    spec = {
        "containers": [
            {"name": "sidecar", "image": "busybox:1.36"},
            {
                "name": "plugin",
                "image": "registry.local/projecthami/ascend-device-plugin:v1.4.0",
                **container,
            },
        ],
        "volumes": volumes or [],
    }
    return {"spec": {"template": {"spec": spec}}}


NODE_CM = {"name": "nc", "configMap": {"name": "hami-device-node-config"}}


def test_the_plugin_container_is_found_by_its_image_not_its_position():
    wiring = read_wiring(_ds({"args": []}))
    assert wiring is not None
    assert wiring.container == "plugin"


def test_flag_forms_of_go_flag_package():
    for args in (
        ["-node_config_file", "/etc/nc/node-config.yaml"],
        ["--node_config_file=/etc/nc/node-config.yaml"],
        ["--v=4", "-node_config_file=/etc/nc/node-config.yaml"],
    ):
        ds = _ds(
            {"args": args, "volumeMounts": [{"name": "nc", "mountPath": "/etc/nc"}]},
            [NODE_CM],
        )
        wiring = read_wiring(ds)
        assert wiring is not None
        assert wiring.flag_path == "/etc/nc/node-config.yaml", args
        # a directory mount: the key is a file in it
        assert wiring.at_flag.is_node_config
        assert not wiring.at_flag.sub_path
        assert wiring.reads_file


def test_a_flag_at_another_key_or_nowhere_is_not_the_node_config():
    ds = _ds(
        {
            "args": ["--node_config_file", "/etc/nc/other.yaml"],
            "volumeMounts": [{"name": "nc", "mountPath": "/etc/nc"}],
        },
        [NODE_CM],
    )
    wiring = read_wiring(ds)
    assert wiring is not None
    assert wiring.at_flag.config_map == "hami-device-node-config"
    assert wiring.at_flag.key == "other.yaml"
    assert not wiring.reads_file
    nowhere = read_wiring(_ds({"args": ["--node_config_file", "/x.yaml"]}))
    assert nowhere is not None
    assert nowhere.at_flag.volume == ""


def test_items_rename_the_key_inside_the_volume():
    volume = {
        "name": "nc",
        "configMap": {
            "name": "hami-device-node-config",
            "items": [{"key": "node-config.yaml", "path": "nodes.yaml"}],
        },
    }
    ds = _ds(
        {
            "args": ["--node_config_file=/cfg/nodes.yaml"],
            "volumeMounts": [{"name": "nc", "mountPath": "/cfg"}],
        },
        [volume],
    )
    wiring = read_wiring(ds)
    assert wiring is not None
    assert wiring.reads_file
    assert wiring.node_config_mounts == ("/cfg/nodes.yaml",)


def test_the_patch_reuses_a_mounted_path_and_rewrites_a_wrong_flag():
    ds = _ds(
        {
            "args": ["--config_file", "/d.yaml", "--node_config_file", "/wrong.yaml"],
            "volumeMounts": [
                {"name": "nc", "mountPath": "/n.yaml", "subPath": "node-config.yaml"}
            ],
        },
        [NODE_CM],
    )
    patch = wiring_patch(ds)
    assert patch == {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "plugin",
                            "args": [
                                "--config_file",
                                "/d.yaml",
                                "--node_config_file",
                                "/n.yaml",
                            ],
                        }
                    ]
                }
            }
        }
    }


def test_the_patch_mounts_an_existing_volume_and_edits_a_flag_in_command():
    ds = _ds(
        {"command": ["/plugin", "--node_config_file=/gone.yaml"]},
        [NODE_CM],
    )
    wiring = read_wiring(ds)
    assert wiring is not None
    assert wiring.flag_in == "command"
    patch = wiring_patch(ds)
    assert patch is not None
    spec = patch["spec"]["template"]["spec"]
    assert "volumes" not in spec  # the ConfigMap's volume exists: it is mounted
    (container,) = spec["containers"]
    assert container["volumeMounts"] == [
        {"name": "nc", "mountPath": "/node-config.yaml", "subPath": "node-config.yaml"}
    ]
    assert container["command"] == [
        "/plugin",
        "--node_config_file",
        "/node-config.yaml",
    ]


def test_a_flag_in_a_shell_line_is_read_but_not_rewritten():
    ds = _ds({"command": ["sh", "-c", "exec /plugin --node_config_file /x.yaml"]})
    wiring = read_wiring(ds)
    assert wiring is not None
    assert (wiring.flag_path, wiring.flag_in) == ("/x.yaml", "script")
    assert wiring_patch(ds) is None
