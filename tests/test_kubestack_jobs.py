"""The pieces that play the job contract on kubestack's KWOK nodes (the job
player's timing, the kubelet front's refusals and follow end, KWOK's config),
checked without starting a stack; tests/realstack/test_job_logs.py runs them
on the real control plane."""

from __future__ import annotations

from pathlib import Path

from kubestack import kwok
from kubestack.jobplayer import NS, schedule, started_ns
from kubestack.kubeletfront import _Follow, catch_up_query, container_error, ended
from simcluster import jobs

START = 1_800_000_000 * NS


def test_lines_are_due_over_the_run_and_a_containers_stamps_strictly_increase():
    spread = jobs.Job(run_seconds=3, lines={"main": ["a", "b", "c"]})
    assert schedule(spread, START) == [
        (START, "main", "a"),
        (START + NS, "main", "b"),
        (START + 2 * NS, "main", "c"),
    ]
    # no run time: every line at the start, each a nanosecond after the last,
    # so the last line of a container is one of a kind (the front's end)
    at_once = jobs.Job(lines={"main": ["x", "x"], "side": ["y"]})
    assert schedule(at_once, START) == [
        (START, "main", "x"),
        (START, "side", "y"),
        (START + 1, "main", "x"),
    ]


def _running(started_at: str) -> dict:
    return {
        "status": {
            "containerStatuses": [{"state": {"running": {"startedAt": started_at}}}]
        }
    }


def test_a_start_is_now_within_the_second_startedat_names_and_its_end_after():
    pod = _running("2027-01-15T08:00:00Z")
    second = 1_800_000_000 * NS  # 2027-01-15T08:00:00Z
    assert started_ns(pod, second + 300_000_000) == second + 300_000_000
    assert started_ns(pod, second + 5 * NS) == second + NS - 1  # seen late
    assert started_ns({"status": {}}, second) is None


def _pod(status: dict | None, name: str = "p") -> dict:
    statuses = [{"name": "main", **status}] if status is not None else []
    return {
        "metadata": {"name": name, "uid": "u1"},
        "status": {"containerStatuses": statuses},
    }


def test_the_front_refuses_as_the_kubelet_does():
    creating = _pod(None)
    assert container_error(creating, "main", previous=False) == (
        'container "main" in pod "p" is waiting to start: ContainerCreating'
    )
    pulling = _pod({"state": {"waiting": {"reason": "ErrImagePull"}}})
    assert "is waiting to start: ErrImagePull" in container_error(
        pulling, "main", previous=False
    )
    running = _pod({"state": {"running": {}}, "lastState": {}})
    assert container_error(running, "main", previous=False) is None
    assert container_error(running, "main", previous=True) == (
        'previous terminated container "main" in pod "p" not found'
    )


def test_a_follow_ends_with_the_container_and_after_its_last_line():
    done = _pod({"state": {"terminated": {"exitCode": 3}}})
    assert ended(done, "u1", "main")
    assert ended(None, "u1", "main")  # gone
    assert ended(_pod({"state": {"running": {}}}), "u2", "main")  # another pod now
    assert not ended(_pod({"state": {"running": {}}}), "u1", "main")

    follow = _Follow()
    assert not follow.passed("2027-01-15T08:00:00.000000000Z")
    assert not follow.over()  # running
    follow.end("2027-01-15T08:00:01.000000000Z")
    assert not follow.over()  # the last line has not passed yet
    assert follow.passed("2027-01-15T08:00:01.000000000Z")
    assert follow.over()

    quiet = _Follow()
    quiet.end(None)  # no line at all
    assert quiet.over()


def test_a_follow_that_missed_lines_reads_them_again_after_the_end():
    # KWOK served its empty default before it had seen the pod's Logs object
    follow = _Follow()
    follow.end("2027-01-15T08:00:01.000000000Z")
    assert follow.missed()
    asked = {"follow": ["true"], "timestamps": ["true"], "tailLines": ["5"]}
    # nothing passed: the read as first asked, without follow
    assert catch_up_query(asked, "") == {"timestamps": ["true"], "tailLines": ["5"]}
    # some lines passed: from the last one on (skipped again by its stamp)
    assert catch_up_query(asked, "2027-01-15T08:00:00.000000000Z") == {
        "timestamps": ["true"],
        "sinceTime": ["2027-01-15T08:00:00.000000000Z"],
    }
    # asked for no line: nothing to catch up
    assert catch_up_query({"follow": ["true"], "tailLines": ["0"]}, "") is None
    follow.passed("2027-01-15T08:00:01.000000000Z")
    assert not follow.missed()
    never = _Follow()
    never.end(None)  # a container that printed nothing misses nothing
    assert not never.missed()


def test_kwok_leaves_pods_that_run_a_while_to_the_player_and_has_a_default_log():
    stage = {
        "metadata": {"name": "pod-complete"},
        "spec": {"selector": {"matchExpressions": []}},
    }
    keys = [
        e["key"] for e in kwok._adjust(stage)["spec"]["selector"]["matchExpressions"]
    ]
    assert any(jobs.RUN_ANNOTATION in key for key in keys)
    assert any(jobs.RUN_ENV in key for key in keys)
    logs = kwok.no_output_logs(Path("/x/empty.log"))
    assert logs["kind"] == "ClusterLogs"
    assert logs["spec"] == {"logs": [{"logsFile": "/x/empty.log", "follow": True}]}
