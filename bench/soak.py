"""Soak: the demo under random requests, approvals and cancels; nothing gets stuck.

Run: ``python -m bench.soak [--minutes 30] [--seed 7]``. Starts the demo as
``scripts/run.sh`` runs it, without a browser (``harness.stack.Stack``: the
guide's simulated cluster with its pod generator starting and ending pods
every few seconds, sync, uvicorn, and ``manage.py schedule --loop 2`` as
the beat's scheduling passes), then for
``--minutes`` acts as pipelines and an on-call admin do, at random: submits
requests (310P vir01/vir02/vir04, 910B4 slices and whole cards; batch-low to
inference-high; each with a time limit, so that work ends), approves pending
preemption proposals, cancels open requests.

Every few seconds it samples what must never grow without bound, and prints
at the end, measured in this run:
- requests submitted, and how they ended (running, succeeded, failed,
  cancelled, expired, still pending), approvals made, proposals made and
  superseded;
- the longest any request stayed ``admitted`` and ``reserved`` (aim: within
  ``REQUEST_BIND_TIMEOUT_SECONDS`` plus a resync for admitted);
- the oldest pending proposal seen, and the most live proposals one request
  had at once (aim: 1);
- requests stuck at the end: admitted or reserved for longer than the
  allowance (aim: 0; the exit status is 1 otherwise).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from harness.stack import Stack

#: Longer than this in admitted or reserved is stuck (bind timeout 30 s,
#: resync and a pass on a busy machine).
STUCK_AFTER_SECONDS = 120
SIM_OPTIONS = {
    "ready_delay": 0.2,
    "pod_shutdown_seconds": 1.0,
    "bookmark_interval": 1.0,
    "workload": True,
    "workload_interval": 3.0,
}
ASKS = [
    ("Ascend310P", {"memory": 3000}),
    ("Ascend310P", {"memory": 6000}),
    ("Ascend310P", {"template": "vir04"}),
    ("Ascend910B4", {"memory": 8000}),
    ("Ascend910B4", {"whole_card": True}),
]
PRIORITIES = ["batch-low", "batch-medium", "inference-high"]
LIVE_PROPOSALS = ("pending", "approved", "evicting")


def _age(stamp: str | None, now: datetime) -> float:
    if not stamp:
        return 0.0
    return (now - datetime.fromisoformat(stamp.replace("Z", "+00:00"))).total_seconds()


class Soak:
    """The random actions and the samples of one run."""

    def __init__(self, stack: Stack, seed: int) -> None:
        self.api = stack.api()
        self.cluster_id = stack.cluster_id
        self.random = random.Random(seed)
        self.submitted: list[int] = []
        self.approved = 0
        self.cancelled = 0
        self.longest = {"admitted": 0.0, "reserved": 0.0}
        self.oldest_pending_proposal = 0.0
        self.most_live = 0
        self.superseded_why: Counter[str] = Counter()

    def _get(self, path: str) -> Any:
        status, body = self.api.call("GET", path)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status} {body}")
        return body

    def submit(self) -> None:
        chip_type, ask = self.random.choice(ASKS)
        body = {
            "cluster": "demo",
            "namespace": "default",
            "chip_type": chip_type,
            "priority": self.random.choice(PRIORITIES),
            "time_limit_seconds": self.random.randint(20, 120),
            "workload": {"image": "busybox", "command": ["sleep", "3600"]},
            **ask,
        }
        status, answer = self.api.call("POST", "/api/requests/", body)
        if status != 201:
            raise RuntimeError(f"POST /api/requests/: {status} {answer}")
        self.submitted.append(int(answer["id"]))

    def approve(self) -> None:
        pending = self._get(
            f"/api/preemptions/?cluster={self.cluster_id}&state=pending&page_size=50"
        )["results"]
        if pending:
            row = self.random.choice(pending)
            status, _ = self.api.call(
                "POST",
                f"/api/preemptions/{row['id']}/approve/",
                {"reason": "soak: on call"},
            )
            # 409: superseded or decided meanwhile, as for a person
            self.approved += status == 200

    def cancel(self) -> None:
        open_ = [
            r["id"]
            for r in self._requests(("pending", "running"))
            if r["id"] in set(self.submitted)
        ]
        if open_:
            status, _ = self.api.call(
                "DELETE", f"/api/requests/{self.random.choice(open_)}/"
            )
            self.cancelled += status in (200, 204)

    def _requests(self, states: tuple[str, ...]) -> list[dict[str, Any]]:
        query = "".join(f"&state={s}" for s in states)
        return self._get(
            f"/api/requests/?cluster={self.cluster_id}&page_size=1000{query}"
        )["results"]

    def sample(self) -> list[dict[str, Any]]:
        """Record the ages now; return the requests stuck now."""
        now = datetime.now(UTC)
        stuck = []
        for row in self._requests(("admitted", "reserved")):
            since = (
                row["admitted_at"] if row["state"] == "admitted" else row["reserved_at"]
            )
            age = _age(since, now)
            self.longest[row["state"]] = max(self.longest[row["state"]], age)
            if age > STUCK_AFTER_SECONDS:
                stuck.append(row)
        live = self._get(
            f"/api/preemptions/?cluster={self.cluster_id}&page_size=500"
            + "".join(f"&state={s}" for s in LIVE_PROPOSALS)
        )["results"]
        per_request = Counter(row["request"] for row in live)
        self.most_live = max([self.most_live, *per_request.values()])
        for row in live:
            if row["state"] == "pending":
                self.oldest_pending_proposal = max(
                    self.oldest_pending_proposal, _age(row["created_at"], now)
                )
        return stuck

    def outcome(self) -> tuple[Counter[str], Counter[str]]:
        """How the submitted requests stand, and the proposals by state."""
        mine = set(self.submitted)
        requests = Counter(
            r["state"]
            for r in self._get(
                f"/api/requests/?cluster={self.cluster_id}&page_size=5000"
            )["results"]
            if r["id"] in mine
        )
        rows = self._get(f"/api/preemptions/?cluster={self.cluster_id}&page_size=5000")[
            "results"
        ]
        proposals = Counter(p["state"] for p in rows)
        # why proposals were superseded, numbers and names masked
        self.superseded_why = Counter(
            re.sub(r"[\w./-]*\d[\w./-]*", "N", p["reason"])[:70]
            for p in rows
            if p["state"] == "superseded"
        )
        return requests, proposals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak")
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--rate", type=float, default=1.0, help="actions per second (about)"
    )
    args = parser.parse_args(argv)
    stack = Stack(
        "guide", sim_options=SIM_OPTIONS, sync_seconds=int(args.minutes * 60) + 600
    )
    stack.start(wait_for_chips=12, timeout=180)
    try:
        # The beat of a deployment: passes (reconcile, reserve, admit) and due
        # evictions every two seconds, beside the passes a submission runs.
        stack.processes.launch(
            "beat",
            [
                sys.executable,
                "manage.py",
                "schedule",
                "--cluster",
                "demo",
                "--loop",
                "2",
            ],
        )
        soak = Soak(stack, args.seed)
        started = time.monotonic()
        deadline = started + args.minutes * 60
        next_sample = started
        print(
            f"==> soak for {args.minutes:g} min on {stack.url} (seed {args.seed})",
            flush=True,
        )
        while time.monotonic() < deadline:
            roll = soak.random.random()
            if roll < 0.5:
                soak.submit()
            elif roll < 0.8:
                soak.approve()
            elif roll < 0.9:
                soak.cancel()
            if time.monotonic() >= next_sample:
                soak.sample()
                next_sample = time.monotonic() + 5
                minute = (time.monotonic() - started) / 60
                print(
                    f"    {minute:5.1f} min: {len(soak.submitted)} submitted, "
                    f"{soak.approved} approvals",
                    flush=True,
                )
            time.sleep(soak.random.expovariate(args.rate))
        # what is left admitted or reserved has one allowance to settle
        time.sleep(30)
        stuck = soak.sample()
        requests, proposals = soak.outcome()
    finally:
        stack.stop()
    print(f"requests submitted: {len(soak.submitted)}; by state now: {dict(requests)}")
    print(f"approvals made: {soak.approved}; cancels: {soak.cancelled}")
    print(f"proposals by state: {dict(proposals)}")
    for why, count in soak.superseded_why.most_common(5):
        print(f"    superseded {count}: {why}")
    print(
        f"longest admitted: {soak.longest['admitted']:.0f} s; longest reserved: "
        f"{soak.longest['reserved']:.0f} s (stuck after {STUCK_AFTER_SECONDS} s)"
    )
    print(
        f"oldest pending proposal seen: {soak.oldest_pending_proposal:.0f} s; most "
        f"live proposals of one request at once: {soak.most_live} (aim 1)"
    )
    print(f"stuck at the end: {len(stuck)} (aim 0)")
    for row in stuck:
        print(f"    request {row['id']}: {row['state']}: {row['reason']}")
    return 0 if not stuck and soak.most_live <= 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
