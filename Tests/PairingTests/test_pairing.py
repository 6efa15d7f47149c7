"""`taskkey pair` end to end over 127.0.0.1 with the real binary: a pairing
that works (the new device opens the first one's note), a wrong code, a
second joiner, a timed-out offer, a peer that sends garbage or too little,
a relay that changes, drops, replays or reorders each message, and kill -9
of either side at every step. Every failure leaves no vault on the joining
side and the offering side byte for byte as it was."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import unittest

from harness import Home, Offer, Proxy, join, kill_when, wrong_code


class PairingTests(unittest.TestCase):
    def setUp(self):
        self.offering = Home()
        self.joining = Home(initialise=False)
        self.offering.run("item", "set", "wifi/home", input_text="hunter2", check=True)
        self.offering.run("item", "set", "provider/key", "--device-only", input_text="sk-never-travels", check=True)
        self.before = self.offering.tree()

    def tearDown(self):
        self.offering.close()
        self.joining.close()

    def assertNothingHappened(self):
        self.assertFalse(self.joining.has_vault(), "a vault appeared on the joining device")
        self.assertEqual(self.offering.tree(), self.before, "the offering device changed")

    def test_two_homes_pair_and_the_new_one_opens_the_first_ones_note(self):
        sealed = self.offering.run("seal", "--context", "task/1/notes", input_text="clinic at 9\n", check=True).stdout
        offer = Offer(self.offering, "--listen", "127.0.0.1:0")
        joined = join(self.joining, offer.address, offer.code)
        status, err = offer.finish()
        self.assertEqual(joined.returncode, 0, joined.stderr.decode())
        self.assertEqual(status, 0, err)
        events = [event["event"] for event in offer.events]
        self.assertEqual(events, ["offer", "connected", "confirmed", "paired"])
        result = json.loads(joined.stdout)
        self.assertEqual(result["verification"], offer.events[-1]["verification"])
        opened = self.joining.run("open", "--context", "task/1/notes", input_bytes=sealed, check=True)
        self.assertEqual(opened.stdout, b"clinic at 9\n")
        self.assertEqual(self.offering.tree(), self.before)
        self.assertEqual(self.joining.json("keys")["primary"], self.offering.json("keys")["primary"])
        self.assertEqual(self.joining.run("item", "get", "wifi/home", check=True).stdout, b"hunter2\n")
        missing = self.joining.run("item", "get", "provider/key")
        self.assertEqual(missing.returncode, 19, "a device-only item travelled")

    def test_a_wrong_code_ends_the_offer_on_both_sides(self):
        offer = Offer(self.offering, "--listen", "127.0.0.1:0")
        joined = join(self.joining, offer.address, wrong_code(offer.code))
        status, err = offer.finish()
        self.assertEqual(joined.returncode, 26, joined.stderr.decode())
        self.assertIn("key confirmation failed", joined.stderr.decode())
        self.assertEqual(status, 26, err)
        self.assertIn("key confirmation", err)
        self.assertNothingHappened()
        # The offer is over: the right code now finds nobody listening.
        again = join(self.joining, offer.address, offer.code)
        self.assertNotEqual(again.returncode, 0)
        self.assertNothingHappened()

    def test_a_code_that_does_not_read_is_refused_before_anything_is_sent(self):
        offer = Offer(self.offering, "--listen", "127.0.0.1:0")
        joined = join(self.joining, offer.address, "acid acorn zone zoomm")
        self.assertEqual(joined.returncode, 65, joined.stderr.decode())
        self.assertIn("did you mean 'zoom'", joined.stderr.decode())
        # The offer is still waiting and the right code still works.
        self.assertIsNone(offer.next_event(0.5))
        ok = join(self.joining, offer.address, offer.code)
        self.assertEqual(ok.returncode, 0, ok.stderr.decode())
        self.assertEqual(offer.finish()[0], 0)

    def test_a_second_joiner_is_refused_while_the_first_is_in_progress(self):
        offer = Offer(self.offering, "--listen", "127.0.0.1:0")
        host, port = offer.address.rsplit(":", 1)
        first = socket.create_connection((host, int(port)), timeout=5)
        self.assertEqual(offer.next_event(10)["event"], "connected")
        with self.assertRaises(OSError):
            socket.create_connection((host, int(port)), timeout=5).close()
        first.close()
        status, err = offer.finish()
        self.assertNotEqual(status, 0)
        self.assertNothingHappened()

    def test_an_offer_that_nobody_joins_ends_at_its_time(self):
        offer = Offer(self.offering, "--listen", "127.0.0.1:0", "--wait", "2s")
        started = time.monotonic()
        status, err = offer.finish(seconds=30)
        self.assertEqual(status, 69, err)
        self.assertIn("timed out", err)
        self.assertGreater(time.monotonic() - started, 1.5)
        # The listener is closed with the offer.
        host, port = offer.address.rsplit(":", 1)
        with self.assertRaises(OSError):
            socket.create_connection((host, int(port)), timeout=2).close()
        self.assertNothingHappened()

    def test_garbage_too_little_and_too_much_are_dropped_with_a_clear_error(self):
        cases = [
            (b"GET / HTTP/1.1\r\n\r\n", "TKPAIR header", 26),
            (b"TKPAIR\x02\x01" + bytes(48), "version 2", 12),
            (b"TKPAIR\x01\x03" + bytes(64), "message type 3", 26),
            (b"TKPAIR\x01\x01" + bytes(10), "closed the connection early", 74),
        ]
        for sent, expected, code in cases:
            with self.subTest(sent=sent[:10]):
                offer = Offer(self.offering, "--listen", "127.0.0.1:0")
                host, port = offer.address.rsplit(":", 1)
                with socket.create_connection((host, int(port)), timeout=5) as peer:
                    peer.sendall(sent)
                    # Too little, then nothing more: the peer closes its side. An offer that refuses
                    # what it read at once may have closed the connection first (ENOTCONN): its exit
                    # status and message below are what this case checks.
                    try:
                        peer.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    status, err = offer.finish(seconds=60)
                self.assertEqual(status, code, err)
                self.assertIn(expected, err)
                self.assertNothingHappened()

    def test_a_relay_that_changes_drops_replays_or_reorders_any_message_is_detected(self):
        def flip(message):
            return message[:-1] + bytes([message[-1] ^ 1])

        rules = {
            "passes every byte unchanged": lambda d, i, m: [m],
            "changes start": lambda d, i, m: [flip(m)] if (d, i) == ("to_offerer", 0) else [m],
            "changes response": lambda d, i, m: [flip(m)] if (d, i) == ("to_joiner", 0) else [m],
            "changes confirm": lambda d, i, m: [flip(m)] if (d, i) == ("to_offerer", 1) else [m],
            "drops confirm": lambda d, i, m: [] if (d, i) == ("to_offerer", 1) else [m],
            "replays start": lambda d, i, m: [m, m] if (d, i) == ("to_offerer", 0) else [m],
            "reorders start after confirm": self.start_after_confirm(),
        }
        for name, rule in rules.items():
            with self.subTest(name):
                offer = Offer(self.offering, "--listen", "127.0.0.1:0")
                proxy = Proxy(offer.address, rule)
                joined = join(self.joining, proxy.address, offer.code, timeout=90)
                status, err = offer.finish(seconds=90)
                proxy.close()
                self.assertNotEqual(joined.returncode, 0, name)
                self.assertNotEqual(status, 0, name)
                self.assertNothingHappened()

    @staticmethod
    def start_after_confirm():
        held = []

        def rule(direction, index, message):
            if direction != "to_offerer":
                return [message]
            if index == 0:
                held.append(message)
                return [message]
            return [message, *held]

        return rule

    def test_kill_minus_nine_of_either_side_at_every_step_leaves_nothing(self):
        steps = ["offer", "connected", "confirmed"]
        for victim in ("offerer", "joiner"):
            for step in steps:
                with self.subTest(victim=victim, step=step):
                    offer = Offer(self.offering, "--listen", "127.0.0.1:0")
                    joiner = join(self.joining, offer.address, offer.code, wait=False)
                    target = offer.process if victim == "offerer" else joiner
                    seen = {"offer"}

                    def reached():
                        event = offer.next_event(0)
                        if event:
                            seen.add(event["event"])
                        return step in seen

                    kill_when(target, reached)
                    offer.kill()
                    joiner.kill()
                    joiner.communicate()
                    # No partial vault: none at all, or (the joiner finished before the kill) a whole one.
                    if self.joining.has_vault():
                        self.assertEqual(self.joining.json("keys")["primary"], self.offering.json("keys")["primary"],
                                         f"{victim} killed at {step}: a vault that is not whole")
                    self.assertEqual(self.offering.tree(), self.before)
                    self.joining.close()
                    self.joining = Home(initialise=False)


if __name__ == "__main__":
    unittest.main()


def run_ip(*arguments):
    return subprocess.run(["ip", *arguments], capture_output=True)


@unittest.skipUnless(os.geteuid() == 0 and shutil.which("ip"), "needs root and iproute2 for network namespaces")
class NetworkNamespaceTests(unittest.TestCase):
    """Two network namespaces joined by a veth pair this test makes: the
    offer listens on its local-network address by default (not on
    loopback), and the joiner in the other namespace pairs across."""

    def setUp(self):
        suffix = str(os.getpid())
        self.names = (f"tkpairA{suffix}", f"tkpairB{suffix}")
        a, b = self.names
        steps = [
            ("netns", "add", a), ("netns", "add", b),
            ("link", "add", f"va{suffix}", "type", "veth", "peer", "name", f"vb{suffix}"),
            ("link", "set", f"va{suffix}", "netns", a), ("link", "set", f"vb{suffix}", "netns", b),
            ("-n", a, "addr", "add", "10.77.0.1/24", "dev", f"va{suffix}"),
            ("-n", b, "addr", "add", "10.77.0.2/24", "dev", f"vb{suffix}"),
            ("-n", a, "link", "set", f"va{suffix}", "up"), ("-n", b, "link", "set", f"vb{suffix}", "up"),
            ("-n", a, "link", "set", "lo", "up"), ("-n", b, "link", "set", "lo", "up"),
        ]
        for step in steps:
            done = run_ip(*step)
            if done.returncode != 0:
                self.tearDown()
                self.skipTest(f"ip {' '.join(step)}: {done.stderr.decode().strip()}")
        self.offering = Home()
        self.joining = Home(initialise=False)

    def tearDown(self):
        for name in self.names:
            run_ip("netns", "delete", name)
        for home in ("offering", "joining"):
            if hasattr(self, home):
                getattr(self, home).close()

    def test_devices_in_two_namespaces_pair_over_the_veth_link(self):
        a, b = self.names
        offer = Offer(self.offering, prefix=("ip", "netns", "exec", a))
        self.assertEqual(offer.first["addresses"], [offer.address])
        self.assertTrue(offer.address.startswith("10.77.0.1:"), offer.address)
        port = int(offer.address.rsplit(":", 1)[1])
        # Not on loopback: the default is the local-network addresses only.
        probe = subprocess.run(["ip", "netns", "exec", a, sys.executable, "-c",
                                f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)"],
                               capture_output=True)
        self.assertNotEqual(probe.returncode, 0)
        joined = join(self.joining, offer.address, offer.code, prefix=("ip", "netns", "exec", b))
        status, err = offer.finish()
        self.assertEqual(joined.returncode, 0, joined.stderr.decode())
        self.assertEqual(status, 0, err)
        self.assertEqual(json.loads(joined.stdout)["offerer"], offer.address)
        self.assertEqual(self.joining.json("keys")["primary"], self.offering.json("keys")["primary"])
