#!/usr/bin/env python3
"""Runs a command on a fresh pseudo-terminal (its controlling terminal) and
answers its prompts, for the prompt tests in Tests/TaskKeyCLITests.

    pty-drive.py [--interactive] OUT ERR -- COMMAND ARGS...

Standard input is a JSON list of steps, each {"expect": TEXT, "send": TEXT}:
wait until TEXT has appeared on the terminal (120 s at most, for a loaded
machine), then type SEND. The command gets 120 s more to finish; then it is
killed (status -9), so a prompt that never gets its answer fails the test
instead of hanging it.
Standard output and standard error of the command go to the files OUT and
ERR, so what reaches the terminal can be told apart from what reaches stdout.
Standard input is /dev/null; with --interactive, standard input and standard
error are the terminal itself (ERR stays empty), as for a person at a shell.
Prints one JSON object: {"status": exit code or -signal, "terminal": what
the terminal showed}.
"""
import json
import os
import pty
import select
import sys
import time


def main():
    arguments = sys.argv[1:]
    interactive = arguments[:1] == ["--interactive"]
    if interactive:
        arguments = arguments[1:]
    out, err, separator, *command = arguments
    assert separator == "--"
    steps = json.load(sys.stdin)
    pid, master = pty.fork()
    if pid == 0:
        stdout = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        stderr = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(stdout, 1)
        if not interactive:
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(stderr, 2)
        os.execv(command[0], command)
    seen = b""

    def read_some(timeout):
        nonlocal seen
        ready, _, _ = select.select([master], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(master, 4096)
        except OSError:
            return False
        if not chunk:
            return False
        seen += chunk
        return True

    for step in steps:
        deadline = time.time() + 120
        while step["expect"].encode() not in seen and time.time() < deadline:
            if not read_some(0.1):
                break
        time.sleep(0.05)  # let the program switch echo off after its prompt
        os.write(master, step["send"].encode())
    deadline = time.time() + 120
    while time.time() < deadline and read_some(1):
        pass
    if time.time() >= deadline:
        os.kill(pid, 9)  # still waiting for input that never came
    _, status = os.waitpid(pid, 0)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
    print(json.dumps({"status": code, "terminal": seen.decode("utf-8", "replace")}))


if __name__ == "__main__":
    main()
