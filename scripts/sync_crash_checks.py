"""The checks of the Layer-1 sync crash sweep (scripts/sync-crashtest.py,
whose docstring numbers them) that read one device or the storage: a
command's JSON answer, the removed device, the storage's objects and
blobs, and a fresh device joining.
"""
import json

from sync_crash_devices import Devices, describe_difference

CANARY = "CANARY-AFTER-REMOVAL-7c2e"


class Checks(Devices):
    """The checks, each returning the failed ones as strings."""

    # A `--json` command on `device`: its exit code, and checks 1/2 (an exit
    # not allowed) and 5 (an object refused).
    def checked(self, device, arguments, label, allowed=(0,)):
        code, out, err = self.tk(device, arguments)
        if code not in allowed:
            return code, [f"check 1/2: {label} exits {code}: {err.strip()[:300]}"]
        if code != 0:
            return code, []
        try:
            result = json.loads(out)
        except ValueError:
            return code, [f"{label}: output is not JSON: {out[:200]!r}"]
        if result.get("refused"):
            return code, [f"check 5: {label} refused objects: {result['refused']}"]
        return code, []

    # The removed device after the change: outside, at epoch 1, without the canary.
    def removal_checks(self):
        problems = []
        for device in "ab":
            status = self.status(device)
            if status.get("epoch") != 2 or status.get("outside"):
                problems.append(f"check 8: {device.upper()} is not inside epoch 2: {status}")
        code, _, err = self.tk("c", ["sync", "now", "--json"])
        if code != 19:
            problems.append(f"check 8: C's sync exits {code}, not 19 (outside): {err.strip()[:200]}")
        status = self.status("c")
        if status.get("epoch") != 1 or status.get("outside") is not True:
            problems.append(f"check 8: C is not outside at epoch 1: {status}")
        titles = [t["title"] for t in self.tasks("c")]
        code, out, _ = self.tk("c", ["list", "--all", "--json"])
        if "after removal" in titles or CANARY.encode() in out:
            problems.append("check 8: C shows the task written after the removal")
        return problems

    # What the storage must hold after the syncs: A's objects contiguous
    # (from 1 unless A compacted, which removes the oldest), the others'
    # from 1; the blob of the attachment A removed in the template gone (B
    # and C had acknowledged its removal), the pending one's there.
    def storage_checks(self, scenario):
        problems = []
        for device, names in self.objects().items():
            seqs = [int(n, 16) for n in names]
            first = seqs[0] if seqs and scenario == "compact" and device == self.ids["a"] else 1
            if seqs != list(range(first, first + len(seqs))):
                problems.append(f"device {device} has objects out of sequence: {names}")
        blobs = self.blobs(self.ids["a"])
        if self.deleted_blob in blobs or len(blobs) != 1:
            problems.append(f"check 9: A's blobs at the storage are {blobs}: the removed attachment's "
                            f"{self.deleted_blob} should be gone and the pending one's there")
        return problems

    # Check 10 (compact): D joins now and shows what A shows.
    def fresh_device(self, expected):
        code, out, err = self.tk("d", ["sync", "setup", self.store, "--name", "d"])
        if code != 0:
            return [f"check 10: setting up the fresh device D exits {code}: {err.strip()[:200]}"]
        _, problems = self.checked("d", ["sync", "now", "--json"], "the fresh device's sync")
        if problems:
            return problems
        try:
            d = self.state("d")
        except RuntimeError as error:
            return [f"check 10: reading D's state failed: {error}"]
        if d != expected:
            return ["check 10: the fresh device D differs from A:\n" + describe_difference(expected, d, "A", "D")]
        return []
